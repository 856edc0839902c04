//! Raw requests and the answers the kit saw, kept for the checks that look at every answer.

use std::time::Duration;

use appzone_contract::headers::API_KEY;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::Value;

use crate::{CheckResult, Config, Outcome};

mod early_answer;

/// One request and its answer, exactly as they went over the wire.
#[derive(Debug, Clone)]
pub(crate) struct Exchange {
    /// `METHOD PATH`, for the report.
    pub request: String,
    /// The document's operation (lower-case method, path template), when the request was one.
    pub operation: Option<(String, String)>,
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Exchange {
    /// A header's value as text (`None` when absent or not visible ASCII).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body as JSON, if it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    /// The `error_code` of a JSON error body.
    pub fn error_code(&self) -> Option<String> {
        self.json()?
            .get("error_code")?
            .as_str()
            .map(ToOwned::to_owned)
    }

    /// How the answer reads in a report: `404 profile_not_found`, `200`, `500 (text/plain)`.
    pub fn describe(&self) -> String {
        match self.error_code() {
            Some(code) => format!("{} {code}", self.status),
            None if self.status >= 400 => format!(
                "{} ({})",
                self.status,
                self.header("content-type").unwrap_or("no content type")
            ),
            None => self.status.to_string(),
        }
    }

    /// A failure of this exchange.
    pub fn fail(&self, expected: impl Into<String>, received: impl Into<String>) -> Outcome {
        Outcome::Fail {
            request: self.request.clone(),
            expected: expected.into(),
            received: received.into(),
        }
    }

    /// Fails unless the answer is `status` with the JSON error body of `code`.
    pub fn expect_error(&self, status: u16, code: &str) -> Result<(), Outcome> {
        if self.status == status && self.error_code().as_deref() == Some(code) {
            Ok(())
        } else {
            Err(self.fail(format!("{status} {code}"), self.describe()))
        }
    }
}

/// A request to send.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    pub method: Method,
    pub path: String,
    pub key: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Option<Vec<u8>>,
    pub operation: Option<(String, String)>,
}

impl Req {
    pub fn new(method: Method, path: impl Into<String>) -> Self {
        Req {
            method,
            path: path.into(),
            key: None,
            headers: Vec::new(),
            body: None,
            operation: None,
        }
    }

    pub fn key(mut self, key: &str) -> Self {
        self.key = Some(key.to_owned());
        self
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn body(mut self, body: Vec<u8>) -> Self {
        self.body = Some(body);
        self
    }

    /// Marks the request as the document's operation `template` (for the status check).
    pub fn operation(mut self, template: &str) -> Self {
        self.operation = Some((
            self.method.as_str().to_ascii_lowercase(),
            template.to_owned(),
        ));
        self
    }

    fn line(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

/// The state of a run: the HTTP client, the document, every exchange and the results so far.
pub(crate) struct Kit {
    pub config: Config,
    http: Result<reqwest::Client, String>,
    pub exchanges: Vec<Exchange>,
    results: Vec<CheckResult>,
    /// The server's `/openapi.json`, once fetched.
    pub document: Option<Value>,
}

impl Kit {
    pub fn new(config: Config) -> Self {
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(Duration::from_secs(5))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"));
        Kit {
            config,
            http,
            exchanges: Vec::new(),
            results: Vec::new(),
            document: None,
        }
    }

    pub fn record(&mut self, name: &'static str, promise: &'static str, outcome: Outcome) {
        self.results.push(CheckResult::new(name, promise, outcome));
    }

    pub fn into_results(self) -> Vec<CheckResult> {
        self.results
    }

    /// Sends `req` and keeps the exchange; a request that got no answer is a failure of the
    /// check that sent it.
    pub async fn send(&mut self, req: Req) -> Result<Exchange, Outcome> {
        let line = req.line();
        let no_answer = |why: String| Outcome::Fail {
            request: line.clone(),
            expected: "an answer".to_owned(),
            received: why,
        };
        let http = self.http.as_ref().map_err(|e| no_answer(e.clone()))?;
        let mut builder = http.request(
            req.method.clone(),
            format!("{}{}", self.config.url, req.path),
        );
        if let Some(key) = &req.key {
            builder = builder.header(API_KEY, key);
        }
        for (name, value) in &req.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        if let Some(body) = req.body.clone() {
            builder = builder.body(body);
        }
        let response = builder
            .send()
            .await
            .map_err(|e| no_answer(format!("no answer: {}", innermost(&e))))?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|e| no_answer(format!("the body broke off: {}", innermost(&e))))?
            .to_vec();
        Ok(self.keep(Exchange {
            request: line,
            operation: req.operation,
            status,
            headers,
            body,
        }))
    }

    /// Sends `req`, whose body the server may refuse before reading it: over plain HTTP on a
    /// connection of its own ([`early_answer`]), so that an answer sent before the body was
    /// taken is read even when the server's close broke the body off; over TLS like any other.
    pub async fn send_refusable(&mut self, req: Req) -> Result<Exchange, Outcome> {
        let Some(target) = self.config.url.strip_prefix("http://") else {
            return self.send(req).await;
        };
        let (authority, prefix) = target.split_at(target.find('/').unwrap_or(target.len()));
        let no_answer = |why: String| Outcome::Fail {
            request: req.line(),
            expected: "an answer".to_owned(),
            received: why,
        };
        let body = req.body.clone().unwrap_or_default();
        let mut head = format!("{} {prefix}{} HTTP/1.1\r\n", req.method, req.path);
        let api_key = API_KEY;
        let key = req.key.iter().map(|key| (api_key.as_str(), key.as_str()));
        let headers = req.headers.iter().map(|(n, v)| (n.as_str(), v.as_str()));
        let length = body.len().to_string();
        let framing = [("host", authority), ("content-length", length.as_str())];
        for (name, value) in key.chain(headers).chain(framing) {
            // What reqwest would refuse to send: a line break would end the header early.
            if HeaderValue::from_str(value).is_err() {
                return Err(no_answer(format!(
                    "not sent: header {name} is not a header value"
                )));
            }
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let answer = early_answer::exchange(authority, &head, &body, self.config.timeout)
            .await
            .map_err(no_answer)?;
        Ok(self.keep(Exchange {
            request: req.line(),
            operation: req.operation,
            status: answer.status,
            headers: answer.headers,
            body: answer.body,
        }))
    }

    fn keep(&mut self, exchange: Exchange) -> Exchange {
        self.exchanges.push(exchange.clone());
        exchange
    }

    /// A `GET` of `path` with the API key, marked as the operation `template`.
    pub async fn get(&mut self, path: &str, template: &str) -> Result<Exchange, Outcome> {
        let key = self.config.api_key.clone();
        self.send(Req::new(Method::GET, path).key(&key).operation(template))
            .await
    }

    /// Whether the document's `GET template` takes a required query parameter (the instance-type
    /// listing's `mapping`), which no walk of the catalog can fill.
    pub fn needs_query(&self, template: &str) -> bool {
        let parameters = self
            .document
            .as_ref()
            .and_then(|d| d.get("paths")?.get(template)?.get("get")?.get("parameters"))
            .and_then(Value::as_array);
        parameters.into_iter().flatten().any(|p| {
            p.get("in").and_then(Value::as_str) == Some("query")
                && p.get("required").and_then(Value::as_bool) == Some(true)
        })
    }

    /// The operations of the document: (lower-case method, path template, documented statuses).
    pub fn operations(&self) -> Vec<(String, String, Vec<String>)> {
        let mut operations = Vec::new();
        let Some(paths) = self
            .document
            .as_ref()
            .and_then(|d| d.get("paths"))
            .and_then(Value::as_object)
        else {
            return operations;
        };
        for (template, item) in paths {
            let Some(item) = item.as_object() else {
                continue;
            };
            for (method, operation) in item {
                let Some(responses) = operation.get("responses").and_then(Value::as_object) else {
                    continue;
                };
                operations.push((
                    method.to_ascii_lowercase(),
                    template.clone(),
                    responses.keys().cloned().collect(),
                ));
            }
        }
        operations
    }
}

/// Fills a path template's `{parameters}` from `values`; `None` when one has no value.
pub(crate) fn fill(template: &str, values: &[(&str, &str)]) -> Option<String> {
    let mut path = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..].find('}')? + open;
        let name = &rest[open + 1..close];
        let value = values.iter().find(|(n, _)| *n == name)?.1;
        path.push_str(&rest[..open]);
        path.push_str(value);
        rest = &rest[close + 1..];
    }
    path.push_str(rest);
    Some(path)
}

fn innermost(error: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = error;
    while let Some(cause) = innermost.source() {
        innermost = cause;
    }
    innermost.to_string()
}

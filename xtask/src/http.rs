//! Loopback HTTP for the tasks: a free port of 127.0.0.1, and single requests with reqwest
//! (a server's readiness, the answer a baseline replays, the scale run's readings of
//! `/metrics`, the answers Prism validates). One current-thread tokio runtime and client per
//! calling thread, so a poll every few milliseconds costs no set-up.

use std::net::{SocketAddr, TcpListener};
use std::time::Duration;

use anyhow::{Context, Result};
use reqwest::Method;

/// A port of 127.0.0.1 that nothing listened on a moment ago.
pub(crate) fn free_port() -> Result<SocketAddr> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .context("cannot find a free port")
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: Option<String>,
    pub(crate) etag: Option<String>,
    pub(crate) body: Vec<u8>,
}

thread_local! {
    static CLIENT: Option<(tokio::runtime::Runtime, reqwest::Client)> = {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
        // No proxy from the environment: every request is to this machine.
        let client = reqwest::Client::builder().no_proxy().build().ok()?;
        Some((runtime, client))
    };
}

/// A GET of `path` on `addr`, given 5 s.
pub(crate) fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Result<Answer> {
    let url = format!("http://{addr}{path}");
    send(Method::GET, &url, headers, None, Duration::from_secs(5))
}

/// One request (with a JSON body when `json` is given), its whole answer read within `timeout`.
pub(crate) fn send(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    json: Option<&serde_json::Value>,
    timeout: Duration,
) -> Result<Answer> {
    let Some(json) = json else {
        return send_raw(method, url, headers, None, timeout);
    };
    let mut headers = headers.to_vec();
    headers.push(("content-type", "application/json"));
    let body = serde_json::to_vec(json).context("cannot write the JSON body")?;
    send_raw(method, url, &headers, Some(body), timeout)
}

/// One request with `body` as it is, its whole answer read within `timeout`.
pub(crate) fn send_raw(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<Vec<u8>>,
    timeout: Duration,
) -> Result<Answer> {
    CLIENT.with(|client| {
        let (runtime, client) = client.as_ref().context("cannot start an HTTP client")?;
        let mut request = client.request(method.clone(), url).timeout(timeout);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.body(body);
        }
        runtime.block_on(async {
            let answer = request
                .send()
                .await
                .with_context(|| format!("{method} {url}"))?;
            let header = |name: &str| {
                answer
                    .headers()
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned)
            };
            let (status, content_type, etag) = (
                answer.status().as_u16(),
                header("content-type"),
                header("etag"),
            );
            let body = answer
                .bytes()
                .await
                .with_context(|| format!("{method} {url}: the body"))?;
            Ok(Answer {
                status,
                content_type,
                etag,
                body: body.to_vec(),
            })
        })
    })
}

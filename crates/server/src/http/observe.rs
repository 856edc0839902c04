//! What happens around every request: its id, its metrics and its one log line.
//!
//! The request id is tower-http's (`SetRequestId` with [`MakeUlid`]), after
//! [`drop_invalid_request_id`] removed a caller's id that is not one. [`observe`] is the one
//! middleware of our own that sees every answer: it gives framework errors the contract's body
//! ([`super::error::json_errors`]), counts the answer under its route template (never a raw
//! path, so callers cannot create label values), writes the log line with the internal detail
//! of an error, and marks answers of deprecated operations.
//!
//! A request whose client leaves before the answer has its future dropped (by hyper, when the
//! connection closes), so the code after the handler never runs. Its line is written by the
//! [`Unanswered`] guard of its [`RequestRecord`] instead: status 499 (nginx's "client closed
//! request"), counted in the request metrics like any other status. The record starts when
//! hyper hands the request over (`serve.rs`), not when [`observe`] first runs, because a
//! request that arrives together with its connection's close is dropped before it is ever
//! polled. A profile delete hands its write to a task of its own, which finishes without the
//! request; its 499 line waits for that write's outcome ([`RequestRecord::write_handed`]) and
//! says whether it committed.
//!
//! Levels: `ERROR` for a bug (a 5xx other than 503/504), `WARN` for expected degradation (503:
//! outage, shed load, draining; 504; 429) and for other refusals with an internal detail,
//! `INFO` otherwise (499 included: the client's doing).

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use appzone_contract::deprecation::{Deprecation, DEPRECATION, SUNSET};
use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, Method, Uri};
use tokio::sync::oneshot;
use tower_http::request_id::{MakeRequestId, RequestId};

use super::error::InternalDetail;
use crate::keys::Caller;
use crate::metrics::Metrics;

/// Keeps a caller's `X-Request-Id` (its first value) when it is a valid request id, and removes
/// it otherwise, so that one is made for the request.
pub fn drop_invalid_request_id(mut request: Request) -> Request {
    let headers = request.headers_mut();
    let valid = headers
        .get(&REQUEST_ID)
        .filter(|v| v.to_str().is_ok_and(is_valid_request_id))
        .cloned();
    match valid {
        Some(id) => headers.insert(REQUEST_ID, id),
        None => headers.remove(&REQUEST_ID),
    };
    request
}

/// Makes request ids: ULIDs (26 Crockford base32 characters).
#[derive(Debug, Clone, Copy)]
pub struct MakeUlid;

impl MakeRequestId for MakeUlid {
    fn make_request_id<B>(&mut self, _request: &http::Request<B>) -> Option<RequestId> {
        let id = ulid::Ulid::generate().to_string();
        HeaderValue::from_str(&id).ok().map(RequestId::new)
    }
}

/// The label of the route the router matched: its template (the documentation page's assets
/// count as `/docs`), or `unmatched`.
fn route_label(matched: Option<&MatchedPath>) -> &'static str {
    let Some(template) = matched.map(MatchedPath::as_str) else {
        return "unmatched";
    };
    let template = if template.starts_with("/docs/") {
        "/docs"
    } else {
        template
    };
    super::ROUTES
        .into_iter()
        .find(|route| *route == template)
        .unwrap_or("unmatched")
}

/// The label of a request's path for a request dropped before the router matched it: the
/// template whose shape it has (the documentation page's assets count as `/docs`), or
/// `unmatched`, as [`route_label`] would say.
fn path_label(path: &str) -> &'static str {
    if path == "/docs" || path.starts_with("/docs/") {
        return "/docs";
    }
    super::error::matching_route(path).unwrap_or("unmatched")
}

/// The state of [`observe`]: the metrics, and the headers of deprecated operations.
#[derive(Debug, Clone)]
pub struct Observe {
    metrics: Metrics,
    deprecated: std::sync::Arc<[Deprecated]>,
}

/// The headers of a deprecated operation's answers, made once.
#[derive(Debug)]
struct Deprecated {
    method: Method,
    route: String,
    deprecation: HeaderValue,
    sunset: Option<HeaderValue>,
}

impl Observe {
    /// Counts into `metrics` and marks the operations of `deprecations`, found by their
    /// operation id in the contract's document (an unknown id is logged and ignored).
    pub fn new(metrics: Metrics, deprecations: &[Deprecation]) -> Self {
        let doc = appzone_contract::openapi::document();
        let operation = |id: &str| {
            let paths = doc["paths"].as_object()?;
            paths.iter().find_map(|(path, item)| {
                let (method, _) = item
                    .as_object()?
                    .iter()
                    .find(|(_, operation)| operation["operationId"] == id)?;
                Some((method.to_uppercase().parse().ok()?, path.clone()))
            })
        };
        let deprecated = deprecations
            .iter()
            .filter_map(|deprecation| {
                let found = operation(deprecation.operation_id);
                if found.is_none() {
                    tracing::warn!(
                        operation_id = deprecation.operation_id,
                        "a deprecation names no operation of the document; ignored"
                    );
                }
                let (method, route) = found?;
                Some(Deprecated {
                    method,
                    route,
                    deprecation: deprecation.deprecation_header(),
                    sunset: deprecation.sunset_header(),
                })
            })
            .collect();
        Self {
            metrics,
            deprecated,
        }
    }
}

/// The middleware: see the module documentation.
pub async fn observe(
    State(observe): State<Observe>,
    matched: Option<MatchedPath>,
    mut request: Request,
    next: Next,
) -> Response {
    let method = request.method().clone();
    let route = route_label(matched.as_ref());
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let request_id = request.headers().get(&REQUEST_ID).cloned();
    // The record `serve` started, or one of our own when the router is served another way
    // (tests): then a drop from here on is still logged.
    let (record, _unanswered) = match request.extensions().get::<RequestRecord>() {
        Some(record) => (record.clone(), None),
        None => {
            let (record, unanswered) =
                RequestRecord::begin(&request, client, observe.metrics.clone());
            request.extensions_mut().insert(record.clone());
            (record, Some(unanswered))
        }
    };
    let started = record.routed(route, request_id.clone());
    let mut response = super::error::json_errors(next.run(request).await);
    record.answered();

    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    observe.metrics.observe(&method, route, status, elapsed);
    let key_id = response
        .extensions()
        .get::<Caller>()
        .map_or("-", |caller| caller.key.key_id.as_str());
    let detail = response
        .extensions()
        .get::<InternalDetail>()
        .map(|InternalDetail(detail)| detail.as_str());
    Line {
        method: &method,
        route,
        status,
        elapsed,
        request_id: request_id.as_ref().and_then(|v| v.to_str().ok()),
        key_id,
        client,
        detail,
        committed: Committed::NotAsked,
    }
    .write();

    let operation = |d: &&Deprecated| {
        d.route == route
            && (d.method == method || (method == Method::HEAD && d.method == Method::GET))
    };
    if let Some(deprecated) = observe.deprecated.iter().find(operation) {
        let headers = response.headers_mut();
        headers.insert(DEPRECATION, deprecated.deprecation.clone());
        if let Some(sunset) = &deprecated.sunset {
            headers.insert(SUNSET, sunset.clone());
        }
    }
    response
}

/// One request's log line.
struct Line<'a> {
    method: &'a Method,
    route: &'static str,
    status: u16,
    elapsed: Duration,
    request_id: Option<&'a str>,
    key_id: &'a str,
    client: Option<IpAddr>,
    detail: Option<&'a str>,
    committed: Committed,
}

/// What a 499 line says of the request's write.
#[derive(Debug, Clone, Copy)]
enum Committed {
    /// Not a delete: no `committed` field.
    NotAsked,
    /// The write's outcome: `committed=true` or `false`.
    Known(bool),
    /// The outcome did not come within its bound (or the process is exiting).
    Unknown,
}

impl Line<'_> {
    /// Writes the line, at the level its status deserves (see the module documentation).
    fn write(&self) {
        let Self {
            method,
            route,
            status,
            request_id,
            key_id,
            detail,
            ..
        } = *self;
        let latency_us = u64::try_from(self.elapsed.as_micros()).unwrap_or(u64::MAX);
        // Refused for who is asking (no or a wrong key, a limit, a refusal with a detail), or
        // gone: the line names the client's address, so an operator can trace a flood or a
        // misconfigured caller to its source.
        let client = (matches!(status, 401 | 429 | 499) || (detail.is_some() && status < 500))
            .then_some(self.client)
            .flatten()
            .map(tracing::field::display);
        let (committed, write) = match self.committed {
            Committed::NotAsked => (None, None),
            Committed::Known(committed) => (Some(committed), None),
            Committed::Unknown => (None, Some("outcome unknown")),
        };
        let message = match status {
            499 => "client closed request",
            500.. => "request failed",
            _ if detail.is_some() => "request refused",
            _ => "request",
        };
        macro_rules! line {
            ($level:ident) => {
                tracing::$level!(
                    target: "appzone::request", %method, route, status, latency_us, request_id,
                    key_id, client, detail, committed, write, "{message}"
                )
            };
        }
        match status {
            // Expected degradation: an outage, shed load, draining, a timeout, a rate limit.
            503 | 504 | 429 => line!(warn),
            // A bug, or the server's own failure.
            500.. => line!(error),
            _ if detail.is_some() => line!(warn),
            _ => line!(info),
        }
    }
}

/// Longest a 499 line waits for its write's outcome beyond the write's own deadline, by which
/// storage ends it (rolled back) in any case.
const OUTCOME_MARGIN: Duration = Duration::from_secs(5);

/// One request's log line in the making, shared by [`observe`], which writes it with the
/// answer, and the [`Unanswered`] guard, which writes it with 499 when the request is dropped
/// first. A request extension, so that a handler can hand it a write's outcome.
#[derive(Debug, Clone)]
pub struct RequestRecord(Arc<Mutex<Record>>);

#[derive(Debug)]
struct Record {
    started: Instant,
    method: Method,
    /// The request's path until the router matched it, then its label.
    route: Result<&'static str, Uri>,
    request_id: Option<HeaderValue>,
    client: Option<IpAddr>,
    metrics: Metrics,
    /// A write handed to storage: its outcome, and how long to wait for it.
    write: Option<(oneshot::Receiver<bool>, Instant)>,
    /// Whether the line was written (or is [`observe`]'s to write).
    settled: bool,
}

/// Writes its request's line with status 499 when dropped before the request was answered.
#[derive(Debug)]
pub struct Unanswered(RequestRecord);

/// Where the task that finishes a write reports whether it committed (see
/// [`RequestRecord::write_handed`]).
#[derive(Debug)]
pub struct WriteOutcome(oneshot::Sender<bool>);

impl WriteOutcome {
    /// Reports the write's outcome: `true` when it committed a change.
    pub fn report(self, committed: bool) {
        // No receiver: the request was answered, or its line was written; nobody asks.
        let _ = self.0.send(committed);
    }
}

impl RequestRecord {
    /// Starts the record of `request`, from `client`, counted into `metrics`; the guard writes
    /// its 499 line if it is dropped before [`observe`] saw the answer.
    pub fn begin<B>(
        request: &http::Request<B>,
        client: Option<IpAddr>,
        metrics: Metrics,
    ) -> (Self, Unanswered) {
        // A caller's id is kept only when valid (as `drop_invalid_request_id` does); without
        // one, a request dropped before the router made one is logged without.
        let request_id = request
            .headers()
            .get(&REQUEST_ID)
            .filter(|v| v.to_str().is_ok_and(is_valid_request_id))
            .cloned();
        let record = Self(Arc::new(Mutex::new(Record {
            started: Instant::now(),
            method: request.method().clone(),
            route: Err(request.uri().clone()),
            request_id,
            client,
            metrics,
            write: None,
            settled: false,
        })));
        (record.clone(), Unanswered(record))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Record> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The router matched `route`, and the request's id is `request_id`; returns when the
    /// request started.
    fn routed(&self, route: &'static str, request_id: Option<HeaderValue>) -> Instant {
        let mut record = self.lock();
        record.route = Ok(route);
        if request_id.is_some() {
            record.request_id = request_id;
        }
        record.started
    }

    /// The answer is [`observe`]'s to log.
    fn answered(&self) {
        self.lock().settled = true;
    }

    /// A write is handed to storage, to finish by `deadline` even if the request is dropped:
    /// a 499 line then waits (a little past `deadline` at most) for the outcome reported
    /// through the returned [`WriteOutcome`], and says whether it committed.
    pub fn write_handed(&self, deadline: Instant) -> WriteOutcome {
        let (sender, receiver) = oneshot::channel();
        self.lock().write = Some((receiver, deadline));
        WriteOutcome(sender)
    }
}

impl Unanswered {
    /// The request was answered: nothing to write here (its line is [`observe`]'s).
    pub fn answered(self) {
        self.0.answered();
    }
}

impl Drop for Unanswered {
    fn drop(&mut self) {
        let mut record = self.0.lock();
        if record.settled {
            return;
        }
        record.settled = true;
        let elapsed = record.started.elapsed();
        let route = match &record.route {
            Ok(route) => route,
            Err(uri) => path_label(uri.path()),
        };
        record.metrics.observe(&record.method, route, 499, elapsed);
        let closed = Closed {
            method: record.method.clone(),
            route,
            elapsed,
            request_id: record
                .request_id
                .as_ref()
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned),
            client: record.client,
            delete: record.method == Method::DELETE
                && route == appzone_contract::paths::DELETE_PROFILE,
        };
        match record.write.take() {
            None => closed.write(if closed.delete {
                // The delete never handed its write to storage: nothing changed.
                Committed::Known(false)
            } else {
                Committed::NotAsked
            }),
            Some((outcome, deadline)) => {
                drop(record);
                let pending = PendingLine {
                    closed: Some(closed),
                    outcome,
                };
                match tokio::runtime::Handle::try_current() {
                    Ok(runtime) => {
                        runtime.spawn(pending.wait(deadline + OUTCOME_MARGIN));
                    }
                    // No runtime to wait on: written now, with what is known.
                    Err(_) => drop(pending),
                }
            }
        }
    }
}

/// The parts of a 499 line, owned, for a line written later.
#[derive(Debug)]
struct Closed {
    method: Method,
    route: &'static str,
    elapsed: Duration,
    request_id: Option<String>,
    client: Option<IpAddr>,
    /// A profile delete: the line says whether it committed.
    delete: bool,
}

impl Closed {
    fn write(&self, committed: Committed) {
        Line {
            method: &self.method,
            route: self.route,
            status: 499,
            elapsed: self.elapsed,
            request_id: self.request_id.as_deref(),
            key_id: "-",
            client: self.client,
            detail: None,
            committed,
        }
        .write();
    }
}

/// A 499 line waiting for its write's outcome; written when it comes, when the wait's bound
/// passes, or when dropped (the runtime shutting down at exit), whichever is first.
#[derive(Debug)]
struct PendingLine {
    closed: Option<Closed>,
    outcome: oneshot::Receiver<bool>,
}

impl PendingLine {
    async fn wait(mut self, until: Instant) {
        let outcome = tokio::time::timeout_at(until.into(), &mut self.outcome).await;
        let committed = match outcome {
            Ok(Ok(committed)) => Committed::Known(committed),
            // Past the bound, or the writing task ended without a word.
            Ok(Err(_)) | Err(_) => Committed::Unknown,
        };
        if let Some(closed) = self.closed.take() {
            closed.write(committed);
        }
    }
}

impl Drop for PendingLine {
    fn drop(&mut self) {
        if let Some(closed) = self.closed.take() {
            let committed = self
                .outcome
                .try_recv()
                .map_or(Committed::Unknown, Committed::Known);
            closed.write(committed);
        }
    }
}

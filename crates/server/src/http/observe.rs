//! What happens around every request: its id, its metrics and its one log line.
//!
//! The request id is tower-http's (`SetRequestId` with [`MakeUlid`]), after
//! [`drop_invalid_request_id`] removed a caller's id that is not one. [`observe`] is the one
//! middleware of our own that sees every answer: it gives framework errors the contract's body
//! ([`super::error::json_errors`]), counts the answer under its route template (never a raw
//! path, so callers cannot create label values), writes the log line with the internal detail
//! of an error, and marks answers of deprecated operations.

use std::net::SocketAddr;
use std::time::Instant;

use appzone_contract::deprecation::{Deprecation, DEPRECATION, SUNSET};
use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use http::{HeaderValue, Method};
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
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().clone();
    let route = route_label(matched.as_ref());
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let request_id = request.headers().get(&REQUEST_ID).cloned();
    let mut response = super::error::json_errors(next.run(request).await);

    let elapsed = started.elapsed();
    let status = response.status().as_u16();
    observe.metrics.observe(&method, route, status, elapsed);
    let latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
    let request_id = request_id.as_ref().and_then(|v| v.to_str().ok());
    let key_id = response
        .extensions()
        .get::<Caller>()
        .map_or("-", |caller| caller.key.key_id.as_str());
    let client = client.map(tracing::field::display);
    match response.extensions().get::<InternalDetail>() {
        Some(InternalDetail(detail)) if status >= 500 => tracing::error!(
            target: "appzone::request", %method, route, status, latency_us, request_id, key_id, detail, "request failed"
        ),
        Some(InternalDetail(detail)) => tracing::warn!(
            target: "appzone::request", %method, route, status, latency_us, request_id, key_id, client, detail, "request refused"
        ),
        // Refused for who is asking (no or a wrong key, a limit): the line names the client's
        // address, so an operator can trace a flood or a misconfigured caller to its source.
        None if matches!(status, 401 | 429) => tracing::info!(
            target: "appzone::request", %method, route, status, latency_us, request_id, key_id, client, "request"
        ),
        None => tracing::info!(
            target: "appzone::request", %method, route, status, latency_us, request_id, key_id, "request"
        ),
    }

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

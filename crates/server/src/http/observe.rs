//! Request id, one log line per request, and request metrics: what the outermost service
//! ([`super::stack::App`]) does before and after every request.
//!
//! Every response leaves through `finish`, so every response gets `X-Request-Id`, is counted,
//! and is logged once, with the internal detail of an error when there is one. The route label
//! is the one the handler recorded, else derived from the path with the contract's templates;
//! the key id comes from the [`RequestContext`] the auth service filled in.

use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use axum::body::{Body, Bytes};
use axum::response::Response;
use http::header::X_CONTENT_TYPE_OPTIONS;
use http::{HeaderMap, HeaderValue, Method};

use super::context::RequestContext;
use super::error::InternalDetail;
use super::metrics::Metrics;
use super::routes::RouteLabel;

/// The caller's `X-Request-Id` when valid, else a fresh ULID.
pub(super) fn request_id(headers: &HeaderMap) -> HeaderValue {
    headers
        .get(&REQUEST_ID)
        .filter(|v| v.to_str().is_ok_and(is_valid_request_id))
        .cloned()
        .unwrap_or_else(fresh)
}

/// Counts and logs the answered request and adds the headers every response carries.
pub(super) fn finish(
    metrics: &Metrics,
    method: &Method,
    route: RouteLabel,
    context: &RequestContext,
    response: Response,
) -> Response {
    let mut response = super::json_errors(response);
    let elapsed = context.started().elapsed();
    let status = response.status().as_u16();
    metrics.observe(method, route, status, elapsed);
    let route = route.as_str();
    let request_id = context.request_id();
    let key_id = context.caller().map_or("-", |c| c.key.key_id.as_str());
    let latency_us = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
    match response.extensions().get::<InternalDetail>() {
        Some(InternalDetail(detail)) if status >= 500 => tracing::error!(
            target: "appzone::request", %method, route, status, latency_us, request_id, key_id, detail, "request failed"
        ),
        Some(InternalDetail(detail)) => tracing::warn!(
            target: "appzone::request", %method, route, status, latency_us, request_id, key_id, client = context.peer().map(tracing::field::display), detail, "request refused"
        ),
        // Refused for who is asking (no or a wrong key, a limit): the line names the client's
        // address, so an operator can trace a flood or a misconfigured caller to its source.
        None if matches!(status, 401 | 429) => {
            let client = context.peer().map(tracing::field::display);
            tracing::info!(
                target: "appzone::request", %method, route, status, latency_us, request_id, key_id, client, "request"
            );
        }
        None => crate::logging::request(&crate::logging::RequestLine {
            method,
            route,
            status,
            latency_us,
            request_id,
            key_id,
        }),
    }
    if method == Method::HEAD {
        // The router strips HEAD bodies only for what it answers itself; the layers outside
        // it (authentication, shedding) answer too.
        *response.body_mut() = Body::empty();
    }
    let headers = response.headers_mut();
    headers.insert(REQUEST_ID, context.request_id_header().clone());
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

fn fresh() -> HeaderValue {
    // A ULID is 26 Crockford base32 characters: always a valid header value. Encoded on the
    // stack and moved into a reference-counted buffer: one allocation, and the clone `finish`
    // puts in the response counts a reference. (A header value copied from a `&str` is
    // copied into a buffer its first clone copies again into a shared one.)
    let mut buffer = [0; ulid::ULID_LEN];
    ulid::Ulid::generate().array_to_str(&mut buffer);
    HeaderValue::from_maybe_shared(Bytes::from_owner(buffer))
        .unwrap_or(HeaderValue::from_static("unknown"))
}

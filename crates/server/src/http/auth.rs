//! Authentication of every `/api/v1/...` request, before any handler reads a path parameter,
//! and the per-key rate limit.
//!
//! A layer on the whole router rather than a per-handler extractor, so unknown routes and
//! wrong methods under `/api/v1` are refused without a key too, and no handler can forget the
//! check. A verified caller reaches the handler as an `Extension<Caller>`, and the answer
//! carries it as an extension for the request log.

use std::net::SocketAddr;

use appzone_contract::headers::API_KEY;
use appzone_contract::paths::API_PREFIX;
use appzone_contract::ErrorCode;
use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::AppState;
use crate::keys::AuthError;

/// The middleware: on API paths, 401 without a valid key (counted against the client's
/// address: past its limit, 429), 503 when the key cannot be checked, 429 past the key's rate
/// limit; else the request goes on with its [`Caller`](crate::keys::Caller).
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    if !is_api_path(request.uri().path()) {
        return next.run(request).await;
    }
    let refusal = match presented(request.headers()) {
        Presented::Missing => ApiError::new(
            ErrorCode::MissingApiKey,
            "missing API key: send it in the X-API-KEY header",
        ),
        Presented::Unreadable => invalid_key(),
        Presented::Key(key) => match state.keys.verify(key).await {
            Ok(caller) => {
                // Returns at once: the write, when one is due, runs on its own task.
                state.last_used.record(&caller.key.key_id);
                let verdict = state.limits.check_key(&caller.key.key_id).await;
                let mut response = match verdict.retry_after {
                    Some(secs) => rate_limited(secs).into_response(),
                    None => {
                        request.extensions_mut().insert(caller.clone());
                        next.run(request).await
                    }
                };
                if let Some(headers) = verdict.headers {
                    headers.add_to(response.headers_mut());
                }
                response.extensions_mut().insert(caller);
                return response;
            }
            Err(AuthError::Invalid) => invalid_key(),
            Err(AuthError::Store(err)) => return ApiError::storage(err).into_response(),
        },
    };
    // Failed attempts count against the client's address; past the limit, 429.
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let Some(ip) = peer else {
        return refusal.into_response();
    };
    let verdict = state.limits.auth_failed(ip).await;
    let refusal = verdict.retry_after.map_or(refusal, rate_limited);
    let mut response = refusal.into_response();
    if let Some(headers) = verdict.headers {
        headers.add_to(response.headers_mut());
    }
    response
}

/// The 429 of a limit that refused the request for `retry_after` seconds.
fn rate_limited(retry_after: u32) -> ApiError {
    ApiError::new(ErrorCode::RateLimited, "rate limit exceeded, retry later")
        .with_retry_after(retry_after)
}

fn invalid_key() -> ApiError {
    ApiError::new(ErrorCode::InvalidApiKey, "invalid API key")
}

fn is_api_path(path: &str) -> bool {
    path.strip_prefix(API_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// What the request presents in `X-API-KEY`.
enum Presented<'a> {
    /// No header, or an empty or blank one.
    Missing,
    /// Not readable as one key: not UTF-8, or the header sent twice.
    Unreadable,
    /// One value, trimmed.
    Key(&'a str),
}

fn presented(headers: &http::HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(&API_KEY).iter();
    match (values.next(), values.next()) {
        (None, _) => Presented::Missing,
        (Some(_), Some(_)) => Presented::Unreadable,
        // UTF-8 rather than `to_str`'s visible ASCII, checked a word at a time: anything outside
        // the key format fails verification with the same 401.
        (Some(value), None) => match std::str::from_utf8(value.as_bytes()).map(str::trim) {
            Ok("") => Presented::Missing,
            Ok(key) => Presented::Key(key),
            Err(_) => Presented::Unreadable,
        },
    }
}

//! Authentication of every `/api/v1/...` request, before routing reads any path parameter.
//!
//! A middleware rather than a per-handler extractor, so unknown routes and wrong methods under
//! `/api/v1` are refused without a key too and no handler can forget the check.

use appzone_contract::headers::API_KEY;
use appzone_contract::paths::API_PREFIX;
use appzone_contract::ErrorCode;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use super::limits::RateLimits;
use super::observe::KeyTag;
use crate::keys::{AuthError, Caller, KeyVerifier};

fn is_api_path(path: &str) -> bool {
    path.strip_prefix(API_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// What the request presents in `X-API-KEY`.
enum Presented<'a> {
    /// No header, or an empty or blank one.
    Missing,
    /// Not readable as one key: non-ASCII bytes, or the header sent twice.
    Unreadable,
    /// One value, trimmed.
    Key(&'a str),
}

fn presented(headers: &http::HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(&API_KEY).iter();
    match (values.next(), values.next()) {
        (None, _) => Presented::Missing,
        (Some(_), Some(_)) => Presented::Unreadable,
        (Some(value), None) => match value.to_str().map(str::trim) {
            Ok("") => Presented::Missing,
            Ok(key) => Presented::Key(key),
            Err(_) => Presented::Unreadable,
        },
    }
}

/// Middleware: verifies `X-API-KEY`, applies the rate limits, and puts the
/// [`crate::keys::Caller`] into the request extensions.
pub async fn require_api_key(
    State(handles): State<Arc<(KeyVerifier, RateLimits)>>,
    mut request: Request,
    next: Next,
) -> Response {
    if !is_api_path(request.uri().path()) {
        return next.run(request).await;
    }
    let (keys, limits) = &*handles;
    let verified = match presented(request.headers()) {
        Presented::Missing => Err(ApiError::new(
            ErrorCode::MissingApiKey,
            "missing API key: send it in the X-API-KEY header",
        )),
        Presented::Unreadable => Err(invalid_key()),
        Presented::Key(key) => match keys.verify(key).await {
            Ok(caller) => Ok(caller),
            Err(AuthError::Invalid) => Err(invalid_key()),
            Err(AuthError::Store(err)) => return ApiError::storage(err).into_response(),
        },
    };
    let caller = match verified {
        Ok(caller) => caller,
        Err(refusal) => {
            // Failed attempts count against the client's address; past the limit, 429.
            let peer = request
                .extensions()
                .get::<ConnectInfo<SocketAddr>>()
                .map(|c| c.0.ip());
            if let Some(Err(limited)) = peer.map(|ip| limits.auth_failed(ip)) {
                return limited.into_response();
            }
            return refusal.into_response();
        }
    };
    if let Err(limited) = limits.check_key(&caller.key.key_id) {
        return with_key_tag(limited.into_response(), &caller);
    }
    request.extensions_mut().insert(caller.clone());
    with_key_tag(next.run(request).await, &caller)
}

fn with_key_tag(mut response: Response, caller: &Caller) -> Response {
    response.extensions_mut().insert(KeyTag(caller.key.clone()));
    response
}

fn invalid_key() -> ApiError {
    ApiError::new(ErrorCode::InvalidApiKey, "invalid API key")
}

//! Authentication of every `/api/v1/...` request, before routing reads any path parameter.
//!
//! A middleware rather than a per-handler extractor, so unknown routes and wrong methods under
//! `/api/v1` are refused without a key too and no handler can forget the check.

use appzone_contract::headers::API_KEY;
use appzone_contract::paths::API_PREFIX;
use appzone_contract::ErrorCode;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
use crate::keys::{AuthError, KeyVerifier};

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

/// Middleware: verifies `X-API-KEY` and puts the [`crate::keys::Caller`] into the extensions.
pub async fn require_api_key(
    State(keys): State<KeyVerifier>,
    mut request: Request,
    next: Next,
) -> Response {
    if !is_api_path(request.uri().path()) {
        return next.run(request).await;
    }
    let verified = match presented(request.headers()) {
        Presented::Missing => {
            return ApiError::new(
                ErrorCode::MissingApiKey,
                "missing API key: send it in the X-API-KEY header",
            )
            .into_response()
        }
        Presented::Unreadable => Err(AuthError::Invalid),
        Presented::Key(key) => keys.verify(key).await,
    };
    match verified {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(AuthError::Invalid) => {
            ApiError::new(ErrorCode::InvalidApiKey, "invalid API key").into_response()
        }
        Err(AuthError::Store(err)) => ApiError::storage(err).into_response(),
    }
}

//! Unauthenticated operational routes: health, readiness, the OpenAPI document.

use appzone_contract::ErrorCode;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::HeaderValue;

use super::error::ApiError;
use crate::storage::Store;

/// The checked-in document, served byte for byte.
#[derive(Debug, Clone)]
pub struct OpenApiJson(pub Bytes);

/// `GET /healthz`: the process is up.
pub async fn healthz() -> Response {
    json(r#"{"status":"ok"}"#)
}

/// `GET /readyz`: the database answers; 503 `unavailable` when it does not.
pub async fn readyz(State(store): State<Store>) -> Response {
    match store.ping().await {
        Ok(()) => json(r#"{"status":"ready"}"#),
        Err(err) => ApiError::new(ErrorCode::Unavailable, "database unreachable")
            .with_internal(err)
            .into_response(),
    }
}

/// `GET /openapi.json`.
pub async fn openapi(State(doc): State<OpenApiJson>) -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        doc.0,
    )
        .into_response()
}

fn json(body: &'static str) -> Response {
    (
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response()
}

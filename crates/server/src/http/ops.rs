//! Unauthenticated operational routes: health, readiness, the OpenAPI document.

use appzone_contract::ErrorCode;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::HeaderValue;

use super::error::ApiError;
use crate::readiness::{DatabaseState, Readiness};

/// The checked-in document, served byte for byte.
#[derive(Debug, Clone)]
pub struct OpenApiJson(pub Bytes);

/// `GET /healthz`: the process is up.
pub async fn healthz() -> Response {
    json(r#"{"status":"ok"}"#)
}

/// `GET /readyz`: 200 while this replica can serve listings, with the database's state as the
/// background check last saw it (`{"status":"ready","database":"up"}`, or `"down"`: listings
/// are answered from memory, deletes answer 503); 503 `unavailable` once shutdown has begun,
/// so the load balancer stops sending before the listener closes.
pub async fn readyz(State(readiness): State<Readiness>) -> Response {
    if readiness.is_draining() {
        return ApiError::new(ErrorCode::Unavailable, "shutting down")
            .with_retry_after(1)
            .into_response();
    }
    json(match readiness.database() {
        DatabaseState::Up => r#"{"status":"ready","database":"up"}"#,
        DatabaseState::Down => r#"{"status":"ready","database":"down"}"#,
        DatabaseState::Unknown => r#"{"status":"ready","database":"unknown"}"#,
    })
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

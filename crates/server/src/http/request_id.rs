//! `X-Request-Id` on every response, and the log line for errors tied to it.

use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use http::HeaderValue;

use super::error::InternalDetail;

/// The request's id: the caller's when valid, else a fresh ULID. In request extensions.
#[derive(Debug, Clone)]
pub struct RequestId(pub HeaderValue);

impl RequestId {
    /// The id as text; always ASCII by construction.
    pub fn as_str(&self) -> &str {
        self.0.to_str().unwrap_or_default()
    }
}

/// Middleware: assigns the request id, sets the response header, logs internal error details.
pub async fn assign(mut request: Request, next: Next) -> Response {
    let id = request
        .headers()
        .get(&REQUEST_ID)
        .filter(|v| v.to_str().is_ok_and(is_valid_request_id))
        .cloned()
        .unwrap_or_else(fresh);
    request.extensions_mut().insert(RequestId(id.clone()));
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let mut response = next.run(request).await;
    if let Some(InternalDetail(detail)) = response.extensions().get::<InternalDetail>() {
        let status = response.status().as_u16();
        let request_id = id.to_str().unwrap_or_default();
        if status >= 500 && status != 503 {
            tracing::error!(request_id, %method, path, status, detail, "request failed");
        } else {
            tracing::warn!(request_id, %method, path, status, detail, "request refused");
        }
    }
    response.headers_mut().insert(REQUEST_ID, id);
    response
}

fn fresh() -> HeaderValue {
    // A ULID is 26 Crockford base32 characters: always a valid header value.
    HeaderValue::from_str(&ulid::Ulid::new().to_string())
        .unwrap_or(HeaderValue::from_static("unknown"))
}

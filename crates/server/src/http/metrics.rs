//! `GET /metrics`: the registry of [`crate::metrics`], in the format `Accept` asks for.

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, VARY};
use http::{HeaderMap, HeaderValue};

use super::error::ApiError;
use super::AppState;
use crate::metrics::Format;

/// `GET /metrics`, in the format `Accept` asks for.
pub async fn serve_metrics(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let format = Format::negotiate(&headers);
    match state
        .metrics
        .render(&state.store, &state.catalog, &state.readiness, format)
    {
        Ok(text) => (
            [
                (
                    CONTENT_TYPE,
                    HeaderValue::from_static(format.content_type()),
                ),
                (VARY, HeaderValue::from_static("Accept")),
            ],
            text,
        )
            .into_response(),
        Err(err) => ApiError::internal(format!("cannot encode metrics: {err}")).into_response(),
    }
}

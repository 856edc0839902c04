//! The one error type of the HTTP layer, and the one place it becomes the contract's body.
//!
//! An [`ApiError`] carries a public message (sent to the caller) and, optionally, an internal
//! detail that is only logged, together with the request id, by the request-id middleware.

use std::borrow::Cow;
use std::fmt::Display;

use appzone_contract::{ErrorBody, ErrorCode};
use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use http::HeaderValue;

use crate::storage::StoreError;

/// Internal detail of an error response, logged with the request id, never sent.
#[derive(Debug, Clone)]
pub struct InternalDetail(pub String);

/// An error answer: contract code, public message, optional logged detail.
#[derive(Debug)]
pub struct ApiError {
    code: ErrorCode,
    message: Cow<'static, str>,
    internal: Option<String>,
    retry_after_secs: Option<u32>,
}

impl ApiError {
    /// An error with a public message and nothing to log.
    pub fn new(code: ErrorCode, message: impl Into<Cow<'static, str>>) -> Self {
        let retry_after_secs =
            matches!(code, ErrorCode::Unavailable | ErrorCode::RateLimited).then_some(1);
        Self {
            code,
            message: message.into(),
            internal: None,
            retry_after_secs,
        }
    }

    /// A bug: 500 with a generic message; `detail` goes to the log only.
    pub fn internal(detail: impl Display) -> Self {
        Self::new(
            ErrorCode::InternalError,
            "internal error; quote the request id when reporting it",
        )
        .with_internal(detail)
    }

    /// A transient condition: 503 with `Retry-After`; `detail` goes to the log only.
    pub fn unavailable(detail: impl Display) -> Self {
        Self::new(
            ErrorCode::Unavailable,
            "service temporarily unavailable, retry later",
        )
        .with_internal(detail)
    }

    /// A storage failure: 503 when transient, else 500.
    pub fn storage(err: StoreError) -> Self {
        if err.is_unavailable() {
            Self::unavailable(err)
        } else {
            Self::internal(err)
        }
    }

    /// Attaches a detail for the log.
    pub fn with_internal(mut self, detail: impl Display) -> Self {
        self.internal = Some(detail.to_string());
        self
    }

    /// Sets the `Retry-After` delay in seconds.
    pub fn with_retry_after(mut self, secs: u32) -> Self {
        self.retry_after_secs = Some(secs);
        self
    }

    /// The contract code.
    pub fn code(&self) -> &ErrorCode {
        &self.code
    }
}

/// Longest public message, as the document promises (`ErrorBody.error`, in characters).
const MAX_MESSAGE_CHARS: usize = 1024;

/// The message as sent: cut at [`MAX_MESSAGE_CHARS`] characters, never inside one.
fn public(message: Cow<'static, str>) -> Cow<'static, str> {
    match message.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((cut, _)) => Cow::Owned(message[..cut].to_owned()),
        None => message,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::to_vec(&ErrorBody::new(self.code.clone(), public(self.message)))
            .unwrap_or_else(|_| {
                br#"{"error":"internal error","error_code":"internal_error"}"#.to_vec()
            });
        let mut response = (self.code.status(), body).into_response();
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(secs) = self.retry_after_secs {
            headers.insert(RETRY_AFTER, HeaderValue::from(secs));
        }
        if let Some(detail) = self.internal {
            response.extensions_mut().insert(InternalDetail(detail));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_messages_are_cut_at_the_documented_length() {
        let long = "é".repeat(MAX_MESSAGE_CHARS + 5);
        assert_eq!(public(Cow::Owned(long)).chars().count(), MAX_MESSAGE_CHARS);
        assert_eq!(public(Cow::Borrowed("short")), "short");
    }
}

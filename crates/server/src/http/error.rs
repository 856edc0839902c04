//! The one error type of the HTTP layer, and the one place errors become the contract's body.
//!
//! An [`ApiError`] carries a public message (sent to the caller) and, optionally, an internal
//! detail that is only logged, with the request id, by [`super::observe`]. The framework's own
//! answers (a 413 from the body limit, an extractor's rejection) are plain text: they get the
//! contract's body in [`json_errors`], which every answer passes. The fallbacks (404, 405), the
//! load-shedding answer and the panic answer are here too.

use std::any::Any;
use std::borrow::Cow;
use std::fmt::Display;

use appzone_contract::{ErrorBody, ErrorCode};
use axum::response::{IntoResponse, Response};
use axum::BoxError;
use http::header::{CONTENT_LENGTH, CONTENT_TYPE, RETRY_AFTER};
use http::{HeaderValue, StatusCode, Uri};

use super::body_limit::BodyLimit;
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
    /// An error with a public message and nothing to log. `code` is a variant or the
    /// constant of a code added within 1.x (`ErrorCode::ZONE_MAPPING_NOT_FOUND`): every error
    /// is built here, either way.
    pub fn new(code: impl Into<ErrorCode>, message: impl Into<Cow<'static, str>>) -> Self {
        let code = code.into();
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

/// The 404 of every path no route has.
pub(super) async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(ErrorCode::NotFound, not_found_message(uri.path()))
}

/// The 405 of a route asked with a method it does not have (axum adds `Allow`).
pub(super) async fn method_not_allowed() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "method not allowed on this route; see the Allow header",
    )
}

/// The 503 of a request shed by the in-flight limit (the only error the layers below
/// `HandleErrorLayer` produce).
pub(super) async fn overloaded(err: BoxError) -> ApiError {
    ApiError::unavailable(format!("request shed: {err}"))
}

/// The 500 of a panicking handler; the panic's message goes to the log only.
pub(super) fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("non-string panic payload");
    ApiError::internal(format!("handler panicked: {detail}")).into_response()
}

/// The route template whose shape `path` has (a `{parameter}` stands for one non-empty
/// segment; `/docs` is itself, not its assets).
pub(super) fn matching_route(path: &str) -> Option<&'static str> {
    let shaped = |template: &&str| {
        let (mut t, mut p) = (template.split('/'), path.split('/'));
        loop {
            match (t.next(), p.next()) {
                (None, None) => return true,
                (Some(t), Some(p)) if t == p || (t.starts_with('{') && !p.is_empty()) => {}
                _ => return false,
            }
        }
    };
    super::ROUTES.into_iter().find(|template| shaped(template))
}

/// Longest path a 404 message names: with its words, well within the message's 1024
/// characters, so the path is never cut (a cut path would be a wrong suggestion).
const MAX_SUGGESTED_PATH_CHARS: usize = 512;

/// "no such route", naming the route `path` would be without its trailing slash when there
/// is one.
fn not_found_message(path: &str) -> Cow<'static, str> {
    let Some(without) = path
        .strip_suffix('/')
        .filter(|p| matching_route(p).is_some())
    else {
        return Cow::Borrowed("no such route");
    };
    if without.chars().count() > MAX_SUGGESTED_PATH_CHARS {
        return Cow::Borrowed("no such route; did you mean this path without its trailing slash?");
    }
    Cow::Owned(format!(
        "no such route; did you mean {without} (no trailing slash)?"
    ))
}

/// The 413 message: the contract has every 413 name the limit of the route that refused it.
pub fn payload_too_large(limit: usize) -> String {
    format!("the request body is larger than this route's limit of {limit} bytes")
}

/// Safety net: an error response whose body is not JSON (made by a framework layer, such as
/// tower-http's 413) gets the contract's body for its status; its headers are kept.
pub fn json_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    let code = match status {
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        StatusCode::TOO_MANY_REQUESTS => ErrorCode::RateLimited,
        StatusCode::SERVICE_UNAVAILABLE
        | StatusCode::REQUEST_TIMEOUT
        | StatusCode::GATEWAY_TIMEOUT => ErrorCode::Unavailable,
        _ if status.is_server_error() => ErrorCode::InternalError,
        // A client error without a contract code of its own keeps its status.
        _ => ErrorCode::Other("bad_request".to_owned()),
    };
    let message = match &code {
        // Every route is behind a limit (`body_limit`), which marks its 413s with it.
        ErrorCode::PayloadTooLarge => match response.extensions().get::<BodyLimit>() {
            Some(BodyLimit(limit)) => Cow::Owned(payload_too_large(*limit)),
            None => Cow::Borrowed("the request body is larger than this route's limit"),
        },
        ErrorCode::Unavailable => Cow::Borrowed("service temporarily unavailable, retry later"),
        ErrorCode::InternalError => {
            Cow::Borrowed("internal error; quote the request id when reporting it")
        }
        _ => Cow::Borrowed(status.canonical_reason().unwrap_or("request refused")),
    };
    let (mut parts, _) = response.into_parts();
    let body = serde_json::to_vec(&ErrorBody::new(code, message)).unwrap_or_default();
    parts
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(CONTENT_LENGTH);
    if status == StatusCode::SERVICE_UNAVAILABLE && !parts.headers.contains_key(RETRY_AFTER) {
        parts.headers.insert(RETRY_AFTER, HeaderValue::from(1u32));
    }
    Response::from_parts(parts, axum::body::Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_the_route_without_the_trailing_slash_only_when_there_is_one() {
        let zones = "/api/v1/providers/aws/regions/us-east-1/zones";
        assert_eq!(
            not_found_message(&format!("{zones}/")),
            format!("no such route; did you mean {zones} (no trailing slash)?")
        );
        assert_eq!(
            not_found_message("/healthz/"),
            "no such route; did you mean /healthz (no trailing slash)?"
        );
        for path in [
            "/",
            "",
            "/nope/",
            "/nope",
            "/api/v1/providers/aws/regions/us-east-1/",
            "/api/v1/applications/profiles/",
            "/healthz//",
            "/docs/swagger-ui.css/",
        ] {
            assert_eq!(not_found_message(path), "no such route", "{path}");
        }
        let long = format!("/api/v1/applications/profiles/{}", "a".repeat(600));
        assert_eq!(
            not_found_message(&format!("{long}/")),
            "no such route; did you mean this path without its trailing slash?"
        );
        let longest = format!(
            "/api/v1/applications/profiles/{}",
            "a".repeat(MAX_SUGGESTED_PATH_CHARS - 30)
        );
        assert_eq!(longest.chars().count(), MAX_SUGGESTED_PATH_CHARS);
        assert!(not_found_message(&format!("{longest}/")).contains(&longest));
    }

    #[test]
    fn public_messages_are_cut_at_the_documented_length() {
        let long = "é".repeat(MAX_MESSAGE_CHARS + 5);
        assert_eq!(public(Cow::Owned(long)).chars().count(), MAX_MESSAGE_CHARS);
        assert_eq!(public(Cow::Borrowed("short")), "short");
    }
}

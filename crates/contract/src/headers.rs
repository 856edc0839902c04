//! Header names used by the API, shared by server and client.

use http::HeaderName;

/// Header carrying the caller's API key on every `/api/v1/...` request.
pub const API_KEY: HeaderName = HeaderName::from_static("x-api-key");

/// Header carrying the request id on every response (and, optionally, on the request).
///
/// A caller-supplied value of 1 to 128 characters of `[A-Za-z0-9._:-]` is kept; anything else is
/// replaced by a fresh id. See [`is_valid_request_id`].
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// `Cache-Control` of every zone listing answer (200 and 304).
pub const LISTING_CACHE_CONTROL: &str = "private, max-age=60";

/// Longest request id the server accepts from a caller.
pub const REQUEST_ID_MAX_LEN: usize = 128;

/// Whether a caller-supplied `X-Request-Id` value is kept by the server.
///
/// ```
/// use appzone_contract::headers::is_valid_request_id;
/// assert!(is_valid_request_id("trace-42:a.b_c"));
/// assert!(!is_valid_request_id(""));
/// assert!(!is_valid_request_id("has space"));
/// ```
pub fn is_valid_request_id(value: &str) -> bool {
    (1..=REQUEST_ID_MAX_LEN).contains(&value.len())
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

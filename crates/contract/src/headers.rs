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

/// Optional request header of `DELETE`: a key of the caller's choosing that makes retries
/// safe (IETF draft-ietf-httpapi-idempotency-key-header). The first attempt's outcome is kept
/// with the key, for the caller's organization, for [`IDEMPOTENCY_KEY_TTL_HOURS`] hours; a
/// retry with the same key gets that outcome again, marked with [`IDEMPOTENT_REPLAYED`].
pub const IDEMPOTENCY_KEY: HeaderName = HeaderName::from_static("idempotency-key");

/// Response header `true` on an answer replayed for a repeated `Idempotency-Key`.
pub const IDEMPOTENT_REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// Longest `Idempotency-Key` the server accepts.
pub const IDEMPOTENCY_KEY_MAX_LEN: usize = 255;

/// How long the outcome of a request with an `Idempotency-Key` is kept.
pub const IDEMPOTENCY_KEY_TTL_HOURS: u64 = 24;

/// The key an `Idempotency-Key` header value carries, or `None` when it is not one: 1 to
/// [`IDEMPOTENCY_KEY_MAX_LEN`] visible ASCII characters, optionally in double quotes (the
/// draft's structured-field string form; the quotes are not part of the key).
///
/// ```
/// use appzone_contract::headers::idempotency_key;
/// assert_eq!(idempotency_key("8e03978e-40d5-43e8"), Some("8e03978e-40d5-43e8"));
/// assert_eq!(idempotency_key("\"8e03978e\""), Some("8e03978e"));
/// assert_eq!(idempotency_key(""), None);
/// assert_eq!(idempotency_key("two words"), None);
/// ```
pub fn idempotency_key(value: &str) -> Option<&str> {
    let key = value
        .strip_prefix('"')
        .and_then(|rest| rest.strip_suffix('"'))
        .unwrap_or(value);
    ((1..=IDEMPOTENCY_KEY_MAX_LEN).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\'))
    .then_some(key)
}

/// Response header (IETF draft-ietf-httpapi-ratelimit-headers) on answers of rate-limited
/// operations: what is left of the quota of the policy named in it, and in how many seconds it
/// is whole again, for example `"per-key";r=998;t=1`. Sent only while the limit is on.
pub const RATE_LIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Response header (IETF draft-ietf-httpapi-ratelimit-headers) naming the quota policy that
/// applies, for example `"per-key";q=1000;w=1`: `q` requests per window of `w` seconds.
pub const RATE_LIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");

/// The `RateLimit` policy of an authenticated request: requests per second per API key.
pub const PER_KEY_POLICY: &str = "per-key";

/// The `RateLimit` policy of a `401`: failed authentications per minute per client address.
pub const AUTH_FAILURES_POLICY: &str = "auth-failures";

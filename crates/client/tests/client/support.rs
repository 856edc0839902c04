//! The client's helpers around the scripted server of `appzone_test_support::scripted`: keys,
//! fast retries, a client, and the assertions on locally refused arguments.

use std::time::Duration;

use appzone_client::{Client, Error, ErrorCode, IntoApiKey, RetryPolicy};
use appzone_contract::ApiKey;
pub use appzone_test_support::scripted::{closed_port, reserve_port, Reply, Server};
use http::StatusCode;

/// A fresh API key.
pub fn key() -> ApiKey {
    ApiKey::generate()
}

/// A retry policy with tiny backoffs, so tests are fast.
pub fn fast_retries() -> RetryPolicy {
    RetryPolicy::default().with_backoff(Duration::from_millis(1), Duration::from_millis(5))
}

/// A client of `url` with fast retries and a 5 s timeout.
pub fn client(url: &str, key: impl IntoApiKey) -> Client {
    Client::builder(url, key)
        .retry_policy(fast_retries())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

/// Asserts `error` is a malformed id found locally, before anything was sent: an
/// `InvalidArgument` carrying the code and status the server answers the same id with (`code`,
/// 400), no request id, not retryable. `what` names the arguments in the failure report.
#[track_caller]
pub fn assert_invalid_id(error: &Error, code: ErrorCode, what: &str) {
    assert!(
        matches!(error, Error::InvalidArgument { .. }),
        "{what}: {error:?}"
    );
    assert_eq!(error.status(), Some(StatusCode::BAD_REQUEST), "{what}");
    assert_eq!(error.error_code(), Some(&code), "{what}");
    assert_eq!(error.request_id(), None, "nothing was sent: {error}");
    assert!(!error.is_retryable() && !error.is_not_found(), "{what}");
    assert!(
        error.to_string().starts_with("invalid argument: "),
        "{error}"
    );
}

/// Asserts `error` refused setting `argument` (`"API key"`, `"base URL"`) while building a
/// client: nothing was sent.
#[track_caller]
pub fn assert_invalid_setting(error: &Error, argument: &str, what: &str) {
    assert!(
        matches!(error, Error::InvalidArgument { argument: a, .. } if *a == argument),
        "{what}: {error:?}"
    );
    assert_eq!(error.request_id(), None, "{what}");
}

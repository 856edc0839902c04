//! The operation timeout: one bound on all the attempts of a call together.

use std::time::Duration;

use appzone_client::{Client, Error, RetryPolicy};
use http::StatusCode;

use super::{failing_call, Call, LOADED_MARGIN};
use crate::support::{fast_retries, key, Reply, Server};

#[tokio::test]
async fn the_operation_timeout_bounds_all_attempts_together() {
    // Every answer asks for another try in 1 s; ten attempts would take 9 s.
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy").header("retry-after", "1")
    ])
    .await;
    let client = Client::builder(server.url(), key())
        .retry_policy(fast_retries().with_max_attempts(10))
        .operation_timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    assert_eq!(client.operation_timeout(), Duration::from_secs(2));
    for method in [Call::Get, Call::Delete] {
        let before = server.attempts();
        let (error, elapsed) = failing_call(&client, &method).await;
        assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
        // 2 s and a busy machine's margin, under the 9 s the call takes without the bound;
        // the attempts counted below are the exact check.
        assert!(
            elapsed < Duration::from_secs(2) + LOADED_MARGIN,
            "{elapsed:?}"
        );
        assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
        let attempts = server.attempts() - before;
        assert_eq!(attempts, 2, "at 0 s and 1 s; one at 2 s would be too late");
        assert_eq!(error.as_api().unwrap().attempts as usize, attempts);
    }
}

#[tokio::test]
async fn the_operation_timeout_cuts_a_running_attempt_short() {
    // An attempt's own timeout far above the margin: an attempt that was not cut short
    // would fail the bound below.
    let server = Server::start(vec![Reply::status(204).delay(Duration::from_secs(60))]).await;
    let client = Client::builder(server.url(), key())
        .timeout(Duration::from_secs(30))
        .retry_policy(fast_retries())
        .operation_timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    for method in [Call::Get, Call::Delete] {
        let (error, elapsed) = failing_call(&client, &method).await;
        assert!(elapsed >= Duration::from_millis(800), "{elapsed:?}");
        // Without the cut the attempt would run its whole 30 s.
        assert!(
            elapsed < Duration::from_millis(800) + LOADED_MARGIN,
            "{elapsed:?}"
        );
        assert!(
            matches!(error, Error::Timeout { timeout, .. } if timeout == Duration::from_millis(800)),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("timed out after 800ms"),
            "{error}"
        );
    }
    assert_eq!(
        server.attempts(),
        2,
        "one attempt per call: no time for more"
    );
}

#[test]
fn the_default_operation_timeout_lets_the_retry_policy_end_a_call() {
    let default = Client::new("http://127.0.0.1:1", key()).unwrap();
    // 30 s × 3 attempts + 2 waits of up to 10 s (the longest Retry-After honoured).
    assert_eq!(default.operation_timeout(), Duration::from_secs(110));
    let custom = Client::builder("http://127.0.0.1:1", key())
        .timeout(Duration::from_secs(2))
        .retry_policy(
            RetryPolicy::default()
                .with_max_attempts(4)
                .with_backoff(Duration::from_millis(100), Duration::from_secs(20))
                .with_max_retry_after(Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    assert_eq!(
        custom.operation_timeout(),
        Duration::from_secs(2 * 4 + 3 * 20)
    );
    let once = Client::builder("http://127.0.0.1:1", key())
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    assert_eq!(once.operation_timeout(), Duration::from_secs(30));
}

//! Which statuses are retried, up to which limit, with one request id per call, and how long
//! a `Retry-After` makes the client wait.

use std::time::{Duration, Instant};

use appzone_client::{Client, RetryPolicy};
use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};

use super::{attempts_for, Call, LOADED_MARGIN};
use crate::support::{client, fast_retries, key, Reply, Server};

#[tokio::test]
async fn get_is_retried_on_429_502_503_504_up_to_the_attempt_limit() {
    for status in [429, 502, 503, 504] {
        assert_eq!(attempts_for(status, Call::Get).await, 3, "GET {status}");
    }
}

#[tokio::test]
async fn get_is_not_retried_on_other_statuses() {
    for status in [400, 401, 403, 404, 405, 409, 413, 500, 501] {
        assert_eq!(attempts_for(status, Call::Get).await, 1, "GET {status}");
    }
}

#[tokio::test]
async fn get_succeeds_after_retries_and_respects_a_custom_attempt_limit() {
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy"),
        Reply::error(429, "rate_limited", "slow down"),
        Reply::status(502),
        Reply::status(504),
        Reply::zones(&["z"]),
    ])
    .await;
    let client = Client::builder(server.url(), key())
        .retry_policy(fast_retries().with_max_attempts(5))
        .build()
        .unwrap();
    assert_eq!(
        client.list_zones("aws", "us-east-1").await.unwrap().data,
        ["z"]
    );
    assert_eq!(server.attempts(), 5);

    let server = Server::start(vec![Reply::status(503)]).await;
    let client = Client::builder(server.url(), key())
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();
    assert!(client.list_zones("aws", "us-east-1").await.is_err());
    assert_eq!(server.attempts(), 1);
}

#[tokio::test]
async fn every_attempt_of_a_call_sends_the_same_request_id() {
    let server = Server::start(vec![Reply::status(503)]).await;
    let client = client(&server.url(), key());
    let error = client.list_zones("aws", "us-east-1").await.unwrap_err();
    let error2 = client.list_zones("aws", "us-east-1").await.unwrap_err();
    let ids: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.header(REQUEST_ID.as_str()).unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 6);
    assert!(ids.iter().all(|id| is_valid_request_id(id)));
    assert!(ids[..3].iter().all(|id| id == &ids[0]), "{ids:?}");
    assert!(ids[3..].iter().all(|id| id == &ids[3]), "{ids:?}");
    assert_ne!(ids[0], ids[3], "each call has its own id");
    assert_eq!(error.request_id(), Some(ids[0].as_str()));
    assert_eq!(error2.request_id(), Some(ids[3].as_str()));
    assert!(error
        .to_string()
        .ends_with(&format!("(request id {}, after 3 attempts)", ids[0])));
}

#[tokio::test]
async fn retry_after_is_honoured() {
    for (status, code) in [(503, "unavailable"), (429, "rate_limited")] {
        let server = Server::start(vec![
            Reply::error(status, code, "wait").header("retry-after", "1"),
            Reply::zones(&["z"]),
        ])
        .await;
        let started = Instant::now();
        client(&server.url(), key())
            .list_zones("aws", "us-east-1")
            .await
            .unwrap();
        let elapsed = started.elapsed();
        assert_eq!(server.attempts(), 2);
        assert!(
            elapsed >= Duration::from_secs(1),
            "{status}: retried after {elapsed:?}"
        );
        assert!(
            elapsed < Duration::from_secs(1) + LOADED_MARGIN,
            "{status}: retried after {elapsed:?}"
        );
    }
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_returns_the_error_at_once() {
    let server = Server::start(vec![
        Reply::error(429, "rate_limited", "slow down").header("retry-after", "120"),
        Reply::zones(&["z"]),
    ])
    .await;
    // A cap far above the margin: a client that waited it before giving up would fail.
    let client = Client::builder(server.url(), key())
        .retry_policy(fast_retries().with_max_retry_after(Duration::from_secs(30)))
        .build()
        .unwrap();
    let started = Instant::now();
    let error = client.list_zones("aws", "us-east-1").await.unwrap_err();
    assert!(started.elapsed() < LOADED_MARGIN, "{:?}", started.elapsed());
    assert_eq!(server.attempts(), 1);
    let api = error.as_api().unwrap();
    assert_eq!(api.retry_after, Some(Duration::from_secs(120)));
    assert!(error.is_retryable());
}

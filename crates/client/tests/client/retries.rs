//! Retry matrix, Retry-After, request ids across attempts, connect failures and timeouts.

use std::time::{Duration, Instant};

use appzone_client::{Client, Error, RetryPolicy};
use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use crate::support::{client, closed_port, fast_retries, key, Reply, Server};

enum Call {
    Get,
    Delete,
}

async fn call(client: &Client, call: &Call) -> Result<(), Error> {
    match call {
        Call::Get => client.list_zones("aws", "us-east-1").await.map(drop),
        Call::Delete => client.delete_profile("prof_1").await,
    }
}

/// Makes `method`'s call, which must fail: the error, and how long it took.
async fn failing_call(client: &Client, method: &Call) -> (Error, Duration) {
    let started = Instant::now();
    let error = call(client, method).await.unwrap_err();
    (error, started.elapsed())
}

/// A client of `url` that keeps trying to connect for at least 1.7 s (ten attempts, backoff
/// 100..200 ms, then 200..400 ms), so a slow machine does not make the tests of a server that
/// starts listening late flaky.
fn patient_client(url: &str) -> Client {
    Client::builder(url, key())
        .retry_policy(
            RetryPolicy::default()
                .with_max_attempts(10)
                .with_backoff(Duration::from_millis(200), Duration::from_millis(400)),
        )
        .build()
        .unwrap()
}

/// Attempts made for a status answered on every attempt, with the default 3 attempts.
async fn attempts_for(status: u16, method: Call) -> usize {
    let server = Server::start(vec![Reply::error(status, "scripted", "scripted")]).await;
    let error = call(&client(&server.url(), key()), &method)
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
    assert_eq!(error.as_api().unwrap().attempts as usize, server.attempts());
    server.attempts()
}

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
async fn delete_is_never_retried_on_a_status() {
    for status in [429, 502, 503, 504, 500, 404, 403, 401] {
        assert_eq!(
            attempts_for(status, Call::Delete).await,
            1,
            "DELETE {status}"
        );
    }
}

#[tokio::test]
async fn delete_is_not_retried_on_503_even_with_retry_after() {
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy").header("retry-after", "0"),
        Reply::status(204),
    ])
    .await;
    let error = client(&server.url(), key())
        .delete_profile("prof_1")
        .await
        .unwrap_err();
    assert_eq!(error.status().map(|s| s.as_u16()), Some(503));
    assert!(error.is_retryable(), "the caller may retry");
    assert_eq!(server.attempts(), 1);
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
            elapsed < Duration::from_secs(3),
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
    let client = Client::builder(server.url(), key())
        .retry_policy(fast_retries().with_max_retry_after(Duration::from_secs(1)))
        .build()
        .unwrap();
    let started = Instant::now();
    let error = client.list_zones("aws", "us-east-1").await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.attempts(), 1);
    let api = error.as_api().unwrap();
    assert_eq!(api.retry_after, Some(Duration::from_secs(120)));
    assert!(error.is_retryable());
}

#[tokio::test]
async fn get_and_delete_are_retried_when_the_server_is_not_listening_yet() {
    for method in [Call::Get, Call::Delete] {
        let addr = closed_port().await;
        let reply = match method {
            Call::Get => Reply::zones(&["z"]),
            Call::Delete => Reply::status(204),
        };
        // Refused for 300 ms; the patient client keeps trying far longer.
        let server = Server::start_later(addr, Duration::from_millis(300), vec![reply]).await;
        let client = patient_client(&server.url());
        let started = Instant::now();
        call(&client, &method).await.unwrap();
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert_eq!(
            server.attempts(),
            1,
            "only the attempt after the bind arrives"
        );
    }
}

#[tokio::test]
async fn connect_failures_give_up_after_the_attempt_limit() {
    let addr = closed_port().await;
    let policy = RetryPolicy::default()
        .with_max_attempts(3)
        .with_backoff(Duration::from_millis(100), Duration::from_millis(100));
    let client = Client::builder(format!("http://{addr}"), key())
        .retry_policy(policy)
        .build()
        .unwrap();
    for method in [Call::Get, Call::Delete] {
        let (error, elapsed) = failing_call(&client, &method).await;
        // Two backoffs of 50..100 ms between three attempts.
        assert!(elapsed >= Duration::from_millis(100), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
        assert!(error.is_connect() && error.is_retryable(), "{error:?}");
        assert!(
            matches!(error, Error::Connect { attempts: 3, .. }),
            "{error:?}"
        );
        assert_eq!(error.status(), None);
        let text = error.to_string();
        assert!(
            text.contains("could not connect")
                && text.contains(&addr.to_string())
                && text.ends_with(", after 3 attempts)"),
            "{text}"
        );
        assert!(is_valid_request_id(error.request_id().unwrap()));
    }
    let once = Client::builder(format!("http://{addr}"), key())
        .retry_policy(
            RetryPolicy::none().with_backoff(Duration::from_secs(5), Duration::from_secs(5)),
        )
        .build()
        .unwrap();
    let started = Instant::now();
    let error = once.list_zones("aws", "r").await.unwrap_err();
    assert!(
        matches!(error, Error::Connect { attempts: 1, .. }),
        "{error:?}"
    );
    assert!(!error.to_string().contains("attempts"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_and_is_not_retried() {
    let server = Server::start(vec![Reply::zones(&["late"]).delay(Duration::from_secs(10))]).await;
    let client = Client::builder(server.url(), key())
        .timeout(Duration::from_millis(300))
        .retry_policy(fast_retries())
        .build()
        .unwrap();
    for method in [Call::Get, Call::Delete] {
        let (error, elapsed) = failing_call(&client, &method).await;
        assert!(error.is_timeout(), "{error:?}");
        assert!(
            matches!(error, Error::Timeout { timeout, .. } if timeout == Duration::from_millis(300))
        );
        assert!(elapsed >= Duration::from_millis(300), "{elapsed:?}");
        assert!(elapsed < Duration::from_millis(1500), "{elapsed:?}");
        assert!(error.is_retryable());
        assert!(
            error.to_string().contains("timed out after 300ms"),
            "{error}"
        );
    }
    assert_eq!(server.attempts(), 2, "one attempt per call");
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_a_transport_error_not_retried() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&accepted);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            // Read the request head, then hang up without answering.
            let mut buffer = [0u8; 4096];
            let _ = socket.read(&mut buffer).await;
            drop(socket);
        }
    });
    let client = client(&format!("http://{addr}"), key());
    for method in [Call::Get, Call::Delete] {
        let error = call(&client, &method).await.unwrap_err();
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert!(error.is_retryable() && !error.is_connect() && !error.is_timeout());
    }
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 2);
}

// ---- provider and region listings (issue 17): retried exactly like list_zones ------------------

/// The two new `GET`s.
#[derive(Debug, Clone, Copy)]
enum Listing {
    Providers,
    Regions,
}

impl Listing {
    async fn call(self, client: &Client) -> Result<(), Error> {
        match self {
            Listing::Providers => client.list_providers().await.map(drop),
            Listing::Regions => client.list_regions("aws").await.map(drop),
        }
    }

    /// A successful answer of this listing.
    fn body(self) -> Reply {
        match self {
            Listing::Providers => Reply::providers(&["aws"]),
            Listing::Regions => Reply::regions(&["us-east-1"]),
        }
    }
}

#[tokio::test]
async fn list_providers_and_list_regions_are_retried_on_429_502_503_504_only() {
    for listing in [Listing::Providers, Listing::Regions] {
        for (status, expected) in [
            (429, 3),
            (502, 3),
            (503, 3),
            (504, 3),
            (400, 1),
            (401, 1),
            (403, 1),
            (404, 1),
            (405, 1),
            (500, 1),
            (501, 1),
        ] {
            let server = Server::start(vec![Reply::error(status, "scripted", "scripted")]).await;
            let error = listing
                .call(&client(&server.url(), key()))
                .await
                .unwrap_err();
            assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
            assert_eq!(error.as_api().unwrap().attempts as usize, server.attempts());
            assert_eq!(server.attempts(), expected, "{listing:?} {status}");
        }
    }
}

#[tokio::test]
async fn list_providers_and_list_regions_succeed_after_retries_with_one_request_id() {
    for listing in [Listing::Providers, Listing::Regions] {
        let server = Server::start(vec![
            Reply::error(503, "unavailable", "busy"),
            Reply::error(429, "rate_limited", "slow down").header("retry-after", "0"),
            listing.body(),
        ])
        .await;
        listing.call(&client(&server.url(), key())).await.unwrap();
        let ids: Vec<String> = server
            .seen()
            .iter()
            .map(|s| s.header(REQUEST_ID.as_str()).unwrap().to_owned())
            .collect();
        assert_eq!(ids.len(), 3, "{listing:?}");
        assert!(ids.iter().all(|id| id == &ids[0]), "{listing:?}: {ids:?}");
    }
}

#[tokio::test]
async fn list_providers_and_list_regions_are_retried_on_connect_failures() {
    for listing in [Listing::Providers, Listing::Regions] {
        let addr = closed_port().await;
        // As in get_and_delete_are_retried_when_the_server_is_not_listening_yet.
        let server =
            Server::start_later(addr, Duration::from_millis(300), vec![listing.body()]).await;
        let client = patient_client(&server.url());
        listing.call(&client).await.unwrap();
        assert_eq!(server.attempts(), 1, "{listing:?}");

        // Nothing ever listens: the attempt limit, then a connect error.
        let refused = Client::builder(format!("http://{}", closed_port().await), key())
            .retry_policy(
                RetryPolicy::default()
                    .with_max_attempts(3)
                    .with_backoff(Duration::from_millis(10), Duration::from_millis(10)),
            )
            .build()
            .unwrap();
        let error = listing.call(&refused).await.unwrap_err();
        assert!(error.is_connect() && error.is_retryable(), "{error:?}");
        assert!(
            matches!(error, Error::Connect { attempts: 3, .. }),
            "{listing:?}: {error:?}"
        );
    }
}

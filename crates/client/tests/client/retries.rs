//! Retry matrix, Retry-After, request ids across attempts, connect failures and timeouts; the
//! `Idempotency-Key` of a DELETE (one per call, the same on every retry) with the retries it
//! makes safe and the replay marker; the operation timeout bounding all attempts.

use std::time::{Duration, Instant};

use appzone_client::{Client, Error, ErrorCode, RetryPolicy};
use appzone_contract::headers::{
    idempotency_key, is_valid_request_id, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, REQUEST_ID,
};
use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::support::{client, closed_port, fast_retries, key, reserve_port, Reply, Server};

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
        let port = reserve_port();
        let reply = match method {
            Call::Get => Reply::zones(&["z"]),
            Call::Delete => Reply::status(204),
        };
        // Refused for 300 ms; the patient client keeps trying far longer.
        let server = Server::start_later(port, Duration::from_millis(300), vec![reply]).await;
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
                && text.ends_with("could not connect, after 3 attempts")
                && !text.contains("request id"),
            "{text}"
        );
        // No connection, so no server logged the id the request would have carried.
        assert_eq!(error.request_id(), None);
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
async fn a_server_that_never_answers_times_out_get_is_not_retried_delete_is() {
    let server = Server::start(vec![Reply::zones(&["late"]).delay(Duration::from_secs(10))]).await;
    let client = Client::builder(server.url(), key())
        .timeout(Duration::from_millis(300))
        .retry_policy(fast_retries())
        .build()
        .unwrap();
    // GET: one attempt. DELETE: three, since its Idempotency-Key makes a resend safe.
    for (method, attempts) in [(Call::Get, 1), (Call::Delete, 3)] {
        let before = server.attempts();
        let (error, elapsed) = failing_call(&client, &method).await;
        assert!(error.is_timeout(), "{error:?}");
        assert!(
            matches!(error, Error::Timeout { timeout, .. } if timeout == Duration::from_millis(300))
        );
        assert!(
            elapsed >= Duration::from_millis(300) * attempts,
            "{elapsed:?}"
        );
        assert!(
            elapsed < Duration::from_millis(300) * attempts + Duration::from_millis(1200),
            "{elapsed:?}"
        );
        assert!(error.is_retryable());
        assert!(
            error.to_string().contains("timed out after 300ms"),
            "{error}"
        );
        assert_eq!(server.attempts() - before, attempts as usize);
        assert!(
            matches!(error, Error::Timeout { attempts: a, .. } if a == attempts),
            "{error:?}"
        );
        assert_eq!(
            error.to_string().ends_with(", after 3 attempts)"),
            attempts == 3,
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_connection_closed_without_an_answer_is_a_transport_error_retried_for_delete_only() {
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
    // GET: one attempt. DELETE: three, since its Idempotency-Key makes a resend safe.
    for (method, attempts) in [(Call::Get, 1), (Call::Delete, 3)] {
        let before = accepted.load(std::sync::atomic::Ordering::SeqCst);
        let error = call(&client, &method).await.unwrap_err();
        assert!(matches!(error, Error::Transport { .. }), "{error:?}");
        assert!(error.is_retryable() && !error.is_connect() && !error.is_timeout());
        let after = accepted.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(after - before, attempts);
        assert!(
            matches!(error, Error::Transport { attempts: a, .. } if a as usize == attempts),
            "{error:?}"
        );
    }
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
        let port = reserve_port();
        // As in get_and_delete_are_retried_when_the_server_is_not_listening_yet.
        let server =
            Server::start_later(port, Duration::from_millis(300), vec![listing.body()]).await;
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

// ---- DELETE with an Idempotency-Key (contract 1.1) ---------------------------------------------

/// The `Idempotency-Key` of each request the server received, in order.
fn keys(server: &Server) -> Vec<String> {
    server
        .seen()
        .iter()
        .map(|s| s.header(IDEMPOTENCY_KEY.as_str()).unwrap_or("").to_owned())
        .collect()
}

/// A `204` replayed for a repeated key.
fn replayed_204() -> Reply {
    Reply::status(204).header(IDEMPOTENT_REPLAYED.as_str(), "true")
}

#[tokio::test]
async fn delete_sends_one_idempotency_key_per_call_the_same_on_every_retry() {
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy"),
        Reply::error(502, "scripted", "bad gateway"),
        Reply::status(204),
    ])
    .await;
    let client = client(&server.url(), key());
    client.delete_profile("prof_1").await.unwrap();
    client.delete_profile("prof_1").await.unwrap();
    client.delete_profile("prof_2").await.unwrap();
    let keys = keys(&server);
    assert_eq!(keys.len(), 5, "{keys:?}");
    for key in &keys {
        assert_eq!(idempotency_key(key), Some(key.as_str()), "{keys:?}");
        assert_eq!(key.len(), 36, "a UUID: {key}");
    }
    assert!(keys[..3].iter().all(|k| k == &keys[0]), "{keys:?}");
    assert_ne!(keys[3], keys[0], "each call has its own key");
    assert_ne!(keys[4], keys[3], "each call has its own key");
}

#[tokio::test]
async fn delete_is_retried_like_get_on_429_502_503_504_only() {
    for status in [429, 502, 503, 504] {
        assert_eq!(
            attempts_for(status, Call::Delete).await,
            3,
            "DELETE {status}"
        );
    }
    for status in [400, 401, 403, 404, 409, 422, 500, 501] {
        assert_eq!(
            attempts_for(status, Call::Delete).await,
            1,
            "DELETE {status}"
        );
    }
}

#[tokio::test]
async fn delete_is_retried_after_503_and_a_replayed_204_is_a_success_marked_replayed() {
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy").header("retry-after", "0"),
        replayed_204(),
    ])
    .await;
    let client = client(&server.url(), key());
    let outcome = client
        .delete_profile_with_key("prof_1", "job-42:prof_1")
        .await
        .unwrap();
    assert!(outcome.replayed, "{outcome:?}");
    assert_eq!(outcome.attempts, 2);
    assert_eq!(outcome.idempotency_key, "job-42:prof_1");
    assert_eq!(keys(&server), ["job-42:prof_1", "job-42:prof_1"]);
    let sent = server.seen()[1]
        .header(REQUEST_ID.as_str())
        .unwrap()
        .to_owned();
    assert_eq!(outcome.request_id, sent);

    // delete_profile: the same retries, and the replay is a plain success.
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy").header("retry-after", "0"),
        replayed_204(),
    ])
    .await;
    client_of(&server).delete_profile("prof_1").await.unwrap();
    assert_eq!(server.attempts(), 2);

    // A first answer is not a replay; `"true"` is the only marker.
    for reply in [
        Reply::status(204),
        Reply::status(204).header(IDEMPOTENT_REPLAYED.as_str(), "false"),
    ] {
        let server = Server::start(vec![reply]).await;
        let outcome = client_of(&server)
            .delete_profile_with_key("prof_1", &appzone_client::new_idempotency_key())
            .await
            .unwrap();
        assert!(!outcome.replayed, "{outcome:?}");
        assert_eq!(outcome.attempts, 1);
    }
}

fn client_of(server: &Server) -> Client {
    client(&server.url(), key())
}

#[tokio::test]
async fn delete_is_retried_after_a_connect_failure_with_the_same_key() {
    let port = reserve_port();
    // Refused for 300 ms; the patient client keeps trying far longer.
    let server = Server::start_later(port, Duration::from_millis(300), vec![replayed_204()]).await;
    let outcome = patient_client(&server.url())
        .delete_profile_with_key("prof_1", "\"quoted-key\"")
        .await
        .unwrap();
    assert!(outcome.attempts > 1, "{outcome:?}");
    assert!(outcome.replayed);
    assert_eq!(
        outcome.idempotency_key, "quoted-key",
        "the quotes are not part of it"
    );
    assert_eq!(keys(&server), ["quoted-key"]);
}

#[tokio::test]
async fn a_delete_whose_answer_is_lost_is_retried_and_learns_it_succeeded() {
    // Timed out: the first attempt's answer comes too late; the retry gets it replayed.
    let server = Server::start(vec![
        Reply::status(204).delay(Duration::from_secs(10)),
        replayed_204(),
    ])
    .await;
    let client = Client::builder(server.url(), key())
        .timeout(Duration::from_millis(300))
        .retry_policy(fast_retries())
        .build()
        .unwrap();
    let outcome = client
        .delete_profile_with_key("prof_1", "lost-answer")
        .await
        .unwrap();
    assert!(outcome.replayed && outcome.attempts == 2, "{outcome:?}");
    assert_eq!(keys(&server), ["lost-answer", "lost-answer"]);

    // Hung up on: the connection closes after the request arrived, then the retry is answered.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let heads = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = std::sync::Arc::clone(&heads);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buffer = vec![0u8; 8192];
            let mut read = 0;
            while !buffer[..read].windows(4).any(|w| w == b"\r\n\r\n") {
                match socket.read(&mut buffer[read..]).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => read += n,
                }
            }
            let first = {
                let mut heads = seen.lock().unwrap();
                heads.push(String::from_utf8_lossy(&buffer[..read]).into_owned());
                heads.len() == 1
            };
            if !first {
                let answer = "HTTP/1.1 204 No Content\r\nidempotent-replayed: true\r\n\
                              connection: close\r\n\r\n";
                let _ = socket.write_all(answer.as_bytes()).await;
            }
            drop(socket);
        }
    });
    let outcome = client_of_url(&format!("http://{addr}"))
        .delete_profile_with_key("prof_1", "hung-up")
        .await
        .unwrap();
    assert!(outcome.replayed && outcome.attempts == 2, "{outcome:?}");
    let heads = heads.lock().unwrap().clone();
    assert_eq!(heads.len(), 2);
    for head in &heads {
        assert!(
            head.to_ascii_lowercase()
                .contains("\r\nidempotency-key: hung-up\r\n"),
            "{head}"
        );
    }
}

fn client_of_url(url: &str) -> Client {
    client(url, key())
}

#[tokio::test]
async fn delete_is_retried_on_409_idempotency_key_in_use_only() {
    let in_use = || {
        Reply::error(
            409,
            ErrorCode::IDEMPOTENCY_KEY_IN_USE,
            "a request with this key is still being processed",
        )
        .header("retry-after", "0")
    };
    let server = Server::start(vec![in_use(), in_use(), replayed_204()]).await;
    let outcome = client_of(&server)
        .delete_profile_with_key("prof_1", "k")
        .await
        .unwrap();
    assert!(outcome.replayed && outcome.attempts == 3, "{outcome:?}");
    assert_eq!(keys(&server), ["k", "k", "k"]);

    // Still running after the last attempt: a retryable API error.
    let server = Server::start(vec![in_use()]).await;
    let error = client_of(&server)
        .delete_profile("prof_1")
        .await
        .unwrap_err();
    assert_eq!(server.attempts(), 3);
    assert_eq!(error.status(), Some(StatusCode::CONFLICT));
    assert_eq!(
        error.error_code().map(ErrorCode::as_str),
        Some(ErrorCode::IDEMPOTENCY_KEY_IN_USE)
    );
    assert!(error.is_retryable(), "{error:?}");

    // Another 409 is not retried.
    let server = Server::start(vec![Reply::error(409, "conflict", "no")]).await;
    let error = client_of(&server)
        .delete_profile("prof_1")
        .await
        .unwrap_err();
    assert_eq!(server.attempts(), 1);
    assert!(!error.is_retryable(), "{error:?}");
}

#[tokio::test]
async fn a_reused_key_is_an_api_error_422_idempotency_key_reused_not_retried() {
    let server = Server::start(vec![Reply::error(
        422,
        ErrorCode::IDEMPOTENCY_KEY_REUSED,
        "this Idempotency-Key was used for another request",
    )])
    .await;
    let error = client_of(&server)
        .delete_profile_with_key("prof_2", "used-for-prof_1")
        .await
        .unwrap_err();
    assert_eq!(
        error.error_code().map(ErrorCode::as_str),
        Some(ErrorCode::IDEMPOTENCY_KEY_REUSED)
    );
    assert!(matches!(error.error_code(), Some(ErrorCode::Other(_))));
    assert_eq!(error.status(), Some(StatusCode::UNPROCESSABLE_ENTITY));
    assert_eq!(error.as_api().unwrap().attempts, 1);
    assert!(!error.is_retryable() && !error.is_not_found(), "{error:?}");
    assert_eq!(server.attempts(), 1);
}

#[tokio::test]
async fn an_invalid_idempotency_key_is_refused_before_sending() {
    let server = Server::start(vec![Reply::status(204)]).await;
    let client = client_of(&server);
    for bad in [
        "",
        "two words",
        "\"\"",
        "tab\tkey",
        "ключ",
        &"k".repeat(256),
    ] {
        let error = client
            .delete_profile_with_key("prof_1", bad)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::InvalidArgument {
                    argument: "idempotency key",
                    ..
                }
            ),
            "{bad:?}: {error:?}"
        );
        assert_eq!(error.request_id(), None);
        assert!(!error.is_retryable());
        assert!(
            error.to_string().starts_with("invalid idempotency key: "),
            "{error}"
        );
    }
    // A malformed profile id is still answered locally as not found.
    let error = client
        .delete_profile_with_key("bad id", "k")
        .await
        .unwrap_err();
    assert!(matches!(error, Error::ProfileNotFound { .. }), "{error:?}");
    assert_eq!(server.attempts(), 0);
    client
        .delete_profile_with_key("prof_1", &"k".repeat(255))
        .await
        .unwrap();
    assert_eq!(server.attempts(), 1);
}

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
        // 2 s and a margin for a busy machine; without the bound the call takes 9 s.
        assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
        assert_eq!(error.status(), Some(StatusCode::SERVICE_UNAVAILABLE));
        let attempts = server.attempts() - before;
        assert_eq!(attempts, 2, "at 0 s and 1 s; one at 2 s would be too late");
        assert_eq!(error.as_api().unwrap().attempts as usize, attempts);
    }
}

#[tokio::test]
async fn the_operation_timeout_cuts_a_running_attempt_short() {
    let server = Server::start(vec![Reply::status(204).delay(Duration::from_secs(10))]).await;
    let client = Client::builder(server.url(), key())
        .timeout(Duration::from_secs(5))
        .retry_policy(fast_retries())
        .operation_timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    for method in [Call::Get, Call::Delete] {
        let (error, elapsed) = failing_call(&client, &method).await;
        assert!(elapsed >= Duration::from_millis(800), "{elapsed:?}");
        // Without the cut the attempt would run its whole 5 s.
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
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

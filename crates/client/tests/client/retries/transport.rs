//! Failures below HTTP: a server not listening yet or never, one that never answers, one
//! that hangs up without answering.

use std::time::{Duration, Instant};

use appzone_client::{Client, Error, RetryPolicy};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use super::{call, failing_call, patient_client, Call, LOADED_MARGIN};
use crate::support::{client, closed_port, fast_retries, key, reserve_port, Reply, Server};

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
        assert!(
            elapsed < Duration::from_millis(200) + LOADED_MARGIN,
            "{elapsed:?}"
        );
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
    // A backoff far above the margin: a second attempt would fail the bound.
    let once = Client::builder(format!("http://{addr}"), key())
        .retry_policy(
            RetryPolicy::none().with_backoff(Duration::from_secs(30), Duration::from_secs(30)),
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
    assert!(started.elapsed() < LOADED_MARGIN, "{:?}", started.elapsed());
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_get_is_not_retried_delete_is() {
    // Answered far later than the bound below: an attempt that was not cut would fail it.
    let server = Server::start(vec![Reply::zones(&["late"]).delay(Duration::from_secs(60))]).await;
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
            elapsed < Duration::from_millis(300) * attempts + LOADED_MARGIN,
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

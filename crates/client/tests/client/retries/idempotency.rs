//! DELETE with an `Idempotency-Key` (contract 1.1): one key per call, the same on every retry,
//! the retries it makes safe and the replay marker.

use std::time::Duration;

use appzone_client::{Client, Error, ErrorCode};
use appzone_contract::headers::{
    idempotency_key, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, REQUEST_ID,
};
use http::StatusCode;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::{attempts_for, patient_client, Call};
use crate::support::{client, fast_retries, key, reserve_port, Reply, Server};

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

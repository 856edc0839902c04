//! The retry matrix and its timing, by theme: which statuses are retried and with which
//! request id, and `Retry-After` (`statuses`); connect failures, timeouts and lost
//! connections (`transport`); the provider and region listings (`listings`); the
//! `Idempotency-Key` of a DELETE (one per call, the same on every retry) with the retries it
//! makes safe and the replay marker (`idempotency`); the operation timeout bounding all
//! attempts (`operation_timeout`). The helpers they share are here.

mod idempotency;
mod listings;
mod operation_timeout;
mod statuses;
mod transport;

use std::time::{Duration, Instant};

use appzone_client::{Client, Error, RetryPolicy};

use crate::support::{client, key, Reply, Server};

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

/// What a loaded shared machine (2 cores, several builds at once) may add to a wait: an upper
/// bound on how long a call takes is the wait it checks plus this, so it fails only when the
/// wait is wrong by more than a busy machine makes it (such bounds were 1 to 2 s, and flipped).
const LOADED_MARGIN: Duration = Duration::from_secs(5);

/// A client of `url` that keeps trying to connect for at least 5.7 s (thirty attempts,
/// backoff 100..200 ms, then 200..400 ms), so a slow machine does not make the tests of a
/// server that starts listening 300 ms late flaky.
fn patient_client(url: &str) -> Client {
    Client::builder(url, key())
        .retry_policy(
            RetryPolicy::default()
                .with_max_attempts(30)
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

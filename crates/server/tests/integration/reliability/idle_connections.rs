//! Idle and stalled connections: hundreds of them do not stop the server serving, and the
//! server closes them at the header-read timeout, silent ones (which never sent a byte) too.

use std::time::{Duration, Instant};

use appzone_server::serve::ServeOptions;
use appzone_test_support::raw::RawConnection;
use appzone_test_support::TestApp;
use tokio::task::JoinHandle;

/// The promise (docs/OPERATING.md, "header read timeout"): a connection on which nothing moved
/// for the timeout is closed within 1.5 times it; one that sends no first byte, at the timeout.
/// Closes are noticed by a task reading each connection from the moment it opened, so the
/// figures below are when the server closed them, give or take this much scheduling on a busy
/// machine.
const NOTICED_WITHIN: Duration = Duration::from_millis(400);

/// The server starts a connection's clock when it accepts it, which can be a little before
/// this side's `connect` returns and the test starts its own.
const ACCEPTED_BEFORE: Duration = Duration::from_millis(50);

/// Watches `conn` from now on: the task ends with how long after `opened` the server closed
/// it, or `None` if it is still open 15 s later.
fn watch_close(mut conn: RawConnection, opened: Instant) -> JoinHandle<Option<Duration>> {
    tokio::spawn(async move {
        conn.closed_within(Duration::from_secs(15))
            .await
            .map(|_| opened.elapsed())
    })
}

/// The close times of `watched`, checked to lie in `earliest..latest`; the slowest.
async fn assert_closed_between(
    what: &str,
    watched: Vec<JoinHandle<Option<Duration>>>,
    earliest: Duration,
    latest: Duration,
) -> Duration {
    let closed: Vec<Option<Duration>> = futures_util::future::join_all(watched)
        .await
        .into_iter()
        .map(|joined| joined.unwrap())
        .collect();
    let open = closed.iter().filter(|c| c.is_none()).count();
    assert_eq!(open, 0, "{open} {what} still open after 15 s");
    let early = closed.iter().flatten().filter(|c| **c < earliest).count();
    let late = closed.iter().flatten().filter(|c| **c > latest).count();
    let (first, last) = (closed.iter().flatten().min(), closed.iter().flatten().max());
    assert!(
        early == 0 && late == 0,
        "{what}: {early} closed before {earliest:?} and {late} after {latest:?} \
         (first {first:?}, last {last:?})"
    );
    last.copied().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_idle_connections_do_not_stop_the_server_serving() {
    const IDLE: usize = 200;
    let timeout = Duration::from_secs(1);
    let app = TestApp::sqlite_serving(ServeOptions {
        header_read_timeout: timeout,
        ..ServeOptions::default()
    })
    .await;
    let (mut silent, mut stalled) = (Vec::new(), Vec::new());
    for i in 0..IDLE {
        let mut conn = app.connection().await;
        let opened = Instant::now();
        // A quarter start a request head and stall; the rest send nothing at all.
        if i % 4 == 0 {
            let head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Stall: ";
            conn.write(head).await.unwrap();
            stalled.push(watch_close(conn, opened));
        } else {
            silent.push(watch_close(conn, opened));
        }
    }
    let (silent_count, stalled_count) = (silent.len(), stalled.len());
    let started = Instant::now();
    for _ in 0..20 {
        let resp = app
            .get(
                &TestApp::zones_path("aws", "us-east-1"),
                Some(&app.member_key),
            )
            .await;
        assert_eq!(resp.status, 200);
    }
    let path = TestApp::profile_path(app.profile.as_str());
    assert_eq!(app.delete(&path, Some(&app.admin_key)).await.status, 204);
    let serving = started.elapsed();
    assert!(
        serving < Duration::from_secs(10),
        "21 requests beside {IDLE} idle connections took {serving:?}"
    );
    // Stalled request heads are cut by the header timeout: 1 to 1.5 timeouts after their last
    // progress, which was their opening.
    let slowest = assert_closed_between(
        "stalled heads",
        stalled,
        timeout - ACCEPTED_BEFORE,
        timeout.mul_f32(1.5) + NOTICED_WITHIN,
    )
    .await;
    assert_eq!(app.get("/healthz", None).await.status, 200);
    // So are connections that never sent a byte, at the timeout.
    let slowest_silent = assert_closed_between(
        "silent connections",
        silent,
        timeout - ACCEPTED_BEFORE,
        timeout + NOTICED_WITHIN,
    )
    .await;
    eprintln!(
        "idle connections: {IDLE} open ({silent_count} silent, {stalled_count} with a stalled \
         head); 21 requests served in {serving:?}; all closed by the server: stalled heads \
         within {slowest:?} of opening, silent ones within {slowest_silent:?} (header timeout \
         {timeout:?})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_send_nothing_are_closed_by_the_server() {
    let timeout = Duration::from_secs(1);
    let app = TestApp::sqlite_serving(ServeOptions {
        header_read_timeout: timeout,
        ..ServeOptions::default()
    })
    .await;
    let silent = app.connection().await;
    let silent = watch_close(silent, Instant::now());
    let mut kept_alive = app.connection().await;
    let first = kept_alive.request("GET", "/healthz", None).await;
    assert_eq!(first.status, 200, "{first:?}");
    let kept_alive = watch_close(kept_alive, Instant::now());
    // Silent from the start: closed at the timeout. Idle after an answer: within 1.5 of it.
    assert_closed_between(
        "a connection that sent nothing",
        vec![silent],
        timeout - ACCEPTED_BEFORE,
        timeout + NOTICED_WITHIN,
    )
    .await;
    assert_closed_between(
        "an idle keep-alive connection",
        vec![kept_alive],
        timeout - ACCEPTED_BEFORE,
        timeout.mul_f32(1.5) + NOTICED_WITHIN,
    )
    .await;
}

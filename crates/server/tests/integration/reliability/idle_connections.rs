//! Idle and stalled connections: hundreds of them do not stop the server serving, and the
//! server closes them at the header-read timeout, silent ones (which never sent a byte) too.

use std::time::{Duration, Instant};

use appzone_server::serve::ServeOptions;
use appzone_test_support::raw::RawConnection;
use appzone_test_support::TestApp;

/// When the server closed each of `conns`, counted from `opened`; `None` for those still open
/// 15 s from now.
async fn closed_since(conns: &mut [RawConnection], opened: Instant) -> Vec<Option<Duration>> {
    let closed = conns.iter_mut().map(|conn| async {
        let closed = conn.closed_within(Duration::from_secs(15)).await;
        closed.map(|_| opened.elapsed())
    });
    futures_util::future::join_all(closed).await
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
    let mut silent = Vec::new();
    let mut stalled = Vec::new();
    let opened = Instant::now();
    for i in 0..IDLE {
        let mut conn = app.connection().await;
        // A quarter start a request head and stall; the rest send nothing at all.
        if i % 4 == 0 {
            let head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Stall: ";
            conn.write(head).await.unwrap();
            stalled.push(conn);
        } else {
            silent.push(conn);
        }
    }
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
    // Stalled request heads are cut by the header timeout.
    let cut = closed_since(&mut stalled, opened).await;
    let open = cut.iter().filter(|c| c.is_none()).count();
    assert_eq!(open, 0, "{open} stalled heads still open after 15 s");
    let slowest = cut.iter().flatten().max().copied().unwrap_or_default();
    assert_eq!(app.get("/healthz", None).await.status, 200);
    // So are connections that never sent a byte.
    let closed = closed_since(&mut silent, opened).await;
    let open = closed.iter().filter(|c| c.is_none()).count();
    assert_eq!(open, 0, "{open} silent connections still open after 15 s");
    let slowest_silent = closed.iter().flatten().max().copied().unwrap_or_default();
    eprintln!(
        "idle connections: {IDLE} open ({} silent, {} with a stalled head); 21 requests served \
         in {serving:?}; all closed by the server: stalled heads within {slowest:?} of opening, \
         silent ones within {slowest_silent:?} (header timeout {timeout:?})",
        silent.len(),
        stalled.len()
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
    let mut silent = app.connection().await;
    let mut kept_alive = app.connection().await;
    let first = kept_alive.request("GET", "/healthz", None).await;
    assert_eq!(first.status, 200, "{first:?}");
    let within = Duration::from_secs(10);
    let (silent, kept_alive) = tokio::join!(
        silent.closed_within(within),
        kept_alive.closed_within(within)
    );
    assert!(
        silent.is_some() && kept_alive.is_some(),
        "still open {within:?} later (header timeout {timeout:?}): a connection that sent \
         nothing: {}, an idle keep-alive connection: {}",
        silent.is_none(),
        kept_alive.is_none()
    );
}

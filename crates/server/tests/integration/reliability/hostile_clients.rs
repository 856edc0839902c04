//! Clients that try to exhaust the server: what one HTTP/2 connection can make it hold, how
//! many connections one address can keep open, and the client address on the log lines of
//! refused requests. With the real binary, so that memory is the process's own.

use std::time::{Duration, Instant};

use axum::body::Bytes;
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};
use tokio::task::JoinHandle;

use super::shutdown::{exchange, get, open, Conn};
use crate::server_process::{acme_database, rss_kib, ServerProcess};

/// The largest `/docs` asset.
const BUNDLE: &str = "/docs/swagger-ui-bundle.js";

/// An HTTP/2 (prior knowledge) connection that asks for `path` on up to `streams` streams,
/// as many as the server lets it open, and reads none of the answers: how many it opened, and
/// what keeps the connection open.
async fn unread_streams(
    addr: &str,
    path: &str,
    streams: usize,
) -> (
    usize,
    h2::client::SendRequest<Bytes>,
    Vec<h2::client::ResponseFuture>,
    JoinHandle<()>,
) {
    let tcp = TcpStream::connect(addr).await.unwrap();
    let (mut client, connection) = h2::client::handshake(tcp).await.unwrap();
    // Driven, so frames go out and come in; the answers' data are never released, so the
    // server can send no more than the initial window (64 KiB) per connection.
    let driver = tokio::spawn(async move {
        let _ = connection.await;
    });
    let mut pending = Vec::new();
    for _ in 0..streams {
        // The server's stream limit shows as a sender that does not become ready.
        let ready = tokio::time::timeout(Duration::from_millis(500), client.clone().ready()).await;
        let Ok(Ok(mut sender)) = ready else { break };
        // No Accept-Encoding: the uncompressed asset, the largest answer there is.
        let request = http::Request::get(format!("http://{addr}{path}"))
            .body(())
            .unwrap();
        let Ok((response, _)) = sender.send_request(request, true) else {
            break;
        };
        pending.push(response);
        client = sender;
    }
    (pending.len(), client, pending, driver)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_clients_that_never_read_cannot_grow_the_server_past_a_few_megabytes() {
    /// The bound for both connections together.
    const BOUND_KIB: u64 = 16 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let server = ServerProcess::start(&url, &[], "info").await;
    let addr = server.addr().to_owned();
    // What any request makes the server allocate once (the assets, compressed on first use;
    // the HTTP/2 code's first buffers) goes into the baseline.
    for _ in 0..3 {
        let (opened, ..) = unread_streams(&addr, "/healthz", 1).await;
        assert_eq!(opened, 1);
        let mut conn = open(&addr).await.unwrap();
        assert_eq!(exchange(&mut conn, &get(BUNDLE)).await.unwrap().status, 200);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib(server.pid()).unwrap();

    let mut hostile = Vec::new();
    for _ in 0..2 {
        hostile.push(unread_streams(&addr, BUNDLE, 200).await);
    }
    // Time for the server to take every stream and queue its answer.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let during = rss_kib(server.pid()).unwrap();
    let asked: Vec<usize> = hostile.iter().map(|h| h.0).collect();
    let grew = during.saturating_sub(before);
    eprintln!(
        "2 HTTP/2 connections asking {asked:?} times for {BUNDLE}, reading nothing: RSS {before} KiB -> \
         {during} KiB (+{grew} KiB, {} KiB per connection)",
        grew / 2
    );
    // The server's SETTINGS let each connection have 32 streams open, whatever it asks.
    for (_, client, _, _) in &hostile {
        assert_eq!(client.current_max_send_streams(), 32);
    }
    // The server still answers others.
    let mut conn = open(&addr).await.unwrap();
    assert_eq!(
        exchange(&mut conn, &get("/healthz")).await.unwrap().status,
        200
    );
    assert!(
        grew < BOUND_KIB,
        "two connections grew the server by {grew} KiB (bound {BOUND_KIB} KiB)"
    );
    for (_, _, _, driver) in hostile {
        driver.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_its_total_connection_limit_the_server_closes_new_connections_at_once() {
    const LIMIT: usize = 6;
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let server =
        ServerProcess::start(&url, &["--max-connections", &LIMIT.to_string()], "info").await;
    let addr = server.addr().to_owned();
    // Three addresses, two connections each: no address is at a limit of its own.
    let mut held: Vec<Conn> = Vec::new();
    for source in ["127.0.0.2", "127.0.0.3", "127.0.0.4"] {
        for _ in 0..LIMIT / 3 {
            let mut conn = Conn::new(connect_from(source, &addr).await);
            assert_eq!(
                exchange(&mut conn, &get("/healthz")).await.unwrap().status,
                200
            );
            held.push(conn);
        }
    }
    let mut over = Conn::new(connect_from("127.0.0.5", &addr).await);
    let refused = tokio::time::timeout(
        Duration::from_secs(2),
        exchange(&mut over, &get("/healthz")),
    )
    .await
    .expect("the connection over the limit is closed at once");
    assert!(refused.is_err(), "answered over the limit: {refused:?}");
    // One closed, a place is free again; the refusal was counted.
    drop(held.pop());
    let mut metrics = None;
    for _ in 0..40 {
        if let Ok(response) = reqwest::get(format!("http://{addr}/metrics")).await {
            metrics = Some(response.text().await.unwrap());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let metrics = metrics.expect("a connection is served once one of the limit's closed");
    assert!(
        metrics.contains("appzone_connections_refused_total{limit=\"total\"} 1\n"),
        "{metrics}"
    );
}

/// A connection to `addr` from the loopback address `source` (127.0.0.2, say: every
/// 127.0.0.0/8 address is this machine), so that one test can be several clients.
async fn connect_from(source: &str, addr: &str) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(addr.parse().unwrap()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_at_its_connection_limit_gets_no_more_and_others_are_still_served() {
    const LIMIT: usize = 8;
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let server = ServerProcess::start(
        &url,
        &["--max-connections-per-address", &LIMIT.to_string()],
        "info",
    )
    .await;
    let addr = server.addr().to_owned();
    // The hog: as many keep-alive connections as its address may have, each served once.
    let mut hog: Vec<Conn> = Vec::new();
    for _ in 0..LIMIT {
        let mut conn = Conn::new(connect_from("127.0.0.2", &addr).await);
        assert_eq!(
            exchange(&mut conn, &get("/healthz")).await.unwrap().status,
            200
        );
        hog.push(conn);
    }
    // One more from the same address is closed without an answer.
    let started = Instant::now();
    let mut over = Conn::new(connect_from("127.0.0.2", &addr).await);
    let refused = tokio::time::timeout(
        Duration::from_secs(2),
        exchange(&mut over, &get("/healthz")),
    )
    .await
    .expect("the connection over the limit is closed at once");
    assert!(refused.is_err(), "answered over the limit: {refused:?}");
    let closed_after = started.elapsed();
    // Another address is served: the health check, and the metrics, which count the refusal.
    let mut conn = open(&addr).await.unwrap();
    assert_eq!(
        exchange(&mut conn, &get("/healthz")).await.unwrap().status,
        200
    );
    let metrics = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("appzone_connections_refused_total{limit=\"address\"} 1\n"),
        "{metrics}"
    );
    // A connection of the hog's closed frees its place.
    drop(hog.pop());
    let mut served = false;
    for _ in 0..40 {
        let mut conn = Conn::new(connect_from("127.0.0.2", &addr).await);
        if exchange(&mut conn, &get("/healthz")).await.is_ok() {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        served,
        "no connection from the hog's address after it closed one"
    );
    eprintln!("connection over the per-address limit ({LIMIT}) closed after {closed_after:?}");
    drop(over.read(&mut [0u8; 1]).await);
}

#[tokio::test]
async fn refused_requests_are_logged_with_the_client_address() {
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let server = ServerProcess::start(&url, &["--auth-failures-per-minute", "1"], "info").await;
    let addr = server.addr().to_owned();
    let zones = "/api/v1/providers/aws/regions/us-east-1/zones";
    let wrong = format!(
        "GET {zones} HTTP/1.1\r\nHost: appzone\r\nX-API-KEY: apz_AAAAAAAAAAAA_wrongsecretwrongsecretwrongsecret\r\n\r\n"
    );
    let mut conn = open(&addr).await.unwrap();
    assert_eq!(exchange(&mut conn, &wrong).await.unwrap().status, 401);
    assert_eq!(exchange(&mut conn, &wrong).await.unwrap().status, 429);
    // Log lines reach stderr within 50 ms.
    let mut lines = Vec::new();
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        lines = String::from_utf8_lossy(&server.logs())
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|line| {
                line["fields"]["route"]
                    .as_str()
                    .is_some_and(|r| r.contains("zones"))
            })
            .collect();
        if lines.len() >= 2 {
            break;
        }
    }
    for status in [401, 429] {
        let line = lines
            .iter()
            .find(|line| line["fields"]["status"] == status)
            .unwrap_or_else(|| panic!("no log line of the {status}: {lines:?}"));
        assert_eq!(line["fields"]["client"], "127.0.0.1", "{line}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http2_connection_is_closed_however_often_its_client_pings() {
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let timeout = Duration::from_secs(1);
    let server = ServerProcess::start(&url, &["--header-read-timeout-secs", "1"], "info").await;
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    let (client, mut connection) = h2::client::handshake(tcp).await.unwrap();
    let mut ping_pong = connection.ping_pong().expect("the first ping_pong");
    let opened = Instant::now();
    let driver = tokio::spawn(async move {
        let _ = connection.await;
        opened.elapsed()
    });
    // A PING every 100 ms, and no request: the server acknowledges each one.
    let mut pongs = 0;
    while !driver.is_finished() && opened.elapsed() < Duration::from_secs(5) {
        let pong = tokio::time::timeout(
            Duration::from_millis(500),
            ping_pong.ping(h2::Ping::opaque()),
        );
        if matches!(pong.await, Ok(Ok(_))) {
            pongs += 1;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let closed_after = tokio::time::timeout(Duration::from_secs(1), driver)
        .await
        .expect("the server closed the pinging connection within 5 s")
        .unwrap();
    eprintln!("idle HTTP/2 connection, {pongs} pongs, closed after {closed_after:?}");
    assert!(
        pongs >= 5,
        "only {pongs} pings answered: the test proves nothing"
    );
    // Closed at the timeout; the bound leaves room for scheduling on a busy machine.
    assert!(
        closed_after <= timeout * 3 / 2 + Duration::from_millis(500),
        "closed after {closed_after:?}"
    );
    drop(client);
}

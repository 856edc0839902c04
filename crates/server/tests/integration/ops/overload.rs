//! Timeouts, load shedding, oversized requests and clients too slow to send theirs.

use super::*;

#[tokio::test]
async fn request_timeout_answers_503_unavailable_in_json() {
    let app = TestApp::sqlite().await;
    let (base, _stop) = spawn_server(
        slow_router(
            &app,
            HttpConfig {
                request_timeout: Duration::from_millis(150),
                ..HttpConfig::default()
            },
        ),
        ServeOptions::default(),
    )
    .await;
    let started = Instant::now();
    let resp = Resp::read(app.http.get(format!("{base}/slow")).send().await.unwrap()).await;
    let took = started.elapsed();
    // The route takes 600 ms; the answer comes at the 150 ms timeout, not before, not much after.
    assert!(
        (Duration::from_millis(150)..Duration::from_millis(350)).contains(&took),
        "answered after {took:?}"
    );
    resp.assert_error(503, "unavailable");
    assert_eq!(resp.header("retry-after"), Some("1"));
}

#[tokio::test]
async fn requests_over_the_concurrency_limit_are_shed_at_once() {
    let app = TestApp::sqlite().await;
    let (base, _stop) = spawn_server(
        slow_router(
            &app,
            HttpConfig {
                max_in_flight: 2,
                ..HttpConfig::default()
            },
        ),
        ServeOptions::default(),
    )
    .await;
    let started = Instant::now();
    // Alternating two routes: the limit is the server's, not each route's.
    let calls = (0..8).map(|i| {
        let http = app.http.clone();
        let url = format!("{base}/{}", if i % 2 == 0 { "slow" } else { "slow2" });
        async move {
            let resp = Resp::read(http.get(url).send().await.unwrap()).await;
            (resp, started.elapsed())
        }
    });
    let results = futures_util::future::join_all(calls).await;
    let served = results.iter().filter(|(r, _)| r.status == 200).count();
    let shed: Vec<_> = results.iter().filter(|(r, _)| r.status == 503).collect();
    assert_eq!(served, 2, "served with a limit of 2 in flight");
    assert_eq!(shed.len(), 6, "shed");
    for (resp, elapsed) in shed {
        resp.assert_error(503, "unavailable");
        assert!(resp.header("retry-after").is_some());
        assert!(
            *elapsed < Duration::from_millis(500),
            "shed quickly, took {elapsed:?}"
        );
    }
}

#[tokio::test]
async fn oversized_body_answers_413_payload_too_large_in_json() {
    let app = TestApp::sqlite().await;
    let resp = delete_with_an_oversized_body(&app).await;
    resp.assert_error(413, "payload_too_large");
    assert!(app.profile_is_live(&app.profile, "acme").await);
}

/// The 431 is hyper's, as the document says: no body, no content type, no `X-Request-Id`.
#[tokio::test]
async fn oversized_headers_answer_431_and_the_server_keeps_serving() {
    let app = TestApp::sqlite().await;
    // A raw socket, so a client-side refusal cannot hide the server's answer.
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: x\r\nX-API-KEY: {}\r\nX-Big: {}\r\n\r\n",
        zones(),
        app.member_key,
        "a".repeat(64 * 1024)
    );
    // The server may stop reading once the head is over its limit; its answer is what counts.
    let answer = raw::exchange(app.addr(), head.as_bytes(), Duration::from_secs(5)).await;
    assert_eq!(answer.as_ref().map(|a| a.status), Ok(431), "{answer:?}");
    // What the document says of it: hyper answers before any layer runs, so no body, no
    // content type, no `X-Request-Id`, and the connection is closed.
    let answer = answer.unwrap();
    assert_eq!(answer.header("content-length"), Some("0"), "{answer:?}");
    assert_eq!(answer.header("content-type"), None, "{answer:?}");
    assert_eq!(answer.header("x-request-id"), None, "{answer:?}");
    assert_eq!(answer.header("connection"), Some("close"), "{answer:?}");
    assert_eq!(answer.text(), "", "{answer:?}");
    let document = appzone_contract::openapi::document();
    let description = document["info"]["description"].as_str().unwrap();
    assert!(
        description.contains(
            "431 (request headers too large, over 32 KiB by default): the HTTP \
             layer (hyper) answers it before the service sees the request, with no body, no \
             content type and no `X-Request-Id`, and closes the connection"
        ),
        "the document's 431"
    );
    assert!(
        description.contains("Every response the service answers carries `X-Request-Id` (a 431"),
        "the document's request ids"
    );
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
}

/// Sends a request head a byte every 20 ms (never finishing it) until the server closes the
/// connection or 3 s pass; then waits up to 2 s more for the close. Whether it was closed.
async fn drip_a_head(conn: &mut RawConnection) -> bool {
    let started = Instant::now();
    let head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    let endless = head.iter().chain(std::iter::repeat(&b'a'));
    for byte in endless {
        if conn.write(&[*byte]).await.is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    conn.closed_within(Duration::from_secs(2)).await.is_some()
}

/// A server with a 500 ms header-read timeout, and a connection to it.
async fn impatient_server() -> (TestApp, RawConnection) {
    let app = TestApp::sqlite_serving(ServeOptions {
        header_read_timeout: Duration::from_millis(500),
        ..ServeOptions::default()
    })
    .await;
    let conn = app.connection().await;
    (app, conn)
}

/// Drips a head on `conn` and checks the server closed the connection within 1.5 times the
/// 500 ms header-read timeout (the promise) of the start of the drip, give or take 250 ms for
/// noticing the close.
async fn assert_cut_off(conn: &mut RawConnection) {
    let started = Instant::now();
    let closed = drip_a_head(conn).await;
    let took = started.elapsed();
    assert!(closed, "connection still open after {took:?}");
    assert!(
        took < Duration::from_millis(750 + 250),
        "cut off only after {took:?}"
    );
}

#[tokio::test]
async fn a_client_sending_its_head_a_byte_at_a_time_is_cut_off() {
    let (app, mut conn) = impatient_server().await;
    assert_cut_off(&mut conn).await;
    assert_eq!(app.get("/healthz", None).await.status, 200);
}

#[tokio::test]
async fn a_keep_alive_client_sending_its_next_head_a_byte_at_a_time_is_cut_off() {
    // The header-read timer is one per connection, its deadline moved for each request head:
    // the second head on a connection is timed like the first.
    let (_app, mut conn) = impatient_server().await;
    for _ in 0..3 {
        let answer = conn.request("GET", "/healthz", None).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        // Longer than the timeout in all: the deadline counts from each head, not the first.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_cut_off(&mut conn).await;
}

//! The request body limit: a 413 names the limit of its route, and a body declared over it is
//! read after the answer, so the client that sends it reads the 413.

use std::time::Duration;

use appzone_test_support::{raw, TestApp};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The zone-mapping path's limit, and the other paths' default one.
const MAPPING_LIMIT: usize = appzone_contract::MAX_ZONE_MAPPING_BYTES;
const DEFAULT_LIMIT: usize = appzone_server::http::HttpConfig::DEFAULT_MAX_BODY_BYTES;

/// The 413 message for `method path` with a body of `length` bytes, its length declared or
/// chunked.
async fn refusal(app: &TestApp, method: &str, path: &str, length: usize, chunked: bool) -> String {
    let framing = if chunked {
        "Transfer-Encoding: chunked".to_owned()
    } else {
        format!("Content-Length: {length}")
    };
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: appzone\r\nX-API-KEY: {}\r\n\
         Content-Type: application/json\r\n{framing}\r\nConnection: close\r\n\r\n",
        app.admin_key
    )
    .into_bytes();
    let body = vec![b' '; length];
    if chunked {
        for chunk in body.chunks(64 * 1024) {
            request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            request.extend_from_slice(chunk);
            request.extend_from_slice(b"\r\n");
        }
        request.extend_from_slice(b"0\r\n\r\n");
    } else {
        request.extend_from_slice(&body);
    }
    let answer = raw::exchange(app.addr(), &request, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(answer.status, 413, "{method} {path}: {}", answer.text());
    let body: serde_json::Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(body["error_code"], "payload_too_large", "{body}");
    body["error"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_413_names_the_limit_of_its_route() {
    let app = TestApp::sqlite().await;
    let profile = TestApp::profile_path(app.profile.as_str());
    let mapping = "/api/v1/zone-mappings/prod";
    // Refused by its declared length, and, chunked, once the limit is read (the mapping's
    // `PUT` reads its body; the profile's `DELETE` never does).
    for (method, path, limit, chunked) in [
        ("DELETE", profile.as_str(), DEFAULT_LIMIT, false),
        ("PUT", mapping, MAPPING_LIMIT, false),
        ("PUT", mapping, MAPPING_LIMIT, true),
    ] {
        assert_eq!(
            refusal(&app, method, path, limit + 1, chunked).await,
            format!("the request body is larger than this route's limit of {limit} bytes"),
            "{method} {path}, chunked: {chunked}"
        );
    }
    assert_ne!(
        DEFAULT_LIMIT, MAPPING_LIMIT,
        "the two routes' limits tell apart"
    );
    assert!(app.profile_is_live(&app.profile, "acme").await);
}

/// A client that sends its whole body before it reads (most do) got a reset instead of the
/// answer when the server closed with the body unread: here the body goes out only once the
/// 413 has come, when hyper had closed the connection, and must still be taken.
#[tokio::test]
async fn a_body_declared_over_the_limit_is_read_after_the_413_so_its_sender_gets_the_answer() {
    let app = TestApp::sqlite().await;
    let length = DEFAULT_LIMIT * 16;
    let head = format!(
        "DELETE {} HTTP/1.1\r\nHost: appzone\r\nX-API-KEY: {}\r\nContent-Length: {length}\r\n\
         Connection: close\r\n\r\n",
        TestApp::profile_path(app.profile.as_str()),
        app.admin_key
    );
    let mut stream = TcpStream::connect(app.addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let mut chunk = [0; 1024];
        let n = stream.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed without an answer");
        answer.extend_from_slice(&chunk[..n]);
    }
    assert!(answer.starts_with(b"HTTP/1.1 413 "), "{answer:?}");
    // Pauses between pieces give a closed connection's reset the time to come back.
    for piece in vec![b' '; length].chunks(DEFAULT_LIMIT) {
        stream
            .write_all(piece)
            .await
            .unwrap_or_else(|e| panic!("the server stopped taking the body it had answered: {e}"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Then the server closes the connection (asked to), without a reset.
    let mut rest = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut rest))
        .await
        .expect("the connection stays open")
        .unwrap();
    assert!(app.profile_is_live(&app.profile, "acme").await);
}

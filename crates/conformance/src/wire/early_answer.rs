//! One request whose body the server may refuse before reading it (the 413 check's), sent on
//! a connection of its own so that its answer is read even when sending the body broke off.
//!
//! A server that answers early and closes the connection with the body unread makes the
//! client's kernel reset it: the client's next write fails, yet the answer that arrived before
//! the reset is still in its receive buffer. hyper (under reqwest) reports the write's error
//! and drops that answer ("no answer: Broken pipe", 2 runs in 6 against appzone before it
//! lingered); this reads it. Plain HTTP only: `Kit::send_refusable` sends over TLS with the
//! kit's client.

use std::time::Duration;

use http::header::CONTENT_LENGTH;
use http::{HeaderMap, HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// An answer as it came off the wire.
#[derive(Debug)]
pub(super) struct Answer {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

/// Sends `head` (request line and headers, blank line included) and `body` to `authority`
/// (`host` or `host:port`) and reads one answer, all within `timeout`; `Err` says why there is
/// none.
pub(super) async fn exchange(
    authority: &str,
    head: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<Answer, String> {
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, port)| port.parse::<u16>().is_ok());
    let address = if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let attempt = async {
        let mut stream = TcpStream::connect(&address)
            .await
            .map_err(|e| format!("no connection: {e}"))?;
        stream
            .write_all(head.as_bytes())
            .await
            .map_err(|e| format!("no answer: {e}"))?;
        // Its failure is the case this is for: read what arrived before it all the same.
        let sent = stream.write_all(body).await;
        let mut received = Vec::new();
        loop {
            let mut chunk = [0; 8192];
            let read = stream.read(&mut chunk).await;
            let at_end = !matches!(read, Ok(n) if n > 0);
            if let Ok(n) = read {
                received.extend_from_slice(&chunk[..n]);
            }
            if let Some(answer) = parse(&received, at_end)? {
                return Ok(answer);
            }
            if at_end {
                let why = match (sent, read) {
                    (Err(e), _) | (Ok(()), Err(e)) => e.to_string(),
                    (Ok(()), Ok(_)) => "the connection closed".to_owned(),
                };
                return Err(format!("no answer: {why}"));
            }
        }
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {timeout:?}")))
}

/// The answer in `received`, once it is whole: its head and as many body bytes as its
/// `Content-Length` says, or, without one, everything up to the connection's end (the request
/// asked for `Connection: close`).
fn parse(received: &[u8], at_end: bool) -> Result<Option<Answer>, String> {
    let mut slots = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut slots);
    let head_length = match response.parse(received) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(format!("an answer that is not HTTP/1: {e}")),
    };
    let mut headers = HeaderMap::new();
    for header in response.headers.iter() {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(header.name.as_bytes()),
            HeaderValue::from_bytes(header.value),
        ) {
            headers.append(name, value);
        }
    }
    let rest = &received[head_length..];
    let length = headers
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<usize>().ok());
    let body = match length {
        Some(length) if rest.len() >= length => &rest[..length],
        None if at_end => rest,
        _ => return Ok(None),
    };
    Ok(Some(Answer {
        status: response.code.unwrap_or_default(),
        headers,
        body: body.to_vec(),
    }))
}

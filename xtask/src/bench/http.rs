//! A minimal HTTP/1.1 client over 127.0.0.1, for readiness, for capturing the answer a baseline
//! replays and for the scale run's single requests: std alone, so xtask needs no HTTP client.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use anyhow::{Context, Result};

pub(super) struct HttpResponse {
    pub(super) status: u16,
    headers: Vec<(String, String)>,
    pub(super) body: Vec<u8>,
}

impl HttpResponse {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub(super) fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Result<HttpResponse> {
    request(addr, "GET", path, headers)
}

/// One request without a body, on a connection of its own (`Connection: close`).
pub(super) fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<HttpResponse> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .with_context(|| format!("connect {addr}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .context("set a read timeout")?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .with_context(|| format!("send to {addr}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .with_context(|| format!("read from {addr}"))?;
    parse(&raw)
}

fn parse(raw: &[u8]) -> Result<HttpResponse> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .context("incomplete HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .context("malformed status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut response = HttpResponse {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    };
    if let Some(len) = response
        .header("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        response.body.truncate(len);
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    #[test]
    fn parses_a_response_and_its_headers() {
        let raw = b"HTTP/1.1 200 OK\r\nETag: W/\"abc\"\r\ncontent-length: 2\r\n\r\n{}extra";
        let response = super::parse(raw).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("etag"), Some("W/\"abc\""));
        assert_eq!(response.body, b"{}");
        assert!(super::parse(b"HTTP/1.1 200").is_err());
    }
}

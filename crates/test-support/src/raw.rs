//! HTTP/1.1 as bytes over a TCP connection, with one response parser: for what an HTTP client
//! would refuse to send or would normalize away (dot segments, oversized or stalled heads,
//! arbitrary header bytes), for comparing two servers' answers byte for byte, and for what one
//! keep-alive connection remembers.

use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// One response as it came off the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawResponse {
    /// `HTTP/1.1 404 Not Found`.
    pub status_line: String,
    pub status: u16,
    /// Each header line's name and value (without surrounding whitespace), in the order sent.
    pub headers: Vec<(String, String)>,
    /// The body; de-chunked when it came chunked.
    pub body: Vec<u8>,
}

impl RawResponse {
    /// Parses a whole answer: the head, then the body to the end of `answer`.
    pub fn parse(answer: &[u8]) -> Result<Self, String> {
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| format!("incomplete answer: {:?}", String::from_utf8_lossy(answer)))?;
        let mut response = Self::head(&String::from_utf8_lossy(&answer[..split]))?;
        let body = &answer[split + 4..];
        response.body = if response.is_chunked() {
            dechunk(body)?
        } else {
            body.to_vec()
        };
        Ok(response)
    }

    /// Parses a status line and header lines (without the blank line that ends them).
    fn head(head: &str) -> Result<Self, String> {
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap_or_default().to_owned();
        let status = status_line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line: {head:?}"))?;
        let headers = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_owned(), value.trim().to_owned()))
            .collect();
        Ok(Self {
            status_line,
            status,
            headers,
            body: Vec::new(),
        })
    }

    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The header lines but `date`, sorted: heads compared whatever the second they were sent
    /// in and wherever hyper put `content-length`.
    pub fn header_lines_but_date(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .headers
            .iter()
            .filter(|(name, _)| !name.eq_ignore_ascii_case("date"))
            .map(|(name, value)| format!("{name}: {value}"))
            .collect();
        lines.sort();
        lines
    }

    fn is_chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("chunked"))
    }
}

fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size = std::str::from_utf8(&raw[..line_end])
            .ok()
            .and_then(|size| usize::from_str_radix(size.trim(), 16).ok())
            .ok_or("bad chunk size")?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(raw.get(..size).ok_or("short chunk")?);
        raw = raw.get(size + 2..).ok_or("short chunk")?;
    }
}

/// A request head for `method target`, with `key` in `X-API-KEY`, asking the server to close
/// the connection after answering or not.
pub fn request_head(method: &str, target: &str, key: Option<&str>, close: bool) -> String {
    let key = key
        .map(|k| format!("X-API-KEY: {k}\r\n"))
        .unwrap_or_default();
    let close = if close { "Connection: close\r\n" } else { "" };
    format!("{method} {target} HTTP/1.1\r\nHost: appzone\r\n{key}{close}\r\n")
}

/// Sends `request` on a fresh connection to `addr` (`127.0.0.1:PORT`) and reads the answer
/// until the server closes the connection, so `request` should ask it to. A write the server
/// cuts short is no failure (it may answer before reading all of an oversized request): its
/// answer counts. Fails when no whole answer has come when the server closes, or within
/// `within`.
pub async fn exchange(addr: &str, request: &[u8], within: Duration) -> Result<RawResponse, String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connecting to {addr}: {e}"))?;
    let written = stream.write_all(request).await;
    let mut answer = Vec::new();
    let Ok(read) = tokio::time::timeout(within, stream.read_to_end(&mut answer)).await else {
        return Err(format!(
            "the connection was still open after {within:?}, having answered {:?}",
            String::from_utf8_lossy(&answer)
        ));
    };
    let io: Vec<String> = [written.err(), read.err()]
        .into_iter()
        .flatten()
        .map(|e| e.to_string())
        .collect();
    RawResponse::parse(&answer).map_err(|e| {
        if io.is_empty() {
            e
        } else {
            format!("{e} ({})", io.join("; "))
        }
    })
}

/// One keep-alive connection: requests go out one at a time, each answer read to the end of
/// its `Content-Length` body (so not for `HEAD`). For what a connection remembers between
/// requests, and for how long the server keeps an idle or stalled connection open.
#[derive(Debug)]
pub struct RawConnection {
    stream: BufReader<TcpStream>,
}

impl RawConnection {
    /// Connects to `addr` (`127.0.0.1:PORT`).
    pub async fn open(addr: &str) -> Self {
        let stream = TcpStream::connect(addr).await.unwrap();
        Self {
            stream: BufReader::new(stream),
        }
    }

    /// Writes `bytes` as they are (a request, or part of one); fails once the server has
    /// closed the connection.
    pub async fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.stream.get_mut().write_all(bytes).await
    }

    /// Writes `request` and reads one answer. Panics if the server closes the connection
    /// instead of answering.
    pub async fn send(&mut self, request: &[u8]) -> RawResponse {
        self.write(request).await.unwrap();
        let mut head = String::new();
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).await.unwrap();
            assert!(!line.is_empty(), "no answer on the connection: {head:?}");
            if line == "\r\n" {
                break;
            }
            head.push_str(&line);
        }
        let mut response = RawResponse::head(head.trim_end_matches("\r\n")).unwrap();
        let length = response
            .header("content-length")
            .map_or(0, |v| v.parse().unwrap());
        response.body = vec![0; length];
        self.stream.read_exact(&mut response.body).await.unwrap();
        response
    }

    /// Sends `method target` with `key` in `X-API-KEY`, keeping the connection open.
    pub async fn request(&mut self, method: &str, target: &str, key: Option<&str>) -> RawResponse {
        self.send(request_head(method, target, key, false).as_bytes())
            .await
    }

    /// Reads until the server closes the connection (end of stream or reset): how long that
    /// took, or `None` when it is still open after `within`.
    pub async fn closed_within(&mut self, within: Duration) -> Option<Duration> {
        let started = Instant::now();
        let mut sink = Vec::new();
        tokio::time::timeout(within, self.stream.read_to_end(&mut sink))
            .await
            .ok()
            .map(|_| started.elapsed())
    }
}

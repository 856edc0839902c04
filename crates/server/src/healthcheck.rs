//! `appzone-server healthcheck`: asks a running server on this host for `/healthz` (or
//! `/readyz`) and exits 0 on a 200. It is the container image's health check, which must work
//! without a shell or curl in the image, and it reads the same `APPZONE_LISTEN` as `serve`.

use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use axum::body::Body;
use http::header::HOST;
use http::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// The address to probe for a server listening on `listen`: a wildcard host (`0.0.0.0`, `[::]`)
/// listens on loopback too, so the probe goes there.
pub fn probe_address(listen: &str) -> String {
    match listen.rsplit_once(':') {
        Some(("0.0.0.0", port)) => format!("127.0.0.1:{port}"),
        Some(("[::]", port)) => format!("[::1]:{port}"),
        _ => listen.to_owned(),
    }
}

/// `GET path` on `address` over one HTTP/1.1 connection; `Ok` when the answer is 200 within
/// `timeout`.
pub async fn probe(address: &str, path: &str, timeout: Duration) -> anyhow::Result<()> {
    let url = format!("http://{address}{path}");
    let status = tokio::time::timeout(timeout, get(address, path))
        .await
        .map_err(|_| anyhow!("no answer from {url} within {timeout:?}"))?
        .with_context(|| format!("cannot reach {url}"))?;
    if status != StatusCode::OK {
        bail!("{url} answered {status}");
    }
    Ok(())
}

async fn get(address: &str, path: &str) -> anyhow::Result<StatusCode> {
    let stream = TcpStream::connect(address).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(TokioIo::new(stream)).await?;
    tokio::spawn(connection);
    let request = Request::get(path)
        .header(HOST, address)
        .body(Body::empty())?;
    Ok(sender.send_request(request).await?.status())
}

#[cfg(test)]
mod tests {
    use super::probe_address;

    #[test]
    fn a_wildcard_listen_address_is_probed_on_loopback() {
        assert_eq!(probe_address("0.0.0.0:8080"), "127.0.0.1:8080");
        assert_eq!(probe_address("[::]:9000"), "[::1]:9000");
        assert_eq!(probe_address("127.0.0.1:8080"), "127.0.0.1:8080");
        assert_eq!(probe_address("localhost:8080"), "localhost:8080");
    }
}

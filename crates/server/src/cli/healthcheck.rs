//! `appzone-server healthcheck`: asks a running server on this host for `/healthz` (or
//! `/readyz`) and exits 0 on a 200. It is the container image's health check, which must work
//! without a shell or curl in the image, and it reads the same `APPZONE_LISTEN` as `serve`.

use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use axum::body::Body;
use clap::Args;
use http::header::HOST;
use http::{Request, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::serve::{parse_listen, DEFAULT_LISTEN};

/// Options of `healthcheck`.
#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// The address the server listens on, as given to `serve`; a wildcard host (`0.0.0.0`,
    /// `[::]`) is probed on loopback.
    #[arg(long, env = "APPZONE_LISTEN", default_value = DEFAULT_LISTEN, value_parser = parse_listen)]
    pub listen: String,
    /// Probe /readyz (the database answers) instead of /healthz (the process serves).
    #[arg(long)]
    pub ready: bool,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: u64,
}

/// Probes `/healthz`, or `/readyz` with `--ready`, of the server listening on `--listen`.
pub(super) async fn run(args: &HealthcheckArgs) -> anyhow::Result<()> {
    let path = if args.ready { "/readyz" } else { "/healthz" };
    let address = probe_address(&args.listen);
    probe(&address, path, Duration::from_secs(args.timeout_secs)).await
}

/// The address to probe for a server listening on `listen`: a wildcard host (`0.0.0.0`, `[::]`)
/// listens on loopback too, so the probe goes there.
fn probe_address(listen: &str) -> String {
    match listen.rsplit_once(':') {
        Some(("0.0.0.0", port)) => format!("127.0.0.1:{port}"),
        Some(("[::]", port)) => format!("[::1]:{port}"),
        _ => listen.to_owned(),
    }
}

/// `GET path` on `address` over one HTTP/1.1 connection; `Ok` when the answer is 200 within
/// `timeout`.
async fn probe(address: &str, path: &str, timeout: Duration) -> anyhow::Result<()> {
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

//! Single GETs over 127.0.0.1 with reqwest, xtask's HTTP client: a server's readiness, the
//! answer a baseline replays, the scale run's readings of `/metrics`. One current-thread tokio
//! runtime and client per calling thread, so a poll every few milliseconds costs no set-up.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, Result};

pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) etag: Option<String>,
    pub(super) body: Vec<u8>,
}

thread_local! {
    static CLIENT: Option<(tokio::runtime::Runtime, reqwest::Client)> = {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().ok()?;
        // No proxy from the environment: every request is to this machine.
        let client = reqwest::Client::builder().no_proxy().build().ok()?;
        Some((runtime, client))
    };
}

pub(super) fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Result<Answer> {
    CLIENT.with(|client| {
        let (runtime, client) = client.as_ref().context("cannot start an HTTP client")?;
        let mut request = client
            .get(format!("http://{addr}{path}"))
            .timeout(Duration::from_secs(5));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        runtime.block_on(async {
            let answer = request
                .send()
                .await
                .with_context(|| format!("GET {path} on {addr}"))?;
            let status = answer.status().as_u16();
            let etag = answer
                .headers()
                .get("etag")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let body = answer
                .bytes()
                .await
                .with_context(|| format!("GET {path}: the body"))?;
            Ok(Answer {
                status,
                etag,
                body: body.to_vec(),
            })
        })
    })
}

//! `appzone-bench-baseline`: the bare route `cargo xtask bench` compares appzone against.
//!
//! One axum route (the zone-listing template, or the path given with `--path`, for the other
//! listings) that answers the bytes appzone answered (the body the harness captured from the
//! real server, and the same response headers), with no middleware, no authentication, no lookup
//! and no allocation per request beyond what axum and hyper do themselves. A request with a matching `If-None-Match` gets the same 304 appzone
//! gives, so the conditional scenario has a baseline too. Served with `axum::serve` on the same
//! multi-threaded tokio runtime appzone uses (one worker per core) and with `TCP_NODELAY`, as
//! appzone sets it.
//!
//! ```text
//! appzone-bench-baseline --listen 127.0.0.1:9000 --body-file body.json --etag 'W/"..."' \
//!     --request-id 01J... [--path /api/v1/providers]
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use appzone_contract::headers::REQUEST_ID;
use appzone_contract::paths::LIST_ZONES;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;
use clap::Parser;
use http::header::{
    InvalidHeaderValue, CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, X_CONTENT_TYPE_OPTIONS,
};
use http::{HeaderMap, HeaderValue, StatusCode};

/// The bare axum route `cargo xtask bench` compares appzone against: the bytes appzone
/// answered, replayed with no middleware, authentication or lookup.
#[derive(Debug, Parser)]
#[command(name = "appzone-bench-baseline")]
struct Args {
    /// Address to listen on
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,

    /// The body to answer with (captured from appzone)
    #[arg(long, value_name = "FILE")]
    body_file: PathBuf,

    /// The ETag to answer with; a request whose If-None-Match matches it gets a 304
    #[arg(long, value_parser = header_value)]
    etag: HeaderValue,

    /// The request id to answer with (appzone's answer carries one of the same length)
    #[arg(
        long,
        value_name = "ID",
        value_parser = header_value,
        default_value = "01JBASELINE0000000000000000"
    )]
    request_id: HeaderValue,

    /// The route served: an axum path template
    #[arg(long, value_name = "ROUTE", default_value = LIST_ZONES)]
    path: String,
}

fn header_value(value: &str) -> Result<HeaderValue, InvalidHeaderValue> {
    HeaderValue::from_str(value)
}

#[derive(Clone)]
struct Answer {
    body: Bytes,
    etag: HeaderValue,
    request_id: HeaderValue,
}

/// The whole "service": one header comparison, then static bytes.
async fn zones(State(answer): State<Answer>, headers: HeaderMap) -> Response {
    const CACHE_POLICY: HeaderValue = HeaderValue::from_static("private, max-age=60");
    const NOSNIFF: HeaderValue = HeaderValue::from_static("nosniff");
    if headers.get(IF_NONE_MATCH) == Some(&answer.etag) {
        return (
            StatusCode::NOT_MODIFIED,
            [
                (ETAG, answer.etag),
                (CACHE_CONTROL, CACHE_POLICY),
                (X_CONTENT_TYPE_OPTIONS, NOSNIFF),
                (REQUEST_ID, answer.request_id),
            ],
        )
            .into_response();
    }
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (ETAG, answer.etag),
            (CACHE_CONTROL, CACHE_POLICY),
            (X_CONTENT_TYPE_OPTIONS, NOSNIFF),
            (REQUEST_ID, answer.request_id),
        ],
        answer.body,
    )
        .into_response()
}

// The allocator appzone-server ships with: the baseline differs from appzone only in the
// application, not in the process's runtime, socket options or allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // The multi-threaded runtime appzone runs on, one worker per core.
    appzone_bench::run_to_exit(
        &mut tokio::runtime::Builder::new_multi_thread(),
        serve(Args::parse()),
    )
}

async fn serve(args: Args) -> anyhow::Result<()> {
    let body = std::fs::read(&args.body_file)
        .with_context(|| format!("cannot read {}", args.body_file.display()))?;
    let answer = Answer {
        body: Bytes::from(body),
        etag: args.etag,
        request_id: args.request_id,
    };
    let app = Router::new()
        .route(&args.path, get(zones))
        .with_state(answer);
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?
        .tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
    eprintln!("appzone-bench-baseline listening on {}", args.listen);
    axum::serve(listener, app).await.context("serve")
}

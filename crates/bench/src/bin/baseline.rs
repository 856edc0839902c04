//! `appzone-bench-baseline`: the bare route `cargo xtask bench` compares appzone against.
//!
//! One axum route (the zone-listing template, or the path given with `--path`, for the other
//! listings) that answers the bytes appzone answered (body and
//! the same response headers, read from files the harness captured from the real server), with
//! no middleware, no authentication, no lookup and no allocation per request beyond what axum and
//! hyper do themselves. A request with a matching `If-None-Match` gets the same 304 appzone
//! gives, so the conditional scenario has a baseline too. Served with `axum::serve` on the same
//! multi-threaded tokio runtime appzone uses (one worker per core) and with `TCP_NODELAY`, as
//! appzone sets it.
//!
//! ```text
//! appzone-bench-baseline --listen 127.0.0.1:9000 --body-file body.json --etag 'W/"..."' \
//!     --request-id 01J... [--path /api/v1/providers]
//! ```

use std::net::SocketAddr;
use std::process::ExitCode;

use appzone_contract::headers::REQUEST_ID;
use appzone_contract::paths::LIST_ZONES;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::Router;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, X_CONTENT_TYPE_OPTIONS};
use http::{HeaderMap, HeaderValue, StatusCode};

const USAGE: &str = "usage: appzone-bench-baseline --listen ADDR --body-file FILE --etag ETAG \
                     [--request-id ID] [--path ROUTE]";

#[derive(Clone)]
struct Answer {
    body: Bytes,
    etag: HeaderValue,
    request_id: HeaderValue,
}

struct Args {
    listen: SocketAddr,
    /// The route served: an axum path template (default: the zone listing's).
    path: String,
    answer: Answer,
}

fn parse_args() -> Result<Args, String> {
    let mut listen = None;
    let mut body = None;
    let mut etag = None;
    let mut request_id = HeaderValue::from_static("01JBASELINE0000000000000000");
    let mut path = LIST_ZONES.to_owned();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--listen" => {
                listen = Some(
                    value()?
                        .parse::<SocketAddr>()
                        .map_err(|e| format!("--listen: {e}"))?,
                );
            }
            "--body-file" => {
                let path = value()?;
                let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
                body = Some(Bytes::from(bytes));
            }
            "--etag" => {
                etag = Some(HeaderValue::from_str(&value()?).map_err(|e| format!("--etag: {e}"))?);
            }
            "--request-id" => {
                request_id =
                    HeaderValue::from_str(&value()?).map_err(|e| format!("--request-id: {e}"))?;
            }
            "--path" => path = value()?,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        }
    }
    match (listen, body, etag) {
        (Some(listen), Some(body), Some(etag)) => Ok(Args {
            listen,
            path,
            answer: Answer {
                body,
                etag,
                request_id,
            },
        }),
        _ => Err(USAGE.to_owned()),
    }
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
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let result: Result<(), String> = runtime.block_on(async move {
        let app = Router::new()
            .route(&args.path, get(zones))
            .with_state(args.answer);
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", args.listen))?
            .tap_io(|tcp| {
                let _ = tcp.set_nodelay(true);
            });
        eprintln!("appzone-bench-baseline listening on {}", args.listen);
        axum::serve(listener, app)
            .await
            .map_err(|e| format!("serve: {e}"))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

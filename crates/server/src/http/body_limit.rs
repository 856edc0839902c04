//! The request body limit of a group of routes: tower-http's `RequestBodyLimit` (413 for a
//! body over the limit, however it is sent), with two additions of ours.
//!
//! - A 413 carries the limit it enforced ([`BodyLimit`], a response extension), so that
//!   [`super::error::json_errors`], where every error body is worded, names the route's limit.
//! - A body that declares a `Content-Length` over the limit is refused before it is read, and
//!   then read and discarded after the answer, up to [`LINGER_BYTES`] and [`LINGER_TIME`].
//!   Without that, hyper closes a connection whose request body is unread, the client's
//!   kernel gets a reset while the client is still sending, and a client that reads only once
//!   its body is sent (most do) reports a broken pipe instead of the 413 (the conformance kit
//!   did, 2 runs in 6). nginx and Apache linger the same way; both bounds keep it from being
//!   a way to hold the server's connections or bandwidth.

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use http::header::{CONTENT_LENGTH, EXPECT};
use http::{StatusCode, Version};
use http_body_util::BodyExt;
use tower_http::limit::RequestBodyLimitLayer;

/// The most body bytes read after an early 413: above the largest limit (a zone mapping's
/// 1 MiB), so a client a little over any limit is read to its end. A body that declares more
/// is not read at all: its connection is closed after the answer, as hyper does.
pub const LINGER_BYTES: u64 = 4 * 1024 * 1024;

/// The longest an early 413's body is read for: a few megabytes take milliseconds on a
/// network that serves this API; a client slower than that gets the connection closed.
pub const LINGER_TIME: Duration = Duration::from_secs(2);

/// The limit a 413 answer enforced, for the message that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimit(pub usize);

/// `routes` with request bodies limited to `limit` bytes.
pub fn limited<S>(routes: Router<S>, limit: usize) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    routes
        .layer(RequestBodyLimitLayer::new(limit))
        .layer(from_fn_with_state(limit, refuse_early))
}

/// Refuses a body whose declared length is over `limit` without passing it on, and marks
/// every 413 of the routes inside with the limit.
async fn refuse_early(State(limit): State<usize>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    let over = declared.filter(|&length| length > u64::try_from(limit).unwrap_or(u64::MAX));
    let mut response = match over {
        Some(length) => {
            if lingers(&request, length) {
                tokio::spawn(discard(request.into_body()));
            }
            StatusCode::PAYLOAD_TOO_LARGE.into_response()
        }
        None => next.run(request).await,
    };
    if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
        response.extensions_mut().insert(BodyLimit(limit));
    }
    response
}

/// Whether the body of a request refused early is worth reading: an HTTP/1 body within
/// [`LINGER_BYTES`] whose client did not wait for `100 Continue` (reading the body would make
/// hyper invite a body the client has not sent yet). HTTP/2 refuses a stream without closing
/// its connection, so nothing is lost there.
fn lingers(request: &Request, length: u64) -> bool {
    request.version() <= Version::HTTP_11
        && !request.headers().contains_key(EXPECT)
        && length <= LINGER_BYTES
}

/// Reads `body` to its end and drops it, for at most [`LINGER_TIME`]; the body cannot be
/// longer than [`LINGER_BYTES`] (its declared length, which hyper holds it to).
async fn discard(mut body: Body) {
    let read_all = async { while let Some(Ok(_)) = body.frame().await {} };
    if tokio::time::timeout(LINGER_TIME, read_all).await.is_err() {
        tracing::debug!("an early 413's body was still arriving after its linger time");
    }
}

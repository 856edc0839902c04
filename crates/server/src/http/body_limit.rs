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

use std::future::{ready, Ready};
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::future::Either;
use http::header::{CONTENT_LENGTH, EXPECT};
use http::{StatusCode, Version};
use http_body_util::BodyExt;
use tower::util::MapResponseLayer;
use tower::{Layer, Service, ServiceBuilder};
use tower_http::limit::{RequestBodyLimitLayer, ResponseBody};

/// The most body bytes read after an early 413: above the largest limit (a zone mapping's
/// 32 MiB) by 4 MiB, so a client a little over any limit is read to its end. A body that
/// declares more is not read at all: its connection is closed after the answer, as hyper does.
pub const LINGER_BYTES: u64 = appzone_contract::MAX_ZONE_MAPPING_BYTES as u64 + 4 * 1024 * 1024;

/// The longest an early 413's body is read for: a few megabytes take milliseconds on a
/// network that serves this API; a client slower than that gets the connection closed.
pub const LINGER_TIME: Duration = Duration::from_secs(2);

/// The limit a 413 answer enforced, for the message that names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimit(pub usize);

/// `routes` with request bodies limited to `limit` bytes.
///
/// One `Router::layer` of plain tower services, as tower-http's limit alone was: every request
/// of the listings passes here, and each `Router::layer` boxes every route's service and
/// future once more. With this as `axum::middleware::from_fn` in a second `Router::layer`, a
/// zone listing took about 4,500 more instructions (3.83 times the bare route against 3.68,
/// past the guard's ceiling of 3.73).
pub fn limited<S>(routes: Router<S>, limit: usize) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    // tower-http's 413 (a body over the limit however it is sent) gets the limit too; the body
    // becomes axum's `Body` here rather than where the router boxes it, so once as before.
    let mark = move |response: http::Response<ResponseBody<Body>>| {
        let mut response = response.map(Body::new);
        if response.status() == StatusCode::PAYLOAD_TOO_LARGE {
            response.extensions_mut().insert(BodyLimit(limit));
        }
        response
    };
    routes.layer(
        ServiceBuilder::new()
            .layer(RefuseEarlyLayer { limit })
            .layer(MapResponseLayer::new(mark))
            .layer(RequestBodyLimitLayer::new(limit)),
    )
}

/// Refuses a body whose declared length is over `limit` without passing it on (its 413
/// marked with the limit).
#[derive(Debug, Clone, Copy)]
struct RefuseEarlyLayer {
    limit: usize,
}

impl<I> Layer<I> for RefuseEarlyLayer {
    type Service = RefuseEarly<I>;

    fn layer(&self, inner: I) -> Self::Service {
        RefuseEarly {
            inner,
            limit: self.limit,
        }
    }
}

/// The service of [`RefuseEarlyLayer`].
#[derive(Debug, Clone)]
struct RefuseEarly<I> {
    inner: I,
    limit: usize,
}

impl<I> Service<Request> for RefuseEarly<I>
where
    I: Service<Request, Response = Response>,
{
    type Response = Response;
    type Error = I::Error;
    type Future = Either<Ready<Result<Response, I::Error>>, I::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let declared = request
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<u64>().ok());
        let limit = u64::try_from(self.limit).unwrap_or(u64::MAX);
        match declared.filter(|&length| length > limit) {
            Some(length) => {
                if lingers(&request, length) {
                    tokio::spawn(discard(request.into_body()));
                }
                let mut response = StatusCode::PAYLOAD_TOO_LARGE.into_response();
                response.extensions_mut().insert(BodyLimit(self.limit));
                Either::Left(ready(Ok(response)))
            }
            None => Either::Right(self.inner.call(request)),
        }
    }
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

//! Authentication of every `/api/v1/...` request, before routing reads any path parameter,
//! and the request body limit.
//!
//! A service around the router rather than a per-handler extractor, so unknown routes and wrong
//! methods under `/api/v1` are refused without a key too and no handler can forget the check.
//! The outermost service calls `Auth::handle` directly when CORS is off, and through the
//! `Service` impl (behind CORS) otherwise. An authorized zone listing the catalog can answer
//! is answered here by [`Shortcut`] instead of the router (`zones.rs` says why).

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use appzone_contract::headers::API_KEY;
use appzone_contract::paths::API_PREFIX;
use appzone_contract::ErrorCode;
use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_LENGTH;
use http_body::Body as _;
use tower::Service;

use super::context::RequestContext;
use super::error::ApiError;
use super::limits::RateLimits;
use super::listings::Shortcut;
use crate::keys::{AuthError, Caller, KeyVerifier};

fn is_api_path(path: &str) -> bool {
    path.strip_prefix(API_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// What the request presents in `X-API-KEY`.
enum Presented<'a> {
    /// No header, or an empty or blank one.
    Missing,
    /// Not readable as one key: not UTF-8, or the header sent twice.
    Unreadable,
    /// One value, trimmed.
    Key(&'a str),
}

fn presented(headers: &http::HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(&API_KEY).iter();
    match (values.next(), values.next()) {
        (None, _) => Presented::Missing,
        (Some(_), Some(_)) => Presented::Unreadable,
        // UTF-8 rather than `to_str`'s visible ASCII, checked a word at a time: anything outside
        // the key format fails verification with the same 401.
        (Some(value), None) => match std::str::from_utf8(value.as_bytes()).map(str::trim) {
            Ok("") => Presented::Missing,
            Ok(key) => Presented::Key(key),
            Err(_) => Presented::Unreadable,
        },
    }
}

/// The service: verifies `X-API-KEY` on API paths, records the [`Caller`] in the request's
/// [`RequestContext`], applies the rate limits, and enforces the body limit (413) on every path.
#[derive(Debug, Clone)]
pub struct Auth<S> {
    inner: S,
    checks: Arc<Checks>,
}

#[derive(Debug)]
struct Checks {
    keys: KeyVerifier,
    limits: RateLimits,
    max_body_bytes: usize,
    shortcut: Option<Shortcut>,
}

impl<S> Auth<S> {
    /// Wraps `inner` (the router); `shortcut` answers the listings it can without it.
    pub fn new(
        inner: S,
        keys: KeyVerifier,
        limits: RateLimits,
        max_body_bytes: usize,
        shortcut: Option<Shortcut>,
    ) -> Self {
        let checks = Arc::new(Checks {
            keys,
            limits,
            max_body_bytes,
            shortcut,
        });
        Self { inner, checks }
    }

    /// Serves one request whose context the caller holds.
    pub(super) fn handle<'a>(
        &'a self,
        context: &'a Arc<RequestContext>,
        request: Request,
    ) -> impl Future<Output = Response> + Send + 'a
    where
        S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + Sync,
        S::Future: Send,
    {
        self.checks.run(context, request, || self.inner.clone())
    }
}

impl<S> Service<Request> for Auth<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The service that was polled ready serves this request; a clone takes its place.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let checks = Arc::clone(&self.checks);
        let context = request.extensions().get::<Arc<RequestContext>>().cloned();
        Box::pin(async move {
            Ok(match context {
                Some(context) => checks.run(&context, request, || inner).await,
                None => ApiError::internal("request without its context: Auth runs inside App")
                    .into_response(),
            })
        })
    }
}

impl Checks {
    // One async fn from here to the router: the request is moved into a future's state once
    // per nesting level, and every level's state is part of the request future the outermost
    // service boxes and copies (BENCHMARKS.md).
    async fn run<S>(
        &self,
        context: &Arc<RequestContext>,
        request: Request,
        inner: impl FnOnce() -> S,
    ) -> Response
    where
        S: Service<Request, Response = Response, Error = Infallible>,
    {
        if is_api_path(request.uri().path()) {
            let caller = match self.remembered(request.headers(), context) {
                Some(caller) => caller,
                // Boxed: the lookup's future (a cache, maybe a query) would otherwise make
                // every request's future larger, for the few requests that need it.
                None => match Box::pin(self.authenticate(request.headers(), context)).await {
                    Ok(caller) => caller,
                    Err(refusal) => return refusal,
                },
            };
            let limited = self.limits.check_key(&caller.key.key_id);
            context.authenticated(caller);
            if let Err(limited) = limited {
                return limited.into_response();
            }
        }
        let mut request = match self.limit_body(request) {
            Ok(request) => request,
            Err(refusal) => return refusal.into_response(),
        };
        if let Some(answer) = self
            .shortcut
            .as_ref()
            .and_then(|s| s.answer(context, &request))
        {
            return answer;
        }
        // The handlers' `Extension<Arc<RequestContext>>`: inserted only for requests that reach
        // the router (an extension map is an allocation and a hash insert per request).
        request.extensions_mut().insert(Arc::clone(context));
        let mut inner = inner();
        let served = match poll_fn(|cx| inner.poll_ready(cx)).await {
            Ok(()) => inner.call(request).await,
            Err(never) => match never {},
        };
        match served {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// The caller, when the request presents the key its connection verified last (one
    /// header value, blanks around it ignored) and that verification may still be reused.
    /// Compares raw bytes: keys are ASCII, so no UTF-8 check is needed for a match.
    fn remembered(&self, headers: &http::HeaderMap, context: &RequestContext) -> Option<Caller> {
        let memo = context.key_memo()?;
        let mut values = headers.get_all(&API_KEY).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return None;
        };
        memo.recall(value.as_bytes().trim_ascii(), context.started())
    }

    async fn authenticate(
        &self,
        headers: &http::HeaderMap,
        context: &RequestContext,
    ) -> Result<Caller, Response> {
        let refusal = match presented(headers) {
            Presented::Missing => ApiError::new(
                ErrorCode::MissingApiKey,
                "missing API key: send it in the X-API-KEY header",
            ),
            Presented::Unreadable => invalid_key(),
            Presented::Key(key) => {
                match self.keys.verify(key).await {
                    Ok(verified) => {
                        // Remembered by the connection for its next requests (`remembered`).
                        if let Some(memo) = context.key_memo() {
                            memo.remember(key, &verified);
                        }
                        return Ok(verified.caller);
                    }
                    Err(AuthError::Invalid) => invalid_key(),
                    Err(AuthError::Store(err)) => {
                        return Err(ApiError::storage(err).into_response())
                    }
                }
            }
        };
        // Failed attempts count against the client's address; past the limit, 429.
        if let Some(Err(limited)) = context.peer().map(|ip| self.limits.auth_failed(ip)) {
            return Err(limited.into_response());
        }
        Err(refusal.into_response())
    }

    /// 413 for a declared length over the limit; a body that turns out longer fails when read.
    fn limit_body(&self, request: Request) -> Result<Request, ApiError> {
        if request.body().is_end_stream() {
            // Nothing to limit (every GET and DELETE without a body): no header to read, no
            // wrapper to allocate.
            return Ok(request);
        }
        let max = self.max_body_bytes;
        let declared = request
            .headers()
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|len| len > u64::try_from(max).unwrap_or(u64::MAX)) {
            return Err(ApiError::new(
                ErrorCode::PayloadTooLarge,
                "request body too large",
            ));
        }
        Ok(request.map(|body| Body::new(http_body_util::Limited::new(body, max))))
    }
}

fn invalid_key() -> ApiError {
    ApiError::new(ErrorCode::InvalidApiKey, "invalid API key")
}

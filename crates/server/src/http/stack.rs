//! The outermost service: every request enters the application here (from [`crate::serve`]).
//!
//! One hand-written service instead of a tower layer per concern: a request costs one boxed
//! future here and one in [`super::auth::Auth`], where the layered stack cloned and boxed at
//! every layer (BENCHMARKS.md has the instruction counts). In order, it
//!
//! 1. assigns the request id and puts the [`RequestContext`] into the request's extensions
//!    ([`super::context`], [`super::observe`]);
//! 2. sheds the request at once (503) when the in-flight limit is reached;
//! 3. runs the inner service (CORS when configured, then authentication and the router) under
//!    the request timeout (503), catching panics (500); without CORS, authentication is called
//!    directly rather than as a boxed service;
//! 4. turns a framework's non-JSON error into the contract's body, counts it under the route
//!    the handler recorded (else the one its path matches), logs once, and adds `X-Request-Id`
//!    and `X-Content-Type-Options` to every response.

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::panic::AssertUnwindSafe;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use appzone_contract::deprecation::{Deprecation, DEPRECATION, SUNSET};
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::{future, FutureExt};
use http::{HeaderValue, Method};
use tower::util::Either;
use tower::{Service, ServiceExt};
use tower_http::cors::Cors;

use super::auth::Auth;
use super::context::{Connection, RequestContext};
use super::error::ApiError;
use super::metrics::Metrics;
use super::observe;
use super::routes::{self, RouteLabel};
use super::HttpConfig;
use crate::health::Health;

/// What runs inside the outermost service: authentication and the router, behind CORS when
/// origins are configured (so preflights are answered without a key).
pub(super) type Inner = Either<Cors<Auth<Router>>, Auth<Router>>;

/// The whole application as one service. Cheap to clone (one `Arc`).
#[derive(Debug, Clone)]
pub struct App(Arc<Bound>);

/// The application as one connection sees it. hyper clones the service for every request:
/// an `Arc` per connection keeps that reference count on one core, where cloning the shared
/// `Gate` would move its cache line between cores on every request.
#[derive(Debug)]
struct Bound {
    gate: Arc<Gate>,
    /// The connection; `None` for in-process use.
    connection: Option<Arc<Connection>>,
}

#[derive(Debug)]
struct Gate {
    inner: Inner,
    metrics: Metrics,
    /// The readiness `/readyz` reports: the accept loop marks it draining on shutdown.
    health: Health,
    in_flight: InFlight,
    timeout: Duration,
    /// The share of `timeout` a write may take (`super::write_deadline`).
    write_timeout: Duration,
    /// The deprecation headers of each route's operation, by route label index: one
    /// index per answer, and nothing more while no operation is deprecated.
    deprecated: [Option<Deprecated>; RouteLabel::COUNT],
}

/// The headers of a deprecated operation's answers, made once.
#[derive(Debug)]
struct Deprecated {
    method: Method,
    deprecation: HeaderValue,
    sunset: Option<HeaderValue>,
}

impl Deprecated {
    fn table(deprecations: &[Deprecation]) -> [Option<Self>; RouteLabel::COUNT] {
        let mut table = std::array::from_fn(|_| None);
        for deprecation in deprecations {
            match RouteLabel::of_operation(deprecation.operation_id) {
                Some((route, method)) => {
                    table[route.index()] = Some(Self {
                        method,
                        deprecation: deprecation.deprecation_header(),
                        sunset: deprecation.sunset_header(),
                    });
                }
                None => tracing::warn!(
                    operation_id = deprecation.operation_id,
                    "a deprecation names no operation of the document; ignored"
                ),
            }
        }
        table
    }

    /// Adds the headers to an answer of the operation (its `HEAD` too, for a `GET`).
    fn mark(&self, method: &Method, response: &mut Response) {
        if *method == self.method || (*method == Method::HEAD && self.method == Method::GET) {
            let headers = response.headers_mut();
            headers.insert(DEPRECATION, self.deprecation.clone());
            if let Some(sunset) = &self.sunset {
                headers.insert(SUNSET, sunset.clone());
            }
        }
    }
}

impl App {
    pub(super) fn new(inner: Inner, metrics: Metrics, health: Health, http: &HttpConfig) -> Self {
        let gate = Arc::new(Gate {
            inner,
            metrics,
            health,
            in_flight: InFlight::new(http.max_in_flight),
            timeout: http.request_timeout,
            write_timeout: super::write_deadline(http.request_timeout),
            deprecated: Deprecated::table(&http.deprecations),
        });
        Self(Arc::new(Bound {
            gate,
            connection: None,
        }))
    }

    /// The readiness state `/readyz` answers from (the accept loop starts draining it on
    /// shutdown, so the load balancer stops sending before the listener closes).
    pub fn health(&self) -> &Health {
        &self.0.gate.health
    }

    /// The service's metrics (the accept loop counts the connections it refuses).
    pub fn metrics(&self) -> &Metrics {
        &self.0.gate.metrics
    }

    /// The application for one new connection (failed authentications are limited per its
    /// peer's address; it remembers the last key it verified; its requests count themselves in
    /// its activity, which the accept loop's watchdog reads).
    pub fn for_connection(&self, connection: Arc<Connection>) -> Self {
        Self(Arc::new(Bound {
            gate: Arc::clone(&self.0.gate),
            connection: Some(connection),
        }))
    }
}

impl Service<Request> for App {
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // Overload is answered per request (503), never by back-pressure on the connection.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // No `async` block around `handle`: it would hold a second copy of the request.
        let handled = Arc::clone(&self.0).handle(request);
        Box::pin(handled.map(Ok))
    }
}

impl Bound {
    // One async fn from here to authentication: see `Checks::run` on future sizes.
    async fn handle(self: Arc<Self>, mut request: Request) -> Response {
        let gate = &self.gate;
        // In flight on its connection until answered or dropped (the header-read timeout
        // leaves such a connection alone).
        let _busy = self.connection.as_deref().map(|c| c.activity().begin());
        let connection = self.connection.clone();
        let started = Instant::now();
        let id = observe::request_id(request.headers());
        let context = Arc::new(RequestContext::new(
            id,
            started,
            started + gate.write_timeout,
            connection,
        ));
        let method = request.method().clone();
        // Kept for the route label of answers no handler labelled (401, 404, 503...).
        let uri = request.uri().clone();
        // Shed at once beyond the in-flight limit: queueing would only add latency.
        let response = match gate.in_flight.enter() {
            None => ApiError::unavailable("overloaded: request shed").into_response(),
            Some(_admitted) => {
                // Built in one expression: every moved-from local would keep its own slot in
                // this future's state.
                let mut inner = pin!(AssertUnwindSafe(match &gate.inner {
                    // Boxed, so that the request future of the usual configuration is not
                    // sized for CORS's state.
                    Either::Left(cors) => {
                        // Authentication finds the context in the request, behind CORS.
                        request.extensions_mut().insert(Arc::clone(&context));
                        future::Either::Left(Box::pin(cors.clone().oneshot(request)))
                    }
                    Either::Right(auth) => {
                        future::Either::Right(auth.handle(&context, request).map(Ok))
                    }
                })
                .catch_unwind());
                // Most requests complete in their first poll (a listing never waits): the
                // timer, a registration in tokio's timer wheel and its removal, is armed only
                // for those that wait. The deadline still counts from the request's start.
                let outcome = match poll_fn(|cx| Poll::Ready(inner.as_mut().poll(cx))).await {
                    Poll::Ready(outcome) => Ok(outcome),
                    Poll::Pending => {
                        let deadline = tokio::time::Instant::from_std(started) + gate.timeout;
                        // Boxed: a timer is large, and only requests that wait need one.
                        match Box::pin(tokio::time::timeout_at(deadline, inner.as_mut())).await {
                            // A write already handed to storage is never cut off: its answer
                            // is its real outcome (its own deadline ends it, rolled back, if it
                            // cannot finish), where a 503 now could hide a commit.
                            Err(_elapsed) if context.is_writing() => {
                                tracing::debug!(
                                    request_id = context.request_id(),
                                    "request timeout reached during a write; awaiting its outcome"
                                );
                                Ok(inner.await)
                            }
                            other => other,
                        }
                    }
                };
                match outcome {
                    Ok(Ok(Ok(response))) => response,
                    Ok(Ok(Err(never))) => match never {},
                    Ok(Err(panic)) => super::panic_response(panic),
                    Err(_elapsed) => ApiError::unavailable("request timed out").into_response(),
                }
            }
        };
        let route = context.route().unwrap_or_else(|| routes::label(uri.path()));
        let mut response = observe::finish(&gate.metrics, &method, route, &context, response);
        if let Some(deprecated) = &gate.deprecated[route.index()] {
            deprecated.mark(&method, &mut response);
        }
        response
    }
}

/// The in-flight limit: a counter, as requests are admitted or shed at once and never wait
/// (a semaphore's release takes its waiters' lock, for waiters this service never has).
#[derive(Debug)]
struct InFlight {
    count: AtomicUsize,
    max: usize,
}

/// One admitted request; leaves the count when dropped.
struct Admitted<'a>(&'a AtomicUsize);

impl InFlight {
    fn new(max: usize) -> Self {
        Self {
            count: AtomicUsize::new(0),
            max: max.max(1),
        }
    }

    /// Admits a request, or `None` when `max` are in flight.
    fn enter(&self) -> Option<Admitted<'_>> {
        let before = self.count.fetch_add(1, Ordering::AcqRel);
        if before >= self.max {
            self.count.fetch_sub(1, Ordering::AcqRel);
            return None;
        }
        Some(Admitted(&self.count))
    }
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

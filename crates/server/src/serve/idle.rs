//! Closing connections with no request in flight for the header-read timeout.
//!
//! hyper's own timeout (HTTP/1) starts when hyper reads a request head, which misses two cases,
//! each with a test named after it: a connection that never sends the bytes hyper-util needs to
//! choose between HTTP/1 and HTTP/2 (`connections_that_send_nothing_are_closed_by_the_server`),
//! and an HTTP/2 connection whose client only sends PINGs, which hyper answers forever
//! (`an_idle_http2_connection_is_closed_however_often_its_client_pings`). A request counts as
//! in flight until its answer's body has been sent or dropped, so a slow download is not cut.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use http_body_util::BodyExt;
use tokio::time::Instant;

/// The requests in flight on one connection, and when the last one ended.
#[derive(Debug)]
pub(super) struct Idle {
    opened: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds from `opened` to the end of the last request (0 before any).
    quiet_since_ms: AtomicU64,
}

/// One request in flight; it ends when dropped.
#[derive(Debug)]
pub(super) struct Busy(Arc<Idle>);

impl Idle {
    pub(super) fn new() -> Self {
        Self {
            opened: Instant::now(),
            in_flight: AtomicUsize::new(0),
            quiet_since_ms: AtomicU64::new(0),
        }
    }

    /// Counts a request in until the returned guard is dropped.
    pub(super) fn begin(idle: &Arc<Self>) -> Busy {
        idle.in_flight.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(idle))
    }

    /// When the connection will have been idle for `timeout`; `None` while a request is in
    /// flight.
    fn idle_deadline(&self, timeout: Duration) -> Option<Instant> {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            return None;
        }
        let quiet_since = Duration::from_millis(self.quiet_since_ms.load(Ordering::Acquire));
        Some(self.opened + quiet_since + timeout)
    }
}

impl Busy {
    /// `response`, whose body holds this guard until it is sent or dropped.
    pub(super) fn until_sent(self, response: Response) -> Response {
        response.map(|body| {
            Body::new(body.map_frame(move |frame| {
                let _in_flight = &self;
                frame
            }))
        })
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let idle = &self.0;
        let since = u64::try_from(idle.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        idle.quiet_since_ms.store(since, Ordering::Release);
        idle.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs `connection` until it ends (`Some` of its output), or drops it, closing its socket
/// (`None`), once no request has been in flight on it for `timeout`.
pub(super) async fn close_when_idle<F: Future>(
    connection: F,
    idle: &Idle,
    timeout: Duration,
) -> Option<F::Output> {
    let mut connection = pin!(connection);
    loop {
        // While a request is in flight, look again a timeout later.
        let check = idle
            .idle_deadline(timeout)
            .unwrap_or_else(|| Instant::now() + timeout);
        tokio::select! {
            output = &mut connection => return Some(output),
            () = tokio::time::sleep_until(check) => {
                if idle.idle_deadline(timeout).is_some_and(|at| at <= Instant::now()) {
                    return None;
                }
            }
        }
    }
}

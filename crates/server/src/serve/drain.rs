//! Moving kept-alive clients during the shutdown delay, and telling every connection to finish
//! at the drain.
//!
//! During the delay the listener still accepts, but a client with a kept-alive connection
//! would go on sending on it until the server closes it after the delay, and its next request
//! would fail then. So every answer given while draining tells its client to reconnect, which
//! its load balancer sends elsewhere: an HTTP/1 answer carries `Connection: close` (hyper then
//! closes the connection after it, as it does when keep-alive is off), and on HTTP/2, where
//! connection headers do not exist, the answer makes hyper shut the connection down
//! gracefully: GOAWAY, the streams in flight finish, no new one is accepted. The answers are
//! otherwise unchanged. A connection with no request during the delay is told at the drain,
//! as before (the test:
//! `answers_during_the_shutdown_delay_move_kept_alive_clients_with_close_and_goaway`).
//!
//! hyper-util's `GracefulShutdown` can only tell all its connections at once, so the drain's
//! signal is the same mechanism by hand: a `watch` channel every connection holds a receiver
//! of, whose sender sees when the last one is gone.

use std::sync::Arc;

use axum::response::Response;
use http::header::CONNECTION;
use http::{HeaderValue, Version};
use tokio::sync::{watch, Notify};

/// What tells one connection to finish: the drain, or an answer of its own given while the
/// server was draining (HTTP/2).
#[derive(Debug)]
pub(super) struct Leave {
    drain: watch::Receiver<()>,
    goaway: Arc<Notify>,
}

impl Leave {
    pub(super) fn new(drain: watch::Receiver<()>) -> Self {
        Self {
            drain,
            goaway: Arc::new(Notify::new()),
        }
    }

    /// What the connection's answers use to ask for its graceful shutdown.
    pub(super) fn asker(&self) -> Arc<Notify> {
        Arc::clone(&self.goaway)
    }

    /// Completes when the connection should shut down gracefully. A dropped drain sender
    /// (the server is gone) counts as the drain.
    pub(super) async fn told(&mut self) {
        tokio::select! {
            _ = self.drain.changed() => {}
            () = self.goaway.notified() => {}
        }
    }
}

/// Marks `response`, an answer to a request of `version` given while draining, so that its
/// client leaves the connection: `Connection: close` on HTTP/1, a graceful shutdown (GOAWAY)
/// of the connection asked through `goaway` on HTTP/2.
pub(super) fn leave(response: &mut Response, version: Version, goaway: &Notify) {
    if version == Version::HTTP_2 {
        // A stored permit: the connection task sees it even if it is not waiting right now.
        goaway.notify_one();
    } else {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
}

//! The accept loop: hyper with a header-read timeout, `TCP_NODELAY`, and a bounded drain.
//!
//! `axum::serve` sets no hyper timer, so hyper's header-read timeout is silently off and a
//! client that never finishes its request head holds a connection forever. This loop keeps a
//! header-read timeout per connection itself (`serve/watchdog.rs`: it costs a request nothing,
//! where hyper's timed every head), disables Nagle's algorithm on every connection, hands the
//! peer's connection to the app ([`App::for_connection`]), and on shutdown stops accepting, lets
//! in-flight requests finish, and gives up on stragglers after a deadline.

mod watchdog;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;

use self::watchdog::{cut_off_when_quiet, Watched};
use crate::http::context::Connection;
use crate::http::App;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Connection-level settings.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Longest time a client may take to send its request head.
    pub header_read_timeout: Duration,
    /// Longest time in-flight requests get to finish after shutdown starts.
    pub drain_timeout: Duration,
    /// Largest request head (request line and headers) in bytes; hyper answers 431 beyond it.
    /// At least 8192.
    pub max_header_bytes: usize,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            drain_timeout: Duration::from_secs(20),
            max_header_bytes: 32 * 1024,
        }
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then drains.
pub async fn serve(
    listener: TcpListener,
    app: App,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        // Kept per connection by `watchdog` instead: hyper's timed every request head.
        .header_read_timeout(None)
        .max_buf_size(options.max_header_bytes.max(8192));
    builder.http2().timer(TokioTimer::new());
    let builder = Arc::new(builder);
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);

    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(err) => {
                    // Usually EMFILE: back off instead of spinning.
                    tracing::warn!(error = %err, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, "cannot set TCP_NODELAY");
        }
        let connection = Arc::new(Connection::new(peer.ip()));
        let service = app
            .for_connection(Arc::clone(&connection))
            .map_request(|request: Request<Incoming>| request.map(Body::new));
        let (builder, watcher) = (Arc::clone(&builder), graceful.watcher());
        let timeout = options.header_read_timeout;
        tokio::spawn(async move {
            // Nothing is parsed, and no buffer allocated, before the first byte; a client that
            // sends none gets the header-read timeout for it. `peek` waits for data (or EOF)
            // and consumes nothing; `readable()` can report readiness spuriously, which would
            // defeat the timeout.
            let mut first = [0u8; 1];
            let first_byte = stream.peek(&mut first);
            if !matches!(tokio::time::timeout(timeout, first_byte).await, Ok(Ok(1..))) {
                tracing::debug!(%peer, "closing a connection that sent nothing");
                return;
            }
            let serving = builder
                .serve_connection_with_upgrades(
                    TokioIo::new(Watched::new(stream, Arc::clone(&connection))),
                    TowerToHyperService::new(service),
                )
                .into_owned();
            match cut_off_when_quiet(watcher.watch(serving), connection.activity(), timeout).await {
                Some(Ok(())) => {}
                Some(Err(err)) => {
                    tracing::debug!(error = %err, %peer, "connection ended with an error");
                }
                None => {
                    tracing::debug!(%peer, "closing a connection quiet for the header-read timeout")
                }
            }
        });
    }

    drop(listener);
    tracing::info!("shutting down: no new connections, draining in-flight requests");
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections drained"),
        () = tokio::time::sleep(options.drain_timeout) => {
            tracing::warn!(timeout = ?options.drain_timeout, "drain deadline passed; closing remaining connections");
        }
    }
}

/// Completes on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("received Ctrl-C"),
        () = terminate => tracing::info!("received SIGTERM"),
    }
}

//! The accept loop: hyper's connections with their header-read timeout, `TCP_NODELAY`,
//! connection limits, and a shutdown that loses no request.
//!
//! `axum::serve` sets no hyper timer, so hyper's header-read timeout would be off and a client
//! that never finishes its request head would hold a connection forever. This loop gives hyper
//! its timer and timeout (HTTP/1), closes connections that stay idle (`serve/idle.rs`: what hyper's
//! timeout misses), disables Nagle's algorithm, hands the router the client's address
//! (`ConnectInfo<SocketAddr>`) and the request's log record (`http/observe.rs`: started here, so
//! that a request dropped before the router runs still gets its 499 line), closes a connection
//! at once when its address or the server has as many open as allowed (so no client can take
//! every descriptor), and on shutdown reports
//! not ready, keeps serving for a delay while load balancers take the replica out (every answer
//! then moves its client to another connection: `serve/drain.rs`), then stops accepting, lets
//! in-flight requests finish, and drops stragglers at a deadline ([`serve`]).

mod drain;
mod idle;

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use self::drain::Leave;
use self::idle::Idle;
use crate::http::observe::RequestRecord;
use crate::http::App;
use crate::metrics::ConnectionLimit;

/// Connection-level settings.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// Longest time a client may take to send its request head, and longest a connection may
    /// stay open with no request in flight.
    pub header_read_timeout: Duration,
    /// Longest time in-flight requests get to finish once the listener has closed; at this
    /// deadline the connections still open are dropped and [`serve`] returns.
    pub drain_timeout: Duration,
    /// How long the server goes on accepting and serving after the shutdown signal, with
    /// `/readyz` answering 503, so that load balancers stop sending to it before it stops
    /// accepting.
    pub shutdown_delay: Duration,
    /// Largest request head (request line and headers) in bytes; hyper answers 431 beyond it.
    /// At least 8192.
    pub max_header_bytes: usize,
    /// Most connections open at once from one client address; one more is closed as soon as
    /// it is accepted. At least 1.
    pub max_connections_per_address: usize,
    /// Most connections open at once in all; one more is closed as soon as it is accepted.
    /// At least 1.
    pub max_connections: usize,
}

/// The defaults, in the units of the `serve` options that set them (their `default_value_t`).
impl ServeOptions {
    /// Default of [`ServeOptions::header_read_timeout`], in seconds.
    pub const DEFAULT_HEADER_READ_TIMEOUT_SECS: u64 = 10;
    /// Default of [`ServeOptions::drain_timeout`], in seconds.
    pub const DEFAULT_DRAIN_TIMEOUT_SECS: u64 = 20;
    /// Default of [`ServeOptions::shutdown_delay`], in seconds.
    pub const DEFAULT_SHUTDOWN_DELAY_SECS: u64 = 0;
    /// Default of [`ServeOptions::max_header_bytes`].
    pub const DEFAULT_MAX_HEADER_BYTES: usize = 32 * 1024;
    /// Default of [`ServeOptions::max_connections_per_address`].
    pub const DEFAULT_MAX_CONNECTIONS_PER_ADDRESS: usize = 256;
    /// Default of [`ServeOptions::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(Self::DEFAULT_HEADER_READ_TIMEOUT_SECS),
            drain_timeout: Duration::from_secs(Self::DEFAULT_DRAIN_TIMEOUT_SECS),
            shutdown_delay: Duration::from_secs(Self::DEFAULT_SHUTDOWN_DELAY_SECS),
            max_header_bytes: Self::DEFAULT_MAX_HEADER_BYTES,
            max_connections_per_address: Self::DEFAULT_MAX_CONNECTIONS_PER_ADDRESS,
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// HTTP/2 streams one connection may have open at once. With the send buffer below, what one
/// connection can make the server hold is bounded (docs/DEPLOYMENT.md, Sizing); 32 is more than a browser
/// loading the docs page needs.
const H2_MAX_CONCURRENT_STREAMS: u32 = 32;
/// Bytes of answer hyper queues per HTTP/2 stream beyond what the client's window lets out
/// (h2's default is 400 KiB). Bodies are shared buffers (`Bytes`), so this bounds copies of
/// generated answers, not the static assets.
const H2_MAX_SEND_BUF: usize = 64 * 1024;

/// Serves `app` on `listener` until `shutdown` completes, then shuts down in three steps:
///
/// 1. at once, `app`'s readiness starts draining (`/readyz` answers 503) while the server goes
///    on accepting and serving for `options.shutdown_delay`; each answer given then tells its
///    client to leave the connection (HTTP/1 `Connection: close`, HTTP/2 GOAWAY);
/// 2. then the listener closes, and hyper tells each connection to finish: an HTTP/1 answer in
///    progress goes out with `Connection: close`, an idle keep-alive connection is closed, an
///    HTTP/2 connection gets GOAWAY;
/// 3. when the last connection has ended, or `options.drain_timeout` after step 2, whatever is
///    still open is dropped (its sockets closed) and this returns.
pub async fn serve(
    listener: TcpListener,
    app: App,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout)
        .max_buf_size(options.max_header_bytes.max(8192));
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(H2_MAX_CONCURRENT_STREAMS)
        .max_send_buf_size(H2_MAX_SEND_BUF)
        // The request head limit HTTP/1 has (hyper's HTTP/2 default is 16 KiB): a client may
        // make the server decode no more headers over one protocol than over the other.
        .max_header_list_size(
            u32::try_from(options.max_header_bytes.max(8192)).unwrap_or(u32::MAX),
        );
    let (drain, connections) = watch::channel(());
    let accept = Accept {
        builder: Arc::new(builder),
        connections,
        limits: Arc::new(Limits::new(&options)),
        header_read_timeout: options.header_read_timeout,
        abort: CancellationToken::new(),
    };
    tokio::pin!(shutdown);

    loop {
        tokio::select! {
            accepted = listener.accept() => accept.connection(accepted, &app).await,
            () = &mut shutdown => break,
        }
    }

    app.readiness.start_draining();
    if !options.shutdown_delay.is_zero() {
        tracing::info!(
            delay = ?options.shutdown_delay,
            "shutting down: /readyz answers 503; still serving for the shutdown delay"
        );
        let delay = tokio::time::sleep(options.shutdown_delay);
        tokio::pin!(delay);
        loop {
            tokio::select! {
                accepted = listener.accept() => accept.connection(accepted, &app).await,
                () = &mut delay => break,
            }
        }
    }

    drop(listener);
    tracing::info!("shutting down: no new connections, draining in-flight requests");
    let Accept {
        connections, abort, ..
    } = accept;
    // Only the connections' receivers are left: `closed` completes when the last one ends.
    drop(connections);
    let _ = drain.send(());
    tokio::select! {
        () = drain.closed() => tracing::info!("all connections drained"),
        () = tokio::time::sleep(options.drain_timeout) => {
            tracing::warn!(timeout = ?options.drain_timeout, "drain deadline passed; closing remaining connections");
        }
    }
    // Every connection task still running ends, dropping its socket and the requests in
    // progress: the deadline is kept, not just logged.
    abort.cancel();
}

/// What the accept loop needs to start a connection.
struct Accept {
    builder: Arc<Builder<TokioExecutor>>,
    /// Cloned into every connection, which shuts down gracefully when it changes (the drain).
    connections: watch::Receiver<()>,
    limits: Arc<Limits>,
    header_read_timeout: Duration,
    /// Cancelled at the drain deadline: every connection task still running ends.
    abort: CancellationToken,
}

impl Accept {
    /// Starts serving an accepted connection, or closes it when its address or the server is
    /// at its connection limit.
    async fn connection(&self, accepted: std::io::Result<(TcpStream, SocketAddr)>, app: &App) {
        let (stream, peer) = match accepted {
            Ok(conn) => conn,
            Err(err) => {
                // Usually EMFILE: back off instead of spinning.
                tracing::warn!(error = %err, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                return;
            }
        };
        let slot = match Limits::enter(&self.limits, peer.ip()) {
            Ok(slot) => slot,
            Err(limit) => {
                // Closed before anything is read or allocated for it: a client at its limit
                // costs the server an accept and a close, and holds no descriptor.
                app.metrics.connection_refused(limit);
                tracing::debug!(%peer, limit = limit.label(), "connection refused: at the connection limit");
                return;
            }
        };
        if let Err(err) = stream.set_nodelay(true) {
            tracing::debug!(error = %err, "cannot set TCP_NODELAY");
        }
        let idle = Arc::new(Idle::new());
        let router = app.router.clone();
        let counted = Arc::clone(&idle);
        let mut leave = Leave::new(self.connections.clone());
        let (readiness, goaway) = (app.readiness.clone(), leave.asker());
        let metrics = app.metrics.clone();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            // Started here, where hyper hands the request over: a request whose connection is
            // closed as it arrives is dropped before the router ever runs, and is logged too.
            let (record, unanswered) =
                RequestRecord::begin(&request, Some(peer.ip()), metrics.clone());
            request.extensions_mut().insert(record);
            request.extensions_mut().insert(ConnectInfo(peer));
            let version = request.version();
            let busy = Idle::begin(&counted);
            let served = router.clone().oneshot(request.map(Body::new));
            let (readiness, goaway) = (readiness.clone(), Arc::clone(&goaway));
            async move {
                let mut response = served.await?;
                unanswered.answered();
                if readiness.is_draining() {
                    drain::leave(&mut response, version, &goaway);
                }
                Ok::<_, Infallible>(busy.until_sent(response))
            }
        });
        let builder = Arc::clone(&self.builder);
        let timeout = self.header_read_timeout;
        let abort = self.abort.clone();
        let serving = async move {
            let mut serving = std::pin::pin!(builder
                .serve_connection_with_upgrades(TokioIo::new(stream), service)
                .into_owned());
            // hyper's graceful shutdown once told (drain, or an HTTP/2 answer while draining):
            // GOAWAY on HTTP/2, HTTP/1 closed after the answer in progress or at once if idle.
            let until_done = async {
                let mut told = false;
                loop {
                    tokio::select! {
                        output = serving.as_mut() => return output,
                        () = leave.told(), if !told => {
                            serving.as_mut().graceful_shutdown();
                            told = true;
                        }
                    }
                }
            };
            match idle::close_when_idle(until_done, &idle, timeout).await {
                Some(Ok(())) => {}
                Some(Err(err)) => {
                    tracing::debug!(error = %err, %peer, "connection ended with an error");
                }
                None => tracing::debug!(%peer, "closing a connection idle for the timeout"),
            }
        };
        tokio::spawn(async move {
            tokio::select! {
                () = serving => {}
                () = abort.cancelled() => tracing::debug!(%peer, "connection dropped at the drain deadline"),
            }
            drop(slot);
        });
    }
}

/// Connections open, in all and per client address.
#[derive(Debug)]
struct Limits {
    per_address: usize,
    total: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    /// Only addresses with a connection open: an entry goes with its last connection.
    by_address: HashMap<IpAddr, usize>,
}

/// One open connection, counted until dropped.
#[derive(Debug)]
struct Slot {
    limits: Arc<Limits>,
    peer: IpAddr,
}

impl Limits {
    fn new(options: &ServeOptions) -> Self {
        Self {
            per_address: options.max_connections_per_address.max(1),
            total: options.max_connections.max(1),
            open: Mutex::default(),
        }
    }

    /// Counts a connection from `peer` in, or names the limit it would pass.
    fn enter(limits: &Arc<Self>, peer: IpAddr) -> Result<Slot, ConnectionLimit> {
        let mut open = limits.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.total >= limits.total {
            return Err(ConnectionLimit::Total);
        }
        let from_peer = open.by_address.entry(peer).or_default();
        if *from_peer >= limits.per_address {
            return Err(ConnectionLimit::Address);
        }
        *from_peer += 1;
        open.total += 1;
        Ok(Slot {
            limits: Arc::clone(limits),
            peer,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self
            .limits
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        open.total = open.total.saturating_sub(1);
        if let Entry::Occupied(mut entry) = open.by_address.entry(self.peer) {
            *entry.get_mut() = entry.get().saturating_sub(1);
            if *entry.get() == 0 {
                entry.remove();
            }
        }
    }
}

/// Completes on SIGTERM or Ctrl-C.
pub fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    // The handlers are installed here, when this is called, not when the future is first
    // polled: a SIGTERM that arrives once the server says it is listening must find them
    // (it killed the process outright before, when it came within that gap).
    #[cfg(unix)]
    let (interrupt, terminate) = {
        use tokio::signal::unix::{signal, SignalKind};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let wait = |signal: Option<tokio::signal::unix::Signal>| async move {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(interrupt) => tracing::info!("received Ctrl-C"),
                () = wait(terminate) => tracing::info!("received SIGTERM"),
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_ok() {
                tracing::info!("received Ctrl-C");
            } else {
                std::future::pending::<()>().await;
            }
        }
    }
}

//! `appzone-server serve`: its options, and starting the service on them.

use std::io::Write;
use std::time::Duration;

use anyhow::anyhow;
use clap::Args;

use crate::http::HttpConfig;
use crate::serve::{serve, shutdown_signal, ServeOptions};
use crate::storage::{PoolSettings, Store};
use crate::ServiceConfig;

/// The address `serve` listens on, and `healthcheck` probes, by default.
pub(super) const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on: HOST:PORT, where HOST is an IP address or a name such as
    /// `localhost` (port 0 picks a free port).
    #[arg(long, env = "APPZONE_LISTEN", default_value = DEFAULT_LISTEN, value_parser = parse_listen)]
    pub listen: String,
    /// Seed an organization `demo` with keys and profiles, and print curl lines to try.
    #[arg(long)]
    pub demo: bool,
    /// Requests per second allowed per API key; 0 disables the limit.
    #[arg(long, env = "APPZONE_RATE_LIMIT_PER_KEY", default_value_t = ServiceConfig::DEFAULT_RATE_LIMIT_PER_KEY)]
    pub rate_limit_per_key: u32,
    /// Failed authentications per minute allowed per client address (429 beyond); 0 disables.
    #[arg(long, env = "APPZONE_AUTH_FAILURES_PER_MINUTE", default_value_t = ServiceConfig::DEFAULT_AUTH_FAILURES_PER_MINUTE)]
    pub auth_failures_per_minute: u32,
    /// Redis URL (`redis://[:PASSWORD@]HOST[:PORT][/DB]`) where both rate limits are enforced
    /// for all replicas together; without it each replica counts on its own. When Redis fails
    /// or is slow, each request falls back to the replica's own limits.
    // The environment's value is never shown: it may hold a password.
    #[arg(long, env = "APPZONE_REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// Seconds a request may take before it is answered 503 `unavailable`.
    #[arg(long, env = "APPZONE_REQUEST_TIMEOUT_SECS", default_value_t = HttpConfig::DEFAULT_REQUEST_TIMEOUT_SECS)]
    pub request_timeout_secs: u64,
    /// Most requests in flight; beyond it requests are shed at once with 503.
    #[arg(long, env = "APPZONE_MAX_IN_FLIGHT", default_value_t = HttpConfig::DEFAULT_MAX_IN_FLIGHT)]
    pub max_in_flight: usize,
    /// Largest request body in bytes (413 `payload_too_large` beyond).
    #[arg(long, env = "APPZONE_MAX_BODY_BYTES", default_value_t = HttpConfig::DEFAULT_MAX_BODY_BYTES)]
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers) in bytes, at least 8192 (431 beyond).
    #[arg(long, env = "APPZONE_MAX_HEADER_BYTES", default_value_t = ServeOptions::DEFAULT_MAX_HEADER_BYTES)]
    pub max_header_bytes: usize,
    /// Origin allowed to call the API from a browser (CORS), e.g. an API portal; repeat or
    /// separate with commas. CORS is off when none is given.
    #[arg(
        long = "cors-allow-origin",
        env = "APPZONE_CORS_ALLOW_ORIGINS",
        value_delimiter = ','
    )]
    pub cors_allow_origins: Vec<String>,
    /// Seconds an API-key lookup is cached. A revocation reaches this server within a second
    /// through the change log; should the change log not be read, within this time.
    #[arg(long, env = "APPZONE_KEY_CACHE_TTL_SECS", default_value_t = ServiceConfig::DEFAULT_KEY_CACHE_TTL_SECS)]
    pub key_cache_ttl_secs: u64,
    /// Seconds between checks for catalog changes made by other replicas or the CLI.
    #[arg(long, env = "APPZONE_CATALOG_REFRESH_SECS", default_value_t = ServiceConfig::DEFAULT_CATALOG_REFRESH_SECS)]
    pub catalog_refresh_secs: u64,
    /// Days a deleted profile stays restorable before it is purged.
    #[arg(long, env = "APPZONE_TOMBSTONE_RETENTION_DAYS", default_value_t = ServiceConfig::DEFAULT_TOMBSTONE_RETENTION_DAYS)]
    pub tombstone_retention_days: u64,
    /// Seconds a client may take to send its request head; a connection with no request in
    /// flight for as long is closed.
    #[arg(long, env = "APPZONE_HEADER_READ_TIMEOUT_SECS", default_value_t = ServeOptions::DEFAULT_HEADER_READ_TIMEOUT_SECS)]
    pub header_read_timeout_secs: u64,
    /// Seconds the server goes on accepting and serving after SIGTERM or Ctrl-C, with /readyz
    /// answering 503, so load balancers stop sending to it first (Kubernetes: a few seconds).
    #[arg(long, env = "APPZONE_SHUTDOWN_DELAY_SECS", default_value_t = ServeOptions::DEFAULT_SHUTDOWN_DELAY_SECS)]
    pub shutdown_delay_secs: u64,
    /// Seconds in-flight requests get to finish once the server stops accepting (after the
    /// shutdown delay); connections still open then are closed and the process exits.
    #[arg(long, env = "APPZONE_DRAIN_TIMEOUT_SECS", default_value_t = ServeOptions::DEFAULT_DRAIN_TIMEOUT_SECS)]
    pub drain_timeout_secs: u64,
    /// Most connections open at once from one client address; more are closed as soon as
    /// accepted (counted in appzone_connections_refused_total).
    #[arg(long, env = "APPZONE_MAX_CONNECTIONS_PER_ADDRESS", default_value_t = ServeOptions::DEFAULT_MAX_CONNECTIONS_PER_ADDRESS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections_per_address: u64,
    /// Most connections open at once in all; keep it under the file-descriptor limit.
    #[arg(long, env = "APPZONE_MAX_CONNECTIONS", default_value_t = ServeOptions::DEFAULT_MAX_CONNECTIONS as u64, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Most database connections.
    #[arg(long, env = "APPZONE_DB_MAX_CONNECTIONS", default_value_t = PoolSettings::DEFAULT_MAX_CONNECTIONS)]
    pub db_max_connections: u32,
    /// Milliseconds a request waits for a busy pool's database connection before answering
    /// 503; once the database is known unreachable, requests that need it answer 503 at once.
    #[arg(long, env = "APPZONE_DB_ACQUIRE_TIMEOUT_MS", default_value_t = PoolSettings::DEFAULT_ACQUIRE_TIMEOUT_MS)]
    pub db_acquire_timeout_ms: u64,
}

/// `HOST:PORT` with a port number; the host is resolved when the server binds.
pub(super) fn parse_listen(listen: &str) -> Result<String, String> {
    let valid = listen
        .rsplit_once(':')
        .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
    if valid {
        Ok(listen.to_owned())
    } else {
        Err("expected HOST:PORT, such as 127.0.0.1:8080, localhost:8080 or [::1]:8080".to_owned())
    }
}

pub(super) async fn run_serve(store: Store, args: ServeArgs) -> anyhow::Result<()> {
    let cors_origins = args
        .cors_allow_origins
        .iter()
        .map(|origin| {
            http::HeaderValue::from_str(origin)
                .map_err(|_| anyhow!("invalid CORS origin {origin:?}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let config = ServiceConfig {
        rate_limit_per_key: args.rate_limit_per_key,
        auth_failures_per_minute: args.auth_failures_per_minute,
        redis_url: args.redis_url,
        http: HttpConfig {
            request_timeout: Duration::from_secs(args.request_timeout_secs.max(1)),
            max_in_flight: args.max_in_flight.max(1),
            max_body_bytes: args.max_body_bytes,
            cors_origins,
            ..HttpConfig::default()
        },
        key_cache_ttl: Duration::from_secs(args.key_cache_ttl_secs),
        catalog_refresh: Duration::from_secs(args.catalog_refresh_secs.max(1)),
        tombstone_retention: Duration::from_secs(args.tombstone_retention_days * 24 * 3600),
        ..ServiceConfig::default()
    };
    let demo = if args.demo {
        Some(crate::demo::seed(&store).await?)
    } else {
        None
    };
    let service = crate::service(store, &config).await?;
    let listener = tokio::net::TcpListener::bind(args.listen.as_str())
        .await
        .map_err(|e| anyhow!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    // Before "listening": a SIGTERM from then on shuts down gracefully.
    let shutdown = shutdown_signal();
    tracing::info!(%addr, "appzone-server listening");
    if let Some(demo) = demo {
        // On stdout, what the person asked for; never on stderr, which carries the log lines
        // a log shipper takes to a store where keys must not go. One write, and its failure
        // (a reader that closed the pipe) ignored: `println!` would panic and stop the server.
        let text = format!("\n{}\n", demo.curl_lines(&format!("http://{addr}")));
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush());
    }
    let options = ServeOptions {
        header_read_timeout: Duration::from_secs(args.header_read_timeout_secs.max(1)),
        drain_timeout: Duration::from_secs(args.drain_timeout_secs),
        shutdown_delay: Duration::from_secs(args.shutdown_delay_secs),
        max_header_bytes: args.max_header_bytes,
        max_connections_per_address: usize::try_from(args.max_connections_per_address)
            .unwrap_or(usize::MAX),
        max_connections: usize::try_from(args.max_connections).unwrap_or(usize::MAX),
    };
    serve(listener, service.app.clone(), shutdown, options).await;
    Ok(())
}

//! appzone-server: the appzone API over SQLite or PostgreSQL, and its operator CLI.
//!
//! Code map (see `docs/ARCHITECTURE.md`):
//! - [`serve`]: the accept loop; a request enters here.
//! - [`http`]: routing, middleware, handlers; [`http::auth`] authorizes, [`http::error`] is the
//!   one place errors become the contract's body.
//! - [`storage`]: the only module with SQL; knows no HTTP.
//! - [`catalog`]: the in-memory zone snapshot; [`model`]: the domain types below storage, the
//!   catalog file format among them.
//! - [`keys`]: API-key digests, verification and its cache; [`last_used`]: when each key was
//!   last used, written at most once a minute; [`limits`]: the rate limits.
//! - [`metrics`]: the Prometheus registry and its exposition.
//! - [`mappings`]: organizations' zone mappings: the cloud output they are taken from, and the
//!   cache the identity listing reads them through.
//! - [`change_follower`]: follows the change log (`storage`'s), so keys revoked, catalogs
//!   imported and zone mappings changed elsewhere reach this process within a second.
//! - [`readiness`]: what `/readyz` reports, and the database probe behind it.
//! - [`cli`]: the `appzone-server` command line.

pub mod catalog;
pub mod change_follower;
pub mod cli;
pub mod demo;
pub mod http;
pub mod keys;
pub mod last_used;
pub mod limits;
pub mod logging;
pub mod mappings;
pub mod metrics;
pub mod model;
pub mod readiness;
pub mod serve;
pub mod storage;

use std::time::Duration;

use axum::body::Bytes;
use tokio::task::JoinHandle;

use catalog::Catalog;
use http::ops::OpenApiJson;
use http::{AppState, HttpConfig, SharedState};
use keys::KeyVerifier;
use last_used::LastUsed;
use limits::shared::SharedLimiter;
use limits::RateLimits;
use metrics::Metrics;
use model::catalog_file::CatalogFile;
use storage::{Store, StoreError};

/// Behaviour settings of the service (not of the listener).
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// How long key lookups are cached; revocation takes effect within it.
    pub key_cache_ttl: Duration,
    /// How often the catalog version is polled.
    pub catalog_refresh: Duration,
    /// How often the change log is read whatever the notices say (see [`change_follower::POLL`]).
    pub change_poll: Duration,
    /// How long deleted profiles stay restorable.
    pub tombstone_retention: Duration,
    /// How often expired tombstones are purged.
    pub purge_interval: Duration,
    /// Requests per second per API key; 0 disables.
    pub rate_limit_per_key: u32,
    /// Failed authentications per minute per client address; 0 disables.
    pub auth_failures_per_minute: u32,
    /// Redis URL where both limits are enforced for all replicas; `None`: each replica counts
    /// on its own.
    pub redis_url: Option<String>,
    /// Put before every Redis key (`<prefix>key:<key id>`, `<prefix>addr:<address>`).
    pub redis_key_prefix: String,
    /// The longest a request waits for Redis before its limit is decided locally.
    pub redis_timeout: Duration,
    /// Limits of the HTTP layer.
    pub http: HttpConfig,
}

/// The default [`ServiceConfig::redis_key_prefix`].
pub const REDIS_KEY_PREFIX: &str = "appzone:rl:";

/// The defaults, in the units of the `serve` options that set them: the options'
/// `default_value_t` is these constants, so the library and the CLI cannot disagree.
impl ServiceConfig {
    /// Default of [`ServiceConfig::key_cache_ttl`], in seconds.
    pub const DEFAULT_KEY_CACHE_TTL_SECS: u64 = 10;
    /// Default of [`ServiceConfig::catalog_refresh`], in seconds.
    pub const DEFAULT_CATALOG_REFRESH_SECS: u64 = 2;
    /// Default of [`ServiceConfig::tombstone_retention`], in days.
    pub const DEFAULT_TOMBSTONE_RETENTION_DAYS: u64 = 30;
    /// Default of [`ServiceConfig::rate_limit_per_key`].
    pub const DEFAULT_RATE_LIMIT_PER_KEY: u32 = 1000;
    /// Default of [`ServiceConfig::auth_failures_per_minute`].
    pub const DEFAULT_AUTH_FAILURES_PER_MINUTE: u32 = 600;
}

impl Default for ServiceConfig {
    fn default() -> Self {
        Self {
            key_cache_ttl: Duration::from_secs(Self::DEFAULT_KEY_CACHE_TTL_SECS),
            catalog_refresh: Duration::from_secs(Self::DEFAULT_CATALOG_REFRESH_SECS),
            change_poll: change_follower::POLL,
            tombstone_retention: Duration::from_secs(
                Self::DEFAULT_TOMBSTONE_RETENTION_DAYS * 24 * 3600,
            ),
            purge_interval: Duration::from_secs(3600),
            rate_limit_per_key: Self::DEFAULT_RATE_LIMIT_PER_KEY,
            auth_failures_per_minute: Self::DEFAULT_AUTH_FAILURES_PER_MINUTE,
            redis_url: None,
            redis_key_prefix: REDIS_KEY_PREFIX.to_owned(),
            redis_timeout: limits::shared::CALL_TIMEOUT,
            http: HttpConfig::default(),
        }
    }
}

/// Checks the database keeps commits durable, applies migrations, and loads the built-in
/// catalog into an empty one (or over an earlier release's untouched built-in catalog).
pub async fn prepare(store: &Store) -> Result<(), StoreError> {
    store.check_durability().await?;
    store.migrate().await?;
    let builtin = CatalogFile::builtin();
    if store.seed_catalog_if_empty(&builtin).await? {
        tracing::info!("loaded the built-in catalog into the empty database");
        return Ok(());
    }
    // A database an earlier release seeded keeps that release's built-in catalog, without zone
    // identities: replace it with this one's (it only adds). A catalog an operator imported is
    // theirs, and stays.
    let (_, stored) = store.load_catalog().await?;
    if stored.is_earlier_builtin(&builtin) {
        let import = store.import_catalog(&builtin, false).await?;
        tracing::info!(changes = %import.changes, "upgraded the built-in catalog an earlier release loaded (zone identities, regions without zones)");
    }
    Ok(())
}

/// A ready service: the application and its background tasks (stopped when this is dropped).
#[derive(Debug)]
pub struct Service {
    /// The application, ready for [`serve::serve`].
    pub app: http::App,
    /// The state the application was built with.
    pub state: AppState,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for Service {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Builds the service on a prepared store and starts its background tasks.
pub async fn service(store: Store, config: &ServiceConfig) -> Result<Service, StoreError> {
    let catalog = Catalog::load(&store).await?;
    let metrics = Metrics::new();
    let mut limits = RateLimits::new(
        config.rate_limit_per_key,
        config.auth_failures_per_minute,
        metrics.clone(),
    );
    if let Some(url) = &config.redis_url {
        // `serve` has checked the URL; a bad one here leaves the limits per replica.
        match SharedLimiter::new(
            url,
            &config.redis_key_prefix,
            config.redis_timeout,
            metrics.clone(),
        ) {
            Ok(shared) => {
                tracing::info!(redis = %storage::redact_url(url), "rate limits are enforced in Redis, shared by the replicas");
                limits = limits.shared(shared);
            }
            Err(err) => {
                tracing::error!(error = %err, "invalid Redis URL: rate limits are per replica");
            }
        }
    }
    let readiness = readiness::Readiness::new(store.availability().clone());
    let state = AppState::new(SharedState {
        keys: KeyVerifier::new(store.clone(), config.key_cache_ttl),
        mappings: mappings::MappingCache::new(store.clone(), config.key_cache_ttl),
        last_used: LastUsed::new(store.clone()),
        limits: limits.clone(),
        metrics,
        http: config.http.clone(),
        catalog: catalog.clone(),
        openapi: OpenApiJson(Bytes::from(appzone_contract::openapi::document_json_with(
            &config.http.deprecations,
        ))),
        store: store.clone(),
        readiness,
    });
    let watcher = tokio::spawn(readiness::watch_database(store.clone()));
    let expirer = tokio::spawn(expire_cached_keys(
        state.keys.clone(),
        state.last_used.clone(),
    ));
    let follower = tokio::spawn(change_follower::follow(
        store.clone(),
        state.keys.clone(),
        state.mappings.clone(),
        catalog.clone(),
        config.change_poll,
    ));
    let refresher = tokio::spawn(catalog.refresh_forever(store.clone(), config.catalog_refresh));
    let purger = tokio::spawn(purge_forever(
        store,
        config.tombstone_retention,
        config.purge_interval,
    ));
    Ok(Service {
        app: http::app(state.clone()),
        state,
        tasks: vec![
            follower,
            refresher,
            purger,
            expirer,
            watcher,
            tokio::spawn(forget_idle_limits(limits)),
        ],
    })
}

/// Frees expired key-cache entries while the server is quiet (the cache otherwise does it only
/// when it is used), so a past flood of wrong keys does not keep its memory.
/// Also drops the last-use entries past their write interval, so that map holds only the keys
/// used lately.
async fn expire_cached_keys(keys: KeyVerifier, last_used: LastUsed) {
    let mut tick = tokio::time::interval(keys::NEGATIVE_TTL);
    loop {
        tick.tick().await;
        keys.run_pending_tasks();
        last_used.forget_old();
    }
}

async fn forget_idle_limits(limits: RateLimits) {
    let mut tick = tokio::time::interval(Duration::from_secs(60));
    loop {
        tick.tick().await;
        limits.forget_idle();
    }
}

async fn purge_forever(store: Store, retention: Duration, interval: Duration) {
    let mut tick = tokio::time::interval(interval);
    loop {
        tick.tick().await;
        let tombstones = store.purge_tombstones(cutoff_ms(retention)).await;
        log_purge(tombstones, "expired profile tombstones");
        let keys = store
            .purge_idempotency_keys(cutoff_ms(storage::IDEMPOTENCY_TTL))
            .await;
        log_purge(keys, "expired idempotency keys");
        let changes = store
            .purge_changes(cutoff_ms(Duration::from_secs(3600)))
            .await;
        log_purge(changes, "change log entries older than an hour");
    }
}

/// The time, in Unix milliseconds, `age` ago.
fn cutoff_ms(age: Duration) -> i64 {
    model::now_ms().saturating_sub(i64::try_from(age.as_millis()).unwrap_or(i64::MAX))
}

fn log_purge(outcome: Result<u64, StoreError>, what: &str) {
    match outcome {
        Ok(0) => {}
        Ok(purged) => tracing::info!(purged, "purged {what}"),
        Err(err) => tracing::warn!(error = %err, "purge of {what} failed; will retry"),
    }
}

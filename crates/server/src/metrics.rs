//! Prometheus metrics: the registry every layer counts into, and its exposition in the format
//! a scraper asks for with `Accept` (served by `http/metrics.rs`): OpenMetrics 1.0.0 (what
//! Prometheus asks for first), else the Prometheus text format 0.0.4 (browsers, `curl`, older
//! scrapers).
//!
//! Route labels are the contract's path templates (never raw paths, which would let callers
//! create unbounded label values); methods outside the usual set are counted as `OTHER`.
//!
//! Every family whose label values are a closed set (the rate limits' scopes, the connection
//! limits, the pool's states) has each of its series from the start, at 0, so that `rate()`,
//! `increase()` and `absent()` in an alert work before the first event; the request families,
//! whose routes, methods and statuses are open-ended, get a series at a combination's first
//! answer. `appzone_build_info` states the version as a label, and the `process_*` families of
//! Prometheus's client libraries are sampled by the metrics-process crate at each scrape
//! (`metrics/process.rs`).

mod format;
mod process;

use format::text_004;
pub use format::Format;

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use crate::catalog::Catalog;
use crate::readiness::{DatabaseState, Readiness};
use crate::storage::Store;

/// Upper bounds of the latency buckets, in seconds (an `+Inf` bucket follows).
const LATENCY_BOUNDS_SECONDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BOUNDS_SECONDS)
}

const METHODS: [&str; 8] = [
    "GET", "HEAD", "DELETE", "POST", "PUT", "PATCH", "OPTIONS", "OTHER",
];

fn method_index(method: &Method) -> usize {
    match *method {
        Method::GET => 0,
        Method::HEAD => 1,
        Method::DELETE => 2,
        Method::POST => 3,
        Method::PUT => 4,
        Method::PATCH => 5,
        Method::OPTIONS => 6,
        _ => 7,
    }
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

/// The limits a request is refused with 429 by: the `scope` label of
/// `appzone_rate_limited_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RateLimitScope {
    /// The per-key request rate.
    Key,
    /// Failed authentications per client address.
    Address,
}

impl RateLimitScope {
    /// Every scope, each a series from the start.
    pub const ALL: [Self; 2] = [Self::Key, Self::Address];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Key => "key",
            Self::Address => "address",
        }
    }
}

/// The limits a connection is closed at once by: the `limit` label of
/// `appzone_connections_refused_total`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConnectionLimit {
    /// Connections open at once from one client address.
    Address,
    /// Connections open at once in all.
    Total,
}

impl ConnectionLimit {
    /// Every limit, each a series from the start.
    pub const ALL: [Self; 2] = [Self::Address, Self::Total];

    /// The label value.
    pub fn label(self) -> &'static str {
        match self {
            Self::Address => "address",
            Self::Total => "total",
        }
    }
}

/// The states of `appzone_db_pool_connections`.
const POOL_STATES: [&str; 2] = ["idle", "in_use"];

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ScopeLabels {
    scope: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct BuildLabels {
    version: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LimitLabels {
    limit: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    state: &'static str,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<RequestLabels, Histogram, fn() -> Histogram>,
    rate_limited: Family<ScopeLabels, Counter>,
    rate_limit_fallbacks: Counter,
    rate_limit_redis_calls: Counter,
    rate_limit_shared: Gauge,
    connections_refused: Family<LimitLabels, Counter>,
    deletes: Counter,
    pool: Family<PoolLabels, Gauge>,
    catalog_version: Gauge,
    catalog_compiled: Gauge,
    catalog_oldest_facts: Gauge,
    database_up: Gauge,
    draining: Gauge,
}

/// The service's metrics. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Metrics(Arc<Inner>);

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh registry with every metric registered, and every series of a closed label set
    /// at 0.
    pub fn new() -> Self {
        let mut root = Registry::default();
        root.register_collector(Box::new(process::ProcessCollector::new()));
        let registry = root.sub_registry_with_prefix("appzone");
        let build_info = Family::<BuildLabels, Gauge>::default();
        registry.register(
            "build_info",
            "1, with the server's version as a label",
            build_info.clone(),
        );
        build_info
            .get_or_create(&BuildLabels {
                version: env!("CARGO_PKG_VERSION"),
            })
            .set(1);
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let latency: Family<RequestLabels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "http_request_duration_seconds",
            "Time to answer, by route and status",
            latency.clone(),
        );
        let rate_limited = Family::<ScopeLabels, Counter>::default();
        registry.register(
            "rate_limited",
            "Requests refused with 429, by limit (key or address)",
            rate_limited.clone(),
        );
        let rate_limit_fallbacks = Counter::default();
        registry.register(
            "rate_limit_fallbacks",
            "Requests whose rate limit was decided by this replica's own buckets because Redis \
             failed or was being skipped after a failure (0 without Redis)",
            rate_limit_fallbacks.clone(),
        );
        let rate_limit_redis_calls = Counter::default();
        registry.register(
            "rate_limit_redis_calls",
            "Calls made to Redis for the shared rate limits; each one decides every request \
             that arrived while the one before was under way (0 without Redis)",
            rate_limit_redis_calls.clone(),
        );
        let rate_limit_shared = Gauge::default();
        registry.register(
            "rate_limit_shared",
            "1 while the rate limits are enforced in Redis for all replicas; 0 when each replica \
             counts on its own (no Redis configured, or falling back after a failure)",
            rate_limit_shared.clone(),
        );
        let connections_refused = Family::<LimitLabels, Counter>::default();
        registry.register(
            "connections_refused",
            "Connections closed as soon as accepted, by limit (per address or total)",
            connections_refused.clone(),
        );
        let deletes = Counter::default();
        registry.register(
            "profiles_deleted",
            "Application profiles deleted (204 answers)",
            deletes.clone(),
        );
        let pool = Family::<PoolLabels, Gauge>::default();
        registry.register(
            "db_pool_connections",
            "Database pool connections, by state",
            pool.clone(),
        );
        let catalog_version = Gauge::default();
        registry.register(
            "catalog_version",
            "Version of the zone catalog being served",
            catalog_version.clone(),
        );
        let catalog_compiled = Gauge::default();
        registry.register(
            "catalog_compiled_timestamp_seconds",
            "When the zone catalog being served was compiled (its source's compiled_on, \
             midnight UTC), in Unix seconds; 0 when the catalog does not say",
            catalog_compiled.clone(),
        );
        let catalog_oldest_facts = Gauge::default();
        registry.register(
            "catalog_oldest_facts_timestamp_seconds",
            "The oldest of the regions' newest facts: for each region the catalog's compile \
             date or its last catalog import --from when later, the oldest of these (midnight \
             UTC), in Unix seconds; 0 when the catalog gives no date",
            catalog_oldest_facts.clone(),
        );
        let database_up = Gauge::default();
        registry.register(
            "database_up",
            "1 when the last database check (every second) got an answer, 0 when it failed; \
             listings go on while it is 0, deletes answer 503",
            database_up.clone(),
        );
        let draining = Gauge::default();
        registry.register(
            "draining",
            "1 once shutdown has begun (/readyz answers 503), else 0",
            draining.clone(),
        );
        // The closed label sets, each series at 0 until its first event.
        for scope in RateLimitScope::ALL {
            rate_limited
                .get_or_create(&ScopeLabels {
                    scope: scope.label(),
                })
                .inc_by(0);
        }
        for limit in ConnectionLimit::ALL {
            connections_refused
                .get_or_create(&LimitLabels {
                    limit: limit.label(),
                })
                .inc_by(0);
        }
        for state in POOL_STATES {
            pool.get_or_create(&PoolLabels { state }).set(0);
        }
        Self(Arc::new(Inner {
            registry: root,
            requests,
            latency,
            rate_limited,
            rate_limit_fallbacks,
            rate_limit_redis_calls,
            rate_limit_shared,
            connections_refused,
            deletes,
            pool,
            catalog_version,
            catalog_compiled,
            catalog_oldest_facts,
            database_up,
            draining,
        }))
    }

    /// Counts one answered request under its route template (or `unmatched`).
    pub fn observe(&self, method: &Method, route: &'static str, status: u16, elapsed: Duration) {
        let labels = RequestLabels {
            method: METHODS[method_index(method)],
            route,
            status,
        };
        self.0.requests.get_or_create(&labels).inc();
        self.0
            .latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Counts one 429.
    pub fn rate_limited(&self, scope: RateLimitScope) {
        self.0
            .rate_limited
            .get_or_create(&ScopeLabels {
                scope: scope.label(),
            })
            .inc();
    }

    /// Counts one request limited locally because Redis failed.
    pub fn rate_limit_fallback(&self) {
        self.0.rate_limit_fallbacks.inc();
    }

    /// Counts one call to Redis for the shared limits.
    pub fn rate_limit_redis_call(&self) {
        self.0.rate_limit_redis_calls.inc();
    }

    /// Whether the limits are enforced in Redis now.
    pub fn rate_limit_shared(&self, shared: bool) {
        self.0.rate_limit_shared.set(i64::from(shared));
    }

    /// Counts one connection closed at once because of `limit`.
    pub fn connection_refused(&self, limit: ConnectionLimit) {
        self.0
            .connections_refused
            .get_or_create(&LimitLabels {
                limit: limit.label(),
            })
            .inc();
    }

    /// Counts one deleted profile.
    pub fn deleted(&self) {
        self.0.deletes.inc();
    }

    /// The exposition in `format`, the gauges read from their sources first.
    pub fn render(
        &self,
        store: &Store,
        catalog: &Catalog,
        readiness: &Readiness,
        format: Format,
    ) -> Result<String, std::fmt::Error> {
        self.0
            .database_up
            .set(i64::from(readiness.database() == DatabaseState::Up));
        self.0.draining.set(i64::from(readiness.is_draining()));
        let (open, idle) = store.pool_usage();
        let idle = i64::try_from(idle).unwrap_or(i64::MAX);
        let [idle_state, in_use_state] = POOL_STATES;
        self.0
            .pool
            .get_or_create(&PoolLabels { state: idle_state })
            .set(idle);
        self.0
            .pool
            .get_or_create(&PoolLabels {
                state: in_use_state,
            })
            .set(i64::from(open) - idle);
        let snapshot = catalog.snapshot();
        self.0.catalog_version.set(snapshot.version);
        self.0.catalog_compiled.set(snapshot.compiled_at_secs());
        self.0.catalog_oldest_facts.set(snapshot.oldest_facts_secs);
        self.encode(format)
    }

    fn encode(&self, format: Format) -> Result<String, std::fmt::Error> {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.0.registry)?;
        match format {
            Format::OpenMetrics(_) => Ok(text),
            Format::Text => text_004(&text),
        }
    }
}

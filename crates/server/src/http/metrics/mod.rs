//! Prometheus metrics, served at `GET /metrics` in the text exposition format.
//!
//! Route labels are the contract's path templates (never raw paths, which would let callers
//! create unbounded label values); methods outside the usual set are counted as `OTHER`.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use appzone_contract::paths::{matches_template, DELETE_PROFILE, LIST_ZONES};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Method};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::error::ApiError;
use crate::catalog::Catalog;
use crate::storage::Store;
use sharded::{ShardedCounter, ShardedHistogram};

mod sharded;

/// The route templates metrics and logs may name, and `unmatched` last.
const ROUTES: [&str; 8] = [
    LIST_ZONES,
    DELETE_PROFILE,
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
    "unmatched",
];
const UNMATCHED: usize = ROUTES.len() - 1;

/// The route a request belongs to, for metrics and logs: one of a fixed set of templates, so
/// callers cannot create label values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteLabel(usize);

impl RouteLabel {
    /// `GET /api/v1/providers/{providerId}/regions/{regionId}/zones`.
    pub const LIST_ZONES: Self = Self(0);
    /// `DELETE /api/v1/applications/profiles/{profileId}`.
    pub const DELETE_PROFILE: Self = Self(1);

    /// The route template, or `unmatched`.
    pub fn as_str(self) -> &'static str {
        ROUTES[self.0]
    }

    pub(super) fn index(self) -> usize {
        self.0
    }

    pub(super) fn from_index(index: usize) -> Option<Self> {
        (index < ROUTES.len()).then_some(Self(index))
    }
}

/// The route template a request path belongs to, or `unmatched`. Computed from the path with
/// the contract's templates, so the outermost layer can label requests the router refused.
pub fn route_label(path: &str) -> RouteLabel {
    if path == "/docs" || path.starts_with("/docs/") {
        return RouteLabel(
            ROUTES
                .iter()
                .position(|r| *r == "/docs")
                .unwrap_or(UNMATCHED),
        );
    }
    let index = ROUTES[..UNMATCHED]
        .iter()
        .position(|template| matches_template(template, path))
        .unwrap_or(UNMATCHED);
    RouteLabel(index)
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

/// Statuses whose metric handles are kept resolved; others are looked up per request.
const STATUSES: [u16; 14] = [
    200, 204, 304, 400, 401, 403, 404, 405, 413, 429, 431, 500, 503, 504,
];

/// A request series' counter and histogram, resolved once.
#[derive(Debug)]
struct Series {
    requests: ShardedCounter,
    latency: ShardedHistogram,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: &'static str,
    status: u16,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ScopeLabels {
    scope: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PoolLabels {
    state: &'static str,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    requests: Family<RequestLabels, ShardedCounter>,
    latency: Family<RequestLabels, ShardedHistogram>,
    rate_limited: Family<ScopeLabels, Counter>,
    deletes: Counter,
    pool: Family<PoolLabels, Gauge>,
    catalog_version: Gauge,
    /// Resolved series by method, route and status (`STATUSES`): the families' lookup hashes
    /// the labels and takes a lock, per request and per family.
    series: Box<[OnceLock<Series>]>,
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
    /// A fresh registry with every metric registered.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("appzone");
        let requests = Family::<RequestLabels, ShardedCounter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let latency = Family::<RequestLabels, ShardedHistogram>::default();
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
        Self(Arc::new(Inner {
            registry,
            requests,
            latency,
            rate_limited,
            deletes,
            pool,
            catalog_version,
            series: (0..METHODS.len() * ROUTES.len() * STATUSES.len())
                .map(|_| OnceLock::new())
                .collect(),
        }))
    }

    /// Counts one answered request.
    pub fn observe(&self, method: &Method, route: RouteLabel, status: u16, elapsed: Duration) {
        let (method, route) = (method_index(method), route.0);
        let labels = || RequestLabels {
            method: METHODS[method],
            route: ROUTES[route],
            status,
        };
        let Some(slot) = STATUSES.iter().position(|s| *s == status) else {
            let labels = labels();
            self.0.requests.get_or_create(&labels).inc();
            self.0.latency.get_or_create(&labels).observe(elapsed);
            return;
        };
        let series = self.0.series[(method * ROUTES.len() + route) * STATUSES.len() + slot]
            .get_or_init(|| {
                let labels = labels();
                Series {
                    requests: self.0.requests.get_or_create(&labels).clone(),
                    latency: self.0.latency.get_or_create(&labels).clone(),
                }
            });
        series.requests.inc();
        series.latency.observe(elapsed);
    }

    /// Counts one 429.
    pub fn rate_limited(&self, scope: &'static str) {
        self.0
            .rate_limited
            .get_or_create(&ScopeLabels { scope })
            .inc();
    }

    /// Counts one deleted profile.
    pub fn deleted(&self) {
        self.0.deletes.inc();
    }

    fn render(&self, store: &Store, catalog: &Catalog) -> Result<String, std::fmt::Error> {
        let (open, idle) = store.pool_usage();
        let idle = i64::try_from(idle).unwrap_or(i64::MAX);
        self.0
            .pool
            .get_or_create(&PoolLabels { state: "idle" })
            .set(idle);
        self.0
            .pool
            .get_or_create(&PoolLabels { state: "in_use" })
            .set(i64::from(open) - idle);
        self.0.catalog_version.set(catalog.snapshot().version);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.0.registry)?;
        Ok(text)
    }
}

/// `GET /metrics`.
pub async fn serve_metrics(
    State((metrics, store, catalog)): State<(Metrics, Store, Catalog)>,
) -> Response {
    match metrics.render(&store, &catalog) {
        Ok(text) => (
            [(
                CONTENT_TYPE,
                HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
            )],
            text,
        )
            .into_response(),
        Err(err) => ApiError::internal(format!("cannot encode metrics: {err}")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_labels_name_templates_and_nothing_else() {
        let cases = [
            ("/api/v1/providers/aws/regions/us-east-1/zones", LIST_ZONES),
            ("/api/v1/providers/a%2Fb/regions/r/zones", LIST_ZONES),
            ("/api/v1/providers//regions/us-east-1/zones", "unmatched"),
            (
                "/api/v1/providers/aws/regions/us-east-1/zones/",
                "unmatched",
            ),
            ("/api/v1/providers/aws/regions/us-east-1", "unmatched"),
            ("/api/v1/providers/", "unmatched"),
            ("/api/v1/applications/profiles/p1", DELETE_PROFILE),
            ("/api/v1/applications/profiles/", "unmatched"),
            ("/api/v1/applications/profiles/p1/x", "unmatched"),
            ("/healthz", "/healthz"),
            ("/healthz/", "unmatched"),
            ("/healthzz", "unmatched"),
            ("/readyz", "/readyz"),
            ("/metrics", "/metrics"),
            ("/openapi.json", "/openapi.json"),
            ("/docs", "/docs"),
            ("/docs/", "/docs"),
            ("/docs/swagger-ui.css", "/docs"),
            ("/docsx", "unmatched"),
            ("/", "unmatched"),
            ("", "unmatched"),
        ];
        for (path, expected) in cases {
            assert_eq!(route_label(path).as_str(), expected, "{path}");
        }
        // The labels handlers record name their own templates.
        assert_eq!(RouteLabel::LIST_ZONES.as_str(), LIST_ZONES);
        assert_eq!(RouteLabel::DELETE_PROFILE.as_str(), DELETE_PROFILE);
    }

    #[test]
    fn route_labels_need_no_escaping_in_log_lines() {
        // The direct request line writes the route between quotes without escaping it.
        for route in ROUTES {
            assert!(
                route
                    .bytes()
                    .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\'),
                "{route}"
            );
        }
    }
}

//! Prometheus metrics, served at `GET /metrics` in the text exposition format.
//!
//! Route labels are the contract's path templates (never raw paths, which would let callers
//! create unbounded label values); methods outside the usual set are counted as `OTHER`.

use std::sync::Arc;
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
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::error::ApiError;
use crate::catalog::Catalog;
use crate::storage::Store;

/// The route templates metrics and logs may name.
const ROUTES: [&str; 7] = [
    LIST_ZONES,
    DELETE_PROFILE,
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
];

/// The route template a request path belongs to, or `unmatched`. Computed from the path with
/// the contract's templates, so the outermost layer can label requests the router refused.
pub fn route_label(path: &str) -> &'static str {
    if path == "/docs" || path.starts_with("/docs/") {
        return "/docs";
    }
    ROUTES
        .iter()
        .find(|template| matches_template(template, path))
        .copied()
        .unwrap_or("unmatched")
}

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::DELETE => "DELETE",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::OPTIONS => "OPTIONS",
        _ => "OTHER",
    }
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

type HistogramFamily = Family<RequestLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new([
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
        5.0, 10.0,
    ])
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: HistogramFamily,
    rate_limited: Family<ScopeLabels, Counter>,
    deletes: Counter,
    pool: Family<PoolLabels, Gauge>,
    catalog_version: Gauge,
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
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests answered", requests.clone());
        let latency: HistogramFamily = Family::new_with_constructor(latency_histogram);
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
        }))
    }

    /// Counts one answered request.
    pub fn observe(&self, method: &Method, route: &'static str, status: u16, elapsed: Duration) {
        let labels = RequestLabels {
            method: method_label(method),
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

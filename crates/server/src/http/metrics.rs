//! Prometheus metrics, served at `GET /metrics` in the format the scraper asks for with
//! `Accept`: OpenMetrics 1.0.0 (what Prometheus asks for first), else the Prometheus text
//! format 0.0.4 (browsers, `curl`, older scrapers).
//!
//! Route labels are the contract's path templates (never raw paths, which would let callers
//! create unbounded label values); methods outside the usual set are counted as `OTHER`.
//!
//! Every family whose label values are a closed set (the rate limits' scopes, the connection
//! limits, the pool's states) has each of its series from the start, at 0, so that `rate()`,
//! `increase()` and `absent()` in an alert work before the first event; the request families,
//! whose routes, methods and statuses are open-ended, get a series at a combination's first
//! answer. `appzone_build_info` states the version as a label, and the `process_*` families of
//! Prometheus's client libraries (`process.rs`) are read from `/proc/self` at each scrape.

mod process;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::header::{ACCEPT, CONTENT_TYPE, VARY};
use http::{HeaderMap, HeaderValue, Method};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::error::ApiError;
use crate::catalog::Catalog;
use crate::health::{DatabaseState, Health};
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
    rate_limit_shared: Gauge,
    connections_refused: Family<LimitLabels, Counter>,
    deletes: Counter,
    pool: Family<PoolLabels, Gauge>,
    catalog_version: Gauge,
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
            rate_limit_shared,
            connections_refused,
            deletes,
            pool,
            catalog_version,
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

    fn render(
        &self,
        store: &Store,
        catalog: &Catalog,
        health: &Health,
        format: Format,
    ) -> Result<String, std::fmt::Error> {
        self.0
            .database_up
            .set(i64::from(health.database() == DatabaseState::Up));
        self.0.draining.set(i64::from(health.is_draining()));
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
        self.0.catalog_version.set(catalog.snapshot().version);
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

/// The exposition formats `/metrics` answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// The Prometheus text format 0.0.4.
    Text,
    /// OpenMetrics text, in the version asked for (the body is valid in both).
    OpenMetrics(OpenMetricsVersion),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OpenMetricsVersion {
    V1_0_0,
    V0_0_1,
}

impl Format {
    /// Best first when the client rates them equally.
    const ALL: [Self; 3] = [
        Self::Text,
        Self::OpenMetrics(OpenMetricsVersion::V1_0_0),
        Self::OpenMetrics(OpenMetricsVersion::V0_0_1),
    ];

    fn content_type(self) -> &'static str {
        match self {
            Self::Text => "text/plain; version=0.0.4; charset=utf-8",
            Self::OpenMetrics(OpenMetricsVersion::V1_0_0) => {
                "application/openmetrics-text; version=1.0.0; charset=utf-8"
            }
            Self::OpenMetrics(OpenMetricsVersion::V0_0_1) => {
                "application/openmetrics-text; version=0.0.1; charset=utf-8"
            }
        }
    }

    /// How specifically the media range `kind` (lowercase `type/subtype`) with `version`
    /// names this format: 3 with the same version, 2 without a version, 1 for `type/*`, 0 for
    /// `*/*`; `None` when it does not name it.
    fn specificity(self, kind: &str, version: Option<&str>) -> Option<u8> {
        let (media, own_version) = match self {
            Self::Text => ("text/plain", "0.0.4"),
            Self::OpenMetrics(OpenMetricsVersion::V1_0_0) => {
                ("application/openmetrics-text", "1.0.0")
            }
            Self::OpenMetrics(OpenMetricsVersion::V0_0_1) => {
                ("application/openmetrics-text", "0.0.1")
            }
        };
        if kind == media {
            return match version {
                None => Some(2),
                Some(v) if v == own_version => Some(3),
                Some(_) => None,
            };
        }
        let top = media.split('/').next().unwrap_or_default();
        match kind.split_once('/') {
            Some(("*", "*")) => Some(0),
            Some((t, "*")) if t == top => Some(1),
            _ => None,
        }
    }

    /// The format to answer `Accept` with, as content negotiation does (RFC 9110, 12.5.1):
    /// each format takes the quality of the most specific media range naming it; the highest
    /// quality wins, then the more specific range, then the range listed first, then the
    /// order of [`Format::ALL`] (so `*/*` gets the text format). Without `Accept`, or when it
    /// accepts none of them, the text format, as Prometheus's own libraries answer.
    fn negotiate(headers: &HeaderMap) -> Self {
        let ranges: Vec<(String, Option<String>, f32)> = headers
            .get_all(ACCEPT)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .filter_map(media_range)
            .collect();
        let mut best: Option<(Self, f32, u8, usize)> = None;
        for format in Self::ALL {
            // The most specific range naming the format, the first of equals.
            let mut rating: Option<(f32, u8, usize)> = None;
            for (position, (kind, version, quality)) in ranges.iter().enumerate() {
                if let Some(specificity) = format.specificity(kind, version.as_deref()) {
                    if rating.is_none_or(|(_, s, _)| specificity > s) {
                        rating = Some((*quality, specificity, position));
                    }
                }
            }
            let Some((quality, specificity, position)) = rating.filter(|(q, _, _)| *q > 0.0) else {
                continue;
            };
            let better = best.is_none_or(|(_, q, s, p)| {
                (quality, specificity, std::cmp::Reverse(position)) > (q, s, std::cmp::Reverse(p))
            });
            if better {
                best = Some((format, quality, specificity, position));
            }
        }
        best.map_or(Self::Text, |(format, ..)| format)
    }
}

/// One media range of `Accept`: lowercase `type/subtype`, its `version` parameter, its
/// quality. `None` when malformed (no `/`, a quality outside 0 to 1).
fn media_range(range: &str) -> Option<(String, Option<String>, f32)> {
    let mut parts = range.split(';');
    let kind = parts.next()?.trim().to_ascii_lowercase();
    if !kind.contains('/') {
        return None;
    }
    let (mut version, mut quality) = (None, 1.0);
    for param in parts {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_matches('"');
        match name.trim().to_ascii_lowercase().as_str() {
            "q" => {
                quality = value
                    .parse::<f32>()
                    .ok()
                    .filter(|q| (0.0..=1.0).contains(q))?;
            }
            "version" => version = Some(value.to_owned()),
            _ => {}
        }
    }
    Some((kind, version, quality))
}

/// The Prometheus text format 0.0.4 of prometheus-client's OpenMetrics text, which differs
/// in what this registry holds only in counters and the end: OpenMetrics names a counter
/// family `x` in `# HELP` and `# TYPE` and its sample `x_total`; 0.0.4 names the family as
/// its sample, `x_total`, or a parser takes the sample for an untyped metric of its own.
/// 0.0.4 has no `# UNIT` (its unit is in the name already) and no `# EOF`. Types 0.0.4 does
/// not know (OpenMetrics' `info`, `stateset`, `gaugehistogram`) are refused rather than sent
/// mislabelled; `unknown` is 0.0.4's `untyped`. Exemplars are not used here.
fn text_004(openmetrics: &str) -> Result<String, std::fmt::Error> {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(openmetrics.len());
    let mut help: Option<(&str, &str)> = None;
    for line in openmetrics.lines() {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            help = Some(rest.split_once(' ').unwrap_or((rest, "")));
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').ok_or(std::fmt::Error)?;
            let (suffix, kind) = match kind {
                "counter" => ("_total", kind),
                "gauge" | "histogram" | "summary" => ("", kind),
                "unknown" => ("", "untyped"),
                _ => return Err(std::fmt::Error),
            };
            if let Some((help_name, text)) = help.take() {
                if help_name != name {
                    return Err(std::fmt::Error);
                }
                writeln!(out, "# HELP {name}{suffix} {text}")?;
            }
            writeln!(out, "# TYPE {name}{suffix} {kind}")?;
            continue;
        }
        if help.is_some() {
            // A `# HELP` not followed by its `# TYPE`: not what prometheus-client writes.
            return Err(std::fmt::Error);
        }
        match line {
            "# EOF" => break,
            _ if line.starts_with("# UNIT ") => {}
            _ if line.starts_with('#') => return Err(std::fmt::Error),
            sample => writeln!(out, "{sample}")?,
        }
    }
    Ok(out)
}

/// `GET /metrics`, in the format `Accept` asks for.
pub async fn serve_metrics(State(state): State<super::AppState>, headers: HeaderMap) -> Response {
    let format = Format::negotiate(&headers);
    match state
        .metrics
        .render(&state.store, &state.catalog, &state.health, format)
    {
        Ok(text) => (
            [
                (
                    CONTENT_TYPE,
                    HeaderValue::from_static(format.content_type()),
                ),
                (VARY, HeaderValue::from_static("Accept")),
            ],
            text,
        )
            .into_response(),
        Err(err) => ApiError::internal(format!("cannot encode metrics: {err}")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn negotiated(accept: &[&str]) -> Format {
        let mut headers = HeaderMap::new();
        for value in accept {
            headers.append(ACCEPT, HeaderValue::from_str(value).expect("header value"));
        }
        Format::negotiate(&headers)
    }

    #[test]
    fn accept_chooses_openmetrics_or_the_text_format() {
        const OM: Format = Format::OpenMetrics(OpenMetricsVersion::V1_0_0);
        const OM_001: Format = Format::OpenMetrics(OpenMetricsVersion::V0_0_1);
        let cases: [(&[&str], Format); 20] = [
            (&[], Format::Text),
            (&["*/*"], Format::Text),
            (&["text/plain"], Format::Text),
            (&["text/plain;version=0.0.4"], Format::Text),
            (&["text/*"], Format::Text),
            (&["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"], Format::Text),
            (&["application/json"], Format::Text),
            (&["garbage"], Format::Text),
            // Prometheus 3's scrape request, and Prometheus 2's.
            (&["application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"], OM),
            (&["application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1"], OM),
            (&["application/openmetrics-text"], OM),
            (&["Application/OpenMetrics-Text; Version=\"1.0.0\""], OM),
            (&["application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5"], OM_001),
            (&["application/openmetrics-text;version=2.0.0"], Format::Text),
            (&["application/openmetrics-text;q=0.1,text/plain;q=0.9"], Format::Text),
            (&["application/openmetrics-text;q=0,*/*"], Format::Text),
            (&["text/plain;q=0,*/*"], OM),
            (&["application/openmetrics-text, text/plain"], OM),
            (&["text/plain", "application/openmetrics-text;q=1"], Format::Text),
            (&["text/plain;q=2,application/openmetrics-text;q=0.5"], OM),
        ];
        for (accept, expected) in cases {
            assert_eq!(negotiated(accept), expected, "{accept:?}");
        }
    }

    #[test]
    fn text_format_names_counter_families_as_their_samples_and_has_no_eof() {
        let metrics = Metrics::new();
        let zones = appzone_contract::paths::LIST_ZONES;
        metrics.observe(&Method::GET, zones, 200, Duration::from_millis(3));
        metrics.deleted();
        metrics.rate_limited(RateLimitScope::Key);
        metrics.0.catalog_version.set(7);
        let om = metrics
            .encode(Format::OpenMetrics(OpenMetricsVersion::V1_0_0))
            .expect("encodes");
        let text = metrics.encode(Format::Text).expect("encodes");
        assert!(om.ends_with("# EOF\n"), "{om}");
        assert!(
            om.contains("# TYPE appzone_http_requests counter\n"),
            "{om}"
        );
        assert!(!text.contains("# EOF"), "{text}");
        for line in [
            "# HELP appzone_http_requests_total HTTP requests answered.\n",
            "# TYPE appzone_http_requests_total counter\n",
            "# TYPE appzone_http_request_duration_seconds histogram\n",
            // The family's series in any order: `address` is there too, at 0.
            "# TYPE appzone_rate_limited_total counter\n",
            "\nappzone_rate_limited_total{scope=\"key\"} 1\n",
            "\nappzone_rate_limited_total{scope=\"address\"} 0\n",
            "# TYPE appzone_profiles_deleted_total counter\nappzone_profiles_deleted_total 1\n",
            "# TYPE appzone_catalog_version gauge\nappzone_catalog_version 7\n",
        ] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
        // Every sample belongs to the family the last `# TYPE` named, with the suffixes of
        // its type: what a 0.0.4 parser needs to keep the type.
        let mut family = ("", "");
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                family = rest.split_once(' ').expect("name and type");
                continue;
            }
            if line.starts_with("# HELP ") {
                continue;
            }
            let name = line.split(['{', ' ']).next().expect("sample name");
            let suffixes: &[&str] = match family.1 {
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            assert!(
                suffixes.iter().any(|s| name == format!("{}{s}", family.0)),
                "{line} after # TYPE {} {}",
                family.0,
                family.1
            );
        }
        // Otherwise the two are the same lines, but for the process' values, read again at
        // each encoding.
        let steady = |text: &str| -> String {
            text.lines()
                .filter(|line| !line.starts_with("process_"))
                .map(|line| format!("{line}\n"))
                .collect()
        };
        let (om, text) = (steady(&om), steady(&text));
        let renamed = om
            .replace(" appzone_http_requests ", " appzone_http_requests_total ")
            .replace(" appzone_rate_limited ", " appzone_rate_limited_total ")
            .replace(
                " appzone_rate_limit_fallbacks ",
                " appzone_rate_limit_fallbacks_total ",
            )
            .replace(
                " appzone_connections_refused ",
                " appzone_connections_refused_total ",
            )
            .replace(
                " appzone_profiles_deleted ",
                " appzone_profiles_deleted_total ",
            )
            .replace(" process_cpu_seconds ", " process_cpu_seconds_total ")
            .replace("# EOF\n", "");
        assert_eq!(text, renamed);
    }

    #[test]
    fn text_format_refuses_what_it_cannot_say() {
        assert_eq!(
            text_004("# HELP a_info i\n# TYPE a_info info\na_info{v=\"1\"} 1\n# EOF\n"),
            Err(std::fmt::Error)
        );
        assert_eq!(
            text_004("# HELP a h\n# TYPE a unknown\na 1\n# EOF\n").as_deref(),
            Ok("# HELP a h\n# TYPE a untyped\na 1\n")
        );
        assert_eq!(
            text_004("# HELP a_seconds h\n# TYPE a_seconds gauge\n# UNIT a_seconds seconds\na_seconds 1\n# EOF\n").as_deref(),
            Ok("# HELP a_seconds h\n# TYPE a_seconds gauge\na_seconds 1\n")
        );
    }
}

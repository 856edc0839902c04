//! The HTTP layer: one router, the layers every request passes, the handlers.
//!
//! A request enters from [`crate::serve`] (which adds the client's address as
//! `ConnectInfo<SocketAddr>`) into the router built by [`app`]. Every route, and the 404
//! fallback, is wrapped in the layers of [`with_middleware`], outermost first:
//!
//! 1. the request id: a caller's valid `X-Request-Id` is kept, any other replaced by a ULID,
//!    and it is echoed on the answer (tower-http `SetRequestId` / `PropagateRequestId`);
//! 2. `X-Content-Type-Options: nosniff` on every answer, and `X-API-KEY` marked sensitive;
//! 3. [`observe`]: the contract's JSON body for any error a framework layer answered in plain
//!    text ([`error::json_errors`]), metrics under the route template, one log line (status 499
//!    when the client left before the answer), deprecation headers;
//! 4. panics answer 500 (tower-http `CatchPanic`);
//! 5. load shedding beyond [`HttpConfig::max_in_flight`] requests in flight (tower `LoadShed`
//!    over a global `ConcurrencyLimit`): 503 at once, never a queue;
//! 6. [`timeout`]: 503 after [`HttpConfig::request_timeout`], except over a write already in
//!    storage's hands, whose real outcome is awaited;
//! 7. CORS, when origins are configured (preflights are answered before authentication);
//! 8. [`auth`]: on `/api/v1/...`, the API key (401), then the per-key rate limit (429), and the
//!    `RateLimit` headers; the handlers take the [`crate::keys::Caller`] as an extension;
//! 9. the request body limit ([`body_limit`]: tower-http `RequestBodyLimit`, 413 naming the
//!    limit, a body declared over it read after the answer within bounds), applied in [`app`]
//!    per group of routes: [`HttpConfig::max_body_bytes`] on every route but a zone mapping's,
//!    whose `PUT` takes up to 32 MiB of cloud output, gzip-compressed or not.
//!
//! Handlers ([`listings`], [`profiles`], [`mappings`], [`ops`], [`docs`], [`metrics`]) take
//! extractors and reach storage through [`crate::storage::Store`] in the state. API routes are registered
//! through utoipa-axum's `routes!` with the contract crate's operation descriptions, so a route
//! cannot exist without its entry in the OpenAPI document.

pub mod auth;
pub mod body_limit;
mod conditional;
pub mod docs;
pub mod error;
pub mod listings;
pub mod mappings;
pub mod metrics;
pub mod observe;
pub mod ops;
pub mod path;
pub mod profiles;
pub mod timeout;

use std::sync::Arc;
use std::time::Duration;

use appzone_contract::deprecation::{DEPRECATION, SUNSET};
use appzone_contract::headers::{
    API_KEY, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, RATE_LIMIT, RATE_LIMIT_POLICY, REQUEST_ID,
};
use axum::error_handling::HandleErrorLayer;
use axum::extract::DefaultBodyLimit;
use axum::extract::FromRef;
use axum::middleware::from_fn_with_state;
use axum::routing::get;
use axum::Router;
use http::header::{ETAG, IF_NONE_MATCH, RETRY_AFTER, X_CONTENT_TYPE_OPTIONS};
use http::{HeaderValue, Method};
use tower::limit::GlobalConcurrencyLimitLayer;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::decompression::RequestDecompressionLayer;
use tower_http::request_id::{PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::catalog::Catalog;
use crate::keys::KeyVerifier;
use crate::last_used::LastUsed;
use crate::limits::RateLimits;
use crate::mappings::MappingCache;
use crate::metrics::Metrics;
use crate::readiness::Readiness;
use crate::storage::Store;
use ops::OpenApiJson;

/// Limits and switches of the HTTP layer.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Longest time a request may take before 503.
    pub request_timeout: Duration,
    /// Most requests in flight; beyond it requests are shed with 503 at once.
    pub max_in_flight: usize,
    /// Largest request body accepted (413 beyond).
    pub max_body_bytes: usize,
    /// Origins allowed by CORS; empty disables CORS.
    pub cors_origins: Vec<HeaderValue>,
    /// Deprecated operations: their answers carry `Deprecation` and `Sunset`, and the served
    /// document marks them. The contract's own by default; tests set others.
    pub deprecations: Vec<appzone_contract::Deprecation>,
}

/// The defaults, in the units of the `serve` options that set them (their `default_value_t`).
impl HttpConfig {
    /// Default of [`HttpConfig::request_timeout`], in seconds.
    pub const DEFAULT_REQUEST_TIMEOUT_SECS: u64 = 30;
    /// Default of [`HttpConfig::max_in_flight`].
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 1024;
    /// Default of [`HttpConfig::max_body_bytes`].
    pub const DEFAULT_MAX_BODY_BYTES: usize = 64 * 1024;
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(Self::DEFAULT_REQUEST_TIMEOUT_SECS),
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            max_body_bytes: Self::DEFAULT_MAX_BODY_BYTES,
            cors_origins: Vec::new(),
            deprecations: appzone_contract::DEPRECATIONS.to_vec(),
        }
    }
}

/// How much of a request's time a write may take: it ends (rolled back) at this point of the
/// request timeout, leaving the rest for the answer, so a write never outlives its request.
pub fn write_deadline(request_timeout: Duration) -> Duration {
    request_timeout.saturating_sub(request_timeout / 10)
}

/// Everything handlers and middleware need; each extracts only its part.
///
/// axum clones the state for every request, so it is one `Arc` around [`SharedState`].
#[derive(Debug, Clone)]
pub struct AppState(Arc<SharedState>);

/// The parts of [`AppState`].
#[derive(Debug, Clone)]
pub struct SharedState {
    /// The database.
    pub store: Store,
    /// The zone catalog snapshot.
    pub catalog: Catalog,
    /// API-key verification with its cache.
    pub keys: KeyVerifier,
    /// Organizations' zone mappings, cached for the identity listing.
    pub mappings: MappingCache,
    /// When each key last authenticated a request (written at most once a minute per key).
    pub last_used: LastUsed,
    /// Per-key and per-address rate limits.
    pub limits: RateLimits,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// The served OpenAPI document.
    pub openapi: OpenApiJson,
    /// Limits of the HTTP layer.
    pub http: HttpConfig,
    /// Shutdown and database state, for `/readyz` and `/metrics`.
    pub readiness: Readiness,
}

impl AppState {
    /// Wraps the parts.
    pub fn new(shared: SharedState) -> Self {
        Self(Arc::new(shared))
    }

    /// The same state with other HTTP-layer limits (for tests of those limits).
    pub fn with_http(&self, http: HttpConfig) -> Self {
        Self::new(SharedState {
            http,
            ..(*self.0).clone()
        })
    }
}

impl std::ops::Deref for AppState {
    type Target = SharedState;
    fn deref(&self) -> &SharedState {
        &self.0
    }
}

macro_rules! from_ref {
    ($($field:ident: $ty:ty),*) => {
        $(impl FromRef<AppState> for $ty {
            fn from_ref(state: &AppState) -> Self {
                state.$field.clone()
            }
        })*
    };
}
from_ref!(store: Store, catalog: Catalog, keys: KeyVerifier, mappings: MappingCache, metrics: Metrics, openapi: OpenApiJson, readiness: Readiness);

/// The templates of every route [`app`] registers, the documentation page's assets counted as
/// `/docs`: the route labels of metrics and logs (every other path is `unmatched`), and what a
/// 404 for a path with a trailing slash may suggest.
const ROUTES: [&str; 12] = [
    appzone_contract::paths::LIST_ZONES,
    appzone_contract::paths::DELETE_PROFILE,
    appzone_contract::paths::LIST_PROVIDERS,
    appzone_contract::paths::LIST_REGIONS,
    appzone_contract::paths::LIST_ZONE_IDENTITIES,
    appzone_contract::paths::ZONE_MAPPINGS,
    appzone_contract::paths::ZONE_MAPPING,
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
];

/// The API routes with the OpenAPI description the `routes!` registrations produced.
pub fn api_routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (bodiless, with_body) = api_route_groups();
    bodiless.merge(with_body).split_for_parts()
}

/// The API routes in two groups by the request body they may take: none, and a zone
/// mapping's (the one path whose `PUT` reads a body, up to
/// [`appzone_contract::MAX_ZONE_MAPPING_BYTES`]).
fn api_route_groups() -> (OpenApiRouter<AppState>, OpenApiRouter<AppState>) {
    let bodiless = OpenApiRouter::new()
        .routes(routes!(listings::list_providers))
        .routes(routes!(listings::list_regions))
        .routes(routes!(listings::list_zones))
        .routes(routes!(listings::list_zone_identities))
        .routes(routes!(listings::list_instance_types))
        .routes(routes!(profiles::delete_application_profile))
        .routes(routes!(mappings::list_zone_mappings));
    let with_body = OpenApiRouter::new().routes(routes!(
        mappings::get_zone_mapping,
        mappings::put_zone_mapping,
        mappings::delete_zone_mapping
    ));
    (bodiless, with_body)
}

/// The application as [`crate::serve`] runs it: the router, and what the accept loop reports
/// to (`/readyz` draining on shutdown, refused connections counted).
#[derive(Debug, Clone)]
pub struct App {
    /// Every route behind the layers.
    pub router: Router,
    /// Shutdown and database state.
    pub readiness: Readiness,
    /// The service's metrics.
    pub metrics: Metrics,
}

/// The whole application: the API and operations routes behind the layers of [`with_middleware`].
pub fn app(state: AppState) -> App {
    let (bodiless, with_body) = api_route_groups();
    let (bodiless, _) = bodiless.split_for_parts();
    let (with_body, _) = with_body.split_for_parts();
    // The body limit sits inside authentication (a 401 comes first), per group of routes.
    let routes = Router::new()
        .merge(bodiless)
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(metrics::serve_metrics))
        .route("/openapi.json", get(ops::openapi))
        .route("/docs", get(docs::index))
        .route("/docs/", get(docs::index))
        .route("/docs/{*file}", get(docs::asset));
    // A zone mapping's body may come gzip-compressed (`Content-Encoding: gzip`); it is inflated
    // as it is read, outside the limit, so the limit counts inflated bytes and a small body
    // that inflates past it is refused once the limit is reached, never inflated whole. The
    // limit layer is the one limit (axum's default of 2 MB per extractor is off here).
    let with_body = body_limit::limited(
        with_body.layer(DefaultBodyLimit::disable()),
        appzone_contract::MAX_ZONE_MAPPING_BYTES,
    )
    // Another encoding passes through with its header, for the handler's 400 `invalid_body`
    // (the layer's own refusal is a bare 415, a status and code the contract does not have).
    .layer(RequestDecompressionLayer::new().pass_through_unaccepted(true));
    let routes = body_limit::limited(routes, state.http.max_body_bytes).merge(with_body);
    with_middleware(routes, state)
}

/// `routes` with the JSON 404 and 405 fallbacks and the layers of every request (the module
/// documentation says what each does, outermost first). Public so tests can check the layers'
/// behaviour (panics, timeouts) with routes of their own.
///
/// Applied with `Router::layer`, innermost first, so each route's stack sees its
/// `MatchedPath`; the concurrency limit is one semaphore for all of them.
pub fn with_middleware(routes: Router<AppState>, state: AppState) -> App {
    let http = &state.http;
    let routes = routes
        .method_not_allowed_fallback(error::method_not_allowed)
        .fallback(error::not_found)
        .layer(from_fn_with_state(state.clone(), auth::authenticate));
    // Outside authentication, so that preflights are answered without a key.
    let routes = match http.cors_origins.as_slice() {
        [] => routes,
        origins => routes.layer(cors(origins)),
    };
    let router = routes
        .layer(
            ServiceBuilder::new()
                .map_request(observe::drop_invalid_request_id)
                .layer(SetRequestIdLayer::new(REQUEST_ID, observe::MakeUlid))
                .layer(PropagateRequestIdLayer::new(REQUEST_ID))
                .layer(SetResponseHeaderLayer::overriding(
                    X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ))
                .layer(SetSensitiveRequestHeadersLayer::new([API_KEY]))
                .layer(from_fn_with_state(
                    observe::Observe::new(state.metrics.clone(), &http.deprecations),
                    observe::observe,
                ))
                .layer(CatchPanicLayer::custom(error::panic_response))
                .layer(HandleErrorLayer::new(error::overloaded))
                .load_shed()
                .layer(GlobalConcurrencyLimitLayer::new(http.max_in_flight.max(1)))
                .layer(from_fn_with_state(
                    http.request_timeout,
                    timeout::request_timeout,
                )),
        )
        .with_state(state.clone());
    App {
        router,
        readiness: state.readiness.clone(),
        metrics: state.metrics.clone(),
    }
}

fn cors(origins: &[HeaderValue]) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.iter().cloned()))
        .allow_methods([Method::GET, Method::HEAD, Method::PUT, Method::DELETE])
        .allow_headers([
            API_KEY,
            REQUEST_ID,
            IF_NONE_MATCH,
            IDEMPOTENCY_KEY,
            http::header::CONTENT_TYPE,
        ])
        .expose_headers([
            REQUEST_ID,
            ETAG,
            RETRY_AFTER,
            DEPRECATION,
            SUNSET,
            IDEMPOTENT_REPLAYED,
            RATE_LIMIT,
            RATE_LIMIT_POLICY,
        ])
        .max_age(Duration::from_secs(600))
}

//! The HTTP layer: routing, the middleware, and the JSON fallbacks.
//!
//! A request enters through [`crate::serve`] into [`App`] ([`stack`]), which wraps
//! everything else:
//!
//! 1. [`stack::App`]: request id and the [`context::RequestContext`], load shedding and the
//!    in-flight limit, the request timeout, panic catching; afterwards the `json_errors` safety
//!    net (any non-JSON error a framework layer produced gets the contract's body), metrics
//!    under the route label (recorded by the handler, else derived from the path), one log
//!    line, and `X-Request-Id` / `X-Content-Type-Options: nosniff` on every response
//!    ([`observe`]);
//! 2. CORS, when origins are configured (answers preflights before authentication);
//! 3. [`auth::Auth`]: on `/api/v1/...`, authentication, then the rate limits; everywhere, the
//!    request body limit (413);
//! 4. the router: API routes, operations endpoints, the JSON 404 / 405 fallbacks.
//!
//! API routes are registered through utoipa-axum's `routes!` with the contract crate's operation
//! descriptions, so a route cannot exist without its entry in the OpenAPI document.

pub mod auth;
mod conditional;
pub mod context;
pub mod docs;
pub mod error;
pub mod limits;
pub mod listings;
pub mod metrics;
pub mod observe;
pub mod ops;
pub mod path;
pub mod profiles;
pub mod routes;
pub mod stack;

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use appzone_contract::deprecation::{DEPRECATION, SUNSET};
use appzone_contract::headers::{API_KEY, REQUEST_ID};
use appzone_contract::{ErrorBody, ErrorCode};
use axum::extract::FromRef;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use http::header::{CONTENT_TYPE, ETAG, IF_NONE_MATCH, RETRY_AFTER};
use http::{HeaderValue, Method, StatusCode, Uri};
use tower::util::Either;
use tower::Layer;
use tower_http::cors::{AllowOrigin, CorsLayer};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::catalog::Catalog;
use crate::health::Health;
use crate::keys::KeyVerifier;
use crate::storage::Store;
use error::ApiError;
use limits::RateLimits;
use metrics::Metrics;
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

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            request_timeout: Duration::from_secs(30),
            max_in_flight: 1024,
            max_body_bytes: 64 * 1024,
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
    /// Per-key and per-address rate limits.
    pub limits: RateLimits,
    /// Prometheus metrics.
    pub metrics: Metrics,
    /// The served OpenAPI document.
    pub openapi: OpenApiJson,
    /// Limits of the HTTP layer.
    pub http: HttpConfig,
    /// Shutdown and database state, for `/readyz` and `/metrics`.
    pub health: Health,
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
from_ref!(store: Store, catalog: Catalog, keys: KeyVerifier, metrics: Metrics, openapi: OpenApiJson, health: Health);

impl FromRef<AppState> for (Metrics, Store, Catalog, Health) {
    fn from_ref(state: &AppState) -> Self {
        (
            state.metrics.clone(),
            state.store.clone(),
            state.catalog.clone(),
            state.health.clone(),
        )
    }
}

/// The API routes with the OpenAPI description the `routes!` registrations produced.
pub fn api_routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::new()
        .routes(routes!(listings::list_providers))
        .routes(routes!(listings::list_regions))
        .routes(routes!(listings::list_zones))
        .routes(routes!(profiles::delete_application_profile))
        .split_for_parts()
}

pub use stack::App;

/// The whole application.
pub fn app(state: AppState) -> App {
    let (api, _) = api_routes();
    let routes = Router::new()
        .merge(api)
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/metrics", get(metrics::serve_metrics))
        .route("/openapi.json", get(ops::openapi))
        .route("/docs", get(docs::index))
        .route("/docs/", get(docs::index))
        .route("/docs/{*file}", get(docs::asset));
    let shortcut = listings::Shortcut::new(state.catalog.clone(), state.metrics.clone());
    assemble(routes, state, Some(shortcut))
}

/// Adds the fallbacks and the middleware to `routes`. Public so tests can check the
/// middleware's behaviour (panics, timeouts) with routes of their own; the listing's
/// shortcut past the router is left out, so `routes` answer every request.
pub fn with_middleware(routes: Router<AppState>, state: AppState) -> App {
    assemble(routes, state, None)
}

fn assemble(
    routes: Router<AppState>,
    state: AppState,
    shortcut: Option<listings::Shortcut>,
) -> App {
    let router = routes
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .with_state(state.clone());
    let authed = auth::Auth::new(
        router,
        state.keys.clone(),
        state.limits.clone(),
        state.http.max_body_bytes,
        shortcut,
    );
    let inner = if state.http.cors_origins.is_empty() {
        Either::Right(authed)
    } else {
        Either::Left(cors(&state.http.cors_origins).layer(authed))
    };
    App::new(
        inner,
        state.metrics.clone(),
        state.health.clone(),
        &state.http,
    )
}

fn cors(origins: &[HeaderValue]) -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::list(origins.iter().cloned()))
        .allow_methods([Method::GET, Method::HEAD, Method::DELETE])
        .allow_headers([API_KEY, REQUEST_ID, IF_NONE_MATCH])
        .expose_headers([REQUEST_ID, ETAG, RETRY_AFTER, DEPRECATION, SUNSET])
        .max_age(Duration::from_secs(600))
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::new(ErrorCode::NotFound, not_found_message(uri.path()))
}

/// Longest path a 404 message names: with its words, well within the message's 1024
/// characters, so the path is never cut (a cut path would be a wrong suggestion).
const MAX_SUGGESTED_PATH_CHARS: usize = 512;

/// "no such route", naming the route `path` would be without its trailing slash when there
/// is one (one of the router's templates, not any path with the slash cut).
fn not_found_message(path: &str) -> Cow<'static, str> {
    let Some(without) = path.strip_suffix('/').filter(|p| routes::is_route(p)) else {
        return Cow::Borrowed("no such route");
    };
    if without.chars().count() > MAX_SUGGESTED_PATH_CHARS {
        return Cow::Borrowed("no such route; did you mean this path without its trailing slash?");
    }
    Cow::Owned(format!(
        "no such route; did you mean {without} (no trailing slash)?"
    ))
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "method not allowed on this route; see the Allow header",
    )
}

pub(crate) fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("non-string panic payload");
    ApiError::internal(format!("handler panicked: {detail}")).into_response()
}

/// Safety net: an error response whose body is not JSON (made by a framework layer, such as
/// tower-http's 413) gets the contract's body for its status; its headers are kept.
pub(crate) fn json_errors(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if is_json {
        return response;
    }
    let code = match status {
        StatusCode::NOT_FOUND => ErrorCode::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => ErrorCode::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
        StatusCode::TOO_MANY_REQUESTS => ErrorCode::RateLimited,
        StatusCode::SERVICE_UNAVAILABLE
        | StatusCode::REQUEST_TIMEOUT
        | StatusCode::GATEWAY_TIMEOUT => ErrorCode::Unavailable,
        _ if status.is_server_error() => ErrorCode::InternalError,
        // A client error without a contract code of its own keeps its status.
        _ => ErrorCode::Other("bad_request".to_owned()),
    };
    let message = match &code {
        ErrorCode::PayloadTooLarge => "request body too large",
        ErrorCode::Unavailable => "service temporarily unavailable, retry later",
        ErrorCode::InternalError => "internal error; quote the request id when reporting it",
        _ => status.canonical_reason().unwrap_or("request refused"),
    };
    let (mut parts, _) = response.into_parts();
    let body = serde_json::to_vec(&ErrorBody::new(code, message)).unwrap_or_default();
    parts
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(http::header::CONTENT_LENGTH);
    if status == StatusCode::SERVICE_UNAVAILABLE && !parts.headers.contains_key(RETRY_AFTER) {
        parts.headers.insert(RETRY_AFTER, HeaderValue::from(1u32));
    }
    Response::from_parts(parts, axum::body::Body::from(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_names_the_route_without_the_trailing_slash_only_when_there_is_one() {
        let zones = "/api/v1/providers/aws/regions/us-east-1/zones";
        assert_eq!(
            not_found_message(&format!("{zones}/")),
            format!("no such route; did you mean {zones} (no trailing slash)?")
        );
        assert_eq!(
            not_found_message("/healthz/"),
            "no such route; did you mean /healthz (no trailing slash)?"
        );
        for path in [
            "/",
            "",
            "/nope/",
            "/nope",
            "/api/v1/providers/aws/regions/us-east-1/",
            "/api/v1/applications/profiles/",
            "/healthz//",
            "/docs/swagger-ui.css/",
        ] {
            assert_eq!(not_found_message(path), "no such route", "{path}");
        }
        let long = format!("/api/v1/applications/profiles/{}", "a".repeat(600));
        assert_eq!(
            not_found_message(&format!("{long}/")),
            "no such route; did you mean this path without its trailing slash?"
        );
        let longest = format!(
            "/api/v1/applications/profiles/{}",
            "a".repeat(MAX_SUGGESTED_PATH_CHARS - 30)
        );
        assert_eq!(longest.chars().count(), MAX_SUGGESTED_PATH_CHARS);
        assert!(not_found_message(&format!("{longest}/")).contains(&longest));
    }
}

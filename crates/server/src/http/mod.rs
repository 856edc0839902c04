//! The HTTP layer: routing, middleware order, and the JSON fallbacks.
//!
//! A request enters through [`crate::serve`], then passes, outermost first: the request id
//! (sets `X-Request-Id`, logs internal error details), panic catching (JSON 500), and
//! authentication (only `/api/v1/...`). Routes are registered through utoipa-axum's `routes!`
//! with the contract crate's operation descriptions, so a route cannot exist without its entry
//! in the OpenAPI document.

pub mod auth;
pub mod error;
pub mod ops;
pub mod path;
pub mod profiles;
pub mod request_id;
pub mod zones;

use std::any::Any;

use appzone_contract::ErrorCode;
use axum::extract::FromRef;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use tower_http::catch_panic::CatchPanicLayer;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::catalog::Catalog;
use crate::keys::KeyVerifier;
use crate::storage::Store;
use error::ApiError;
use ops::OpenApiJson;

/// Everything handlers need; each handler extracts only its part.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The database.
    pub store: Store,
    /// The zone catalog snapshot.
    pub catalog: Catalog,
    /// API-key verification with its cache.
    pub keys: KeyVerifier,
    /// The served OpenAPI document.
    pub openapi: OpenApiJson,
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
from_ref!(store: Store, catalog: Catalog, keys: KeyVerifier, openapi: OpenApiJson);

/// The API routes with the OpenAPI description the `routes!` registrations produced.
pub fn api_routes() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    OpenApiRouter::new()
        .routes(routes!(zones::list_zones))
        .routes(routes!(profiles::delete_application_profile))
        .split_for_parts()
}

/// The whole application.
pub fn router(state: AppState) -> Router {
    let (api, _) = api_routes();
    let routes = Router::new()
        .merge(api)
        .route("/healthz", get(ops::healthz))
        .route("/readyz", get(ops::readyz))
        .route("/openapi.json", get(ops::openapi));
    with_middleware(routes, state)
}

/// Adds the fallbacks and the middleware stack to `routes`. Public so tests can check the
/// stack's behaviour (panics, for one) with routes of their own.
pub fn with_middleware(routes: Router<AppState>, state: AppState) -> Router {
    routes
        .method_not_allowed_fallback(method_not_allowed)
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.keys.clone(),
            auth::require_api_key,
        ))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(axum::middleware::from_fn(request_id::assign))
        .with_state(state)
}

async fn not_found() -> ApiError {
    ApiError::new(ErrorCode::NotFound, "no such route")
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        ErrorCode::MethodNotAllowed,
        "method not allowed on this route; see the Allow header",
    )
}

fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let detail = panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("non-string panic payload");
    ApiError::internal(format!("handler panicked: {detail}")).into_response()
}

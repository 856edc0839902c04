//! The catalog's three listings: providers, a provider's regions, a region's zones.
//!
//! All are served entirely from the in-memory catalog snapshot: no database, and no JSON
//! serialization per request (each body is precomputed around the request id).

use appzone_contract::paths::{self, LIST_PROVIDERS};
use appzone_contract::{ErrorCode, IdError, ProviderId, RegionId};
use axum::body::Body;
use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, HeaderValue, StatusCode};
use tower_http::request_id::RequestId;

use super::conditional::matches_etag;
use super::error::ApiError;
use super::path::PathParams;
use crate::catalog::{Answer, Catalog, Provider, Snapshot};

pub use appzone_contract::openapi::{
    __path_list_providers, __path_list_regions, __path_list_zones,
};

const CACHE_POLICY: HeaderValue =
    HeaderValue::from_static(appzone_contract::headers::LISTING_CACHE_CONTROL);

/// Lists the catalog's providers; see the operation's description in the contract crate.
pub async fn list_providers(
    State(catalog): State<Catalog>,
    Extension(id): Extension<RequestId>,
    headers: HeaderMap,
) -> Response {
    answer(&catalog.snapshot().providers, &headers, &id)
}

/// Lists a provider's regions; see the operation's description in the contract crate.
pub async fn list_regions(
    State(catalog): State<Catalog>,
    Extension(id): Extension<RequestId>,
    params: PathParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let snapshot = catalog.snapshot();
    let (_, provider) = known_provider(&snapshot, params.get(0))?;
    Ok(answer(&provider.regions, &headers, &id))
}

/// Lists a region's zones; see the operation's description in the contract crate.
pub async fn list_zones(
    State(catalog): State<Catalog>,
    Extension(id): Extension<RequestId>,
    params: PathParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let snapshot = catalog.snapshot();
    let (provider_id, provider) = known_provider(&snapshot, params.get(0))?;
    let region = params.get(1);
    let Some(zones) = region.and_then(|r| provider.region(r)) else {
        let region = valid(region, RegionId::validate).map_err(|e| {
            ApiError::new(ErrorCode::InvalidRegion, format!("invalid region id: {e}"))
        })?;
        let hint = match provider.closest_region(region) {
            Some(close) => format!("did you mean {close:?}?"),
            None => format!(
                "GET {} lists its regions",
                paths::list_regions(&provider.id)
            ),
        };
        return Err(ApiError::new(
            ErrorCode::RegionNotFound,
            format!("region not found: {provider_id} has no region {region:?}; {hint}"),
        ));
    };
    Ok(answer(zones, &headers, &id))
}

/// The provider the path names, or the 400 `invalid_provider` for a malformed or unknown id.
///
/// The catalog's ids were validated when it was imported: an id it holds needs no check here,
/// and one it lacks is checked to tell a malformed id from an unknown one, which gets the
/// closest known id or a pointer to the provider listing.
fn known_provider<'s, 'p>(
    snapshot: &'s Snapshot,
    provider: Option<&'p str>,
) -> Result<(&'p str, &'s Provider), ApiError> {
    if let Some(found) = provider.and_then(|p| Some((p, snapshot.provider(p)?))) {
        return Ok(found);
    }
    let provider = valid(provider, ProviderId::validate).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidProvider,
            format!("invalid provider id: {e}"),
        )
    })?;
    let hint = match snapshot.closest_provider(provider) {
        Some(close) => format!("did you mean {close:?}?"),
        None => format!("GET {LIST_PROVIDERS} lists the providers"),
    };
    Err(ApiError::new(
        ErrorCode::InvalidProvider,
        format!("unknown provider: no provider has the id {provider:?}; {hint}"),
    ))
}

/// A listing's answer: 304 when `If-None-Match` names its ETag, else 200 with its body
/// around the request id.
fn answer(listing: &Answer, headers: &HeaderMap, id: &RequestId) -> Response {
    let (status, body) = if matches_etag(headers.get_all(IF_NONE_MATCH), &listing.etag) {
        (StatusCode::NOT_MODIFIED, Body::empty())
    } else {
        // Request ids are visible ASCII (a caller's is validated, ours is a ULID).
        let id = id.header_value().to_str().unwrap_or_default();
        (StatusCode::OK, Body::from(listing.body(id)))
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if status == StatusCode::OK {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    headers.insert(ETAG, listing.etag.clone());
    headers.insert(CACHE_CONTROL, CACHE_POLICY);
    response
}

/// Checks a decoded segment; a segment that was not UTF-8 is reported as non-ASCII input.
fn valid(
    segment: Option<&str>,
    validate: fn(&str) -> Result<(), IdError>,
) -> Result<&str, IdError> {
    let segment = segment.unwrap_or("\u{fffd}");
    validate(segment).map(|()| segment)
}

//! The catalog's three listings: providers, a provider's regions, a region's zones.
//!
//! All are served entirely from the in-memory catalog snapshot: no database, no JSON
//! serialization (each body is precomputed around the request id), no copy of the ids, one
//! allocation for the body.
//!
//! A listing the catalog holds, asked for with a plain path (no percent-encoding), is answered
//! by [`Shortcut`] once authentication passed, without the router: axum's router allocates
//! every path parameter (twice) and its matched path, and the extractors clone them again
//! (BENCHMARKS.md measures the difference). Everything else (other
//! methods, encoded or unknown ids, every error) goes through the router to the handlers
//! below. Both answer with the same function, and a test compares their answers.

use std::convert::Infallible;
use std::sync::Arc;

use appzone_contract::paths::{self, LIST_PROVIDERS};
use appzone_contract::{ErrorCode, IdError, ProviderId, RegionId};
use axum::body::Body;
use axum::extract::{FromRequestParts, Request, State};
use axum::response::Response;
use axum::Extension;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};

use super::conditional::matches_etag;
use super::context::RequestContext;
use super::error::ApiError;
use super::metrics::Metrics;
use super::path::RawParams;
use super::routes::{self, RouteLabel};
use crate::catalog::{Answer, Catalog, Provider, Snapshot};

pub use appzone_contract::openapi::{
    __path_list_providers, __path_list_regions, __path_list_zones,
};

const CACHE_POLICY: HeaderValue =
    HeaderValue::from_static(appzone_contract::headers::LISTING_CACHE_CONTROL);

/// Lists the catalog's providers; see the operation's description in the contract crate.
pub async fn list_providers(
    State(catalog): State<Catalog>,
    Extension(context): Extension<Arc<RequestContext>>,
    if_none_match: IfNoneMatch,
) -> Response {
    context.matched(RouteLabel::LIST_PROVIDERS);
    answer(&catalog.snapshot().providers, &if_none_match, &context)
}

/// Lists a provider's regions; see the operation's description in the contract crate.
pub async fn list_regions(
    State(catalog): State<Catalog>,
    Extension(context): Extension<Arc<RequestContext>>,
    params: RawParams,
    if_none_match: IfNoneMatch,
) -> Result<Response, ApiError> {
    context.matched(RouteLabel::LIST_REGIONS);
    let snapshot = catalog.snapshot();
    let (_, provider) = known_provider(&snapshot, params.get(0))?;
    Ok(answer(&provider.regions, &if_none_match, &context))
}

/// Lists a region's zones; see the operation's description in the contract crate.
pub async fn list_zones(
    State(catalog): State<Catalog>,
    Extension(context): Extension<Arc<RequestContext>>,
    params: RawParams,
    if_none_match: IfNoneMatch,
) -> Result<Response, ApiError> {
    context.matched(RouteLabel::LIST_ZONES);
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
    Ok(answer(zones, &if_none_match, &context))
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
fn answer<'h>(
    listing: &Answer,
    if_none_match: impl IntoIterator<Item = &'h HeaderValue>,
    context: &RequestContext,
) -> Response {
    let (status, body) = if matches_etag(if_none_match, &listing.etag) {
        (StatusCode::NOT_MODIFIED, Body::empty())
    } else {
        (
            StatusCode::OK,
            Body::from(listing.body(context.request_id())),
        )
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

/// Answers, without the router, the authenticated listings it can: `GET`, a path of a
/// listing's shape without percent-encoding, ids the catalog holds. Cheap to share.
#[derive(Debug, Clone)]
pub struct Shortcut {
    catalog: Catalog,
    metrics: Metrics,
}

impl Shortcut {
    /// A shortcut to the listings of `catalog`, counting its answers in `metrics` (which is
    /// also how tests see that it answered).
    pub fn new(catalog: Catalog, metrics: Metrics) -> Self {
        Self { catalog, metrics }
    }

    /// The answer, or `None` when the request is one for the router.
    pub(super) fn answer(&self, context: &RequestContext, request: &Request) -> Option<Response> {
        if request.method() != Method::GET {
            return None;
        }
        let found = routes::find(request.uri().path())?;
        let snapshot = self.catalog.snapshot();
        let (route, listing) = match found.route {
            RouteLabel::LIST_ZONES => {
                let [provider, region] = plain(found.params()?)?;
                let zones = snapshot.provider(provider)?.region(region)?;
                (RouteLabel::LIST_ZONES, zones)
            }
            RouteLabel::LIST_REGIONS => {
                let [provider] = plain(found.params()?)?;
                let regions = &snapshot.provider(provider)?.regions;
                (RouteLabel::LIST_REGIONS, regions)
            }
            RouteLabel::LIST_PROVIDERS => (RouteLabel::LIST_PROVIDERS, &snapshot.providers),
            _ => return None,
        };
        context.matched(route);
        self.metrics.shortcut_answered();
        Some(answer(
            listing,
            request.headers().get_all(IF_NONE_MATCH),
            context,
        ))
    }
}

/// The segments, when none is percent-encoded: the router decodes, and ids never contain `%`.
fn plain<const N: usize>(segments: [&str; N]) -> Option<[&str; N]> {
    (!segments.iter().any(|s| s.contains('%'))).then_some(segments)
}

/// The request's `If-None-Match` values; none (and no allocation) in the usual case.
#[derive(Debug)]
pub struct IfNoneMatch(Vec<HeaderValue>);

impl<'a> IntoIterator for &'a IfNoneMatch {
    type Item = &'a HeaderValue;
    type IntoIter = std::slice::Iter<'a, HeaderValue>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for IfNoneMatch {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Infallible> {
        Ok(Self(
            parts
                .headers
                .get_all(IF_NONE_MATCH)
                .iter()
                .cloned()
                .collect(),
        ))
    }
}

/// Checks a decoded segment; a segment that was not UTF-8 is reported as non-ASCII input.
fn valid(
    segment: Option<&str>,
    validate: fn(&str) -> Result<(), IdError>,
) -> Result<&str, IdError> {
    let segment = segment.unwrap_or("\u{fffd}");
    validate(segment).map(|()| segment)
}

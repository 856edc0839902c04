//! `GET /api/v1/providers/{providerId}/regions/{regionId}/zones`: the hot path.
//!
//! Served entirely from the in-memory catalog snapshot: no database, no JSON serialization
//! (the body is precomputed around the request id), no copy of the ids, one allocation for
//! the body.
//!
//! A listing of a region the catalog holds, asked for with a plain path (no percent-encoding),
//! is answered by [`Shortcut`] once authentication passed, without the router: axum's router
//! allocates every path parameter (twice) and its matched path, and the extractors clone them
//! again, about a fifth of a listing's instructions (BENCHMARKS.md). Everything else (other
//! methods, encoded or unknown ids, every error) goes through the router to [`list_zones`].
//! Both answer with the same function, and a test compares their answers.

use std::convert::Infallible;
use std::sync::Arc;

use appzone_contract::paths::{Template, LIST_ZONES};
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
use super::metrics::RouteLabel;
use super::path::RawParams;
use crate::catalog::{Catalog, RegionAnswer};

pub use appzone_contract::openapi::__path_list_zones;

const CACHE_POLICY: HeaderValue =
    HeaderValue::from_static(appzone_contract::headers::LISTING_CACHE_CONTROL);

/// Lists a region's zones; see the operation's description in the contract crate.
pub async fn list_zones(
    State(catalog): State<Catalog>,
    Extension(context): Extension<Arc<RequestContext>>,
    params: RawParams,
    if_none_match: IfNoneMatch,
) -> Result<Response, ApiError> {
    context.matched(RouteLabel::LIST_ZONES);
    let snapshot = catalog.snapshot();
    // The catalog's ids were validated when it was imported: an id it holds needs no check
    // here, and one it lacks is checked to tell a malformed id (400) from an unknown one.
    let (provider, region) = (params.get(0), params.get(1));
    let Some((provider, regions)) = provider.and_then(|p| Some((p, snapshot.provider(p)?))) else {
        let provider = valid(provider, ProviderId::validate).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidProvider,
                format!("invalid provider id: {e}"),
            )
        })?;
        return Err(ApiError::new(
            ErrorCode::InvalidProvider,
            format!("unknown provider: no provider has the id {provider:?}"),
        ));
    };
    let Some(answer) = region.and_then(|r| regions.get(r)) else {
        let region = valid(region, RegionId::validate).map_err(|e| {
            ApiError::new(ErrorCode::InvalidRegion, format!("invalid region id: {e}"))
        })?;
        return Err(ApiError::new(
            ErrorCode::RegionNotFound,
            format!("region not found: {provider} has no region {region:?}"),
        ));
    };

    Ok(self::answer(answer, &if_none_match, &context))
}

/// The listing of a region the catalog holds: 304 when `If-None-Match` names its ETag, else
/// 200 with its body around the request id.
fn answer<'h>(
    region: &RegionAnswer,
    if_none_match: impl IntoIterator<Item = &'h HeaderValue>,
    context: &RequestContext,
) -> Response {
    let (status, body) = if matches_etag(if_none_match, &region.etag) {
        (StatusCode::NOT_MODIFIED, Body::empty())
    } else {
        (
            StatusCode::OK,
            Body::from(region.body(context.request_id())),
        )
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if status == StatusCode::OK {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    headers.insert(ETAG, region.etag.clone());
    headers.insert(CACHE_CONTROL, CACHE_POLICY);
    response
}

/// Answers, without the router, the authenticated listings it can: `GET`, a path of the
/// listing's shape without percent-encoding, a region the catalog holds. Cheap to share.
#[derive(Debug, Clone)]
pub struct Shortcut {
    catalog: Catalog,
    listing: Template<'static>,
}

impl Shortcut {
    /// A shortcut to the listings of `catalog`.
    pub fn new(catalog: Catalog) -> Self {
        Self {
            catalog,
            listing: Template::new(LIST_ZONES),
        }
    }

    /// The answer, or `None` when the request is one for the router.
    pub(super) fn answer(&self, context: &RequestContext, request: &Request) -> Option<Response> {
        if request.method() != Method::GET {
            return None;
        }
        let [provider, region] = self.listing.params::<2>(request.uri().path())?;
        if provider.contains('%') || region.contains('%') {
            return None; // the router decodes; ids never contain `%`
        }
        let snapshot = self.catalog.snapshot();
        let region = snapshot.provider(provider)?.get(region)?;
        context.matched(RouteLabel::LIST_ZONES);
        Some(answer(
            region,
            request.headers().get_all(IF_NONE_MATCH),
            context,
        ))
    }
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

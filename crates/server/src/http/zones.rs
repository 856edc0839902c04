//! `GET /api/v1/providers/{providerId}/regions/{regionId}/zones`: the hot path.
//!
//! Served entirely from the in-memory catalog snapshot: no database, no JSON serialization
//! (the body is precomputed around the request id), no copy of the ids, one allocation for
//! the body.

use std::convert::Infallible;
use std::sync::Arc;

use appzone_contract::{ErrorCode, IdError, ProviderId, RegionId};
use axum::extract::{FromRequestParts, State};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::request::Parts;
use http::{HeaderValue, StatusCode};

use super::context::RequestContext;
use super::error::ApiError;
use super::metrics::RouteLabel;
use super::path::RawParams;
use crate::catalog::Catalog;

pub use appzone_contract::openapi::__path_list_zones;

const CACHE_POLICY: HeaderValue = HeaderValue::from_static("private, max-age=60");

/// Lists a region's zones; see the operation's description in the contract crate.
pub async fn list_zones(
    State(catalog): State<Catalog>,
    Extension(context): Extension<Arc<RequestContext>>,
    params: RawParams,
    IfNoneMatch(if_none_match): IfNoneMatch,
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

    if matches_etag(&if_none_match, &answer.etag) {
        return Ok((
            StatusCode::NOT_MODIFIED,
            [(ETAG, answer.etag.clone()), (CACHE_CONTROL, CACHE_POLICY)],
        )
            .into_response());
    }
    Ok((
        [
            (CONTENT_TYPE, HeaderValue::from_static("application/json")),
            (ETAG, answer.etag.clone()),
            (CACHE_CONTROL, CACHE_POLICY),
        ],
        answer.body(context.request_id()),
    )
        .into_response())
}

/// The request's `If-None-Match` values; none (and no allocation) in the usual case.
#[derive(Debug)]
pub struct IfNoneMatch(Vec<HeaderValue>);

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

/// Weak comparison (RFC 9110 §13.1.2): `*` or any listed tag equal to ours, `W/` ignored.
fn matches_etag(if_none_match: &[HeaderValue], etag: &HeaderValue) -> bool {
    let ours = etag
        .as_bytes()
        .strip_prefix(b"W/")
        .unwrap_or(etag.as_bytes());
    if_none_match
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|list| {
            list.split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).as_bytes() == ours)
        })
}

//! `GET /api/v1/providers/{providerId}/regions/{regionId}/zones`: the hot path.
//!
//! Served entirely from the in-memory catalog snapshot: no database, no JSON serialization
//! (the body is precomputed around the request id), one allocation for the body.

use appzone_contract::{ErrorCode, IdError, ProviderId, RegionId};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::{HeaderMap, HeaderValue, StatusCode};

use super::error::ApiError;
use super::observe::RequestId;
use super::path::RawParams;
use crate::catalog::Catalog;

pub use appzone_contract::openapi::__path_list_zones;

const CACHE_POLICY: HeaderValue = HeaderValue::from_static("private, max-age=60");

/// Lists a region's zones; see the operation's description in the contract crate.
pub async fn list_zones(
    State(catalog): State<Catalog>,
    Extension(request_id): Extension<RequestId>,
    params: RawParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let provider: ProviderId = parse(params.get(0)).map_err(|e| {
        ApiError::new(
            ErrorCode::InvalidProvider,
            format!("invalid provider id: {e}"),
        )
    })?;
    let snapshot = catalog.snapshot();
    let regions = snapshot.provider(&provider).ok_or_else(|| {
        ApiError::new(
            ErrorCode::InvalidProvider,
            format!(
                "unknown provider: no provider has the id {:?}",
                provider.as_str()
            ),
        )
    })?;
    let region: RegionId = parse(params.get(1))
        .map_err(|e| ApiError::new(ErrorCode::InvalidRegion, format!("invalid region id: {e}")))?;
    let answer = regions.get(region.as_str()).ok_or_else(|| {
        ApiError::new(
            ErrorCode::RegionNotFound,
            format!(
                "region not found: {provider} has no region {:?}",
                region.as_str()
            ),
        )
    })?;

    if if_none_match(&headers, &answer.etag) {
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
        answer.body(request_id.as_str()),
    )
        .into_response())
}

/// Parses a decoded segment; a segment that was not UTF-8 is reported as non-ASCII input.
fn parse<T: std::str::FromStr<Err = IdError>>(segment: Option<&str>) -> Result<T, IdError> {
    segment.unwrap_or("\u{fffd}").parse()
}

/// Weak comparison (RFC 9110 §13.1.2): `*` or any listed tag equal to ours, `W/` ignored.
fn if_none_match(headers: &HeaderMap, etag: &HeaderValue) -> bool {
    let ours = etag
        .as_bytes()
        .strip_prefix(b"W/")
        .unwrap_or(etag.as_bytes());
    headers
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .any(|list| {
            list.split(',')
                .map(str::trim)
                .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).as_bytes() == ours)
        })
}

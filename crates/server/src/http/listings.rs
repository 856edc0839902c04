//! The catalog's listings: providers, a provider's regions, a region's zones, its zone
//! identities and the instance types a zone mapping is offered there.
//!
//! Each handler takes a [`Listing`]: the snapshot, the request id and the `If-None-Match`,
//! which every listing reads the same way.
//!
//! All are served from the in-memory catalog snapshot: no database, and no JSON serialization
//! per request (each body is precomputed around the request id). An identity listing with a
//! query, and the instance types, are built at their first request (the caller's zone
//! mappings read through their cache) and kept in the snapshot, keyed by the query as the
//! request spelled it. A kept answer is served again only while the mapping cache holds each
//! mapping it applies at the version it was built from: the query is read, and the answer
//! built, only when none is kept or a mapping changed.

use std::sync::Arc;

use appzone_contract::paths::{
    self, ALL_ZONE_TYPES, LIST_PROVIDERS, MAPPING_QUERY, OFFERS_QUERY, ZONE_ID_QUERY,
    ZONE_NAME_QUERY, ZONE_TYPE_QUERY,
};
use appzone_contract::{
    is_valid_instance_type, ErrorCode, IdError, ProviderId, RegionId, ZoneIdentityQuery,
    ZoneMappingId, ZoneType, ZoneTypes, MAX_MAPPINGS_PER_LISTING, MAX_OFFERS_PER_QUERY,
    MAX_ZONES_PER_REGION,
};
use axum::body::Body;
use axum::extract::rejection::ExtensionRejection;
use axum::extract::{FromRef, FromRequestParts, RawQuery, State};
use axum::response::Response;
use axum::Extension;
use http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use http::request::Parts;
use http::{HeaderValue, StatusCode};
use tower_http::request_id::RequestId;

use super::conditional::matches_etag;
use super::error::ApiError;
use super::path::PathParams;
use crate::catalog::identities::RegionIdentities;
use crate::catalog::{answer_key, Answer, Catalog, KeptAnswer, Provider, Snapshot};
use crate::keys::Caller;
use crate::mappings::MappingCache;
use crate::model::offerings::RegionOffers;
use crate::storage::StoredMapping;

pub use appzone_contract::openapi::{
    __path_list_instance_types, __path_list_providers, __path_list_regions,
    __path_list_zone_identities, __path_list_zones,
};

/// The routes' last path segments, in the keys of the answers kept for a query.
const ZONE_IDENTITIES: &str = "zone-identities";
const INSTANCE_TYPES: &str = "instance-types";

const CACHE_POLICY: HeaderValue =
    HeaderValue::from_static(appzone_contract::headers::LISTING_CACHE_CONTROL);

/// What every listing reads from its request: the catalog as it is now, the request id its
/// body carries, and the `If-None-Match` values that may make it a 304 (only those: the rest
/// of the headers is not copied).
#[derive(Debug)]
pub struct Listing {
    snapshot: arc_swap::Guard<Arc<Snapshot>>,
    id: RequestId,
    if_none_match: Vec<HeaderValue>,
}

impl<S: Send + Sync> FromRequestParts<S> for Listing
where
    Catalog: FromRef<S>,
{
    /// `RequestId` is set by the request-id layer in front of every route, so this is never
    /// seen; it is `Extension`'s own rejection, as when a handler takes the extension itself.
    type Rejection = ExtensionRejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Extension(id) = Extension::<RequestId>::from_request_parts(parts, state).await?;
        Ok(Self {
            snapshot: Catalog::from_ref(state).snapshot(),
            id,
            if_none_match: parts
                .headers
                .get_all(IF_NONE_MATCH)
                .iter()
                .cloned()
                .collect(),
        })
    }
}

impl Listing {
    /// The answer for `listing`: 304 when `If-None-Match` names its ETag, else 200 with its
    /// body around the request id.
    fn answer(&self, listing: &Answer) -> Response {
        respond(&listing.etag, &self.if_none_match, || {
            // Request ids are visible ASCII (a caller's is validated, ours is a ULID).
            let id = self.id.header_value().to_str().unwrap_or_default();
            Body::from(listing.body(id))
        })
    }
}

/// Lists the catalog's providers; see the operation's description in the contract crate.
pub async fn list_providers(listing: Listing) -> Response {
    listing.answer(&listing.snapshot.providers)
}

/// Lists a provider's regions; see the operation's description in the contract crate.
pub async fn list_regions(listing: Listing, params: PathParams) -> Result<Response, ApiError> {
    let (_, provider) = known_provider(&listing.snapshot, params.get(0))?;
    Ok(listing.answer(&provider.regions))
}

/// Lists a region's zones; see the operation's description in the contract crate.
pub async fn list_zones(listing: Listing, params: PathParams) -> Result<Response, ApiError> {
    let (provider_id, provider) = known_provider(&listing.snapshot, params.get(0))?;
    let region = params.get(1);
    match region.and_then(|r| provider.region(r)) {
        Some(zones) => Ok(listing.answer(zones)),
        None => Err(unknown_region(provider_id, provider, region)),
    }
}

/// Lists a region's zone identities, with the caller's zone mappings and the filters the query
/// names; see the operation's description in the contract crate.
pub async fn list_zone_identities(
    listing: Listing,
    State(cache): State<MappingCache>,
    Extension(Caller { key }): Extension<Caller>,
    RawQuery(query): RawQuery,
    params: PathParams,
) -> Result<Response, ApiError> {
    let (provider_id, identities) = region_identities(&listing.snapshot, &params)?;
    let raw = query.as_deref().unwrap_or_default();
    if raw.is_empty() {
        return Ok(listing.answer(identities.plain_answer()));
    }
    let answer_key = answer_key(&key.org_id, identities.at(), ZONE_IDENTITIES, raw);
    if let Some(kept) = kept_current(&listing.snapshot, &cache, &key.org_id, &answer_key).await? {
        return Ok(listing.answer(&kept.answer));
    }
    let query = identity_query(raw)?;
    if query == ZoneIdentityQuery::default() {
        return Ok(listing.answer(identities.plain_answer()));
    }
    let mut cached = Vec::with_capacity(query.mappings.len());
    for mapping_id in &query.mappings {
        cached.push(mapping_of(&cache, &key.org_id, mapping_id, provider_id).await?);
    }
    // `offers`: the zones where every mapping asked offers every type asked.
    let offers: Vec<&RegionOffers> = if query.offers.is_empty() {
        Vec::new()
    } else {
        cached
            .iter()
            .map(|found| offerings_of(found, identities))
            .collect::<Result<_, _>>()?
    };
    let mappings: Vec<_> = cached.iter().map(|c| (&c.mapping, c.version)).collect();
    let versions = query
        .mappings
        .iter()
        .cloned()
        .zip(cached.iter().map(|c| c.version))
        .collect();
    let kept = listing.snapshot.keep_answer(answer_key, versions, || {
        // Which zones pass `offers` follows from the mappings' versions, kept with the answer:
        // worked out only when the answer is built.
        let offered: Option<Vec<&str>> = (!query.offers.is_empty()).then(|| {
            let wanted: Vec<Vec<Option<u32>>> = offers
                .iter()
                .map(|o| query.offers.iter().map(|t| o.type_index(t)).collect())
                .collect();
            identities
                .items()
                .iter()
                .map(|item| item.zone_id.as_str())
                .filter(|zone| {
                    offers
                        .iter()
                        .zip(&wanted)
                        .all(|(o, types)| o.zone_offers_all(zone, types))
                })
                .collect()
        });
        identities.answer_to(&query, &mappings, offered.as_deref())
    });
    Ok(listing.answer(&kept.answer))
}

/// Lists the instance types a mapping is offered in a region; see the operation's description
/// in the contract crate.
pub async fn list_instance_types(
    listing: Listing,
    State(cache): State<MappingCache>,
    Extension(Caller { key }): Extension<Caller>,
    RawQuery(query): RawQuery,
    params: PathParams,
) -> Result<Response, ApiError> {
    let (provider_id, identities) = region_identities(&listing.snapshot, &params)?;
    let raw = query.as_deref().unwrap_or_default();
    let answer_key = answer_key(&key.org_id, identities.at(), INSTANCE_TYPES, raw);
    if let Some(kept) = kept_current(&listing.snapshot, &cache, &key.org_id, &answer_key).await? {
        return Ok(listing.answer(&kept.answer));
    }
    let (mapping_id, zone_id) = instance_type_query(raw)?;
    let found = mapping_of(&cache, &key.org_id, &mapping_id, provider_id).await?;
    let offers = offerings_of(&found, identities)?;
    let build = || {
        crate::catalog::offerings::instance_types(
            identities,
            &found.mapping,
            offers,
            zone_id.as_deref(),
        )
    };
    // A zone the region lacks answers an empty list, built each time: ids a caller makes up
    // never take the cache's room from real answers.
    if zone_id
        .as_deref()
        .is_some_and(|zone| identities.item(zone).is_none())
    {
        return Ok(listing.answer(&build()));
    }
    let versions = vec![(mapping_id, found.version)];
    let kept = listing.snapshot.keep_answer(answer_key, versions, build);
    Ok(listing.answer(&kept.answer))
}

/// The answer kept for `answer_key` when every zone mapping it applies is, in `cache`, still
/// at the version it was built from; `None` when none is kept or one has changed (the
/// request is then answered as if none were kept, which also finds a deleted mapping's 404).
async fn kept_current(
    snapshot: &Snapshot,
    cache: &MappingCache,
    org: &str,
    answer_key: &str,
) -> Result<Option<Arc<KeptAnswer>>, ApiError> {
    let Some(kept) = snapshot.kept_answer(answer_key) else {
        return Ok(None);
    };
    for (id, version) in &kept.mappings {
        match cache.get(org, id).await.map_err(ApiError::storage)? {
            Some(found) if found.version == *version => {}
            _ => return Ok(None),
        }
    }
    Ok(Some(kept))
}

/// The provider id the path names and its region's zone identities, or the error for an unknown
/// provider or region.
fn region_identities<'s, 'p>(
    snapshot: &'s Snapshot,
    params: &'p PathParams,
) -> Result<(&'p str, &'s RegionIdentities), ApiError> {
    let (provider_id, provider) = known_provider(snapshot, params.get(0))?;
    let region = params.get(1);
    match region.and_then(|r| provider.identities(r)) {
        Some(identities) => Ok((provider_id, identities)),
        None => Err(unknown_region(provider_id, provider, region)),
    }
}

/// The caller's organization's mapping `mapping_id` (404 when it has none), of `provider_id`
/// (422 `invalid_zone_mapping` when of another provider).
async fn mapping_of(
    cache: &MappingCache,
    org: &str,
    mapping_id: &ZoneMappingId,
    provider_id: &str,
) -> Result<Arc<StoredMapping>, ApiError> {
    let found = cache
        .get(org, mapping_id)
        .await
        .map_err(ApiError::storage)?
        .ok_or_else(|| super::mappings::not_found(mapping_id.as_str()))?;
    let mapping = &found.mapping;
    if mapping.provider.as_str() != provider_id {
        return Err(ApiError::new(
            ErrorCode::INVALID_ZONE_MAPPING,
            format!(
                "zone mapping {:?} is of {}, not of {provider_id}",
                mapping_id.as_str(),
                mapping.provider
            ),
        ));
    }
    Ok(found)
}

/// The offerings `found` holds for `identities`' region, or the 422 `offerings_not_stored`
/// saying how to store them.
fn offerings_of<'m>(
    found: &'m StoredMapping,
    identities: &RegionIdentities,
) -> Result<&'m RegionOffers, ApiError> {
    let at = identities.at();
    let (provider, region) = at.split_once('/').unwrap_or((at, at));
    found.offerings.region(region).ok_or_else(|| {
        let id = &found.mapping.id;
        let command = match provider {
            "aws" => format!(
                "aws ec2 describe-instance-type-offerings --location-type availability-zone-id \
                 --region {region} --output json"
            ),
            "azure" => format!(
                "az vm list-skus --resource-type virtualMachines --location {region} --output json"
            ),
            _ => format!("gcloud compute machine-types list --filter=zone:{region} --format=json"),
        };
        ApiError::new(
            ErrorCode::OFFERINGS_NOT_STORED,
            format!(
                "zone mapping {id:?} holds no instance-type offerings for {at}; store them with \
                 its zones (offerings in PUT /api/v1/zone-mappings/{id}), from {command} (a PUT \
                 names in skipped what it could not place)"
            ),
        )
    })
}

/// The instance-type listing's query: `mapping` (required, once) and `zone_id` (optional,
/// once, one zone id); anything else, or a malformed value, is a 400 `invalid_query` naming
/// the parameter.
fn instance_type_query(raw: &str) -> Result<(ZoneMappingId, Option<String>), ApiError> {
    let mut mapping: Option<ZoneMappingId> = None;
    let mut zone_id: Option<String> = None;
    for (name, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        match &*name {
            MAPPING_QUERY if mapping.is_some() => {
                return Err(invalid_query(
                    MAPPING_QUERY,
                    "given twice; this listing takes one zone mapping".to_owned(),
                ))
            }
            MAPPING_QUERY => mapping = Some(mapping_id(&value)?),
            ZONE_ID_QUERY if zone_id.is_some() => {
                return Err(invalid_query(
                    ZONE_ID_QUERY,
                    "given twice; give one zone id".to_owned(),
                ))
            }
            ZONE_ID_QUERY => {
                if RegionId::validate(&value).is_err() {
                    return Err(invalid_query(
                        ZONE_ID_QUERY,
                        format!(
                            "{:?} is not a zone id",
                            value.chars().take(64).collect::<String>()
                        ),
                    ));
                }
                zone_id = Some(value.into_owned());
            }
            other => {
                return Err(invalid_query(
                    other,
                    format!(
                        "unknown query parameter; this listing takes {MAPPING_QUERY} and \
                         {ZONE_ID_QUERY}"
                    ),
                ))
            }
        }
    }
    let mapping = mapping.ok_or_else(|| {
        invalid_query(
            MAPPING_QUERY,
            "required: the zone mapping whose offerings to list".to_owned(),
        )
    })?;
    Ok((mapping, zone_id))
}

/// The zone-identity listing's query: `mapping` (repeatable, distinct, at most
/// [`MAX_MAPPINGS_PER_LISTING`]), `zone_type`, `zone_id` and `zone_name` (once each,
/// comma-separated); anything else, or a malformed value, is a 400 `invalid_query` naming the
/// parameter.
fn identity_query(raw: &str) -> Result<ZoneIdentityQuery, ApiError> {
    let mut query = ZoneIdentityQuery::default();
    let mut seen: Vec<&str> = Vec::new();
    for (name, value) in url::form_urlencoded::parse(raw.as_bytes()) {
        let Some(&known) = [
            ZONE_TYPE_QUERY,
            ZONE_ID_QUERY,
            ZONE_NAME_QUERY,
            MAPPING_QUERY,
            OFFERS_QUERY,
        ]
        .iter()
        .find(|known| **known == name) else {
            return Err(invalid_query(
                &name,
                format!(
                    "unknown query parameter; this listing takes {MAPPING_QUERY}, \
                     {ZONE_TYPE_QUERY}, {ZONE_ID_QUERY}, {ZONE_NAME_QUERY} and {OFFERS_QUERY}"
                ),
            ));
        };
        if known == MAPPING_QUERY {
            let id = mapping_id(&value)?;
            if query.mappings.contains(&id) {
                return Err(invalid_query(
                    known,
                    format!("zone mapping {id} asked twice"),
                ));
            }
            if query.mappings.len() == MAX_MAPPINGS_PER_LISTING {
                return Err(invalid_query(
                    known,
                    format!("at most {MAX_MAPPINGS_PER_LISTING} zone mappings per listing"),
                ));
            }
            query.mappings.push(id);
            continue;
        }
        if seen.contains(&known) {
            return Err(invalid_query(
                known,
                "given twice; give one comma-separated list".to_owned(),
            ));
        }
        seen.push(known);
        if known == OFFERS_QUERY {
            query.offers = offers_list(&value)?;
            continue;
        }
        let values = comma_list(known, &value)?;
        if known == ZONE_TYPE_QUERY
            && values.len() > 1
            && values.iter().any(|v| v == ALL_ZONE_TYPES)
        {
            return Err(invalid_query(
                known,
                format!("{ALL_ZONE_TYPES:?} stands alone, not in a list of types"),
            ));
        }
        match known {
            ZONE_TYPE_QUERY if values == [ALL_ZONE_TYPES] => query.zone_types = ZoneTypes::All,
            ZONE_TYPE_QUERY => {
                query.zone_types =
                    ZoneTypes::Only(values.iter().map(|v| ZoneType::from_wire(v)).collect())
            }
            ZONE_ID_QUERY => query.zone_ids = values,
            _ => query.zone_names = values,
        }
    }
    if !query.offers.is_empty() && query.mappings.is_empty() {
        return Err(invalid_query(
            OFFERS_QUERY,
            "needs a mapping: offerings are stored with zone mappings (add mapping=ID)".to_owned(),
        ));
    }
    Ok(query)
}

/// A `mapping` value of a listing's query. A malformed one is the 400 of any malformed query
/// value (the mapping's own path answers 404 for it instead: there it names a resource).
fn mapping_id(value: &str) -> Result<ZoneMappingId, ApiError> {
    value
        .parse()
        .map_err(|e: appzone_contract::ZoneMappingIdError| {
            invalid_query(
                MAPPING_QUERY,
                format!(
                    "{:?} is not a zone mapping id: {e}",
                    value.chars().take(64).collect::<String>()
                ),
            )
        })
}

/// The instance types of `offers`: comma-separated, at most [`MAX_OFFERS_PER_QUERY`], each an
/// instance type name.
fn offers_list(value: &str) -> Result<Vec<String>, ApiError> {
    let values: Vec<String> = value.split(',').map(str::to_owned).collect();
    if values.len() > MAX_OFFERS_PER_QUERY {
        return Err(invalid_query(
            OFFERS_QUERY,
            format!("at most {MAX_OFFERS_PER_QUERY} instance types"),
        ));
    }
    if let Some(bad) = values.iter().find(|v| !is_valid_instance_type(v)) {
        return Err(invalid_query(
            OFFERS_QUERY,
            format!(
                "{:?} is not an instance type (1 to 128 ASCII letters, digits, '.', '_' and \
                 '-'); give a comma-separated list without spaces",
                bad.chars().take(64).collect::<String>()
            ),
        ));
    }
    Ok(values)
}

/// The values of a comma-separated filter: each a zone type, id or name, whose rule is the
/// region id's (`^[a-z0-9][a-z0-9-]{0,62}$`, for types also `_`, as the document states), and
/// at most as many as a region has zones.
fn comma_list(name: &str, value: &str) -> Result<Vec<String>, ApiError> {
    let values: Vec<String> = value.split(',').map(str::to_owned).collect();
    if values.len() > MAX_ZONES_PER_REGION {
        return Err(invalid_query(
            name,
            format!("at most {MAX_ZONES_PER_REGION} values"),
        ));
    }
    for item in &values {
        let valid = if name == ZONE_TYPE_QUERY {
            ZoneType::is_valid(item)
        } else {
            RegionId::validate(item).is_ok()
        };
        if !valid {
            return Err(invalid_query(
                name,
                format!(
                    "{:?} is not a zone {}; give a comma-separated list without spaces",
                    item.chars().take(64).collect::<String>(),
                    name.trim_start_matches("zone_").replace('_', " ")
                ),
            ));
        }
    }
    Ok(values)
}

/// The 400 `invalid_query` for parameter `name`.
fn invalid_query(name: &str, reason: String) -> ApiError {
    let name: String = name.chars().take(64).collect();
    ApiError::new(
        ErrorCode::INVALID_QUERY,
        format!("invalid query parameter {name:?}: {reason}"),
    )
}

/// The 400 `invalid_region` for a malformed region id, or the 404 `region_not_found` with the
/// closest region id or a pointer to the region listing.
fn unknown_region(provider_id: &str, provider: &Provider, region: Option<&str>) -> ApiError {
    let region = match valid(region, RegionId::validate) {
        Ok(region) => region,
        Err(e) => {
            return ApiError::new(ErrorCode::InvalidRegion, format!("invalid region id: {e}"))
        }
    };
    let hint = match provider.closest_region(region) {
        Some(close) => format!("did you mean {close:?}?"),
        None => format!(
            "GET {} lists its regions",
            paths::list_regions(&provider.id)
        ),
    };
    ApiError::new(
        ErrorCode::RegionNotFound,
        format!("region not found: {provider_id} has no region {region:?}; {hint}"),
    )
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

/// 304 when `if_none_match` names `etag`, else 200 with `body()`.
fn respond(
    etag: &HeaderValue,
    if_none_match: &[HeaderValue],
    body: impl FnOnce() -> Body,
) -> Response {
    let (status, body) = if matches_etag(if_none_match, etag) {
        (StatusCode::NOT_MODIFIED, Body::empty())
    } else {
        (StatusCode::OK, body())
    };
    let mut response = Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    if status == StatusCode::OK {
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    }
    headers.insert(ETAG, etag.clone());
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

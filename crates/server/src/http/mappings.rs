//! `/api/v1/zone-mappings`: an organization's own zone names, stored from its cloud's CLI
//! output.
//!
//! The precedence follows the profile deletion's: 401 (the auth middleware), then for a
//! change the role where no mapping is named by it (`PUT`: 403 for a member key), else the
//! mapping first (`DELETE`: 404 for a mapping the organization does not have, so other
//! tenants' ids stay invisible, then 403), then the body (400 `invalid_body`, 422
//! `invalid_zone_mapping`). A store or a deletion answers once committed, with its audit
//! record; this replica drops its cached copy at once, the others through the change log.

use appzone_contract::{
    is_valid_account, is_valid_display_name, ErrorCode, ProviderId, ZoneMappingAnswer,
    ZoneMappingId, ZoneMappingList, ZoneMappingSummary, MAX_ZONE_MAPPINGS_PER_ORGANIZATION,
    MAX_ZONE_MAPPING_BYTES, MAX_ZONE_MAPPING_LABEL_CHARS, MAX_ZONE_MAPPING_OUTPUT_BYTES,
};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use http::header::CONTENT_ENCODING;
use http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::value::RawValue;
use tower_http::request_id::RequestId;

use super::auth::Write;
use super::error::ApiError;
use super::path::PathParams;
use crate::catalog::{Catalog, Snapshot};
use crate::keys::Caller;
use crate::mappings::outcome::MappingError;
use crate::mappings::parse::{parse_mapping, Parsed};
use crate::mappings::MappingCache;
use crate::model::Role;
use crate::storage::{change_subject, MappingWrite, PutMapping, Store};

pub use appzone_contract::openapi::{
    __path_delete_zone_mapping, __path_get_zone_mapping, __path_list_zone_mappings,
    __path_put_zone_mapping,
};

/// The 404 for a mapping the caller's organization does not have (or a malformed id, which
/// no mapping can have).
pub fn not_found(id: &str) -> ApiError {
    let message = match ZoneMappingId::validate(id) {
        Ok(()) => format!(
            "zone mapping not found: your organization has no zone mapping {id:?}; GET {} \
             lists them",
            appzone_contract::paths::ZONE_MAPPINGS
        ),
        Err(rule) => format!("zone mapping not found: {rule}"),
    };
    ApiError::new(ErrorCode::ZONE_MAPPING_NOT_FOUND, message)
}

fn forbidden() -> ApiError {
    ApiError::new(
        ErrorCode::Forbidden,
        "your role may not change zone mappings; contact your organization admin",
    )
}

fn invalid_body(message: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::INVALID_BODY, format!("invalid body: {message}"))
}

/// The path's mapping id, or the 404 a malformed one gets.
fn mapping_id(params: &PathParams) -> Result<ZoneMappingId, ApiError> {
    let raw = params.get(0).unwrap_or("\u{fffd}");
    raw.parse().map_err(|_| not_found(raw))
}

fn request_id(id: &RequestId) -> String {
    // Request ids are visible ASCII (a caller's is validated, ours is a ULID).
    id.header_value().to_str().unwrap_or_default().to_owned()
}

/// `2 zones in 1 region`.
fn extent(mapping: &appzone_contract::ZoneMapping) -> String {
    let zones: usize = mapping.regions.iter().map(|r| r.zones.len()).sum();
    let regions = mapping.regions.len();
    let mut extent = format!(
        "{zones} {} in {regions} {}",
        if zones == 1 { "zone" } else { "zones" },
        if regions == 1 { "region" } else { "regions" }
    );
    if !mapping.offerings.is_empty() {
        let offerings: u64 = mapping.offerings.iter().map(|o| o.offerings).sum();
        let types: u64 = mapping.offerings.iter().map(|o| o.instance_types).sum();
        extent.push_str(&format!(
            "; {offerings} instance-type {} ({types} {} over {})",
            if offerings == 1 {
                "offering"
            } else {
                "offerings"
            },
            if types == 1 { "type" } else { "types" },
            crate::catalog::count(mapping.offerings.len(), "region", "regions")
        ));
    }
    extent
}

/// Lists the organization's mappings; see the operation's description in the contract crate.
pub async fn list_zone_mappings(
    State(store): State<Store>,
    Extension(Caller { key }): Extension<Caller>,
    Extension(id): Extension<RequestId>,
) -> Result<Json<ZoneMappingList>, ApiError> {
    let stored = store
        .zone_mappings(&key.org_id)
        .await
        .map_err(ApiError::storage)?;
    let data: Vec<ZoneMappingSummary> = stored
        .iter()
        .map(|s| ZoneMappingSummary::of(&s.mapping))
        .collect();
    let message = format!(
        "{} zone {}",
        data.len(),
        if data.len() == 1 {
            "mapping"
        } else {
            "mappings"
        }
    );
    Ok(Json(ZoneMappingList::new(data, request_id(&id), message)))
}

/// Reads one mapping; see the operation's description in the contract crate.
pub async fn get_zone_mapping(
    State(mappings): State<MappingCache>,
    Extension(Caller { key }): Extension<Caller>,
    Extension(id): Extension<RequestId>,
    params: PathParams,
) -> Result<Json<ZoneMappingAnswer>, ApiError> {
    let mapping_id = mapping_id(&params)?;
    let cached = mappings
        .get(&key.org_id, &mapping_id)
        .await
        .map_err(ApiError::storage)?
        .ok_or_else(|| not_found(mapping_id.as_str()))?;
    let stored = &*cached;
    let message = format!("zone mapping {mapping_id}: {}", extent(&stored.mapping));
    Ok(Json(ZoneMappingAnswer::new(
        stored.mapping.clone(),
        request_id(&id),
        message,
    )))
}

/// A zone mapping's `PUT` body as the server reads it: the contract's
/// [`appzone_contract::ZoneMappingRequest`], with `output` and `offerings` left unparsed
/// (borrowed from the body) so that a 32 MiB body is never held as a tree.
#[derive(Deserialize)]
struct PutBody<'a> {
    provider: ProviderId,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    account: Option<String>,
    #[serde(default, borrow)]
    output: Option<&'a RawValue>,
    #[serde(default, borrow)]
    offerings: Option<&'a RawValue>,
}

/// A `PUT` body checked and placed, ready to store.
struct Checked {
    provider: ProviderId,
    label: String,
    account: Option<String>,
    parsed: Parsed,
}

/// Reads and checks `body` against `snapshot`: the work of a blocking thread, since a large
/// body takes tens of milliseconds to read.
fn check(
    body: &[u8],
    mapping_id: &ZoneMappingId,
    snapshot: &Snapshot,
) -> Result<Checked, ApiError> {
    let body: PutBody = serde_json::from_slice(body).map_err(invalid_body)?;
    let label = body.label.unwrap_or_else(|| mapping_id.as_str().to_owned());
    if !is_valid_display_name(&label) {
        return Err(invalid_body(format!(
            "label must be 1 to {MAX_ZONE_MAPPING_LABEL_CHARS} printable characters, not only \
             white space"
        )));
    }
    if let Some(account) = body.account.as_deref().filter(|a| !is_valid_account(a)) {
        return Err(invalid_body(format!(
            "account {account:?} is neither an AWS account id (12 digits) nor an Azure \
             subscription id (a GUID such as 0b1f6471-1bf0-4dda-aec3-111122223333)"
        )));
    }
    let output = match body.output {
        Some(raw) if raw.get().len() > MAX_ZONE_MAPPING_OUTPUT_BYTES => {
            return Err(ApiError::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "the zone mapping's output is larger than its limit of \
                     {MAX_ZONE_MAPPING_OUTPUT_BYTES} bytes (the body's limit is \
                     {MAX_ZONE_MAPPING_BYTES} bytes, for offerings)"
                ),
            ))
        }
        Some(raw) => {
            Some(serde_json::from_str::<serde_json::Value>(raw.get()).map_err(invalid_body)?)
        }
        None => None,
    };
    let parsed = parse_mapping(
        body.provider.as_str(),
        output.as_ref(),
        body.offerings.map(RawValue::get),
        mapping_id.as_str(),
        snapshot,
    )
    .map_err(|err| match err {
        MappingError::Shape(message) => invalid_body(message),
        MappingError::Catalog(message) => ApiError::new(
            ErrorCode::INVALID_ZONE_MAPPING,
            format!("invalid zone mapping: {message}"),
        ),
    })?;
    Ok(Checked {
        provider: body.provider,
        label,
        account: body.account,
        parsed,
    })
}

/// Stores or replaces a mapping; see the operation's description in the contract crate.
pub async fn put_zone_mapping(
    State(store): State<Store>,
    State(catalog): State<Catalog>,
    State(mappings): State<MappingCache>,
    write: Write,
    params: PathParams,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    if write.role != Role::Admin {
        return Err(forbidden());
    }
    let mapping_id = mapping_id(&params)?;
    // gzip was inflated on the way in (its header removed); any other is not read.
    if let Some(encoding) = headers
        .get(CONTENT_ENCODING)
        .filter(|e| !e.as_bytes().eq_ignore_ascii_case(b"identity"))
    {
        return Err(invalid_body(format!(
            "Content-Encoding {:?} is not read; send the body as it is, or gzip-compressed",
            String::from_utf8_lossy(encoding.as_bytes())
        )));
    }
    let body = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => ApiError::new(
            ErrorCode::PayloadTooLarge,
            super::error::payload_too_large(MAX_ZONE_MAPPING_BYTES),
        ),
        // A gzip body that does not inflate, or a connection lost mid-body.
        _ => invalid_body(format!(
            "the body could not be read: {}",
            rejection.body_text()
        )),
    })?;
    let snapshot = arc_swap::Guard::into_inner(catalog.snapshot());
    let id = mapping_id.clone();
    let Checked {
        provider,
        label,
        account,
        parsed,
    } = tokio::task::spawn_blocking(move || check(&body, &id, &snapshot))
        .await
        .map_err(ApiError::internal)??;
    let put = {
        let _writing = write.budget.writing();
        store
            .put_zone_mapping(
                &write.actor,
                MappingWrite {
                    id: &mapping_id,
                    provider: &provider,
                    label: &label,
                    // Azure: the subscription the output names, unless the body says.
                    account: account.as_deref().or(parsed
                        .subscription
                        .as_deref()
                        .filter(|s| is_valid_account(s))),
                    regions: &parsed.regions,
                    offerings: &parsed.offerings,
                },
            )
            .await
            .map_err(ApiError::storage)?
    };
    mappings.forget(&change_subject(&write.actor.org, mapping_id.as_str()));
    let (status, stored, removed, done) = match put {
        PutMapping::Created(stored) => (StatusCode::CREATED, stored, Vec::new(), "stored"),
        PutMapping::Replaced(stored, removed) => (StatusCode::OK, stored, removed, "replaced"),
        PutMapping::TooMany => {
            return Err(ApiError::new(
                ErrorCode::INVALID_ZONE_MAPPING,
                format!(
                    "invalid zone mapping: your organization keeps the most zone mappings it \
                     may ({MAX_ZONE_MAPPINGS_PER_ORGANIZATION}); delete one first"
                ),
            ))
        }
    };
    let mut message = format!(
        "zone mapping {mapping_id} {done}: {}",
        extent(&stored.mapping)
    );
    if !removed.is_empty() {
        let regions: Vec<&str> = removed.iter().map(|r| r.as_str()).collect();
        message.push_str(&format!(
            "; no longer holds {}",
            crate::catalog::count(regions.len(), "region", "regions")
        ));
        message.push_str(&format!(" ({})", regions.join(", ")));
    }
    if !parsed.skipped.is_empty() {
        message.push_str(&format!(
            "; {} skipped (see skipped for why)",
            parsed.skipped.len()
        ));
    }
    let mut answer = ZoneMappingAnswer::new(
        stored.mapping,
        write.actor.request_id.to_string(),
        crate::catalog::at_most(message, 1024),
    );
    answer.skipped = parsed.skipped;
    answer.removed_regions = removed;
    Ok((status, Json(answer)).into_response())
}

/// Deletes a mapping; see the operation's description in the contract crate.
pub async fn delete_zone_mapping(
    State(store): State<Store>,
    State(mappings): State<MappingCache>,
    write: Write,
    params: PathParams,
) -> Result<StatusCode, ApiError> {
    let mapping_id = mapping_id(&params)?;
    let actor = &write.actor;
    if write.role != Role::Admin {
        // A member learns whether the mapping exists (its organization's, readable with the
        // same key), then that it may not delete it.
        return match store.zone_mapping(&actor.org, &mapping_id).await {
            Ok(Some(_)) => Err(forbidden()),
            Ok(None) => Err(not_found(mapping_id.as_str())),
            Err(err) => Err(ApiError::storage(err)),
        };
    }
    let deleted = {
        let _writing = write.budget.writing();
        store
            .delete_zone_mapping(actor, &mapping_id)
            .await
            .map_err(ApiError::storage)?
    };
    mappings.forget(&change_subject(&actor.org, mapping_id.as_str()));
    if deleted {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(not_found(mapping_id.as_str()))
    }
}

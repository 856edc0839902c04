//! `DELETE /api/v1/applications/profiles/{profileId}`.
//!
//! The precedence is the contract's: 401 (done by the auth middleware), then 400 for a malformed
//! `Idempotency-Key`, then 404 for a profile the caller's organization does not have (so other
//! tenants' profiles stay invisible), then 403 for a member key, then 204 once the tombstone and
//! its audit record are committed. With an `Idempotency-Key`, a kept outcome is replayed
//! (`Idempotent-Replayed: true`), the key on another profile is 422, and the key of a request
//! still running is 409.
//!
//! While the write is in storage's hands the request is marked as writing: its timeout then
//! waits for the real outcome rather than answer 503 over a write that may still commit. The
//! write runs on a task of its own, so a client that leaves drops this handler but not the
//! write: the write finishes (by its deadline), and the request's 499 log line says whether it
//! committed ([`super::observe::RequestRecord::write_handed`]).

use appzone_contract::headers::{idempotency_key, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};
use appzone_contract::{ErrorCode, ProfileId};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use http::{HeaderMap, HeaderValue, StatusCode};
use tower_http::request_id::RequestId;

use super::error::ApiError;
use super::observe::RequestRecord;
use super::path::PathParams;
use super::timeout::WriteBudget;
use crate::keys::Caller;
use crate::metrics::Metrics;
use crate::model::Role;
use crate::storage::{DeleteAnswer, DeleteOutcome, DeleteRequest, Store};

pub use appzone_contract::openapi::__path_delete_application_profile;

fn not_found() -> ApiError {
    ApiError::new(ErrorCode::ProfileNotFound, "application profile not found")
}

/// The `Idempotency-Key` of the request: `Ok(None)` without one, 400 for a malformed one.
fn idempotency(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(idempotency_key)
        .map(Some)
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::Other(ErrorCode::INVALID_IDEMPOTENCY_KEY.to_owned()),
                "invalid Idempotency-Key: use 1 to 255 visible ASCII characters, for example a \
                 UUID",
            )
        })
}

/// Deletes a profile; see the operation's description in the contract crate.
pub async fn delete_application_profile(
    State(store): State<Store>,
    State(metrics): State<Metrics>,
    Extension(Caller { key }): Extension<Caller>,
    // The write's deadline, and where its outcome goes for the log line (one argument).
    (Extension(budget), record): (Extension<WriteBudget>, Option<Extension<RequestRecord>>),
    Extension(request_id): Extension<RequestId>,
    headers: HeaderMap,
    params: PathParams,
) -> Result<Response, ApiError> {
    // Request ids are visible ASCII (a caller's is validated, ours is a ULID).
    let request_id = request_id.header_value().to_str().unwrap_or_default();
    let idempotency_key = idempotency(&headers)?;
    // A malformed id cannot name a profile: same answer as an absent one.
    let id: ProfileId = params
        .get(0)
        .and_then(|s| s.parse().ok())
        .ok_or_else(not_found)?;
    match key.role {
        Role::Member => {
            if store
                .live_profile_exists(&id, &key.org_id)
                .await
                .map_err(ApiError::storage)?
            {
                Err(ApiError::new(
                    ErrorCode::Forbidden,
                    "your role may not delete application profiles; contact your organization admin",
                ))
            } else {
                Err(not_found())
            }
        }
        Role::Admin => {
            let answer = {
                let _writing = budget.writing();
                let outcome =
                    record.map(|Extension(record)| record.write_handed(budget.deadline()));
                let (store, id, org, key_id, request_id, idempotency_key, deadline) = (
                    store.clone(),
                    id.clone(),
                    key.org_id.clone(),
                    key.key_id.clone(),
                    request_id.to_owned(),
                    idempotency_key.map(str::to_owned),
                    budget.deadline(),
                );
                let writing = tokio::spawn(async move {
                    let answer = store
                        .delete_profile(DeleteRequest {
                            id: &id,
                            org: &org,
                            key_id: &key_id,
                            request_id: &request_id,
                            idempotency_key: idempotency_key.as_deref(),
                            deadline,
                        })
                        .await;
                    if let Some(outcome) = outcome {
                        outcome.report(matches!(
                            answer,
                            Ok(DeleteAnswer::Done(DeleteOutcome::Deleted))
                        ));
                    }
                    answer
                });
                writing
                    .await
                    .map_err(|err| ApiError::internal(format!("the delete's task failed: {err}")))?
                    .map_err(ApiError::storage)?
            };
            let (outcome, replayed) = match answer {
                DeleteAnswer::Done(outcome) => (outcome, false),
                DeleteAnswer::Replayed(outcome) => (outcome, true),
                DeleteAnswer::KeyReused => {
                    return Err(ApiError::new(
                        ErrorCode::Other(ErrorCode::IDEMPOTENCY_KEY_REUSED.to_owned()),
                        "this Idempotency-Key was used for another request; use a new key for \
                         each deletion",
                    ))
                }
                DeleteAnswer::KeyInUse => {
                    return Err(ApiError::new(
                        ErrorCode::Other(ErrorCode::IDEMPOTENCY_KEY_IN_USE.to_owned()),
                        "a request with this Idempotency-Key is still being processed; retry \
                         shortly",
                    )
                    .with_retry_after(1))
                }
            };
            let mut response = match outcome {
                DeleteOutcome::Deleted => {
                    if !replayed {
                        metrics.deleted();
                        tracing::info!(
                            profile_id = id.as_str(),
                            org_id = key.org_id.as_str(),
                            key_id = key.key_id.as_str(),
                            request_id,
                            "profile deleted"
                        );
                    }
                    StatusCode::NO_CONTENT.into_response()
                }
                DeleteOutcome::NotFound => not_found().into_response(),
            };
            if replayed {
                response
                    .headers_mut()
                    .insert(IDEMPOTENT_REPLAYED, HeaderValue::from_static("true"));
            }
            Ok(response)
        }
    }
}

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

use appzone_contract::headers::IDEMPOTENT_REPLAYED;
use appzone_contract::{ErrorCode, ProfileId};
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, StatusCode};

use super::auth::Write;
use super::error::ApiError;
use super::path::PathParams;
use crate::metrics::Metrics;
use crate::model::Role;
use crate::storage::{DeleteAnswer, DeleteOutcome, DeleteRequest, Store};

pub use appzone_contract::openapi::__path_delete_application_profile;

fn not_found() -> ApiError {
    ApiError::new(ErrorCode::ProfileNotFound, "application profile not found")
}

/// Deletes a profile; see the operation's description in the contract crate.
pub async fn delete_application_profile(
    State(store): State<Store>,
    State(metrics): State<Metrics>,
    // Extracted first: a malformed `Idempotency-Key` is 400 before the profile is looked at.
    write: Write<Option<String>>,
    params: PathParams,
) -> Result<Response, ApiError> {
    // A malformed id cannot name a profile: same answer as an absent one.
    let id: ProfileId = params
        .get(0)
        .and_then(|s| s.parse().ok())
        .ok_or_else(not_found)?;
    if write.role != Role::Admin {
        return if store
            .live_profile_exists(&id, &write.actor.org)
            .await
            .map_err(ApiError::storage)?
        {
            Err(ApiError::new(
                ErrorCode::Forbidden,
                "your role may not delete application profiles; contact your organization admin",
            ))
        } else {
            Err(not_found())
        };
    }
    let Write {
        actor,
        idempotency_key,
        budget,
        record,
        ..
    } = write;
    let deadline = budget.deadline();
    let answer = {
        let _writing = budget.writing();
        let outcome = record.map(|record| record.write_handed(deadline));
        let request = DeleteRequest {
            // The answer's log line still names the profile and the caller.
            id: id.clone(),
            actor: actor.clone(),
            idempotency_key,
            deadline,
        };
        let writing = tokio::spawn(async move {
            let answer = store.delete_profile(request).await;
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
                ErrorCode::IDEMPOTENCY_KEY_REUSED,
                "this Idempotency-Key was used for another request; use a new key for each \
                 deletion",
            ))
        }
        DeleteAnswer::KeyInUse => {
            return Err(ApiError::new(
                ErrorCode::IDEMPOTENCY_KEY_IN_USE,
                "a request with this Idempotency-Key is still being processed; retry shortly",
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
                    org_id = &*actor.org,
                    key_id = &*actor.key_id,
                    request_id = &*actor.request_id,
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

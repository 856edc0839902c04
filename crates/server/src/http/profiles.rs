//! `DELETE /api/v1/applications/profiles/{profileId}`.
//!
//! The precedence is the contract's: 401 (done by the auth middleware), then 404 for a profile
//! the caller's organization does not have (so other tenants' profiles stay invisible), then 403
//! for a member key, then 204 once the tombstone and its audit record are committed.

use std::sync::Arc;

use appzone_contract::{ErrorCode, ProfileId};
use axum::extract::State;
use axum::Extension;
use http::StatusCode;

use super::context::RequestContext;
use super::error::ApiError;
use super::metrics::Metrics;
use super::path::RawParams;
use super::routes::RouteLabel;
use crate::keys::Caller;
use crate::model::Role;
use crate::storage::{DeleteOutcome, Store};

pub use appzone_contract::openapi::__path_delete_application_profile;

fn not_found() -> ApiError {
    ApiError::new(ErrorCode::ProfileNotFound, "application profile not found")
}

/// Deletes a profile; see the operation's description in the contract crate.
pub async fn delete_application_profile(
    State(store): State<Store>,
    State(metrics): State<Metrics>,
    Extension(context): Extension<Arc<RequestContext>>,
    params: RawParams,
) -> Result<StatusCode, ApiError> {
    context.matched(RouteLabel::DELETE_PROFILE);
    let Some(Caller { key }) = context.caller() else {
        return Err(ApiError::internal(
            "API route reached without an authenticated caller",
        ));
    };
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
            let outcome = store
                .delete_profile(&id, &key.org_id, &key.key_id, context.request_id())
                .await
                .map_err(ApiError::storage)?;
            match outcome {
                DeleteOutcome::Deleted => {
                    metrics.deleted();
                    tracing::info!(
                        profile_id = id.as_str(),
                        org_id = key.org_id.as_str(),
                        key_id = key.key_id.as_str(),
                        request_id = context.request_id(),
                        "profile deleted"
                    );
                    Ok(StatusCode::NO_CONTENT)
                }
                DeleteOutcome::NotFound => Err(not_found()),
            }
        }
    }
}

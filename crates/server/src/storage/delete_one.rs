//! One profile delete: what the HTTP layer asks ([`DeleteRequest`]), what it hears
//! ([`DeleteAnswer`]), the outcome kept for an `Idempotency-Key`, and the statements that apply
//! a delete inside an open transaction.
//!
//! Both the entry point (`deletes.rs`, which picks the backend's way) and SQLite's group-commit
//! writer (`group_commit.rs`) use these; they live below both, so the writer never imports the
//! entry point that hands it work.

use std::time::{Duration, Instant};

use appzone_contract::headers::IDEMPOTENCY_KEY_TTL_HOURS;
use appzone_contract::ProfileId;
use sqlx::{AnyConnection, Row};

use super::errors::ResultExt;
use super::profiles::audit;
use super::zone_mappings::Actor;
use super::StoreError;
use crate::model::now_ms;

/// How long the outcome of a delete sent with an `Idempotency-Key` is kept.
pub const IDEMPOTENCY_TTL: Duration = Duration::from_secs(IDEMPOTENCY_KEY_TTL_HOURS * 3600);

/// One delete, as the HTTP layer asks for it: owned, built once and moved to whatever applies
/// it (on SQLite, the group-commit writer's task).
#[derive(Debug)]
pub struct DeleteRequest {
    /// The profile.
    pub id: ProfileId,
    /// The caller (only its organization's profiles can be deleted) and the request, for the
    /// audit record.
    pub actor: Actor,
    /// The caller's `Idempotency-Key`, already checked against the contract's rules.
    pub idempotency_key: Option<String>,
    /// Past this instant the delete is not started, and a lock wait gives up (rolled back).
    pub deadline: Instant,
}

/// What a delete did to a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// The profile was live in the caller's organization and is now a committed tombstone.
    Deleted,
    /// Absent, already deleted, or another organization's.
    NotFound,
}

impl DeleteOutcome {
    /// The HTTP status kept with an idempotency key (storage stores the number, not its meaning).
    fn kept_status(self) -> i64 {
        match self {
            DeleteOutcome::Deleted => 204,
            DeleteOutcome::NotFound => 404,
        }
    }

    fn from_kept_status(status: i64) -> Result<Self, StoreError> {
        match status {
            204 => Ok(DeleteOutcome::Deleted),
            404 => Ok(DeleteOutcome::NotFound),
            other => Err(StoreError::Corrupt(format!(
                "idempotency record with status {other}"
            ))),
        }
    }
}

/// The answer to a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteAnswer {
    /// This request's own outcome, committed.
    Done(DeleteOutcome),
    /// The outcome of the first request with the same `Idempotency-Key`; nothing was changed now.
    Replayed(DeleteOutcome),
    /// The `Idempotency-Key` was used for another profile within [`IDEMPOTENCY_TTL`]; nothing
    /// was changed.
    KeyReused,
    /// A request with the same `Idempotency-Key` is still running in this process; nothing was
    /// changed.
    KeyInUse,
}

/// Applies one delete on SQLite inside the writer's open transaction: the kept answer for its
/// key if there is one, else the delete itself and (with a key) its kept outcome.
pub(super) async fn apply_in_transaction(
    conn: &mut AnyConnection,
    request: &DeleteRequest,
) -> Result<DeleteAnswer, StoreError> {
    let now = now_ms();
    if let Some(key) = request.idempotency_key.as_deref() {
        if let Some(answer) = kept_answer(conn, request, key, now).await? {
            return Ok(answer);
        }
    }
    let done = sqlx::query(
        "UPDATE profiles SET deleted_at = $1 \
         WHERE id = $2 AND org_id = $3 AND deleted_at IS NULL",
    )
    .bind(now)
    .bind(request.id.as_str())
    .bind(&*request.actor.org)
    .execute(&mut *conn)
    .await
    .classify()?;
    let outcome = if done.rows_affected() == 1 {
        audit(
            conn,
            request.id.as_str(),
            &request.actor.org,
            "delete",
            &request.actor.key_id,
            &request.actor.request_id,
            now,
        )
        .await?;
        DeleteOutcome::Deleted
    } else {
        DeleteOutcome::NotFound
    };
    if let Some(key) = request.idempotency_key.as_deref() {
        sqlx::query(
            "INSERT INTO idempotency_keys \
                 (org_id, idem_key, profile_id, status, request_id, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(&*request.actor.org)
        .bind(key)
        .bind(request.id.as_str())
        .bind(outcome.kept_status())
        .bind(&*request.actor.request_id)
        .bind(now)
        .execute(&mut *conn)
        .await
        .classify()?;
    }
    Ok(DeleteAnswer::Done(outcome))
}

/// The answer kept for `key` in the caller's organization, if a live one exists; an expired
/// one is removed, so the key can be used again.
pub(super) async fn kept_answer(
    conn: &mut AnyConnection,
    request: &DeleteRequest,
    key: &str,
    now: i64,
) -> Result<Option<DeleteAnswer>, StoreError> {
    let row = sqlx::query(
        "SELECT profile_id, status, created_at FROM idempotency_keys \
         WHERE org_id = $1 AND idem_key = $2",
    )
    .bind(&*request.actor.org)
    .bind(key)
    .fetch_all(&mut *conn)
    .await
    .classify()?;
    let Some(row) = row.first() else {
        return Ok(None);
    };
    let created_at: i64 = row.try_get("created_at").classify()?;
    let ttl_ms = i64::try_from(IDEMPOTENCY_TTL.as_millis()).unwrap_or(i64::MAX);
    if created_at < now.saturating_sub(ttl_ms) {
        sqlx::query(
            "DELETE FROM idempotency_keys \
             WHERE org_id = $1 AND idem_key = $2 AND created_at = $3",
        )
        .bind(&*request.actor.org)
        .bind(key)
        .bind(created_at)
        .execute(&mut *conn)
        .await
        .classify()?;
        return Ok(None);
    }
    let profile: String = row.try_get("profile_id").classify()?;
    if profile != request.id.as_str() {
        return Ok(Some(DeleteAnswer::KeyReused));
    }
    let status: i64 = row.try_get("status").classify()?;
    Ok(Some(DeleteAnswer::Replayed(
        DeleteOutcome::from_kept_status(status)?,
    )))
}

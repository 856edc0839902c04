//! Profile deletes, and the outcomes kept for their `Idempotency-Key`s.
//!
//! Every delete's answer is the truth about the data: `Deleted` only once the tombstone, its
//! audit record and (with a key) the kept outcome are committed together; an error only when
//! nothing was changed. Each delete carries a deadline: past it, a delete not yet started is
//! not started at all, and a lock wait gives up (SQLite's busy timeout, PostgreSQL's statement
//! timeout) and rolls back. So a request timeout never leaves a write running behind a 503.
//!
//! An `Idempotency-Key` makes a retry learn the first attempt's outcome: the outcome (deleted or
//! not found) is written in the delete's own transaction, and a later request of the same
//! organization with the same key gets it back ([`DeleteAnswer::Replayed`]) for
//! [`IDEMPOTENCY_TTL`](super::IDEMPOTENCY_TTL), or [`DeleteAnswer::KeyReused`] when it names another profile. While a
//! request with a key runs, another with the same key in this process gets
//! [`DeleteAnswer::KeyInUse`]; on another replica (PostgreSQL) it waits for the first one's row
//! lock and then gets the replay.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use sqlx::Row;

use super::delete_one::{kept_answer, DeleteAnswer, DeleteOutcome, DeleteRequest};
use super::errors::ResultExt;
use super::{group_commit, Store, StoreError};
use crate::model::now_ms;

/// The `(organization, key)` pairs of the deletes running in this process.
#[derive(Debug, Clone, Default)]
pub(super) struct KeysInFlight(Arc<Mutex<HashSet<(String, String)>>>);

/// A claimed key; released when dropped.
pub(super) struct Claim {
    keys: KeysInFlight,
    pair: (String, String),
}

impl KeysInFlight {
    fn claim(&self, org: &str, key: &str) -> Option<Claim> {
        let pair = (org.to_owned(), key.to_owned());
        let mut held = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.insert(pair.clone()).then(|| Claim {
            keys: self.clone(),
            pair,
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut held = self.keys.0.lock().unwrap_or_else(PoisonError::into_inner);
        held.remove(&self.pair);
    }
}

impl Store {
    /// Turns a live profile of the caller's organization into a tombstone and writes its audit
    /// record (and, with an `Idempotency-Key`, the kept outcome), committed before this
    /// returns; or replays the outcome kept for the key. Of concurrent calls for one profile
    /// exactly one sees `Deleted`: the conditional `UPDATE` is the arbiter on both backends. On
    /// SQLite the commit is shared with concurrent deletes (see `group_commit`).
    ///
    /// An error means nothing was changed: [`StoreError::is_unavailable`] errors (the
    /// deadline passed, a lock was held too long, the database is unreachable or full) are
    /// worth a retry.
    pub async fn delete_profile(&self, request: DeleteRequest) -> Result<DeleteAnswer, StoreError> {
        let _claim = match request.idempotency_key.as_deref() {
            Some(key) => match self.keys_in_flight.claim(&request.actor.org, key) {
                Some(claim) => Some(claim),
                None => return Ok(DeleteAnswer::KeyInUse),
            },
            None => None,
        };
        if Instant::now() >= request.deadline {
            return Err(StoreError::DeadlinePassed);
        }
        if self.pool.is_closed() {
            // The writer has a connection of its own; a closed store writes nothing more.
            return Err(StoreError::Unavailable(sqlx::Error::PoolClosed));
        }
        match &self.deletes {
            Some(writer) => group_commit::submit(writer, request).await,
            // Its connection is refused at once while PostgreSQL is known down, and a failure
            // to reach it marks it down for every request (see `availability.rs`).
            None => self.noted(self.delete_on_postgres(&request).await),
        }
    }

    async fn delete_on_postgres(
        &self,
        request: &DeleteRequest,
    ) -> Result<DeleteAnswer, StoreError> {
        let mut conn = self.acquire().await?;
        let Some(key) = request.idempotency_key.as_deref() else {
            // The tombstone and its audit record in one statement, which commits as one
            // transaction: one round trip instead of four (BEGIN, UPDATE, INSERT, COMMIT).
            // SQLite has no data-modifying WITH; its deletes go through the group commit.
            let done = sqlx::query(
                "WITH deleted AS ( \
                     UPDATE profiles SET deleted_at = $1 \
                     WHERE id = $2 AND org_id = $3 AND deleted_at IS NULL \
                     RETURNING id, org_id) \
                 INSERT INTO profile_audit (profile_id, org_id, action, key_id, request_id, at) \
                 SELECT id, org_id, 'delete', $4, $5, $1 FROM deleted",
            )
            .bind(now_ms())
            .bind(request.id.as_str())
            .bind(&*request.actor.org)
            .bind(&*request.actor.key_id)
            .bind(&*request.actor.request_id)
            .execute(&mut *conn)
            .await
            .classify()?;
            return Ok(DeleteAnswer::Done(match done.rows_affected() {
                0 => DeleteOutcome::NotFound,
                _ => DeleteOutcome::Deleted,
            }));
        };
        // A request with the same key on another replica may commit its outcome between the
        // look-up and the write; the write then fails on the key's primary key, changing
        // nothing, and the second look-up finds that outcome.
        for _ in 0..2 {
            let now = now_ms();
            if let Some(answer) = kept_answer(&mut conn, request, key, now).await? {
                return Ok(answer);
            }
            // Tombstone, audit record and kept outcome in one statement, one transaction.
            let written = sqlx::query(
                "WITH deleted AS ( \
                     UPDATE profiles SET deleted_at = $1 \
                     WHERE id = $2 AND org_id = $3 AND deleted_at IS NULL \
                     RETURNING id, org_id), \
                 audit AS ( \
                     INSERT INTO profile_audit (profile_id, org_id, action, key_id, request_id, at) \
                     SELECT id, org_id, 'delete', $4, $5, $1 FROM deleted), \
                 kept AS ( \
                     INSERT INTO idempotency_keys \
                         (org_id, idem_key, profile_id, status, request_id, created_at) \
                     SELECT $3, $6, $2, \
                         CASE WHEN EXISTS (SELECT 1 FROM deleted) THEN 204 ELSE 404 END, $5, $1) \
                 SELECT count(*) AS deleted FROM deleted",
            )
            .bind(now)
            .bind(request.id.as_str())
            .bind(&*request.actor.org)
            .bind(&*request.actor.key_id)
            .bind(&*request.actor.request_id)
            .bind(key)
            .fetch_all(&mut *conn)
            .await;
            match written.and_then(|rows| rows.into_iter().next().ok_or(sqlx::Error::RowNotFound)) {
                Ok(row) => {
                    let deleted: i64 = row.try_get("deleted").classify()?;
                    return Ok(DeleteAnswer::Done(if deleted > 0 {
                        DeleteOutcome::Deleted
                    } else {
                        DeleteOutcome::NotFound
                    }));
                }
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => continue,
                Err(err) => return Err(err).classify(),
            }
        }
        Err(StoreError::Corrupt(
            "an idempotency key's outcome was neither found nor writable".to_owned(),
        ))
    }

    /// Removes the outcomes kept for idempotency keys older than `cutoff_ms`; returns how many.
    pub async fn purge_idempotency_keys(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        let done = sqlx::query("DELETE FROM idempotency_keys WHERE created_at < $1")
            .bind(cutoff_ms)
            .execute(&self.pool)
            .await
            .classify()?;
        Ok(done.rows_affected())
    }
}

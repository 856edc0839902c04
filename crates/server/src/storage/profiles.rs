//! Application profiles: created, listed, restored from their tombstone, purged, and the audit
//! record every change of one leaves. Deleting is in `deletes.rs` (and, on SQLite,
//! `group_commit.rs`).

use appzone_contract::ProfileId;
use sqlx::{AnyConnection, Row};

use super::errors::ResultExt;
use super::{Store, StoreError};
use crate::model::{check_display_name, now_ms, OrgId, ProfileInfo};

impl Store {
    /// Creates a profile; a new id is `prof_` + ULID unless one is given.
    pub async fn create_profile(
        &self,
        org: &OrgId,
        name: &str,
        id: Option<ProfileId>,
    ) -> Result<ProfileId, StoreError> {
        check_display_name(name).map_err(StoreError::Invalid)?;
        self.require_org(org).await?;
        let id = match id {
            Some(id) => id,
            None => ProfileId::new(format!("prof_{}", ulid::Ulid::generate()))
                .map_err(|e| StoreError::Invalid(e.to_string()))?,
        };
        sqlx::query("INSERT INTO profiles (id, org_id, name, created_at) VALUES ($1, $2, $3, $4)")
            .bind(id.as_str())
            .bind(org.as_str())
            .bind(name)
            .bind(now_ms())
            .execute(&self.pool)
            .await
            .on_unique(|| format!("a profile with the id {id} already exists"))?;
        Ok(id)
    }

    /// The organization's live profiles, or its tombstones when `deleted` is true.
    pub async fn list_profiles(
        &self,
        org: &OrgId,
        deleted: bool,
    ) -> Result<Vec<ProfileInfo>, StoreError> {
        let sql = if deleted {
            "SELECT id, name, created_at, deleted_at FROM profiles \
             WHERE org_id = $1 AND deleted_at IS NOT NULL ORDER BY deleted_at, id"
        } else {
            "SELECT id, name, created_at, deleted_at FROM profiles \
             WHERE org_id = $1 AND deleted_at IS NULL ORDER BY created_at, id"
        };
        self.rows_of_org(org, sql, |row| {
            Ok(ProfileInfo {
                id: row.try_get("id").classify()?,
                name: row.try_get("name").classify()?,
                created_at: row.try_get("created_at").classify()?,
                deleted_at: row.try_get("deleted_at").classify()?,
            })
        })
        .await
    }

    /// Whether `id` is a live profile of `org`.
    pub async fn live_profile_exists(&self, id: &ProfileId, org: &str) -> Result<bool, StoreError> {
        let row = self
            .guarded(async {
                sqlx::query(
                    "SELECT 1 FROM profiles WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL",
                )
                .bind(id.as_str())
                .bind(org)
                // Every row, not the first: see the module docs of `storage`.
                .fetch_all(&self.pool)
                .await
                .classify()
            })
            .await?;
        Ok(!row.is_empty())
    }

    /// Restores a tombstone. [`StoreError::NotFound`] when `id` is not a deleted profile.
    pub async fn restore_profile(&self, id: &ProfileId) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        let row = sqlx::query(
            "UPDATE profiles SET deleted_at = NULL WHERE id = $1 AND deleted_at IS NOT NULL \
             RETURNING org_id",
        )
        .bind(id.as_str())
        // All of it: see `revoke_key` on a statement left unfinished.
        .fetch_all(&mut *tx)
        .await
        .classify()?;
        let Some(row) = row.first() else {
            return Err(StoreError::NotFound(format!(
                "no deleted profile has the id {id}"
            )));
        };
        let org: String = row.try_get("org_id").classify()?;
        audit(
            &mut tx,
            id.as_str(),
            &org,
            "restore",
            "operator",
            "cli",
            now_ms(),
        )
        .await?;
        tx.commit().await.classify()
    }

    /// Purges tombstones deleted before `cutoff_ms`; returns how many.
    pub async fn purge_tombstones(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        let now = now_ms();
        let purged = sqlx::query(
            "INSERT INTO profile_audit (profile_id, org_id, action, key_id, request_id, at) \
             SELECT id, org_id, 'purge', 'retention', 'purge', $1 FROM profiles \
             WHERE deleted_at IS NOT NULL AND deleted_at < $2",
        )
        .bind(now)
        .bind(cutoff_ms)
        .execute(&mut *tx)
        .await
        .classify()?;
        sqlx::query("DELETE FROM profiles WHERE deleted_at IS NOT NULL AND deleted_at < $1")
            .bind(cutoff_ms)
            .execute(&mut *tx)
            .await
            .classify()?;
        tx.commit().await.classify()?;
        Ok(purged.rows_affected())
    }
}

/// Writes one audit record of a profile's change inside the caller's transaction, so the
/// record commits or rolls back with the change itself.
pub(super) async fn audit(
    conn: &mut AnyConnection,
    profile_id: &str,
    org: &str,
    action: &str,
    key_id: &str,
    request_id: &str,
    at: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO profile_audit (profile_id, org_id, action, key_id, request_id, at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(profile_id)
    .bind(org)
    .bind(action)
    .bind(key_id)
    .bind(request_id)
    .bind(at)
    .execute(&mut *conn)
    .await
    .classify()?;
    Ok(())
}

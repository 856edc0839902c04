//! Organizations: the tenants every key and profile belongs to.

use sqlx::any::AnyRow;
use sqlx::Row;

use super::errors::{found, ResultExt};
use super::{Store, StoreError};
use crate::model::{check_display_name, now_ms, OrgId, OrgInfo};

impl Store {
    /// Creates an organization. [`StoreError::Conflict`] when the id exists.
    pub async fn create_org(&self, id: &OrgId, name: &str) -> Result<(), StoreError> {
        check_display_name(name).map_err(StoreError::Invalid)?;
        sqlx::query("INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3)")
            .bind(id.as_str())
            .bind(name)
            .bind(now_ms())
            .execute(&self.pool)
            .await
            .on_unique(|| format!("organization {id} already exists"))?;
        Ok(())
    }

    /// Every organization, by id, with its active keys and live profiles counted.
    pub async fn list_orgs(&self) -> Result<Vec<OrgInfo>, StoreError> {
        // One statement, so the counts are of the same moment as the rows; both counts use
        // the `org_id` indexes.
        let rows = sqlx::query(
            "SELECT o.id, o.name, o.created_at, \
             (SELECT COUNT(*) FROM api_keys k \
              WHERE k.org_id = o.id AND k.revoked_at IS NULL) AS active_keys, \
             (SELECT COUNT(*) FROM profiles p \
              WHERE p.org_id = o.id AND p.deleted_at IS NULL) AS live_profiles \
             FROM organizations o ORDER BY o.id",
        )
        .fetch_all(&self.pool)
        .await
        .classify()?;
        rows.iter()
            .map(|row| {
                Ok(OrgInfo {
                    id: row.try_get("id").classify()?,
                    name: row.try_get("name").classify()?,
                    created_at: row.try_get("created_at").classify()?,
                    active_keys: row.try_get("active_keys").classify()?,
                    live_profiles: row.try_get("live_profiles").classify()?,
                })
            })
            .collect()
    }

    /// Whether the organization exists.
    pub async fn org_exists(&self, id: &OrgId) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 FROM organizations WHERE id = $1")
            .bind(id.as_str())
            // Every row, not the first: see the module docs of `storage`.
            .fetch_all(&self.pool)
            .await
            .classify()?;
        Ok(!row.is_empty())
    }

    /// Nothing, or [`StoreError::NotFound`] naming `id` when no such organization exists.
    pub(super) async fn require_org(&self, id: &OrgId) -> Result<(), StoreError> {
        found(self.org_exists(id).await?, || {
            format!("organization {id} does not exist")
        })
    }

    /// The rows `sql` selects for the existing organization `org` (its `$1`), each read by
    /// `read`.
    pub(super) async fn rows_of_org<T>(
        &self,
        org: &OrgId,
        sql: &'static str,
        read: impl Fn(&AnyRow) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        self.require_org(org).await?;
        let rows = sqlx::query(sql)
            .bind(org.as_str())
            .fetch_all(&self.pool)
            .await
            .classify()?;
        rows.iter().map(read).collect()
    }
}

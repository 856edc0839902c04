//! API keys: created for an organization, looked up by id, listed, revoked. Only a key's
//! digest is stored.

use appzone_contract::ApiKey;
use sha2::{Digest, Sha256};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::changes::{self, Change};
use super::errors::ResultExt;
use super::{Store, StoreError};
use crate::model::{now_ms, KeyInfo, KeyRecord, OrgId, Role};

/// Lowercase hex SHA-256 of a whole key, as stored in `api_keys.digest`. Here, with the table
/// it describes, rather than in `keys` (which verifies keys against it): storage writes it and
/// must not import from the layer above.
pub fn digest_hex(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

impl Store {
    /// Creates a key for an existing organization and returns it; only its digest is stored.
    pub async fn create_key(
        &self,
        org: &OrgId,
        role: Role,
        name: &str,
    ) -> Result<ApiKey, StoreError> {
        self.require_org(org).await?;
        let key = ApiKey::generate();
        let mut tx = self.pool.begin().await.classify()?;
        sqlx::query(
            "INSERT INTO api_keys (key_id, org_id, role, name, digest, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(key.key_id().as_str())
        .bind(org.as_str())
        .bind(role.as_str())
        .bind(name)
        .bind(digest_hex(key.expose_secret()))
        .bind(now_ms())
        .execute(&mut *tx)
        .await
        .on_foreign_key(|| format!("organization {org} does not exist"))?;
        // A server that cached "no such key" for this id (a guess, before it existed) forgets it.
        let change = Change::Key(key.key_id().as_str().to_owned());
        changes::record(&mut tx, self.backend, &change).await?;
        tx.commit().await.classify()?;
        Ok(key)
    }

    /// The live (not revoked) key with this id, if any.
    pub async fn find_active_key(&self, key_id: &str) -> Result<Option<KeyRecord>, StoreError> {
        let row = self
            .guarded(async {
                sqlx::query(
                    "SELECT key_id, org_id, role, digest FROM api_keys \
                     WHERE key_id = $1 AND revoked_at IS NULL",
                )
                .bind(key_id)
                // Every row, not the first: see the module docs of `storage`.
                .fetch_all(&self.pool)
                .await
                .classify()
            })
            .await?;
        row.first()
            .map(|row| {
                Ok(KeyRecord {
                    key_id: row.try_get("key_id").classify()?,
                    org_id: row.try_get("org_id").classify()?,
                    role: parse_role(row)?,
                    digest: parse_digest(&row.try_get::<String, _>("digest").classify()?)?,
                })
            })
            .transpose()
    }

    /// The organization's keys, oldest first, revoked ones included.
    pub async fn list_keys(&self, org: &OrgId) -> Result<Vec<KeyInfo>, StoreError> {
        let sql = "SELECT key_id, role, name, created_at, revoked_at, last_used_at FROM api_keys \
                   WHERE org_id = $1 ORDER BY created_at, key_id";
        self.rows_of_org(org, sql, |row| {
            Ok(KeyInfo {
                key_id: row.try_get("key_id").classify()?,
                role: parse_role(row)?,
                name: row.try_get("name").classify()?,
                created_at: row.try_get("created_at").classify()?,
                revoked_at: row.try_get("revoked_at").classify()?,
                last_used_at: row.try_get("last_used_at").classify()?,
            })
        })
        .await
    }

    /// Sets the key's `last_used_at` to `at` (Unix milliseconds), unless a later time is
    /// there already (another replica's, or a write that overtook this one).
    pub async fn record_key_use(&self, key_id: &str, at: i64) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE api_keys SET last_used_at = $1 \
             WHERE key_id = $2 AND (last_used_at IS NULL OR last_used_at < $1)",
        )
        .bind(at)
        .bind(key_id)
        .execute(&self.pool)
        .await
        .classify()?;
        Ok(())
    }

    /// Revokes a key and says whether this call revoked it or it already was (so a rotation
    /// script can be re-run). [`StoreError::NotFound`] when no key has this id.
    pub async fn revoke_key(&self, key_id: &str) -> Result<Revocation, StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        // Every row, not the first: see the module docs of `storage`.
        let revoked = sqlx::query(
            "UPDATE api_keys SET revoked_at = $1 WHERE key_id = $2 AND revoked_at IS NULL \
             RETURNING org_id",
        )
        .bind(now_ms())
        .bind(key_id)
        .fetch_all(&mut *tx)
        .await
        .classify()?;
        if let Some(row) = revoked.first() {
            let org_id = row.try_get("org_id").classify()?;
            // Every server drops the key from its cache when this commits.
            changes::record(&mut tx, self.backend, &Change::Key(key_id.to_owned())).await?;
            tx.commit().await.classify()?;
            return Ok(Revocation {
                org_id,
                already: false,
            });
        }
        tx.rollback().await.classify()?;
        // Nothing updated: the key is either revoked already or unknown. Keys are never
        // deleted, so a key revoked a moment ago is found here.
        let existing = sqlx::query("SELECT org_id FROM api_keys WHERE key_id = $1")
            .bind(key_id)
            .fetch_all(&self.pool)
            .await
            .classify()?;
        let Some(row) = existing.first() else {
            return Err(StoreError::NotFound(format!(
                "no key has the id {key_id:?}"
            )));
        };
        Ok(Revocation {
            org_id: row.try_get("org_id").classify()?,
            already: true,
        })
    }
}

/// What [`Store::revoke_key`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revocation {
    /// The organization the key belongs to.
    pub org_id: String,
    /// Whether the key was revoked before this call (and was left as it was).
    pub already: bool,
}

fn parse_digest(hex_digest: &str) -> Result<[u8; 32], StoreError> {
    let mut digest = [0u8; 32];
    hex::decode_to_slice(hex_digest, &mut digest)
        .map_err(|e| StoreError::Corrupt(format!("api_keys.digest: {e}")))?;
    Ok(digest)
}

fn parse_role(row: &AnyRow) -> Result<Role, StoreError> {
    let role: String = row.try_get("role").classify()?;
    role.parse().map_err(StoreError::Corrupt)
}

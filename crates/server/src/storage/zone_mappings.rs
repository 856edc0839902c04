//! Organizations' zone mappings: stored, replaced, read and deleted, each change with its
//! audit record and a change-log row in the same transaction (so every server drops what it
//! cached of the mapping, and an answer that says "stored" or "deleted" is committed).

use std::sync::Arc;

use appzone_contract::{
    MappedRegion, ProviderId, RegionId, ZoneMapping, ZoneMappingId,
    MAX_ZONE_MAPPINGS_PER_ORGANIZATION,
};
use sqlx::any::AnyRow;
use sqlx::Row;

use super::changes::{self, Change};
use super::errors::ResultExt;
use super::{Backend, Store, StoreError};
use crate::model::offerings::Offerings;
use crate::model::{format_ms, now_ms};

/// A stored mapping and its version (the time it was stored, in Unix milliseconds), which
/// changes whenever it is replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMapping {
    /// The mapping as the API shows it.
    pub mapping: ZoneMapping,
    /// When it was stored (Unix milliseconds).
    pub version: i64,
    /// Its instance-type offerings (the mapping shows their counts).
    pub offerings: Offerings,
}

/// What storing a mapping did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutMapping {
    /// A new mapping.
    Created(StoredMapping),
    /// An existing mapping replaced; with the regions the old version had and this one lacks.
    Replaced(StoredMapping, Vec<RegionId>),
    /// Refused: the organization keeps the most mappings it may; nothing was stored.
    TooMany,
}

/// A mapping to store: its id in the organization and what the request gave.
#[derive(Debug, Clone, Copy)]
pub struct MappingWrite<'a> {
    /// The mapping's id in the organization.
    pub id: &'a ZoneMappingId,
    /// The provider whose output it was taken from.
    pub provider: &'a ProviderId,
    /// The caller's label.
    pub label: &'a str,
    /// The AWS account or Azure subscription the output was taken from.
    pub account: Option<&'a str>,
    /// The pairs, per region.
    pub regions: &'a [MappedRegion],
    /// The instance-type offerings placed on them.
    pub offerings: &'a Offerings,
}

/// Who asked for a write (a zone mapping's or a profile delete's), for its audit record.
///
/// Owned, built once per request (`http::auth::Write`) and moved with the write, into a task
/// of its own and SQLite's delete writer included; cheap to clone (three reference counts) for
/// a handler that still names the caller once the write has it.
#[derive(Debug, Clone)]
pub struct Actor {
    /// The organization.
    pub org: Arc<str>,
    /// The key's public id.
    pub key_id: Arc<str>,
    /// The request id.
    pub request_id: Arc<str>,
}

/// The change-log subject naming one mapping: `org/id` (neither contains `/`).
pub fn change_subject(org: &str, id: &str) -> String {
    // The mapping cache's key on every request that names a mapping: no `format!` machinery.
    [org, "/", id].concat()
}

impl Store {
    /// The organization's mapping `id`, if it has one.
    pub async fn zone_mapping(
        &self,
        org: &str,
        id: &ZoneMappingId,
    ) -> Result<Option<StoredMapping>, StoreError> {
        let rows = self
            .guarded(async {
                sqlx::query(
                    "SELECT id, provider, label, account, pairs, offerings, imported_at \
                     FROM zone_mappings WHERE org_id = $1 AND id = $2",
                )
                .bind(org)
                .bind(id.as_str())
                .fetch_all(&self.pool)
                .await
                .classify()
            })
            .await?;
        rows.first().map(read_mapping).transpose()
    }

    /// The organization's mappings, ordered by id.
    pub async fn zone_mappings(&self, org: &str) -> Result<Vec<StoredMapping>, StoreError> {
        let rows = self
            .guarded(async {
                sqlx::query(
                    "SELECT id, provider, label, account, pairs, offerings, imported_at \
                     FROM zone_mappings WHERE org_id = $1 ORDER BY id",
                )
                .bind(org)
                .fetch_all(&self.pool)
                .await
                .classify()
            })
            .await?;
        rows.iter().map(read_mapping).collect()
    }

    /// Stores `write` as the organization's mapping of its id, replacing one of that id.
    pub async fn put_zone_mapping(
        &self,
        actor: &Actor,
        write: MappingWrite<'_>,
    ) -> Result<PutMapping, StoreError> {
        match self.put_zone_mapping_once(actor, write).await {
            // Two requests created the same new id at once (PostgreSQL: both saw no row, the
            // second's insert waited for the first's commit): the second replaces it.
            Err(StoreError::Conflict(_)) => self.put_zone_mapping_once(actor, write).await,
            done => done,
        }
    }

    async fn put_zone_mapping_once(
        &self,
        actor: &Actor,
        write: MappingWrite<'_>,
    ) -> Result<PutMapping, StoreError> {
        let MappingWrite {
            id,
            provider,
            label,
            account,
            regions,
            offerings,
        } = write;
        // Serializing plain structs of strings and numbers cannot fail.
        let pairs = serde_json::to_string(regions).unwrap_or_default();
        let compact =
            (!offerings.is_empty()).then(|| serde_json::to_string(offerings).unwrap_or_default());
        let at = now_ms();
        let mut tx = self.begin().await?;
        // The change-log row first: on SQLite it takes the write lock, so the old version, the
        // count and the write below all see the same rows (PostgreSQL locks the row read).
        let change = Change::ZoneMapping(change_subject(&actor.org, id.as_str()));
        changes::record(&mut tx, self.backend, &change).await?;
        let lock = match self.backend {
            Backend::Postgres => " FOR UPDATE",
            Backend::Sqlite => "",
        };
        let old: Option<(String, i64)> = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT pairs, imported_at FROM zone_mappings WHERE org_id = $1 AND id = $2{lock}"
        )))
        .bind(&*actor.org)
        .bind(id.as_str())
        .fetch_all(&mut *tx)
        .await
        .classify()?
        .first()
        .map(|row| Ok::<_, sqlx::Error>((row.try_get("pairs")?, row.try_get("imported_at")?)))
        .transpose()
        .classify()?;
        // The version is the answers' ETag: a replacement stored within the same millisecond as
        // the version it replaces still gets a later one, so no cached answer of the old
        // version is confirmed by a 304. A mapping stored again after a deletion follows every
        // version its id had, which the audit records (each store records its version).
        let previous = match &old {
            Some((_, previous)) => Some(*previous),
            // One row, NULL when the id never had a version.
            None => sqlx::query(
                "SELECT MAX(at) FROM zone_mapping_audit WHERE org_id = $1 AND mapping_id = $2",
            )
            .bind(&*actor.org)
            .bind(id.as_str())
            .fetch_one(&mut *tx)
            .await
            .and_then(|row| row.try_get::<Option<i64>, _>(0))
            .classify()?,
        };
        let at = previous.map_or(at, |previous| at.max(previous.saturating_add(1)));
        let created = old.is_none();
        if created {
            let count: i64 =
                sqlx::query("SELECT COUNT(*) AS n FROM zone_mappings WHERE org_id = $1")
                    .bind(&*actor.org)
                    .fetch_all(&mut *tx)
                    .await
                    .classify()?
                    .first()
                    .map_or(Ok(0), |row| row.try_get("n"))
                    .classify()?;
            if usize::try_from(count).unwrap_or(usize::MAX) >= MAX_ZONE_MAPPINGS_PER_ORGANIZATION {
                tx.rollback().await.classify()?;
                return Ok(PutMapping::TooMany);
            }
            sqlx::query(
                "INSERT INTO zone_mappings \
                 (org_id, id, provider, label, account, pairs, offerings, imported_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(&*actor.org)
            .bind(id.as_str())
            .bind(provider.as_str())
            .bind(label)
            .bind(account)
            .bind(&pairs)
            .bind(compact.as_deref())
            .bind(at)
            .execute(&mut *tx)
            .await
            .on_unique(|| format!("zone mapping {id} was stored by another request meanwhile"))?;
        } else {
            sqlx::query(
                "UPDATE zone_mappings SET provider = $1, label = $2, account = $3, pairs = $4, \
                 offerings = $5, imported_at = $6 WHERE org_id = $7 AND id = $8",
            )
            .bind(provider.as_str())
            .bind(label)
            .bind(account)
            .bind(&pairs)
            .bind(compact.as_deref())
            .bind(at)
            .bind(&*actor.org)
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .classify()?;
        }
        audit(
            &mut tx,
            actor,
            id,
            if created { "create" } else { "replace" },
            at,
        )
        .await?;
        tx.commit().await.classify()?;
        let stored = StoredMapping {
            mapping: ZoneMapping::new(
                id.as_str().to_owned(),
                provider.clone(),
                label.to_owned(),
                format_ms(at),
                regions.to_vec(),
            )
            .with_account(account.map(str::to_owned))
            .with_offerings(offerings.counts()),
            version: at,
            offerings: offerings.clone(),
        };
        let Some((old, _)) = old else {
            return Ok(PutMapping::Created(stored));
        };
        // The old version was written by this code: a row that does not read is corrupt.
        let old: Vec<MappedRegion> = serde_json::from_str(&old)
            .map_err(|e| StoreError::Corrupt(format!("zone mapping: {e}")))?;
        let removed = old
            .into_iter()
            .map(|r| r.region)
            .filter(|region| !regions.iter().any(|r| &r.region == region))
            .collect();
        Ok(PutMapping::Replaced(stored, removed))
    }

    /// Deletes the organization's mapping `id`; `false` when it has none of that id.
    pub async fn delete_zone_mapping(
        &self,
        actor: &Actor,
        id: &ZoneMappingId,
    ) -> Result<bool, StoreError> {
        let mut tx = self.begin().await?;
        let deleted = sqlx::query("DELETE FROM zone_mappings WHERE org_id = $1 AND id = $2")
            .bind(&*actor.org)
            .bind(id.as_str())
            .execute(&mut *tx)
            .await
            .classify()?;
        if deleted.rows_affected() == 0 {
            tx.rollback().await.classify()?;
            return Ok(false);
        }
        audit(&mut tx, actor, id, "delete", now_ms()).await?;
        let change = Change::ZoneMapping(change_subject(&actor.org, id.as_str()));
        changes::record(&mut tx, self.backend, &change).await?;
        tx.commit().await.classify()?;
        Ok(true)
    }

    /// The audit records of the organization's mapping `id`, oldest first: (action, key id,
    /// request id).
    pub async fn zone_mapping_audit(
        &self,
        org: &str,
        id: &str,
    ) -> Result<Vec<(String, String, String)>, StoreError> {
        let rows = sqlx::query(
            "SELECT action, key_id, request_id FROM zone_mapping_audit \
             WHERE org_id = $1 AND mapping_id = $2 ORDER BY id",
        )
        .bind(org)
        .bind(id)
        .fetch_all(&self.pool)
        .await
        .classify()?;
        rows.iter()
            .map(|row| {
                Ok((
                    row.try_get("action").classify()?,
                    row.try_get("key_id").classify()?,
                    row.try_get("request_id").classify()?,
                ))
            })
            .collect()
    }
}

async fn audit(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    actor: &Actor,
    id: &ZoneMappingId,
    action: &str,
    at: i64,
) -> Result<(), StoreError> {
    sqlx::query(
        "INSERT INTO zone_mapping_audit (org_id, mapping_id, action, key_id, request_id, at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(&*actor.org)
    .bind(id.as_str())
    .bind(action)
    .bind(&*actor.key_id)
    .bind(&*actor.request_id)
    .bind(at)
    .execute(&mut **tx)
    .await
    .classify()
    .map(drop)
}

fn read_mapping(row: &AnyRow) -> Result<StoredMapping, StoreError> {
    let corrupt = |what: String| StoreError::Corrupt(format!("zone mapping: {what}"));
    let id: String = row.try_get("id").classify()?;
    let provider: String = row.try_get("provider").classify()?;
    let pairs: String = row.try_get("pairs").classify()?;
    let version: i64 = row.try_get("imported_at").classify()?;
    let regions: Vec<MappedRegion> =
        serde_json::from_str(&pairs).map_err(|e| corrupt(e.to_string()))?;
    let offerings: Option<String> = row.try_get("offerings").classify()?;
    let offerings: Offerings = offerings
        .map(|o| serde_json::from_str(&o))
        .transpose()
        .map_err(|e| corrupt(format!("offerings: {e}")))?
        .unwrap_or_default();
    Ok(StoredMapping {
        mapping: ZoneMapping::new(
            id,
            provider
                .parse()
                .map_err(|e: appzone_contract::IdError| corrupt(e.to_string()))?,
            row.try_get("label").classify()?,
            format_ms(version),
            regions,
        )
        .with_account(row.try_get("account").classify()?)
        .with_offerings(offerings.counts()),
        version,
        offerings,
    })
}

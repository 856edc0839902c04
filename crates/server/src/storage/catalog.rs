//! The zone catalog's tables: read whole (optionally paced), imported with a comparison first,
//! replaced, and seeded once into an empty database; every change bumps the version replicas
//! poll.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::TryStreamExt;
use sqlx::any::AnyRow;
use sqlx::Row;

use super::changes::{self, Change};
use super::errors::ResultExt;
use super::{Backend, Store, StoreError};
use crate::model::catalog_file::{CatalogChanges, CatalogFile, ProviderEntry, RegionEntry};
use crate::model::now_ms;

/// What `catalog import` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogImport {
    /// What the import added, changed and removed.
    pub changes: CatalogChanges,
    /// The catalog's version after the import (unchanged when nothing changed).
    pub version: i64,
}

impl Store {
    /// The catalog's version: it increases with every change.
    pub async fn catalog_version(&self) -> Result<i64, StoreError> {
        let rows = sqlx::query("SELECT version FROM catalog_meta WHERE singleton = 1")
            .fetch_all(&self.pool)
            .await
            .classify()?;
        rows.first()
            .ok_or_else(|| StoreError::Invalid("the catalog version row is missing".to_owned()))?
            .try_get("version")
            .classify()
    }

    /// The whole catalog with its version, read in one transaction.
    pub async fn load_catalog(&self) -> Result<(i64, CatalogFile), StoreError> {
        self.load_catalog_paced(Duration::ZERO).await
    }

    /// [`load_catalog`](Self::load_catalog) as background work: a pause of `pause` after every
    /// [`REGIONS_PER_PAUSE`] regions read, so a replica's reload of a large catalog spreads its
    /// CPU over a longer time instead of taking it from the requests being served at once.
    pub async fn load_catalog_paced(
        &self,
        pause: Duration,
    ) -> Result<(i64, CatalogFile), StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        let catalog = read_catalog(&mut tx, self.backend, pause).await?;
        tx.commit().await.classify()?;
        Ok(catalog)
    }

    /// Replaces the catalog with `catalog` in one transaction and says what changed. Refused,
    /// changing nothing, when it would remove a provider, region or zone and `prune` is not
    /// set; an identical catalog is not written (its version stays, replicas reload nothing).
    ///
    /// The stored catalog is read and compared before the write lock is taken, and the write
    /// goes ahead only if the version is still the one read: the lock (on SQLite, the one
    /// writer every delete also waits for) is held for the write alone, not for the read and
    /// the comparison, which take most of a large import's time. An import that loses a race
    /// with another reads again.
    pub async fn import_catalog(
        &self,
        catalog: &CatalogFile,
        prune: bool,
    ) -> Result<CatalogImport, StoreError> {
        loop {
            let (version, current) = self.load_catalog().await?;
            let changes = current.changes_to(catalog);
            if changes.removes_anything() && !prune {
                return Err(StoreError::Invalid(format!(
                    "the import would remove {}; nothing was changed (pass --prune to \
                     remove them)",
                    changes.removed.consequences()
                )));
            }
            if changes.is_empty() {
                return Ok(CatalogImport { changes, version });
            }
            let mut tx = self.pool.begin().await.classify()?;
            let unchanged = sqlx::query(
                "UPDATE catalog_meta SET updated_at = updated_at \
                 WHERE singleton = 1 AND version = $1",
            )
            .bind(version)
            .execute(&mut *tx)
            .await
            .classify()?;
            if unchanged.rows_affected() == 0 {
                // Another import committed since the read: compare with its catalog instead.
                tx.rollback().await.classify()?;
                continue;
            }
            let version = write_catalog_in(&mut tx, self.backend, Some(&current), catalog).await?;
            tx.commit().await.classify()?;
            return Ok(CatalogImport { changes, version });
        }
    }

    /// Replaces the whole catalog atomically and bumps its version.
    pub async fn replace_catalog(&self, catalog: &CatalogFile) -> Result<i64, StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        let version = write_catalog_in(&mut tx, self.backend, None, catalog).await?;
        tx.commit().await.classify()?;
        Ok(version)
    }

    /// Loads `catalog` when the catalog is empty (never imported); returns whether it did.
    pub async fn seed_catalog_if_empty(&self, catalog: &CatalogFile) -> Result<bool, StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        // Claim the seed by moving version 0 to 1 first: of concurrent replicas starting on an
        // empty database only one sees a row updated, the others wait and then see none.
        let claimed = sqlx::query("UPDATE catalog_meta SET version = 1 WHERE version = 0")
            .execute(&mut *tx)
            .await
            .classify()?;
        if claimed.rows_affected() == 0 {
            tx.rollback().await.classify()?;
            return Ok(false);
        }
        write_catalog_in(&mut tx, self.backend, None, catalog).await?;
        tx.commit().await.classify()?;
        Ok(true)
    }
}

/// Reads the catalog and its version inside the caller's transaction.
async fn read_catalog(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    pause: Duration,
) -> Result<(i64, CatalogFile), StoreError> {
    let meta = sqlx::query("SELECT version, source FROM catalog_meta WHERE singleton = 1")
        .fetch_all(&mut **tx)
        .await
        .and_then(|rows| rows.into_iter().next().ok_or(sqlx::Error::RowNotFound))
        .classify()?;
    let version: i64 = meta.try_get("version").classify()?;
    let source: Option<String> = meta.try_get("source").classify()?;
    let source = source
        .map(|json| serde_json::from_str(&json))
        .transpose()
        .map_err(|e| StoreError::Corrupt(format!("catalog source: {e}")))?;
    let providers = sqlx::query("SELECT id, name FROM catalog_providers ORDER BY position")
        .fetch_all(&mut **tx)
        .await
        .classify()?;
    // Each region comes with its zones joined in one column: a row per region instead of one
    // per zone, which is most of what a replica's reload of a large catalog costs (a zone id
    // never holds the separator).
    let aggregate = match backend {
        Backend::Sqlite => "group_concat",
        Backend::Postgres => "string_agg",
    };
    let zones = format!("{aggregate}(z.zone, '{ZONE_SEPARATOR}' ORDER BY z.position)");
    let query = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT r.provider_id, r.id, r.name, r.name_scope, r.identities, r.sources, r.note, \
         r.refreshed_on, \
         (SELECT {zones} FROM catalog_zones z \
          WHERE z.provider_id = r.provider_id AND z.region_id = r.id) AS zones \
         FROM catalog_regions r ORDER BY r.provider_id, r.position"
    )));
    let mut regions = Vec::new();
    let mut rows = query.fetch(&mut **tx);
    while let Some(row) = rows.try_next().await.classify()? {
        regions.push(row);
        // The database produces rows only as they are taken, so pausing here paces it too.
        if !pause.is_zero() && regions.len() % REGIONS_PER_PAUSE == 0 {
            tokio::time::sleep(pause).await;
        }
    }
    drop(rows);
    let mut catalog = assemble_catalog(&providers, &regions)?;
    catalog.source = source;
    Ok((version, catalog))
}

/// Writes `catalog` over `current`, the catalog this transaction read (`None`: whatever the
/// tables hold is replaced whole), and bumps the version. Only the providers that differ are
/// written: an import that adds one zone to a large catalog rewrites that zone's provider, not
/// the whole catalog, and a provider that only moved has its position updated.
async fn write_catalog_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    current: Option<&CatalogFile>,
    catalog: &CatalogFile,
) -> Result<i64, StoreError> {
    let old: HashMap<&str, (usize, &ProviderEntry)> = current
        .iter()
        .flat_map(|file| file.providers.iter().enumerate())
        .map(|(position, provider)| (provider.id.as_str(), (position, provider)))
        .collect();
    let new: HashMap<&str, &ProviderEntry> = catalog
        .providers
        .iter()
        .map(|provider| (provider.id.as_str(), provider))
        .collect();
    // Providers gone from the catalog or changed in it: their rows go first.
    let stale: Vec<&str> = old
        .iter()
        .filter(|(id, (_, entry))| new.get(*id) != Some(entry))
        .map(|(id, _)| *id)
        .collect();
    // Every provider read is stale (always so without a catalog read): empty the tables.
    if stale.len() == old.len() {
        // Zones and regions go with their provider (ON DELETE CASCADE), but delete explicitly
        // so the statement order does not depend on foreign-key enforcement being on.
        for statement in [
            "DELETE FROM catalog_zones",
            "DELETE FROM catalog_regions",
            "DELETE FROM catalog_providers",
        ] {
            execute(tx, sqlx::query(statement)).await?;
        }
    } else {
        for id in &stale {
            for statement in [
                "DELETE FROM catalog_zones WHERE provider_id = $1",
                "DELETE FROM catalog_regions WHERE provider_id = $1",
                "DELETE FROM catalog_providers WHERE id = $1",
            ] {
                execute(tx, sqlx::query(statement).bind(*id)).await?;
            }
        }
    }
    let mut providers = Vec::new();
    let mut regions = Vec::new();
    let mut zones = Vec::new();
    for (p_pos, provider) in catalog.providers.iter().enumerate() {
        match old.get(provider.id.as_str()) {
            // Unchanged and in its place: nothing to write.
            Some(&(was, entry)) if entry == provider && was == p_pos => continue,
            Some(&(_, entry)) if entry == provider => {
                let moved = "UPDATE catalog_providers SET position = $1 WHERE id = $2";
                let query = sqlx::query(moved)
                    .bind(position_number(p_pos))
                    .bind(provider.id.as_str());
                execute(tx, query).await?;
                continue;
            }
            _ => {}
        }
        let p_id = provider.id.as_str();
        providers.push([
            Cell::Text(p_id),
            Cell::Text(&provider.name),
            position(p_pos),
        ]);
        for (r_pos, region) in provider.regions.iter().enumerate() {
            let r_id = region.id.as_str();
            let (identities, sources) = identity_columns(region);
            regions.push([
                Cell::Text(p_id),
                Cell::Text(r_id),
                Cell::Text(&region.name),
                position(r_pos),
                Cell::OptText(region.name_scope.as_deref()),
                Cell::OptOwned(identities),
                Cell::OptOwned(sources),
                Cell::OptText(region.note.as_deref()),
                Cell::OptText(region.refreshed_on.as_deref()),
            ]);
            for (z_pos, zone) in region.zones.iter().enumerate() {
                zones.push([
                    Cell::Text(p_id),
                    Cell::Text(r_id),
                    position(z_pos),
                    Cell::Text(zone),
                ]);
            }
        }
    }
    insert_rows(
        tx,
        backend,
        "catalog_providers (id, name, position)",
        &providers,
    )
    .await?;
    insert_rows(
        tx,
        backend,
        "catalog_regions (provider_id, id, name, position, name_scope, identities, sources, \
         note, refreshed_on)",
        &regions,
    )
    .await?;
    insert_rows(
        tx,
        backend,
        "catalog_zones (provider_id, region_id, position, zone)",
        &zones,
    )
    .await?;
    // Every server reloads its snapshot when this commits.
    changes::record(tx, backend, &Change::Catalog).await?;
    let source = catalog
        .source
        .as_ref()
        .map(|source| serde_json::to_string(source).unwrap_or_default());
    sqlx::query(
        "UPDATE catalog_meta SET version = version + 1, updated_at = $1, source = $2 \
         WHERE singleton = 1 RETURNING version",
    )
    .bind(now_ms())
    .bind(source)
    // All of it: see `revoke_key` on a statement left unfinished.
    .fetch_all(&mut **tx)
    .await
    .classify()?
    .first()
    .ok_or_else(|| StoreError::Invalid("the catalog version row is missing".to_owned()))?
    .try_get("version")
    .classify()
}

/// Runs one statement of a transaction.
async fn execute<'q>(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments>,
) -> Result<(), StoreError> {
    query.execute(&mut **tx).await.classify().map(drop)
}

/// How many regions a paced catalog read takes between two pauses.
pub const REGIONS_PER_PAUSE: usize = 256;

/// What [`read_catalog`] joins a region's zones with: zone ids are lowercase letters, digits and
/// hyphens (validated on import), so a space cannot be part of one.
const ZONE_SEPARATOR: char = ' ';

/// Rows per multi-row `INSERT`: one statement (one round trip to the database, one trip
/// through sqlx) per chunk rather than per row is what keeps an import of a large catalog
/// short. 4 columns × 500 rows stays far below both databases' limits on bound parameters
/// (SQLite 32,766, PostgreSQL 65,535).
const ROWS_PER_INSERT: usize = 500;

/// One value of a row [`insert_rows`] writes.
#[derive(Clone)]
enum Cell<'a> {
    Text(&'a str),
    Int(i64),
    /// A text that may be NULL.
    OptText(Option<&'a str>),
    /// A text made for the row (JSON) that may be NULL.
    OptOwned(Option<String>),
}

/// A region's identities and cited references as the JSON its columns hold; both NULL for a
/// region without identities (a 1.1 catalog).
fn identity_columns(region: &RegionEntry) -> (Option<String>, Option<String>) {
    if region.name_scope.is_none() {
        return (None, None);
    }
    // Serializing plain structs of strings cannot fail.
    let identities = serde_json::to_string(&region.identities).unwrap_or_default();
    let sources = serde_json::to_string(&region.sources).unwrap_or_default();
    (Some(identities), Some(sources))
}

/// Inserts `rows` into `into` (a table and its column list) in multi-row statements. Not
/// sqlx's `QueryBuilder::push_values`: for the `Any` driver it writes `?` placeholders, which
/// PostgreSQL refuses.
async fn insert_rows<const N: usize>(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    into: &'static str,
    rows: &[[Cell<'_>; N]],
) -> Result<(), StoreError> {
    for chunk in rows.chunks(ROWS_PER_INSERT) {
        // One group of N placeholders per row. SQLite's are anonymous (`?`): sqlx binds a
        // numbered one by asking SQLite its name, a lookup that walks every parameter of the
        // statement, which made binding quadratic in the rows per statement (nearly half of a
        // large import's CPU). PostgreSQL numbers them (`$1`), its only form.
        let groups = (0..chunk.len()).map(|row| {
            let columns = (1..=N).map(|column| match backend {
                Backend::Sqlite => "?".to_owned(),
                Backend::Postgres => format!("${}", row * N + column),
            });
            format!("({})", columns.collect::<Vec<_>>().join(", "))
        });
        let sql = format!(
            "INSERT INTO {into} VALUES {}",
            groups.collect::<Vec<_>>().join(", ")
        );
        // Only this function's own text goes into `sql`: the table and columns are constants
        // of this module (`'static`), the values are bound.
        let mut query = sqlx::query(sqlx::AssertSqlSafe(sql));
        for cell in chunk.iter().flatten() {
            query = match cell {
                Cell::Text(text) => query.bind(*text),
                Cell::Int(int) => query.bind(*int),
                Cell::OptText(text) => query.bind(*text),
                Cell::OptOwned(text) => query.bind(text.as_deref()),
            };
        }
        execute(tx, query).await?;
    }
    Ok(())
}

fn position(index: usize) -> Cell<'static> {
    Cell::Int(position_number(index))
}

/// A position column's value for the child at `index`.
fn position_number(index: usize) -> i64 {
    i64::try_from(index).unwrap_or(i64::MAX)
}

/// The catalog from its three tables' rows (regions in position order within a provider, zones
/// within a region): one pass over each, so loading, exporting and refreshing take time linear
/// in the catalog's size.
fn assemble_catalog(providers: &[AnyRow], regions: &[AnyRow]) -> Result<CatalogFile, StoreError> {
    let corrupt = |e: appzone_contract::IdError| StoreError::Corrupt(format!("catalog: {e}"));
    let text = |row: &AnyRow, column: &str| -> Result<String, StoreError> {
        row.try_get(column).classify()
    };
    let mut regions_of: HashMap<String, Vec<RegionEntry>> = HashMap::new();
    for region in regions {
        // NULL when the region has no zones.
        let zones: Option<String> = region.try_get("zones").classify()?;
        let column =
            |name: &str| -> Result<Option<String>, StoreError> { region.try_get(name).classify() };
        let json = |name: &str| -> Result<Option<Vec<_>>, StoreError> {
            column(name)?
                .map(|json| serde_json::from_str(&json))
                .transpose()
                .map_err(|e| StoreError::Corrupt(format!("catalog region {name}: {e}")))
        };
        let entry = RegionEntry {
            id: text(region, "id")?.parse().map_err(corrupt)?,
            name: text(region, "name")?,
            zones: zones.as_deref().map_or_else(Vec::new, |z| {
                z.split(ZONE_SEPARATOR).map(str::to_owned).collect()
            }),
            name_scope: column("name_scope")?,
            identities: json("identities")?.unwrap_or_default(),
            sources: column("sources")?
                .map(|json| serde_json::from_str(&json))
                .transpose()
                .map_err(|e| StoreError::Corrupt(format!("catalog region sources: {e}")))?
                .unwrap_or_default(),
            note: column("note")?,
            refreshed_on: column("refreshed_on")?,
        };
        regions_of
            .entry(text(region, "provider_id")?)
            .or_default()
            .push(entry);
    }
    let providers = providers
        .iter()
        .map(|row| {
            let id = text(row, "id")?;
            Ok(ProviderEntry {
                regions: regions_of.remove(&id).unwrap_or_default(),
                id: id.parse().map_err(corrupt)?,
                name: text(row, "name")?,
            })
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(CatalogFile {
        source: None,
        providers,
    })
}

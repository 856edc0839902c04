//! Storage: one interface over SQLite (embedded default) and PostgreSQL (several replicas).
//!
//! Both backends go through sqlx's `Any` driver with runtime-checked queries, so every query is
//! written once and the build needs no live database. SQL uses `$n` placeholders, which both
//! SQLite and PostgreSQL understand (but for the catalog's multi-row inserts, which give SQLite
//! `?`: see `insert_rows`); each backend has its own migration directory because a few column
//! types differ. Errors are classified where they happen: "the database is unreachable or
//! busy" becomes [`StoreError::Unavailable`] (the HTTP layer answers 503), a broken invariant
//! stays [`StoreError::Database`] (500), and the conflicts an operator can cause are named.
//!
//! Architecture invariant: this module knows nothing about HTTP.

mod deletes;
mod errors;
mod group_commit;
mod sqlite_file;

use std::collections::HashMap;
use std::sync::Once;
use std::time::Duration;

use appzone_contract::{ApiKey, ProfileId};
use futures_util::TryStreamExt;
use sqlx::any::{AnyPoolOptions, AnyRow};
use sqlx::{AnyConnection, AnyPool, Connection, Executor, Row};

use crate::catalog::file::{CatalogChanges, CatalogFile, ProviderEntry, RegionEntry};
use crate::keys::digest_hex;
use crate::model::{check_display_name, now_ms, KeyInfo, KeyRecord, OrgId, ProfileInfo, Role};
pub use deletes::{DeleteAnswer, DeleteOutcome, DeleteRequest, IDEMPOTENCY_TTL};
pub use errors::StoreError;
use errors::{found, ResultExt};
pub use sqlite_file::explain_open_error;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("migrations/postgres");

/// Set on every SQLite connection. `journal_mode=WAL` is persistent but cheap to restate;
/// `synchronous=FULL` makes every commit durable before we answer 204.
pub(super) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                              PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;";

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite file (WAL, `synchronous=FULL`).
    Sqlite,
    /// PostgreSQL server.
    Postgres,
}

/// Connection-pool settings.
#[derive(Debug, Clone)]
pub struct PoolSettings {
    /// Most connections held open.
    pub max_connections: u32,
    /// How long a query waits for a connection before the database counts as unavailable.
    /// sqlx's pool keeps trying to connect for all of it when the database is down, so this
    /// is how fast a request that needs the database answers 503 during an outage.
    pub acquire_timeout: Duration,
    /// PostgreSQL only: the longest any statement may run, lock waits included, before the
    /// server cancels it and rolls it back (`statement_timeout`). The server sets it below its
    /// request timeout, so a write never outlives its request; `None` keeps the server's own.
    pub statement_timeout: Option<Duration>,
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_connections: 8,
            acquire_timeout: Duration::from_secs(1),
            statement_timeout: None,
        }
    }
}

/// What `catalog import` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogImport {
    /// What the import added, changed and removed.
    pub changes: CatalogChanges,
    /// The catalog's version after the import (unchanged when nothing changed).
    pub version: i64,
}

/// Handle on the database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// SQLite only: the group-commit writer for deletes.
    deletes: Option<tokio::sync::mpsc::Sender<group_commit::PendingDelete>>,
    /// The idempotency keys of the deletes running in this process.
    keys_in_flight: deletes::KeysInFlight,
}

impl Store {
    /// Connects to `url` (`sqlite://file.db` or `postgres://...`), creating a SQLite file when
    /// missing. Does not run migrations; see [`Store::migrate`].
    pub async fn connect(url: &str, settings: &PoolSettings) -> Result<Self, StoreError> {
        Self::open(url, settings, true).await
    }

    /// Like [`Store::connect`], for commands that must not change a database they were not
    /// meant for: a missing SQLite file is an error instead of being created, and a database
    /// whose migrations are not all applied is [`StoreError::NotMigrated`], left as it was.
    pub async fn connect_existing(url: &str, settings: &PoolSettings) -> Result<Self, StoreError> {
        Self::open(url, settings, false).await
    }

    async fn open(url: &str, settings: &PoolSettings, create: bool) -> Result<Self, StoreError> {
        static DRIVERS: Once = Once::new();
        DRIVERS.call_once(sqlx::any::install_default_drivers);

        let (backend, url) = normalize_url(url, create)?;
        // SQLite names neither the file nor the cause of what stops it opening one.
        let file = sqlite_file::SqliteFile::of(&url);
        if let Some(file) = &file {
            file.check(create)?;
        }
        Self::open_checked(backend, &url, settings, create)
            .await
            .map_err(|err| match &file {
                Some(file) => file.explain(err),
                None => err,
            })
    }

    async fn open_checked(
        backend: Backend,
        url: &str,
        settings: &PoolSettings,
        create: bool,
    ) -> Result<Self, StoreError> {
        // The pool retries a connection that fails, or whose set-up statements fail, until its
        // acquire timeout, and then reports only "pool timed out". One direct connection first
        // reports the real cause ("file is not a database", "connection refused") at once.
        let mut probe = AnyConnection::connect(url)
            .await
            .map_err(StoreError::connect)?;
        // Checked before the pragmas, which would turn an empty file into a database.
        if !create && !is_migrated(&mut probe, backend).await? {
            return Err(StoreError::NotMigrated);
        }
        if backend == Backend::Sqlite {
            probe
                .execute(SQLITE_PRAGMAS)
                .await
                .map_err(StoreError::connect)?;
        }
        // The probe did its job; a failure to close it politely changes nothing.
        let _ = probe.close().await;

        let options = AnyPoolOptions::new()
            .max_connections(settings.max_connections)
            .min_connections(0)
            .acquire_timeout(settings.acquire_timeout)
            .idle_timeout(Duration::from_secs(300));
        let statement_timeout = settings
            .statement_timeout
            .map(|timeout| format!("{}ms", timeout.as_millis().max(1)));
        let options = match (backend, statement_timeout) {
            (Backend::Sqlite, _) => options.after_connect(|conn, _meta| {
                Box::pin(async move { conn.execute(SQLITE_PRAGMAS).await.map(|_| ()) })
            }),
            (Backend::Postgres, Some(timeout)) => options.after_connect(move |conn, _meta| {
                let timeout = timeout.clone();
                Box::pin(async move {
                    sqlx::query("SELECT set_config('statement_timeout', $1, false)")
                        .bind(timeout)
                        .execute(conn)
                        .await
                        .map(|_| ())
                })
            }),
            (Backend::Postgres, None) => options,
        };
        let pool = options.connect(url).await.map_err(StoreError::connect)?;
        let deletes = (backend == Backend::Sqlite).then(|| group_commit::start(url.to_owned()));
        Ok(Self {
            pool,
            backend,
            deletes,
            keys_in_flight: deletes::KeysInFlight::default(),
        })
    }

    /// Which backend this store uses.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Applies the embedded migrations of this backend.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let migrator = match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        };
        migrator.run(&self.pool).await.map_err(StoreError::migrate)
    }

    /// Refuses a PostgreSQL server whose settings could lose committed transactions: a `204`
    /// promises durability, so `fsync`, `synchronous_commit` and `full_page_writes` must be on.
    pub async fn check_durability(&self) -> Result<(), StoreError> {
        if self.backend != Backend::Postgres {
            return Ok(());
        }
        for setting in ["fsync", "synchronous_commit", "full_page_writes"] {
            let value: String = sqlx::query("SELECT current_setting($1)")
                .bind(setting)
                .fetch_one(&self.pool)
                .await
                .and_then(|row| row.try_get(0))
                .classify()?;
            if value == "off" {
                return Err(StoreError::Invalid(format!(
                    "PostgreSQL has {setting}=off, which can lose acknowledged deletes; \
                     turn it on (appzone answers 204 only for durable deletes)"
                )));
            }
        }
        Ok(())
    }

    /// Cheap round trip, for `/readyz`.
    pub async fn ping(&self) -> Result<(), StoreError> {
        self.pool.execute("SELECT 1").await.map(|_| ()).classify()
    }

    /// Pool usage: (connections open, idle connections), for metrics.
    pub fn pool_usage(&self) -> (u32, usize) {
        (self.pool.size(), self.pool.num_idle())
    }

    /// Closes the pool, waiting for checked-out connections to come back.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    /// The raw pool, for tests that read tables directly.
    pub fn pool(&self) -> &AnyPool {
        &self.pool
    }

    // ---- organizations -------------------------------------------------------------------

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

    /// Whether the organization exists.
    pub async fn org_exists(&self, id: &OrgId) -> Result<bool, StoreError> {
        let row = sqlx::query("SELECT 1 FROM organizations WHERE id = $1")
            .bind(id.as_str())
            .fetch_optional(&self.pool)
            .await
            .classify()?;
        Ok(row.is_some())
    }

    async fn require_org(&self, id: &OrgId) -> Result<(), StoreError> {
        found(self.org_exists(id).await?, || {
            format!("organization {id} does not exist")
        })
    }

    // ---- API keys ------------------------------------------------------------------------

    /// Creates a key for an existing organization and returns it; only its digest is stored.
    pub async fn create_key(
        &self,
        org: &OrgId,
        role: Role,
        name: &str,
    ) -> Result<ApiKey, StoreError> {
        self.require_org(org).await?;
        let key = ApiKey::generate();
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
        .execute(&self.pool)
        .await
        .on_foreign_key(|| format!("organization {org} does not exist"))?;
        Ok(key)
    }

    /// The live (not revoked) key with this id, if any.
    pub async fn find_active_key(&self, key_id: &str) -> Result<Option<KeyRecord>, StoreError> {
        let row = sqlx::query(
            "SELECT key_id, org_id, role, digest FROM api_keys \
             WHERE key_id = $1 AND revoked_at IS NULL",
        )
        .bind(key_id)
        .fetch_optional(&self.pool)
        .await
        .classify()?;
        row.map(|row| {
            Ok(KeyRecord {
                key_id: row.try_get("key_id").classify()?,
                org_id: row.try_get("org_id").classify()?,
                role: parse_role(&row)?,
                digest: parse_digest(&row.try_get::<String, _>("digest").classify()?)?,
            })
        })
        .transpose()
    }

    /// The organization's keys, oldest first, revoked ones included.
    pub async fn list_keys(&self, org: &OrgId) -> Result<Vec<KeyInfo>, StoreError> {
        let sql = "SELECT key_id, role, name, created_at, revoked_at FROM api_keys \
                   WHERE org_id = $1 ORDER BY created_at, key_id";
        self.rows_of_org(org, sql, |row| {
            Ok(KeyInfo {
                key_id: row.try_get("key_id").classify()?,
                role: parse_role(row)?,
                name: row.try_get("name").classify()?,
                created_at: row.try_get("created_at").classify()?,
                revoked_at: row.try_get("revoked_at").classify()?,
            })
        })
        .await
    }

    /// The rows `sql` selects for the existing organization `org` (its `$1`), each read by
    /// `read`.
    async fn rows_of_org<T>(
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

    /// Revokes a key. [`StoreError::NotFound`] when no live key has this id.
    pub async fn revoke_key(&self, key_id: &str) -> Result<(), StoreError> {
        let done = sqlx::query(
            "UPDATE api_keys SET revoked_at = $1 WHERE key_id = $2 AND revoked_at IS NULL",
        )
        .bind(now_ms())
        .bind(key_id)
        .execute(&self.pool)
        .await
        .classify()?;
        found(done.rows_affected() == 1, || {
            format!("no active key has the id {key_id:?}")
        })
    }

    // ---- application profiles ------------------------------------------------------------

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
        let row = sqlx::query(
            "SELECT 1 FROM profiles WHERE id = $1 AND org_id = $2 AND deleted_at IS NULL",
        )
        .bind(id.as_str())
        .bind(org)
        .fetch_optional(&self.pool)
        .await
        .classify()?;
        Ok(row.is_some())
    }

    /// Restores a tombstone. [`StoreError::NotFound`] when `id` is not a deleted profile.
    pub async fn restore_profile(&self, id: &ProfileId) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await.classify()?;
        let row = sqlx::query(
            "UPDATE profiles SET deleted_at = NULL WHERE id = $1 AND deleted_at IS NOT NULL \
             RETURNING org_id",
        )
        .bind(id.as_str())
        .fetch_optional(&mut *tx)
        .await
        .classify()?;
        let Some(row) = row else {
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

    // ---- zone catalog --------------------------------------------------------------------

    /// The catalog's version: it increases with every change.
    pub async fn catalog_version(&self) -> Result<i64, StoreError> {
        sqlx::query("SELECT version FROM catalog_meta WHERE singleton = 1")
            .fetch_one(&self.pool)
            .await
            .and_then(|row| row.try_get("version"))
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
                    "the import would remove {}, whose listings would stop answering 200; \
                     nothing was changed (pass --prune to remove them)",
                    changes.removed
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

/// Whether every embedded migration of `backend` has been applied on `conn` (false on a
/// database that was never migrated). Reads only: sqlx's own `ensure_migrations_table` would
/// create the table, so its existence is checked first.
async fn is_migrated(conn: &mut AnyConnection, backend: Backend) -> Result<bool, StoreError> {
    use sqlx::migrate::Migrate;
    let (migrator, table_exists) = match backend {
        Backend::Sqlite => (
            &SQLITE_MIGRATIONS,
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1",
        ),
        Backend::Postgres => (
            &POSTGRES_MIGRATIONS,
            "SELECT 1 FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_name = $1",
        ),
    };
    let table = migrator.table_name.as_ref();
    let exists = sqlx::query(table_exists)
        .bind(table)
        .fetch_optional(&mut *conn)
        .await
        .map_err(StoreError::connect)?;
    if exists.is_none()
        || conn
            .dirty_version(table)
            .await
            .map_err(StoreError::migrate)?
            .is_some()
    {
        return Ok(false);
    }
    let applied = conn
        .list_applied_migrations(table)
        .await
        .map_err(StoreError::migrate)?;
    Ok(migrator
        .iter()
        .all(|migration| applied.iter().any(|a| a.version == migration.version)))
}

/// Reads the catalog and its version inside the caller's transaction.
async fn read_catalog(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    pause: Duration,
) -> Result<(i64, CatalogFile), StoreError> {
    let version: i64 = sqlx::query("SELECT version FROM catalog_meta WHERE singleton = 1")
        .fetch_one(&mut **tx)
        .await
        .and_then(|row| row.try_get("version"))
        .classify()?;
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
        "SELECT r.provider_id, r.id, r.name, \
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
    Ok((version, assemble_catalog(&providers, &regions)?))
}

/// One delete inside a caller's transaction: the conditional `UPDATE`, then the audit record
/// when it changed a row.
async fn audit(
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
        let p_id = Cell::Text(provider.id.as_str());
        providers.push([p_id, Cell::Text(&provider.name), position(p_pos)]);
        for (r_pos, region) in provider.regions.iter().enumerate() {
            let r_id = Cell::Text(region.id.as_str());
            regions.push([p_id, r_id, Cell::Text(&region.name), position(r_pos)]);
            for (z_pos, zone) in region.zones.iter().enumerate() {
                zones.push([p_id, r_id, position(z_pos), Cell::Text(zone)]);
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
        "catalog_regions (provider_id, id, name, position)",
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
    sqlx::query(
        "UPDATE catalog_meta SET version = version + 1, updated_at = $1 WHERE singleton = 1 \
         RETURNING version",
    )
    .bind(now_ms())
    .fetch_one(&mut **tx)
    .await
    .and_then(|row| row.try_get("version"))
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
#[derive(Clone, Copy)]
enum Cell<'a> {
    Text(&'a str),
    Int(i64),
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
            query = match *cell {
                Cell::Text(text) => query.bind(text),
                Cell::Int(int) => query.bind(int),
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
        let entry = RegionEntry {
            id: text(region, "id")?.parse().map_err(corrupt)?,
            name: text(region, "name")?,
            zones: zones.as_deref().map_or_else(Vec::new, |z| {
                z.split(ZONE_SEPARATOR).map(str::to_owned).collect()
            }),
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
    Ok(CatalogFile { providers })
}

/// Splits a database URL into its backend and the URL sqlx should use. A SQLite file is
/// created when missing (`mode=rwc`) only when `create` is set and the URL sets no mode.
fn normalize_url(url: &str, create: bool) -> Result<(Backend, String), StoreError> {
    if url.starts_with("sqlite:") {
        let mode = if create { "mode=rwc" } else { "mode=rw" };
        let url = if url.contains("mode=") {
            url.to_owned()
        } else if url.contains('?') {
            format!("{url}&{mode}")
        } else {
            format!("{url}?{mode}")
        };
        Ok((Backend::Sqlite, url))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok((Backend::Postgres, url.to_owned()))
    } else {
        Err(StoreError::Invalid(
            "database URL must start with sqlite:// or postgres://".to_owned(),
        ))
    }
}

/// The file a `sqlite:` URL names, or `None` for another backend or an in-memory database.
pub fn sqlite_file(url: &str) -> Option<std::path::PathBuf> {
    use std::str::FromStr;
    if !url.starts_with("sqlite:") {
        return None;
    }
    let options = sqlx::sqlite::SqliteConnectOptions::from_str(url).ok()?;
    let file = options.get_filename();
    (!url.contains(":memory:") && !url.contains("mode=memory")).then(|| file.to_path_buf())
}

/// `url` with its password, and any `password` query parameter, replaced by `***`: the form
/// in which a database URL may appear in an error, a log line or help text.
pub fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        // Not a URL we can take apart: show only its scheme, never a possible secret.
        return match url.split_once("://") {
            Some((scheme, _)) => format!("{scheme}://***"),
            None => "***".to_owned(),
        };
    };
    if parsed.password().is_some() {
        // Only fails for URLs that cannot have a password, which this one has.
        let _ = parsed.set_password(Some("***"));
    }
    if parsed
        .query_pairs()
        .any(|(key, _)| key.eq_ignore_ascii_case("password"))
    {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(key, value)| {
                let value = if key.eq_ignore_ascii_case("password") {
                    "***".to_owned()
                } else {
                    value.into_owned()
                };
                (key.into_owned(), value)
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

//! Connecting to the database: URLs, the pool and its per-connection settings, migrations,
//! and the refusal of a PostgreSQL server that could lose acknowledged commits.

use std::sync::{LazyLock, Once};
use std::time::Duration;

use sqlx::any::AnyPoolOptions;
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AnyConnection, AnyPool, AssertSqlSafe, Connection, Executor, Row, SqlSafeStr};

use super::errors::ResultExt;
use super::sqlite_file::SqliteFile;
use super::sqlite_pragmas::SQLITE_PRAGMAS;
use super::{deletes, group_commit, Store, StoreError};

/// The migrations under `migrations/sqlite/` and `migrations/postgres/`, embedded in the
/// binary as (file name, SQL): the two directories hold the same names, one version each in
/// each database's dialect, so one list names both.
///
/// Listed here rather than found by sqlx's `migrate!` macro, which needs sqlx's `macros`
/// feature: that compiles sqlx and both of its drivers a second time, for the compiler, in
/// every debug, release and minimum-Rust build. A test below fails when a file under
/// `migrations/` is not listed; `applied_migrations_keep_the_checksums_earlier_releases_recorded`
/// (tests) when a name, a description or a checksum differs from what the macro made.
macro_rules! embedded {
    ($($file:literal),+ $(,)?) => {
        /// SQLite's migrations.
        const SQLITE_FILES: &[(&str, &str)] =
            &[$(($file, include_str!(concat!("../../migrations/sqlite/", $file)))),+];
        /// PostgreSQL's: the same versions, each in that database's dialect.
        const POSTGRES_FILES: &[(&str, &str)] =
            &[$(($file, include_str!(concat!("../../migrations/postgres/", $file)))),+];
    };
}
embedded!(
    "0001_initial.sql",
    "0002_idempotency_keys.sql",
    "0003_api_key_last_used.sql",
    "0004_change_log.sql",
    "0005_zone_identities.sql",
    "0006_zones_to_build_on.sql",
    "0007_offerings.sql",
);

static SQLITE_MIGRATIONS: LazyLock<Migrator> = LazyLock::new(|| migrator(SQLITE_FILES));
static POSTGRES_MIGRATIONS: LazyLock<Migrator> = LazyLock::new(|| migrator(POSTGRES_FILES));

/// A migrator of `files`, each read as sqlx reads a migrations directory: `<version>_<words
/// joined by _>.sql`, simple (not reversible), the description the words, the checksum the
/// SQL's SHA-384, in a transaction unless the SQL starts with `-- no-transaction`.
fn migrator(files: &[(&str, &'static str)]) -> Migrator {
    let migrations = files
        .iter()
        .map(|&(file, sql)| {
            let (version, rest) = file.split_once('_').unwrap_or((file, ""));
            // The file names are the constants above, which a unit test checks.
            let version = version.parse().unwrap_or(i64::MAX);
            let description = rest.trim_end_matches(".sql").replace('_', " ");
            Migration::new(
                version,
                description.into(),
                MigrationType::Simple,
                AssertSqlSafe(sql).into_sql_str(),
                sql.starts_with("-- no-transaction"),
            )
        })
        .collect();
    Migrator::with_migrations(migrations)
}

/// Which database a [`Store`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// Embedded SQLite file (WAL, `synchronous=FULL`).
    Sqlite,
    /// PostgreSQL server.
    Postgres,
}

impl Backend {
    /// The backend a database URL names: `sqlite:` or `postgres://` / `postgresql://`.
    pub fn of_url(url: &str) -> Option<Backend> {
        if url.starts_with("sqlite:") {
            Some(Backend::Sqlite)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Some(Backend::Postgres)
        } else {
            None
        }
    }
}

/// Connection-pool settings.
#[derive(Debug, Clone)]
pub struct PoolSettings {
    /// Most connections held open.
    pub max_connections: u32,
    /// How long a query waits for a connection before the database counts as unavailable.
    /// sqlx's pool keeps trying to connect for all of it when the database is down, so a
    /// request does not ask the pool once the database is known down, and stops waiting when
    /// it becomes so (see `availability.rs`): this bounds the wait for a busy pool.
    pub acquire_timeout: Duration,
    /// PostgreSQL only: the longest any statement may run, lock waits included, before the
    /// server cancels it and rolls it back (`statement_timeout`). The server sets it below its
    /// request timeout, so a write never outlives its request; `None` keeps the server's own.
    pub statement_timeout: Option<Duration>,
}

/// The defaults, in the units of the `serve` options that set them (their `default_value_t`).
impl PoolSettings {
    /// Default of [`PoolSettings::max_connections`].
    pub const DEFAULT_MAX_CONNECTIONS: u32 = 8;
    /// Default of [`PoolSettings::acquire_timeout`], in milliseconds.
    pub const DEFAULT_ACQUIRE_TIMEOUT_MS: u64 = 1000;
}

impl Default for PoolSettings {
    fn default() -> Self {
        Self {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            acquire_timeout: Duration::from_millis(Self::DEFAULT_ACQUIRE_TIMEOUT_MS),
            statement_timeout: None,
        }
    }
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
        let file = SqliteFile::of(&url);
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
            (Backend::Sqlite, _) => options
                .after_connect(|conn, _meta| {
                    Box::pin(async move { conn.execute(SQLITE_PRAGMAS).await.map(|_| ()) })
                })
                // A connection whose transaction could not be ended is closed, not pooled: a
                // failed `COMMIT` (a full disk) can leave SQLite's transaction open with sqlx
                // still counting it, and the next write on that connection would only release
                // a savepoint inside it, answered as stored while nothing was committed and the
                // write lock stayed held. `ping` runs the rollback the transaction queued when
                // it was dropped; a count still above zero after it means that rollback
                // failed. Closing the connection rolls back what is open on it.
                .after_release(|conn, _meta| {
                    Box::pin(async move {
                        conn.ping().await?;
                        Ok(!conn.is_in_transaction())
                    })
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
            availability: Default::default(),
        })
    }

    /// Which backend this store uses.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Applies the embedded migrations of this backend.
    pub async fn migrate(&self) -> Result<(), StoreError> {
        let migrator = match self.backend {
            Backend::Sqlite => &*SQLITE_MIGRATIONS,
            Backend::Postgres => &*POSTGRES_MIGRATIONS,
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
}

/// Whether every embedded migration of `backend` has been applied on `conn` (false on a
/// database that was never migrated). Reads only: sqlx's own `ensure_migrations_table` would
/// create the table, so its existence is checked first.
async fn is_migrated(conn: &mut AnyConnection, backend: Backend) -> Result<bool, StoreError> {
    use sqlx::migrate::Migrate;
    let (migrator, table_exists) = match backend {
        Backend::Sqlite => (
            &*SQLITE_MIGRATIONS,
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = $1",
        ),
        Backend::Postgres => (
            &*POSTGRES_MIGRATIONS,
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

/// Splits a database URL into its backend and the URL sqlx should use. A SQLite file is
/// created when missing (`mode=rwc`) only when `create` is set and the URL sets no mode.
fn normalize_url(url: &str, create: bool) -> Result<(Backend, String), StoreError> {
    let Some(backend) = Backend::of_url(url) else {
        return Err(StoreError::Invalid(
            "database URL must start with sqlite://, postgres:// or postgresql://".to_owned(),
        ));
    };
    if backend == Backend::Sqlite {
        let mode = if create { "mode=rwc" } else { "mode=rw" };
        let url = if url.contains("mode=") {
            url.to_owned()
        } else if url.contains('?') {
            format!("{url}&{mode}")
        } else {
            format!("{url}?{mode}")
        };
        Ok((Backend::Sqlite, url))
    } else {
        Ok((Backend::Postgres, url.to_owned()))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A migration file that is not listed would never run: the binary embeds only the list.
    #[test]
    fn every_migration_file_is_embedded_in_order() {
        for (backend, files) in [("sqlite", SQLITE_FILES), ("postgres", POSTGRES_FILES)] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(backend);
            let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
                .expect("the migrations directory")
                .map(|entry| {
                    entry
                        .expect("an entry")
                        .file_name()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect();
            on_disk.sort();
            let listed: Vec<&str> = files.iter().map(|(file, _)| *file).collect();
            assert_eq!(listed, on_disk, "migrations/{backend}");
            let versions: Vec<i64> = migrator(files).iter().map(|m| m.version).collect();
            let expected: Vec<i64> = (1..=i64::try_from(files.len()).expect("a count")).collect();
            assert_eq!(versions, expected, "migrations/{backend}: versions");
        }
    }
}

//! Fresh databases: a SQLite file in a temporary directory, or a schema of the PostgreSQL at
//! [`PG_ENV`], dropped in the background when the test is done with it.

use std::time::Duration;

/// The variable naming the PostgreSQL the tests may create schemas in.
pub const PG_ENV: &str = "APPZONE_TEST_POSTGRES_URL";

/// A test's database, kept alive as long as the test uses it.
#[derive(Debug)]
pub(crate) enum Database {
    Sqlite(tempfile::TempDir),
    /// A database the test made and cleans up itself.
    Elsewhere,
    Postgres {
        admin_url: String,
        schema: String,
    },
}

impl Database {
    /// A fresh SQLite file, and its URL.
    pub(crate) fn sqlite() -> (String, Self) {
        let db = Self::Sqlite(tempfile::tempdir().unwrap());
        let url = format!("sqlite://{}", db.sqlite_file().unwrap().display());
        (url, db)
    }

    /// The SQLite file of [`Database::sqlite`]; `None` for another database.
    pub(crate) fn sqlite_file(&self) -> Option<std::path::PathBuf> {
        match self {
            Self::Sqlite(dir) => Some(dir.path().join("appzone.db")),
            Self::Elsewhere | Self::Postgres { .. } => None,
        }
    }

    /// A fresh PostgreSQL schema, and the URL scoped to it.
    pub(crate) async fn postgres() -> (String, Self) {
        let (admin_url, schema) = postgres_schema().await;
        let url = scoped_url(&admin_url, &schema);
        (url, Self::Postgres { admin_url, schema })
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Database::Postgres { admin_url, schema } = self {
            let (url, schema) = (admin_url.clone(), schema.clone());
            // Async cleanup cannot run in Drop, and must not block it either: the schema's
            // last connections close only when the test's runtime shuts down, after this.
            // A detached thread waits for them; `sweep_old_schemas` catches what a process
            // exit cuts short.
            std::thread::spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                rt.block_on(drop_schema(&url, &schema));
            });
        }
    }
}

async fn drop_schema(url: &str, schema: &str) {
    if let Ok(mut conn) = connect_admin(url).await {
        let sql = format!("DROP SCHEMA IF EXISTS {schema} CASCADE");
        let _ = sqlx::Executor::execute(&mut conn, sqlx::AssertSqlSafe(sql)).await;
    }
}

/// Drops test schemas (`t_<ulid>`) created more than an hour ago by earlier runs.
async fn sweep_old_schemas(url: &str) {
    let Ok(mut conn) = connect_admin(url).await else {
        return;
    };
    let Ok(rows) = sqlx::query_as::<_, (String,)>(
        "SELECT nspname::text FROM pg_namespace WHERE nspname LIKE 't\\_%'",
    )
    .fetch_all(&mut conn)
    .await
    else {
        return;
    };
    let hour_ago = std::time::SystemTime::now() - Duration::from_secs(3600);
    for (schema,) in rows {
        let old = ulid::Ulid::from_string(&schema[2..].to_uppercase())
            .is_ok_and(|id| id.datetime() < hour_ago);
        if old {
            drop_schema(url, &schema).await;
        }
    }
}

/// One connection to `url` (SQLite or PostgreSQL), outside any store.
pub async fn connect_admin(url: &str) -> Result<sqlx::AnyConnection, sqlx::Error> {
    sqlx::any::install_default_drivers();
    <sqlx::AnyConnection as sqlx::Connection>::connect(url).await
}

/// The PostgreSQL URL and a fresh schema on it. Panics when `APPZONE_TEST_POSTGRES_URL` is not
/// set: only tests marked ignored call this, so it runs only when PostgreSQL tests were asked
/// for, and then a missing database must fail, not pass.
pub async fn postgres_schema() -> (String, String) {
    let url = std::env::var(PG_ENV).unwrap_or_else(|_| {
        panic!(
            "this PostgreSQL test was selected but {PG_ENV} is not set; set it to a database \
             this test may create schemas in, e.g. postgres://postgres@127.0.0.1:5432/test"
        )
    });
    static SWEPT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SWEPT.swap(true, std::sync::atomic::Ordering::SeqCst) {
        sweep_old_schemas(&url).await;
    }
    let schema = format!("t_{}", ulid::Ulid::generate().to_string().to_lowercase());
    let mut conn = connect_admin(&url)
        .await
        .unwrap_or_else(|e| panic!("{PG_ENV} is set but PostgreSQL is unreachable: {e}"));
    sqlx::Executor::execute(
        &mut conn,
        sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")),
    )
    .await
    .unwrap();
    (url, schema)
}

/// `url` with every connection's `search_path` set to `schema`.
pub fn scoped_url(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

/// A fresh, empty PostgreSQL schema for a test that runs its own servers (a child process, say);
/// dropped in the background when this is dropped.
#[derive(Debug)]
pub struct PgSchema {
    /// The database URL scoped to the schema.
    pub url: String,
    _db: Database,
}

/// A [`PgSchema`]; panics as [`postgres_schema`] does when PostgreSQL is not configured.
pub async fn fresh_postgres_schema() -> PgSchema {
    let (url, db) = Database::postgres().await;
    PgSchema { url, _db: db }
}

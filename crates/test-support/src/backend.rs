//! The backend a test of [`both_backends!`](crate::both_backends) runs on, and what each kind
//! of test argument is made from it.

use std::future::Future;

use appzone_server::ServiceConfig;

use crate::postgres::Database;
use crate::TestApp;

/// The database a test half runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A fresh SQLite file.
    Sqlite,
    /// A fresh schema of the PostgreSQL at [`PG_ENV`](crate::PG_ENV).
    Postgres,
}

impl Backend {
    /// `sqlite` or `postgres`, as the halves' modules are named.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sqlite => "sqlite",
            Self::Postgres => "postgres",
        }
    }

    /// A fresh, empty database of this backend.
    pub async fn fresh_database(self) -> FreshDatabase {
        let (url, db) = match self {
            Self::Sqlite => Database::sqlite(),
            Self::Postgres => Database::postgres().await,
        };
        FreshDatabase { url, db }
    }

    /// A server on a fresh database of this backend, with `config`.
    pub async fn app_with(self, config: ServiceConfig) -> TestApp {
        match self {
            Self::Sqlite => TestApp::sqlite_with(config).await,
            Self::Postgres => TestApp::postgres_with(config, |url| url).await,
        }
    }
}

/// A fresh, empty database (nothing migrated) for a test that runs its own servers (a child
/// process, say); removed when this is dropped.
#[derive(Debug)]
pub struct FreshDatabase {
    pub url: String,
    db: Database,
}

impl FreshDatabase {
    /// The SQLite file, for checks of the file itself; `None` on PostgreSQL.
    pub fn sqlite_file(&self) -> Option<std::path::PathBuf> {
        self.db.sqlite_file()
    }
}

/// What a test of [`both_backends!`](crate::both_backends) takes, made for one backend.
pub trait OnBackend: Sized {
    fn on(backend: Backend) -> impl Future<Output = Self>;
}

impl OnBackend for Backend {
    async fn on(backend: Backend) -> Self {
        backend
    }
}

impl OnBackend for TestApp {
    async fn on(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => TestApp::sqlite().await,
            Backend::Postgres => TestApp::postgres().await,
        }
    }
}

//! The operator CLI, run as the real binary on a fresh SQLite file (or PostgreSQL schema, for
//! the tests of both backends), a module per theme.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use appzone_test_support::{
    both_backends, eventually, fast_config, postgres_only, Backend, OnBackend, TestApp,
};

use crate::server_process::{stdout_of, ServerProcess};

mod backup;
mod catalog;
mod errors;
mod keys;
mod serving;

struct Cli {
    dir: tempfile::TempDir,
    /// The PostgreSQL schema the commands use instead of `./appzone.db`, if any.
    postgres: Option<appzone_test_support::PgSchema>,
}

impl Cli {
    /// A working directory whose default database `migrate` has created.
    fn new() -> Self {
        let cli = Self::empty();
        cli.ok(&["migrate"]);
        cli
    }

    /// An empty working directory: no database yet.
    fn empty() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            postgres: None,
        }
    }

    /// A working directory whose commands use a fresh, migrated PostgreSQL schema.
    async fn postgres() -> Self {
        let cli = Self {
            postgres: Some(appzone_test_support::fresh_postgres_schema().await),
            ..Self::empty()
        };
        cli.ok(&["migrate"]);
        cli
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_appzone-server"));
        command
            .current_dir(self.dir.path())
            .env_remove("APPZONE_DATABASE_URL")
            .env_remove("APPZONE_LOG")
            .env_remove("RUST_LOG");
        if let Some(schema) = &self.postgres {
            command.env("APPZONE_DATABASE_URL", &schema.url);
        }
        command
    }

    /// A server on the database the commands use.
    async fn serve(&self) -> TestApp {
        match &self.postgres {
            Some(schema) => TestApp::postgres_at(&schema.url, fast_config()).await,
            None => TestApp::sqlite_at(&self.url(), fast_config()).await,
        }
    }

    /// The database URL the commands use.
    fn url(&self) -> String {
        match &self.postgres {
            Some(schema) => schema.url.clone(),
            None => format!("sqlite://{}", self.dir.path().join("appzone.db").display()),
        }
    }

    /// The database, opened as the server opens it.
    async fn store(&self) -> appzone_server::storage::Store {
        let settings = appzone_server::storage::PoolSettings::default();
        appzone_server::storage::Store::connect_existing(&self.url(), &settings)
            .await
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs and expects success; returns stdout.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        stdout_of(self.command().args(args), &format!("{args:?}"))
    }

    /// Runs and expects success with nothing on stdout; returns stderr.
    #[track_caller]
    fn quiet(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{args:?} failed: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed on stdout: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        stderr
    }

    /// Runs and expects an operator error: exit 1, empty stdout, and one line on stderr,
    /// starting `error: `.
    #[track_caller]
    fn fails(&self, args: &[&str]) -> String {
        let stderr = self.fails_with(1, args);
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?}: one error line: {stderr:?}"
        );
        stderr
    }

    /// Runs and expects an invalid command line: exit 2, empty stdout, stderr starting
    /// `error: `.
    #[track_caller]
    fn refused(&self, args: &[&str]) -> String {
        self.fails_with(2, args)
    }

    #[track_caller]
    fn fails_with(&self, code: i32, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?} should exit {code}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed on stdout: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr:?}");
        stderr
    }
}

impl OnBackend for Cli {
    async fn on(backend: Backend) -> Self {
        match backend {
            Backend::Sqlite => Self::new(),
            Backend::Postgres => Self::postgres().await,
        }
    }
}

/// The cell of a `table` (as the CLI prints them: left-aligned columns under their headers) in
/// data row `row` (0 is the first after the header) and the column headed `column`.
#[track_caller]
fn cell(table: &str, row: usize, column: &str) -> String {
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    let start = header
        .find(column)
        .unwrap_or_else(|| panic!("no column {column}: {table}"));
    let end = header[start..]
        .find("  ")
        .and_then(|gap| {
            header[start + gap..]
                .find(|c: char| c != ' ')
                .map(|next| start + gap + next)
        })
        .unwrap_or(usize::MAX);
    let line = lines
        .nth(row)
        .unwrap_or_else(|| panic!("no row {row}: {table}"));
    line.get(start..end.min(line.len()))
        .unwrap_or("")
        .trim()
        .to_owned()
}

//! The data a run works on: an organization and its admin key made with the operator CLI, and
//! the profiles the delete scenarios delete, inserted in one statement per database.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::Binaries;
use crate::process::{output, psql, stdout_of, succeeds, PROBE_TIMEOUT};

/// Delete ids reserved per wrk run per second of run time: far above any delete rate seen, so
/// a run never runs out of distinct profiles (running out would show as 404 errors).
pub(super) const DELETE_IDS_PER_SECOND: u64 = 20_000;
/// The operator CLI and the database shells; inserting the profiles is the longest of them.
const SEED_TIMEOUT: Duration = Duration::from_secs(600);

/// An Err saying how to install the sqlite3 CLI when it is missing.
pub(super) fn require_sqlite3() -> Result<()> {
    output(Command::new("sqlite3").arg("--version"), PROBE_TIMEOUT)
        .map(drop)
        .context(
            "the sqlite3 CLI is not installed (it seeds the profiles): \
         `sudo apt-get install -y sqlite3`",
        )
}

/// Creates organization `bench` and an admin key with the operator CLI; returns the key.
pub(super) fn org_and_key(bins: &Binaries, url: &str) -> Result<String> {
    // Only `migrate` and `serve` create a database; the other commands need one.
    for args in [
        &["migrate"][..],
        &["org", "create", "bench", "--name", "Bench"],
    ] {
        stdout_of(bins.server_cli(url).args(args), SEED_TIMEOUT)?;
    }
    let key = stdout_of(
        bins.server_cli(url).args([
            "key", "create", "--org", "bench", "--role", "admin", "--name", "bench",
        ]),
        SEED_TIMEOUT,
    )?;
    Ok(key.trim().to_owned())
}

/// Inserts profiles `bench-1` to `bench-<count>` of organization `bench` into SQLite.
pub(super) fn sqlite_profiles(db: &Path, count: u64) -> Result<()> {
    let started = Instant::now();
    sqlite(
        db,
        &format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) \
             INSERT INTO profiles (id, org_id, name, created_at) \
             SELECT 'bench-' || i, 'bench', 'profile ' || i, 0 FROM n;"
        ),
    )?;
    eprintln!(
        "bench: seeded {count} profiles into SQLite in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The same for PostgreSQL, in `schema`.
pub(super) fn postgres_profiles(admin_url: &str, schema: &str, count: u64) -> Result<()> {
    psql(
        admin_url,
        &format!(
            "INSERT INTO {schema}.profiles (id, org_id, name, created_at) \
             SELECT 'bench-' || i, 'bench', 'profile ' || i, 0 \
             FROM generate_series(1, {count}) AS i; ANALYZE {schema}.profiles"
        ),
    )
    .map(drop)
}

/// Runs `measure` in a fresh schema `<prefix>_<pid>_<secs>` of the database at `admin_url`,
/// given a URL whose search_path is that schema and the schema's name; drops the schema
/// afterwards whatever happened (`measure` has stopped its servers by then).
pub(super) fn in_fresh_schema<T>(
    admin_url: &str,
    prefix: &str,
    measure: impl FnOnce(&str, &str) -> Result<T>,
) -> Result<T> {
    let schema = format!("{prefix}_{}_{}", std::process::id(), super::unix_secs());
    psql(admin_url, &format!("CREATE SCHEMA {schema}"))?;
    let sep = if admin_url.contains('?') { '&' } else { '?' };
    let url = format!("{admin_url}{sep}options=-c%20search_path%3D{schema}");
    let result = measure(&url, &schema);
    let dropped = psql(
        admin_url,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
    );
    if let Err(err) = dropped {
        eprintln!("bench: warning: could not drop schema {schema}: {err:#}");
    }
    result
}

/// What `sql` prints, run by the sqlite3 CLI on `db`.
pub(super) fn sqlite(db: &Path, sql: &str) -> Result<String> {
    stdout_of(Command::new("sqlite3").arg(db).arg(sql), SEED_TIMEOUT)
}

/// Whether `psql` reaches the server of `url`.
pub(super) fn postgres_reachable(url: &str) -> bool {
    succeeds(Command::new("psql").args([url, "-X", "-q", "-t", "-c", "SELECT 1"]))
}

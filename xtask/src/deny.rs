//! `cargo xtask deny`: supply-chain checks with cargo-deny (policy in `deny.toml`).
//!
//! 1. Installs cargo-deny (`cargo install --locked`, pinned) when `cargo deny` is missing; the
//!    binary lands in `~/.cargo/bin`, so later runs skip this.
//! 2. `cargo fetch --locked`, so cargo-deny's `cargo metadata --offline` finds every crate.
//! 3. Licences, bans and sources need no network: `cargo deny --offline check bans licenses
//!    sources` always runs.
//! 4. Advisories need the RustSec database, taken from the first of:
//!    - a snapshot (`APPZONE_ADVISORY_DB`, default `../shared/advisory-db`), laid out where
//!      `deny.toml`'s `db-path` expects a checkout of its `db-urls`
//!      (`target/advisory-dbs/advisory-db-<hash>`): a plain copy whose `.git/FETCH_HEAD` is
//!      dated at the snapshot's own date, so cargo-deny's staleness check measures the
//!      snapshot's real age. Copied again only when the snapshot changes;
//!    - the live database, fetched by cargo-deny when github.com answers;
//!    - neither: the advisory check prints `SKIPPED` with how to run it, and does not fail the
//!      task, except under CI (`CI=true`), where it fails.
//!
//! `APPZONE_DENY_FETCH=1` skips the snapshot and always fetches the live database.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use anyhow::{Context, Result};

use crate::process::{self, cargo, output, path_arg, skip, succeeds};

/// The cargo-deny release CI installs.
const CARGO_DENY: &str = "cargo-deny@0.20.2";
/// Where cargo-deny looks for a checkout of `https://github.com/rustsec/advisory-db` under the
/// `db-path` of deny.toml (the name is `advisory-db-` + XxHash64 of the lowercased URL).
const DB_DIR: &str = "target/advisory-dbs/advisory-db-3157b0e258782691";
/// The snapshot when `APPZONE_ADVISORY_DB` does not name one, relative to the repository root.
const SNAPSHOT: &str = "../shared/advisory-db";
/// The database cargo-deny fetches (the `db-urls` of deny.toml).
const ADVISORY_DB_URL: &str = "https://github.com/rustsec/advisory-db";
/// Copying the snapshot (thousands of small files).
const COPY_TIMEOUT: Duration = Duration::from_secs(300);

/// Runs the supply-chain checks.
pub fn run() -> Result<()> {
    ensure_cargo_deny()?;
    process::run(cargo().args(["fetch", "--locked"]))?;
    process::run(cargo().args(["deny", "--offline", "check", "bans", "licenses", "sources"]))?;
    advisories()
}

/// The advisory check, on the snapshot when there is one (unless `APPZONE_DENY_FETCH=1`), else
/// on the live database when GitHub answers, else skipped with a notice (failing under CI).
fn advisories() -> Result<()> {
    let snapshot = std::env::var_os("APPZONE_ADVISORY_DB")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::root().join(SNAPSHOT));
    let fetch_forced = std::env::var("APPZONE_DENY_FETCH").is_ok_and(|v| v == "1");
    if !fetch_forced && snapshot.join("SNAPSHOT.txt").exists() {
        let age = prepare_snapshot(&snapshot)?;
        eprintln!(
            "deny: advisories from the RustSec snapshot in {}, {} days old",
            path_arg(&snapshot),
            age.as_secs() / 86_400
        );
        return process::run(cargo().args(["deny", "--offline", "check", "advisories"]));
    }
    if fetch_forced || github_answers() {
        eprintln!("deny: fetching the live RustSec database from {ADVISORY_DB_URL}");
        return process::run(cargo().args(["deny", "check", "advisories"]));
    }
    skip(&format!(
        "deny: SKIPPED the advisory check: no RustSec snapshot at {} (docs/DEVELOPING.md, \
         \"Supply chain\", says how one is made), and {ADVISORY_DB_URL} cannot be reached. \
         Licences, bans and sources were checked. To check advisories, run \
         `APPZONE_DENY_FETCH=1 cargo xtask deny` where GitHub is reachable, or point \
         APPZONE_ADVISORY_DB at a snapshot",
        path_arg(&snapshot)
    ))
}

/// Whether the advisory database's host answers, within a bound (a machine without a route
/// there would otherwise wait for git's own, much longer, timeouts).
fn github_answers() -> bool {
    output(
        Command::new("git")
            .args(["ls-remote", "--quiet", ADVISORY_DB_URL, "HEAD"])
            .env("GIT_TERMINAL_PROMPT", "0"),
        Duration::from_secs(20),
    )
    .is_ok_and(|out| out.status.success())
}

fn ensure_cargo_deny() -> Result<()> {
    if succeeds(cargo().args(["deny", "--version"])) {
        return Ok(());
    }
    eprintln!("deny: cargo-deny is not installed; installing {CARGO_DENY} (a few minutes, once)");
    process::run(cargo().args(["install", "--locked", CARGO_DENY]))
}

/// Copies the snapshot into place when it changed; returns its age.
fn prepare_snapshot(snapshot: &Path) -> Result<Duration> {
    let stamp = std::fs::read_to_string(snapshot.join("SNAPSHOT.txt"))
        .with_context(|| format!("no advisory snapshot at {}", snapshot.display()))?;
    let date = snapshot_date(&stamp)
        .with_context(|| format!("no (YYYY-MM-DD) date in SNAPSHOT.txt: {stamp:?}"))?;
    let midnight = format!("{date}T00:00:00Z");
    let db = crate::root().join(DB_DIR);
    let marker = db.join(".git").join("appzone-snapshot");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(stamp.as_str()) {
        if db.exists() {
            std::fs::remove_dir_all(&db)
                .with_context(|| format!("cannot clear {}", db.display()))?;
        }
        std::fs::create_dir_all(&db).with_context(|| format!("cannot create {}", db.display()))?;
        process::run_bounded(
            Command::new("cp")
                .arg("-R")
                .arg(snapshot.join("."))
                .arg(&db),
            COPY_TIMEOUT,
        )?;
        // cargo-deny reads a plain directory as the database; of `.git` it only reads the time
        // of `FETCH_HEAD` (below). Shown to find an advisory added to such a copy.
        let _ = std::fs::remove_dir_all(db.join(".git"));
        std::fs::create_dir_all(db.join(".git")).context("cannot create the .git directory")?;
        std::fs::write(&marker, &stamp)
            .with_context(|| format!("cannot write {}", marker.display()))?;
    }
    // cargo-deny dates the database by `.git/FETCH_HEAD`: the snapshot's date, not today's.
    let fetch_head = db.join(".git").join("FETCH_HEAD");
    std::fs::write(&fetch_head, "")
        .with_context(|| format!("cannot write {}", fetch_head.display()))?;
    process::run_bounded(
        Command::new("touch")
            .args(["-d", &midnight])
            .arg(&fetch_head),
        COPY_TIMEOUT,
    )?;
    let dated = std::fs::metadata(&fetch_head).and_then(|m| m.modified());
    let dated =
        dated.with_context(|| format!("cannot read the time of {}", fetch_head.display()))?;
    Ok(SystemTime::now()
        .duration_since(dated)
        .unwrap_or(Duration::ZERO))
}

/// The `(YYYY-MM-DD)` date in SNAPSHOT.txt.
fn snapshot_date(stamp: &str) -> Option<&str> {
    let date = stamp.split('(').nth(1)?.split(')').next()?;
    let digits = |part: &str, len| part.len() == len && part.bytes().all(|b| b.is_ascii_digit());
    match date.split('-').collect::<Vec<_>>()[..] {
        [y, m, d] if digits(y, 4) && digits(m, 2) && digits(d, 2) && ("01"..="12").contains(&m) => {
            Some(date)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::snapshot_date;

    #[test]
    fn snapshot_dates_are_read_from_the_stamp() {
        assert_eq!(
            snapshot_date("snapshot at commit bf5c (2026-08-21)"),
            Some("2026-08-21")
        );
        assert_eq!(snapshot_date("2000-03-01"), None);
        assert_eq!(snapshot_date("(2026-13-01)"), None);
    }
}

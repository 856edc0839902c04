//! `cargo xtask deny`: supply-chain checks with cargo-deny (policy in `deny.toml`).
//!
//! 1. Installs cargo-deny (`cargo install --locked`, pinned) when `cargo deny` is missing; the
//!    binary lands in `~/.cargo/bin`, so later runs skip this.
//! 2. `cargo fetch --locked`, so cargo-deny's `cargo metadata --offline` finds every crate.
//! 3. Lays the RustSec snapshot in `../shared/advisory-db` out where `deny.toml`'s `db-path`
//!    expects a checkout of its `db-urls` (`target/advisory-dbs/advisory-db-<hash>`): a copy made
//!    into a git repository, committed and "fetched" at the snapshot's own date, so cargo-deny's
//!    staleness check measures the snapshot's real age. Redone only when the snapshot changes.
//! 4. `cargo deny --offline check advisories bans licenses sources`: no network but crates.io.
//!
//! `APPZONE_DENY_FETCH=1` skips step 3 and lets cargo-deny fetch the live database instead
//! (needs access to github.com); so does a checkout with no `../shared/advisory-db` beside it.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

/// The cargo-deny release CI installs.
const CARGO_DENY: &str = "cargo-deny@0.20.2";
/// Where cargo-deny looks for a checkout of `https://github.com/rustsec/advisory-db` under the
/// `db-path` of deny.toml (the name is `advisory-db-` + XxHash64 of the lowercased URL).
const DB_DIR: &str = "target/advisory-dbs/advisory-db-3157b0e258782691";
/// The snapshot, relative to the repository root.
const SNAPSHOT: &str = "../shared/advisory-db";

/// Runs the supply-chain checks.
pub fn run() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    ensure_cargo_deny(&cargo)?;
    crate::run(&cargo, &["fetch", "--locked"])?;
    if std::env::var("APPZONE_DENY_FETCH").is_ok_and(|v| v == "1") {
        return crate::run(&cargo, &["deny", "check"]);
    }
    // A checkout without the workplace's `../shared` (a stranger's machine) has no snapshot:
    // let cargo-deny fetch the live database there instead of failing.
    if !crate::root().join(SNAPSHOT).join("SNAPSHOT.txt").exists() {
        eprintln!("deny: no advisory snapshot at {SNAPSHOT}; fetching the live RustSec database");
        return crate::run(&cargo, &["deny", "check"]);
    }
    let age = prepare_snapshot()?;
    eprintln!(
        "deny: advisories from the RustSec snapshot in {SNAPSHOT}, {} days old",
        age.as_secs() / 86_400
    );
    crate::run(
        &cargo,
        &[
            "deny",
            "--offline",
            "check",
            "advisories",
            "bans",
            "licenses",
            "sources",
        ],
    )
}

fn ensure_cargo_deny(cargo: &str) -> Result<(), String> {
    let installed = Command::new(cargo)
        .args(["deny", "--version"])
        .output()
        .is_ok_and(|out| out.status.success());
    if installed {
        return Ok(());
    }
    eprintln!("deny: cargo-deny is not installed; installing {CARGO_DENY} (a few minutes, once)");
    crate::run(cargo, &["install", "--locked", CARGO_DENY])
}

/// Copies the snapshot into place when it changed; returns its age.
fn prepare_snapshot() -> Result<Duration, String> {
    let root = crate::root();
    let snapshot = root.join(SNAPSHOT);
    let stamp = std::fs::read_to_string(snapshot.join("SNAPSHOT.txt")).map_err(|e| {
        format!(
            "no advisory snapshot at {} ({e}); set APPZONE_DENY_FETCH=1 to fetch the database",
            snapshot.display()
        )
    })?;
    let dated = snapshot_time(&stamp)
        .ok_or_else(|| format!("no (YYYY-MM-DD) date in SNAPSHOT.txt: {stamp:?}"))?;
    let db = root.join(DB_DIR);
    let marker = db.join(".git").join("appzone-snapshot");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(stamp.as_str()) {
        if db.exists() {
            std::fs::remove_dir_all(&db)
                .map_err(|e| format!("cannot clear {}: {e}", db.display()))?;
        }
        copy_dir(&snapshot, &db)?;
        make_checkout(&db, &stamp)?;
        std::fs::write(&marker, &stamp).map_err(|e| format!("{}: {e}", marker.display()))?;
    }
    // cargo-deny dates the database by `.git/FETCH_HEAD`: the snapshot's date, not today's.
    let fetch_head = db.join(".git").join("FETCH_HEAD");
    std::fs::write(&fetch_head, "")
        .and_then(|()| std::fs::File::options().write(true).open(&fetch_head))
        .and_then(|file| file.set_modified(dated))
        .map_err(|e| format!("{}: {e}", fetch_head.display()))?;
    Ok(SystemTime::now()
        .duration_since(dated)
        .unwrap_or(Duration::ZERO))
}

/// A git repository with the snapshot as its one commit, dated like the snapshot. Without git,
/// a bare `.git` directory is enough for cargo-deny, which only reads `FETCH_HEAD`'s time.
fn make_checkout(db: &Path, stamp: &str) -> Result<(), String> {
    let date = stamp
        .split('(')
        .nth(1)
        .and_then(|s| s.split(')').next())
        .map(|d| format!("{d}T00:00:00Z"))
        .unwrap_or_default();
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(db)
            .args(["-c", "user.name=xtask", "-c", "user.email=xtask@localhost"])
            .args(args)
            .env("GIT_AUTHOR_DATE", &date)
            .env("GIT_COMMITTER_DATE", &date)
            .output()
            .is_ok_and(|out| out.status.success())
    };
    let committed = git(&["init", "-q"])
        && git(&["add", "-A"])
        && git(&["commit", "-q", "--no-gpg-sign", "-m", stamp.trim()]);
    if !committed {
        eprintln!("deny: git unavailable; using the snapshot as a plain directory");
        std::fs::create_dir_all(db.join(".git")).map_err(|e| format!("{}: {e}", db.display()))?;
    }
    Ok(())
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    let fail = |path: &PathBuf, e: std::io::Error| format!("copying {}: {e}", path.display());
    std::fs::create_dir_all(to).map_err(|e| fail(&to.to_path_buf(), e))?;
    for entry in std::fs::read_dir(from).map_err(|e| fail(&from.to_path_buf(), e))? {
        let entry = entry.map_err(|e| fail(&from.to_path_buf(), e))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().map_err(|e| fail(&src, e))?.is_dir() {
            if entry.file_name() != ".git" {
                copy_dir(&src, &dst)?;
            }
        } else {
            std::fs::copy(&src, &dst).map_err(|e| fail(&src, e))?;
        }
    }
    Ok(())
}

/// The `(YYYY-MM-DD)` date in SNAPSHOT.txt, as midnight UTC.
fn snapshot_time(stamp: &str) -> Option<SystemTime> {
    let date = stamp.split('(').nth(1)?.split(')').next()?;
    let mut parts = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    // Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = u64::try_from(era * 146_097 + doe - 719_468).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(days * 86_400))
}

#[cfg(test)]
mod tests {
    use super::snapshot_time;
    use std::time::{Duration, SystemTime};

    #[test]
    fn snapshot_dates_become_midnight_utc() {
        let at =
            |s: &str| snapshot_time(s).and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
        assert_eq!(at("x (1970-01-01)"), Some(Duration::ZERO));
        assert_eq!(
            at("snapshot at commit bf5c (2026-08-21)"),
            Some(Duration::from_secs(1_787_270_400))
        );
        assert_eq!(at("2000-03-01"), None);
        assert_eq!(at("(2026-13-01)"), None);
    }
}

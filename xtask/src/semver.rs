//! `cargo xtask semver-checks`: `cargo semver-checks check-release` on `appzone-contract` and
//! `appzone-client` with the newest release commit (see release.rs) as the baseline.

use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use crate::process::{cargo, run_bounded, skip, stdout_of, version};
use crate::release::{
    git, package_version, release_commit, releases, resolve, workspace_version, GIT_TIMEOUT,
};

/// `cargo semver-checks`: it builds the rustdoc JSON of both versions of both crates.
const SEMVER_TIMEOUT: Duration = Duration::from_secs(45 * 60);

/// Options of `cargo xtask semver-checks`; the default compares with the newest release.
#[derive(Debug, Default, clap::Args)]
pub struct SemverArgs {
    /// Compare with this git revision instead of the newest release commit
    #[arg(long, value_name = "REV")]
    baseline_rev: Option<String>,
}

/// `cargo xtask semver-checks`.
pub fn semver_checks(args: SemverArgs) -> Result<()> {
    let root = crate::root();
    // The baseline first: a repository without a release is an error even where the tool is
    // missing.
    let (label, commit) = match args.baseline_rev {
        Some(rev) => {
            let commit = resolve(&root, &rev)?;
            (rev, commit)
        }
        None => {
            let newest = releases(&root)?
                .pop()
                .ok_or_else(|| anyhow!("no release under release/*/openapi.json"))?;
            let commit = release_commit(&root, &newest)?;
            (newest, commit)
        }
    };
    let Some(tool) = version(cargo().args(["semver-checks", "--version"])) else {
        return skip(
            "semver-checks: SKIPPED (cargo-semver-checks is not installed: `cargo install \
             --locked cargo-semver-checks`)",
        );
    };
    eprintln!("semver-checks: {tool}; baseline {label} (commit {commit})");
    // `check-release` compares what changed with what the version numbers allow, so the
    // versions decide how much is checked: say so, a run that checks nothing must not pass
    // unnoticed.
    let at_baseline = |file: &str| {
        stdout_of(
            git(&root).args(["show", &format!("{commit}:{file}")]),
            GIT_TIMEOUT,
        )
    };
    let current = |file: &str| {
        std::fs::read_to_string(root.join(file)).with_context(|| format!("cannot read {file}"))
    };
    let (baseline_toml, current_toml) = (at_baseline("Cargo.toml")?, current("Cargo.toml")?);
    let versions = (
        workspace_version(&baseline_toml),
        workspace_version(&current_toml),
    );
    // appzone-client has a version of its own since 2.0.0 (the conformance kit left
    // its library); a tree without one gives it the workspace's.
    const CLIENT: &str = "crates/client/Cargo.toml";
    let (baseline_client, current_client) = (at_baseline(CLIENT)?, current(CLIENT)?);
    let client_versions = (
        package_version(&baseline_client).or(versions.0),
        package_version(&current_client).or(versions.1),
    );
    // A crate whose major version changed is not run: the tool would build both versions'
    // documentation to check nothing.
    let mut checked = Vec::new();
    for (package, versions) in [
        ("appzone-contract", versions),
        ("appzone-client", client_versions),
    ] {
        if let (Some(baseline), Some(current)) = versions {
            eprintln!(
                "semver-checks: {package}: {}",
                version_note(baseline, current)
            );
            if is_major_change(baseline, current) {
                continue;
            }
        }
        checked.push(package);
    }
    if checked.is_empty() {
        eprintln!("semver-checks: every crate changed its major version since {label}");
        return Ok(());
    }
    let mut command = cargo();
    command.args(["semver-checks", "check-release"]);
    for package in &checked {
        command.args(["-p", package]);
    }
    run_bounded(command.args(["--baseline-rev", &commit]), SEMVER_TIMEOUT)?;
    eprintln!(
        "semver-checks: {} passed against {label}",
        checked.join(" and ")
    );
    Ok(())
}

/// What `check-release` will hold the crates to, going from `baseline` to `current`.
///
/// Verified with cargo-semver-checks 0.51: the same version is checked as a patch release
/// ("no change; assume patch"): every breaking change fails, and so do the changes that need
/// a minor release (a newly deprecated item, say). A major change ("0.1.0 -> 1.0.0") skips
/// every check.
fn version_note(baseline: &str, current: &str) -> String {
    if baseline == current {
        format!(
            "the version is still {current}: checked as a patch release, so any breaking \
             change and any change that needs a minor release fails"
        )
    } else if is_major_change(baseline, current) {
        format!(
            "{baseline} -> {current} is a major change: cargo-semver-checks allows every \
             breaking change and checks nothing, so it is not run"
        )
    } else {
        format!("{baseline} -> {current}: breaking changes fail")
    }
}

/// Whether `baseline` -> `current` changes the major version (Cargo's rule: the first non-zero
/// number is the "major" one).
fn is_major_change(baseline: &str, current: &str) -> bool {
    let major = |v: &str| -> (u64, u64, u64) {
        let core = v.split(['-', '+']).next().unwrap_or(v);
        let mut numbers = core.split('.').map(|n| n.parse().unwrap_or(0));
        let mut next = || numbers.next().unwrap_or(0);
        match (next(), next(), next()) {
            (0, 0, patch) => (0, 0, patch),
            (0, minor, _) => (0, minor, 0),
            (major, _, _) => (major, 0, 0),
        }
    };
    major(baseline) != major(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_says_what_the_versions_let_semver_checks_hold() {
        let manifest = "[workspace]\nmembers = []\n\n[workspace.package]\nversion = \"1.2.3\"\n\
                        edition = \"2021\"\n[package]\nversion = \"9.9.9\"\n";
        assert_eq!(workspace_version(manifest), Some("1.2.3"));
        assert_eq!(workspace_version("[package]\nversion = \"1.0.0\"\n"), None);
        assert_eq!(package_version(manifest), Some("9.9.9"));
        assert_eq!(
            package_version("[package]\nversion.workspace = true\n"),
            None
        );
        assert!(version_note("1.0.0", "1.0.0").contains("patch release"));
        assert!(version_note("0.1.0", "1.0.0").contains("checks nothing"));
        assert!(version_note("0.1.0", "0.2.0").contains("checks nothing"));
        assert!(version_note("1.0.0", "1.1.0").contains("breaking changes fail"));
        assert!(version_note("0.1.0", "0.1.1").contains("breaking changes fail"));
        assert!(is_major_change("1.1.0", "2.0.0") && is_major_change("0.1.0", "0.2.0"));
        assert!(!is_major_change("1.1.0", "1.2.0") && !is_major_change("0.1.0", "0.1.5"));
    }
}

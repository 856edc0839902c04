//! `cargo xtask semver-checks`: `cargo semver-checks check-release` on `appzone-contract` and
//! `appzone-client` with the newest release commit (see release.rs) as the baseline.
//!
//! The tool is given rustdoc JSON this task builds, not left to build its own: it builds each
//! side in a scratch package of its own with `RUSTFLAGS=--cap-lints=allow`, which made every
//! dependency compile again (132 s of a cold CI run, for the client alone). Here both sides are
//! documented in the main target directory, with the package selection and features of CI's
//! `doc` step ([`DOCUMENTED`], all features: what the tool's own feature heuristic picks for
//! these crates), so the dependencies are the ones that step and clippy already checked. The
//! unstable JSON output needs `RUSTC_BOOTSTRAP=1`, and only rustdoc gets it (through a
//! two-line wrapper as `RUSTDOC`): set for cargo, it changes what about 50 dependencies' build
//! scripts detect, and they would be checked again each time.
//!
//! Cargo tells path packages apart only by name, version and path relative to their
//! workspace, which the release's crates share with the current ones; so the release's
//! workspace gets a profile setting of its own (its artifacts never replace the main tree's),
//! its files are dated now (an older artifact under its names never passes for fresh), and
//! each side's JSON files are removed before it runs (one side cannot hand in the other's).
//! The baseline's JSON is kept outside the build cache, by commit and toolchain (kept.rs).
//! A breaking change fails the step: making `Client::base_url` private was reported as
//! `inherent_method_missing`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use crate::process::{cargo, run_bounded, skip, stdout_of, version};
use crate::release::{
    extract, git, package_version, release_commit, releases, resolve, workspace_version, FileTimes,
    GIT_TIMEOUT,
};

/// The crates CI documents (the `doc` step) and whose rustdoc JSON this task builds: one list,
/// so the two builds resolve the same features and share their dependencies' checks.
pub(crate) const DOCUMENTED: [&str; 4] = [
    "appzone-contract",
    "appzone-server",
    "appzone-client",
    "appzone-conformance",
];

/// Documenting one side (its dependencies checked when the target directory is cold).
const DOC_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// `cargo semver-checks` on two JSON files.
const SEMVER_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// What rustdoc is asked for: cargo-semver-checks' own flags (0.51's `data_generation`).
const JSON_RUSTDOCFLAGS: &str = "-Z unstable-options --document-private-items \
                                 --document-hidden-items --output-format=json --cap-lints=allow";

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
    let work = crate::target_dir().join("semver");
    crate::fresh_dir(&work)?;
    let wrapper = rustdoc_wrapper(&work)?;
    let current = work.join("current");
    rustdoc_json(&root, &wrapper, &checked, &current)?;
    // The baseline's JSON depends only on its commit, the toolchain and what is asked: kept
    // outside the build cache (kept.rs), built when any of them changes.
    let inputs = format!(
        "baseline commit {commit}\n{}\nRUSTDOCFLAGS={JSON_RUSTDOCFLAGS}\nchecked: {}\n\
         documented: {}",
        crate::kept::toolchain()?,
        checked.join(" "),
        DOCUMENTED.join(" ")
    );
    let baseline = crate::kept::filled("semver-baseline", &inputs, |kept| {
        let tree = work.join(&commit);
        // Dated now: with the commit's time, an artifact an earlier run left under the same
        // names and versions (another commit's, say) would pass for fresh.
        extract(&root, &commit, &tree, FileTimes::Now)?;
        rustdoc_json(&tree, &wrapper, &checked, kept)
    })?;
    for package in &checked {
        let file = format!("{}.json", package.replace('-', "_"));
        eprintln!("semver-checks: {package}, current against {label}");
        run_bounded(
            cargo()
                .args(["semver-checks", "check-release", "--current-rustdoc"])
                .arg(current.join(&file))
                .arg("--baseline-rustdoc")
                .arg(baseline.join(&file)),
            SEMVER_TIMEOUT,
        )?;
    }
    eprintln!(
        "semver-checks: {} passed against {label}",
        checked.join(" and ")
    );
    Ok(())
}

/// `rustdoc` with `RUSTC_BOOTSTRAP=1`, as a script in `dir`: the rustdoc beside the task's
/// `$CARGO` (the toolchain everything else builds with), `rustdoc` from `PATH` without one.
fn rustdoc_wrapper(dir: &Path) -> Result<PathBuf> {
    let rustdoc = crate::process::toolchain_program("rustdoc");
    let script = dir.join("rustdoc-json");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nRUSTC_BOOTSTRAP=1 exec '{}' \"$@\"\n",
            rustdoc.display()
        ),
    )
    .with_context(|| format!("cannot write {}", script.display()))?;
    let mut permissions = std::fs::metadata(&script)?.permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&script, permissions)?;
    Ok(script)
}

/// Documents the workspace at `tree` as JSON, in the main target directory, and copies the
/// `packages`' files into `out`. The selection is [`DOCUMENTED`] (those the tree has), as the
/// `doc` step's, whatever is checked: a smaller one would resolve other features and check
/// the dependencies again.
fn rustdoc_json(tree: &Path, wrapper: &Path, packages: &[&str], out: &Path) -> Result<()> {
    let mut doc = cargo();
    doc.current_dir(tree)
        .args(["doc", "--no-deps", "--locked", "--all-features", "--lib"])
        .arg("--manifest-path")
        .arg(tree.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(crate::target_dir())
        .env("RUSTDOC", wrapper)
        .env("RUSTDOCFLAGS", JSON_RUSTDOCFLAGS);
    let baseline = tree != crate::root();
    for package in DOCUMENTED {
        let dir = package.strip_prefix("appzone-").unwrap_or(package);
        if tree.join("crates").join(dir).join("Cargo.toml").is_file() {
            doc.args(["-p", package]);
        }
    }
    if baseline {
        // The released crates have the current ones' names, versions and paths relative to
        // their workspace, which is all cargo tells path packages apart by: without this they
        // would share artifacts, and either side could be documented against the other's
        // crates. A setting of their own (which no check or rustdoc output depends on) gives
        // every package of the released workspace artifacts of its own; the dependencies
        // from crates.io are still the ones the main tree checked.
        for package in workspace_packages(tree)? {
            doc.args([
                "--config",
                &format!("profile.dev.package.{package}.codegen-units=7"),
            ]);
        }
    }
    // Both sides write the same file names: a side whose rustdoc did not run must not pass
    // off the other's files as its own.
    for package in packages {
        let built = json_file(package);
        if let Err(err) = std::fs::remove_file(&built) {
            if err.kind() != std::io::ErrorKind::NotFound {
                return Err(err).with_context(|| format!("cannot remove {}", built.display()));
            }
        }
    }
    run_bounded(&mut doc, DOC_TIMEOUT)?;
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for package in packages {
        let built = json_file(package);
        let file = built.file_name().unwrap_or_default();
        std::fs::copy(&built, out.join(file))
            .with_context(|| format!("rustdoc made no {}", built.display()))?;
    }
    Ok(())
}

/// Where `cargo doc` writes a package's rustdoc JSON.
fn json_file(package: &str) -> PathBuf {
    crate::target_dir()
        .join("doc")
        .join(format!("{}.json", package.replace('-', "_")))
}

/// The names of the packages of the workspace at `tree` (`cargo metadata --no-deps`).
fn workspace_packages(tree: &Path) -> Result<Vec<String>> {
    let metadata = stdout_of(
        cargo()
            .args([
                "metadata",
                "--no-deps",
                "--format-version",
                "1",
                "--manifest-path",
            ])
            .arg(tree.join("Cargo.toml")),
        Duration::from_secs(120),
    )?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).context("cargo metadata printed no JSON")?;
    Ok(metadata["packages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|package| Some(package["name"].as_str()?.to_owned()))
        .collect())
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

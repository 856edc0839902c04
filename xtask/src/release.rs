//! `cargo xtask old-client` and `cargo xtask semver-checks`: the released versions of the
//! library crates against the current tree.
//!
//! A released version lives in the repository as `release/<version>/openapi.json` (such as
//! `release/v1.0.0/openapi.json`, which `cargo xtask api-compat` also holds the document to).
//! Its **release commit** is the commit that added that file: `git log --diff-filter=A` finds
//! it in any full clone, also when the tags were not fetched. A shallow clone cannot tell (its
//! oldest commit "adds" every file), so it is refused.
//!
//! - `old-client` extracts each release commit's tree (`git archive`) under
//!   `target/compat/<version>/`, builds that tree's `compat_scenario` example against that
//!   tree's `appzone-client` alone (in `target/compat-target/`, see [`build_scenario`]; kept
//!   outside the build cache once built, by release commit and toolchain), then runs it
//!   against the **current** `appzone-server serve --demo` (the shared release build)
//!   on a fresh SQLite database (demo_server.rs): the released client must keep working against
//!   today's server.
//! - `semver-checks` (semver.rs) runs `cargo semver-checks check-release` on `appzone-contract` and
//!   `appzone-client` with the newest release commit as the baseline, on rustdoc JSON it builds
//!   in the main target directory.
//!
//! For trying them out before a release exists or is committed, the release commit of
//! `<version>` may be given in `APPZONE_RELEASE_COMMIT_<VERSION>` (the version upper-cased,
//! every character other than a letter or digit replaced by `_`: `APPZONE_RELEASE_COMMIT_V1_0_0`),
//! and both tasks take `--baseline-rev <rev>` (any git revision, instead of the releases).
//!
//! The scenario takes the server and the fixture from the environment: `APPZONE_BASE_URL`,
//! `APPZONE_ADMIN_KEY`, `APPZONE_MEMBER_KEY` and `APPZONE_DELETABLE_PROFILE` (the demo's admin
//! and member keys of one organization, which owns the profile). Released scenarios read these
//! names, so they must not change.
//!
//! Every command runs under a time limit and is killed past it; the server dies on drop.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};

use crate::demo_server::DemoServer;
use crate::process::{cargo, run_bounded, stdout_of};

/// A build of an old client and its dependencies.
const BUILD_TIMEOUT: Duration = Duration::from_secs(45 * 60);
/// `git` questions, `git archive` and `tar`.
pub(crate) const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// The old client's scenario, in every tree that can be checked.
const SCENARIO: &str = "crates/client/examples/compat_scenario.rs";

/// Options of `cargo xtask old-client`; the default checks every release.
#[derive(Debug, Default, clap::Args)]
pub struct OldClientArgs {
    /// Check the scenario of this git revision instead of the releases' (to try the task
    /// before a release is committed)
    #[arg(long, value_name = "REV")]
    baseline_rev: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// old-client

/// `cargo xtask old-client`.
pub fn old_client(args: OldClientArgs) -> Result<()> {
    let root = crate::root();
    // (what to call it in the output and under `target/compat/`, its commit)
    let baselines = match args.baseline_rev {
        Some(rev) => vec![(rev.clone(), resolve(&root, &rev)?)],
        None => releases(&root)?
            .into_iter()
            .map(|version| Ok((version.clone(), release_commit(&root, &version)?)))
            .collect::<Result<Vec<_>>>()?,
    };
    ensure!(
        !baselines.is_empty(),
        "no release under release/*/openapi.json"
    );
    // Every old scenario is built before the server, so a release that cannot be checked
    // fails at once.
    let mut scenarios = Vec::new();
    for (label, commit) in &baselines {
        let scenario =
            build_scenario(&root, label, commit).with_context(|| format!("old-client {label}"))?;
        scenarios.push((label, scenario));
    }
    let binary = crate::build::release()?.server();
    for (label, scenario) in &scenarios {
        eprintln!("old-client: --- the scenario of {label} ---");
        let server = DemoServer::sqlite(&binary, "old-client")?;
        server
            .run_scenario(&mut Command::new(scenario), &format!("{label} client"))
            .with_context(|| format!("old-client {label}: the released client failed"))?;
    }
    let labels: Vec<&str> = baselines.iter().map(|(label, _)| label.as_str()).collect();
    eprintln!(
        "old-client: the client scenario of {} passed against the current server",
        labels.join(", ")
    );
    Ok(())
}

/// The old tree's scenario, built once per release commit and toolchain and kept
/// ([`crate::kept`]: it depends on neither the current tree nor its `Cargo.lock`); the path of
/// its executable.
///
/// The scenario is built as the one binary of a scratch package beside the old tree, which
/// depends on nothing but the old tree's `appzone-client` (by path) and tokio, with the old
/// tree's `Cargo.lock`: the released client with the dependency versions its release fixed,
/// and none of the old workspace's dev-dependencies (its server, sqlx, Criterion), which
/// building the example inside the old workspace compiled every time. Its debug information is
/// what the workspace's own `[profile.dev]` keeps (line tables for the scenario, none for the
/// dependencies): full debug information for every dependency costs build time and disk the
/// scenario has no use for, and a failing scenario still prints its file and line.
///
/// Every release builds in one target directory, `target/compat-target/`, apart from the main
/// one: cargo judges path crates fresh by their sources' modification times, which `git
/// archive` sets to the (older) commit time, so in the main directory an old `appzone-client`
/// could pass for the current one. Within it each release's crates have their own version and
/// path, so their artifacts never collide, and the dependencies are built once for all.
fn build_scenario(root: &Path, label: &str, commit: &str) -> Result<PathBuf> {
    let safe = path_safe(label);
    // Named after the release, so two releases' binaries do not overwrite each other.
    let name = format!("compat_scenario_{}", safe.replace(['.', '-'], "_"));
    // The released client's own version, so the scenario's "ok" line names it (the scratch
    // package's version is what `CARGO_PKG_VERSION` says there).
    let at_commit = |file: &str| {
        stdout_of(
            git(root).args(["show", &format!("{commit}:{file}")]),
            GIT_TIMEOUT,
        )
        .unwrap_or_default()
    };
    let (client, workspace) = (
        at_commit("crates/client/Cargo.toml"),
        at_commit("Cargo.toml"),
    );
    let version = package_version(&client)
        .or_else(|| workspace_version(&workspace))
        .unwrap_or("0.0.0")
        .to_owned();
    // Paths relative to the scratch package (`target/compat/<release>-scenario/`), so the
    // manifest, and with it what the kept binary was built from, is the same wherever the
    // target directory is.
    let manifest = format!(
        "# Written by `cargo xtask old-client`: the released client's scenario, alone.\n\
         [package]\nname = \"{}\"\nversion = \"{version}\"\nedition = \"2021\"\npublish = false\n\n\
         [[bin]]\nname = \"{name}\"\npath = \"../{safe}/{SCENARIO}\"\n\n\
         [dependencies]\nappzone-client = {{ path = \"../{safe}/crates/client\" }}\n\
         tokio = {{ version = \"1\", features = [\"macros\", \"rt\", \"time\"] }}\n\n\
         [profile.dev]\ndebug = \"line-tables-only\"\n\n\
         [profile.dev.package.\"*\"]\ndebug = false\n\n\
         [workspace]\n",
        name.replace('_', "-"),
    );
    let inputs = format!(
        "release commit {commit}\n{}\n{manifest}",
        crate::kept::toolchain()?
    );
    let kept = crate::kept::filled(&format!("old-client-{safe}"), &inputs, |kept| {
        let compat = crate::target_dir().join("compat");
        let tree = compat.join(&safe);
        extract(root, commit, &tree, FileTimes::Commit)?;
        ensure!(
            tree.join(SCENARIO).is_file(),
            "{label} (commit {commit}) has no {SCENARIO}: the old-client scenario was added \
             after it, so this version cannot be checked"
        );
        let package = compat.join(format!("{safe}-scenario"));
        crate::fresh_dir(&package)?;
        std::fs::write(package.join("Cargo.toml"), &manifest)
            .with_context(|| format!("cannot write {}", package.display()))?;
        std::fs::copy(tree.join("Cargo.lock"), package.join("Cargo.lock"))
            .with_context(|| format!("{label} has no Cargo.lock"))?;
        let target = crate::target_dir().join("compat-target");
        // Not --locked: cargo drops from the copied lock file what the scratch package does
        // not use and adds the package itself; the versions it keeps are the release's.
        run_bounded(
            cargo()
                .args(["build", "--manifest-path"])
                .arg(package.join("Cargo.toml"))
                .env("CARGO_TARGET_DIR", &target),
            BUILD_TIMEOUT,
        )?;
        let built = target.join("debug").join(&name);
        std::fs::copy(&built, kept.join(&name))
            .with_context(|| format!("the build made no {}", built.display()))?;
        Ok(())
    })?;
    Ok(kept.join(&name))
}

/// The modification times `extract` gives the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileTimes {
    /// The commit's, as `git archive` records them.
    Commit,
    /// The time of extraction (`tar --touch`): older artifacts under the same crate names and
    /// versions, in a target directory shared with other trees, never pass for fresh.
    Now,
}

/// `git archive <commit> | tar -x` into a fresh `dir` (through a file: both are bounded).
pub(crate) fn extract(root: &Path, commit: &str, dir: &Path, times: FileTimes) -> Result<()> {
    crate::fresh_dir(dir)?;
    // Beside the directory, not `with_extension` (which would eat the `.0` of `v1.0.0`).
    let mut archive = dir.as_os_str().to_owned();
    archive.push(".tar");
    let archive = PathBuf::from(archive);
    run_bounded(
        Command::new("git")
            .args(["archive", "--format=tar", "--output"])
            .arg(&archive)
            .arg(commit)
            .current_dir(root),
        GIT_TIMEOUT,
    )?;
    let mut tar = Command::new("tar");
    tar.arg("-xf").arg(&archive).arg("-C").arg(dir);
    if times == FileTimes::Now {
        tar.arg("--touch");
    }
    let extracted = run_bounded(&mut tar, GIT_TIMEOUT);
    let _ = std::fs::remove_file(&archive);
    extracted
}

// ---------------------------------------------------------------------------------------------
// Releases and their commits

/// The released versions (`release/<version>/openapi.json`), oldest first.
pub(crate) fn releases(root: &Path) -> Result<Vec<String>> {
    let dir = root.join("release");
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(err).with_context(|| format!("cannot read {}", dir.display())),
    };
    let mut versions = Vec::new();
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read {}", dir.display()))?;
        if entry.path().join("openapi.json").is_file() {
            versions.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    versions.sort_by_cached_key(|version| version_key(version));
    Ok(versions)
}

/// Orders versions such as `v1.10.0` after `v1.9.0`, and `v2.0.0-rc.1` before `v2.0.0`.
fn version_key(version: &str) -> (Vec<u64>, bool, String) {
    let version = version.strip_prefix('v').unwrap_or(version);
    let (core, pre) = match version.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (version, None),
    };
    let numbers = core.split('.').map(|n| n.parse().unwrap_or(0)).collect();
    (numbers, pre.is_none(), pre.unwrap_or_default().to_owned())
}

/// The variable that overrides the release commit of `version`.
fn commit_variable(version: &str) -> String {
    let name: String = version
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("APPZONE_RELEASE_COMMIT_{name}")
}

/// The commit of a release: `APPZONE_RELEASE_COMMIT_<VERSION>` when set, else the commit that
/// added `release/<version>/openapi.json`.
pub(crate) fn release_commit(root: &Path, version: &str) -> Result<String> {
    let variable = commit_variable(version);
    if let Some(rev) = std::env::var(&variable).ok().filter(|rev| !rev.is_empty()) {
        eprintln!("release {version}: commit from {variable}={rev}");
        return resolve(root, &rev);
    }
    let shallow = stdout_of(
        git(root).args(["rev-parse", "--is-shallow-repository"]),
        GIT_TIMEOUT,
    )?;
    ensure!(
        shallow.trim() != "true",
        "this is a shallow clone, where the commit that added release/{version}/openapi.json \
         cannot be told: `git fetch --unshallow` first"
    );
    let file = format!("release/{version}/openapi.json");
    let added = stdout_of(
        git(root).args(["log", "--diff-filter=A", "--format=%H", "--", &file]),
        GIT_TIMEOUT,
    )?;
    // Newest first: the last line is the commit that first added it.
    match added.lines().map(str::trim).rfind(|line| !line.is_empty()) {
        Some(commit) => Ok(commit.to_owned()),
        None => bail!(
            "{file} is not committed, so release {version} has no release commit (the commit \
             that added it); commit it, or set {variable} to the release's commit (or pass --baseline-rev)"
        ),
    }
}

/// The full hash of the commit `rev` names.
pub(crate) fn resolve(root: &Path, rev: &str) -> Result<String> {
    let out = stdout_of(
        git(root).args([
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ]),
        GIT_TIMEOUT,
    )
    .with_context(|| format!("{rev:?} names no commit of this repository"))?;
    let commit = out.trim();
    ensure!(
        !commit.is_empty(),
        "{rev:?} names no commit of this repository"
    );
    Ok(commit.to_owned())
}

/// The `version` of `[workspace.package]` in a workspace's Cargo.toml (the crates inherit it).
pub(crate) fn workspace_version(manifest: &str) -> Option<&str> {
    section_version(manifest, "[workspace.package]")
}

/// The `version = "..."` of a crate's own `[package]` (none when it inherits the workspace's).
pub(crate) fn package_version(manifest: &str) -> Option<&str> {
    section_version(manifest, "[package]")
}

/// The literal `version = "..."` of `section` in a manifest.
fn section_version<'a>(manifest: &'a str, section: &str) -> Option<&'a str> {
    let mut in_section = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == section;
        } else if let Some(value) = line.strip_prefix("version").filter(|_| in_section) {
            let value = value.trim_start().strip_prefix('=')?.trim();
            return value.strip_prefix('"')?.split('"').next();
        }
    }
    None
}

pub(crate) fn git(root: &Path) -> Command {
    let mut command = Command::new("git");
    command.current_dir(root);
    command
}

/// `label` as one path component: letters, digits, `.`, `-` and `_` kept, the rest `_`.
pub(crate) fn path_safe(label: &str) -> String {
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    match safe.trim_matches('.') {
        "" => "_".to_owned(),
        _ => safe,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn versions_sort_by_number_with_pre_releases_first() {
        let mut versions = vec!["v1.10.0", "v1.9.0", "v2.0.0", "v2.0.0-rc.1", "v1.0.0"];
        versions.sort_by_cached_key(|v| version_key(v));
        assert_eq!(
            versions,
            ["v1.0.0", "v1.9.0", "v1.10.0", "v2.0.0-rc.1", "v2.0.0"]
        );
    }

    #[test]
    fn the_override_variable_and_the_directory_are_named_after_the_version() {
        assert_eq!(commit_variable("v1.0.0"), "APPZONE_RELEASE_COMMIT_V1_0_0");
        assert_eq!(
            commit_variable("v0.0.0-test"),
            "APPZONE_RELEASE_COMMIT_V0_0_0_TEST"
        );
        assert_eq!(path_safe("v1.0.0"), "v1.0.0");
        assert_eq!(path_safe("HEAD~1"), "HEAD_1");
        assert_eq!(path_safe("origin/main"), "origin_main");
        assert_eq!(path_safe(".."), "_");
    }

    /// A scratch repository: the release commit is the one that added the document, not a
    /// later one that changed it, and an uncommitted release has none.
    #[test]
    fn the_release_commit_is_the_one_that_added_the_document() {
        let root = std::env::temp_dir().join(format!("xtask-release-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("release/v1.0.0")).unwrap();
        let git_ok = |args: &[&str]| {
            let status = git(&root)
                .args([
                    "-c",
                    "user.name=xtask",
                    "-c",
                    "user.email=xtask@example.invalid",
                ])
                .args(["-c", "commit.gpgsign=false"])
                .args(args)
                .status()
                .unwrap();
            assert!(status.success(), "git {args:?}");
        };
        let head = || resolve(&root, "HEAD").unwrap();
        git_ok(&["init", "-q"]);
        std::fs::write(root.join("README"), "before").unwrap();
        git_ok(&["add", "README"]);
        git_ok(&["commit", "-q", "-m", "before the release"]);
        std::fs::write(root.join("release/v1.0.0/openapi.json"), "{}").unwrap();
        let uncommitted = release_commit(&root, "v1.0.0").unwrap_err().to_string();
        assert!(uncommitted.contains("is not committed"), "{uncommitted}");
        assert!(
            uncommitted.contains("APPZONE_RELEASE_COMMIT_V1_0_0"),
            "{uncommitted}"
        );
        git_ok(&["add", "release"]);
        git_ok(&["commit", "-q", "-m", "release v1.0.0"]);
        let release = head();
        std::fs::write(root.join("release/v1.0.0/openapi.json"), "{ }").unwrap();
        git_ok(&["commit", "-q", "-a", "-m", "an edit after the release"]);
        assert_ne!(head(), release);
        assert_eq!(release_commit(&root, "v1.0.0").unwrap(), release);
        assert_eq!(release.len(), 40);
        assert!(resolve(&root, "no-such-rev").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn releases_are_the_directories_with_an_openapi_json() {
        let root = std::env::temp_dir().join(format!("xtask-releases-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        assert!(releases(&root).unwrap().is_empty());
        for (dir, with_document) in [("v1.10.0", true), ("v1.9.0", true), ("notes", false)] {
            let dir = root.join("release").join(dir);
            std::fs::create_dir_all(&dir).unwrap();
            if with_document {
                std::fs::write(dir.join("openapi.json"), "{}").unwrap();
            }
        }
        assert_eq!(releases(&root).unwrap(), ["v1.9.0", "v1.10.0"]);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

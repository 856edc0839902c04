//! Developer tasks: `cargo xtask <task>`. Run `cargo xtask help` for the list.
//!
//! Tasks shell out to cargo and npx; they never need a running server or database, except the
//! test suite, which finds PostgreSQL through `APPZONE_TEST_POSTGRES_URL` when it is set.

mod bench;
mod browser;
mod clients;
mod compat;
mod demo_server;
mod deny;
mod deploy;
mod http;
mod image;
mod msrv;
mod process;
mod release;
mod semver;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser, Subcommand};

use crate::process::{cargo, run};

/// Developer tasks of the appzone workspace.
///
/// Tasks shell out to cargo and npx; they never need a running server or database, except the
/// test suite, which finds PostgreSQL through APPZONE_TEST_POSTGRES_URL when it is set.
#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    subcommand_value_name = "TASK",
    subcommand_help_heading = "Tasks"
)]
struct Cli {
    #[command(subcommand)]
    task: Option<Task>,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Regenerate openapi.json from the contract crate
    Openapi {
        /// Only check: fail if openapi.json differs from the contract crate
        #[arg(long)]
        check: bool,
    },
    /// Fail when openapi.json breaks a released v1 document (release/*/openapi.json): the
    /// compatibility rules of docs/API.md
    ApiCompat,
    /// Lint openapi.json with Redocly CLI and Spectral (OpenAPI and OWASP rulesets,
    /// lint/.spectral.yaml), installed from npm if needed
    LintSpec,
    /// Supply-chain checks with cargo-deny (licenses, bans, sources, advisories)
    Deny,
    /// Generate Python and TypeScript clients from openapi.json and run their scenario against
    /// the real server, run the Postman collection converted from it with newman, and check the
    /// server's answers through Prism, a validating proxy (needs python3, npm)
    Clients,
    /// Drive the /docs page in headless Chromium (needs chromium, npm)
    Browser,
    /// Check the crates with the oldest Rust each declares (rust-version); skipped with a
    /// notice when that toolchain is not installed
    Msrv,
    /// Load benchmarks against a release build (see BENCHMARKS.md)
    ///
    /// Everything runs over 127.0.0.1, driven by wrk. Needs wrk (Debian/Ubuntu: `sudo apt-get
    /// install -y wrk`) and the sqlite3 CLI; the PostgreSQL delete scenario also needs psql and
    /// a reachable server. A value given explicitly wins over the defaults of --quick and
    /// --listing-only.
    Bench(bench::BenchArgs),
    /// The speed guard: instructions per zone listing under callgrind, appzone against the bare
    /// axum route; fails when appzone's exceed a ceiling times the bare route's (needs valgrind
    /// and wrk; skipped with a notice without them)
    Instructions,
    /// Build the container image (static binary, FROM scratch; needs podman); with --check,
    /// also run it as a platform would and report its size and start-up time
    Image(image::ImageArgs),
    /// Check deploy/ offline: the Kubernetes manifests against the Kubernetes schemas
    /// (kubernetes-validate, from PyPI), the Prometheus alerting rules and their unit tests
    /// (promtool), the systemd unit (systemd-analyze verify, and its security exposure at most
    /// a threshold); each skipped with a notice where its tool is missing
    DeployCheck,
    /// Run the client scenario of each released version (release/*/openapi.json), built from
    /// its release commit, against a fresh server built from this tree
    ///
    /// The scenario is crates/client/examples/compat_scenario.rs of the release's tree,
    /// extracted with `git archive` under target/compat/<version>/.
    ///
    /// The release commit of a version is the commit that added its release/<version>/openapi.json
    /// (APPZONE_RELEASE_COMMIT_<VERSION> overrides it, such as APPZONE_RELEASE_COMMIT_V1_0_0).
    OldClient(release::OldClientArgs),
    /// Check with cargo-semver-checks that appzone-contract and appzone-client keep the public
    /// API of the newest release (skipped with a notice when the tool is not installed)
    ///
    /// The baseline is the release commit of the newest release/<version>/openapi.json (the
    /// commit that added it; APPZONE_RELEASE_COMMIT_<VERSION> overrides it).
    SemverChecks(semver::SemverArgs),
    /// Everything CI runs: fmt, clippy, tests, docs, openapi --check, api-compat,
    /// semver-checks, old-client, instructions, lint-spec, clients, browser, image --check,
    /// deploy-check, deny, msrv
    Ci,
}

/// Redocly CLI version used by `lint-spec`; pinned so the lint result does not change under us.
const REDOCLY: &str = "@redocly/cli@2.77.0";

fn main() -> ExitCode {
    let result = match Cli::parse().task {
        None => Cli::command().print_help().context("cannot print the help"),
        Some(task) => run_task(task),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_task(task: Task) -> Result<()> {
    match task {
        Task::Openapi { check } => openapi(check),
        Task::ApiCompat => compat::run(),
        Task::LintSpec => lint_spec(),
        Task::Deny => deny::run(),
        Task::Msrv => msrv::run(),
        Task::Clients => clients::run(),
        Task::Browser => browser::run(),
        Task::Bench(args) => bench::run(args),
        Task::Instructions => bench::instruction_guard(),
        Task::Image(args) => image::run_task(args),
        Task::DeployCheck => deploy::check(),
        Task::OldClient(args) => release::old_client(args),
        Task::SemverChecks(args) => semver::semver_checks(args),
        Task::Ci => ci(),
    }
}

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn openapi(check: bool) -> Result<()> {
    let path = root().join("openapi.json");
    let fresh = appzone_contract::openapi::document_json();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == fresh {
        println!("openapi.json is up to date");
        return Ok(());
    }
    if check {
        bail!(
            "openapi.json is stale: the contract crate changed. Run `cargo xtask openapi` and \
             commit openapi.json."
        );
    }
    std::fs::write(&path, fresh).with_context(|| format!("cannot write {}", path.display()))?;
    println!("wrote {}", path.display());
    Ok(())
}

/// Cargo's target directory: `CARGO_TARGET_DIR` (relative to the repository root when it is
/// relative) or `target/`.
pub(crate) fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => PathBuf::from(dir),
        Some(dir) => root().join(dir),
        None => root().join("target"),
    }
}

/// The JSON document in the file at `path`.
pub(crate) fn read_json(path: &Path) -> Result<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))
}

/// Makes `dir` a fresh, empty directory (removing it first, with what it holds).
pub(crate) fn fresh_dir(dir: &Path) -> Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
            Err(err).with_context(|| format!("cannot clear {}", dir.display()))
        }
        _ => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
        }
    }
}

/// Lints `openapi.json` with Redocly's recommended rules, then with Spectral's OpenAPI and OWASP
/// rulesets (`lint/.spectral.yaml`, versions pinned by `lint/package-lock.json`). Any finding
/// fails.
fn lint_spec() -> Result<()> {
    run(Command::new("npx").args([
        "--yes",
        REDOCLY,
        "lint",
        "--format",
        "stylish",
        "--max-problems",
        "200",
        "openapi.json",
    ]))?;
    // Spectral resolves the OWASP ruleset from node_modules beside the ruleset file, so the
    // three files are copied under target/ and installed there (again only when they change).
    let source = root().join("lint");
    let dir = target_dir().join("lint");
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut changed = false;
    for file in ["package.json", "package-lock.json", ".spectral.yaml"] {
        let fresh =
            std::fs::read(source.join(file)).with_context(|| format!("cannot read lint/{file}"))?;
        if std::fs::read(dir.join(file)).ok().as_ref() != Some(&fresh) {
            std::fs::write(dir.join(file), fresh)
                .with_context(|| format!("cannot write target/lint/{file}"))?;
            changed = true;
        }
    }
    let spectral = dir.join("node_modules").join(".bin").join("spectral");
    if changed || !spectral.exists() {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir))?;
    }
    run(Command::new(&spectral)
        .arg("lint")
        .arg("--ruleset")
        .arg(dir.join(".spectral.yaml"))
        .args([
            "--fail-severity",
            "hint",
            "--format",
            "text",
            "openapi.json",
        ]))
}

fn ci() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--check"]))?;
    run(cargo().args([
        "clippy",
        "--workspace",
        "--all-targets",
        "--locked",
        "--",
        "-D",
        "warnings",
    ]))?;
    test()?;
    // The published crates' docs with warnings denied: broken links fail CI. All features, so
    // the `appzone` command line's docs (feature `cli`) are checked too.
    run(cargo()
        .args(["doc", "--no-deps", "--locked", "--all-features"])
        .args([
            "-p",
            "appzone-contract",
            "-p",
            "appzone-server",
            "-p",
            "appzone-client",
            "-p",
            "appzone-conformance",
            "-p",
            "appzone-cli",
        ])
        .env("RUSTDOCFLAGS", "-D warnings"))?;
    openapi(true)?;
    compat::run()?;
    semver::semver_checks(semver::SemverArgs::default())?;
    release::old_client(release::OldClientArgs::default())?;
    bench::instruction_guard()?;
    lint_spec()?;
    clients::run()?;
    browser::run()?;
    image::run_task(image::ImageArgs::check())?;
    deploy::check()?;
    deny::run()?;
    msrv::run()?;
    println!("ci: all checks passed");
    Ok(())
}

/// The workspace's tests. PostgreSQL tests are marked ignored, so a run without PostgreSQL
/// reports them as ignored rather than as passed; with `APPZONE_TEST_POSTGRES_URL` set they
/// are selected (`--include-ignored`), and under CI it must be set.
fn test() -> Result<()> {
    let postgres = std::env::var("APPZONE_TEST_POSTGRES_URL").is_ok_and(|url| !url.is_empty());
    if postgres {
        return run(cargo().args(["test", "--workspace", "--locked", "--", "--include-ignored"]));
    }
    let how = "set APPZONE_TEST_POSTGRES_URL to a database the tests may create schemas in, \
               e.g. postgres://postgres@127.0.0.1:5432/test";
    if process::under_ci() {
        bail!("test: the PostgreSQL tests are required under CI: {how}");
    }
    run(cargo().args(["test", "--workspace", "--locked"]))?;
    eprintln!("test: SKIPPED the PostgreSQL tests (listed above as ignored): to run them, {how}");
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The command lines the README, the guides in docs/, BENCHMARKS.md and `.ci/run` use keep
    /// parsing. (`crates/server/tests/integration/readme.rs` also reads this list, as `["task"`,
    /// to check that every task the README and the guides name exists.)
    #[test]
    fn the_documented_command_lines_parse() {
        let documented: &[&[&str]] = &[
            &["ci"],
            &["openapi"],
            &["openapi", "--check"],
            &["lint-spec"],
            &["clients"],
            &["browser"],
            &["msrv"],
            &["deny"],
            &["instructions"],
            &["image"],
            &["image", "--check"],
            &["deploy-check"],
            &["old-client"],
            &["old-client", "--baseline-rev", "HEAD"],
            &["semver-checks"],
            &["semver-checks", "--baseline-rev", "HEAD"],
            &["bench"],
            &["bench", "--quick"],
            &["bench", "--listing-only", "--rounds", "5"],
            &["bench", "--replicas", "--rounds", "3", "--duration", "5"],
            &[
                "bench",
                "--rounds",
                "3",
                "--duration",
                "5",
                "--no-client",
                "--no-postgres",
                "--callgrind",
            ],
            &[
                "bench",
                "--quick",
                "--rounds",
                "5",
                "--duration",
                "4",
                "--no-client",
                "--no-postgres",
            ],
            &["bench", "--listing-only", "--callgrind"],
            &["bench", "--callgrind"],
            &[
                "bench",
                "--rounds",
                "5",
                "--duration",
                "5",
                "--long-requests",
                "0",
                "--no-postgres",
                "--no-client",
            ],
        ];
        for line in documented {
            let parsed = Cli::try_parse_from(std::iter::once("xtask").chain(line.iter().copied()));
            assert!(parsed.is_ok(), "{line:?}: {parsed:?}");
        }
        for help in [["help"], ["--help"], ["-h"]] {
            let err = Cli::try_parse_from(std::iter::once("xtask").chain(help)).unwrap_err();
            assert_eq!(err.kind(), clap::error::ErrorKind::DisplayHelp, "{help:?}");
        }
        assert!(Cli::try_parse_from(["xtask", "no-such-task"]).is_err());
        Cli::command().debug_assert();
    }
}

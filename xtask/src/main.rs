//! Developer tasks: `cargo xtask <task>`. Run `cargo xtask help` for the list.
//!
//! Tasks shell out to cargo and npx; they never need a running server or database, except the
//! test suite, which finds PostgreSQL through `APPZONE_TEST_POSTGRES_URL` when it is set.

mod bench;
mod browser;
mod build;
mod clients;
mod demo_server;
mod deny;
mod deploy;
mod http;
mod image;
mod kept;
mod msrv;
mod process;
mod release;
mod semver;
mod source_times;

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
    ///
    /// A test (`openapi_json_is_up_to_date`, run by `check` and `ci`) fails when the file
    /// drifts from the crate; `--check` asks the same question alone.
    Openapi {
        /// Only check: fail if openapi.json differs from the contract crate (write nothing)
        #[arg(long)]
        check: bool,
    },
    /// Fail when openapi.json breaks a released v1 document (release/*/openapi.json): the
    /// compatibility rules of docs/API.md (the contract's test `compat`, which `check` and
    /// `ci` run with the others)
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
    /// Drive the /docs page in headless Chromium (needs chromium, Node.js 20.19+ with npm)
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
    /// The inner loop (about 2 minutes on a warm tree): fmt, clippy, and the tests on SQLite
    /// (contract, server, client side); a subset of `ci`
    Check,
    /// Everything CI runs: fmt, clippy, tests (PostgreSQL too), docs, the shared release build,
    /// instructions, old-client, clients, browser, image --check; beside them lint-spec,
    /// deploy-check, deny, then semver-checks and msrv; a table of step times at the end
    Ci,
    /// One side lane of `ci` (`checks` or `toolchains`), which `ci` starts itself
    #[command(hide = true)]
    CiLane {
        /// `checks` or `toolchains`
        lane: String,
    },
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
        Task::ApiCompat => {
            run(cargo().args("test --locked -p appzone-contract --test compat".split(' ')))
        }
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
        Task::Check => check(),
        Task::Ci => ci(),
        Task::CiLane { lane } => ci_lane(&lane),
    }
}

/// The checkout `cargo xtask` runs in: the parent of the manifest directory `cargo run` names
/// (the one this binary was built from when run by hand). Not the built-in one alone: two
/// checkouts sharing a target directory (the CI cache) share this binary, and cargo may find
/// it fresh for the second, which would then check the first one's files.
pub(crate) fn root() -> PathBuf {
    let manifest_dir = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn openapi(check: bool) -> Result<()> {
    let path = root().join("openapi.json");
    let fresh = appzone_contract::openapi::document_json();
    if std::fs::read_to_string(&path).is_ok_and(|current| current == fresh) {
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
    run(Command::new("npx")
        .args(["--yes", REDOCLY])
        .args("lint --format stylish --max-problems 200 openapi.json".split(' ')))?;
    // Spectral resolves the OWASP ruleset from node_modules beside the ruleset file, so the
    // three files are copied under target/ and installed there.
    let dir = target_dir().join("lint");
    let files = ["package.json", "package-lock.json", ".spectral.yaml"];
    crate::kept::npm_project(&root().join("lint"), &dir, &files)?;
    let spectral = dir.join("node_modules").join(".bin").join("spectral");
    run(Command::new(&spectral)
        .arg("lint")
        .arg("--ruleset")
        .arg(dir.join(".spectral.yaml"))
        .args("--fail-severity hint --format text openapi.json".split(' ')))
}

/// Everything CI runs, in lanes. The main lane holds what needs both cores (compiling, the test
/// suite, the instruction guard) and, once those are done, the tasks that mostly wait (the old
/// clients, generated clients, the browser, the image); a side process runs the checks that
/// need no build of their own (spec linters, deploy files, supply chain) from the start, and
/// another the toolchain checks (semver-checks, MSRV) next to the waiting tasks. Each side lane
/// writes a log under `target/ci/`, printed when it is joined.
fn ci() -> Result<()> {
    let mut steps = Steps::default();
    let checks = Lane::start("checks")?;
    steps.run("fmt", fmt_check)?;
    steps.run("clippy", clippy)?;
    steps.run("test", || test(true))?;
    // The published crates' docs with warnings denied: broken links fail CI.
    steps.run("doc", || {
        let mut doc = cargo();
        doc.args(["doc", "--no-deps", "--locked", "--all-features"]);
        for package in semver::DOCUMENTED {
            doc.args(["-p", package]);
        }
        run(doc.env("RUSTDOCFLAGS", "-D warnings"))
    })?;
    // The one release build the following steps share (build.rs).
    steps.run("release build", || build::release().map(drop))?;
    // Alone on the machine: a compiler next to it would change how requests batch, and so the
    // instructions per request.
    steps.run("instructions", bench::instruction_guard)?;
    let toolchains = Lane::start("toolchains")?;
    steps.run("old-client", || {
        release::old_client(release::OldClientArgs::default())
    })?;
    steps.run("clients", clients::run)?;
    steps.run("browser", browser::run)?;
    steps.run("image --check", || {
        image::run_task(image::ImageArgs::check())
    })?;
    steps.join(checks)?;
    steps.join(toolchains)?;
    steps.report();
    println!("ci: all checks passed");
    Ok(())
}

/// The steps of a side lane (`cargo xtask ci-lane <name>`).
fn ci_lane(name: &str) -> Result<()> {
    let mut steps = Steps::default();
    match name {
        "checks" => {
            steps.run("lint-spec", lint_spec)?;
            steps.run("deploy-check", deploy::check)?;
            steps.run("deny", deny::run)?;
        }
        "toolchains" => {
            steps.run("semver-checks", || {
                semver::semver_checks(semver::SemverArgs::default())
            })?;
            steps.run("msrv", msrv::run)?;
        }
        _ => bail!("no CI lane {name:?}"),
    }
    steps.report();
    Ok(())
}

/// A side lane: this program again, as `ci-lane <name>`, its output in `target/ci/<name>.log`.
struct Lane {
    name: &'static str,
    log: PathBuf,
    child: std::process::Child,
    started: std::time::Instant,
}

impl Lane {
    fn start(name: &'static str) -> Result<Self> {
        let dir = target_dir().join("ci");
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let log = dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = file.try_clone().context("cannot share the lane's log")?;
        let exe = std::env::current_exe().context("cannot find this program")?;
        let child = Command::new(exe)
            .args(["ci-lane", name])
            .stdin(std::process::Stdio::null())
            .stdout(file)
            .stderr(err)
            .spawn()
            .with_context(|| format!("cannot start the CI lane {name}"))?;
        eprintln!("ci: lane `{name}` started, its output in {}", log.display());
        Ok(Self {
            name,
            log,
            child,
            started: std::time::Instant::now(),
        })
    }
}

/// `cargo fmt --check` over the workspace.
fn fmt_check() -> Result<()> {
    run(cargo().args(["fmt", "--all", "--check"]))
}

/// Clippy on every target of every crate, warnings denied.
fn clippy() -> Result<()> {
    run(cargo().args("clippy --workspace --all-targets --locked -- -D warnings".split(' ')))
}

/// The inner loop: formatting, clippy, and the tests of the contract, the server (on SQLite;
/// the PostgreSQL tests are reported as ignored) and the client side. A subset of `ci`.
fn check() -> Result<()> {
    let mut steps = Steps::default();
    steps.run("fmt", fmt_check)?;
    steps.run("clippy", clippy)?;
    steps.run("test", || test(false))?;
    steps.report();
    eprintln!(
        "check: passed; `cargo xtask ci` adds PostgreSQL, the docs, the spec and compatibility \
         checks, the release build and what runs against it"
    );
    Ok(())
}

/// The wall-clock time of each CI step, printed as a table at the end (and, for the steps run
/// so far, when one fails), so a slow step is seen where it happens.
struct Steps(Vec<(&'static str, std::time::Duration)>, std::time::Instant);

impl Default for Steps {
    fn default() -> Self {
        Self(Vec::new(), std::time::Instant::now())
    }
}

impl Steps {
    fn run(&mut self, name: &'static str, step: impl FnOnce() -> Result<()>) -> Result<()> {
        let started = std::time::Instant::now();
        let result = step();
        self.0.push((name, started.elapsed()));
        if result.is_err() {
            self.report();
        }
        result.with_context(|| format!("ci step `{name}`"))
    }

    /// Waits for a side lane, prints its log, and fails when it failed.
    fn join(&mut self, mut lane: Lane) -> Result<()> {
        let status = lane.child.wait().context("cannot wait for a CI lane")?;
        let log = std::fs::read_to_string(&lane.log).unwrap_or_default();
        eprintln!(
            "ci: ---- lane `{}` ----\n{log}ci: ---- end of lane `{}` ----",
            lane.name, lane.name
        );
        self.0.push((lane.name, lane.started.elapsed()));
        if !status.success() {
            self.report();
            bail!(
                "ci lane `{}` failed ({status}); its log is above and in {}",
                lane.name,
                lane.log.display()
            );
        }
        Ok(())
    }

    fn report(&self) {
        eprintln!("ci: step times (wall clock; a lane is the time from its start to its join)");
        for (name, took) in &self.0 {
            eprintln!("ci:   {name:<16} {:>7.1} s", took.as_secs_f64());
        }
        eprintln!(
            "ci:   {:<16} {:>7.1} s",
            "total",
            self.1.elapsed().as_secs_f64()
        );
    }
}

/// The fewest tests `test` runs at a time (see there).
const MIN_TEST_THREADS: usize = 4;

/// The workspace's tests. PostgreSQL tests are marked ignored, so a run without PostgreSQL
/// reports them as ignored rather than as passed. With `postgres` (CI) and
/// `APPZONE_TEST_POSTGRES_URL` set they are selected (`--include-ignored`); under CI it must
/// be set. The inner loop (`postgres` false) runs SQLite only.
///
/// At least four tests at a time (libtest's default, one per core, where there are more cores),
/// unless `RUST_TEST_THREADS` says otherwise: most of a test waits (on its servers, a timeout,
/// an outage, a lock), so one per core left two cores idle for much of the server's suite
/// (BENCHMARKS.md, "CI's own time"). Every test holds at four on two cores: one that did not
/// would be a test whose verdict depends on the load, a defect of its own.
fn test(postgres: bool) -> Result<()> {
    let url = std::env::var("APPZONE_TEST_POSTGRES_URL").is_ok_and(|url| !url.is_empty());
    let cargo_test = || {
        let mut command = cargo();
        command.args(["test", "--workspace", "--locked"]);
        if std::env::var_os("RUST_TEST_THREADS").is_none() {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            command.env("RUST_TEST_THREADS", cores.max(MIN_TEST_THREADS).to_string());
        }
        command
    };
    if postgres && url {
        return run(cargo_test().args(["--", "--include-ignored"]));
    }
    let how = "set APPZONE_TEST_POSTGRES_URL to a database the tests may create schemas in, \
               e.g. postgres://postgres@127.0.0.1:5432/test, and run `cargo xtask ci`";
    if postgres && process::under_ci() {
        bail!("test: the PostgreSQL tests are required under CI: {how}");
    }
    run(&mut cargo_test())?;
    eprintln!("test: SKIPPED the PostgreSQL tests (listed above as ignored): to run them, {how}");
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The command lines the README, the guides in docs/, BENCHMARKS.md and `.ci/run` use keep
    /// parsing. (`crates/server/tests/integration/readme.rs` also reads this list, as `"task`,
    /// to check that every task the README and the guides name exists.)
    #[test]
    fn the_documented_command_lines_parse() {
        let documented = [
            "ci",
            "check",
            "openapi",
            "openapi --check",
            "lint-spec",
            "clients",
            "browser",
            "msrv",
            "deny",
            "instructions",
            "image",
            "image --check",
            "deploy-check",
            "old-client",
            "old-client --baseline-rev HEAD",
            "semver-checks",
            "semver-checks --baseline-rev HEAD",
            "bench",
            "bench --quick",
            "bench --listing-only --rounds 5",
            "bench --replicas --rounds 3 --duration 5",
            "bench --rounds 3 --duration 5 --no-client --no-postgres --callgrind",
            "bench --quick --rounds 5 --duration 4 --no-client --no-postgres",
            "bench --listing-only --callgrind",
            "bench --callgrind",
            "bench --rounds 5 --duration 5 --long-requests 0 --no-postgres --no-client",
        ];
        for line in documented {
            let parsed = Cli::try_parse_from(std::iter::once("xtask").chain(line.split(' ')));
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

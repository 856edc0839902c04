//! Developer tasks: `cargo xtask <task>`. Run `cargo xtask help` for the list.
//!
//! Tasks shell out to cargo and npx; they never need a running server or database, except the
//! test suite, which finds PostgreSQL through `APPZONE_TEST_POSTGRES_URL` when it is set.

mod bench;
mod browser;
mod clients;
mod demo_server;
mod deny;
mod msrv;
mod process;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const HELP: &str = "\
cargo xtask <task>

Tasks:
  openapi            regenerate openapi.json from the contract crate
  openapi --check    fail if openapi.json differs from the contract crate
  lint-spec          lint openapi.json with Redocly CLI and Spectral (OpenAPI and OWASP
                     rulesets, lint/.spectral.yaml), installed from npm if needed
  deny               supply-chain checks with cargo-deny (licenses, bans, sources, advisories)
  clients            generate Python and TypeScript clients from openapi.json and run
                     their scenario against the real server (needs python3, npm)
  browser            drive the /docs page in headless Chromium (needs chromium, npm)
  msrv               check the crates with the oldest Rust each declares (rust-version);
                     skipped with a notice when that toolchain is not installed
  bench [ARGS]       load benchmarks against a release build (see BENCHMARKS.md)
  instructions       the speed guard: instructions per zone listing under callgrind,
                     appzone against the bare axum route; fails when appzone's are more
                     (needs valgrind and wrk; skipped with a notice without them)
  ci                 everything CI runs: fmt, clippy, tests, docs, openapi --check,
                     instructions, lint-spec, clients, browser, deny, msrv
";

/// Redocly CLI version used by `lint-spec`; pinned so the lint result does not change under us.
const REDOCLY: &str = "@redocly/cli@2.77.0";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["openapi"] => openapi(false),
        ["openapi", "--check"] => openapi(true),
        ["lint-spec"] => lint_spec(),
        ["deny"] => deny::run(),
        ["msrv"] => msrv::run(),
        ["clients"] => clients::run(),
        ["browser"] => browser::run(),
        ["bench", rest @ ..] => bench::run(rest),
        ["instructions"] => bench::instruction_guard(),
        ["ci"] => ci(),
        [] | ["help"] | ["--help"] | ["-h"] => {
            print!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown task {other:?}\n\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn openapi(check: bool) -> Result<(), String> {
    let path = root().join("openapi.json");
    let fresh = appzone_contract::openapi::document_json();
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current == fresh {
        println!("openapi.json is up to date");
        return Ok(());
    }
    if check {
        return Err(
            "openapi.json is stale: the contract crate changed. Run `cargo xtask openapi` and \
             commit openapi.json."
                .to_owned(),
        );
    }
    std::fs::write(&path, fresh).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
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

/// Runs a command in the repository root, echoing it first.
pub(crate) fn run(program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("$ {program} {}", args.join(" "));
    status_of(&root(), program, args)
}

/// Like [`run`], in another directory.
pub(crate) fn run_in(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    eprintln!("$ (cd {} && {program} {})", dir.display(), args.join(" "));
    status_of(dir, program, args)
}

fn status_of(dir: &Path, program: &str, args: &[&str]) -> Result<(), String> {
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("cannot start {program}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{program} {}` failed ({status})", args.join(" ")))
    }
}

/// Builds the published crates' docs with warnings denied: broken links fail CI.
fn docs(cargo: &str) -> Result<(), String> {
    let packages = [
        "-p",
        "appzone-contract",
        "-p",
        "appzone-server",
        "-p",
        "appzone-client",
    ];
    eprintln!(
        "$ RUSTDOCFLAGS='-D warnings' {cargo} doc --no-deps --locked {}",
        packages.join(" ")
    );
    let status = Command::new(cargo)
        .args(["doc", "--no-deps", "--locked"])
        .args(packages)
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(root())
        .status()
        .map_err(|e| format!("cannot start {cargo}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`cargo doc` failed ({status})"))
    }
}

/// Lints `openapi.json` with Redocly's recommended rules, then with Spectral's OpenAPI and OWASP
/// rulesets (`lint/.spectral.yaml`, versions pinned by `lint/package-lock.json`). Any finding
/// fails.
fn lint_spec() -> Result<(), String> {
    run(
        "npx",
        &[
            "--yes",
            REDOCLY,
            "lint",
            "--format",
            "stylish",
            "--max-problems",
            "200",
            "openapi.json",
        ],
    )?;
    // Spectral resolves the OWASP ruleset from node_modules beside the ruleset file, so the
    // three files are copied under target/ and installed there (again only when they change).
    let source = root().join("lint");
    let dir = target_dir().join("lint");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut changed = false;
    for file in ["package.json", "package-lock.json", ".spectral.yaml"] {
        let fresh = std::fs::read(source.join(file))
            .map_err(|e| format!("cannot read lint/{file}: {e}"))?;
        if std::fs::read(dir.join(file)).ok().as_ref() != Some(&fresh) {
            std::fs::write(dir.join(file), fresh)
                .map_err(|e| format!("cannot write target/lint/{file}: {e}"))?;
            changed = true;
        }
    }
    let spectral = dir.join("node_modules").join(".bin").join("spectral");
    if changed || !spectral.exists() {
        run_in(&dir, "npm", &["ci", "--no-audit", "--no-fund"])?;
    }
    let ruleset = dir.join(".spectral.yaml");
    run(
        &spectral.to_string_lossy(),
        &[
            "lint",
            "--ruleset",
            &ruleset.to_string_lossy(),
            "--fail-severity",
            "hint",
            "--format",
            "text",
            "openapi.json",
        ],
    )
}

fn ci() -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    run(&cargo, &["fmt", "--all", "--check"])?;
    run(
        &cargo,
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--locked",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    test(&cargo)?;
    docs(&cargo)?;
    openapi(true)?;
    bench::instruction_guard()?;
    lint_spec()?;
    clients::run()?;
    browser::run()?;
    deny::run()?;
    msrv::run()?;
    println!("ci: all checks passed");
    Ok(())
}

/// The workspace's tests. PostgreSQL tests are marked ignored, so a run without PostgreSQL
/// reports them as ignored rather than as passed; with `APPZONE_TEST_POSTGRES_URL` set they
/// are selected (`--include-ignored`), and under CI it must be set.
fn test(cargo: &str) -> Result<(), String> {
    let postgres = std::env::var("APPZONE_TEST_POSTGRES_URL").is_ok_and(|url| !url.is_empty());
    if postgres {
        return run(
            cargo,
            &["test", "--workspace", "--locked", "--", "--include-ignored"],
        );
    }
    let how = "set APPZONE_TEST_POSTGRES_URL to a database the tests may create schemas in, \
               e.g. postgres://postgres@127.0.0.1:5432/test";
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        return Err(format!(
            "test: the PostgreSQL tests are required under CI: {how}"
        ));
    }
    run(cargo, &["test", "--workspace", "--locked"])?;
    eprintln!("test: SKIPPED the PostgreSQL tests (listed above as ignored): to run them, {how}");
    Ok(())
}

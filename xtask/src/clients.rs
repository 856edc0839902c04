//! `cargo xtask clients`: Python and TypeScript clients generated from openapi.json, and a
//! Postman collection converted from it, run against the real server, and Prism validating
//! the server's answers against it.
//!
//! What a consumer in another language does, who only sees `openapi.json`: generate a client
//! with a well-kept generator, type-check it strictly together with a small program, and call
//! the service. Nothing generated is checked in; every run regenerates from the repository's
//! `openapi.json` into `target/clients/`:
//!
//! - Python: a venv with `clients/python/requirements.txt` (exact pins; installed once per
//!   version of that file, outside the build cache: `kept.rs`), `openapi-python-client` into
//!   `target/clients/python/generated`, then
//!   `mypy --strict` over `clients/python/scenario.py` and the generated package.
//! - TypeScript: `clients/typescript` copied to `target/clients/typescript`, `npm ci` from its
//!   lock file, `@hey-api/openapi-ts` (fetch client) into `generated/`, then `tsc` (strict).
//! - Postman: `clients/postman` copied to `target/clients/postman`, `npm ci` from its lock file,
//!   `openapi-to-postmanv2` converts the document (with `clients/postman/converter-options.json`:
//!   parameters from the document's examples) into `collection.json`, to which this task adds a
//!   test to every request: the status is one the document lists for that operation, and one
//!   of its 2xx (the examples name what the demo holds), with each folder's deletes moved last.
//!   `newman` runs it with only the variables `baseUrl` and `apiKey` (the admin key) set, as a
//!   portal reader would.
//! - Prism: `clients/prism` copied to `target/clients/prism`, `npm ci` from its lock file;
//!   `prism proxy --errors` in front of the server checks each answer of a list of cases against
//!   the document, after a control run that shows it refusing an answer outside it (`prism.rs`).
//!
//! The npm packages are installed once per lock file, outside the build cache (`kept.rs`), and
//! hard-linked in as `node_modules`.
//!
//! Then each scenario runs against a fresh `serve --demo` (one server per language and
//! backend: the scenario deletes the demo's deletable profile), on SQLite and, when
//! `APPZONE_TEST_POSTGRES_URL` is set, on a scratch PostgreSQL database.
//!
//! Where python3 (with venv) or node/npm is missing, or PostgreSQL is not configured, that part
//! is skipped with a notice saying how to get it; under CI (`CI=true`) that fails instead.
//! Every command runs under a time limit and is killed past it; servers die on drop.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::demo_server::{DemoServer, ScratchPostgres};

mod postman;
mod prism;
use crate::process::{output, path_arg, run_bounded, skip, tool_versions, version, PROBE_TIMEOUT};
use postman::{prepare_postman, run_newman};
use prism::{prepare_prism, run_prism};

/// `pip install` (network).
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);
/// Generating and type-checking.
const CHECK_TIMEOUT: Duration = Duration::from_secs(300);

/// The oldest Node that `@hey-api/openapi-ts` (see clients/typescript/package.json) supports.
const MIN_NODE: (u32, u32) = (20, 19);

pub fn run() -> Result<()> {
    let mut skipped = Vec::new();
    let mut languages = Vec::new();
    match python_missing() {
        Some(why) => skipped.push(format!("Python: {why}")),
        None => languages.push(Language::Python),
    }
    match node_missing() {
        Some(why) => {
            skipped.push(format!("TypeScript: {why}"));
            skipped.push(format!("Postman: {why}"));
            skipped.push(format!("Prism: {why}"));
        }
        None => {
            languages.push(Language::TypeScript);
            languages.push(Language::Postman);
            languages.push(Language::Prism);
        }
    }
    let postgres = std::env::var("APPZONE_TEST_POSTGRES_URL")
        .ok()
        .filter(|url| !url.is_empty());
    if postgres.is_none() {
        skipped.push(
            "the PostgreSQL half: APPZONE_TEST_POSTGRES_URL is not set; point it at a database \
             the user may create databases next to, e.g. \
             postgres://postgres@127.0.0.1:5432/test (needs `psql`: `apt-get install \
             postgresql-client`)"
                .to_owned(),
        );
    }
    for why in &skipped {
        skip(&format!("clients: SKIPPED ({why})"))?;
    }
    if languages.is_empty() {
        return Ok(());
    }

    let work = crate::target_dir().join("clients");
    let mut failures = Vec::new();
    let mut ready = Vec::new();
    for language in languages {
        match language.prepare(&work) {
            Ok(()) => ready.push(language),
            Err(e) => {
                eprintln!("clients: {}: {e:#}", language.name());
                failures.push(format!("{}: {e:#}", language.name()));
            }
        }
    }

    let mut results = Vec::new();
    if !ready.is_empty() {
        let binary = crate::build::release()?.server();
        let mut backends = vec![Backend::Sqlite];
        if let Some(url) = postgres {
            backends.push(Backend::Postgres(url));
        }
        for backend in &backends {
            for language in &ready {
                let label = format!("{} on {}", language.name(), backend.name());
                eprintln!("clients: --- {label} ---");
                let outcome = run_scenario(*language, backend, &binary, &work);
                if let Err(e) = &outcome {
                    failures.push(format!("{label}: {e:#}"));
                }
                results.push((label, outcome));
            }
        }
    }

    eprintln!("clients: summary");
    for (label, outcome) in &results {
        match outcome {
            Ok(()) => eprintln!("  {label}: passed"),
            Err(e) => eprintln!("  {label}: FAILED ({e:#})"),
        }
    }
    for why in &skipped {
        eprintln!("  SKIPPED {why}");
    }
    if failures.is_empty() {
        eprintln!("clients: all scenarios passed");
        Ok(())
    } else {
        bail!("clients failed:\n  {}", failures.join("\n  "))
    }
}

#[derive(Clone, Copy, Debug)]
enum Language {
    Python,
    TypeScript,
    Postman,
    Prism,
}

impl Language {
    fn name(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::TypeScript => "typescript",
            Language::Postman => "postman",
            Language::Prism => "prism",
        }
    }

    /// Installs the tools, generates the client and type-checks it with the scenario (for
    /// Postman: converts the document into a collection and adds its tests).
    fn prepare(self, work: &Path) -> Result<()> {
        match self {
            Language::Python => prepare_python(work),
            Language::TypeScript => prepare_typescript(work),
            Language::Postman => prepare_postman(work),
            Language::Prism => prepare_prism(work),
        }
    }
}

#[derive(Debug)]
enum Backend {
    Sqlite,
    Postgres(String),
}

impl Backend {
    fn name(&self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }
}

/// Starts a fresh demo server on `backend` and runs one language's scenario against it.
fn run_scenario(language: Language, backend: &Backend, binary: &Path, work: &Path) -> Result<()> {
    // Declared before the server, so the server (dropped first) lets go of the database first.
    let postgres;
    let server = match backend {
        Backend::Sqlite => DemoServer::sqlite(binary, &format!("clients-{}", language.name()))?,
        Backend::Postgres(admin_url) => {
            postgres = ScratchPostgres::create(admin_url, &format!("clients_{}", language.name()))?;
            DemoServer::start(binary, &postgres.url)?
        }
    };
    eprintln!("clients: demo server at {}", server.base_url);
    let mut command = match language {
        Language::Python => {
            let mut command = Command::new(python_venv()?.join("bin").join("python"));
            command
                .arg(path_arg(&crate::root().join("clients/python/scenario.py")))
                .env("PYTHONPATH", work.join("python").join("generated"))
                .env("PYTHONDONTWRITEBYTECODE", "1");
            command
        }
        Language::TypeScript => {
            let mut command = Command::new("node");
            command.arg(path_arg(&work.join("typescript/out/scenario.js")));
            command
        }
        // These two run no program of their own against the server; it stops on return.
        Language::Postman => return run_newman(work, &server),
        Language::Prism => return run_prism(work, &server),
    };
    // The AWS CLI output both scenarios store as a zone mapping (step 8f).
    command.env(
        "APPZONE_DESCRIBE_OUTPUT",
        crate::root().join("clients/aws-describe-availability-zones.json"),
    );
    server.run_scenario(&mut command, language.name())
}

// ---------------------------------------------------------------------------------------------
// Python

/// The venv of `clients/python/requirements.txt` (exact pins), installed once per version of
/// that file, outside the build cache ([`crate::kept`]).
fn python_venv() -> Result<PathBuf> {
    let requirements = crate::root().join("clients/python/requirements.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .with_context(|| format!("cannot read {}", requirements.display()))?;
    let entry = crate::kept::filled("python", &wanted, |entry| {
        let venv = entry.join("venv");
        run_bounded(
            Command::new("python3").args(["-m", "venv"]).arg(&venv),
            CHECK_TIMEOUT,
        )?;
        run_bounded(
            Command::new(venv.join("bin").join("python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--disable-pip-version-check",
                    "--no-input",
                    "--quiet",
                    "-r",
                ])
                .arg(&requirements),
            INSTALL_TIMEOUT,
        )
    })?;
    Ok(entry.join("venv"))
}

/// Why the Python half cannot run here, if it cannot.
fn python_missing() -> Option<String> {
    const INSTALL: &str = "install Python 3.11 or later with venv and pip, e.g. `apt-get install \
                           python3 python3-venv python3-pip`";
    let probe = "import sys, venv, ensurepip; sys.exit(0 if sys.version_info >= (3, 11) else 3)";
    let Ok(out) = output(Command::new("python3").args(["-c", probe]), PROBE_TIMEOUT) else {
        return Some(format!("no `python3` on PATH; {INSTALL}"));
    };
    match out.status.code() {
        Some(0) => None,
        Some(3) => Some(format!("`python3` is older than 3.11; {INSTALL}")),
        _ => Some(format!("`python3` has no venv/ensurepip module; {INSTALL}")),
    }
}

fn prepare_python(work: &Path) -> Result<()> {
    let root = crate::root();
    let bin = python_venv()?.join("bin");
    let tools = ["python", "openapi-python-client", "mypy", "ruff"].map(|tool| bin.join(tool));
    eprintln!("clients: python tools: {}", tool_versions(&tools));

    let generated = work.join("python").join("generated");
    crate::fresh_dir(&generated)?;
    // The generator's post hooks run `ruff` from the venv.
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .context("cannot build PATH")?;
    run_bounded(
        Command::new(bin.join("openapi-python-client"))
            .args(["generate", "--path"])
            .arg(root.join("openapi.json"))
            .arg("--config")
            .arg(root.join("clients/python/openapi-python-client.yaml"))
            .args(["--meta", "none", "--overwrite", "--fail-on-warning"])
            .arg("--output-path")
            .arg(generated.join("appzone_client"))
            .env("PATH", path),
        CHECK_TIMEOUT,
    )?;
    run_bounded(
        Command::new(bin.join("mypy"))
            .args(["--strict", "--cache-dir"])
            .arg(work.join("python").join("mypy-cache"))
            .arg(root.join("clients/python/scenario.py"))
            .arg(generated.join("appzone_client"))
            .env("MYPYPATH", &generated),
        CHECK_TIMEOUT,
    )
}

// ---------------------------------------------------------------------------------------------
// TypeScript

/// Why the TypeScript half (and the browser task) cannot run here, if it cannot.
pub(crate) fn node_missing() -> Option<String> {
    const INSTALL: &str = "install Node.js 20.19 or later with npm, e.g. `apt-get install nodejs \
                           npm` or from nodejs.org";
    let Some(node) = version(Command::new("node").arg("--version")) else {
        return Some(format!("no `node` on PATH; {INSTALL}"));
    };
    if version(Command::new("npm").arg("--version")).is_none() {
        return Some(format!("no `npm` on PATH; {INSTALL}"));
    }
    let mut numbers = node
        .trim()
        .trim_start_matches('v')
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let found = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    if found < MIN_NODE {
        return Some(format!("node {} is too old; {INSTALL}", node.trim()));
    }
    None
}

/// Copies `files` of `clients/<name>` to `<work>/<name>` and installs its packages there
/// ([`crate::kept::npm_project`]); returns the directory.
fn npm_project(work: &Path, name: &str, files: &[&str]) -> Result<PathBuf> {
    let dir = work.join(name);
    let source = crate::root().join("clients").join(name);
    crate::kept::npm_project(&source, &dir, files)?;
    Ok(dir)
}

fn prepare_typescript(work: &Path) -> Result<()> {
    let dir = npm_project(
        work,
        "typescript",
        &[
            "package.json",
            "package-lock.json",
            "tsconfig.json",
            "openapi-ts.config.ts",
            "scenario.ts",
            "support.ts",
            "zones.ts",
        ],
    )?;
    let bin = dir.join("node_modules").join(".bin");
    let tools = [
        PathBuf::from("node"),
        PathBuf::from("npm"),
        bin.join("openapi-ts"),
        bin.join("tsc"),
    ];
    eprintln!("clients: typescript tools: {}", tool_versions(&tools));

    for old in ["generated", "out"] {
        let _ = std::fs::remove_dir_all(dir.join(old));
    }
    run_bounded(
        Command::new(bin.join("openapi-ts"))
            .arg("--input")
            .arg(crate::root().join("openapi.json"))
            .args(["--output", "generated", "--no-log-file"])
            .current_dir(&dir),
        CHECK_TIMEOUT,
    )?;
    // tsconfig.json has `strict`; `--strict` on the command line says it again.
    run_bounded(
        Command::new(bin.join("tsc"))
            .args(["--strict", "-p", "tsconfig.json"])
            .current_dir(&dir),
        CHECK_TIMEOUT,
    )?;
    eprintln!("clients: typescript: tsc --strict passed");
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Postman

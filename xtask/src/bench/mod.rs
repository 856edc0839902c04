//! `cargo xtask bench`: load benchmarks of a release build over 127.0.0.1, driven by wrk; see
//! `BENCHMARKS.md` for the method and the latest figures. [`phases`] says what one run does:
//! appzone (production defaults but the per-key rate limit, and again with `APPZONE_LOG=warn`)
//! against the bare-axum baseline answering appzone's bytes, A B A B over the rounds; then
//! deletes, a mixed load, a long run for memory and the client benchmark, on SQLite, and the
//! deletes again on PostgreSQL when one answers. `--scale` runs [`scale`] instead, and
//! `--replicas` [`replicas`] (three replicas on PostgreSQL, with and without Redis).
//!
//! The parts: [`options`] (the command line), [`seed`] (databases and keys, by the operator CLI
//! and sqlite3/psql), [`servers`] (starting the servers, waiting until they answer), [`load`]
//! (wrk runs and their results), [`procfs`] (CPU and memory of a process), [`instructions`]
//! (callgrind), [`report`] (the Markdown).

mod catalog;
mod instructions;
mod load;
mod options;
mod phases;
mod procfs;
mod replicas;
mod report;
mod scale;
mod seed;
mod servers;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result};

pub(crate) use instructions::instruction_guard;
pub(crate) use options::BenchArgs;

use report::Report;

/// Request id sent when capturing the answer the baseline replays: 26 characters, like the ULID
/// appzone generates, so both bodies have the same length.
const CAPTURE_REQUEST_ID: &str = "01JBENCH000000000000000000";
const ZONES_PATH: &str = "/api/v1/providers/aws/regions/us-east-1/zones";
/// The zone listing's route template and the path the runs ask for.
const ZONES: (&str, &str) = (
    "/api/v1/providers/{providerId}/regions/{regionId}/zones",
    ZONES_PATH,
);
/// The discovery listings, benchmarked like the zone listing against a baseline of their own.
const PROVIDERS_PATH: &str = "/api/v1/providers";
const REGIONS_PATH: &str = "/api/v1/providers/aws/regions";

/// Runs the benchmarks.
pub(crate) fn run(args: BenchArgs) -> Result<()> {
    let opts = args.resolve();
    if opts.scale {
        return scale::run(&opts);
    }
    if opts.replicas {
        return replicas::run(&opts);
    }
    let wrk_version = load::wrk_version()?;
    seed::require_sqlite3()?;
    let bins = Binaries::build()?;
    let work = WorkDir::create(opts.keep)?;
    let mut report = Report::new(&opts, wrk_version);
    eprintln!("bench: working in {}", work.path.display());
    let started = Instant::now();

    phases::sqlite(&opts, &bins, &work, &mut report)?;
    if let Some(url) = &opts.postgres {
        if seed::postgres_reachable(url) {
            phases::postgres(&opts, &bins, &work, url, &mut report)?;
        } else {
            eprintln!(
                "bench: PostgreSQL at {url} is not reachable (or psql is missing); skipping it"
            );
            report.notes.push(
                "PostgreSQL delete scenario skipped: no reachable server (set \
                 APPZONE_BENCH_POSTGRES_URL)."
                    .to_owned(),
            );
        }
    }

    report.elapsed = started.elapsed();
    report.load_after = report::load_average();
    write_report(&opts.output, &report.render())
}

/// Prints the report and writes it to `output`.
fn write_report(output: &Path, text: &str) -> Result<()> {
    println!("\n{text}");
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(output, text).with_context(|| format!("cannot write {}", output.display()))?;
    eprintln!("bench: report written to {}", output.display());
    Ok(())
}

/// The release binaries a run starts, and how.
#[derive(Clone)]
struct Binaries {
    server: PathBuf,
    baseline: PathBuf,
    client: PathBuf,
    /// A command line the servers' own is appended to (valgrind's), empty to run them as they
    /// are.
    wrapper: Vec<String>,
}

impl Binaries {
    /// Builds the server and the bench binaries in release mode.
    fn build() -> Result<Self> {
        crate::process::run(crate::process::cargo().args([
            "build",
            "--release",
            "--locked",
            "-p",
            "appzone-server",
            "-p",
            "appzone-bench",
        ]))?;
        let bin = crate::target_dir().join("release");
        Ok(Self {
            server: bin.join("appzone-server"),
            baseline: bin.join("appzone-bench-baseline"),
            client: bin.join("appzone-bench-client"),
            wrapper: Vec::new(),
        })
    }

    /// The same binaries, the servers and operator commands run by `wrapper`.
    fn under(&self, wrapper: Vec<String>) -> Self {
        Self {
            wrapper,
            ..self.clone()
        }
    }

    /// A command running `program` (a server), by the wrapper if there is one.
    fn command(&self, program: &Path) -> Command {
        match self.wrapper.split_first() {
            Some((first, rest)) => {
                let mut command = Command::new(first);
                command.args(rest).arg(program);
                command
            }
            None => Command::new(program),
        }
    }

    /// The operator CLI of the server on `url`, without a server running.
    fn server_cli(&self, url: &str) -> Command {
        let mut command = servers::clean_env(self.command(&self.server));
        command.arg("--database-url").arg(url);
        command
    }
}

/// The run's temporary directory, with the wrk scripts in it; removed when dropped unless
/// `--keep`.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    fn create(keep: bool) -> Result<Self> {
        let path = std::env::temp_dir().join(format!(
            "appzone-bench-{}-{}",
            std::process::id(),
            unix_secs()
        ));
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        let dir = Self { path, keep };
        load::write_scripts(&dir.path)?;
        Ok(dir)
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("bench: kept {}", self.path.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

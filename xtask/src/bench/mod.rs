//! `cargo xtask bench`: load benchmarks of a release build over loopback, with wrk.
//!
//! What one run does (see `BENCHMARKS.md` for the method and the latest figures):
//!
//! 1. builds `appzone-server` and `appzone-bench` in release mode;
//! 2. creates a fresh SQLite database in a temporary directory, seeds an organization and an
//!    admin key with the operator CLI and many profiles with the `sqlite3` CLI;
//! 3. starts three servers on 127.0.0.1: appzone with its production defaults (INFO request
//!    log, only the per-key rate limit off so one key may send everything), the same with
//!    `APPZONE_LOG=warn` (to show what the request log costs), and the bare-axum baseline
//!    (`appzone-bench-baseline`) answering the bytes appzone answered; and one baseline per
//!    discovery listing (providers, the regions of aws), answering appzone's bytes for it;
//! 4. runs every list scenario against appzone then the baseline (A B A B ...), `--rounds`
//!    times, each run `--duration` seconds of wrk; then deletes (32 connections, every request
//!    a distinct profile), a mixed load, one long run for memory, and the client benchmark;
//! 5. does the delete scenario again on PostgreSQL (a fresh schema, dropped afterwards) when
//!    `APPZONE_BENCH_POSTGRES_URL` or `postgres://postgres@127.0.0.1:5432/test` is reachable;
//! 6. prints a Markdown report (medians and spread over the rounds, ratios, targets) and writes
//!    it to `target/bench/report.md`.
//!
//! `--scale` runs [`scale`] instead: how the costs grow with the catalog, the keys, the profiles,
//! idle connections and a flood of wrong keys, each at a small and a large size in the same run
//! (`target/bench/scale.md`).
//!
//! Server CPU per request is the server process's utime+stime (`/proc/PID/stat`) over the run
//! divided by the requests wrk completed; RSS is `VmRSS` of `/proc/PID/status` after the run.
//! Nothing here talks to anything but 127.0.0.1, and every run is bounded in time.
//!
//! The parts: [`options`] (the command line), [`seed`] (databases and keys), [`servers`]
//! (starting appzone and the baselines, waiting until they answer), [`http`] (the one GET that
//! readiness and capturing need), [`procfs`] (CPU and memory of a process), [`load`] (wrk runs
//! and their results), [`phases`] (what runs against SQLite and PostgreSQL), [`perf`] and
//! [`instructions`] (the profilers), [`report`] (the Markdown).

mod catalog;
mod http;
mod instructions;
mod load;
mod options;
mod perf;
mod phases;
mod procfs;
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

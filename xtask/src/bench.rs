//! `cargo xtask bench`: load benchmarks of a release build over 127.0.0.1, driven by wrk; see
//! `BENCHMARKS.md` for the method and the figures. wrk reports each run itself (the `done` hook
//! of `wrk.lua` prints one JSON line, read in [`wrk`]); the server's CPU and memory come from
//! /proc ([`servers`]). The modes: [`lab`] (appzone against the bare axum route, A B A B, and
//! appzone alone) and `--replicas` ([`replicas`]); each prints its figures as Markdown rows.
//! The CI guard `cargo xtask instructions` is [`instructions`].

mod instructions;
mod lab;
mod offerings;
mod replicas;
mod servers;
mod wrk;

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::builder::RangedU64ValueParser;

pub(crate) use instructions::instruction_guard;

/// The zone listing: its route template and the path the runs ask for.
const ZONES: (&str, &str) = (
    "/api/v1/providers/{providerId}/regions/{regionId}/zones",
    "/api/v1/providers/aws/regions/us-east-1/zones",
);
/// The operator CLI and the database shells; inserting the profiles is the longest.
const CLI_TIMEOUT: Duration = Duration::from_secs(600);

/// The flags of `cargo xtask bench`. The presets (`--quick`, `--listing-only`) give the
/// defaults of the values they change; a value given explicitly wins over a preset.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BenchArgs {
    /// Smoke test: 1 round of 2 s, no long run, short client benchmark
    #[arg(long)]
    quick: bool,
    /// Only the listings at 64 connections: the zone listing A/B (appzone, log=warn, baseline)
    /// and the zone identities, the quick loop while working on the hot path
    #[arg(long)]
    listing_only: bool,
    /// Rounds of every scenario [default: 5; 1 with --quick]
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: Option<usize>,
    /// Length of each wrk run, in seconds [default: 5; 2 with --quick]
    #[arg(long, value_name = "SECS", value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    duration: Option<u64>,
    /// Listings of the long memory run, 0 to skip it [default: 1000000; 0 with --quick]
    #[arg(long, value_name = "N")]
    long_requests: Option<u64>,
    /// PostgreSQL for the delete scenario (run when it answers psql) and --replicas
    #[arg(long, value_name = "URL", env = "APPZONE_BENCH_POSTGRES_URL")]
    #[arg(default_value = "postgres://postgres@127.0.0.1:5432/test")]
    postgres: String,
    /// Skip the PostgreSQL delete scenario
    #[arg(long)]
    no_postgres: bool,
    /// Skip the client benchmark
    #[arg(long)]
    no_client: bool,
    /// Keep the temporary directory (databases, server logs, callgrind files)
    #[arg(long)]
    keep: bool,
    /// Also count user-space instructions per zone listing of appzone and the baseline under
    /// callgrind, as `cargo xtask instructions` does (needs valgrind)
    #[arg(long)]
    callgrind: bool,
    /// Instead, three replicas on PostgreSQL: the listing with per-replica limits and with
    /// limits in Redis, and how long a revoked key keeps working on the slowest replica
    #[arg(long)]
    replicas: bool,
    /// Redis for `--replicas`' Redis-backed limits, used when it answers
    #[arg(long, value_name = "URL", env = "APPZONE_BENCH_REDIS_URL")]
    #[arg(default_value = "redis://127.0.0.1:6379")]
    redis_url: String,
    /// Skip `--replicas`' Redis-backed limits
    #[arg(long)]
    no_redis: bool,
}

impl BenchArgs {
    fn rounds(&self) -> usize {
        self.rounds.unwrap_or(if self.quick { 1 } else { 5 })
    }

    fn duration(&self) -> u64 {
        self.duration.unwrap_or(if self.quick { 2 } else { 5 })
    }

    /// Seconds of warm-up per server before the measured runs.
    fn warmup(&self) -> u64 {
        self.duration().min(2)
    }

    fn long_requests(&self) -> u64 {
        let skip = self.quick || self.listing_only;
        self.long_requests
            .unwrap_or(if skip { 0 } else { 1_000_000 })
    }
}

/// Runs the benchmarks `args` ask for.
pub(crate) fn run(args: BenchArgs) -> Result<()> {
    eprintln!("bench: {}", wrk::version()?);
    if args.replicas {
        return replicas::run(&args);
    }
    let sqlite3 = Command::new("sqlite3").arg("--version").output();
    sqlite3.context("the sqlite3 CLI seeds the databases: `sudo apt-get install -y sqlite3`")?;
    let bins = if args.no_client {
        Binaries::build()?
    } else {
        Binaries::with_client()?
    };
    lab::run(&args, &bins, &WorkDir::create(args.keep)?)
}

/// The release binaries a run starts (in `dir`), and how.
#[derive(Clone)]
struct Binaries {
    dir: PathBuf,
    /// A command line the servers' own is appended to (valgrind's, env's), empty to run them
    /// as they are.
    wrapper: Vec<String>,
}

impl Binaries {
    /// The server's and the bench crate's binaries of the release build CI's other steps share
    /// (build.rs: static, as the image ships it), so a build CI made is fresh here.
    fn build() -> Result<Self> {
        Ok(Self {
            dir: crate::build::release()?.dir,
            wrapper: Vec::new(),
        })
    }

    /// The same binaries and the client benchmark (`appzone-bench-client`).
    fn with_client() -> Result<Self> {
        Ok(Self {
            dir: crate::build::release_with_client()?.dir,
            wrapper: Vec::new(),
        })
    }

    /// The same binaries, the servers and operator commands run by `wrapper`.
    fn under(&self, wrapper: &[&str]) -> Self {
        let wrapper = wrapper.iter().map(|s| (*s).to_owned()).collect();
        Self {
            wrapper,
            ..self.clone()
        }
    }

    /// A command running the binary `name`, by the wrapper if there is one.
    fn command(&self, name: &str) -> Command {
        let program = self.dir.join(name);
        let Some((first, rest)) = self.wrapper.split_first() else {
            return Command::new(program);
        };
        let mut command = Command::new(first);
        command.args(rest).arg(program);
        command
    }

    /// The server's command line on the database at `url`, its settings from its flags only:
    /// no `APPZONE_*` or `RUST_LOG` of the caller's shell leaks in.
    fn cli(&self, url: &str) -> Command {
        let mut command = self.command("appzone-server");
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            if name.starts_with("APPZONE_") || name == "RUST_LOG" {
                command.env_remove(&*name);
            }
        }
        command.arg("--database-url").arg(url);
        command
    }

    /// What the operator command `args` (words between single spaces) on `url` prints; Err
    /// when it fails.
    fn run_cli(&self, url: &str, args: &str) -> Result<String> {
        crate::process::stdout_of(self.cli(url).args(args.split(' ')), CLI_TIMEOUT)
    }

    /// Creates organization `bench` and an admin key with the operator CLI; returns the key.
    fn org_and_key(&self, url: &str) -> Result<String> {
        // Only `migrate` and `serve` create a database; the other commands need one.
        self.run_cli(url, "migrate")?;
        self.run_cli(url, "org create bench --name Bench")?;
        let key = self.run_cli(url, "key create --org bench --role admin --name bench")?;
        Ok(key.trim().to_owned())
    }
}

/// The run's temporary directory, with `wrk.lua` in it; removed when dropped unless `--keep`.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    fn create(keep: bool) -> Result<Self> {
        let path = std::env::temp_dir().join(format!("appzone-bench-{}", unique()));
        std::fs::create_dir_all(&path).context("cannot create the work directory")?;
        std::fs::write(path.join("wrk.lua"), wrk::SCRIPT).context("cannot write wrk.lua")?;
        eprintln!("bench: working in {}", path.display());
        Ok(Self { path, keep })
    }

    /// The URL of SQLite database `name` in the directory.
    fn sqlite_url(&self, name: &str) -> String {
        format!("sqlite://{}", self.path.join(name).display())
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

/// `<pid>_<unix seconds>`: names no other run uses.
fn unique() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    format!("{}_{}", std::process::id(), now.map_or(0, |d| d.as_secs()))
}

/// What `sql` prints, run by the sqlite3 CLI on the database of `url`.
fn sqlite(url: &str, sql: &str) -> Result<String> {
    let mut sqlite3 = Command::new("sqlite3");
    let db = url.trim_start_matches("sqlite://");
    crate::process::stdout_of(sqlite3.arg(db).arg(sql), CLI_TIMEOUT)
}

/// Inserts profiles `bench-1` to `bench-<count>` of organization `bench`: into SQLite at `url`,
/// or with `schema` into that schema of the PostgreSQL at `url`.
fn insert_profiles(url: &str, schema: Option<&str>, count: u64) -> Result<()> {
    let insert = "INSERT INTO profiles (id, org_id, name, created_at) \
                  SELECT 'bench-' || i, 'bench', 'profile ' || i, 0";
    let Some(schema) = schema else {
        let n = format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count})"
        );
        return sqlite(url, &format!("{n} {insert} FROM n;")).map(drop);
    };
    let insert = insert.replace("INTO ", &format!("INTO {schema}."));
    let sql = format!("{insert} FROM generate_series(1, {count}) AS i; ANALYZE {schema}.profiles");
    crate::process::psql(url, &sql).map(drop)
}

/// Runs `measure` in a fresh schema of the PostgreSQL at `admin_url`, given a URL whose
/// search_path is that schema and the schema's name; drops the schema afterwards whatever
/// happened (`measure` has stopped its servers by then).
fn in_fresh_schema(admin_url: &str, measure: impl FnOnce(&str, &str) -> Result<()>) -> Result<()> {
    let schema = format!("bench_{}", unique());
    crate::process::psql(admin_url, &format!("CREATE SCHEMA {schema}"))?;
    let sep = if admin_url.contains('?') { '&' } else { '?' };
    let result = measure(
        &format!("{admin_url}{sep}options=-c%20search_path%3D{schema}"),
        &schema,
    );
    let dropped = crate::process::psql(
        admin_url,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
    );
    if let Err(err) = dropped {
        eprintln!("bench: warning: could not drop schema {schema}: {err:#}");
    }
    result
}

/// Whether `psql` reaches the PostgreSQL of `url`.
fn postgres_reachable(url: &str) -> bool {
    crate::process::succeeds(Command::new("psql").args([url, "-X", "-q", "-t", "-c", "SELECT 1"]))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Bench {
        #[command(flatten)]
        args: super::BenchArgs,
    }

    #[test]
    fn presets_and_explicit_values() {
        let parse = |line: &str| {
            let args = Bench::try_parse_from(format!("bench {line}").split_whitespace());
            args.map(|b| (b.args.rounds(), b.args.duration(), b.args.long_requests()))
        };
        assert_eq!(parse("").ok(), Some((5, 5, 1_000_000)));
        assert_eq!(parse("--quick").ok(), Some((1, 2, 0)));
        assert_eq!(parse("--listing-only --rounds 3").ok(), Some((3, 5, 0)));
        let explicit = parse("--quick --duration 4 --long-requests 9");
        assert_eq!(explicit.ok(), Some((1, 4, 9)));
        for bad in ["--rounds 0", "--duration 0", "--output x", "--scale"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}

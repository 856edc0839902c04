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
//! Server CPU per request is the server process's utime+stime (`/proc/PID/stat`) over the run
//! divided by the requests wrk completed; RSS is `VmRSS` of `/proc/PID/status` after the run.
//! Nothing here talks to anything but 127.0.0.1, and every run is bounded in time.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const HELP: &str = "\
cargo xtask bench [OPTIONS]

Load benchmarks of a release build over 127.0.0.1 with wrk (see BENCHMARKS.md).
Needs wrk (Debian/Ubuntu: `sudo apt-get install -y wrk`) and the sqlite3 CLI; the PostgreSQL
delete scenario also needs psql and a reachable server.

Options:
  --quick              smoke test: 1 round of 2 s, no long run, short client benchmark
  --listing-only       only the 64-connection zone listing A/B (appzone, log=warn, baseline):
                       the quick loop while working on the hot path; no discovery listings,
                       deletes, mixed, long run, client or PostgreSQL
  --rounds N           rounds of every A/B scenario (default 5)
  --duration SECS      length of each wrk run (default 5)
  --threads N          wrk threads (default 1: the machine's other core serves)
  --long-requests N    requests of the long memory run at 64 connections (default 1000000, 0 skips)
  --postgres URL       PostgreSQL for the delete scenario (default: $APPZONE_BENCH_POSTGRES_URL,
                       else postgres://postgres@127.0.0.1:5432/test when reachable)
  --no-postgres        skip the PostgreSQL delete scenario
  --no-client          skip the client benchmark
  --output FILE        where to write the report (default target/bench/report.md)
  --keep               keep the temporary directory (databases, server logs, wrk script)
  --callgrind          also count the user-space instructions per listing of appzone and the
                       baseline under valgrind's callgrind (8 connections; deterministic,
                       whatever else the machine does); needs valgrind
  --perf               also profile appzone under the 64-connection listing with `perf record`
                       (cpu-clock, DWARF call graphs; target/bench/perf.data) and add the top
                       symbols to the report
";

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
const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";
/// Delete ids reserved per wrk run per second of run time: far above any delete rate seen, so
/// a run never runs out of distinct profiles (running out would show as 404 errors).
const DELETE_IDS_PER_SECOND: u64 = 20_000;

/// The wrk `done` hook, in both scripts: one machine-readable line (wrk's own `--latency`
/// output stops at p99).
const WRK_DONE: &str = r#"
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "APPZONE_WRK requests=%d duration_us=%d status_errors=%d connect_errors=%d read_errors=%d " ..
    "write_errors=%d timeouts=%d p50_us=%d p75_us=%d p90_us=%d p99_us=%d p999_us=%d max_us=%d\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(75), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.max))
end
"#;

/// Request generation for the delete and mixed scenarios. (The list scenarios use a script
/// with no `request` function, so wrk sends its prebuilt request at full speed; wrk decides
/// that when it loads the script, so the two cannot be one script.) Arguments after `--`:
///   delete KEY FIRST NTHREADS        DELETE bench-<n>, every n once, from FIRST up
///   mixed KEY FIRST NTHREADS ETAG    per 10 requests: 1 DELETE, 1 GET with If-None-Match, 8 GET
const WRK_DYNAMIC: &str = r#"-- Written by `cargo xtask bench`; see xtask/src/bench.rs.
local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

function init(args)
  mode = args[1]
  key = args[2]
  first = tonumber(args[3])
  nthreads = tonumber(args[4])
  etag = args[5]
  counter = 0
  deletes = 0
end

local function next_delete()
  local n = first + thread_index + deletes * nthreads
  deletes = deletes + 1
  return wrk.format("DELETE", "/api/v1/applications/profiles/bench-" .. n, { ["X-API-KEY"] = key })
end

function request()
  if mode == "delete" then
    return next_delete()
  end
  counter = counter + 1
  local slot = counter % 10
  if slot == 0 then
    return next_delete()
  elseif slot == 1 then
    return wrk.format("GET", nil, { ["X-API-KEY"] = key, ["If-None-Match"] = etag })
  end
  return wrk.format("GET", nil, { ["X-API-KEY"] = key })
end
"#;

// ---- options -----------------------------------------------------------------------------

#[derive(Debug, Clone)]
struct Options {
    rounds: usize,
    duration: u64,
    warmup: u64,
    threads: usize,
    long_requests: u64,
    postgres: Postgres,
    client: bool,
    client_requests: usize,
    client_rounds: usize,
    output: Option<PathBuf>,
    keep: bool,
    perf: bool,
    callgrind: bool,
    listing_only: bool,
}

#[derive(Debug, Clone, PartialEq)]
enum Postgres {
    /// `APPZONE_BENCH_POSTGRES_URL`, else the default URL, when reachable.
    Auto,
    Url(String),
    Off,
}

impl Options {
    fn parse(args: &[&str]) -> Result<Option<Self>, String> {
        let mut opts = Options {
            rounds: 5,
            duration: 5,
            warmup: 2,
            threads: 1,
            long_requests: 1_000_000,
            postgres: Postgres::Auto,
            client: true,
            client_requests: 2000,
            client_rounds: 5,
            output: None,
            keep: false,
            perf: false,
            callgrind: false,
            listing_only: false,
        };
        let mut it = args.iter();
        while let Some(&flag) = it.next() {
            let mut value = || {
                it.next()
                    .copied()
                    .ok_or_else(|| format!("{flag} needs a value"))
            };
            let number = |v: &str| {
                v.parse::<u64>()
                    .map_err(|e| format!("{flag}: {e} (got {v:?})"))
            };
            match flag {
                "--quick" => {
                    opts.rounds = 1;
                    opts.duration = 2;
                    opts.warmup = 1;
                    opts.long_requests = 0;
                    opts.client_requests = 300;
                    opts.client_rounds = 2;
                }
                "--rounds" => opts.rounds = usize::try_from(number(value()?)?.max(1)).unwrap_or(1),
                "--duration" => opts.duration = number(value()?)?.max(1),
                "--threads" => {
                    opts.threads = usize::try_from(number(value()?)?.max(1)).unwrap_or(1)
                }
                "--long-requests" => opts.long_requests = number(value()?)?,
                "--postgres" => opts.postgres = Postgres::Url(value()?.to_owned()),
                "--no-postgres" => opts.postgres = Postgres::Off,
                "--no-client" => opts.client = false,
                "--output" => opts.output = Some(PathBuf::from(value()?)),
                "--keep" => opts.keep = true,
                "--listing-only" => {
                    opts.listing_only = true;
                    opts.long_requests = 0;
                    opts.client = false;
                    opts.postgres = Postgres::Off;
                }
                "--perf" => opts.perf = true,
                "--callgrind" => opts.callgrind = true,
                "-h" | "--help" | "help" => {
                    print!("{HELP}");
                    return Ok(None);
                }
                other => return Err(format!("bench: unknown option {other:?}\n\n{HELP}")),
            }
        }
        Ok(Some(opts))
    }
}

// ---- entry point ---------------------------------------------------------------------------

/// Runs the benchmarks.
pub fn run(args: &[&str]) -> Result<(), String> {
    let Some(opts) = Options::parse(args)? else {
        return Ok(());
    };
    let wrk_version = require_tools()?;
    let bins = build_release()?;
    let work = WorkDir::create(opts.keep)?;
    let mut report = Report::new(&opts, wrk_version);
    eprintln!("bench: working in {}", work.path.display());
    let started = Instant::now();

    sqlite_phase(&opts, &bins, &work, &mut report)?;
    match postgres_url(&opts.postgres) {
        Some(url) => postgres_phase(&opts, &bins, &work, &url, &mut report)?,
        None if opts.postgres == Postgres::Off => {}
        None => report.notes.push(
            "PostgreSQL delete scenario skipped: no reachable server (set \
             APPZONE_BENCH_POSTGRES_URL)."
                .to_owned(),
        ),
    }

    report.elapsed = started.elapsed();
    report.load_after = load_average();
    let text = report.render();
    println!("\n{text}");
    let output = opts
        .output
        .clone()
        .unwrap_or_else(|| crate::target_dir().join("bench").join("report.md"));
    if let Some(parent) = output.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(&output, &text)
        .map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    eprintln!("bench: report written to {}", output.display());
    Ok(())
}

/// `cargo xtask ci`'s speed guard: user-space instructions per zone listing under callgrind,
/// for appzone and for the bare route serving its bytes, measured the same way in the same
/// run (`--callgrind`'s counts). Fails when appzone's exceed the bare route's. Deterministic
/// enough for CI: callgrind counts instructions, not time, whatever else the machine does.
///
/// Needs valgrind and wrk: without them it prints a notice and passes, except under CI
/// (`CI=true`), where a guard that did not run must not look like one that held.
pub fn instruction_guard() -> Result<(), String> {
    let missing: Vec<&str> = ["valgrind", "wrk"]
        .into_iter()
        .filter(|tool| Command::new(tool).arg("--version").output().is_err())
        .collect();
    if !missing.is_empty() {
        let notice = format!(
            "instructions: SKIPPED the callgrind guard: {} not installed (Debian: `sudo apt-get \
             install -y valgrind wrk`)",
            missing.join(" and ")
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            return Err(format!("{notice}; it is required under CI"));
        }
        println!("{notice}");
        return Ok(());
    }
    let bins = build_release()?;
    let work = WorkDir::create(false)?;
    let url = format!("sqlite://{}", work.path.join("appzone.db").display());
    let key = seed_org(&bins, &url)?;
    let (body_file, etag) = {
        let appzone = Server::appzone(&bins, &work, "appzone", &url, None)?;
        let captured = capture(&appzone, ZONES_PATH, &key, &work)?;
        (captured.file, captured.etag)
    };
    let wrk = Wrk {
        dir: &work.path,
        threads: 1,
        duration: 5,
    };
    let load = Load {
        connections: 8,
        path: ZONES_PATH,
        headers: vec![format!("X-API-KEY: {key}")],
        script_args: vec![],
    };
    let (appzone, baseline) = callgrind_counts(&bins, &work, &wrk, &url, &body_file, &etag, &load)?;
    let verdict = format!(
        "instructions per zone listing (callgrind, user space): appzone {appzone:.0}, bare axum \
         route {baseline:.0}: {:.3}x",
        appzone / baseline
    );
    if appzone > baseline {
        return Err(format!(
            "{verdict}: appzone exceeds the bare route (BENCHMARKS.md, \"Reproducing the \
             profiles\", says how to find where)"
        ));
    }
    println!("{verdict}: held");
    Ok(())
}

/// Builds the server and the bench binaries in release mode.
fn build_release() -> Result<Binaries, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    crate::run(
        &cargo,
        &[
            "build",
            "--release",
            "--locked",
            "-p",
            "appzone-server",
            "-p",
            "appzone-bench",
        ],
    )?;
    let bin = crate::target_dir().join("release");
    Ok(Binaries {
        server: bin.join("appzone-server"),
        baseline: bin.join("appzone-bench-baseline"),
        client: bin.join("appzone-bench-client"),
    })
}

struct Binaries {
    server: PathBuf,
    baseline: PathBuf,
    client: PathBuf,
}

/// Checks wrk and sqlite3 are installed; returns wrk's version line.
fn require_tools() -> Result<String, String> {
    let wrk = Command::new("wrk").arg("--version").output().map_err(|_| {
        "wrk is not installed. Install it from your distribution's packages, e.g. \
         `sudo apt-get install -y wrk` on Debian/Ubuntu (`brew install wrk` on macOS), then \
         run `cargo xtask bench` again."
            .to_owned()
    })?;
    // wrk prints its version and usage, and exits 1, for --version.
    let text =
        String::from_utf8_lossy(&wrk.stdout).into_owned() + &String::from_utf8_lossy(&wrk.stderr);
    let version = text.lines().next().unwrap_or("wrk").trim().to_owned();
    Command::new("sqlite3")
        .arg("--version")
        .output()
        .map_err(|_| {
            "the sqlite3 CLI is not installed (it seeds the profiles): \
             `sudo apt-get install -y sqlite3`"
                .to_owned()
        })?;
    Ok(version)
}

// ---- the SQLite phase ----------------------------------------------------------------------

fn sqlite_phase(
    opts: &Options,
    bins: &Binaries,
    work: &WorkDir,
    report: &mut Report,
) -> Result<(), String> {
    let db = work.path.join("appzone.db");
    let url = format!("sqlite://{}", db.display());
    let key = seed_org(bins, &url)?;
    // Profiles for the delete runs and the mixed runs (a tenth of their requests delete).
    let per_run = DELETE_IDS_PER_SECOND * opts.duration;
    let profiles = per_run * (2 * opts.rounds as u64 + 1);
    let seeded = Instant::now();
    sqlite_exec(
        &db,
        &format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {profiles}) \
             INSERT INTO profiles (id, org_id, name, created_at) \
             SELECT 'bench-' || i, 'bench', 'profile ' || i, 0 FROM n;"
        ),
    )?;
    eprintln!(
        "bench: seeded {profiles} profiles into SQLite in {:.1} s",
        seeded.elapsed().as_secs_f64()
    );
    let mut next_profile = 1u64;

    let appzone = Server::appzone(bins, work, "appzone", &url, None)?;
    let quiet = Server::appzone(bins, work, "appzone-log-warn", &url, Some("warn"))?;
    let captured = capture(&appzone, ZONES_PATH, &key, work)?;
    let (body_file, etag) = (captured.file.clone(), captured.etag.clone());
    let baseline = Server::baseline(bins, work, &body_file, &etag)?;
    let replayed = http_get(baseline.addr, ZONES_PATH, &[])?;
    if replayed.body != captured.bytes {
        return Err("the baseline does not answer appzone's bytes".to_owned());
    }
    report.body_bytes = captured.bytes.len();

    let wrk = Wrk {
        dir: &work.path,
        threads: opts.threads,
        duration: opts.duration,
    };
    let key_header = format!("X-API-KEY: {key}");
    let inm_header = format!("If-None-Match: {etag}");
    let list = |conns| Load {
        connections: conns,
        path: ZONES_PATH,
        headers: vec![key_header.clone()],
        script_args: vec![],
    };
    let conditional = Load {
        connections: 64,
        path: ZONES_PATH,
        headers: vec![key_header.clone(), inm_header.clone()],
        script_args: vec![],
    };

    // Warm-up: connections, caches, allocator arenas.
    for server in [&appzone, &quiet, &baseline] {
        let warm = Wrk {
            duration: opts.warmup,
            ..wrk
        };
        warm.run(server, &list(64))?;
    }
    let rss_after_warmup = appzone.rss_kb();

    // The A/B scenarios: appzone, then the baseline, per scenario, per round.
    let scenarios: Vec<(&str, Load, bool)> = if opts.listing_only {
        vec![("list zones", list(64), true)]
    } else {
        vec![
            ("list zones", list(16), false),
            ("list zones", list(64), true),
            ("list zones", list(256), false),
            ("list zones, If-None-Match (304)", conditional, true),
        ]
    };
    // The discovery listings, each against a baseline answering its own captured bytes.
    let mut discovery = Vec::new();
    if !opts.listing_only {
        for (name, path) in [
            ("list providers", PROVIDERS_PATH),
            ("list regions", REGIONS_PATH),
        ] {
            let body = capture(&appzone, path, &key, work)?;
            let server = Server::baseline_of(
                bins,
                work,
                &format!("baseline-{}", body.name),
                path,
                &body.file,
                &body.etag,
            )?;
            if http_get(server.addr, path, &[])?.body != body.bytes {
                return Err(format!(
                    "the {name} baseline does not answer appzone's bytes"
                ));
            }
            discovery.push((name, path, server));
        }
    }
    for (_, path, server) in &discovery {
        let warm = Wrk {
            duration: opts.warmup,
            ..wrk
        };
        warm.run(server, &Load { path, ..list(64) })?;
    }

    for round in 1..=opts.rounds {
        for (name, path, server) in &discovery {
            eprintln!(
                "bench: round {round}/{}: {name} at 64 connections",
                opts.rounds
            );
            let load = Load { path, ..list(64) };
            report.add(name, Target::Appzone, 64, wrk.run(&appzone, &load)?);
            report.add(name, Target::Baseline, 64, wrk.run(server, &load)?);
        }
        for (name, load, with_quiet) in &scenarios {
            eprintln!(
                "bench: round {round}/{}: {name} at {} connections",
                opts.rounds, load.connections
            );
            let mut targets = vec![(&appzone, Target::Appzone)];
            if *with_quiet {
                targets.push((&quiet, Target::AppzoneLogWarn));
            }
            targets.push((&baseline, Target::Baseline));
            for (server, target) in targets {
                let run = wrk.run(server, load)?;
                report.add(name, target, load.connections, run);
            }
        }
    }

    if opts.perf {
        report.profile = Some(perf_profile(&wrk, &appzone, &list(64))?);
    }
    if opts.callgrind {
        report.instructions = Some(callgrind_counts(
            bins,
            work,
            &wrk,
            &url,
            &body_file,
            &etag,
            &list(8),
        )?);
    }
    if opts.listing_only {
        return Ok(());
    }

    // Deletes: 32 connections, every request a distinct profile.
    for round in 1..=opts.rounds {
        eprintln!("bench: round {round}/{}: delete (SQLite)", opts.rounds);
        let load = Load {
            connections: 32,
            path: "/",
            headers: vec![],
            script_args: delete_args("delete", &key, next_profile, opts.threads, None),
        };
        next_profile += per_run;
        let run = wrk.run(&appzone, &load)?;
        report.add("delete (SQLite)", Target::Appzone, 32, run);
    }
    let tombstones = sqlite_query(
        &db,
        "SELECT count(*) FROM profiles WHERE deleted_at IS NOT NULL;",
    )?;
    report.notes.push(format!(
        "SQLite delete check: {} tombstones in the database after the delete runs; wrk counted \
         {} successful deletes (requests in flight when a run stops commit without being \
         counted).",
        tombstones.trim(),
        report.successes("delete (SQLite)")
    ));

    // Mixed: 8 of 10 list, 1 of 10 conditional list, 1 of 10 delete; 64 connections.
    for round in 1..=opts.rounds {
        eprintln!("bench: round {round}/{}: mixed", opts.rounds);
        let load = Load {
            connections: 64,
            path: ZONES_PATH,
            headers: vec![],
            script_args: delete_args("mixed", &key, next_profile, opts.threads, Some(&etag)),
        };
        next_profile += per_run;
        let run = wrk.run(&appzone, &load)?;
        report.add(
            "mixed 80% list / 10% 304 / 10% delete (SQLite)",
            Target::Appzone,
            64,
            run,
        );
    }

    // Memory through a long run.
    if opts.long_requests > 0 {
        let rps = report
            .median_rps("list zones", Target::Appzone, 64)
            .unwrap_or(10_000.0)
            .max(1_000.0);
        let secs = ((opts.long_requests as f64 / rps) * 1.05)
            .ceil()
            .clamp(5.0, 600.0) as u64;
        eprintln!(
            "bench: long run: about {} requests, {secs} s at 64 connections",
            opts.long_requests
        );
        let before = appzone.rss_kb();
        let sampler = RssSampler::start(appzone.pid());
        let long = Wrk {
            duration: secs,
            ..wrk
        };
        let run = long.run(&appzone, &list(64))?;
        let samples = sampler.stop();
        report.long = Some(LongRun {
            rss_after_warmup_kb: rss_after_warmup,
            rss_before_kb: before,
            rss_after_kb: appzone.rss_kb(),
            samples,
            run,
        });
    }

    // The client against a raw reqwest GET, sequential calls on one warm connection.
    if opts.client {
        eprintln!("bench: client benchmark");
        let output = Command::new(&bins.client)
            .args([
                "--url",
                &format!("http://{}", appzone.addr),
                "--api-key",
                &key,
                "--requests",
                &opts.client_requests.to_string(),
                "--rounds",
                &opts.client_rounds.to_string(),
            ])
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("cannot run {}: {e}", bins.client.display()))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            return Err(format!("the client benchmark failed: {stdout}"));
        }
        report.client = stdout
            .lines()
            .find(|l| l.starts_with("APPZONE_CLIENT "))
            .map(key_values);
    }

    for server in [&appzone, &quiet, &baseline] {
        report
            .peak_rss
            .insert(server.name.clone(), server.peak_rss_kb());
    }
    Ok(())
}

/// A discovery listing's answer captured from appzone for its baseline to replay.
struct Captured {
    name: &'static str,
    file: PathBuf,
    etag: String,
    bytes: Vec<u8>,
}

fn capture(
    appzone: &Server,
    path: &'static str,
    key: &str,
    work: &WorkDir,
) -> Result<Captured, String> {
    let answer = http_get(
        appzone.addr,
        path,
        &[("X-API-KEY", key), ("X-Request-Id", CAPTURE_REQUEST_ID)],
    )?;
    if answer.status != 200 {
        return Err(format!(
            "appzone answered {} to {path}: {}",
            answer.status,
            String::from_utf8_lossy(&answer.body)
        ));
    }
    let etag = answer
        .header("etag")
        .ok_or_else(|| format!("appzone's answer to {path} has no ETag"))?
        .to_owned();
    let name = match path {
        PROVIDERS_PATH => "providers",
        REGIONS_PATH => "regions",
        _ => "zones",
    };
    let file = work.path.join(format!("{name}.json"));
    std::fs::write(&file, &answer.body)
        .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    Ok(Captured {
        name,
        file,
        etag,
        bytes: answer.body,
    })
}

fn delete_args(
    mode: &str,
    key: &str,
    first: u64,
    threads: usize,
    etag: Option<&str>,
) -> Vec<String> {
    let mut args = vec![
        mode.to_owned(),
        key.to_owned(),
        first.to_string(),
        threads.to_string(),
    ];
    args.extend(etag.map(str::to_owned));
    args
}

/// Samples appzone's CPU with `perf record` during one more 64-connection listing run; returns
/// the top of `perf report` (self time by symbol). The data stays in `target/bench/perf.data`
/// for `perf report --children` and the like.
fn perf_profile(wrk: &Wrk<'_>, server: &Server, load: &Load<'_>) -> Result<String, String> {
    eprintln!("bench: perf profile of appzone at 64 connections");
    let data = crate::target_dir().join("bench").join("perf.data");
    if let Some(parent) = data.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    }
    let mut perf = Command::new("perf")
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            "999",
            "--call-graph",
            "dwarf,16384",
            "-o",
        ])
        .arg(&data)
        .args(["-p", &server.pid().to_string(), "--", "sleep"])
        .arg(wrk.duration.saturating_sub(1).max(1).to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            format!("cannot run perf ({e}); install it (Debian: `apt-get install linux-perf`)")
        })?;
    std::thread::sleep(Duration::from_millis(300));
    let run = wrk.run(server, load)?;
    let status = perf.wait().map_err(|e| format!("perf: {e}"))?;
    if !status.success() {
        return Err(format!("perf record failed ({status})"));
    }
    let report = Command::new("perf")
        .args([
            "report",
            "--no-children",
            "--sort",
            "symbol",
            "--stdio",
            "-g",
            "none",
        ])
        .args(["--percent-limit", "0.8", "-i"])
        .arg(&data)
        .output()
        .map_err(|e| format!("perf report: {e}"))?;
    let text = String::from_utf8_lossy(&report.stdout);
    let mut out = format!(
        "perf record -e cpu-clock during a {:.0} req/s run; self time by symbol ([k] kernel), \
         data in {}:\n\n```text\n",
        run.rps(),
        data.display()
    );
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .take(30)
    {
        // perf pads the symbol column to the longest name and appends empty columns.
        let line = line.trim().trim_end_matches([' ', '-']);
        let _ = writeln!(
            out,
            "{}",
            line.split_whitespace().collect::<Vec<_>>().join(" ")
        );
    }
    out.push_str("```\n");
    Ok(out)
}

/// User-space instructions per listing of appzone and of the baseline, each under callgrind:
/// a warm-up, counters zeroed, a 5 s run at `load`'s connections, counters dumped. Returns
/// (appzone, baseline) instructions per request.
fn callgrind_counts(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    url: &str,
    body: &Path,
    etag: &str,
    load: &Load<'_>,
) -> Result<(f64, f64), String> {
    Command::new("valgrind")
        .arg("--version")
        .output()
        .map_err(|_| {
            "--callgrind needs valgrind (Debian: `apt-get install valgrind`)".to_owned()
        })?;
    let mut counts = [0.0; 2];
    for (slot, target) in counts.iter_mut().zip([Target::Appzone, Target::Baseline]) {
        let name = match target {
            Target::Baseline => "callgrind-baseline",
            _ => "callgrind-appzone",
        };
        eprintln!("bench: callgrind: {name}");
        let wrapper = [
            "valgrind".to_owned(),
            "--tool=callgrind".to_owned(),
            format!(
                "--callgrind-out-file={}",
                work.path.join(format!("{name}.out")).display()
            ),
        ];
        let server = match target {
            Target::Baseline => {
                Server::baseline_under(Some(&wrapper), bins, work, name, ZONES, body, etag)?
            }
            _ => Server::appzone_under(Some(&wrapper), bins, work, name, url, None)?,
        };
        Wrk {
            duration: 3,
            ..*wrk
        }
        .run(&server, load)?;
        callgrind_control(&["-z", &server.pid().to_string()])?;
        let run = Wrk {
            duration: 5,
            ..*wrk
        }
        .run(&server, load)?;
        callgrind_control(&["-d", &server.pid().to_string()])?;
        // The dump after zeroing is the first numbered part: `<out>.1`.
        let dump = work.path.join(format!("{name}.out.1"));
        let text = std::fs::read_to_string(&dump)
            .map_err(|e| format!("cannot read {}: {e}", dump.display()))?;
        let total: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("summary:"))
            .and_then(|v| v.trim().parse().ok())
            .ok_or_else(|| format!("no summary line in {}", dump.display()))?;
        *slot = total as f64 / run.requests.max(1) as f64;
    }
    Ok((counts[0], counts[1]))
}

fn callgrind_control(args: &[&str]) -> Result<(), String> {
    let output = Command::new("callgrind_control")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run callgrind_control: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "callgrind_control {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

// ---- the PostgreSQL phase ------------------------------------------------------------------

fn postgres_url(choice: &Postgres) -> Option<String> {
    let url = match choice {
        Postgres::Off => return None,
        Postgres::Url(url) => url.clone(),
        Postgres::Auto => std::env::var("APPZONE_BENCH_POSTGRES_URL")
            .unwrap_or_else(|_| DEFAULT_POSTGRES.to_owned()),
    };
    let reachable = Command::new("psql")
        .args([url.as_str(), "-X", "-q", "-t", "-c", "SELECT 1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if reachable {
        Some(url)
    } else {
        eprintln!("bench: PostgreSQL at {url} is not reachable (or psql is missing); skipping it");
        None
    }
}

fn postgres_phase(
    opts: &Options,
    bins: &Binaries,
    work: &WorkDir,
    admin_url: &str,
    report: &mut Report,
) -> Result<(), String> {
    let schema = format!("bench_{}_{}", std::process::id(), unix_secs());
    psql(admin_url, &format!("CREATE SCHEMA {schema}"))?;
    let result = (|| {
        let sep = if admin_url.contains('?') { '&' } else { '?' };
        let url = format!("{admin_url}{sep}options=-c%20search_path%3D{schema}");
        let key = seed_org(bins, &url)?;
        let per_run = DELETE_IDS_PER_SECOND * opts.duration;
        let profiles = per_run * (opts.rounds as u64 + 1);
        psql(
            admin_url,
            &format!(
                "INSERT INTO {schema}.profiles (id, org_id, name, created_at) \
                 SELECT 'bench-' || i, 'bench', 'profile ' || i, 0 \
                 FROM generate_series(1, {profiles}) AS i; ANALYZE {schema}.profiles"
            ),
        )?;
        let server = Server::appzone(bins, work, "appzone-postgres", &url, None)?;
        let wrk = Wrk {
            dir: &work.path,
            threads: opts.threads,
            duration: opts.duration,
        };
        let mut next_profile = 1u64;
        let warm = Wrk {
            duration: opts.warmup,
            ..wrk
        };
        let delete = |first| Load {
            connections: 32,
            path: "/",
            headers: vec![],
            script_args: delete_args("delete", &key, first, opts.threads, None),
        };
        warm.run(&server, &delete(next_profile))?;
        next_profile += per_run;
        for round in 1..=opts.rounds {
            eprintln!("bench: round {round}/{}: delete (PostgreSQL)", opts.rounds);
            let run = wrk.run(&server, &delete(next_profile))?;
            next_profile += per_run;
            report.add("delete (PostgreSQL)", Target::Appzone, 32, run);
        }
        report
            .peak_rss
            .insert(server.name.clone(), server.peak_rss_kb());
        Ok(())
    })();
    // Drop the schema whatever happened; the server was stopped when `server` was dropped.
    if let Err(err) = psql(
        admin_url,
        &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"),
    ) {
        eprintln!("bench: warning: could not drop schema {schema}: {err}");
    }
    result
}

fn psql(url: &str, sql: &str) -> Result<String, String> {
    let output = Command::new("psql")
        .args([url, "-X", "-q", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .map_err(|e| format!("cannot run psql: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "psql failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

// ---- seeding -------------------------------------------------------------------------------

/// Creates organization `bench` and an admin key with the operator CLI; returns the key.
fn seed_org(bins: &Binaries, url: &str) -> Result<String, String> {
    // Only `migrate` and `serve` create a database; the other commands need one.
    server_cli(bins, url, &["migrate"])?;
    server_cli(bins, url, &["org", "create", "bench", "--name", "Bench"])?;
    let key = server_cli(
        bins,
        url,
        &[
            "key", "create", "--org", "bench", "--role", "admin", "--name", "bench",
        ],
    )?;
    Ok(key.trim().to_owned())
}

fn server_cli(bins: &Binaries, url: &str, args: &[&str]) -> Result<String, String> {
    let output = clean_env(Command::new(&bins.server))
        .arg("--database-url")
        .arg(url)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bins.server.display()))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "`appzone-server {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

fn sqlite_exec(db: &Path, sql: &str) -> Result<(), String> {
    sqlite_query(db, sql).map(|_| ())
}

fn sqlite_query(db: &Path, sql: &str) -> Result<String, String> {
    let output = Command::new("sqlite3")
        .arg(db)
        .arg(sql)
        .output()
        .map_err(|e| format!("cannot run sqlite3: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "sqlite3 failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// The server's settings come from its flags only: no `APPZONE_*` or `RUST_LOG` of the caller's
/// shell leaks in.
fn clean_env(mut command: Command) -> Command {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("APPZONE_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
}

// ---- servers -------------------------------------------------------------------------------

/// `program`, or `wrapper` with `program` appended to it.
fn wrapped(wrapper: Option<&[String]>, program: &Path) -> Command {
    match wrapper {
        Some([first, rest @ ..]) => {
            let mut command = Command::new(first);
            command.args(rest).arg(program);
            command
        }
        _ => Command::new(program),
    }
}

/// A child server process, stopped (SIGTERM, then SIGKILL) when dropped.
struct Server {
    name: String,
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn appzone(
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        url: &str,
        log: Option<&str>,
    ) -> Result<Self, String> {
        Self::appzone_under(None, bins, work, name, url, log)
    }

    /// appzone, run by `wrapper` (a command line the server's own is appended to) if given.
    fn appzone_under(
        wrapper: Option<&[String]>,
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        url: &str,
        log: Option<&str>,
    ) -> Result<Self, String> {
        let addr = free_port()?;
        let mut command = clean_env(wrapped(wrapper, &bins.server));
        command
            .arg("--database-url")
            .arg(url)
            .args(["serve", "--listen", &addr.to_string()])
            // One key sends everything: the default 1000/s per key would answer 429, and `0`
            // would take the limiter out of the measured path. A limit no run reaches keeps it in.
            .args(["--rate-limit-per-key", "1000000000"]);
        if let Some(level) = log {
            command.env("APPZONE_LOG", level);
        }
        Self::start(command, work, name, addr, "/readyz")
    }

    fn baseline(bins: &Binaries, work: &WorkDir, body: &Path, etag: &str) -> Result<Self, String> {
        Self::baseline_under(None, bins, work, "baseline", ZONES, body, etag)
    }

    /// A baseline answering `body` on `path` (one of the discovery listings).
    fn baseline_of(
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        path: &str,
        body: &Path,
        etag: &str,
    ) -> Result<Self, String> {
        Self::baseline_under(None, bins, work, name, (path, path), body, etag)
    }

    /// The baseline answering `body` on `route` (an axum template, so a parameterized route
    /// costs the baseline what routing costs), ready when `path` answers; run by `wrapper` (as
    /// for appzone) if given.
    fn baseline_under(
        wrapper: Option<&[String]>,
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        (route, path): (&str, &str),
        body: &Path,
        etag: &str,
    ) -> Result<Self, String> {
        let addr = free_port()?;
        let mut command = wrapped(wrapper, &bins.baseline);
        command
            .args(["--listen", &addr.to_string(), "--body-file"])
            .arg(body)
            .args([
                "--etag",
                etag,
                "--request-id",
                CAPTURE_REQUEST_ID,
                "--path",
                route,
            ]);
        Self::start(command, work, name, addr, path)
    }

    fn start(
        mut command: Command,
        work: &WorkDir,
        name: &str,
        addr: SocketAddr,
        ready_path: &str,
    ) -> Result<Self, String> {
        let log_path = work.path.join(format!("{name}.log"));
        let log = std::fs::File::create(&log_path)
            .map_err(|e| format!("cannot create {}: {e}", log_path.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start {name}: {e}"))?;
        let mut server = Server {
            name: name.to_owned(),
            child,
            addr,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!("{name} exited at start ({status}):\n{log}"));
            }
            if http_get(addr, ready_path, &[]).is_ok_and(|r| r.status == 200) {
                eprintln!("bench: {name} (pid {}) ready on {addr}", server.pid());
                return Ok(server);
            }
            if Instant::now() > deadline {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                return Err(format!("{name} did not become ready in 30 s:\n{log}"));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn rss_kb(&self) -> u64 {
        proc_status_kb(self.pid(), "VmRSS:").unwrap_or(0)
    }

    fn peak_rss_kb(&self) -> u64 {
        proc_status_kb(self.pid(), "VmHWM:").unwrap_or(0)
    }

    /// utime + stime of the whole process, in clock ticks.
    fn cpu_ticks(&self) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/stat", self.pid()))
            .ok()
            .and_then(|s| parse_stat_cpu_ticks(&s))
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let pid = self.pid().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> Result<SocketAddr, String> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| format!("cannot find a free port: {e}"))?;
    listener
        .local_addr()
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// `utime + stime` (fields 14 and 15) of a `/proc/PID/stat` line.
fn parse_stat_cpu_ticks(stat: &str) -> Option<u64> {
    stat_fields_sum(stat, 11)
}

/// `cutime + cstime` (fields 16 and 17): CPU of the waited-for children, here wrk.
fn parse_stat_children_ticks(stat: &str) -> Option<u64> {
    stat_fields_sum(stat, 13)
}

fn stat_fields_sum(stat: &str, first: usize) -> Option<u64> {
    // The command name (field 2) may contain spaces; fields after it start past the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let a: u64 = fields.get(first)?.parse().ok()?;
    let b: u64 = fields.get(first + 1)?.parse().ok()?;
    Some(a + b)
}

/// CPU ticks of this process's waited-for children (the wrk runs).
fn children_cpu_ticks() -> u64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| parse_stat_children_ticks(&s))
        .unwrap_or(0)
}

fn proc_status_kb(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

fn clock_ticks_per_second() -> u64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(100)
}

/// Samples a process's RSS every 250 ms on a thread until stopped.
struct RssSampler {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u64>>,
}

impl RssSampler {
    fn start(pid: u32) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                if let Some(kb) = proc_status_kb(pid, "VmRSS:") {
                    samples.push(kb);
                }
                std::thread::sleep(Duration::from_millis(250));
            }
            samples
        });
        Self { stop, thread }
    }

    fn stop(self) -> Vec<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

// ---- a minimal HTTP/1.1 GET, for readiness and capturing the answer ------------------------

struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn http_get(
    addr: SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<HttpResponse, String> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map_err(|e| format!("connect {addr}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .map_err(|e| e.to_string())?;
    let mut head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (name, value) in headers {
        let _ = write!(head, "{name}: {value}\r\n");
    }
    head.push_str("\r\n");
    stream
        .write_all(head.as_bytes())
        .map_err(|e| format!("send to {addr}: {e}"))?;
    let mut raw = Vec::new();
    stream
        .read_to_end(&mut raw)
        .map_err(|e| format!("read from {addr}: {e}"))?;
    parse_http_response(&raw)
}

fn parse_http_response(raw: &[u8]) -> Result<HttpResponse, String> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("incomplete HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("malformed status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if let Some(len) = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse::<usize>().ok())
    {
        body.truncate(len);
    }
    Ok(HttpResponse {
        status,
        headers,
        body,
    })
}

// ---- wrk -----------------------------------------------------------------------------------

#[derive(Clone, Copy)]
struct Wrk<'a> {
    /// Holds `static.lua` and `dynamic.lua` (written by [`WorkDir::create`]).
    dir: &'a Path,
    threads: usize,
    duration: u64,
}

struct Load<'a> {
    connections: usize,
    path: &'a str,
    headers: Vec<String>,
    /// Empty: the static script (wrk's prebuilt request); else the dynamic script's arguments.
    script_args: Vec<String>,
}

/// One wrk run against one server, with the server's CPU and memory around it.
#[derive(Debug, Clone, Default)]
struct RunResult {
    requests: u64,
    seconds: f64,
    errors: u64,
    p50_us: f64,
    p99_us: f64,
    p999_us: f64,
    rss_kb: u64,
    cpu_us_per_request: f64,
    /// CPU of wrk itself per request: with the server's, it shows when the machine is full.
    wrk_cpu_us_per_request: f64,
}

impl RunResult {
    fn rps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.requests as f64 / self.seconds
        } else {
            0.0
        }
    }
}

impl Wrk<'_> {
    fn run(&self, server: &Server, load: &Load<'_>) -> Result<RunResult, String> {
        let url = format!("http://{}{}", server.addr, load.path);
        let mut command = Command::new("wrk");
        command
            .arg("-t")
            .arg(self.threads.min(load.connections).to_string())
            .arg("-c")
            .arg(load.connections.to_string())
            .arg("-d")
            .arg(format!("{}s", self.duration))
            .args(["--timeout", "5s", "-s"])
            .arg(self.dir.join(if load.script_args.is_empty() {
                "static.lua"
            } else {
                "dynamic.lua"
            }));
        for header in &load.headers {
            command.arg("-H").arg(header);
        }
        command.arg(&url);
        if !load.script_args.is_empty() {
            command.arg("--").args(&load.script_args);
        }
        let ticks_before = server.cpu_ticks();
        let wrk_before = children_cpu_ticks();
        let output = command
            .output()
            .map_err(|e| format!("cannot run wrk: {e}"))?;
        let ticks = server.cpu_ticks().saturating_sub(ticks_before);
        let wrk_ticks = children_cpu_ticks().saturating_sub(wrk_before);
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with("APPZONE_WRK "))
            .ok_or_else(|| {
                format!(
                    "wrk printed no result against {}: {}{}",
                    server.name,
                    stdout,
                    String::from_utf8_lossy(&output.stderr)
                )
            })?;
        let mut result = parse_wrk_line(line)?;
        result.rss_kb = server.rss_kb();
        if result.requests > 0 {
            let per_request = 1e6 / clock_ticks_per_second() as f64 / result.requests as f64;
            result.cpu_us_per_request = ticks as f64 * per_request;
            result.wrk_cpu_us_per_request = wrk_ticks as f64 * per_request;
        }
        Ok(result)
    }
}

fn key_values(line: &str) -> BTreeMap<String, String> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn parse_wrk_line(line: &str) -> Result<RunResult, String> {
    let values = key_values(line);
    let get = |k: &str| -> Result<f64, String> {
        values
            .get(k)
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| format!("wrk result without {k}: {line}"))
    };
    let errors = [
        "status_errors",
        "connect_errors",
        "read_errors",
        "write_errors",
        "timeouts",
    ]
    .iter()
    .map(|k| get(k))
    .sum::<Result<f64, String>>()?;
    Ok(RunResult {
        requests: get("requests")? as u64,
        seconds: get("duration_us")? / 1e6,
        errors: errors as u64,
        p50_us: get("p50_us")?,
        p99_us: get("p99_us")?,
        p999_us: get("p999_us")?,
        ..RunResult::default()
    })
}

// ---- the report ----------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Appzone,
    AppzoneLogWarn,
    Baseline,
}

impl Target {
    fn label(self) -> &'static str {
        match self {
            Target::Appzone => "appzone",
            Target::AppzoneLogWarn => "appzone, APPZONE_LOG=warn",
            Target::Baseline => "bare axum baseline",
        }
    }
}

struct LongRun {
    rss_after_warmup_kb: u64,
    rss_before_kb: u64,
    rss_after_kb: u64,
    samples: Vec<u64>,
    run: RunResult,
}

struct Report {
    /// (scenario order, scenario, target, connections) → runs in round order.
    runs: BTreeMap<(usize, String, Target, usize), Vec<RunResult>>,
    order: Vec<String>,
    long: Option<LongRun>,
    /// `perf report` of appzone under the 64-connection listing (`--perf`).
    profile: Option<String>,
    /// User-space instructions per listing, appzone and baseline (`--callgrind`).
    instructions: Option<(f64, f64)>,
    client: Option<BTreeMap<String, String>>,
    peak_rss: BTreeMap<String, u64>,
    notes: Vec<String>,
    body_bytes: usize,
    rounds: usize,
    duration: u64,
    threads: usize,
    wrk_version: String,
    load_before: String,
    load_after: String,
    elapsed: Duration,
}

fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(*v), hi.max(*v))
        })
}

impl Report {
    fn new(opts: &Options, wrk_version: String) -> Self {
        Self {
            runs: BTreeMap::new(),
            order: Vec::new(),
            long: None,
            profile: None,
            instructions: None,
            client: None,
            peak_rss: BTreeMap::new(),
            notes: Vec::new(),
            body_bytes: 0,
            rounds: opts.rounds,
            duration: opts.duration,
            threads: opts.threads,
            wrk_version,
            load_before: load_average(),
            load_after: String::new(),
            elapsed: Duration::ZERO,
        }
    }

    fn add(&mut self, scenario: &str, target: Target, connections: usize, run: RunResult) {
        eprintln!(
            "bench:   {:<26} {:>9.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  p99.9 {:>7.2} ms  \
             errors {}  cpu {:.1} µs/req (wrk {:.1})",
            target.label(),
            run.rps(),
            run.p50_us / 1e3,
            run.p99_us / 1e3,
            run.p999_us / 1e3,
            run.errors,
            run.cpu_us_per_request,
            run.wrk_cpu_us_per_request
        );
        let index = match self.order.iter().position(|s| s == scenario) {
            Some(i) => i,
            None => {
                self.order.push(scenario.to_owned());
                self.order.len() - 1
            }
        };
        self.runs
            .entry((index, scenario.to_owned(), target, connections))
            .or_default()
            .push(run);
    }

    fn runs_of(&self, scenario: &str, target: Target, connections: usize) -> Option<&[RunResult]> {
        self.runs
            .iter()
            .find(|((_, s, t, c), _)| s == scenario && *t == target && *c == connections)
            .map(|(_, runs)| runs.as_slice())
    }

    fn median_rps(&self, scenario: &str, target: Target, connections: usize) -> Option<f64> {
        let runs = self.runs_of(scenario, target, connections)?;
        Some(median(
            &mut runs.iter().map(RunResult::rps).collect::<Vec<_>>(),
        ))
    }

    fn successes(&self, scenario: &str) -> u64 {
        self.runs
            .iter()
            .filter(|((_, s, _, _), _)| s == scenario)
            .flat_map(|(_, runs)| runs)
            .map(|r| r.requests.saturating_sub(r.errors))
            .sum()
    }

    /// appzone / baseline for a scenario: (ratio of medians, per-round min, per-round max).
    fn ratio(
        &self,
        scenario: &str,
        connections: usize,
        metric: fn(&RunResult) -> f64,
    ) -> Option<(f64, f64, f64)> {
        let a = self.runs_of(scenario, Target::Appzone, connections)?;
        let b = self.runs_of(scenario, Target::Baseline, connections)?;
        let ma = median(&mut a.iter().map(metric).collect::<Vec<_>>());
        let mb = median(&mut b.iter().map(metric).collect::<Vec<_>>());
        let per_round: Vec<f64> = a
            .iter()
            .zip(b)
            .map(|(x, y)| metric(x) / metric(y))
            .collect();
        let (lo, hi) = min_max(&per_round);
        Some((ma / mb, lo, hi))
    }

    fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "## appzone load benchmark\n");
        let _ = writeln!(out, "{}\n", machine_line());
        let _ = writeln!(
            out,
            "{} round(s) of {} s per scenario and server, A B A B; wrk ({}) with {} thread(s), \
             over 127.0.0.1; zone listing body {} bytes. Load average before {}, after {}; \
             whole run {:.0} s.\n",
            self.rounds,
            self.duration,
            self.wrk_version,
            self.threads,
            self.body_bytes,
            self.load_before,
            self.load_after,
            self.elapsed.as_secs_f64()
        );
        let _ = writeln!(
            out,
            "| scenario | server | conns | req/s median [min–max] | p50 ms | p99 ms | p99.9 ms \
             | errors | RSS MB | server CPU µs/req | wrk CPU µs/req |"
        );
        let _ = writeln!(out, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
        for ((_, scenario, target, conns), runs) in &self.runs {
            let mut rps: Vec<f64> = runs.iter().map(RunResult::rps).collect();
            let (lo, hi) = min_max(&rps);
            let med =
                |f: fn(&RunResult) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
            let errors: u64 = runs.iter().map(|r| r.errors).sum();
            let rss = runs.iter().map(|r| r.rss_kb).max().unwrap_or(0);
            let _ = writeln!(
                out,
                "| {scenario} | {} | {conns} | {:.0} [{:.0}–{:.0}] | {:.2} | {:.2} | {:.2} | {errors} \
                 | {:.1} | {:.1} | {:.1} |",
                target.label(),
                median(&mut rps),
                lo,
                hi,
                med(|r| r.p50_us) / 1e3,
                med(|r| r.p99_us) / 1e3,
                med(|r| r.p999_us) / 1e3,
                rss as f64 / 1024.0,
                med(|r| r.cpu_us_per_request),
                med(|r| r.wrk_cpu_us_per_request),
            );
        }

        let _ = writeln!(
            out,
            "\n### Ratios appzone / baseline (median of rounds; per-round range)\n"
        );
        let _ = writeln!(
            out,
            "| scenario | conns | throughput | p99 latency | CPU per request |"
        );
        let _ = writeln!(out, "|---|--:|--:|--:|--:|");
        for (scenario, conns) in [
            ("list zones", 16),
            ("list zones", 64),
            ("list zones", 256),
            ("list zones, If-None-Match (304)", 64),
            ("list providers", 64),
            ("list regions", 64),
        ] {
            let cell = |metric: fn(&RunResult) -> f64| {
                self.ratio(scenario, conns, metric)
                    .map_or("–".to_owned(), |(r, lo, hi)| {
                        format!("{r:.2}× [{lo:.2}–{hi:.2}]")
                    })
            };
            let _ = writeln!(
                out,
                "| {scenario} | {conns} | {} | {} | {} |",
                cell(RunResult::rps),
                cell(|r| r.p99_us),
                cell(|r| r.cpu_us_per_request)
            );
        }

        if let Some((appzone, baseline)) = self.instructions {
            let _ = writeln!(
                out,
                "\nUser-space instructions per listing (callgrind, 8 connections): appzone \
                 {appzone:.0}, baseline {baseline:.0}: {:.2}×.",
                appzone / baseline
            );
        }

        let _ = writeln!(out, "\n### Targets\n");
        let check = |ok: bool| if ok { "met" } else { "MISSED" };
        if let Some((r, lo, hi)) = self.ratio("list zones", 64, RunResult::rps) {
            let _ = writeln!(
                out,
                "- List zones throughput at 64 connections ≥ 0.90× baseline: {r:.2}× \
                 [{lo:.2}–{hi:.2}] — {}",
                check(r >= 0.90)
            );
        }
        if let Some((r, lo, hi)) = self.ratio("list zones", 64, |r| r.p99_us) {
            let _ = writeln!(
                out,
                "- List zones p99 at 64 connections ≤ 1.5× baseline: {r:.2}× [{lo:.2}–{hi:.2}] — {}",
                check(r <= 1.5)
            );
        }
        for (scenario, goal) in [("delete (SQLite)", 2000.0), ("delete (PostgreSQL)", 3000.0)] {
            match (
                self.median_rps(scenario, Target::Appzone, 32),
                self.runs_of(scenario, Target::Appzone, 32),
            ) {
                (Some(rps), Some(runs)) => {
                    let errors: u64 = runs.iter().map(|r| r.errors).sum();
                    let _ = writeln!(
                        out,
                        "- {scenario} ≥ {goal:.0}/s at 32 connections: {rps:.0}/s, {errors} \
                         errors — {}",
                        check(rps >= goal && errors == 0)
                    );
                }
                _ => {
                    let _ = writeln!(out, "- {scenario} ≥ {goal:.0}/s: not run");
                }
            }
        }
        match &self.long {
            Some(long) => {
                let max = long
                    .samples
                    .iter()
                    .copied()
                    .max()
                    .unwrap_or(long.rss_after_kb);
                let half = long.samples.len() / 2;
                let first_half = long.samples[..half].iter().copied().max().unwrap_or(0);
                let second_half = long.samples[half..].iter().copied().max().unwrap_or(0);
                let grew = second_half > first_half + 2048;
                let _ = writeln!(
                    out,
                    "- RSS < 40 MB through {} requests at 64 connections ({:.0} req/s, {} \
                     errors): after warm-up {:.1} MB, before the run {:.1} MB, max during {:.1} \
                     MB, after {:.1} MB; max of first half {:.1} MB vs second half {:.1} MB — {}",
                    long.run.requests,
                    long.run.rps(),
                    long.run.errors,
                    long.rss_after_warmup_kb as f64 / 1024.0,
                    long.rss_before_kb as f64 / 1024.0,
                    max as f64 / 1024.0,
                    long.rss_after_kb as f64 / 1024.0,
                    first_half as f64 / 1024.0,
                    second_half as f64 / 1024.0,
                    check(max < 40 * 1024 && !grew)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "- RSS through a million requests: not run (--quick or --listing-only)"
                );
            }
        }
        match &self.client {
            Some(c) => {
                let get = |k: &str| c.get(k).map_or("?", String::as_str);
                let ratio: f64 = get("ratio_p50").parse().unwrap_or(f64::NAN);
                let _ = writeln!(
                    out,
                    "- Client list_zones within 1.10× of a raw reqwest GET (warm connection, {} \
                     calls each): p50 {} µs vs {} µs = {ratio:.3}×, mean ratio {} — {}",
                    get("samples"),
                    get("client_p50_us"),
                    get("raw_p50_us"),
                    get("ratio_mean"),
                    check(ratio <= 1.10)
                );
            }
            None => {
                let _ = writeln!(out, "- Client within 1.10× of raw reqwest: not run");
            }
        }
        if !self.peak_rss.is_empty() {
            let peaks: Vec<String> = self
                .peak_rss
                .iter()
                .map(|(name, kb)| format!("{name} {:.1} MB", *kb as f64 / 1024.0))
                .collect();
            let _ = writeln!(
                out,
                "\nPeak RSS (VmHWM) per server process: {}.",
                peaks.join(", ")
            );
        }
        if let Some(profile) = &self.profile {
            let _ = writeln!(out, "\n### Profile\n\n{profile}");
        }
        for note in &self.notes {
            let _ = writeln!(out, "\n{note}");
        }
        out
    }
}

fn machine_line() -> String {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let memory = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(String::new(), |kb| {
            format!(", {:.0} GiB RAM", kb as f64 / 1048576.0)
        });
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(crate::root())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let dirty = Command::new("git")
        .args(["status", "--porcelain", "--", "crates"])
        .current_dir(crate::root())
        .output()
        .is_ok_and(|o| !o.stdout.is_empty());
    format!(
        "Machine: {cores} cores ({cpu}){memory}, Linux {kernel}; commit {commit}{}.",
        if dirty {
            " with uncommitted changes under crates/"
        } else {
            ""
        }
    )
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The run's temporary directory, removed when dropped unless `--keep`.
struct WorkDir {
    path: PathBuf,
    keep: bool,
}

impl WorkDir {
    fn create(keep: bool) -> Result<Self, String> {
        let path = std::env::temp_dir().join(format!(
            "appzone-bench-{}-{}",
            std::process::id(),
            unix_secs()
        ));
        std::fs::create_dir_all(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        let dir = Self { path, keep };
        for (name, text) in [
            ("static.lua", WRK_DONE.to_owned()),
            ("dynamic.lua", format!("{WRK_DYNAMIC}{WRK_DONE}")),
        ] {
            let file = dir.path.join(name);
            std::fs::write(&file, text)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_the_wrk_done_line() {
        let line = "APPZONE_WRK requests=1000 duration_us=2000000 status_errors=3 \
                    connect_errors=0 read_errors=1 write_errors=0 timeouts=2 p50_us=100 \
                    p75_us=150 p90_us=200 p99_us=900 p999_us=2500 max_us=9000";
        let run = parse_wrk_line(line).unwrap();
        assert_eq!(run.requests, 1000);
        assert_eq!(run.errors, 6);
        assert!((run.rps() - 500.0).abs() < 1e-9);
        assert!((run.p999_us - 2500.0).abs() < 1e-9);
        assert!(parse_wrk_line("APPZONE_WRK requests=1").is_err());
    }

    #[test]
    fn reads_cpu_ticks_past_a_command_name_with_spaces() {
        let stat = "1234 (appzone server) S 1 1234 1234 0 -1 4194560 500 0 0 0 \
                    250 75 0 0 20 0 3 0 100 1000000 300";
        assert_eq!(parse_stat_cpu_ticks(stat), Some(325));
        assert_eq!(parse_stat_children_ticks(stat), Some(0));
        assert_eq!(parse_stat_cpu_ticks("garbage"), None);
    }

    #[test]
    fn medians_and_ranges() {
        assert!((median(&mut [3.0, 1.0, 2.0]) - 2.0).abs() < 1e-9);
        assert!((median(&mut [4.0, 1.0, 2.0, 3.0]) - 2.5).abs() < 1e-9);
        assert!((median(&mut []) - 0.0).abs() < 1e-9);
        assert_eq!(min_max(&[2.0, 5.0, 1.0]), (1.0, 5.0));
    }

    #[test]
    fn parses_a_response_and_its_headers() {
        let raw = b"HTTP/1.1 200 OK\r\nETag: W/\"abc\"\r\ncontent-length: 2\r\n\r\n{}extra";
        let response = parse_http_response(raw).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("etag"), Some("W/\"abc\""));
        assert_eq!(response.body, b"{}");
        assert!(parse_http_response(b"HTTP/1.1 200").is_err());
    }

    #[test]
    fn options() {
        let quick = Options::parse(&["--quick", "--no-postgres"])
            .unwrap()
            .unwrap();
        assert_eq!(quick.rounds, 1);
        assert_eq!(quick.long_requests, 0);
        assert_eq!(quick.postgres, Postgres::Off);
        assert!(Options::parse(&["--callgrind"]).unwrap().unwrap().callgrind);
        let listing = Options::parse(&["--listing-only"]).unwrap().unwrap();
        assert!(listing.listing_only && !listing.client);
        assert_eq!(listing.long_requests, 0);
        assert_eq!(listing.postgres, Postgres::Off);
        assert!(Options::parse(&["--rounds"]).is_err());
        assert!(Options::parse(&["--bogus"]).is_err());
        assert!(Options::parse(&["--help"]).unwrap().is_none());
    }
}

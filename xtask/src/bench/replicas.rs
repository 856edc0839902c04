//! `cargo xtask bench --replicas`: three appzone replicas on one PostgreSQL, as a platform team
//! runs them. For the per-replica limits and, when Redis answers, for the limits kept in Redis
//! (`serve --redis-url`): the listing's throughput, p99 and CPU through one replica (the other
//! two idle), so that the two modes differ by the Redis round trip alone; and how long a key
//! revoked by the operator CLI keeps working, on the slowest of the three replicas.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};

use super::load::{Load, RunResult, Wrk};
use super::options::Options;
use super::report::{machine_line, median, millis, min_max, per_second};
use super::servers::Server;
use super::{load, seed, write_report, Binaries, WorkDir, ZONES_PATH};
use crate::http;
use crate::process::stdout_of;

/// Revocations measured per mode.
const REVOCATIONS: usize = 5;
/// The longest a revoked key may keep working before the run gives up on it: the key cache's
/// TTL (10 s) and then some.
const REVOCATION_LIMIT: Duration = Duration::from_secs(15);

/// One way to run the three replicas.
struct Mode {
    name: &'static str,
    replicas: Vec<Server>,
    runs: Vec<RunResult>,
    revocations: Vec<Duration>,
}

pub(super) fn run(opts: &Options) -> Result<()> {
    let admin_url = opts
        .postgres
        .clone()
        .context("--replicas runs on PostgreSQL: drop --no-postgres")?;
    ensure!(
        seed::postgres_reachable(&admin_url),
        "PostgreSQL at {admin_url} is not reachable (set APPZONE_BENCH_POSTGRES_URL)"
    );
    let wrk_version = load::wrk_version()?;
    let bins = Binaries::build()?;
    let work = WorkDir::create(opts.keep)?;
    let report = seed::in_fresh_schema(&admin_url, "bench_replicas", |url, _| {
        measure(opts, &bins, &work, url, &wrk_version)
    })?;
    write_report(&opts.output, &report)
}

fn measure(
    opts: &Options,
    bins: &Binaries,
    work: &WorkDir,
    url: &str,
    wrk_version: &str,
) -> Result<String> {
    let key = seed::org_and_key(bins, url)?;
    let mut notes = Vec::new();
    let mut modes = vec![start(bins, work, url, "per-replica limits", &[])?];
    match &opts.redis {
        Some(redis) if redis_answers(redis) => {
            modes.push(start(
                bins,
                work,
                url,
                "limits in Redis",
                &["--redis-url", redis.as_str()],
            )?);
        }
        Some(redis) => notes.push(format!(
            "Redis-backed limits skipped: nothing answers at {redis} (set \
             APPZONE_BENCH_REDIS_URL)."
        )),
        None => notes.push("Redis-backed limits skipped (--no-redis).".to_owned()),
    }
    let wrk = Wrk {
        dir: &work.path,
        duration: opts.duration,
    };
    let header = format!("x-api-key: {key}");
    let listing = Load::get(64, ZONES_PATH, &[&header]);
    for mode in &modes {
        wrk.lasting(opts.warmup).run(&mode.replicas[0], &listing)?;
    }
    for round in 0..opts.rounds {
        for mode in &mut modes {
            let result = wrk.run(&mode.replicas[0], &listing)?;
            eprintln!(
                "bench: replicas round {}: {}: {:.0} req/s, p99 {:.0} µs",
                round + 1,
                mode.name,
                result.rps(),
                result.p99_us
            );
            mode.runs.push(result);
        }
    }
    for mode in &mut modes {
        for _ in 0..REVOCATIONS {
            mode.revocations
                .push(revocation(bins, url, &mode.replicas)?);
        }
        eprintln!(
            "bench: replicas: {}: revoked keys refused everywhere after {:?}",
            mode.name, mode.revocations
        );
    }
    Ok(render(opts, wrk_version, &modes, &notes))
}

/// Three replicas on `url`, with `extra` flags of `serve`.
fn start(
    bins: &Binaries,
    work: &WorkDir,
    url: &str,
    name: &'static str,
    extra: &[&str],
) -> Result<Mode> {
    let replicas = (1..=3)
        .map(|n| {
            let label = format!("{}-{n}", name.replace(' ', "-"));
            Server::appzone_with(bins, work, &label, url, extra, &[], "/readyz")
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Mode {
        name,
        replicas,
        runs: Vec::new(),
        revocations: Vec::new(),
    })
}

/// Whether something accepts connections at the host and port of a `redis://` URL.
fn redis_answers(url: &str) -> bool {
    let rest = url
        .trim_start_matches("redis://")
        .rsplit('@')
        .next()
        .unwrap_or_default();
    let host_port = rest.split('/').next().unwrap_or_default();
    let addr = if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:6379")
    };
    addr.parse()
        .ok()
        .is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok())
}

/// A GET, tried again once when the connection it reused had been closed by the server (its
/// idle-connection close: the pooled connections of the readiness checks wait through the
/// throughput runs).
fn get(addr: std::net::SocketAddr, headers: &[(&str, &str)]) -> Result<http::Answer> {
    http::get(addr, ZONES_PATH, headers).or_else(|_| http::get(addr, ZONES_PATH, headers))
}

/// Creates a key with the operator CLI, uses it on every replica so each has it cached, revokes
/// it with the CLI, and returns how long after the revocation committed (the CLI exited) the
/// slowest replica first refused it.
fn revocation(bins: &Binaries, url: &str, replicas: &[Server]) -> Result<Duration> {
    let key = stdout_of(
        bins.server_cli(url).args([
            "key", "create", "--org", "bench", "--role", "admin", "--name", "revoked",
        ]),
        Duration::from_secs(60),
    )?;
    let key = key.trim().to_owned();
    let headers = [("x-api-key", key.as_str())];
    for replica in replicas {
        let answer = get(replica.addr, &headers)?;
        ensure!(answer.status == 200, "a new key answered {}", answer.status);
    }
    stdout_of(
        bins.server_cli(url).args(["key", "revoke", &key[4..16]]),
        Duration::from_secs(60),
    )?;
    let committed = Instant::now();
    let mut pending: Vec<&Server> = replicas.iter().collect();
    while !pending.is_empty() {
        if committed.elapsed() > REVOCATION_LIMIT {
            bail!("a revoked key still worked after {REVOCATION_LIMIT:?}");
        }
        let mut still = Vec::new();
        for replica in pending {
            if get(replica.addr, &headers)?.status != 401 {
                still.push(replica);
            }
        }
        pending = still;
        if !pending.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    Ok(committed.elapsed())
}

fn render(opts: &Options, wrk_version: &str, modes: &[Mode], notes: &[String]) -> String {
    let mut text = String::from("# appzone: three replicas on one PostgreSQL\n\n");
    text.push_str(&format!(
        "{} {wrk_version}; {} round(s) of {} s per mode, one wrk thread, 64 connections, \
         through replica 1 (the other two idle); median, range in brackets.\n\n",
        machine_line(),
        opts.rounds,
        opts.duration
    ));
    text.push_str(
        "| limits | listing req/s | p50 | p99 | server CPU per request | revoked key refused \
         by all 3 (slowest; median, range of 5) |\n|---|--:|--:|--:|--:|--:|\n",
    );
    let base_rps = modes.first().map(|mode| rps_median(&mode.runs));
    for mode in modes {
        let rps: Vec<f64> = mode.runs.iter().map(RunResult::rps).collect();
        let (low, high) = min_max(&rps);
        let rps_median = median(rps);
        let ratio = match base_rps {
            Some(base) if base > 0.0 && mode.name != modes[0].name => {
                format!(" ({:.2}×)", rps_median / base)
            }
            _ => String::new(),
        };
        let p50 = median(mode.runs.iter().map(|r| r.p50_us));
        let p99 = median(mode.runs.iter().map(|r| r.p99_us));
        let cpu = median(mode.runs.iter().map(|r| r.cpu_us_per_request));
        let revoked: Vec<f64> = mode.revocations.iter().map(Duration::as_secs_f64).collect();
        let (fastest, slowest) = min_max(&revoked);
        let revoked_median = median(revoked);
        text.push_str(&format!(
            "| {} | {} [{}–{}]{ratio} | {:.0} µs | {:.0} µs | {:.1} µs | {} [{}–{}] |\n",
            mode.name,
            per_second(rps_median),
            per_second(low),
            per_second(high),
            p50,
            p99,
            cpu,
            millis(revoked_median),
            millis(fastest),
            millis(slowest),
        ));
    }
    for note in notes {
        text.push_str(&format!("\n{note}\n"));
    }
    text
}

fn rps_median(runs: &[RunResult]) -> f64 {
    median(runs.iter().map(RunResult::rps))
}

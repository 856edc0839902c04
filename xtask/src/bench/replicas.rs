//! `cargo xtask bench --replicas`: three appzone replicas on one PostgreSQL, as a platform team
//! runs them. For the per-replica limits and, when Redis answers, for the limits kept in Redis
//! (`serve --redis-url`): the listing's throughput, p99 and CPU through one replica (the other
//! two idle), so that the two modes differ by the Redis round trip alone; and how long a key
//! revoked by the operator CLI keeps working, on the slowest of the three replicas.

use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Result};

use super::servers::Server;
use super::wrk::{spread, Load, Run, Wrk};
use super::{BenchArgs, Binaries, WorkDir, ZONES};
use crate::http;

/// Revocations measured per mode.
const REVOCATIONS: usize = 5;
/// The longest a revoked key may keep working before the run gives up on it: the key cache's
/// TTL (10 s) and then some.
const REVOCATION_LIMIT: Duration = Duration::from_secs(15);

pub(super) fn run(args: &BenchArgs) -> Result<()> {
    let admin_url = &args.postgres;
    ensure!(
        !args.no_postgres,
        "--replicas runs on PostgreSQL: drop --no-postgres"
    );
    ensure!(
        super::postgres_reachable(admin_url),
        "PostgreSQL at {admin_url} is not reachable (set APPZONE_BENCH_POSTGRES_URL)"
    );
    let (bins, work) = (Binaries::build()?, WorkDir::create(args.keep)?);
    super::in_fresh_schema(admin_url, |url, _| measure(args, &bins, &work, url))
}

fn measure(args: &BenchArgs, bins: &Binaries, work: &WorkDir, url: &str) -> Result<()> {
    let key = bins.org_and_key(url)?;
    let mut modes = vec![("per-replica limits", Vec::new())];
    let redis = ["--redis-url", args.redis_url.as_str()];
    if args.no_redis {
        eprintln!("bench: Redis-backed limits skipped (--no-redis)");
    } else if redis_answers(&args.redis_url) {
        modes.push(("limits in Redis", redis.to_vec()));
    } else {
        eprintln!(
            "bench: Redis-backed limits skipped: nothing answers at {}",
            args.redis_url
        );
    }
    let modes = modes.into_iter().map(|(name, extra)| {
        let replicas = (1..=3).map(|n| {
            let label = format!("{}-{n}", name.replace(' ', "-"));
            Server::appzone(bins, work, &label, url, &extra)
        });
        Ok((name, replicas.collect::<Result<Vec<_>>>()?))
    });
    let modes = modes.collect::<Result<Vec<_>>>()?;
    let wrk = Wrk {
        dir: &work.path,
        seconds: args.duration(),
    };
    let listing = Load::new(64, ZONES.1, &["list", &key]);
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); modes.len()];
    for (_, replicas) in &modes {
        wrk.lasting(args.warmup()).run(&replicas[0], &listing)?;
    }
    for round in 1..=args.rounds() {
        for ((name, replicas), runs) in modes.iter().zip(&mut runs) {
            let run = wrk.run(&replicas[0], &listing)?;
            eprintln!("bench: round {round}: {name}: {:.0} req/s", run.rps());
            runs.push(run);
        }
    }
    println!(
        "\n| limits | listing req/s | p50 | p99 | server CPU per request | revoked key refused by \
         all 3 (slowest; median, range of {REVOCATIONS}) |\n|---|--:|--:|--:|--:|--:|"
    );
    let first_rps = spread(runs[0].iter().map(Run::rps)).0;
    for ((name, replicas), runs) in modes.iter().zip(&runs) {
        let mut revoked = Vec::new();
        for _ in 0..REVOCATIONS {
            revoked.push(revocation(bins, url, replicas)?.as_secs_f64() * 1e3);
        }
        let (rps, low, high) = spread(runs.iter().map(Run::rps));
        let figure = |f: fn(&Run) -> f64| spread(runs.iter().map(f)).0;
        let (median, fastest, slowest) = spread(revoked);
        println!(
            "| {name} | {rps:.0} [{low:.0}–{high:.0}] ({:.2}×) | {:.0} µs | {:.0} µs | {:.1} µs \
             | {median:.2} ms [{fastest:.2}–{slowest:.2}] |",
            rps / first_rps,
            figure(|r| r.p50_us),
            figure(|r| r.p99_us),
            figure(|r| r.cpu_us_per_request)
        );
    }
    Ok(())
}

/// Whether something accepts connections at the host and port of a `redis://` URL.
fn redis_answers(url: &str) -> bool {
    let rest = url.trim_start_matches("redis://").rsplit('@').next();
    let host_port = rest.and_then(|r| r.split('/').next()).unwrap_or_default();
    let with_port = match host_port.contains(':') {
        true => host_port.to_owned(),
        false => format!("{host_port}:6379"),
    };
    let addr = with_port.to_socket_addrs().ok().and_then(|mut a| a.next());
    addr.is_some_and(|addr| TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok())
}

/// A GET, tried again once when the connection it reused had been closed by the server (its
/// idle-connection close: the pooled connections of the readiness checks wait through the
/// throughput runs).
fn get(addr: SocketAddr, key: &str) -> Result<u16> {
    let headers = [("x-api-key", key)];
    let answer = http::get(addr, ZONES.1, &headers).or_else(|_| http::get(addr, ZONES.1, &headers));
    Ok(answer?.status)
}

/// Creates a key with the operator CLI, uses it on every replica so that each has it cached,
/// revokes it with the CLI, and returns how long after the revocation committed (the CLI
/// exited) the slowest replica first refused it.
fn revocation(bins: &Binaries, url: &str, replicas: &[Server]) -> Result<Duration> {
    let key = bins.run_cli(url, "key create --org bench --role admin --name revoked")?;
    let key = key.trim();
    for replica in replicas {
        let status = get(replica.addr, key)?;
        ensure!(status == 200, "a new key answered {status}");
    }
    bins.run_cli(url, &format!("key revoke {}", &key[4..16]))?;
    let committed = Instant::now();
    let mut pending: Vec<&Server> = replicas.iter().collect();
    loop {
        let mut still = Vec::new();
        for replica in pending {
            if get(replica.addr, key)? != 401 {
                still.push(replica);
            }
        }
        pending = still;
        if pending.is_empty() {
            return Ok(committed.elapsed());
        }
        if committed.elapsed() > REVOCATION_LIMIT {
            bail!("a revoked key still worked after {REVOCATION_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

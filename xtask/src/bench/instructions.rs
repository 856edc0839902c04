//! Instructions per request under valgrind's callgrind: the speed guard `cargo xtask
//! instructions` (a step of `cargo xtask ci`), `--callgrind`'s counts, and `--scale`'s.

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::servers::{capture, Captured, Server};
use super::wrk::{Load, Wrk};
use super::{Binaries, WorkDir, ZONES};
use crate::process::{output, stdout_of, PROBE_TIMEOUT};

/// Seconds of load before the counters are zeroed, and of the counted run.
const WARMUP_SECONDS: u64 = 3;
const COUNTED_SECONDS: u64 = 5;

/// The alarm of the speed guard: appzone may cost at most this many times the bare route's
/// instructions per zone listing, both counted in the same run. It is the stock request path's
/// measured ratio plus 10% (3.39x at `a199964`: 63,683 against 18,771; BENCHMARKS.md), so it
/// catches a regression (an allocation per zone, a lock, a blocking call), not a few hundred
/// instructions.
const CEILING: f64 = 3.73;

/// `cargo xtask ci`'s speed guard: user-space instructions per zone listing under callgrind,
/// for appzone and for the bare route serving its bytes, measured the same way in the same
/// run. An alarm, not a race with the bare route: it fails only when appzone's count exceeds
/// [`CEILING`] times the bare route's. Deterministic enough for CI: callgrind counts
/// instructions, not time, whatever else the machine does.
///
/// Needs valgrind and wrk: without them it prints a notice and passes, except under CI
/// (`CI=true`), where a guard that did not run must not look like one that held.
pub(crate) fn instruction_guard() -> Result<()> {
    // Whether each starts at all: wrk exits 1 for --version.
    let missing: Vec<&str> = ["valgrind", "wrk"]
        .into_iter()
        .filter(|tool| output(Command::new(tool).arg("--version"), PROBE_TIMEOUT).is_err())
        .collect();
    if !missing.is_empty() {
        return crate::process::skip(&format!(
            "instructions: SKIPPED the callgrind guard: {} not installed (Debian: `sudo apt-get \
             install -y valgrind wrk`)",
            missing.join(" and ")
        ));
    }
    let bins = Binaries::build()?;
    let work = WorkDir::create(false)?;
    let url = work.sqlite_url("appzone.db");
    let key = bins.org_and_key(&url)?;
    let appzone = Server::appzone(&bins, &work, "appzone", &url, &[])?;
    let zones = capture(&appzone, ZONES.1, &key, &work)?;
    drop(appzone);
    let (appzone, baseline) = listing_counts(&bins, &work, &url, &key, &zones)?;
    let ratio = appzone / baseline;
    let verdict = format!(
        "instructions per zone listing (callgrind, user space): appzone {appzone:.0}, bare axum \
         route {baseline:.0}: ratio {ratio:.3}x, ceiling {CEILING:.2}x"
    );
    // A NaN ratio (a count of 0) fails too: a guard that measured nothing did not hold.
    if ratio.is_nan() || ratio > CEILING {
        bail!(
            "{verdict}: appzone exceeds the ceiling (BENCHMARKS.md, \"Reproducing the \
             profiles\", says how to find where)"
        );
    }
    println!("{verdict}: held");
    Ok(())
}

/// User-space instructions per zone listing of appzone (on `url`, with `key`) and of the
/// baseline (replaying `zones`), each started again under callgrind: 8 connections, a
/// warm-up, counters zeroed, a counted run, counters dumped. Returns (appzone, baseline).
pub(super) fn listing_counts(
    bins: &Binaries,
    work: &WorkDir,
    url: &str,
    key: &str,
    zones: &Captured,
) -> Result<(f64, f64)> {
    // valgrind puts the pid where `%p` stands: one file per server.
    let out = work.path.join("callgrind.%p");
    let bins = bins.under(&[
        "valgrind",
        "--tool=callgrind",
        &format!("--callgrind-out-file={}", out.display()),
    ]);
    let appzone = Server::appzone(&bins, work, "callgrind-appzone", url, &[])?;
    let appzone = per_request(work, &appzone, key)?;
    let baseline = Server::baseline(&bins, work, "callgrind-baseline", ZONES, zones)?;
    Ok((appzone, per_request(work, &baseline, key)?))
}

/// Instructions per zone listing of `server`, which runs under callgrind: the whole process's
/// count over the loaded run, less what the same process counts in an idle window of the same
/// length right after, over the listings served. The idle part is the server's background
/// (the database watch, the change follower, the pool's upkeep), not a listing's; counted in,
/// it weighed more per listing on a machine that serves fewer listings in the window, so a
/// slower machine measured more for the same binary (BENCHMARKS.md, stop 65).
fn per_request(work: &WorkDir, server: &Server, key: &str) -> Result<f64> {
    let control = |action: &str| {
        let mut command = Command::new("callgrind_control");
        let command = command.args([action, &server.pid().to_string()]);
        stdout_of(command, Duration::from_secs(60)).map(drop)
    };
    let load = Load::new(8, ZONES.1, &["list", key]);
    let wrk = Wrk {
        dir: &work.path,
        seconds: WARMUP_SECONDS,
    };
    wrk.run(server, &load)?;
    control("-z")?;
    let started = std::time::Instant::now();
    let requests = wrk.lasting(COUNTED_SECONDS).run(server, &load)?.requests;
    let window = started.elapsed();
    control("-d")?;
    control("-z")?;
    std::thread::sleep(window);
    control("-d")?;
    // Each dump is a numbered part of the server's file: the loaded run, then the idle one.
    let total = |part: u32| -> Result<u64> {
        let dump = work.path.join(format!("callgrind.{}.{part}", server.pid()));
        let text = std::fs::read_to_string(&dump).context("callgrind wrote no dump")?;
        let summary = text.lines().find_map(|l| l.strip_prefix("summary:"));
        summary
            .and_then(|v| v.trim().parse().ok())
            .context("no summary in the dump")
    };
    let (loaded, idle) = (total(1)?, total(2)?);
    eprintln!(
        "instructions: {requests} listings; {loaded} instructions loaded, {idle} in the idle \
         window after"
    );
    Ok(loaded.saturating_sub(idle) as f64 / requests.max(1) as f64)
}

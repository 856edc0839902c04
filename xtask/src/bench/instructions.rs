//! Instructions per request under valgrind's callgrind: `--callgrind`'s counts, and the speed
//! guard `cargo xtask instructions` (a step of `cargo xtask ci`) built on them.

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::load::{Load, Wrk};
use super::servers::{capture, Captured, Server};
use super::{seed, Binaries, WorkDir, ZONES, ZONES_PATH};
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
/// run (`--callgrind`'s counts). An alarm, not a race with the bare route: it fails only when
/// appzone's count exceeds [`CEILING`] times the bare route's. Deterministic enough for CI:
/// callgrind counts instructions, not time, whatever else the machine does.
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
    let url = format!("sqlite://{}", work.path.join("appzone.db").display());
    let key = seed::org_and_key(&bins, &url)?;
    let zones = {
        let appzone = Server::appzone(&bins, &work, "appzone", &url)?;
        capture(&appzone, ZONES_PATH, "zones", &key, &work)?
    };
    let wrk = Wrk {
        dir: &work.path,
        duration: COUNTED_SECONDS,
    };
    let load = Load::get(8, ZONES_PATH, &[&format!("X-API-KEY: {key}")]);
    let (appzone, baseline) = callgrind_counts(&bins, &work, &wrk, &url, &zones, &load)?;
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

/// User-space instructions per listing of appzone (on `url`) and of the baseline (replaying
/// `zones`), each started again under callgrind: a warm-up, counters zeroed, a counted run of
/// `load`, counters dumped. Returns (appzone, baseline) instructions per request.
pub(super) fn callgrind_counts(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    url: &str,
    zones: &Captured,
    load: &Load,
) -> Result<(f64, f64)> {
    output(Command::new("valgrind").arg("--version"), PROBE_TIMEOUT)
        .context("--callgrind needs valgrind (Debian: `apt-get install valgrind`)")?;
    let appzone = callgrind_per_request(bins, work, wrk, "callgrind-appzone", load, |bins| {
        Server::appzone(bins, work, "callgrind-appzone", url)
    })?;
    let baseline = callgrind_per_request(bins, work, wrk, "callgrind-baseline", load, |bins| {
        Server::baseline(bins, work, "callgrind-baseline", ZONES, zones)
    })?;
    Ok((appzone, baseline))
}

/// User-space instructions per request of `load` of the server `start` starts (with the
/// binaries it is given, which run it under callgrind): a warm-up, counters zeroed, a counted
/// run, counters dumped to `<name>.out.1` in the work directory.
pub(super) fn callgrind_per_request(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    name: &str,
    load: &Load,
    start: impl FnOnce(&Binaries) -> Result<Server>,
) -> Result<f64> {
    let warm_up = |server: &Server| wrk.lasting(WARMUP_SECONDS).run(server, load).map(drop);
    let counted = |server: &Server| {
        let run = wrk.lasting(COUNTED_SECONDS).run(server, load)?;
        Ok(run.requests)
    };
    match callgrind_steps(bins, work, name, start, warm_up, vec![Box::new(counted)])?[..] {
        [per_request] => Ok(per_request),
        _ => bail!("callgrind counted {name} more than once"),
    }
}

/// A counted step of [`callgrind_steps`]: it makes requests to the server and says how many.
pub(super) type Step<'a> = Box<dyn FnOnce(&Server) -> Result<u64> + 'a>;

/// User-space instructions per request of each of `steps`, all on one server `start` starts
/// under callgrind: `warm_up` (not counted), then for each step the counters zeroed, the step
/// run and the counters dumped, to `<name>.out.<n>` in the work directory for the n-th step.
/// The whole process is counted, its background tasks too, so a step should make enough
/// requests that what they do between requests is small beside them.
pub(super) fn callgrind_steps(
    bins: &Binaries,
    work: &WorkDir,
    name: &str,
    start: impl FnOnce(&Binaries) -> Result<Server>,
    warm_up: impl FnOnce(&Server) -> Result<()>,
    steps: Vec<Step<'_>>,
) -> Result<Vec<f64>> {
    eprintln!("bench: callgrind: {name}");
    let out_file = work.path.join(format!("{name}.out"));
    let bins = bins.under(vec![
        "valgrind".to_owned(),
        "--tool=callgrind".to_owned(),
        format!("--callgrind-out-file={}", out_file.display()),
    ]);
    let server = start(&bins)?;
    warm_up(&server)?;
    let mut per_request = Vec::new();
    for (step, run) in steps.into_iter().enumerate() {
        callgrind_control("-z", &server)?;
        let requests = run(&server)?;
        callgrind_control("-d", &server)?;
        // Each dump is the next numbered part: `<out>.1`, `<out>.2`, ...
        let dump = work.path.join(format!("{name}.out.{}", step + 1));
        let text = std::fs::read_to_string(&dump)
            .with_context(|| format!("cannot read {}", dump.display()))?;
        let total: u64 = text
            .lines()
            .find_map(|l| l.strip_prefix("summary:"))
            .and_then(|v| v.trim().parse().ok())
            .with_context(|| format!("no summary line in {}", dump.display()))?;
        per_request.push(total as f64 / requests.max(1) as f64);
    }
    Ok(per_request)
}

/// `callgrind_control <action> PID`: `-z` zeroes the counters, `-d` dumps them.
fn callgrind_control(action: &str, server: &Server) -> Result<()> {
    stdout_of(
        Command::new("callgrind_control").args([action, &server.pid().to_string()]),
        Duration::from_secs(60),
    )
    .map(drop)
}

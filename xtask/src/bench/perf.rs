//! `--perf`: where appzone spends its CPU under the listing, sampled with `perf record`.

use std::fmt::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::load::{Load, Wrk};
use super::servers::Server;
use crate::process::{stdout_of, wait_bounded};

/// `perf report` over a few seconds of samples.
const REPORT_TIMEOUT: Duration = Duration::from_secs(300);

/// Samples appzone's CPU with `perf record` during one more run of `load`; returns the top of
/// `perf report` (self time by symbol). The data stays in `target/bench/perf.data` for
/// `perf report --children` and the like.
pub(super) fn profile(wrk: &Wrk<'_>, server: &Server, load: &Load) -> Result<String> {
    eprintln!(
        "bench: perf profile of appzone at {} connections",
        load.connections
    );
    let data = crate::target_dir().join("bench").join("perf.data");
    if let Some(parent) = data.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    // perf samples for `sleep`'s length: a second less than the run, so it sees load only.
    let seconds = wrk.duration.saturating_sub(1).max(1);
    let mut record = Command::new("perf");
    record
        .args(["record", "-e", "cpu-clock", "-F", "999"])
        .args(["--call-graph", "dwarf,16384", "-o"])
        .arg(&data)
        .args(["-p", &server.pid().to_string(), "--", "sleep"])
        .arg(seconds.to_string());
    let shown = crate::process::show(&record);
    let mut perf = record
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("cannot run perf; install it (Debian: `apt-get install linux-perf`)")?;
    // Let perf attach before the load starts.
    std::thread::sleep(Duration::from_millis(300));
    let run = wrk.run(server, load);
    let status = wait_bounded(&mut perf, Duration::from_secs(seconds + 60), &shown)?;
    let run = run?;
    if !status.success() {
        bail!("perf record failed ({status})");
    }
    let text = stdout_of(
        Command::new("perf")
            .args(["report", "--no-children", "--sort", "symbol", "--stdio"])
            .args(["-g", "none", "--percent-limit", "0.8", "-i"])
            .arg(&data),
        REPORT_TIMEOUT,
    )?;
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

//! wrk runs against one server. wrk reports a run itself, as the JSON line the `done` hook of
//! `wrk.lua` prints; a run adds the server's CPU and memory around it, from /proc.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::Value;

use super::servers::Server;
use crate::process::{output, PROBE_TIMEOUT};

/// The script of every run; [`super::WorkDir`] writes it where [`Wrk::run`] finds it.
pub(super) const SCRIPT: &str = include_str!("wrk.lua");

/// wrk's version line; an Err saying how to install wrk when it is missing.
pub(super) fn version() -> Result<String> {
    // wrk prints its version and usage, and exits 1, for --version.
    let probe = output(Command::new("wrk").arg("--version"), PROBE_TIMEOUT);
    let probe =
        probe.context("wrk is missing: `sudo apt-get install -y wrk` (`brew install wrk`)")?;
    Ok(probe.first_line().unwrap_or("wrk").to_owned())
}

/// What one run sends: `connections` connections to `path`, in the mode of `wrk.lua` that
/// `args` give (`list KEY`, `delete KEY FIRST`, `mixed KEY FIRST ETAG`).
#[derive(Clone)]
pub(super) struct Load {
    pub(super) connections: usize,
    path: String,
    args: Vec<String>,
}

impl Load {
    pub(super) fn new(connections: usize, path: &str, args: &[&str]) -> Self {
        let args = args.iter().map(|s| (*s).to_owned()).collect();
        let path = path.to_owned();
        Self {
            connections,
            path,
            args,
        }
    }

    /// The same load on another path.
    pub(super) fn on(&self, path: &str) -> Self {
        let path = path.to_owned();
        Self {
            path,
            ..self.clone()
        }
    }
}

/// One wrk run, with the server's CPU and memory around it.
#[derive(Debug, Clone, Default)]
pub(super) struct Run {
    pub(super) requests: u64,
    pub(super) seconds: f64,
    /// Socket errors, timeouts and answers other than 2xx and 3xx.
    pub(super) errors: u64,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
    pub(super) p999_us: f64,
    pub(super) cpu_us_per_request: f64,
    pub(super) rss_kb: u64,
}

impl Run {
    pub(super) fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds.max(1e-9)
    }

    /// A run from the line `done` prints.
    fn parse(line: &str) -> Result<Self> {
        let json: Value = serde_json::from_str(line).context("wrk's line is not JSON")?;
        let number = |pointer: &str| json.pointer(pointer).and_then(Value::as_f64);
        let number = |p: &str| number(p).with_context(|| format!("wrk's line has no {p}: {line}"));
        let errors = json["errors"].as_object().context("no errors")?.values();
        Ok(Self {
            requests: number("/requests")? as u64,
            seconds: number("/duration_us")? / 1e6,
            errors: errors.filter_map(Value::as_u64).sum(),
            p50_us: number("/latency_us/p50")?,
            p99_us: number("/latency_us/p99")?,
            p999_us: number("/latency_us/p99.9")?,
            ..Self::default()
        })
    }
}

/// How wrk runs: one thread (leaving the other core to the server), runs of `seconds`, the
/// script in `dir`.
#[derive(Clone, Copy)]
pub(super) struct Wrk<'a> {
    pub(super) dir: &'a Path,
    pub(super) seconds: u64,
}

impl Wrk<'_> {
    /// The same with runs of `seconds`.
    pub(super) fn lasting(self, seconds: u64) -> Self {
        Self { seconds, ..self }
    }

    pub(super) fn run(&self, server: &Server, load: &Load) -> Result<Run> {
        let (connections, seconds) = (load.connections.to_string(), format!("{}s", self.seconds));
        let mut command = Command::new("wrk");
        command.args([
            "-t1",
            "-c",
            &connections,
            "-d",
            &seconds,
            "--timeout",
            "5s",
            "-s",
        ]);
        command.arg(self.dir.join("wrk.lua"));
        command.arg(format!("http://{}{}", server.addr, load.path));
        command.arg("--").args(&load.args);
        let cpu_before = server.cpu_ticks();
        // Past the run's own length: wrk's start, its last requests' timeout and its report.
        let out = output(&mut command, Duration::from_secs(self.seconds + 60))?;
        let ticks = server.cpu_ticks().saturating_sub(cpu_before);
        let line = out.stdout.lines().find(|l| l.starts_with('{'));
        let (name, text) = (&server.name, out.stdout.clone() + &out.stderr);
        let mut run = Run::parse(line.with_context(|| format!("wrk against {name}: {text}"))?)?;
        // /proc counts CPU in USER_HZ, 100 per second on Linux.
        run.cpu_us_per_request = ticks as f64 * 1e4 / run.requests.max(1) as f64;
        run.rss_kb = server.rss_kb();
        Ok(run)
    }
}

/// The median of `values`, and their minimum and maximum; NaN for none.
pub(super) fn spread(values: impl IntoIterator<Item = f64>) -> (f64, f64, f64) {
    let mut values: Vec<f64> = values.into_iter().collect();
    values.sort_by(f64::total_cmp);
    let (Some(&min), Some(&max)) = (values.first(), values.last()) else {
        return (f64::NAN, f64::NAN, f64::NAN);
    };
    let mid = values.len() / 2;
    let median = match values.len() % 2 {
        1 => values[mid],
        _ => (values[mid - 1] + values[mid]) / 2.0,
    };
    (median, min, max)
}

/// The median of `values`.
pub(super) fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    spread(values).0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reads_the_line_of_the_done_hook_and_takes_medians() {
        let line = r#"{"requests":1000,"duration_us":2000000,"errors":{"connect":0,"read":1,
            "write":0,"status":3,"timeout":2},"latency_us":{"p50":100,"p99":900,
            "p99.9":2500}}"#;
        let run = Run::parse(&line.replace('\n', "")).unwrap();
        assert_eq!(
            (run.requests, run.errors, run.rps(), run.p999_us),
            (1000, 6, 500.0, 2500.0)
        );
        assert!(Run::parse(r#"{"requests":1}"#).is_err());
        // The script prints every field the parser reads.
        for field in ["duration_us", "errors", "latency_us", "p99.9", "timeout"] {
            assert!(SCRIPT.contains(&format!("\"{field}\"")), "{field}");
        }
        assert_eq!(spread([3.0, 1.0, 2.0]), (2.0, 1.0, 3.0));
        assert!((median([4.0, 1.0, 2.0, 3.0]) - 2.5).abs() < 1e-9 && median([]).is_nan());
    }
}

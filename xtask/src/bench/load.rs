//! The load: wrk runs against one server, and what they measured.
//!
//! Every run reports through the `done` hook of `wrk/done.lua` (one machine-readable line, as
//! wrk's own `--latency` stops at p99). The other scripts generate requests where wrk's one
//! prebuilt request will not do: `dynamic.lua` (deletes, the mixed load), and for `--scale`
//! `counted.lua` (runs that stop at a count), `wrong_keys.lua` and `idle.lua`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::procfs;
use super::servers::Server;
use crate::process::{output, PROBE_TIMEOUT};

const DONE_LUA: &str = include_str!("wrk/done.lua");
/// The scripts [`write_scripts`] writes: each name with its request generation (none for
/// `static.lua`, so wrk sends its prebuilt request at full speed; wrk decides that when it
/// loads the script, so it cannot be one script with the others).
const SCRIPTS: [(&str, &str); 5] = [
    ("static.lua", ""),
    ("dynamic.lua", include_str!("wrk/dynamic.lua")),
    ("counted.lua", include_str!("wrk/counted.lua")),
    ("wrong_keys.lua", include_str!("wrk/wrong_keys.lua")),
    ("idle.lua", include_str!("wrk/idle.lua")),
];
/// Past the run's own length: wrk's start, its last requests' timeout and its report.
const WRK_GRACE: Duration = Duration::from_secs(60);

/// wrk's version line; an Err saying how to install wrk when it is missing.
pub(super) fn wrk_version() -> Result<String> {
    // wrk prints its version and usage, and exits 1, for --version.
    let probe = output(Command::new("wrk").arg("--version"), PROBE_TIMEOUT).context(
        "wrk is not installed: `sudo apt-get install -y wrk` on Debian/Ubuntu (`brew install \
         wrk` on macOS)",
    )?;
    Ok(probe.first_line().unwrap_or("wrk").to_owned())
}

/// Writes the wrk scripts into `dir`, where [`Wrk`] finds them.
pub(super) fn write_scripts(dir: &Path) -> Result<()> {
    for (name, requests) in SCRIPTS {
        let file = dir.join(name);
        std::fs::write(&file, format!("{requests}\n{DONE_LUA}"))
            .with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(())
}

/// What one run sends: `connections` connections to `path`, with `headers` (`Name: value`),
/// by `script` (one of [`SCRIPTS`]) given `args`.
#[derive(Clone)]
pub(super) struct Load {
    pub(super) connections: usize,
    pub(super) path: String,
    headers: Vec<String>,
    script: &'static str,
    args: Vec<String>,
}

impl Load {
    /// GETs of `path` with `headers`, wrk's prebuilt request at full speed.
    pub(super) fn get(connections: usize, path: &str, headers: &[&str]) -> Self {
        Self {
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            ..Self::script(connections, path, "static.lua", &[])
        }
    }

    /// `path` by `script`, with the script's arguments.
    pub(super) fn script(
        connections: usize,
        path: &str,
        script: &'static str,
        args: &[&str],
    ) -> Self {
        Self {
            connections,
            path: path.to_owned(),
            headers: Vec::new(),
            script,
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    /// The same load on another path.
    pub(super) fn on(&self, path: &str) -> Self {
        Self {
            path: path.to_owned(),
            ..self.clone()
        }
    }

    /// Deletes of profiles `bench-<first>` up, each once (one wrk thread).
    pub(super) fn deletes(connections: usize, key: &str, first: u64) -> Self {
        let first = first.to_string();
        Self::script(
            connections,
            "/",
            "dynamic.lua",
            &["delete", key, &first, "1"],
        )
    }

    /// Per 10 requests: 1 delete (as [`Load::deletes`]), 1 listing of `path` with
    /// `If-None-Match: etag`, 8 plain listings.
    pub(super) fn mixed(path: &str, key: &str, first: u64, etag: &str) -> Self {
        let first = first.to_string();
        Self::script(64, path, "dynamic.lua", &["mixed", key, &first, "1", etag])
    }
}

/// One wrk run against one server, with the server's CPU and memory around it.
#[derive(Debug, Clone, Default)]
pub(super) struct RunResult {
    pub(super) requests: u64,
    pub(super) seconds: f64,
    pub(super) errors: u64,
    pub(super) p50_us: f64,
    pub(super) p99_us: f64,
    pub(super) p999_us: f64,
    pub(super) mean_us: f64,
    pub(super) rss_kb: u64,
    pub(super) cpu_us_per_request: f64,
    /// CPU of wrk itself per request: with the server's, it shows when the machine is full.
    pub(super) wrk_cpu_us_per_request: f64,
}

impl RunResult {
    pub(super) fn rps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.requests as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// How wrk runs: one thread (leaving the machine's other core to the server), runs of
/// `duration` seconds, its scripts in `dir` ([`write_scripts`]).
#[derive(Clone, Copy)]
pub(super) struct Wrk<'a> {
    pub(super) dir: &'a Path,
    pub(super) duration: u64,
}

impl Wrk<'_> {
    /// The same with runs of `seconds`.
    pub(super) fn lasting(self, seconds: u64) -> Self {
        Self {
            duration: seconds,
            ..self
        }
    }

    pub(super) fn run(&self, server: &Server, load: &Load) -> Result<RunResult> {
        let mut command = Command::new("wrk");
        command
            .args(["-t1", "-c", &load.connections.to_string()])
            .args([
                "-d",
                &format!("{}s", self.duration),
                "--timeout",
                "5s",
                "-s",
            ])
            .arg(self.dir.join(load.script));
        for header in &load.headers {
            command.arg("-H").arg(header);
        }
        command.arg(format!("http://{}{}", server.addr, load.path));
        command.arg("--").args(&load.args);
        let ticks_before = server.cpu_ticks();
        let wrk_before = procfs::children_cpu_ticks();
        let out = output(&mut command, Duration::from_secs(self.duration) + WRK_GRACE)?;
        let ticks = server.cpu_ticks().saturating_sub(ticks_before);
        let wrk_ticks = procfs::children_cpu_ticks().saturating_sub(wrk_before);
        let Some(line) = out.stdout.lines().find(|l| l.starts_with("APPZONE_WRK ")) else {
            bail!(
                "wrk printed no result against {}: {}{}",
                server.name,
                out.stdout,
                out.stderr
            );
        };
        let mut result = parse_wrk_line(line)?;
        result.rss_kb = server.rss_kb();
        if result.requests > 0 {
            let per_request = procfs::microseconds_per_tick() / result.requests as f64;
            result.cpu_us_per_request = ticks as f64 * per_request;
            result.wrk_cpu_us_per_request = wrk_ticks as f64 * per_request;
        }
        Ok(result)
    }
}

/// The `key=value` words of a machine-readable line (wrk's, the client benchmark's).
pub(super) fn key_values(line: &str) -> BTreeMap<String, String> {
    line.split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn parse_wrk_line(line: &str) -> Result<RunResult> {
    let values = key_values(line);
    let get = |k: &str| -> Result<f64> {
        values
            .get(k)
            .and_then(|v| v.parse::<f64>().ok())
            .with_context(|| format!("wrk result without {k}: {line}"))
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
    .sum::<Result<f64>>()?;
    Ok(RunResult {
        requests: get("requests")? as u64,
        seconds: get("duration_us")? / 1e6,
        errors: errors as u64,
        p50_us: get("p50_us")?,
        p99_us: get("p99_us")?,
        p999_us: get("p999_us")?,
        mean_us: get("mean_us")?,
        ..RunResult::default()
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn parses_the_wrk_done_line() {
        let line = "APPZONE_WRK requests=1000 duration_us=2000000 status_errors=3 \
                    connect_errors=0 read_errors=1 write_errors=0 timeouts=2 p50_us=100 \
                    p75_us=150 p90_us=200 p99_us=900 p999_us=2500 max_us=9000 mean_us=120.5";
        let run = parse_wrk_line(line).unwrap();
        assert_eq!((run.requests, run.errors), (1000, 6));
        assert!((run.rps() - 500.0).abs() < 1e-9);
        assert!((run.p999_us - 2500.0).abs() < 1e-9);
        assert!((run.mean_us - 120.5).abs() < 1e-9);
        assert!(parse_wrk_line("APPZONE_WRK requests=1").is_err());
    }

    #[test]
    fn the_scripts_report_the_line_the_parser_reads() {
        for key in [
            "APPZONE_WRK ",
            "requests=",
            "duration_us=",
            "p999_us=",
            "timeouts=",
        ] {
            assert!(DONE_LUA.contains(key), "{key}");
        }
        // A script with a `response` hook has wrk hand every answer to Lua: only the counted
        // runs, which must stop, may have one; and only the static one may lack `request`.
        for (name, script) in SCRIPTS {
            assert!(!script.contains("function done("), "{name}");
            let counted = name == "counted.lua";
            assert_eq!(script.contains("function response("), counted, "{name}");
            let generates = !matches!(name, "static.lua" | "idle.lua");
            assert_eq!(script.contains("function request()"), generates, "{name}");
        }
    }
}

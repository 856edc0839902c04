//! The load: wrk runs against one server, and what they measured.
//!
//! Every run reports through the `done` hook of `wrk/done.lua` (one machine-readable line);
//! the delete and mixed scenarios generate their requests with `wrk/dynamic.lua`, and `--scale`
//! its wrong keys and counted deletes with `wrk/wrong_keys.lua` and `wrk/counted_deletes.lua`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use super::procfs;
use super::servers::Server;
use crate::process::{output, PROBE_TIMEOUT};

const DONE_LUA: &str = include_str!("wrk/done.lua");
const DYNAMIC_LUA: &str = include_str!("wrk/dynamic.lua");
const WRONG_KEYS_LUA: &str = include_str!("wrk/wrong_keys.lua");
const COUNTED_DELETES_LUA: &str = include_str!("wrk/counted_deletes.lua");
/// The script of runs with wrk's prebuilt request (no `request` function).
const STATIC_SCRIPT: &str = "static.lua";
/// The script of runs that generate their requests.
const DYNAMIC_SCRIPT: &str = "dynamic.lua";
/// `--scale`'s wrong-key flood and its deletes that stop at a count.
const WRONG_KEYS_SCRIPT: &str = "wrong_keys.lua";
const COUNTED_DELETES_SCRIPT: &str = "counted_deletes.lua";
/// Past the run's own length: wrk's start, its last requests' timeout and its report.
const WRK_GRACE: Duration = Duration::from_secs(60);

/// wrk's version line; an Err saying how to install wrk when it is missing.
pub(super) fn wrk_version() -> Result<String> {
    // wrk prints its version and usage, and exits 1, for --version.
    let probe = output(Command::new("wrk").arg("--version"), PROBE_TIMEOUT).context(
        "wrk is not installed. Install it from your distribution's packages, e.g. \
         `sudo apt-get install -y wrk` on Debian/Ubuntu (`brew install wrk` on macOS), then \
         run `cargo xtask bench` again.",
    )?;
    Ok(probe.first_line().unwrap_or("wrk").to_owned())
}

/// Writes the wrk scripts into `dir`, where [`Wrk`] finds them.
pub(super) fn write_scripts(dir: &Path) -> Result<()> {
    for (name, text) in [
        (STATIC_SCRIPT, DONE_LUA.to_owned()),
        (DYNAMIC_SCRIPT, format!("{DYNAMIC_LUA}\n{DONE_LUA}")),
        (WRONG_KEYS_SCRIPT, format!("{WRONG_KEYS_LUA}\n{DONE_LUA}")),
        (
            COUNTED_DELETES_SCRIPT,
            format!("{COUNTED_DELETES_LUA}\n{DONE_LUA}"),
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, text).with_context(|| format!("cannot write {}", file.display()))?;
    }
    Ok(())
}

/// How wrk runs: its threads and the length of each run.
#[derive(Clone, Copy)]
pub(super) struct Wrk<'a> {
    /// Holds the scripts ([`write_scripts`]).
    dir: &'a Path,
    threads: usize,
    pub(super) duration: u64,
}

/// What one run sends.
pub(super) struct Load<'a> {
    pub(super) connections: usize,
    pub(super) path: &'a str,
    headers: Vec<String>,
    /// The script wrk runs, one of those [`write_scripts`] writes.
    script: &'static str,
    /// The script's arguments, after `--`.
    script_args: Vec<String>,
}

impl<'a> Load<'a> {
    /// GETs of `path` with `headers` (`Name: value`), wrk's prebuilt request at full speed.
    pub(super) fn get(connections: usize, path: &'a str, headers: &[&str]) -> Self {
        Self {
            connections,
            path,
            headers: headers.iter().map(|h| (*h).to_owned()).collect(),
            script: STATIC_SCRIPT,
            script_args: Vec::new(),
        }
    }

    /// The same load on another path.
    pub(super) fn on(&self, path: &'a str) -> Self {
        Self {
            connections: self.connections,
            path,
            headers: self.headers.clone(),
            script: self.script,
            script_args: self.script_args.clone(),
        }
    }

    /// GETs of `path`, each with a wrong key of the right shape and a random key id (every one
    /// a database lookup and a negative cache entry on the server).
    pub(super) fn wrong_keys(connections: usize, path: &'a str) -> Self {
        Self {
            script: WRONG_KEYS_SCRIPT,
            ..Self::get(connections, path, &[])
        }
    }

    /// Deletes of profiles `bench-<first>` up, each once, until `limit` answers (one wrk
    /// thread; the run still lasts its whole duration, see `wrk/counted_deletes.lua`).
    pub(super) fn counted_deletes(connections: usize, key: &str, first: u64, limit: u64) -> Self {
        Self {
            connections,
            path: "/",
            headers: Vec::new(),
            script: COUNTED_DELETES_SCRIPT,
            script_args: vec![key.to_owned(), first.to_string(), limit.to_string()],
        }
    }

    /// Deletes of profiles `bench-<first>` up, each once, over `threads` wrk threads.
    pub(super) fn deletes(connections: usize, key: &str, first: u64, threads: usize) -> Self {
        Self::scripted(connections, "/", ["delete", key], first, threads, None)
    }

    /// Per 10 requests: 1 delete (as [`Load::deletes`]), 1 listing of `path` with
    /// `If-None-Match: etag`, 8 plain listings.
    pub(super) fn mixed(
        connections: usize,
        path: &'a str,
        key: &str,
        first: u64,
        threads: usize,
        etag: &str,
    ) -> Self {
        Self::scripted(
            connections,
            path,
            ["mixed", key],
            first,
            threads,
            Some(etag),
        )
    }

    fn scripted(
        connections: usize,
        path: &'a str,
        [mode, key]: [&str; 2],
        first: u64,
        threads: usize,
        etag: Option<&str>,
    ) -> Self {
        let mut script_args = vec![
            mode.to_owned(),
            key.to_owned(),
            first.to_string(),
            threads.to_string(),
        ];
        script_args.extend(etag.map(str::to_owned));
        Self {
            connections,
            path,
            headers: Vec::new(),
            script: DYNAMIC_SCRIPT,
            script_args,
        }
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

impl<'a> Wrk<'a> {
    pub(super) fn new(dir: &'a Path, threads: usize, duration: u64) -> Self {
        Self {
            dir,
            threads,
            duration,
        }
    }

    /// The same with runs of `seconds`.
    pub(super) fn lasting(self, seconds: u64) -> Self {
        Self {
            duration: seconds,
            ..self
        }
    }

    pub(super) fn run(&self, server: &Server, load: &Load<'_>) -> Result<RunResult> {
        let mut command = Command::new("wrk");
        command
            .arg("-t")
            .arg(self.threads.min(load.connections).to_string())
            .arg("-c")
            .arg(load.connections.to_string())
            .arg("-d")
            .arg(format!("{}s", self.duration))
            .args(["--timeout", "5s", "-s"])
            .arg(self.dir.join(load.script));
        for header in &load.headers {
            command.arg("-H").arg(header);
        }
        command.arg(format!("http://{}{}", server.addr, load.path));
        if !load.script_args.is_empty() {
            command.arg("--").args(&load.script_args);
        }
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
        assert_eq!(run.requests, 1000);
        assert_eq!(run.errors, 6);
        assert!((run.rps() - 500.0).abs() < 1e-9);
        assert!((run.p999_us - 2500.0).abs() < 1e-9);
        assert!((run.mean_us - 120.5).abs() < 1e-9);
        assert!(parse_wrk_line("APPZONE_WRK requests=1").is_err());
    }

    #[test]
    fn the_scripts_report_the_line_the_parser_reads() {
        for key in [
            "requests=",
            "duration_us=",
            "p999_us=",
            "mean_us=",
            "timeouts=",
        ] {
            assert!(DONE_LUA.contains(key), "{key}");
        }
        assert!(DONE_LUA.contains("APPZONE_WRK "));
        for script in [DYNAMIC_LUA, WRONG_KEYS_LUA, COUNTED_DELETES_LUA] {
            assert!(script.contains("function request()"));
            assert!(!script.contains("function done("));
        }
        // wrk stops a counted run's thread from its `response` hook; the others have none, so
        // wrk does not hand every answer to Lua.
        assert!(COUNTED_DELETES_LUA.contains("wrk.thread:stop()"));
        assert!(!WRONG_KEYS_LUA.contains("function response("));
        assert!(!DONE_LUA.contains("function request()"));
    }

    #[test]
    fn scripted_loads_pass_their_arguments() {
        let deletes = Load::deletes(32, "k", 7, 2);
        assert_eq!(deletes.script_args, ["delete", "k", "7", "2"]);
        let mixed = Load::mixed(64, "/p", "k", 1, 1, "W/\"e\"");
        assert_eq!(mixed.script_args, ["mixed", "k", "1", "1", "W/\"e\""]);
        assert!(Load::get(8, "/p", &["X-API-KEY: k"]).script_args.is_empty());
        let counted = Load::counted_deletes(32, "k", 1, 900);
        assert_eq!(counted.script_args, ["k", "1", "900"]);
        assert_eq!(counted.script, COUNTED_DELETES_SCRIPT);
        let flood = Load::wrong_keys(64, "/p");
        assert_eq!((flood.script, flood.path), (WRONG_KEYS_SCRIPT, "/p"));
        assert!(flood.script_args.is_empty() && flood.headers.is_empty());
    }
}

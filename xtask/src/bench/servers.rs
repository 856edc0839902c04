//! The servers a run measures: appzone and the bare-axum baseline, each a child process on a
//! free port of 127.0.0.1, ready once it answers, stopped when dropped; and what /proc says
//! about them.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{Binaries, WorkDir};
use crate::http;

/// Request id sent when capturing the answer a baseline replays: 26 characters, like the ULID
/// appzone generates, so that both bodies have the same length.
const CAPTURE_REQUEST_ID: &str = "01JBENCH000000000000000000";

/// A child server process, stopped (SIGTERM, then SIGKILL) when dropped.
pub(super) struct Server {
    pub(super) name: String,
    child: Child,
    pub(super) addr: SocketAddr,
}

impl Server {
    /// appzone on the database at `url` with `extra` flags of `serve`.
    pub(super) fn appzone(
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        url: &str,
        extra: &[&str],
    ) -> Result<Self> {
        let addr = http::free_port()?;
        let mut command = bins.cli(url);
        command.args(["serve", "--listen", &addr.to_string()]);
        // One key sends everything: the default 1000/s per key would answer 429, and `0` would
        // take the limiter out of the measured path. A limit no run reaches keeps it in.
        command.args(["--rate-limit-per-key", "1000000000"]);
        // All of wrk's connections (5,000 in the scale run) come from 127.0.0.1: above the
        // per-address limit, which would otherwise close them.
        command.args([
            "--max-connections-per-address",
            "100000",
            "--max-connections",
            "100000",
        ]);
        Self::start(command.args(extra), work, name, addr, "/healthz")
    }

    /// The baseline answering `captured` on `route` (an axum template, so that a parameterized
    /// route costs the baseline what routing costs), checked to answer `path` with exactly the
    /// bytes appzone answered (else the comparison would be of different work).
    pub(super) fn baseline(
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        (route, path): (&str, &str),
        captured: &Captured,
    ) -> Result<Self> {
        let addr = http::free_port()?;
        let mut command = bins.command("appzone-bench-baseline");
        command
            .args(["--listen", &addr.to_string(), "--body-file"])
            .arg(&captured.file);
        command.args(["--etag", &captured.etag, "--request-id", CAPTURE_REQUEST_ID]);
        let server = Self::start(command.args(["--path", route]), work, name, addr, path)?;
        if http::get(addr, path, &[])?.body != captured.bytes {
            bail!("the baseline {name} does not answer appzone's bytes for {path}");
        }
        Ok(server)
    }

    /// Starts `command`, its stderr to `<name>.log` in the work directory, and waits until
    /// `ready` answers 200.
    fn start(
        command: &mut Command,
        work: &WorkDir,
        name: &str,
        addr: SocketAddr,
        ready: &str,
    ) -> Result<Self> {
        let log_path = work.path.join(format!("{name}.log"));
        let log = std::fs::File::create(&log_path).context("cannot create a server's log")?;
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn();
        let child = child.with_context(|| format!("cannot start {name}"))?;
        let name = name.to_owned();
        let mut server = Server { name, child, addr };
        let deadline = Instant::now() + Duration::from_secs(30);
        let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                bail!("{} exited at start ({status}):\n{}", server.name, log());
            }
            if http::get(addr, ready, &[]).is_ok_and(|r| r.status == 200) {
                eprintln!(
                    "bench: {} (pid {}) ready on {addr}",
                    server.name,
                    server.pid()
                );
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!("{} not ready in 30 s:\n{}", server.name, log());
            }
            // Short: `--scale` times start-ups of a few tens of milliseconds by this loop.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(super) fn rss_kb(&self) -> u64 {
        self.status_kb("VmRSS:")
    }

    /// A `kB` field of `/proc/PID/status` (`VmRSS:`, `VmHWM:`), 0 when the process is gone.
    pub(super) fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid()));
        let value = |s: String| {
            let value = s.lines().find_map(|line| line.strip_prefix(field))?;
            value.trim().trim_end_matches("kB").trim().parse().ok()
        };
        status.ok().and_then(value).unwrap_or(0)
    }

    /// `utime + stime` of the whole process, in clock ticks.
    pub(super) fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid()));
        stat.ok().and_then(|s| stat_cpu_ticks(&s)).unwrap_or(0)
    }

    /// The highest RSS seen every 250 ms while `during` runs, and what `during` returned.
    pub(super) fn peak_rss_during<T>(&self, during: impl FnOnce() -> T) -> (u64, T) {
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let sampler = scope.spawn(|| {
                let mut peak = 0;
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    peak = peak.max(self.rss_kb());
                    std::thread::sleep(Duration::from_millis(250));
                }
                peak
            });
            let value = during();
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            (sampler.join().unwrap_or(0), value)
        })
    }
}

/// `utime + stime` (fields 14 and 15) of a `/proc/PID/stat` line.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    // The command name (field 2) may contain spaces; the fields after it start past its ')'.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first, so that the server shuts down as in production (and callgrind dumps).
        let mut kill = Command::new("kill");
        let _ = crate::process::output(
            kill.args(["-TERM", &self.pid().to_string()]),
            crate::process::PROBE_TIMEOUT,
        );
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

/// A listing's answer captured from appzone, for a baseline to replay: the file it reads the
/// body from, the ETag, the body.
pub(super) struct Captured {
    file: PathBuf,
    pub(super) etag: String,
    bytes: Vec<u8>,
}

/// appzone's answer to `path`, with the request id the baselines answer with.
pub(super) fn capture(appzone: &Server, path: &str, key: &str, work: &WorkDir) -> Result<Captured> {
    let headers = [("X-API-KEY", key), ("X-Request-Id", CAPTURE_REQUEST_ID)];
    let answer = http::get(appzone.addr, path, &headers)?;
    if answer.status != 200 {
        let body = String::from_utf8_lossy(&answer.body);
        bail!("appzone answered {} to {path}: {body}", answer.status);
    }
    let etag = answer.etag.context("appzone's answer has no ETag")?;
    let file = work.path.join(format!("{}.json", path.replace('/', "_")));
    std::fs::write(&file, &answer.body).context("cannot write a captured answer")?;
    let bytes = answer.body;
    Ok(Captured { file, etag, bytes })
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_cpu_ticks_past_a_command_name_with_spaces() {
        let stat = "1234 (appzone server) S 1 1234 1234 0 -1 4194560 500 0 0 0 250 75 0 0 20";
        assert_eq!(super::stat_cpu_ticks(stat), Some(325));
        assert_eq!(super::stat_cpu_ticks("garbage"), None);
    }
}

//! The servers a run measures: appzone and the bare-axum baseline, each a child process on a
//! free port of 127.0.0.1, ready once it answers, stopped when dropped.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::{procfs, Binaries, WorkDir, CAPTURE_REQUEST_ID};
use crate::http::{self, free_port};

/// How long a server may take to answer its readiness path.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A child server process, stopped (SIGTERM, then SIGKILL) when dropped.
pub(super) struct Server {
    pub(super) name: String,
    child: Child,
    pub(super) addr: SocketAddr,
}

impl Server {
    /// appzone on the database at `url`, ready once `/readyz` answers 200.
    pub(super) fn appzone(bins: &Binaries, work: &WorkDir, name: &str, url: &str) -> Result<Self> {
        Self::appzone_with(bins, work, name, url, &[], &[], "/readyz")
    }

    /// appzone on `url` with `extra` flags of `serve` and `env`, ready once `ready_path`
    /// answers 200 (`--scale` times start-up to `/healthz`).
    pub(super) fn appzone_with(
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        url: &str,
        extra: &[&str],
        env: &[(&str, &str)],
        ready_path: &str,
    ) -> Result<Self> {
        let addr = free_port()?;
        let mut command = appzone_command(bins, url, addr, extra);
        command.envs(env.iter().copied());
        Self::start(command, work, name, addr, ready_path)
    }

    /// The baseline answering the captured body on `route` (an axum template, so a
    /// parameterized route costs the baseline what routing costs), ready when `path` answers.
    pub(super) fn baseline(
        bins: &Binaries,
        work: &WorkDir,
        name: &str,
        (route, path): (&str, &str),
        captured: &Captured,
    ) -> Result<Self> {
        let addr = free_port()?;
        let mut command = bins.command(&bins.baseline);
        command
            .args(["--listen", &addr.to_string(), "--body-file"])
            .arg(&captured.file)
            .args(["--etag", &captured.etag, "--request-id", CAPTURE_REQUEST_ID])
            .args(["--path", route]);
        Self::start(command, work, name, addr, path)
    }

    /// Starts `command`, its stderr to `<name>.log` in the work directory, and waits until
    /// `ready_path` answers 200.
    fn start(
        mut command: Command,
        work: &WorkDir,
        name: &str,
        addr: SocketAddr,
        ready_path: &str,
    ) -> Result<Self> {
        let log_path = work.path.join(format!("{name}.log"));
        let log = std::fs::File::create(&log_path)
            .with_context(|| format!("cannot create {}", log_path.display()))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {name}"))?;
        let mut server = Server {
            name: name.to_owned(),
            child,
            addr,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        let log = || std::fs::read_to_string(&log_path).unwrap_or_default();
        loop {
            if let Ok(Some(status)) = server.child.try_wait() {
                bail!("{name} exited at start ({status}):\n{}", log());
            }
            if http::get(addr, ready_path, &[]).is_ok_and(|r| r.status == 200) {
                eprintln!("bench: {name} (pid {}) ready on {addr}", server.pid());
                return Ok(server);
            }
            if Instant::now() > deadline {
                bail!(
                    "{name} not ready in {} s:\n{}",
                    START_TIMEOUT.as_secs(),
                    log()
                );
            }
            // Short: `--scale` times start-ups of a few tens of milliseconds by this loop.
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(super) fn rss_kb(&self) -> u64 {
        procfs::status_kb(self.pid(), "VmRSS:")
    }

    pub(super) fn peak_rss_kb(&self) -> u64 {
        procfs::status_kb(self.pid(), "VmHWM:")
    }

    /// utime + stime of the whole process, in clock ticks.
    pub(super) fn cpu_ticks(&self) -> u64 {
        procfs::cpu_ticks(self.pid())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first, so the server shuts down as in production (and callgrind dumps).
        let _ = crate::process::output(
            Command::new("kill").args(["-TERM", &self.pid().to_string()]),
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

/// `appzone-server serve` on `url` and `addr`, with the bench's settings and `extra`.
fn appzone_command(bins: &Binaries, url: &str, addr: SocketAddr, extra: &[&str]) -> Command {
    let mut command = bins.server_cli(url);
    command
        .args(["serve", "--listen", &addr.to_string()])
        // One key sends everything: the default 1000/s per key would answer 429, and `0`
        // would take the limiter out of the measured path. A limit no run reaches keeps it in.
        .args(["--rate-limit-per-key", "1000000000"])
        // Every connection of wrk (5,000 in the scale run's idle ones) comes from 127.0.0.1:
        // above the per-address limit, which would otherwise close them.
        .args(["--max-connections-per-address", "100000"])
        .args(["--max-connections", "100000"])
        .args(extra);
    command
}

/// The server's settings come from its flags only: no `APPZONE_*` or `RUST_LOG` of the caller's
/// shell leaks in.
pub(super) fn clean_env(mut command: Command) -> Command {
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if name.starts_with("APPZONE_") || name == "RUST_LOG" {
            command.env_remove(name);
        }
    }
    command
}

/// A listing's answer captured from appzone, for a baseline to replay.
pub(super) struct Captured {
    /// The file the baseline reads the body from.
    pub(super) file: PathBuf,
    pub(super) etag: String,
    pub(super) bytes: Vec<u8>,
}

/// appzone's answer to `path` (sent with the fixed request id the baselines answer with),
/// written to `<name>.json` in the work directory.
pub(super) fn capture(
    appzone: &Server,
    path: &str,
    name: &str,
    key: &str,
    work: &WorkDir,
) -> Result<Captured> {
    let headers = [("X-API-KEY", key), ("X-Request-Id", CAPTURE_REQUEST_ID)];
    let answer = http::get(appzone.addr, path, &headers)?;
    if answer.status != 200 {
        let body = String::from_utf8_lossy(&answer.body);
        bail!("appzone answered {} to {path}: {body}", answer.status);
    }
    let etag = answer
        .etag
        .with_context(|| format!("appzone's answer to {path} has no ETag"))?;
    let file = work.path.join(format!("{name}.json"));
    std::fs::write(&file, &answer.body)
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(Captured {
        file,
        etag,
        bytes: answer.body,
    })
}

/// A baseline replaying `captured` on `route`, checked to answer `path` with exactly the bytes
/// appzone answered (else the comparison would be of different work).
pub(super) fn replaying_baseline(
    bins: &Binaries,
    work: &WorkDir,
    name: &str,
    route: (&str, &str),
    captured: &Captured,
) -> Result<Server> {
    let server = Server::baseline(bins, work, name, route, captured)?;
    if http::get(server.addr, route.1, &[])?.body != captured.bytes {
        bail!(
            "the baseline {name} does not answer appzone's bytes for {}",
            route.1
        );
    }
    Ok(server)
}

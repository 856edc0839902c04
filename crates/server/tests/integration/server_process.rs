//! The real `appzone-server` binary as a child process: operator commands, `serve` on an
//! ephemeral port, SIGKILL and restart on the same database, RSS, and everything it logged.
//!
//! Used by the crash, soak and log-leak tests, which must see the process a platform team runs,
//! not the library in the test's own address space.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub const BIN: &str = env!("CARGO_BIN_EXE_appzone-server");

/// How long a debug build may take to start on a loaded two-core machine.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// The same under a wrapper: callgrind runs the server tens of times slower, and with two
/// other builds on the same two cores its start took more than a minute.
const WRAPPED_START_TIMEOUT: Duration = Duration::from_secs(300);

fn base_command(database_url: &str) -> Command {
    wrapped_command(&[], database_url)
}

/// The binary run by `wrapper` (a program and its arguments, such as valgrind), or directly
/// when it is empty.
pub(crate) fn wrapped_command(wrapper: &[String], database_url: &str) -> Command {
    let mut command = match wrapper.split_first() {
        Some((program, args)) => {
            let mut command = Command::new(program);
            command.args(args).arg(BIN);
            command
        }
        None => Command::new(BIN),
    };
    command
        .env_remove("APPZONE_DATABASE_URL")
        .env_remove("APPZONE_LISTEN")
        .env_remove("RUST_LOG")
        .arg("--database-url")
        .arg(database_url);
    command
}

/// Runs an operator command (`org create ...`) on `database_url`; panics unless it succeeds.
/// Returns stdout without its trailing newline.
#[track_caller]
pub fn operator(database_url: &str, args: &[&str]) -> String {
    let mut command = base_command(database_url);
    command
        .env("APPZONE_LOG", "warn")
        .args(args)
        .stdin(Stdio::null());
    let stdout = stdout_of(&mut command, &format!("appzone-server {args:?}"));
    stdout.trim_end_matches('\n').to_owned()
}

/// Runs `command` (`what`, for the failure report) to its end and returns its stdout; panics
/// with its stderr unless it succeeded.
#[track_caller]
pub fn stdout_of(command: &mut Command, what: &str) -> String {
    let out = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A new, migrated SQLite database in `dir` holding the organization `acme`, made with the
/// operator CLI: its URL.
pub fn acme_database(dir: &std::path::Path) -> String {
    let url = format!("sqlite://{}", dir.join("appzone.db").display());
    operator(&url, &["migrate"]);
    operator(&url, &["org", "create", "acme"]);
    url
}

/// A new key of `acme` with `role` (`admin` or `member`).
pub fn acme_key(url: &str, role: &str) -> String {
    operator(url, &["key", "create", "--org", "acme", "--role", role])
}

/// A running `appzone-server serve` child process.
pub struct ServerProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    stderr: Arc<Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl ServerProcess {
    /// Starts `serve --listen 127.0.0.1:0` with JSON logs filtered by `log_filter`, plus
    /// `serve_args`, and waits for its "listening" line.
    pub async fn start(database_url: &str, serve_args: &[&str], log_filter: &str) -> Self {
        Self::start_wrapped(&[], database_url, serve_args, log_filter).await
    }

    /// [`Self::start`], with the binary run by `wrapper` (valgrind, say).
    pub async fn start_wrapped(
        wrapper: &[String],
        database_url: &str,
        serve_args: &[&str],
        log_filter: &str,
    ) -> Self {
        Self::spawn(wrapper, database_url, serve_args, &[], log_filter).await
    }

    /// [`Self::start`], with these `APPZONE_*` settings in the environment.
    pub async fn start_with_env(
        database_url: &str,
        env: &[(&str, &str)],
        log_filter: &str,
    ) -> Self {
        Self::spawn(&[], database_url, &[], env, log_filter).await
    }

    async fn spawn(
        wrapper: &[String],
        database_url: &str,
        serve_args: &[&str],
        env: &[(&str, &str)],
        log_filter: &str,
    ) -> Self {
        let mut child = wrapped_command(wrapper, database_url)
            .envs(env.iter().copied())
            .env("APPZONE_LOG", log_filter)
            .args(["--log-format", "json", "serve", "--listen", "127.0.0.1:0"])
            .args(serve_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = tokio::sync::oneshot::channel::<String>();
        let pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        // The pipe must be drained for the whole life of the process, or a chatty server
        // (trace logging) would block on a full pipe.
        let reader = std::thread::spawn(move || {
            let mut tx = Some(tx);
            let mut lines = BufReader::new(pipe);
            let mut line = Vec::new();
            while lines.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
                if tx.is_some() {
                    if let Some(addr) = listening_addr(&line) {
                        let _ = tx.take().unwrap().send(addr);
                    }
                }
                sink.lock().unwrap().extend_from_slice(&line);
                line.clear();
            }
            // Anything that was not newline-terminated.
            let _ = lines.read_to_end(&mut line);
            sink.lock().unwrap().extend_from_slice(&line);
        });
        let start_timeout = if wrapper.is_empty() {
            START_TIMEOUT
        } else {
            WRAPPED_START_TIMEOUT
        };
        let addr = match tokio::time::timeout(start_timeout, rx).await {
            Ok(Ok(addr)) => addr,
            outcome => {
                let _ = child.kill();
                let _ = child.wait();
                let _ = reader.join();
                panic!(
                    "appzone-server did not report listening ({}): {}",
                    if outcome.is_err() {
                        "timed out"
                    } else {
                        "exited"
                    },
                    String::from_utf8_lossy(&stderr.lock().unwrap())
                );
            }
        };
        Self {
            child,
            base: format!("http://{addr}"),
            stderr,
            reader: Some(reader),
        }
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL: no shutdown code runs, nothing is flushed. Waits for the process to be gone.
    pub fn kill9(&mut self) -> ExitStatus {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        status
    }

    /// SIGTERM, then waits (bounded) for a graceful exit.
    pub async fn terminate(&mut self) -> ExitStatus {
        sigterm(self.pid());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                if let Some(reader) = self.reader.take() {
                    let _ = reader.join();
                }
                return status;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no exit 30 s after SIGTERM"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The exit status, if the process has exited (waits for nothing).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        let status = self.child.try_wait().unwrap()?;
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        Some(status)
    }

    /// Waits up to `within` for the process to exit, looking every 5 ms: its status and when
    /// it was first seen gone, or `None` if it still runs.
    pub async fn exit_within(
        &mut self,
        within: Duration,
    ) -> Option<(ExitStatus, tokio::time::Instant)> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(status) = self.exited() {
                return Some((status, tokio::time::Instant::now()));
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Everything the process wrote to stderr so far.
    pub fn logs(&self) -> Vec<u8> {
        self.stderr.lock().unwrap().clone()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Resident set size in KiB of process `pid`, from `/proc/<pid>/status`.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The `addr` field of the JSON "appzone-server listening" log line.
fn listening_addr(line: &[u8]) -> Option<String> {
    let value: serde_json::Value = serde_json::from_slice(line).ok()?;
    let fields = value.get("fields")?;
    if !fields.get("message")?.as_str()?.contains("listening") {
        return None;
    }
    Some(fields.get("addr")?.as_str()?.to_owned())
}

/// Sends SIGTERM to `pid` (the graceful-shutdown signal), with the system's `kill`.
pub fn sigterm(pid: u32) {
    assert!(Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

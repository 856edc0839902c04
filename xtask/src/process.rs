//! Child processes of every task: one way to run a command with its output passed on
//! ([`run`], [`run_bounded`]) and one way to run it and capture what it prints ([`output`],
//! [`output_with`], and the shortcuts over them). Each is shown as it would be typed, and every
//! captured one is bounded in time and killed past its limit.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

/// `--version` and other questions a tool answers at once.
pub(crate) const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Cargo as the task was run by it (`$CARGO`), so the same toolchain builds everything.
pub(crate) fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// A program of the toolchain the task was run with (`rustc`, `rustdoc`): the one beside
/// `$CARGO`, else the one on `PATH`.
pub(crate) fn toolchain_program(name: &str) -> PathBuf {
    std::env::var_os("CARGO")
        .map(PathBuf::from)
        .and_then(|cargo| Some(cargo.parent()?.join(name)))
        .filter(|program| program.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

/// Whether the task runs under CI (`CI=true`), where a check that cannot run must fail instead
/// of passing with a notice.
pub(crate) fn under_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// A check that cannot run here: prints `notice` and passes, except under CI, where it fails
/// (a check that did not run must not look like one that held).
pub(crate) fn skip(notice: &str) -> Result<()> {
    if under_ci() {
        bail!("{notice}: required under CI");
    }
    eprintln!("{notice}");
    Ok(())
}

/// The lines `child` writes to its piped stdout, read on a thread of their own so that a silent
/// child cannot hang the caller (which waits on the receiver with a deadline). `None` when its
/// stdout was not piped.
pub(crate) fn stdout_lines(child: &mut Child) -> Option<std::sync::mpsc::Receiver<String>> {
    let stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Some(rx)
}

/// A path as an argument, relative to the repository root when it is inside it.
pub(crate) fn path_arg(path: &Path) -> String {
    path.strip_prefix(crate::root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The command line to print: paths relative to the repository root for a command run there,
/// and `(in DIR)` before one run elsewhere.
pub(crate) fn show(command: &Command) -> String {
    let root = crate::root();
    let dir = command.get_current_dir().filter(|d| *d != root.as_path());
    let shown = |part: &std::ffi::OsStr| match dir {
        Some(_) => part.to_string_lossy().into_owned(),
        None => path_arg(Path::new(part)),
    };
    let program = shown(command.get_program());
    let args: Vec<String> = command.get_args().map(shown).collect();
    let dir = dir
        .map(|d| format!("(in {}) ", path_arg(d)))
        .unwrap_or_default();
    format!("{dir}{program} {}", args.join(" "))
}

/// Runs `command` (in the repository root unless it says otherwise), echoed first, output
/// passed on; Err when it fails. Not bounded: builds and test suites take what they take.
pub(crate) fn run(command: &mut Command) -> Result<()> {
    run_passing_output(command, None)
}

/// Like [`run`], and killed (an Err) when it outlives `limit`.
pub(crate) fn run_bounded(command: &mut Command, limit: Duration) -> Result<()> {
    run_passing_output(command, Some(limit))
}

fn run_passing_output(command: &mut Command, limit: Option<Duration>) -> Result<()> {
    let shown = show(command);
    eprintln!("$ {shown}");
    let mut child = start(command.stdin(Stdio::null()), &shown)?;
    let status = match limit {
        Some(limit) => wait_bounded(&mut child, limit, &shown)?,
        None => child
            .wait()
            .with_context(|| format!("cannot wait for `{shown}`"))?,
    };
    if status.success() {
        Ok(())
    } else {
        bail!("`{shown}` failed ({status})")
    }
}

/// What a finished command printed.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Output {
    /// Its stdout when it succeeded; else an Err naming it, with its stderr.
    pub(crate) fn stdout_if_success(self, shown: &str) -> Result<String> {
        if self.status.success() {
            Ok(self.stdout)
        } else {
            bail!("`{shown}` failed ({}): {}", self.status, self.stderr.trim())
        }
    }

    /// The first non-empty line of stdout, else of stderr (some tools print their version on
    /// stderr).
    pub(crate) fn first_line(&self) -> Option<&str> {
        [&self.stdout, &self.stderr]
            .into_iter()
            .find_map(|text| text.lines().map(str::trim).find(|l| !l.is_empty()))
    }
}

/// Runs `command` to its end (in the repository root unless it says otherwise), stdin closed,
/// capturing stdout and stderr. Err only when it cannot start or outlives `limit` (then it is
/// killed); a failing command is an `Ok` whose status says so.
pub(crate) fn output(command: &mut Command, limit: Duration) -> Result<Output> {
    output_with(command, limit, |_| {})
}

/// Like [`output`], and hands each line of stdout to `each_line` as it comes, for a long
/// program whose progress should be seen while it runs.
pub(crate) fn output_with(
    command: &mut Command,
    limit: Duration,
    mut each_line: impl FnMut(&str) + Send + 'static,
) -> Result<Output> {
    let shown = show(command);
    let mut child = start(
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
        &shown,
    )?;
    let stdout = child.stdout.take().context("no stdout pipe")?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    // Both pipes are drained while the child runs: one left full would block it.
    let stdout = std::thread::spawn(move || {
        let mut text = String::new();
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            let decoded = String::from_utf8_lossy(&line);
            each_line(decoded.trim_end_matches(['\n', '\r']));
            text.push_str(&decoded);
            line.clear();
        }
        text
    });
    let stderr = std::thread::spawn(move || {
        let mut raw = Vec::new();
        let _ = BufReader::new(stderr).read_to_end(&mut raw);
        String::from_utf8_lossy(&raw).into_owned()
    });
    // On a timeout the readers are left to end with the pipes.
    let status = wait_bounded(&mut child, limit, &shown)?;
    let joined = |reader: std::thread::JoinHandle<String>| {
        reader
            .join()
            .map_err(|_| anyhow!("reading the output of `{shown}` failed"))
    };
    Ok(Output {
        status,
        stdout: joined(stdout)?,
        stderr: joined(stderr)?,
    })
}

/// Stdout of a command that must succeed within `limit`.
pub(crate) fn stdout_of(command: &mut Command, limit: Duration) -> Result<String> {
    let shown = show(command);
    output(command, limit)?.stdout_if_success(&shown)
}

/// Whether `command` runs and succeeds within [`PROBE_TIMEOUT`]: a question, output dropped.
pub(crate) fn succeeds(command: &mut Command) -> bool {
    output(command, PROBE_TIMEOUT).is_ok_and(|o| o.status.success())
}

/// The first line a successful `--version` prints, if it runs and prints one.
pub(crate) fn version(command: &mut Command) -> Option<String> {
    let output = output(command, PROBE_TIMEOUT).ok()?;
    if !output.status.success() {
        return None;
    }
    output.first_line().map(str::to_owned)
}

/// Like [`version`], for a report: a note saying it failed when it gives none.
pub(crate) fn version_or_note(command: &mut Command) -> String {
    let shown = show(command);
    version(command).unwrap_or_else(|| format!("(`{shown}` failed)"))
}

/// `NAME VERSION; ...` for a report: what each tool's `--version` prints (a note where it fails).
pub(crate) fn tool_versions(tools: &[PathBuf]) -> String {
    let each = tools.iter().map(|tool| {
        let name = tool
            .file_name()
            .unwrap_or(tool.as_os_str())
            .to_string_lossy();
        let version = version_or_note(Command::new(tool).arg("--version"));
        match version.to_lowercase().starts_with(&name.to_lowercase()) {
            true => version,
            false => format!("{name} {version}"),
        }
    });
    each.collect::<Vec<_>>().join("; ")
}

/// `psql` on `url` with `sql`, stopping at the first error; returns its unaligned stdout.
pub(crate) fn psql(url: &str, sql: &str) -> Result<String> {
    stdout_of(
        Command::new("psql").args([url, "-X", "-q", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]),
        Duration::from_secs(600),
    )
}

fn start(command: &mut Command, shown: &str) -> Result<Child> {
    if command.get_current_dir().is_none() {
        command.current_dir(crate::root());
    }
    command
        .spawn()
        .with_context(|| format!("cannot start `{shown}`"))
}

/// Waits for `child` at most `limit`; kills it past that.
pub(crate) fn wait_bounded(child: &mut Child, limit: Duration, shown: &str) -> Result<ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "`{shown}` did not finish within {} s; killed",
                    limit.as_secs()
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                return Err(e).with_context(|| format!("cannot wait for `{shown}`"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn captures_both_streams_and_the_status() {
        let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let seen = lines.clone();
        let out = output_with(
            Command::new("sh").args(["-c", "echo one; echo two; echo oops >&2; exit 3"]),
            PROBE_TIMEOUT,
            move |line| seen.lock().unwrap().push(line.to_owned()),
        )
        .unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, "one\ntwo\n");
        assert_eq!(out.stderr, "oops\n");
        assert_eq!(out.first_line(), Some("one"));
        assert_eq!(*lines.lock().unwrap(), ["one", "two"]);
        let failed = out.stdout_if_success("sh").unwrap_err().to_string();
        assert!(failed.contains("oops"), "{failed}");
    }

    #[test]
    fn a_command_past_its_limit_is_killed() {
        let err = output(Command::new("sleep").arg("5"), Duration::from_millis(100)).unwrap_err();
        assert!(err.to_string().contains("killed"), "{err}");
        assert!(output(&mut Command::new("no-such-program-here"), PROBE_TIMEOUT).is_err());
    }
}

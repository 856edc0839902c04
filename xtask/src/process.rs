//! Child processes of the tasks that drive other tools (`clients`, `browser`): every one is
//! bounded in time and killed past its limit, and shown as it would be typed.

use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// `--version` and friends.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Runs `command` (in the repository root unless it says otherwise), output passed on; Err when
/// it fails or outlives `limit` (then it is killed).
pub(crate) fn run_bounded(command: &mut Command, limit: Duration) -> Result<(), String> {
    let shown = show(command);
    eprintln!("$ {shown}");
    if command.get_current_dir().is_none() {
        command.current_dir(crate::root());
    }
    let mut child = command
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start `{shown}`: {e}"))?;
    if wait_bounded(&mut child, limit, &shown)?.success() {
        Ok(())
    } else {
        Err(format!("`{shown}` failed"))
    }
}

/// Waits for `child` at most `limit`; kills it past that.
pub(crate) fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
    shown: &str,
) -> Result<ExitStatus, String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{shown}` did not finish within {} s; killed",
                    limit.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                let _ = child.kill();
                return Err(format!("cannot wait for `{shown}`: {e}"));
            }
        }
    }
}

pub(crate) enum Probe {
    NotFound,
    Failed(i32),
}

/// Stdout of a short command, bounded in time.
pub(crate) fn capture(command: &mut Command) -> Result<String, Probe> {
    let mut child = command
        .current_dir(crate::root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|_| Probe::NotFound)?;
    let mut stdout = child.stdout.take().ok_or(Probe::Failed(-1))?;
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let status = wait_bounded(&mut child, PROBE_TIMEOUT, "").map_err(|_| Probe::Failed(-1))?;
    let text = reader.join().unwrap_or_default();
    if status.success() {
        Ok(text)
    } else {
        Err(Probe::Failed(status.code().unwrap_or(-1)))
    }
}

/// The first line a `--version` prints, or a note that it printed none.
pub(crate) fn probe_version(command: &mut Command) -> String {
    let shown = show(command);
    match capture(command) {
        Ok(text) => text.lines().next().unwrap_or_default().trim().to_owned(),
        Err(_) => format!("(`{shown}` failed)"),
    }
}

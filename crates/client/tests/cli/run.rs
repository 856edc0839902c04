//! The `appzone` binary run as a child process, and what it printed.

use std::process::Stdio;
use std::time::Duration;

/// How one run of `appzone` ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `appzone` with `args` and, of the `APPZONE_*` variables, only those in `env`.
pub async fn appzone(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_with_stdout(args, env, Stdio::piped()).await
}

/// Runs `appzone` as [`appzone`] does, with stdout on `/dev/full`, where every write fails
/// (ENOSPC): the one failure of the command itself that a test can bring about.
pub async fn appzone_with_full_stdout(args: &[&str], env: &[(&str, &str)]) -> Run {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full (Linux)");
    run_with_stdout(args, env, Stdio::from(full)).await
}

async fn run_with_stdout(args: &[&str], env: &[(&str, &str)], stdout: Stdio) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_appzone"));
    command
        .args(args)
        .env_remove("APPZONE_URL")
        .env_remove("APPZONE_API_KEY")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    // `output()` would pipe stdout whatever was set; `spawn` keeps it.
    let child = command.spawn().unwrap();
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("appzone did not finish within 30 s")
        .unwrap();
    Run {
        code: output
            .status
            .code()
            .expect("appzone was killed by a signal"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Asserts the run exited with `code` (one of `appzone_client::exit_code`).
#[track_caller]
pub fn assert_exit(run: &Run, code: u8) {
    assert_eq!(run.code, i32::from(code), "stderr: {}", run.stderr);
}

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
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_appzone"));
    command
        .args(args)
        .env_remove("APPZONE_URL")
        .env_remove("APPZONE_API_KEY")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = tokio::time::timeout(Duration::from_secs(30), command.output())
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

//! The `appzone` binary run as a child process, and what it printed.

use std::process::Stdio;
use std::time::Duration;

use appzone_test_support::scripted::Server;
use tokio::io::AsyncWriteExt;

/// The key the scripted server's tests send.
pub const KEY: &str = "apz_AAAAAAAAAAAA_0123456789abcdefghijABCDEFGHIJklmn";

/// How one run of `appzone` ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `appzone` with `args` and, of the `APPZONE_*` variables, only those in `env`.
pub async fn appzone(args: &[&str], env: &[(&str, &str)]) -> Run {
    run_with(args, env, None, Stdio::piped()).await
}

/// Runs `appzone` as [`appzone`] does, with `stdin` on its standard input.
pub async fn appzone_with_stdin(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Run {
    run_with(args, env, Some(stdin), Stdio::piped()).await
}

/// Runs `appzone --url <server> --api-key KEY <args>`.
pub async fn against(server: &Server, args: &[&str]) -> Run {
    let url = server.url();
    let mut all = vec!["--url", url.as_str(), "--api-key", KEY];
    all.extend_from_slice(args);
    appzone(&all, &[]).await
}

/// Runs `appzone` as [`appzone`] does, with stdout on `/dev/full`, where every write fails
/// (ENOSPC): the one failure of the command itself that a test can bring about.
pub async fn appzone_with_full_stdout(args: &[&str], env: &[(&str, &str)]) -> Run {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full (Linux)");
    run_with(args, env, None, Stdio::from(full)).await
}

async fn run_with(args: &[&str], env: &[(&str, &str)], stdin: Option<&[u8]>, stdout: Stdio) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_appzone"));
    command
        .args(args)
        .env_remove("APPZONE_URL")
        .env_remove("APPZONE_API_KEY")
        .env("COLUMNS", "100")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    // `output()` would pipe stdout whatever was set; `spawn` keeps it.
    let mut child = command.spawn().unwrap();
    if let Some(stdin) = stdin {
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin).await.unwrap();
        // Closed, so that the command reads to its end.
        drop(input);
    }
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

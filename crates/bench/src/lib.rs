//! What the load-benchmark binaries (`appzone-bench-baseline`, `appzone-bench-client`) share:
//! how they run on tokio and how they end.

use std::future::Future;
use std::process::ExitCode;

use anyhow::Context;

/// Runs `task` to its end on a runtime made by `runtime` (I/O and time enabled), and turns its
/// outcome into the exit status: an error is printed with its causes, and exits 1. (Bad
/// arguments never get here: clap exits 2 for them.)
pub fn run_to_exit(
    runtime: &mut tokio::runtime::Builder,
    task: impl Future<Output = anyhow::Result<()>>,
) -> ExitCode {
    let outcome = runtime
        .enable_all()
        .build()
        .context("cannot start the runtime")
        .and_then(|runtime| runtime.block_on(task));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

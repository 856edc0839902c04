//! `cargo xtask browser`: the /docs page driven in headless Chromium.
//!
//! Starts `serve --demo` (SQLite, random port) and runs `tests/browser/docs.test.mjs` with
//! `playwright-core` (pinned in `tests/browser/package-lock.json`, installed with `npm ci`;
//! it ships no browser and downloads nothing) over Debian's `chromium`: a portal reader
//! authorizes through the UI, lists zones and deletes profiles with Try-it-out, and the page
//! must make no request to another origin and log no error. A screenshot goes to
//! `target/browser/docs.png`.
//!
//! Where Chromium (`/usr/bin/chromium` or `$CHROMIUM`) or npm is missing the task is skipped
//! with a notice saying how to install it; under CI (`CI=true`) that fails instead.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::demo_server::DemoServer;
use crate::process::{run_bounded, skip, version};

/// The test bounds itself to 2 minutes; this is the backstop if Node or Chromium hangs.
const TEST_TIMEOUT: Duration = Duration::from_secs(150);

pub fn run() -> Result<()> {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    let mut missing = Vec::new();
    if !Path::new(&chromium).is_file() {
        missing.push(format!(
            "no Chromium at {chromium}; install Debian's with `apt-get install chromium` or set \
             CHROMIUM to a Chromium binary"
        ));
    }
    missing.extend(crate::clients::node_missing());
    if !missing.is_empty() {
        return skip(&format!("browser: SKIPPED ({})", missing.join("; ")));
    }

    let chromium_version = version(Command::new(&chromium).arg("--version"))
        .with_context(|| format!("`{chromium} --version` failed"))?;
    let dir = crate::root().join("tests").join("browser");
    crate::kept::npm_project(&dir, &dir, &[])?;
    eprintln!("browser: {chromium_version}");

    let binary = crate::build::release()?.server();
    let server = DemoServer::sqlite(&binary, "browser")?;
    eprintln!("browser: demo server at {}", server.base_url);
    let out_dir = crate::target_dir().join("browser");
    let outcome = run_bounded(
        server
            .env(Command::new("node").arg("docs.test.mjs").current_dir(&dir))
            .env("CHROMIUM", &chromium)
            .env("BROWSER_OUT_DIR", &out_dir),
        TEST_TIMEOUT,
    );
    drop(server);
    let screenshot = out_dir.join("docs.png");
    match outcome {
        Ok(()) => {
            eprintln!(
                "browser: /docs works in Chromium; screenshot {}",
                screenshot.display()
            );
            Ok(())
        }
        Err(err) => bail!(
            "browser: the /docs page failed (see the FAIL lines above; {err:#}); screenshot {}",
            screenshot.display()
        ),
    }
}

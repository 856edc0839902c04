//! `cargo xtask msrv`: builds each crate with the oldest Rust its manifest declares.
//!
//! The declared minimums live in the manifests (`rust-version`): the workspace's for the
//! published crates (contract, client, conformance, cli), the server's own for the server.
//! The published crates are checked (`cargo +<version> check --locked`) in a target directory
//! of their own, so the older compiler never invalidates the main build. The server is built,
//! not only checked, with its minimum: that toolchain is the one of the shared release build
//! (build.rs), which every later step of CI runs, so the check costs no compile of its own.
//!
//! A toolchain that is not installed is skipped with a notice saying how to install it; under
//! CI (`CI=true`) a missing toolchain fails instead, so a declared minimum cannot rot unseen.

use std::process::Command;

use anyhow::{ensure, Result};

use crate::build;
use crate::process::{self, skip};

/// The published crates, as cargo's arguments, checked with the workspace's `rust-version`.
const PUBLISHED: &str =
    "-p appzone-contract -p appzone-client -p appzone-conformance --features appzone-client/cli";

pub fn run() -> Result<()> {
    let version = build::rust_version("Cargo.toml")?;
    if build::installed(&version) {
        // rustup's `cargo` proxy, not `$CARGO`: only the proxy reads `+toolchain`.
        process::run(
            Command::new("cargo")
                .arg(format!("+{version}"))
                .args(["check", "--locked", "--target-dir"])
                .arg(crate::target_dir().join(format!("msrv-{version}")))
                .args(PUBLISHED.split(' ')),
        )?;
        eprintln!("msrv: Cargo.toml's crates build with Rust {version}");
    } else {
        skip(&not_installed("Cargo.toml", &version))?;
    }
    let version = build::server_minimum()?;
    if !build::installed(&version) {
        return skip(&not_installed(build::SERVER_MANIFEST, &version));
    }
    // Fresh under CI, where the release build step made it.
    let release = build::release()?;
    ensure!(
        release.toolchain.as_deref() == Some(version.as_str()),
        "the release build did not use Rust {version}"
    );
    eprintln!(
        "msrv: {} builds with Rust {version} (the release build's toolchain)",
        build::SERVER_MANIFEST
    );
    Ok(())
}

fn not_installed(manifest: &str, version: &str) -> String {
    format!(
        "msrv: SKIPPED for {manifest}: Rust {version} (its rust-version) is not installed; \
         install it with `rustup toolchain install {version} --profile minimal` to run this check"
    )
}

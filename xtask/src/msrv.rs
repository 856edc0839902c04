//! `cargo xtask msrv`: builds each published crate with the oldest Rust it declares.
//!
//! The declared minimums live in the manifests (`rust-version`): the workspace's for the
//! published crates (contract, client, conformance, cli), the server's own for the server.
//! Each group is checked (`cargo +<version> check --locked`) in its own target directory, so the
//! older compilers never invalidate the main build.
//!
//! A toolchain that is not installed is skipped with a notice saying how to install it; under
//! CI (`CI=true`) a missing toolchain fails instead, so a declared minimum cannot rot unseen.

use std::process::Command;

use anyhow::{Context, Result};

use crate::process::{self, skip, succeeds};

/// The crates checked against each manifest's `rust-version`, as cargo's arguments.
const GROUPS: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "-p appzone-contract -p appzone-client -p appzone-conformance --features appzone-client/cli",
    ),
    ("crates/server/Cargo.toml", "-p appzone-server"),
];

pub fn run() -> Result<()> {
    for (manifest, packages) in GROUPS {
        let version = rust_version(manifest)?;
        if !installed(&version) {
            skip(&format!(
                "msrv: SKIPPED for {manifest}: Rust {version} (its rust-version) is not installed; \
                 install it with `rustup toolchain install {version} --profile minimal` to run \
                 this check"
            ))?;
            continue;
        }
        // rustup's `cargo` proxy, not `$CARGO`: only the proxy reads `+toolchain`.
        process::run(
            Command::new("cargo")
                .arg(format!("+{version}"))
                .args(["check", "--locked", "--target-dir"])
                .arg(crate::target_dir().join(format!("msrv-{version}")))
                .args(packages.split(' ')),
        )?;
        eprintln!("msrv: {manifest} builds with Rust {version}");
    }
    Ok(())
}

/// The `rust-version = "..."` of a manifest (the first one: the package's or the workspace's).
fn rust_version(manifest: &str) -> Result<String> {
    let path = crate::root().join(manifest);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("rust-version"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .map(|value| value.trim().trim_matches('"').to_owned())
        .find(|value| !value.is_empty())
        .with_context(|| format!("{manifest} declares no rust-version"))
}

/// Whether rustup has this toolchain (never installs it).
fn installed(version: &str) -> bool {
    succeeds(
        Command::new("rustup")
            .args(["run", version, "rustc", "--version"])
            .env("RUSTUP_AUTO_INSTALL", "0"),
    )
}

//! `cargo xtask msrv`: builds each published crate with the oldest Rust it declares.
//!
//! The declared minimums live in the manifests (`rust-version`): the workspace's for the
//! library crates (contract, client with its `cli` feature), the server's own for the server.
//! Each group is checked (`cargo +<version> check --locked`) in its own target directory, so the
//! older compilers never invalidate the main build.
//!
//! A toolchain that is not installed is skipped with a notice saying how to install it; under
//! CI (`CI=true`) a missing toolchain fails instead, so a declared minimum cannot rot unseen.

use std::process::{Command, Stdio};

/// The crates checked against each manifest's `rust-version`.
const GROUPS: &[(&str, &[&str])] = &[
    (
        "Cargo.toml",
        &[
            "-p",
            "appzone-contract",
            "-p",
            "appzone-client",
            "--features",
            "appzone-client/cli",
        ],
    ),
    ("crates/server/Cargo.toml", &["-p", "appzone-server"]),
];

pub fn run() -> Result<(), String> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    for (manifest, packages) in GROUPS {
        let version = rust_version(manifest)?;
        if !installed(&version) {
            let how = format!("`rustup toolchain install {version} --profile minimal`");
            if ci {
                return Err(format!(
                    "msrv: Rust {version} (rust-version of {manifest}) is not installed; {how}"
                ));
            }
            eprintln!(
                "msrv: SKIPPED for {manifest}: Rust {version} is not installed (install it with \
                 {how} to run this check)"
            );
            continue;
        }
        let target_dir = crate::target_dir().join(format!("msrv-{version}"));
        let target_dir = target_dir.to_string_lossy().into_owned();
        let toolchain = format!("+{version}");
        let mut args = vec![
            toolchain.as_str(),
            "check",
            "--locked",
            "--target-dir",
            &target_dir,
        ];
        args.extend_from_slice(packages);
        crate::run("cargo", &args)?;
        eprintln!("msrv: {manifest} builds with Rust {version}");
    }
    Ok(())
}

/// The `rust-version = "..."` of a manifest (the first one: the package's or the workspace's).
fn rust_version(manifest: &str) -> Result<String, String> {
    let path = crate::root().join(manifest);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("rust-version"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .map(|value| value.trim().trim_matches('"').to_owned())
        .find(|value| !value.is_empty())
        .ok_or_else(|| format!("{manifest} declares no rust-version"))
}

/// Whether rustup has this toolchain (never installs it).
fn installed(version: &str) -> bool {
    Command::new("rustup")
        .args(["run", version, "rustc", "--version"])
        .env("RUSTUP_AUTO_INSTALL", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

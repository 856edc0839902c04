//! The one release build every task that runs the server from outside shares: the instruction
//! guard and the benchmark lab, the generated clients, the browser, the old clients and the
//! container image.
//!
//! It is a static binary (musl where the target and `musl-gcc` are installed, glibc with
//! `crt-static` otherwise), because the image runs it `FROM scratch`; the other tasks take the
//! same file rather than build a second, dynamic one (the benchmark lab adds its client
//! benchmark to it). The server and the bare-axum baseline allocate through mimalloc, so the C
//! library's allocator does not enter what the instruction guard compares. One command line, so
//! cargo finds it fresh for every task after the first.
//!
//! It is compiled with the server's minimum Rust (its manifest's `rust-version`) where rustup
//! has that toolchain: the build is then also the proof that the minimum holds (`cargo xtask
//! msrv` counts on it), and everything CI runs from outside runs what that compiler made,
//! rather than a second compile of the server's whole graph checking it beside this one.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{ensure, Context, Result};

use crate::process::{cargo, run, skip, stdout_of, succeeds};

/// The release binaries of the server and the benchmark crate.
#[derive(Debug, Clone)]
pub(crate) struct Release {
    /// The target triple they were built for.
    pub(crate) target: String,
    /// `target/<triple>/release/`.
    pub(crate) dir: PathBuf,
    /// The rustup toolchain named for the build (the server's minimum); `None`: the default.
    pub(crate) toolchain: Option<String>,
}

impl Release {
    /// `appzone-server`.
    pub(crate) fn server(&self) -> PathBuf {
        self.dir.join("appzone-server")
    }
}

/// Builds (or finds fresh) the static release binaries of `appzone-server` and the bare-axum
/// baseline of `appzone-bench`: what CI runs. Not the client benchmark, which only `cargo xtask
/// bench` runs: it needs the client's TLS stack (aws-lc's C build), which nothing else of CI
/// needs in release.
pub(crate) fn release() -> Result<Release> {
    build(false)
}

/// The same binaries and `appzone-bench-client`.
pub(crate) fn release_with_client() -> Result<Release> {
    build(true)
}

fn build(with_client: bool) -> Result<Release> {
    let musl = format!("{}-unknown-linux-musl", std::env::consts::ARCH);
    let toolchain = toolchain(&musl)?;
    let mut targets = Command::new("rustup");
    targets.args(["target", "list", "--installed"]);
    let mut build = match &toolchain {
        Some(version) => {
            targets.args(["--toolchain", version]);
            // rustup's `cargo` proxy, not `$CARGO`: only the proxy reads `+toolchain`.
            let mut cargo = Command::new("cargo");
            cargo.arg(format!("+{version}"));
            cargo
        }
        None => cargo(),
    };
    let installed = stdout_of(&mut targets, Duration::from_secs(30)).unwrap_or_default();
    let has_musl = installed.lines().any(|t| t.trim() == musl)
        && succeeds(Command::new("musl-gcc").arg("--version"));
    build.args("build --release --locked -p appzone-server -p appzone-bench --bins".split(' '));
    if !with_client {
        build.arg("--no-default-features");
    }
    let target = if has_musl {
        build.env(format!("CC_{}", musl.replace('-', "_")), "musl-gcc");
        musl
    } else {
        eprintln!(
            "build: the {musl} target or musl-gcc is missing; building static glibc binaries \
             instead (`rustup target add {musl}` and `apt-get install musl-tools` for musl)"
        );
        build.env("RUSTFLAGS", "-C target-feature=+crt-static");
        format!("{}-unknown-linux-gnu", std::env::consts::ARCH)
    };
    // An explicit target keeps build scripts and proc macros dynamic.
    run(build.args(["--target", &target]))?;
    let dir = crate::target_dir().join(&target).join("release");
    let release = Release {
        target,
        dir,
        toolchain,
    };
    ensure!(
        release.server().is_file(),
        "the build made no {}",
        release.server().display()
    );
    Ok(release)
}

/// The server's minimum Rust when rustup has it; else the default toolchain, with a notice
/// (under CI, a failure: the minimum would go unchecked).
fn toolchain(musl: &str) -> Result<Option<String>> {
    let version = server_minimum()?;
    if installed(&version) {
        return Ok(Some(version));
    }
    skip(&format!(
        "build: Rust {version}, the server's minimum, is not installed, so the release build \
         uses the default toolchain and does not show that the minimum holds (`rustup \
         toolchain install {version} --profile minimal --target {musl}`)"
    ))?;
    Ok(None)
}

/// The server's manifest, whose `rust-version` is the release build's toolchain.
pub(crate) const SERVER_MANIFEST: &str = "crates/server/Cargo.toml";

/// The server's `rust-version`: the toolchain of the release build.
pub(crate) fn server_minimum() -> Result<String> {
    rust_version(SERVER_MANIFEST)
}

/// The `rust-version = "..."` of a manifest (the first one: the package's or the workspace's).
pub(crate) fn rust_version(manifest: &str) -> Result<String> {
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
pub(crate) fn installed(version: &str) -> bool {
    succeeds(
        Command::new("rustup")
            .args(["run", version, "rustc", "--version"])
            .env("RUSTUP_AUTO_INSTALL", "0"),
    )
}

//! `cargo xtask deploy-check`: what `deploy/` ships, checked offline with the tools a platform
//! team runs on it, each skipped with a notice where its tool is missing (under CI that fails):
//!
//! - the Kubernetes manifests against the Kubernetes schemas (`kubernetes-validate`, which
//!   ships them), strictly: an unknown field fails;
//! - the Prometheus alerting rules: `promtool check rules` on `deploy/prometheus/alerts.yml`,
//!   and `promtool test rules` on `alerts.test.yml` (each alert fed its series);
//! - the systemd unit: `systemd-analyze verify`, which must print nothing, and `systemd-analyze
//!   security --offline`, whose exposure score must stay at or below [`SYSTEMD_EXPOSURE_MAX`].

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, ensure, Context, Result};

use crate::process::{output, path_arg, run, show, skip, succeeds, PROBE_TIMEOUT};

/// The Kubernetes version the manifests are validated against.
const KUBERNETES_VERSION: &str = "1.33.0";

/// The highest `systemd-analyze security` exposure the unit may have, in tenths (its
/// `--threshold` unit): measured 1.1 OK (systemd 252) after the hardening, 5.6 MEDIUM before;
/// a change that loosens the sandbox past 1.2 fails.
const SYSTEMD_EXPOSURE_MAX: u32 = 12;

/// The path the unit runs the binary from (`ExecStart=`), which `verify` requires to exist.
const UNIT_BINARY: &str = "/usr/local/bin/appzone-server";

pub fn check() -> Result<()> {
    kubernetes()?;
    prometheus()?;
    systemd()
}

fn deploy_dir(name: &str) -> PathBuf {
    crate::root().join("deploy").join(name)
}

fn kubernetes() -> Result<()> {
    if !succeeds(Command::new("kubernetes-validate").arg("--version")) {
        return skip(
            "deploy-check: Kubernetes manifests SKIPPED (kubernetes-validate is not installed: \
             `python3 -m pip install kubernetes-validate==1.37.0`)",
        );
    }
    let dir = deploy_dir("kubernetes");
    let mut manifests: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    manifests.sort();
    ensure!(!manifests.is_empty(), "no manifests in deploy/kubernetes");
    run(Command::new("kubernetes-validate")
        .args(["--strict", "--kubernetes-version", KUBERNETES_VERSION])
        .args(&manifests))
}

fn prometheus() -> Result<()> {
    if !succeeds(Command::new("promtool").arg("--version")) {
        return skip(
            "deploy-check: Prometheus rules SKIPPED (promtool is not installed; Debian/Ubuntu: \
             `apt-get install prometheus`)",
        );
    }
    let dir = deploy_dir("prometheus");
    run(Command::new("promtool")
        .args(["check", "rules"])
        .arg(dir.join("alerts.yml")))?;
    run(Command::new("promtool")
        .args(["test", "rules"])
        .arg(dir.join("alerts.test.yml")))
}

fn systemd() -> Result<()> {
    if !succeeds(Command::new("systemd-analyze").arg("--version")) {
        return skip(
            "deploy-check: systemd unit SKIPPED (systemd-analyze is not installed; \
             Debian/Ubuntu: `apt-get install systemd`)",
        );
    }
    let unit = deploy_dir("systemd").join("appzone-server.service");
    verify(&unit)?;
    security(&unit)
}

/// `systemd-analyze verify`, which exits 0 on an unknown directive or syscall group and only
/// says so on stderr: anything it prints fails. It also requires each `ExecStart*=` binary to
/// exist, so it reads a copy of the unit (same name) whose commands run a stub in a scratch
/// directory instead of [`UNIT_BINARY`]; nothing else differs.
fn verify(unit: &Path) -> Result<()> {
    let text =
        std::fs::read_to_string(unit).with_context(|| format!("cannot read {}", unit.display()))?;
    ensure!(
        text.contains(UNIT_BINARY),
        "{} does not run {UNIT_BINARY}",
        path_arg(unit)
    );
    let scratch = crate::target_dir().join("deploy-check").join("systemd");
    crate::fresh_dir(&scratch)?;
    let stub = scratch.join("appzone-server");
    std::fs::write(&stub, "#!/bin/sh\n").context("cannot write the stub binary")?;
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755))
        .context("cannot make the stub binary executable")?;
    let stub_path = stub
        .to_str()
        .context("the target directory's path is not UTF-8")?;
    let copy = scratch.join(unit.file_name().context("unit without a name")?);
    std::fs::write(&copy, text.replace(UNIT_BINARY, stub_path))
        .with_context(|| format!("cannot write {}", copy.display()))?;
    let mut command = Command::new("systemd-analyze");
    command.args(["verify", "--man=no"]).arg(&copy);
    let shown = show(&command);
    eprintln!("$ {shown}   (ExecStart binary: {UNIT_BINARY} -> a stub)");
    let out = output(&mut command, PROBE_TIMEOUT)?;
    let said = format!("{}{}", out.stdout, out.stderr);
    if !out.status.success() || !said.trim().is_empty() {
        bail!(
            "`{shown}` ({}) on {}:\n{}",
            out.status,
            path_arg(unit),
            said.trim()
        );
    }
    eprintln!("deploy-check: {} verified", path_arg(unit));
    Ok(())
}

/// `systemd-analyze security --offline`: the unit's exposure score, at most
/// [`SYSTEMD_EXPOSURE_MAX`] (its `--threshold` fails the command beyond it).
fn security(unit: &Path) -> Result<()> {
    let mut command = Command::new("systemd-analyze");
    command
        .args(["security", "--offline=true", "--no-pager"])
        .arg(format!("--threshold={SYSTEMD_EXPOSURE_MAX}"))
        .arg(unit);
    let shown = show(&command);
    eprintln!("$ {shown}");
    let out = output(&mut command, PROBE_TIMEOUT)?;
    let overall = out
        .stdout
        .lines()
        .chain(out.stderr.lines())
        .find(|line| line.contains("Overall exposure level"))
        .map(str::trim)
        .map(str::to_owned);
    let Some(overall) = overall else {
        bail!(
            "`{shown}` ({}) printed no exposure level:\n{}{}",
            out.status,
            out.stdout,
            out.stderr
        );
    };
    let threshold = format!(
        "{}.{}",
        SYSTEMD_EXPOSURE_MAX / 10,
        SYSTEMD_EXPOSURE_MAX % 10
    );
    if !out.status.success() {
        let lost: Vec<&str> = out.stdout.lines().filter(|l| l.contains('✗')).collect();
        bail!(
            "`{shown}` failed: {overall}, above the threshold {threshold}; the unit lost some of \
             its sandboxing:\n{}",
            lost.join("\n")
        );
    }
    eprintln!("deploy-check: {overall} (threshold {threshold})");
    Ok(())
}

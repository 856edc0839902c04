//! `appzone conformance`: the contract's checks against a server (see the
//! `appzone-conformance` crate).

use std::path::PathBuf;
use std::time::Duration;

use appzone_conformance::{self as conformance, Config};

use super::{print, Failure};

/// The options of `appzone conformance`; `--url`, `--api-key`, `--output` and `--timeout` are
/// the global ones.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// An admin key of the organization owning --profile: adds the deletion checks, and the
    /// zone-mapping writes on a mapping of the kit's own (`conformance-<uuid>`, deleted again).
    #[arg(
        long,
        value_name = "KEY",
        env = "APPZONE_ADMIN_KEY",
        hide_env_values = true
    )]
    admin_key: Option<String>,
    /// A member key of the organization owning --profile (expects 403 on it).
    #[arg(
        long,
        value_name = "KEY",
        env = "APPZONE_MEMBER_KEY",
        hide_env_values = true
    )]
    member_key: Option<String>,
    /// A live profile of the admin's organization. It is deleted.
    #[arg(long, value_name = "ID")]
    profile: Option<String>,
    /// A live profile of another organization (the admin must get 404 for it).
    #[arg(long, value_name = "ID")]
    foreign_profile: Option<String>,
    /// Never send a PUT or a DELETE: the checks that need one are skipped.
    #[arg(long)]
    read_only: bool,
    /// Also write the report as JUnit XML to FILE.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

/// Runs the checks and prints the report; any failed check is a failure of the command (exit 1).
pub fn run(
    args: Args,
    url: String,
    api_key: String,
    json: bool,
    timeout: Duration,
) -> Result<(), Failure> {
    let mut config = Config::new(url, api_key)
        .read_only(args.read_only)
        .timeout(timeout);
    if let Some(key) = args.admin_key {
        config = config.admin_key(key);
    }
    if let Some(key) = args.member_key {
        config = config.member_key(key);
    }
    if let Some(id) = args.profile {
        config = config.profile(id);
    }
    if let Some(id) = args.foreign_profile {
        config = config.foreign_profile(id);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Local(format!("cannot start the async runtime: {e}")))?;
    let report = runtime.block_on(conformance::run(config));
    if let Some(path) = &args.junit {
        std::fs::write(path, report.junit())
            .map_err(|e| Failure::Local(format!("cannot write {}: {e}", path.display())))?;
    }
    let text = if json {
        format!("{}\n", report.json())
    } else {
        report.text()
    };
    print(&text)?;
    if report.is_success() {
        Ok(())
    } else {
        let summary = report.summary();
        Err(Failure::Local(format!(
            "{} of {} checks failed ({summary})",
            summary.failed,
            report.checks().len()
        )))
    }
}

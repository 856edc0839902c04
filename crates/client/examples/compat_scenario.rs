//! The old-client scenario: what an application built on this version of the client does,
//! run against a server to prove the server still serves it.
//!
//! `cargo xtask old-client` builds this example from the tree of each released version and
//! runs it against the *current* server, so a change of the server that breaks a released
//! client fails there. It uses only the client's public API, as an application would.
//!
//! ```text
//! cargo run -p appzone-client --example compat_scenario -- BASE_URL ADMIN_KEY MEMBER_KEY PROFILE_ID
//! ```
//!
//! Each value may come from the environment instead (`APPZONE_BASE_URL`, `APPZONE_ADMIN_KEY`,
//! `APPZONE_MEMBER_KEY`, `APPZONE_DELETABLE_PROFILE`); prefer it for the keys, since a command
//! line is visible to other users. The server must serve the built-in catalog; the two keys
//! belong to one organization, which owns the profile. The profile is deleted.
//!
//! Each step prints one `ok: ...` line. The first step that fails prints `FAILED: ...` on
//! stderr and the program exits with 1 (2 for a usage error).

use std::fmt::Debug;
use std::process::ExitCode;
use std::time::Duration;

use appzone_client::{Client, Conditional, Error, ErrorCode};

/// The timeout of each request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The whole scenario gives up after this long.
const SCENARIO_BOUND: Duration = Duration::from_secs(60);

const USAGE: &str = "usage: compat_scenario BASE_URL ADMIN_KEY MEMBER_KEY PROFILE_ID (or set \
                     APPZONE_BASE_URL, APPZONE_ADMIN_KEY, APPZONE_MEMBER_KEY, \
                     APPZONE_DELETABLE_PROFILE)";

/// What the scenario needs to know.
struct Args {
    base_url: String,
    admin_key: String,
    member_key: String,
    profile: String,
}

impl Args {
    /// The positional arguments, each falling back to its environment variable.
    fn read() -> Result<Self, String> {
        let mut positional = std::env::args().skip(1);
        let mut next = |variable: &str| -> Result<String, String> {
            positional
                .next()
                .or_else(|| std::env::var(variable).ok())
                .filter(|value| !value.trim().is_empty())
                .ok_or_else(|| format!("missing {variable}"))
        };
        Ok(Args {
            base_url: next("APPZONE_BASE_URL")?,
            admin_key: next("APPZONE_ADMIN_KEY")?,
            member_key: next("APPZONE_MEMBER_KEY")?,
            profile: next("APPZONE_DELETABLE_PROFILE")?,
        })
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = match Args::read() {
        Ok(args) => args,
        Err(why) => {
            eprintln!("compat_scenario: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match tokio::time::timeout(SCENARIO_BOUND, scenario(&args)).await {
        Ok(Ok(())) => {
            println!(
                "ok: the scenario of appzone-client {} passed",
                env!("CARGO_PKG_VERSION")
            );
            ExitCode::SUCCESS
        }
        Ok(Err(failure)) => {
            eprintln!("FAILED: {failure}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "FAILED: the scenario did not finish within {} s",
                SCENARIO_BOUND.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}

/// The steps, in order; the first failure ends it, described for a person.
async fn scenario(args: &Args) -> Result<(), String> {
    let admin = client(&args.base_url, &args.admin_key)?;
    let member = client(&args.base_url, &args.member_key)?;

    let providers = admin
        .list_providers()
        .await
        .map_err(|e| format!("list providers: {e}"))?;
    require(
        providers.data.iter().any(|p| p == "aws"),
        "list providers: no `aws` in the listing",
        &providers.data,
    )?;
    println!(
        "ok: list providers: {} providers, aws among them",
        providers.data.len()
    );

    let regions = admin
        .list_regions("aws")
        .await
        .map_err(|e| format!("list regions of aws: {e}"))?;
    require(
        regions.data.iter().any(|r| r == "us-east-1"),
        "list regions of aws: no `us-east-1` in the listing",
        &regions.data,
    )?;
    println!(
        "ok: list regions of aws: {} regions, us-east-1 among them",
        regions.data.len()
    );

    let zones = member
        .list_zones("aws", "us-east-1")
        .await
        .map_err(|e| format!("list zones of aws/us-east-1: {e}"))?;
    require(
        !zones.data.is_empty(),
        "list zones of aws/us-east-1: no zones",
        &zones,
    )?;
    // Every successful listing says `success` (the contract's STATUS_SUCCESS).
    require(
        zones.status == "success",
        "list zones of aws/us-east-1: status is not `success`",
        &zones,
    )?;
    println!(
        "ok: list zones of aws/us-east-1: {} ({}), status {}",
        zones.data.len(),
        zones.data.join(", "),
        zones.status
    );

    let etag = match member
        .list_zones_if_changed("aws", "us-east-1", None)
        .await
        .map_err(|e| format!("conditional zones listing without an ETag: {e}"))?
    {
        Conditional::Modified {
            listing,
            etag: Some(etag),
        } if listing.data == zones.data => etag,
        other => {
            return Err(format!(
                "conditional zones listing without an ETag: expected the same zones and an \
                 ETag, got {other:?}"
            ))
        }
    };
    let again = member
        .list_zones_if_changed("aws", "us-east-1", Some(&etag))
        .await
        .map_err(|e| format!("conditional zones listing with ETag {etag}: {e}"))?;
    require(
        again == Conditional::NotModified,
        &format!("conditional zones listing with ETag {etag}: expected 304 Not Modified"),
        &again,
    )?;
    println!("ok: conditional zones listing: ETag {etag} sent back, 304 Not Modified");

    let error = expect_error(
        "list zones of the unknown region aws/mars-1",
        member.list_zones("aws", "mars-1").await,
        |e| e.is_not_found() && e.error_code() == Some(&ErrorCode::RegionNotFound),
        "404 region_not_found (is_not_found)",
    )?;
    println!("ok: unknown region: {error}");

    let error = expect_error(
        "list regions of the unknown provider nope",
        member.list_regions("nope").await,
        |e| {
            e.status().map(|s| s.as_u16()) == Some(400)
                && e.error_code() == Some(&ErrorCode::InvalidProvider)
        },
        "400 invalid_provider",
    )?;
    println!("ok: unknown provider: {error}");

    let stranger = client(
        &args.base_url,
        "apz_compatScenarioWrongKey0000000000000000000",
    )?;
    let error = expect_error(
        "list providers with a wrong key",
        stranger.list_providers().await,
        Error::is_unauthorized,
        "401 (is_unauthorized)",
    )?;
    println!("ok: wrong key: {error}");

    let error = expect_error(
        "delete the profile with the member key",
        member.delete_profile(args.profile.as_str()).await,
        Error::is_forbidden,
        "403 (is_forbidden)",
    )?;
    println!("ok: member key may not delete: {error}");

    admin
        .delete_profile(args.profile.as_str())
        .await
        .map_err(|e| format!("delete the profile with the admin key: {e}"))?;
    println!("ok: admin key deleted profile {}", args.profile);

    let error = expect_error(
        "delete the profile a second time",
        admin.delete_profile(args.profile.as_str()).await,
        Error::is_not_found,
        "404 (is_not_found)",
    )?;
    println!("ok: second delete: {error}");
    Ok(())
}

/// A client with a short timeout, so a hung server fails a step rather than the whole bound.
fn client(base_url: &str, key: &str) -> Result<Client, String> {
    Client::builder(base_url, key.to_owned())
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| format!("cannot build a client of {base_url}: {e}"))
}

/// `Ok` when `holds`; else the failure `what`, showing what was received.
fn require(holds: bool, what: &str, received: &impl Debug) -> Result<(), String> {
    if holds {
        Ok(())
    } else {
        Err(format!("{what}; received {received:?}"))
    }
}

/// The error of `result` when it is the expected one (`check`), as one line; else a failure of
/// `step` saying what was wanted (`want`) and what came.
fn expect_error<T: Debug>(
    step: &str,
    result: Result<T, Error>,
    check: impl Fn(&Error) -> bool,
    want: &str,
) -> Result<String, String> {
    match result {
        Err(error) if check(&error) => Ok(error.to_string()),
        Err(error) => Err(format!("{step}: expected {want}, got the error {error}")),
        Ok(value) => Err(format!("{step}: expected {want}, got success: {value:?}")),
    }
}

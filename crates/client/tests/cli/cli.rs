//! The `appzone` binary, run as a process against the scripted server, and against the real
//! server where its exact answers matter; a module per theme.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use appzone_client::exit_code;
use appzone_contract::headers::API_KEY;
use appzone_contract::{ProviderList, RegionList, ZoneList};
use appzone_test_support::TestApp;

use crate::run::{against, appzone, assert_exit, Run, KEY};
use appzone_test_support::scripted::{closed_port, Reply, Server};

mod commands;
mod errors;
mod exit_codes;
mod hints;
mod listings;

/// Asserts `stderr` is exactly one line per prefix, each starting with its prefix.
#[track_caller]
fn assert_lines(stderr: &str, prefixes: &[&str]) {
    assert!(stderr.ends_with('\n'), "{stderr:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), prefixes.len(), "{stderr}");
    for (line, prefix) in lines.iter().zip(prefixes) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}"
        );
    }
    assert!(!stderr.contains(KEY), "{stderr}");
}

/// Runs `appzone --url <url> <args>` with the admin key of `server` (the real appzone server,
/// for the answers whose exact text the command line's report is about: no such route, unknown
/// region) in `APPZONE_API_KEY`.
async fn as_admin(server: &TestApp, url: &str, args: &[&str]) -> Run {
    let mut all = vec!["--url", url];
    all.extend_from_slice(args);
    appzone(&all, &[("APPZONE_API_KEY", &server.admin_key)]).await
}

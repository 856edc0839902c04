//! The `appzone` commands of API 1.2, run as a process: `zones --identities [--mapping ID]` and
//! `mappings put|list|show|delete`, against the scripted server for what goes on the wire and
//! what is printed, and against the real server end to end; a module per command. `offerings`
//! holds those of API 1.3 (`mappings put --offerings`, `zones --offers`, `instance-types`).

use appzone_client::{exit_code, ErrorCode, ZoneIdentityList, ZoneMappingList};
use appzone_contract::headers::API_KEY;
use appzone_test_support::TestApp;
use http::Method;

use crate::run::{against, appzone, appzone_with_stdin, assert_exit, KEY};
use appzone_test_support::fixtures::{DESCRIBE_US_EAST_1, LIST_LOCATIONS};
use appzone_test_support::scripted::{closed_port, Reply, Server};
use appzone_test_support::scripted::{identities_reply, mapping_reply, mappings_reply};

mod end_to_end;
mod identities;
mod manage;
mod offerings;
mod offerings_queries;
mod put;
mod walkthrough;

/// A file holding `contents`, removed when the returned guard drops.
fn file_with(contents: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, contents.as_bytes()).unwrap();
    file
}

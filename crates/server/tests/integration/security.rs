//! OWASP API Security Top 10 (2023) checks that apply to this API, one named test each, and the
//! promise that keys appear nowhere: not in logs (at trace level), error bodies or the database.
//!
//! What applies: API1 (object-level authorization of deletes; zones are not per tenant), API2
//! (authentication), API4 (resource consumption), API5 (function-level authorization), API8
//! (misconfiguration) and API9 (inventory). API3 applies only to what error bodies reveal (API8
//! here); API6, API7 and API10 do not apply (no business flows to abuse, no server-side fetches,
//! no third-party APIs consumed). Figures are printed on stderr (`-- --nocapture`).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use appzone_contract::ApiKey;
use appzone_server::ServiceConfig;
use appzone_test_support::{both_backends, fast_config, fill_path, raw, Resp, TestApp};

use crate::server_process::{operator, ServerProcess};

mod authentication;
mod authorization;
mod exposure;

fn zones() -> String {
    TestApp::zones_path("aws", "us-east-1")
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The contract crate's document (the contract's own test pins `openapi.json` to it).
fn openapi_document() -> serde_json::Value {
    appzone_contract::openapi::document()
}

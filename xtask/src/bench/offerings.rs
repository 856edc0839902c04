//! What runs where, measured: the bench mappings' offerings (recorded AWS data), and the
//! stores issue 53 sets bounds on: a full us-east-1 AWS output (about 6,300 offerings, 1 MB as
//! the CLI prints it) and a 4 MB Azure `list-skus` within 1 s each, and the server's peak memory
//! while it stores a 32 MiB body (at most 4 times the body above its idle size).
//!
//! The large outputs are built here from the recorded ones: the AWS one with 1,354 instance
//! type names of our own over us-east-1's six zone ids (the size of the real set), the Azure
//! ones by repeating the recorded eastus SKUs under new names. They measure size, not facts.

use std::time::{Duration, Instant};

use anyhow::{ensure, Result};
use reqwest::Method;
use serde_json::{json, Value};

use super::servers::Server;
use crate::http;

/// Recorded AWS offerings of us-east-1 by zone id (52 types, 227 offerings).
const AWS_BY_ZONE_ID: &str = include_str!(
    "../../../crates/test-support/fixtures/offerings/aws-offerings-az-id-us-east-1.json"
);
/// Recorded Azure SKUs of eastus (17).
const AZURE_EASTUS: &str =
    include_str!("../../../crates/test-support/fixtures/offerings/azure-list-skus-eastus.json");

/// us-east-1's zone ids, and the letters of the bench's accounts.
const ZONE_IDS: [&str; 6] = [
    "use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6",
];

/// `describe-availability-zones` of us-east-1 with the letters in order (`a` is use1-az1).
fn aws_zones() -> Value {
    let zones: Vec<Value> = ZONE_IDS
        .iter()
        .zip('a'..)
        .map(|(id, letter)| {
            json!({"RegionName": "us-east-1", "ZoneName": format!("us-east-1{letter}"),
                   "ZoneId": id, "ZoneType": "availability-zone", "State": "available",
                   "OptInStatus": "opt-in-not-required"})
        })
        .collect();
    json!({"AvailabilityZones": zones})
}

/// An Azure `list-locations` output mapping eastus's logical zones.
fn azure_locations() -> Value {
    json!([{"name": "eastus", "id": "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/locations/eastus",
            "availabilityZoneMappings": [
                {"logicalZone": "1", "physicalZone": "eastus-az3"},
                {"logicalZone": "2", "physicalZone": "eastus-az1"},
                {"logicalZone": "3", "physicalZone": "eastus-az2"}]}])
}

/// The recorded eastus SKUs repeated under new names, as the CLI prints them (indent 2): as
/// many as fit in `bytes`.
fn azure_skus(bytes: usize) -> Result<String> {
    let recorded: Vec<Value> = serde_json::from_str(AZURE_EASTUS)?;
    let one = serde_json::to_string_pretty(&recorded)?.len() / recorded.len();
    let mut count = bytes / one;
    loop {
        let skus: Vec<Value> = (0..count)
            .map(|i| {
                let mut sku = recorded[i % recorded.len()].clone();
                let name = sku["name"].as_str().unwrap_or("sku").to_owned();
                sku["name"] = json!(format!("{name}_{}", i / recorded.len()));
                sku
            })
            .collect();
        let text = serde_json::to_string_pretty(&skus)?;
        if text.len() <= bytes {
            return Ok(text);
        }
        count = count * bytes / text.len() - 1;
    }
}

/// A full-size us-east-1 AWS output by zone id, as the CLI prints it: `types` names of our own,
/// each in five of the six zones (use1-az3 offers few, as in the recorded data).
fn aws_full(types: usize) -> Result<String> {
    let offerings: Vec<Value> = (0..types)
        .flat_map(|t| {
            ZONE_IDS
                .iter()
                .filter(move |z| **z != "use1-az3" || t % 24 == 0)
                .map(move |z| {
                    json!({"InstanceType": format!("x{}.{}xlarge", t / 16, t % 16),
                           "LocationType": "availability-zone-id", "Location": z})
                })
        })
        .collect();
    let mut pretty = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut serializer = serde_json::Serializer::with_formatter(&mut pretty, formatter);
    serde::Serialize::serialize(
        &json!({"InstanceTypeOfferings": offerings}),
        &mut serializer,
    )?;
    Ok(String::from_utf8(pretty)?)
}

/// A mapping's body with `offerings` (raw JSON) spliced in, so that nothing re-formats it.
fn body(provider: &str, output: &Value, offerings: &str) -> String {
    format!("{{\"provider\":\"{provider}\",\"output\":{output},\"offerings\":{offerings}}}")
}

/// `PUT` of mapping `id`; the time from sending to the whole answer.
fn put(server: &Server, key: &str, id: &str, body: String) -> Result<Duration> {
    let url = format!("http://{}/api/v1/zone-mappings/{id}", server.addr);
    let started = Instant::now();
    let answer = http::send_raw(
        Method::PUT,
        &url,
        &[("X-API-KEY", key), ("content-type", "application/json")],
        Some(body.into_bytes()),
        Duration::from_secs(60),
    )?;
    let took = started.elapsed();
    ensure!(
        answer.status == 200 || answer.status == 201,
        "PUT {id} answered {}: {}",
        answer.status,
        String::from_utf8_lossy(&answer.body)
    );
    Ok(took)
}

/// Stores the recorded offerings in the bench's mappings `bench` and `bench2` (replacing what
/// the SQL put there), so that `?offers=` and `instance-types` have something to serve.
pub(super) fn store_bench_offerings(server: &Server, key: &str) -> Result<()> {
    for id in ["bench", "bench2"] {
        put(server, key, id, body("aws", &aws_zones(), AWS_BY_ZONE_ID))?;
    }
    Ok(())
}

/// The stores with bounds, on `server` (a fresh one, so that its peak memory is this run's):
/// notes for BENCHMARKS.md.
pub(super) fn store_times(server: &Server, key: &str) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let aws = aws_full(1354)?;
    let aws_bytes = aws.len();
    let took = put(server, key, "aws-full", body("aws", &aws_zones(), &aws))?;
    notes.push(format!(
        "Store a full-size us-east-1 AWS offerings output ({:.2} MB, {} offerings of 1354 types, \
         as the CLI prints it): {:.0} ms (bound: 1 s).",
        aws_bytes as f64 / 1e6,
        aws.matches("\"InstanceType\"").count(),
        took.as_secs_f64() * 1e3
    ));
    let skus = azure_skus(4_000_000)?;
    let took = put(
        server,
        key,
        "azure-4mb",
        body("azure", &azure_locations(), &skus),
    )?;
    notes.push(format!(
        "Store a {:.2} MB Azure list-skus output ({} SKUs): {:.0} ms (bound: 1 s).",
        skus.len() as f64 / 1e6,
        skus.matches("\"resourceType\"").count(),
        took.as_secs_f64() * 1e3
    ));
    // Idle first: the peak so far is the stores above, far smaller than this one.
    let idle_kb = server.rss_kb();
    let hwm_before_kb = server.status_kb("VmHWM:");
    let big = azure_skus(32 * 1024 * 1024 - 64 * 1024)?;
    let big = body("azure", &azure_locations(), &big);
    let big_bytes = big.len();
    let took = put(server, key, "azure-32mib", big)?;
    let peak_kb = server.status_kb("VmHWM:");
    let above = peak_kb.saturating_sub(idle_kb) as f64 * 1024.0;
    notes.push(format!(
        "Store a {:.1} MiB body (Azure list-skus): {:.0} ms; the server's peak RSS {:.1} MiB, \
         {:.1} MiB above its idle {:.1} MiB (peak before it {:.1} MiB): {:.2} times the body \
         (bound: 4).",
        big_bytes as f64 / 1048576.0,
        took.as_secs_f64() * 1e3,
        peak_kb as f64 / 1024.0,
        above / 1048576.0,
        idle_kb as f64 / 1024.0,
        hwm_before_kb as f64 / 1024.0,
        above / big_bytes as f64
    ));
    Ok(notes)
}

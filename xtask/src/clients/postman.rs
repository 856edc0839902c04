//! The Postman half of `cargo xtask clients`: the collection converted from `openapi.json`
//! with openapi-to-postmanv2, a status test added to each request, run with newman.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::{npm_project, CHECK_TIMEOUT};
use crate::demo_server::DemoServer;
use crate::process::{run_bounded, tool_versions};

/// The collection converted from openapi.json, with this task's tests added.
fn postman_collection(work: &Path) -> PathBuf {
    work.join("postman").join("collection.json")
}

pub(super) fn prepare_postman(work: &Path) -> Result<()> {
    let dir = npm_project(
        work,
        "postman",
        &[
            "package.json",
            "package-lock.json",
            "converter-options.json",
        ],
    )?;
    let bin = dir.join("node_modules").join(".bin");
    let tools = [bin.join("openapi2postmanv2"), bin.join("newman")];
    eprintln!("clients: postman tools: {}", tool_versions(&tools));

    let converted = dir.join("converted.json");
    let _ = std::fs::remove_file(&converted);
    run_bounded(
        Command::new(bin.join("openapi2postmanv2"))
            .arg("--spec")
            .arg(crate::root().join("openapi.json"))
            .arg("--output")
            .arg(&converted)
            .arg("--options-config")
            .arg(dir.join("converter-options.json"))
            .current_dir(&dir),
        CHECK_TIMEOUT,
    )?;
    let mut collection = crate::read_json(&converted).context("the converted collection")?;
    let document = crate::read_json(&crate::root().join("openapi.json"))?;
    let tested = add_status_tests(&mut collection, &document)?;
    let variables: Vec<&str> = collection["variable"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["key"].as_str())
        .collect();
    eprintln!(
        "clients: postman: {tested} requests converted, each with a status test; collection \
         variables {variables:?}, API key from {{{{apiKey}}}}"
    );
    let path = postman_collection(work);
    std::fs::write(&path, serde_json::to_string_pretty(&collection)?)
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Adds to every request of `collection` a test of its answer's status: one the document lists
/// for its operation, and one of the operation's success statuses (every 2xx it lists: a PUT
/// answers 200 when it replaced, 201 when it created), since the converted requests carry the
/// document's examples, which name what the demo server holds. Within each folder the deletes
/// are moved after the other requests, so that none of them reads what a delete removed (the
/// converter puts `DELETE /zone-mappings/{mappingId}` before its `HEAD`).
/// Returns how many requests got one; fails on a request no operation of the document has.
fn add_status_tests(
    collection: &mut serde_json::Value,
    document: &serde_json::Value,
) -> Result<usize> {
    fn walk(
        items: &mut serde_json::Value,
        document: &serde_json::Value,
        tested: &mut usize,
    ) -> Result<()> {
        if let Some(items) = items.as_array_mut() {
            // Stable: the other requests and the folders keep their order.
            items.sort_by_key(|item| item["request"]["method"] == "DELETE");
        }
        for item in items.as_array_mut().into_iter().flatten() {
            if item.get("item").is_some() {
                walk(&mut item["item"], document, tested)?;
                continue;
            }
            let method = item["request"]["method"]
                .as_str()
                .context("a request without a method")?
                .to_lowercase();
            let segments: Vec<String> = item["request"]["url"]["path"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(serde_json::Value::as_str)
                .map(|s| match s.strip_prefix(':') {
                    Some(name) => format!("{{{name}}}"),
                    None => s.to_owned(),
                })
                .collect();
            let template = format!("/{}", segments.join("/"));
            let operation = &document["paths"][&template][&method];
            let responses = operation["responses"].as_object().with_context(|| {
                format!("the collection has {method} {template}, which openapi.json does not")
            })?;
            let documented: Vec<u16> = responses.keys().filter_map(|s| s.parse().ok()).collect();
            let success: Vec<u16> = documented
                .iter()
                .copied()
                .filter(|s| (200..300).contains(s))
                .collect();
            if success.is_empty() {
                bail!("{method} {template} documents no 2xx");
            }
            let operation_id = operation["operationId"].as_str().unwrap_or("?");
            let documented_js = serde_json::to_string(&documented)?;
            let success_js = serde_json::to_string(&success)?;
            let success_text = success.iter().map(u16::to_string).collect::<Vec<_>>();
            let success_text = success_text.join(" or ");
            let script = vec![
                format!("const documented = {documented_js};"),
                format!("const success = {success_js};"),
                format!(
                    "pm.test('{operation_id}: the status is one the document lists', () => \
                     pm.expect(documented).to.include(pm.response.code));"
                ),
                format!(
                    "pm.test('{operation_id}: the document\\'s examples answer {success_text}', () \
                     => pm.expect(success, pm.response.text()).to.include(pm.response.code));"
                ),
            ];
            let events = item
                .as_object_mut()
                .context("a request item that is not an object")?
                .entry("event")
                .or_insert_with(|| serde_json::json!([]));
            events
                .as_array_mut()
                .context("an item's events are not a list")?
                .push(serde_json::json!({
                    "listen": "test",
                    "script": {"type": "text/javascript", "exec": script}
                }));
            *tested += 1;
        }
        Ok(())
    }
    let mut tested = 0;
    walk(&mut collection["item"], document, &mut tested)?;
    if tested == 0 {
        bail!("the converted collection has no request");
    }
    Ok(tested)
}

/// Runs the collection with newman against `server`: only `baseUrl` and `apiKey` (the admin
/// key) set; prints newman's summary (requests, assertions, failures).
pub(super) fn run_newman(work: &Path, server: &DemoServer) -> Result<()> {
    let dir = work.join("postman");
    let report = dir.join("newman-report.json");
    let _ = std::fs::remove_file(&report);
    let mut command = Command::new(dir.join("node_modules").join(".bin").join("newman"));
    command
        .arg("run")
        .arg(postman_collection(work))
        .arg("--env-var")
        .arg(format!("baseUrl={}", server.base_url))
        .arg("--env-var")
        .arg(format!("apiKey={}", server.admin_key))
        .args(["--reporters", "cli,json", "--reporter-json-export"])
        .arg(&report)
        .args(["--color", "off", "--disable-unicode", "--timeout", "60000"])
        .current_dir(&dir);
    let outcome = server.run_scenario(&mut command, "postman");
    let summary = std::fs::read_to_string(&report)
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .map(|report| {
            let stats = &report["run"]["stats"];
            format!(
                "newman: {} requests ({} failed), {} assertions ({} failed), {} failures",
                stats["requests"]["total"],
                stats["requests"]["failed"],
                stats["assertions"]["total"],
                stats["assertions"]["failed"],
                report["run"]["failures"].as_array().map_or(0, Vec::len)
            )
        });
    match &summary {
        Some(line) => eprintln!("clients: {line}"),
        None => eprintln!("clients: newman wrote no report at {}", report.display()),
    }
    outcome?;
    let line = summary.context("newman wrote no report")?;
    if !line.ends_with(" 0 failures") || line.contains("requests (0 failed), 0 assertions") {
        bail!("{line}");
    }
    Ok(())
}

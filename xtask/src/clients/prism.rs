//! The Prism half of `cargo xtask clients`: Stoplight Prism as a validating proxy in front of
//! the demo server, as an API gateway or a portal's "try it" proxy would put it. Prism checks
//! each request and each answer against `openapi.json`; with `--errors`, an answer the document
//! does not allow (a status it does not list, a body or header outside its schema) becomes
//! Prism's own 500 `VIOLATIONS`, which fails its case here.
//!
//! The cases are the answers a caller meets, each sent as the document allows it (Prism refuses
//! a request the document does not allow, such as one without `X-API-KEY`, before the server
//! sees it). HEAD is left out: Prism 5.14 reads the empty body of a `HEAD` answer as JSON and
//! fails on it whatever the document says. A control run first starts Prism on a copy of the
//! document that allows at most one zone per listing and requires the zone listing to fail, so
//! this check is shown able to fail.

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use reqwest::Method;

use super::npm_project;
use crate::demo_server::DemoServer;
use crate::http::{self, free_port, Answer};
use crate::process::tool_versions;

/// How long Prism may take to load the document and listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

pub(super) fn prepare_prism(work: &Path) -> Result<()> {
    npm_project(work, "prism", &["package.json", "package-lock.json"])?;
    eprintln!("clients: {}", tool_versions(&[prism_bin(work)]));
    // The control document: the zone listing allows one zone, and the demo's us-east-1 has six.
    let mut document = crate::read_json(&crate::root().join("openapi.json"))?;
    document["components"]["schemas"]["ZoneList"]["properties"]["data"]["maxItems"] =
        serde_json::json!(1);
    std::fs::write(control_document(work), serde_json::to_string(&document)?)
        .with_context(|| format!("cannot write {}", control_document(work).display()))?;
    Ok(())
}

fn prism_bin(work: &Path) -> PathBuf {
    work.join("prism")
        .join("node_modules")
        .join(".bin")
        .join("prism")
}

fn control_document(work: &Path) -> PathBuf {
    work.join("prism").join("control-openapi.json")
}

/// A request through Prism and the status the server answers it with.
struct Case {
    name: &'static str,
    method: Method,
    path: String,
    headers: Vec<(&'static str, String)>,
    body: Option<serde_json::Value>,
    status: u16,
}

impl Case {
    fn new(name: &'static str, method: Method, path: &str, key: &str, status: u16) -> Self {
        Case {
            name,
            method,
            path: path.to_owned(),
            headers: vec![("X-API-KEY", key.to_owned())],
            body: None,
            status,
        }
    }

    fn get(name: &'static str, path: &str, key: &str, status: u16) -> Self {
        Self::new(name, Method::GET, path, key, status)
    }

    fn delete(name: &'static str, profile: &str, key: &str, status: u16) -> Self {
        let path = format!("/api/v1/applications/profiles/{profile}");
        Self::new(name, Method::DELETE, &path, key, status)
    }

    /// A request on `/api/v1/zone-mappings/{id}`.
    fn mapping(name: &'static str, method: Method, id: &str, key: &str, status: u16) -> Self {
        Self::new(name, method, &format!("{MAPPINGS}/{id}"), key, status)
    }

    fn with(mut self, name: &'static str, value: &str) -> Self {
        self.headers.push((name, value.to_owned()));
        self
    }

    fn json(mut self, body: serde_json::Value) -> Self {
        self.body = Some(body);
        self
    }
}

const ZONES: &str = "/api/v1/providers/aws/regions/us-east-1/zones";
const IDENTITIES: &str = "/api/v1/providers/aws/regions/us-east-1/zone-identities";
const MAPPINGS: &str = "/api/v1/zone-mappings";

/// A zone mapping to store: `output` is what `aws ec2 describe-availability-zones` prints for
/// us-east-1 with these (AZ ID, zone name) pairs.
fn aws_mapping(zones: &[(&str, &str)]) -> serde_json::Value {
    let zones: Vec<_> = zones
        .iter()
        .map(|(id, name)| {
            serde_json::json!({"RegionName": "us-east-1", "ZoneName": name, "ZoneId": id,
                "ZoneType": "availability-zone", "State": "available"})
        })
        .collect();
    serde_json::json!({"provider": "aws", "label": "prism", "output": {"AvailabilityZones": zones}})
}

/// Runs the control, then every case through Prism in front of `server`.
pub(super) fn run_prism(work: &Path, server: &DemoServer) -> Result<()> {
    let admin = server.admin_key.as_str();

    let control = Prism::start(work, &control_document(work), &server.base_url)?;
    let answer = send(&control.base, &Case::get("control", ZONES, admin, 200))?;
    drop(control);
    if !violations(&answer) {
        bail!(
            "prism: the control failed: a document allowing one zone let the six zones of \
             us-east-1 through ({} {})",
            answer.status,
            body(&answer)
        );
    }
    eprintln!("clients: prism: control: a listing outside the document is refused as expected");

    let prism = Prism::start(work, &crate::root().join("openapi.json"), &server.base_url)?;
    let etag = send(&prism.base, &Case::get("etag", ZONES, admin, 200))?
        .etag
        .context("the zone listing has no ETag")?;
    let identities_etag = send(&prism.base, &Case::get("etag", IDENTITIES, admin, 200))?
        .etag
        .context("the identity listing has no ETag")?;
    let mapped = aws_mapping(&[("use1-az2", "us-east-1a"), ("use1-az4", "us-east-1b")]);
    let member = server.member_key.as_str();
    let (deletable, kept) = (
        server.deletable_profile.as_str(),
        server.kept_profile.as_str(),
    );
    let wrong_key = "apz_000000000000_00000000000000000000000000000000";
    let (no_provider, no_region) = (
        "/api/v1/providers/nope/regions",
        "/api/v1/providers/aws/regions/nope-1/zones",
    );
    let gcp = "/api/v1/providers/gcp/regions/us-central1/zone-identities";
    let [prod, nope, gcp_prod] = [(IDENTITIES, "prod"), (IDENTITIES, "nope"), (gcp, "prod")]
        .map(|(path, mapping)| format!("{path}?mapping={mapping}"));
    let (get, put, delete) = (Method::GET, Method::PUT, Method::DELETE);
    let cases = [
        Case::get("listProviders", "/api/v1/providers", admin, 200),
        Case::get("listRegions", "/api/v1/providers/aws/regions", admin, 200),
        Case::get("listZones", ZONES, admin, 200).with("X-Request-Id", "checkout-7f3a"),
        Case::get("listZones 304", ZONES, admin, 304).with("If-None-Match", &etag),
        Case::get("listZones wrong key", ZONES, wrong_key, 401),
        Case::get("listRegions unknown provider", no_provider, admin, 400),
        Case::get("listZones unknown region", no_region, admin, 404),
        Case::delete("delete by a member", kept, member, 403),
        Case::delete("delete unknown", "prof_doesnotexist", admin, 404),
        Case::delete("delete", deletable, admin, 204).with("Idempotency-Key", "prism-1"),
        Case::delete("delete replayed", deletable, admin, 204).with("Idempotency-Key", "prism-1"),
        Case::delete("delete key reused", kept, admin, 422).with("Idempotency-Key", "prism-1"),
        Case::delete("delete again", deletable, admin, 404),
        Case::get("listZoneIdentities", IDENTITIES, member, 200),
        Case::get("listZoneIdentities gcp", gcp, member, 200),
        Case::get("listZoneIdentities ?mapping=prod", &prod, member, 200),
        Case::get("listZoneIdentities 304", IDENTITIES, admin, 304)
            .with("If-None-Match", &identities_etag),
        Case::get("listZoneIdentities unknown mapping", &nope, admin, 404),
        Case::get("listZoneIdentities mapping of gcp", &gcp_prod, admin, 422),
        Case::get("listZoneMappings", MAPPINGS, member, 200),
        Case::mapping("getZoneMapping", get.clone(), "prod", member, 200),
        Case::mapping("put created", put.clone(), "prism", admin, 201).json(mapped.clone()),
        Case::mapping("put replaced", put.clone(), "prism", admin, 200).json(mapped.clone()),
        Case::mapping("put by a member", put.clone(), "prism", member, 403).json(mapped),
        // A body of another cloud's shape, or of none, the document refuses, and Prism with it
        // before the server sees it; a zone the catalog lacks only the server can refuse.
        Case::mapping("put unknown zone id", put, "prism", admin, 422)
            .json(aws_mapping(&[("use1-az9", "us-east-1a")])),
        Case::mapping("delete mapping 403", delete.clone(), "prism", member, 403),
        Case::mapping("delete mapping", delete.clone(), "prism", admin, 204),
        Case::mapping("delete mapping again", delete, "prism", admin, 404),
        Case::mapping("getZoneMapping deleted", get, "prism", admin, 404),
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let answer = send(&prism.base, case)?;
        if answer.status == case.status && !is_prisms_own(&answer) {
            eprintln!(
                "clients: prism: {}: {} as documented",
                case.name, answer.status
            );
        } else {
            failures.push(format!(
                "{} ({} {}): expected {}, got {} {}",
                case.name,
                case.method,
                case.path,
                case.status,
                answer.status,
                body(&answer)
            ));
        }
    }
    drop(prism);
    if !failures.is_empty() {
        bail!("prism:\n  {}", failures.join("\n  "));
    }
    eprintln!(
        "clients: prism: {} answers passed Prism's validation against openapi.json",
        cases.len() + 2
    );
    Ok(())
}

/// `prism proxy DOCUMENT UPSTREAM --errors` on a free port of 127.0.0.1; killed on drop.
struct Prism {
    child: Child,
    base: String,
}

impl Prism {
    fn start(work: &Path, document: &Path, upstream: &str) -> Result<Self> {
        let addr = free_port()?;
        let log = std::fs::File::create(work.join("prism").join("prism.log"))?;
        let child = Command::new(prism_bin(work))
            .arg("proxy")
            .arg(document)
            .arg(upstream)
            .args([
                "--errors",
                "--host",
                "127.0.0.1",
                "--port",
                &addr.port().to_string(),
            ])
            // The analytics of a dependency's install script: nothing leaves the machine.
            .env("SCARF_ANALYTICS", "false")
            .stdout(log.try_clone()?)
            .stderr(log)
            .stdin(Stdio::null())
            .spawn()
            .context("cannot start prism")?;
        let mut prism = Prism {
            child,
            base: format!("http://{addr}"),
        };
        let deadline = Instant::now() + START_TIMEOUT;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = prism.child.try_wait()? {
                bail!("prism exited with {status} before listening (see prism.log)");
            }
            if Instant::now() > deadline {
                bail!("prism did not listen within {} s", START_TIMEOUT.as_secs());
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        Ok(prism)
    }
}

impl Drop for Prism {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Prism's own answers are `application/problem+json`; the server's never are.
fn is_prisms_own(answer: &Answer) -> bool {
    answer
        .content_type
        .as_deref()
        .is_some_and(|t| t.starts_with("application/problem+json"))
}

/// Prism's answer for a request or an answer outside the document.
fn violations(answer: &Answer) -> bool {
    is_prisms_own(answer) && body(answer).contains("errors#VIOLATIONS")
}

fn body(answer: &Answer) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(&answer.body)
}

fn send(base: &str, case: &Case) -> Result<Answer> {
    let headers: Vec<(&str, &str)> = case
        .headers
        .iter()
        .map(|(name, value)| (*name, value.as_str()))
        .collect();
    let url = format!("{base}{}", case.path);
    let timeout = Duration::from_secs(30);
    http::send(
        case.method.clone(),
        &url,
        &headers,
        case.body.as_ref(),
        timeout,
    )
    .with_context(|| case.name)
}

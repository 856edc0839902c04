//! `/metrics`: what is counted, in which format, and a fresh server's first scrape.

use super::*;

#[tokio::test]
async fn metrics_expose_requests_by_route_template_and_status() {
    let app = TestApp::sqlite().await;
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
    assert_eq!(
        app.delete(
            &TestApp::profile_path(app.profile.as_str()),
            Some(&app.admin_key)
        )
        .await
        .status,
        204
    );
    app.get(&TestApp::zones_path("aws", "nope-1"), Some(&app.member_key))
        .await;
    let resp = app.get("/metrics", None).await;
    assert_eq!(resp.status, 200);
    assert!(resp
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    let text = resp.body;
    let value = |prefix: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no metric line starting {prefix}:\n{text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let zones_ok = format!(
        "appzone_http_requests_total{{method=\"GET\",route=\"{}\",status=\"200\"}}",
        appzone_contract::paths::LIST_ZONES
    );
    assert_eq!(value(&zones_ok), 1.0);
    let zones_404 = format!(
        "appzone_http_requests_total{{method=\"GET\",route=\"{}\",status=\"404\"}}",
        appzone_contract::paths::LIST_ZONES
    );
    assert_eq!(value(&zones_404), 1.0);
    assert_eq!(value("appzone_profiles_deleted_total"), 1.0);
    assert!(value("appzone_catalog_version") >= 1.0);
    assert!(
        text.contains("appzone_http_request_duration_seconds_bucket{"),
        "latency histogram"
    );
    assert!(text.contains("appzone_db_pool_connections{state=\"idle\"}"));
    assert!(
        !text.contains(&app.admin_key[4..16]),
        "no key ids as labels"
    );
}

/// Parses a `/metrics` body with the Prometheus project's own Python parser
/// (`prometheus_client`): `text` is the 0.0.4 parser, `openmetrics` the OpenMetrics one.
/// Prints the families as JSON: name, type, and samples (name, labels, value).
const PARSE_METRICS: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families as text
from prometheus_client.openmetrics.parser import text_string_to_metric_families as openmetrics
parse = {"text": text, "openmetrics": openmetrics}[sys.argv[1]]
families = [
    {"name": f.name, "type": f.type,
     "samples": [{"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]}
    for f in parse(sys.stdin.read())
]
print(json.dumps(families))
"#;

/// Whether `python3` with `prometheus_client` is here; without it the parser test is skipped
/// with a notice, except under `CI=true` where it must run.
fn python_prometheus_client() -> bool {
    let found = std::process::Command::new("python3")
        .args(["-c", "import prometheus_client"])
        .output()
        .is_ok_and(|out| out.status.success());
    appzone_test_support::found_or_skipped(
        found,
        "python3 with prometheus_client not found (pip install prometheus_client); /metrics \
         was not checked with Prometheus's parsers",
    )
}

/// The families `parser` (`text` or `openmetrics`) reads in `body`, in order (name, type,
/// samples), or the parser's complaint.
fn parse_metrics(parser: &str, body: &str) -> Result<Vec<serde_json::Value>, String> {
    use std::io::Write;
    let out = std::process::Command::new("python3")
        .args(["-c", PARSE_METRICS, parser])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child.stdin.take().unwrap().write_all(body.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap())
}

#[tokio::test]
async fn metrics_answer_openmetrics_or_the_text_format_by_accept_and_prometheus_parsers_read_both()
{
    const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";
    const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
    // Prometheus 3's scrape request, then Prometheus 2's.
    const PROMETHEUS_3: &str = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;\
        q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;\
        escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1";
    const PROMETHEUS_2: &str = "application/openmetrics-text;version=1.0.0,\
        application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
    // One request per key and second, so that a 429 fills every family.
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 1,
        ..fast_config()
    })
    .await;
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 429);
    let profile = TestApp::profile_path(app.profile.as_str());
    assert_eq!(app.delete(&profile, Some(&app.admin_key)).await.status, 204);

    let cases = [
        (None, TEXT),
        (Some("*/*"), TEXT),
        (Some("text/plain"), TEXT),
        (Some("text/plain;version=0.0.4"), TEXT),
        (
            Some("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"),
            TEXT,
        ),
        (Some("application/openmetrics-text"), OPENMETRICS),
        (
            Some("application/openmetrics-text; version=1.0.0"),
            OPENMETRICS,
        ),
        (Some(PROMETHEUS_3), OPENMETRICS),
        (Some(PROMETHEUS_2), OPENMETRICS),
        (
            Some("application/openmetrics-text;q=0.1,text/plain;q=0.9"),
            TEXT,
        ),
    ];
    let mut bodies = Vec::new();
    for (accept, content_type) in cases {
        let headers: Vec<(&str, &str)> = accept.map(|a| ("accept", a)).into_iter().collect();
        let resp = app
            .send(reqwest::Method::GET, "/metrics", None, &headers)
            .await;
        assert_eq!(resp.status, 200, "{accept:?}: {}", resp.body);
        assert_eq!(
            resp.header("content-type"),
            Some(content_type),
            "{accept:?}"
        );
        assert_eq!(resp.header("vary"), Some("Accept"), "{accept:?}");
        let openmetrics = content_type == OPENMETRICS;
        assert_eq!(
            resp.body.ends_with("\n# EOF\n"),
            openmetrics,
            "{accept:?}: # EOF ends OpenMetrics, and only OpenMetrics:\n{}",
            resp.body
        );
        assert!(
            resp.body
                .contains("\n# TYPE appzone_http_requests_total counter\n")
                != openmetrics,
            "{accept:?}: counter family named as its samples in 0.0.4 only:\n{}",
            resp.body
        );
        eprintln!(
            "Accept {accept:?}: Content-Type {content_type}, Vary Accept; first lines {:?}",
            resp.body.lines().take(3).collect::<Vec<_>>()
        );
        if accept == Some(PROMETHEUS_3) || accept.is_none() {
            bodies.push((if openmetrics { "openmetrics" } else { "text" }, resp.body));
        }
    }

    if !python_prometheus_client() {
        return;
    }
    for (parser, body) in &bodies {
        let families = parse_metrics(parser, body)
            .unwrap_or_else(|e| panic!("the {parser} parser refused the body: {e}\n{body}"));
        let mut kinds = [
            ("appzone_build_info", "gauge"),
            ("appzone_http_requests", "counter"),
            ("appzone_rate_limited", "counter"),
            ("appzone_connections_refused", "counter"),
            ("appzone_rate_limit_fallbacks", "counter"),
            ("appzone_rate_limit_redis_calls", "counter"),
            ("appzone_rate_limit_shared", "gauge"),
            ("appzone_profiles_deleted", "counter"),
            ("appzone_http_request_duration_seconds", "histogram"),
            ("appzone_db_pool_connections", "gauge"),
            ("appzone_catalog_version", "gauge"),
            ("appzone_catalog_compiled_timestamp_seconds", "gauge"),
            ("appzone_catalog_oldest_facts_timestamp_seconds", "gauge"),
            ("appzone_database_up", "gauge"),
            ("appzone_draining", "gauge"),
            ("process_cpu_seconds", "counter"),
            ("process_start_time_seconds", "gauge"),
            ("process_resident_memory_bytes", "gauge"),
            ("process_virtual_memory_bytes", "gauge"),
            ("process_open_fds", "gauge"),
            ("process_max_fds", "gauge"),
        ];
        let mut found: Vec<(&str, &str)> = families
            .iter()
            .map(|f| (f["name"].as_str().unwrap(), f["type"].as_str().unwrap()))
            .collect();
        found.sort_unstable();
        kinds.sort_unstable();
        // Nothing else: a `_total` sample a parser does not tie to its family is a family of
        // its own, of type `unknown`.
        assert_eq!(found, kinds, "{parser} parser");
        let sample = |family: &str, name: &str, labels: serde_json::Value| -> f64 {
            families.iter().find(|f| f["name"] == family).unwrap()["samples"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name && s["labels"] == labels)
                .unwrap_or_else(|| panic!("{parser}: no {name} {labels} in {family}"))["value"]
                .as_f64()
                .unwrap()
        };
        let listing = serde_json::json!({
            "method": "GET",
            "route": appzone_contract::paths::LIST_ZONES,
            "status": "200",
        });
        assert_eq!(
            sample(
                "appzone_http_requests",
                "appzone_http_requests_total",
                listing.clone()
            ),
            1.0
        );
        assert_eq!(
            sample(
                "appzone_rate_limited",
                "appzone_rate_limited_total",
                serde_json::json!({"scope": "key"})
            ),
            1.0
        );
        assert_eq!(
            sample(
                "appzone_profiles_deleted",
                "appzone_profiles_deleted_total",
                serde_json::json!({})
            ),
            1.0
        );
        // The built-in catalog's compile date, 2026-11-28, at midnight UTC.
        assert_eq!(
            sample(
                "appzone_catalog_compiled_timestamp_seconds",
                "appzone_catalog_compiled_timestamp_seconds",
                serde_json::json!({})
            ),
            1_795_824_000.0
        );
        // No region has been refreshed since: its oldest facts are the compile date's.
        assert_eq!(
            sample(
                "appzone_catalog_oldest_facts_timestamp_seconds",
                "appzone_catalog_oldest_facts_timestamp_seconds",
                serde_json::json!({})
            ),
            1_795_824_000.0
        );
        let mut inf = listing.clone();
        inf["le"] = "+Inf".into();
        assert_eq!(
            sample(
                "appzone_http_request_duration_seconds",
                "appzone_http_request_duration_seconds_bucket",
                inf
            ),
            1.0
        );
        assert!(
            sample(
                "appzone_catalog_version",
                "appzone_catalog_version",
                serde_json::json!({})
            ) >= 1.0
        );
        eprintln!("{parser} parser: {found:?}");
    }
    // Each parser refuses or misreads the other format: the content type must fit the body.
    let body = |parser: &str| &bodies.iter().find(|(p, _)| *p == parser).unwrap().1;
    for (parser, other) in [("openmetrics", "text"), ("text", "openmetrics")] {
        let misread = parse_metrics(parser, body(other)).map_or(true, |families| {
            families.iter().any(|family| family["type"] == "unknown")
        });
        assert!(misread, "the {parser} parser read the {other} body as well");
    }
}

/// What the first scrape of a fresh server (the real binary, nothing served yet) holds, read
/// by both of Prometheus's parsers: every series of a closed label set at 0, so that `rate()`
/// and `absent()` alerts work before the first event; the build's version; the `process_*`
/// families, of the server's own process.
#[tokio::test]
async fn a_fresh_servers_first_scrape_has_every_closed_series_at_zero_build_info_and_process_metrics(
) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("fresh.db").display());
    let mut server = ServerProcess::start(&url, &[], "info").await;
    let client = reqwest::Client::new();
    let mut bodies = Vec::new();
    for (parser, accept) in [
        ("text", "text/plain"),
        ("openmetrics", "application/openmetrics-text"),
    ] {
        let body = client
            .get(format!("{}/metrics", server.base))
            .header("accept", accept)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        bodies.push((parser, body));
    }
    let rss_kib = crate::server_process::rss_kib(server.pid()).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!(server.terminate().await.success());

    // The first scrape, line by line (also where Python is missing).
    let text = &bodies[0].1;
    let version = env!("CARGO_PKG_VERSION");
    for line in [
        "appzone_rate_limited_total{scope=\"key\"} 0".to_owned(),
        "appzone_rate_limited_total{scope=\"address\"} 0".to_owned(),
        "appzone_connections_refused_total{limit=\"address\"} 0".to_owned(),
        "appzone_connections_refused_total{limit=\"total\"} 0".to_owned(),
        "appzone_profiles_deleted_total 0".to_owned(),
        "appzone_database_up 1".to_owned(),
        "appzone_draining 0".to_owned(),
        format!("appzone_build_info{{version=\"{version}\"}} 1"),
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "no line {line:?} in the first scrape:\n{text}"
        );
    }
    for state in ["idle", "in_use"] {
        let series = format!("appzone_db_pool_connections{{state=\"{state}\"}} ");
        assert!(text.contains(&series), "{series} in\n{text}");
    }
    assert!(
        !text.contains("appzone_http_requests_total{"),
        "no request was answered before the first scrape:\n{text}"
    );

    if !python_prometheus_client() {
        return;
    }
    for (parser, body) in &bodies {
        let families = parse_metrics(parser, body)
            .unwrap_or_else(|e| panic!("the {parser} parser refused the body: {e}\n{body}"));
        let value = |family: &str, kind: &str, sample: &str, labels: serde_json::Value| -> f64 {
            let found = families
                .iter()
                .find(|f| f["name"] == family)
                .unwrap_or_else(|| panic!("{parser}: no family {family} in\n{body}"));
            assert_eq!(found["type"], kind, "{parser}: {family}");
            found["samples"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == sample && s["labels"] == labels)
                .unwrap_or_else(|| panic!("{parser}: no {sample} {labels} in\n{body}"))["value"]
                .as_f64()
                .unwrap()
        };
        let none = serde_json::json!({});
        for scope in ["key", "address"] {
            let labels = serde_json::json!({ "scope": scope });
            let total = "appzone_rate_limited_total";
            assert_eq!(value("appzone_rate_limited", "counter", total, labels), 0.0);
        }
        for limit in ["address", "total"] {
            let labels = serde_json::json!({ "limit": limit });
            let total = "appzone_connections_refused_total";
            let family = "appzone_connections_refused";
            assert_eq!(value(family, "counter", total, labels), 0.0);
        }
        for state in ["idle", "in_use"] {
            let labels = serde_json::json!({ "state": state });
            let pool = "appzone_db_pool_connections";
            assert!(value(pool, "gauge", pool, labels) >= 0.0);
        }
        let build = serde_json::json!({ "version": version });
        let info = "appzone_build_info";
        assert_eq!(value(info, "gauge", info, build), 1.0);

        let gauge = |name: &str| value(name, "gauge", name, none.clone());
        let cpu = "process_cpu_seconds";
        let cpu = value(cpu, "counter", "process_cpu_seconds_total", none.clone());
        assert!((0.0..60.0).contains(&cpu), "{parser}: cpu {cpu} s");
        let start = gauge("process_start_time_seconds");
        assert!(
            start > now - 300.0 && start <= now + 1.0,
            "{parser}: started at {start}, now {now}"
        );
        // The server's own memory, as /proc/PID/status shows it from outside.
        let rss = gauge("process_resident_memory_bytes");
        let outside = rss_kib as f64 * 1024.0;
        assert!(
            rss > outside / 2.0 && rss < outside * 2.0,
            "{parser}: RSS {rss} bytes, /proc says {outside}"
        );
        assert!(gauge("process_virtual_memory_bytes") >= rss);
        let open = gauge("process_open_fds");
        let max = gauge("process_max_fds");
        assert!(open >= 3.0 && open < max, "{parser}: {open} fds of {max}");
        eprintln!("{parser}: cpu {cpu} s, RSS {rss} B, fds {open}/{max}, start {start}");
    }
}

//! The service around the operations: limits, faults, observability, docs, replicas.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use appzone_server::http::{App, HttpConfig};
use appzone_server::serve::ServeOptions;
use appzone_test_support::raw::{self, RawConnection};
use appzone_test_support::{eventually, fast_config, spawn_server, test_catalog, Resp, TestApp};
use axum::routing::get;
use axum::Router;
use tokio::net::{TcpListener, TcpStream};

use crate::server_process::ServerProcess;

fn zones() -> String {
    TestApp::zones_path("aws", "us-east-1")
}

#[tokio::test]
async fn per_key_rate_limit_answers_429_with_retry_after_and_spares_other_keys() {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 5,
        ..fast_config()
    })
    .await;
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(app.get(&zones(), Some(&app.member_key)).await.status);
    }
    assert_eq!(&statuses[..5], [200; 5], "{statuses:?}");
    assert!(statuses[5..].iter().all(|s| *s == 429), "{statuses:?}");
    let limited = app.get(&zones(), Some(&app.member_key)).await;
    limited.assert_error(429, "rate_limited");
    let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    assert_eq!(
        app.get(&zones(), Some(&app.admin_key)).await.status,
        200,
        "other keys are not limited"
    );
    assert_eq!(app.get("/healthz", None).await.status, 200);
}

#[tokio::test]
async fn answers_carry_ratelimit_headers_of_their_limit_and_none_when_it_is_off() {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 3,
        auth_failures_per_minute: 60,
        ..fast_config()
    })
    .await;
    // Per key: the quota left counts down with each answer, the 429 included.
    let mut left = Vec::new();
    for _ in 0..4 {
        let resp = app.get(&zones(), Some(&app.member_key)).await;
        assert_eq!(
            resp.header("ratelimit-policy"),
            Some("\"per-key\";q=3;w=1"),
            "{resp:?}"
        );
        left.push((resp.status, resp.header("ratelimit").map(str::to_owned)));
    }
    let state = |r: u32| Some(format!("\"per-key\";r={r};t=1"));
    assert_eq!(
        left,
        [
            (200, state(2)),
            (200, state(1)),
            (200, state(0)),
            (429, state(0))
        ]
    );
    // Errors after authentication carry them too.
    let unknown = app
        .get(&TestApp::zones_path("aws", "nope-1"), Some(&app.admin_key))
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.header("ratelimit"), Some("\"per-key\";r=2;t=1"));
    let too_large = delete_with_an_oversized_body(&app).await;
    assert_eq!(too_large.status, 413);
    assert_eq!(too_large.header("ratelimit"), Some("\"per-key\";r=1;t=1"));
    // A 401 carries the client address's failed-authentication limit.
    let refused = app.get(&zones(), None).await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("ratelimit-policy"),
        Some("\"auth-failures\";q=60;w=60")
    );
    assert_eq!(
        refused.header("ratelimit"),
        Some("\"auth-failures\";r=59;t=1")
    );
    // Unlimited routes carry none, and neither does anything once the limits are off.
    assert_eq!(app.get("/healthz", None).await.header("ratelimit"), None);
    let off = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 0,
        auth_failures_per_minute: 0,
        ..fast_config()
    })
    .await;
    for resp in [
        off.get(&zones(), Some(&off.member_key)).await,
        off.get(&zones(), None).await,
    ] {
        assert!(
            resp.header("ratelimit").is_none() && resp.header("ratelimit-policy").is_none(),
            "{resp:?}"
        );
    }
}

#[tokio::test]
async fn head_errors_state_the_content_length_of_their_get() {
    let app = TestApp::sqlite().await;
    for (path, key) in [
        (zones(), None),
        (
            zones(),
            Some("apz_wrongwrongwr_0123456789abcdefghijABCDEFGHIJKL"),
        ),
        (
            TestApp::zones_path("aws", "nope-1"),
            Some(app.member_key.as_str()),
        ),
        ("/nope".to_owned(), None),
    ] {
        let get = app.send(reqwest::Method::GET, &path, key, &[]).await;
        let head = app.send(reqwest::Method::HEAD, &path, key, &[]).await;
        assert_eq!(head.status, get.status, "{path}");
        assert!(head.body.is_empty(), "{path}: {}", head.body);
        let length = get.body.len().to_string();
        assert_eq!(
            get.header("content-length"),
            Some(length.as_str()),
            "{path}"
        );
        assert_eq!(
            head.header("content-length"),
            Some(length.as_str()),
            "HEAD {path}"
        );
    }
}

/// The limiter's unit test (`limits::tests::a_limit_of_zero_never_refuses`) proves a limit of 0
/// never refuses, however many requests; this proves the setting reaches it: a burst of
/// concurrent requests on one key, none refused, none carrying the headers of a limit.
#[tokio::test]
async fn rate_limit_zero_disables_it() {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 0,
        ..fast_config()
    })
    .await;
    let path = zones();
    let burst = (0..48).map(|_| app.get(&path, Some(&app.member_key)));
    let answers = futures_util::future::join_all(burst).await;
    let statuses: Vec<u16> = answers.iter().map(|resp| resp.status).collect();
    assert_eq!(statuses, [200; 48]);
    for resp in &answers {
        assert!(
            resp.header("ratelimit").is_none() && resp.header("ratelimit-policy").is_none(),
            "{resp:?}"
        );
    }
}

/// A server that allows three failed authentications a minute per address, and a key it will
/// refuse (a real key id with a forged secret).
async fn three_failures_a_minute() -> (TestApp, String) {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        auth_failures_per_minute: 3,
        ..fast_config()
    })
    .await;
    let forged = format!("{}{}", &app.admin_key[..17], "x".repeat(32));
    (app, forged)
}

#[tokio::test]
async fn failed_authentications_per_address_are_limited_but_valid_keys_pass() {
    let (app, forged) = three_failures_a_minute().await;
    let path = zones();
    let attempts = (0..6).map(|_| app.get(&path, Some(&forged)));
    let statuses: Vec<u16> = futures_util::future::join_all(attempts)
        .await
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        3,
        "{statuses:?}"
    );
    let limited = app.get(&zones(), Some(&forged)).await;
    limited.assert_error(429, "rate_limited");
    assert!(limited.header("retry-after").is_some());
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
}

#[tokio::test]
async fn a_refused_address_is_told_to_retry_when_its_next_attempt_is_allowed() {
    // Three failures a minute: a refill every 20 s, so the fourth is told to wait about 20 s,
    // not the 1 s every 429 starts with.
    let (app, forged) = three_failures_a_minute().await;
    for _ in 0..3 {
        assert_eq!(app.get(&zones(), Some(&forged)).await.status, 401);
    }
    let limited = app.get(&zones(), Some(&forged)).await;
    limited.assert_error(429, "rate_limited");
    let retry: u64 = limited
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in seconds");
    assert!((15..=20).contains(&retry), "Retry-After {retry}");
}

/// A state whose router has a slow route, for timeout and shedding tests.
fn slow_router(app: &TestApp, http: HttpConfig) -> App {
    let state = app.service.state.with_http(http);
    async fn slow() -> &'static str {
        tokio::time::sleep(Duration::from_millis(600)).await;
        "done"
    }
    let routes = Router::new()
        .route("/slow", get(slow))
        .route("/slow2", get(slow));
    appzone_server::http::with_middleware(routes, state)
}

#[tokio::test]
async fn request_timeout_answers_503_unavailable_in_json() {
    let app = TestApp::sqlite().await;
    let (base, _stop) = spawn_server(
        slow_router(
            &app,
            HttpConfig {
                request_timeout: Duration::from_millis(150),
                ..HttpConfig::default()
            },
        ),
        ServeOptions::default(),
    )
    .await;
    let started = Instant::now();
    let resp = Resp::read(app.http.get(format!("{base}/slow")).send().await.unwrap()).await;
    let took = started.elapsed();
    // The route takes 600 ms; the answer comes at the 150 ms timeout, not before, not much after.
    assert!(
        (Duration::from_millis(150)..Duration::from_millis(350)).contains(&took),
        "answered after {took:?}"
    );
    resp.assert_error(503, "unavailable");
    assert_eq!(resp.header("retry-after"), Some("1"));
}

#[tokio::test]
async fn requests_over_the_concurrency_limit_are_shed_at_once() {
    let app = TestApp::sqlite().await;
    let (base, _stop) = spawn_server(
        slow_router(
            &app,
            HttpConfig {
                max_in_flight: 2,
                ..HttpConfig::default()
            },
        ),
        ServeOptions::default(),
    )
    .await;
    let started = Instant::now();
    // Alternating two routes: the limit is the server's, not each route's.
    let calls = (0..8).map(|i| {
        let http = app.http.clone();
        let url = format!("{base}/{}", if i % 2 == 0 { "slow" } else { "slow2" });
        async move {
            let resp = Resp::read(http.get(url).send().await.unwrap()).await;
            (resp, started.elapsed())
        }
    });
    let results = futures_util::future::join_all(calls).await;
    let served = results.iter().filter(|(r, _)| r.status == 200).count();
    let shed: Vec<_> = results.iter().filter(|(r, _)| r.status == 503).collect();
    assert_eq!(served, 2, "served with a limit of 2 in flight");
    assert_eq!(shed.len(), 6, "shed");
    for (resp, elapsed) in shed {
        resp.assert_error(503, "unavailable");
        assert!(resp.header("retry-after").is_some());
        assert!(
            *elapsed < Duration::from_millis(500),
            "shed quickly, took {elapsed:?}"
        );
    }
}

/// An admin's DELETE of the app's profile with a 100 KiB body, over the 64 KiB default limit.
async fn delete_with_an_oversized_body(app: &TestApp) -> Resp {
    let resp = app
        .http
        .delete(app.url(&TestApp::profile_path(app.profile.as_str())))
        .header("x-api-key", &app.admin_key)
        .body(vec![b'x'; 100 * 1024])
        .send()
        .await
        .unwrap();
    Resp::read(resp).await
}

#[tokio::test]
async fn oversized_body_answers_413_payload_too_large_in_json() {
    let app = TestApp::sqlite().await;
    let resp = delete_with_an_oversized_body(&app).await;
    resp.assert_error(413, "payload_too_large");
    assert!(app.profile_is_live(&app.profile, "acme").await);
}

/// The 431 is hyper's, as the document says: no body, no content type, no `X-Request-Id`.
#[tokio::test]
async fn oversized_headers_answer_431_and_the_server_keeps_serving() {
    let app = TestApp::sqlite().await;
    // A raw socket, so a client-side refusal cannot hide the server's answer.
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: x\r\nX-API-KEY: {}\r\nX-Big: {}\r\n\r\n",
        zones(),
        app.member_key,
        "a".repeat(64 * 1024)
    );
    // The server may stop reading once the head is over its limit; its answer is what counts.
    let answer = raw::exchange(app.addr(), head.as_bytes(), Duration::from_secs(5)).await;
    assert_eq!(answer.as_ref().map(|a| a.status), Ok(431), "{answer:?}");
    // What the document says of it: hyper answers before any layer runs, so no body, no
    // content type, no `X-Request-Id`, and the connection is closed.
    let answer = answer.unwrap();
    assert_eq!(answer.header("content-length"), Some("0"), "{answer:?}");
    assert_eq!(answer.header("content-type"), None, "{answer:?}");
    assert_eq!(answer.header("x-request-id"), None, "{answer:?}");
    assert_eq!(answer.header("connection"), Some("close"), "{answer:?}");
    assert_eq!(answer.text(), "", "{answer:?}");
    let document = appzone_contract::openapi::document();
    let description = document["info"]["description"].as_str().unwrap();
    assert!(
        description.contains(
            "431 (request headers too large, over 32 KiB by default): the HTTP \
             layer (hyper) answers it before the service sees the request, with no body, no \
             content type and no `X-Request-Id`, and closes the connection"
        ),
        "the document's 431"
    );
    assert!(
        description.contains("Every response the service answers carries `X-Request-Id` (a 431"),
        "the document's request ids"
    );
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
}

/// Sends a request head a byte every 20 ms (never finishing it) until the server closes the
/// connection or 3 s pass; then waits up to 2 s more for the close. Whether it was closed.
async fn drip_a_head(conn: &mut RawConnection) -> bool {
    let started = Instant::now();
    let head = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    let endless = head.iter().chain(std::iter::repeat(&b'a'));
    for byte in endless {
        if conn.write(&[*byte]).await.is_err() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        if started.elapsed() > Duration::from_secs(3) {
            break;
        }
    }
    conn.closed_within(Duration::from_secs(2)).await.is_some()
}

/// A server with a 500 ms header-read timeout, and a connection to it.
async fn impatient_server() -> (TestApp, RawConnection) {
    let app = TestApp::sqlite_serving(ServeOptions {
        header_read_timeout: Duration::from_millis(500),
        ..ServeOptions::default()
    })
    .await;
    let conn = app.connection().await;
    (app, conn)
}

/// Drips a head on `conn` and checks the server closed the connection within 1.5 times the
/// 500 ms header-read timeout (the promise) of the start of the drip, give or take 250 ms for
/// noticing the close.
async fn assert_cut_off(conn: &mut RawConnection) {
    let started = Instant::now();
    let closed = drip_a_head(conn).await;
    let took = started.elapsed();
    assert!(closed, "connection still open after {took:?}");
    assert!(
        took < Duration::from_millis(750 + 250),
        "cut off only after {took:?}"
    );
}

#[tokio::test]
async fn a_client_sending_its_head_a_byte_at_a_time_is_cut_off() {
    let (app, mut conn) = impatient_server().await;
    assert_cut_off(&mut conn).await;
    assert_eq!(app.get("/healthz", None).await.status, 200);
}

#[tokio::test]
async fn a_keep_alive_client_sending_its_next_head_a_byte_at_a_time_is_cut_off() {
    // The header-read timer is one per connection, its deadline moved for each request head:
    // the second head on a connection is timed like the first.
    let (_app, mut conn) = impatient_server().await;
    for _ in 0..3 {
        let answer = conn.request("GET", "/healthz", None).await;
        assert_eq!(answer.status, 200, "{answer:?}");
        // Longer than the timeout in all: the deadline counts from each head, not the first.
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_cut_off(&mut conn).await;
}

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
        // The built-in catalog's compile date, 2026-11-27, at midnight UTC.
        assert_eq!(
            sample(
                "appzone_catalog_compiled_timestamp_seconds",
                "appzone_catalog_compiled_timestamp_seconds",
                serde_json::json!({})
            ),
            1_795_737_600.0
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

#[tokio::test]
async fn docs_page_names_the_api_forbids_other_origins_and_framing_and_is_cached_and_compressed() {
    let app = TestApp::sqlite().await;
    let page = app.get("/docs/", None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<title>appzone API</title>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("favicon"), "{}", page.body);
    let csp = page.header("content-security-policy").unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("http"), "no other origin is allowed: {csp}");
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));

    // No top bar with a box to load another document: the base layout.
    let init = app.get("/docs/swagger-initializer.js", None).await;
    assert!(
        init.body.contains(r#""layout": "BaseLayout""#),
        "{}",
        init.body
    );

    let bundle = "/docs/swagger-ui-bundle.js";
    let plain = app.get(bundle, None).await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(plain.header("cache-control"), Some("no-cache"));
    let gzipped = app
        .send(
            reqwest::Method::GET,
            bundle,
            None,
            &[("accept-encoding", "br, gzip")],
        )
        .await;
    assert_eq!(gzipped.status, 200);
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    assert_eq!(gzipped.header("vary"), Some("accept-encoding"));
    let length = |r: &Resp| -> usize { r.header("content-length").unwrap().parse().unwrap() };
    assert!(
        length(&gzipped) * 3 < length(&plain),
        "gzip {} vs {} bytes",
        length(&gzipped),
        length(&plain)
    );
    // Each encoding has its own validator, and a matching one answers 304 with no body.
    let tag = plain.header("etag").unwrap();
    assert_ne!(Some(tag), gzipped.header("etag"));
    let again = app
        .send(
            reqwest::Method::GET,
            bundle,
            None,
            &[("if-none-match", tag)],
        )
        .await;
    assert_eq!((again.status, again.body.as_str()), (304, ""));
    assert_eq!(again.header("etag"), Some(tag));
}

#[tokio::test]
async fn docs_are_served_from_the_binary_with_no_external_assets() {
    let app = TestApp::sqlite().await;
    let page = app.get("/docs", None).await;
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert!(page.body.contains("swagger-ui-bundle.js"), "{}", page.body);
    for line in page
        .body
        .lines()
        .filter(|l| l.contains("src=") || l.contains("href="))
    {
        assert!(
            !line.contains("http://") && !line.contains("https://"),
            "external asset: {line}"
        );
    }
    let init = app.get("/docs/swagger-initializer.js", None).await;
    assert_eq!(init.status, 200);
    assert!(init.body.contains("/openapi.json"), "{}", init.body);
    assert_eq!(
        app.get("/docs/swagger-ui-bundle.js", None).await.status,
        200
    );
    app.get("/docs/nope.js", None)
        .await
        .assert_error(404, "not_found");
}

/// `GET path` with the member key, from a page of `origin`.
async fn from_origin(app: &TestApp, path: &str, origin: &str) -> Resp {
    let origin = [("origin", origin)];
    let key = Some(app.member_key.as_str());
    app.send(reqwest::Method::GET, path, key, &origin).await
}

#[tokio::test]
async fn cors_is_off_by_default_and_answers_preflights_when_configured() {
    let app = TestApp::sqlite().await;
    let resp = from_origin(&app, &zones(), "https://portal.example").await;
    assert!(resp.header("access-control-allow-origin").is_none());

    let config = appzone_server::ServiceConfig {
        http: HttpConfig {
            cors_origins: vec!["https://portal.example".parse().unwrap()],
            ..HttpConfig::default()
        },
        ..fast_config()
    };
    let app = TestApp::sqlite_with(config).await;
    let preflight = app
        .send(
            reqwest::Method::OPTIONS,
            &zones(),
            None,
            &[
                ("origin", "https://portal.example"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "x-api-key"),
            ],
        )
        .await;
    assert_eq!(preflight.status, 200, "{}", preflight.body);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://portal.example")
    );
    assert!(preflight
        .header("access-control-allow-headers")
        .unwrap()
        .contains("x-api-key"));
    let resp = from_origin(&app, &zones(), "https://portal.example").await;
    assert_eq!(resp.status, 200, "{}", resp.body);
    assert_eq!(
        resp.header("access-control-allow-origin"),
        Some("https://portal.example")
    );
    // The allowed origin echoes the request's, so a shared cache must key on `Origin`; methods
    // and headers are fixed lists, so nothing else varies (tower-http 0.6 also listed the two
    // preflight request headers here).
    for answer in [&resp, &preflight] {
        let vary: Vec<_> = answer.headers.get_all("vary").iter().collect();
        assert_eq!(vary, ["origin"]);
    }
    // A listing with a percent-encoded id goes through the same layers: the handler finds the
    // caller that authentication recorded, behind CORS.
    let routed = from_origin(
        &app,
        &TestApp::zones_path("%61ws", "us-east-1"),
        "https://portal.example",
    )
    .await;
    assert_eq!(routed.status, 200, "{}", routed.body);
    assert_eq!(
        routed.body,
        resp.body.replace(
            resp.header("x-request-id").unwrap(),
            routed.header("x-request-id").unwrap(),
        )
    );
    let other = from_origin(&app, &zones(), "https://evil.example").await;
    assert!(other.header("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn every_response_carries_nosniff() {
    let app = TestApp::sqlite().await;
    for resp in [
        app.get(&zones(), Some(&app.member_key)).await,
        app.get("/nope", None).await,
        app.get("/healthz", None).await,
    ] {
        assert_eq!(resp.header("x-content-type-options"), Some("nosniff"));
    }
}

/// A TCP proxy to PostgreSQL that the test can cut (closing every connection and refusing new
/// ones) and restore.
pub(crate) struct CuttableProxy {
    pub(crate) addr: String,
    up: Arc<AtomicBool>,
    generation: Arc<tokio::sync::watch::Sender<u64>>,
}

impl CuttableProxy {
    pub(crate) async fn start(target: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let up = Arc::new(AtomicBool::new(true));
        let (tx, _) = tokio::sync::watch::channel(0u64);
        let generation = Arc::new(tx);
        let (up2, gen2) = (up.clone(), generation.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut inbound, _)) = listener.accept().await else {
                    continue;
                };
                if !up2.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let mut cut = gen2.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = TcpStream::connect(target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Self {
            addr,
            up,
            generation,
        }
    }

    pub(crate) fn cut(&self) {
        self.up.store(false, Ordering::SeqCst);
        self.generation.send_modify(|g| *g += 1);
    }

    pub(crate) fn restore(&self) {
        self.up.store(true, Ordering::SeqCst);
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn two_replicas_on_one_postgres_behave_as_one_service() {
    let a = TestApp::postgres().await;
    let b = a.replica(fast_config()).await;
    let on_b = |path: &str, key: &str, method: reqwest::Method| {
        let request = a
            .http
            .request(method, format!("{}{path}", b.base))
            .header("x-api-key", key);
        async move { Resp::read(request.send().await.unwrap()).await }
    };
    // A delete through A is seen by B at once, and the other way round.
    let p1 = TestApp::profile_path(a.profile.as_str());
    assert_eq!(a.delete(&p1, Some(&a.admin_key)).await.status, 204);
    on_b(&p1, &a.admin_key, reqwest::Method::DELETE)
        .await
        .assert_error(404, "profile_not_found");
    let p2 = TestApp::profile_path(a.profile2.as_str());
    assert_eq!(
        on_b(&p2, &a.admin_key, reqwest::Method::DELETE)
            .await
            .status,
        204
    );
    a.delete(&p2, Some(&a.admin_key))
        .await
        .assert_error(404, "profile_not_found");

    // A catalog import is served by both within the refresh interval.
    let mut catalog = test_catalog();
    catalog.providers[0].regions[0].zones = vec!["af-south-1z".into()];
    a.store.replace_catalog(&catalog).await.unwrap();
    let path = TestApp::zones_path("aws", "af-south-1");
    let both = eventually(Duration::from_secs(3), || async {
        let want = serde_json::json!(["af-south-1z"]);
        a.get(&path, Some(&a.member_key)).await.json()["data"] == want
            && on_b(&path, &a.member_key, reqwest::Method::GET)
                .await
                .json()["data"]
                == want
    })
    .await;
    assert!(
        both,
        "catalog not served by both replicas within the refresh interval"
    );

    // A revoked key fails on both within the cache TTL.
    assert_eq!(
        on_b(&zones(), &a.member_key, reqwest::Method::GET)
            .await
            .status,
        200
    );
    a.store.revoke_key(&a.member_key[4..16]).await.unwrap();
    let refused = eventually(Duration::from_secs(3), || async {
        a.get(&zones(), Some(&a.member_key)).await.status == 401
            && on_b(&zones(), &a.member_key, reqwest::Method::GET)
                .await
                .status
                == 401
    })
    .await;
    assert!(
        refused,
        "revocation not effective on both replicas within the TTL"
    );
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish_and_refuses_new_connections() {
    let app = TestApp::sqlite().await;
    let router = slow_router(&app, HttpConfig::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(appzone_server::serve::serve(
        listener,
        router,
        async {
            let _ = stopped.await;
        },
        ServeOptions {
            drain_timeout: Duration::from_secs(5),
            ..ServeOptions::default()
        },
    ));
    let http = app.http.clone();
    let in_flight =
        tokio::spawn(async move { http.get(format!("http://{addr}/slow")).send().await });
    // Wait until the slow request (600 ms) is being handled, then ask the server to stop.
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(()).unwrap();
    // While that request is still in flight, the port takes no new connection.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let refused = TcpStream::connect(addr).await.is_err();
    assert!(
        !in_flight.is_finished(),
        "the slow request ended before the check: the test proves nothing"
    );
    assert!(refused, "a new connection was accepted while draining");
    let response = in_flight
        .await
        .unwrap()
        .expect("in-flight request completed");
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "done");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("server stopped after draining")
        .unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no new connections after shutdown"
    );
}

/// The drain deadline is kept by `serve` itself: when it passes, `serve` returns and the
/// connections still open are dropped, so a request still running gets no answer (it would
/// otherwise go on in the background of whatever embeds the server).
#[tokio::test]
async fn at_the_drain_deadline_serve_returns_and_drops_what_is_still_open() {
    let app = TestApp::sqlite().await;
    let router = slow_router(&app, HttpConfig::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let deadline = Duration::from_millis(150);
    let server = tokio::spawn(appzone_server::serve::serve(
        listener,
        router,
        async {
            let _ = stopped.await;
        },
        ServeOptions {
            drain_timeout: deadline,
            ..ServeOptions::default()
        },
    ));
    let http = app.http.clone();
    // Takes 600 ms: longer than the deadline.
    let in_flight =
        tokio::spawn(async move { http.get(format!("http://{addr}/slow")).send().await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = std::time::Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("serve returned")
        .unwrap();
    let returned_after = stopping.elapsed();
    assert!(
        returned_after < deadline + Duration::from_millis(100),
        "serve returned {returned_after:?} after the stop, deadline {deadline:?}"
    );
    let answer = tokio::time::timeout(Duration::from_secs(5), in_flight)
        .await
        .expect("the client is not left waiting")
        .unwrap();
    assert!(
        answer.is_err(),
        "the request still running at the deadline was answered: {answer:?}"
    );
}

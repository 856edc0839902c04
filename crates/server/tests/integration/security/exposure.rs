//! API4 (resource consumption), API8 (misconfiguration), API9 (inventory), and keys
//! never leaking.

use super::*;

// ---- API4: unrestricted resource consumption ----------------------------------------------

#[tokio::test]
async fn api4_oversized_paths_headers_and_declared_bodies_are_refused_and_serving_continues() {
    let app = TestApp::sqlite().await;
    let long = "a".repeat(10 * 1024);
    // A 10 kB path parameter: the usual 4xx, in JSON.
    app.get(
        &TestApp::zones_path(&long, "us-east-1"),
        Some(&app.member_key),
    )
    .await
    .assert_error(400, "invalid_provider");
    app.get(&TestApp::zones_path("aws", &long), Some(&app.member_key))
        .await
        .assert_error(400, "invalid_region");
    app.delete(&TestApp::profile_path(&long), Some(&app.admin_key))
        .await
        .assert_error(404, "profile_not_found");
    // Beyond the 32 KiB head limit (a 40 kB path, or 150 header lines): hyper refuses before
    // the app (the one non-JSON answer; see docs/RELIABILITY.md) and the server keeps serving.
    // Its status, or none when the server closed the connection without one (a reset while
    // the request was still being written counts as that).
    let huge = TestApp::zones_path(&"a".repeat(40 * 1024), "us-east-1");
    let request = raw::request_head("GET", &huge, None, true);
    let answer = raw::exchange(app.addr(), request.as_bytes(), Duration::from_secs(20)).await;
    let status = answer.ok().map(|a| a.status);
    assert!(
        status.is_none_or(|s| (400..500).contains(&s)),
        "40 kB path: {status:?}"
    );
    let mut request = app
        .http
        .get(app.url(&zones()))
        .header("x-api-key", &app.member_key);
    for i in 0..150 {
        request = request.header(format!("x-filler-{i}"), "x".repeat(300));
    }
    if let Ok(resp) = request.send().await {
        assert_eq!(resp.status(), 431);
    }
    // A declared 10 MB body is refused from its Content-Length, without reading it.
    let started = Instant::now();
    let resp = app
        .http
        .delete(app.url(&TestApp::profile_path(app.profile.as_str())))
        .header("x-api-key", &app.admin_key)
        .header("content-type", "application/json")
        .body(vec![b' '; 10 * 1024 * 1024])
        .send()
        .await;
    if let Ok(resp) = resp {
        Resp::read(resp)
            .await
            .assert_error(413, "payload_too_large");
    }
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(app.profile_is_live(&app.profile, "acme").await);
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
}

// ---- API8: security misconfiguration ------------------------------------------------------

/// Text that must never reach a client: internals, SQL, paths, versions.
const LEAKS: [&str; 24] = [
    "sqlx",
    "sqlite",
    "postgres",
    "SELECT ",
    "UPDATE ",
    "INSERT ",
    "profile_audit",
    "no such table",
    "panicked",
    "backtrace",
    ".rs:",
    "/src/",
    "/root",
    "/home",
    "/tmp",
    "/work",
    "target/",
    env!("CARGO_PKG_VERSION"),
    "axum",
    "hyper",
    "tokio",
    "rustc",
    "appzone-server",
    "stack",
];

fn leaks_in(resp: &Resp) -> Vec<String> {
    let mut found = Vec::new();
    // Bodies of successful answers (the docs page, metrics) are content; errors are checked.
    let mut texts = Vec::new();
    if resp.status >= 400 {
        texts.push(("body".to_owned(), resp.body.to_lowercase()));
    }
    for (name, value) in &resp.headers {
        texts.push((
            name.to_string(),
            String::from_utf8_lossy(value.as_bytes()).to_lowercase(),
        ));
    }
    for (where_, text) in &texts {
        for leak in LEAKS {
            if text.contains(&leak.to_lowercase()) {
                found.push(format!("{leak:?} in {where_}"));
            }
        }
    }
    for banned in ["server", "x-powered-by", "x-aspnet-version", "via"] {
        if resp.headers.contains_key(banned) {
            found.push(format!("header {banned}: {:?}", resp.headers[banned]));
        }
    }
    if resp.header("x-content-type-options") != Some("nosniff") {
        found.push("no X-Content-Type-Options: nosniff".to_owned());
    }
    found
}

#[tokio::test]
async fn api8_no_internals_in_any_error_body_or_header_and_nosniff_everywhere() {
    let app = TestApp::sqlite().await;
    let limited = TestApp::sqlite_with(ServiceConfig {
        rate_limit_per_key: 1,
        ..fast_config()
    })
    .await;
    let mut responses: Vec<(String, Resp)> = Vec::new();
    let mut add = |label: &str, resp: Resp| responses.push((label.to_owned(), resp));
    add("200 zones", app.get(&zones(), Some(&app.member_key)).await);
    add(
        "400 provider",
        app.get(&TestApp::zones_path("AWS", "x"), Some(&app.member_key))
            .await,
    );
    add(
        "400 region",
        app.get(&TestApp::zones_path("aws", "X"), Some(&app.member_key))
            .await,
    );
    add("401 missing", app.get(&zones(), None).await);
    add("401 invalid", app.get(&zones(), Some("apz_nope")).await);
    add(
        "403",
        app.delete(
            &TestApp::profile_path(app.profile.as_str()),
            Some(&app.member_key),
        )
        .await,
    );
    add(
        "404 region",
        app.get(
            &TestApp::zones_path("aws", "nowhere-1"),
            Some(&app.member_key),
        )
        .await,
    );
    add(
        "404 profile",
        app.delete(&TestApp::profile_path("prof_nope"), Some(&app.admin_key))
            .await,
    );
    add("404 route", app.get("/nope/../../etc/passwd", None).await);
    add(
        "405",
        app.send(reqwest::Method::PUT, &zones(), Some(&app.admin_key), &[])
            .await,
    );
    let body = app
        .http
        .delete(app.url(&TestApp::profile_path("x")))
        .header("x-api-key", &app.admin_key)
        .body(vec![b'x'; 100_000]);
    add("413", Resp::read(body.send().await.unwrap()).await);
    add(
        "204",
        app.delete(
            &TestApp::profile_path(app.profile2.as_str()),
            Some(&app.admin_key),
        )
        .await,
    );
    add("healthz", app.get("/healthz", None).await);
    add("metrics", app.get("/metrics", None).await);
    add("docs", app.get("/docs", None).await);
    for _ in 0..3 {
        let resp = limited.get(&zones(), Some(&limited.member_key)).await;
        if resp.status == 429 {
            add("429", resp);
            break;
        }
    }
    // A database failure: the error body must not carry the SQL error.
    sqlx::query("DROP TABLE profile_audit")
        .execute(app.store.pool())
        .await
        .unwrap();
    let broken = app
        .delete(
            &TestApp::profile_path(app.other_profile.as_str()),
            Some(&app.other_admin_key),
        )
        .await;
    add("500 database", broken);
    app.store.close().await;
    add("503 readyz", app.get("/readyz", None).await);
    add(
        "503 delete",
        app.delete(&TestApp::profile_path("prof_any"), Some(&app.admin_key))
            .await,
    );

    let labels: BTreeSet<String> = responses
        .iter()
        .map(|(l, r)| format!("{l}={}", r.status))
        .collect();
    let mut problems = Vec::new();
    for (label, resp) in &responses {
        for leak in leaks_in(resp) {
            problems.push(format!("{label}: {leak}"));
        }
        if resp.status >= 400 {
            resp.assert_error(resp.status, resp.json()["error_code"].as_str().unwrap());
        }
    }
    eprintln!(
        "API8: {} responses checked ({labels:?}), {} problems",
        responses.len(),
        problems.len()
    );
    assert!(
        labels.contains("429=429")
            && labels.contains("500 database=500")
            && labels.contains("503 delete=503"),
        "{labels:?}"
    );
    assert!(problems.is_empty(), "{problems:#?}");
}

// ---- API9: improper inventory management --------------------------------------------------

/// Routes outside the OpenAPI document that are served on purpose, with what GET answers.
const OPERATIONAL_ROUTES: [(&str, u16); 7] = [
    ("/healthz", 200),
    ("/readyz", 200),
    ("/metrics", 200),
    ("/openapi.json", 200),
    ("/docs", 200),
    ("/docs/", 200),
    ("/docs/swagger-ui.css", 200),
];

#[tokio::test]
async fn api9_the_server_serves_the_documented_routes_and_nothing_else() {
    let app = TestApp::sqlite().await;
    let doc = openapi_document();
    for (template, item) in doc["paths"].as_object().unwrap() {
        let path = fill_path(
            template,
            &[
                ("providerId", "aws"),
                ("regionId", "us-east-1"),
                ("profileId", "prof_missing"),
                ("mappingId", "prod"),
            ],
        );
        for method in item.as_object().unwrap().keys() {
            let resp = app
                .send(
                    method.to_uppercase().parse().unwrap(),
                    &path,
                    Some(&app.admin_key),
                    &[],
                )
                .await;
            assert!(
                resp.status != 405 && !(resp.status == 404 && resp.body.contains("\"not_found\"")),
                "{method} {template}: {}",
                resp.status
            );
        }
    }
    for (path, status) in OPERATIONAL_ROUTES {
        assert_eq!(app.get(path, None).await.status, status, "{path}");
    }
    // Undocumented, legacy, debug and unversioned paths: 404 (401 first under /api/v1).
    let undocumented = [
        "/providers/aws/regions/us-east-1/zones",
        "/v1/providers/aws/regions/us-east-1/zones",
        "/api/providers/aws/regions/us-east-1/zones",
        "/api/v0/providers/aws/regions/us-east-1/zones",
        "/api/v2/providers/aws/regions/us-east-1/zones",
        "/API/V1/providers/aws/regions/us-east-1/zones",
        "/applications/profiles/prof_x",
        "/api/v1",
        "/api/v1/",
        "/api/v1/providers/",
        "/api/v1/providers/aws",
        "/api/v1/providers/aws/regions/",
        "/api/v1/providers/aws/regions/us-east-1",
        "/api/v1/providers/aws/regions/us-east-1/zones/",
        "/api/v1/applications",
        "/api/v1/applications/profiles",
        "/api/v1/profiles/prof_x",
        "/api/v1/openapi.json",
        "/api/v1/admin",
        "/admin",
        "/debug",
        "/debug/pprof",
        "/status",
        "/health",
        "/healthz/",
        "/metrics/",
        "/swagger.json",
        "/swagger-ui",
        "/api-docs",
        "/graphql",
        "/.env",
        "/.git/config",
        "/server-status",
        "/actuator",
        "/console",
    ];
    let mut checked = 0;
    for path in undocumented {
        for key in [None, Some(app.admin_key.as_str())] {
            let resp = app.get(path, key).await;
            let under_api = path.starts_with("/api/v1/") || path == "/api/v1";
            if under_api && key.is_none() {
                resp.assert_error(401, "missing_api_key");
            } else {
                resp.assert_error(404, "not_found");
            }
            checked += 1;
        }
    }
    eprintln!(
        "API9: {} documented operations and {} operational routes answer; {checked} requests to \
         {} undocumented paths answer 404 (401 under /api/v1 without a key)",
        doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|i| i.as_object().unwrap().len())
            .sum::<usize>(),
        OPERATIONAL_ROUTES.len(),
        undocumented.len()
    );
}

#[tokio::test]
async fn docs_asset_path_that_is_not_utf8_answers_404_not_found() {
    let app = TestApp::sqlite().await;
    for path in ["/docs/%FF", "/docs/%C3", "/docs/a%FFb.js"] {
        app.get(path, None).await.assert_error(404, "not_found");
    }
}

// ---- keys never leak ----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_never_appear_in_trace_logs_error_bodies_or_the_database_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("appzone.db");
    let url = format!("sqlite://{}", file.display());
    operator(&url, &["migrate"]);
    operator(&url, &["org", "create", "acme"]);
    operator(&url, &["org", "create", "globex"]);
    let admin = operator(&url, &["key", "create", "--org", "acme", "--role", "admin"]);
    let member = operator(
        &url,
        &["key", "create", "--org", "acme", "--role", "member"],
    );
    let revoked = operator(&url, &["key", "create", "--org", "acme", "--role", "admin"]);
    let other = operator(
        &url,
        &["key", "create", "--org", "globex", "--role", "admin"],
    );
    operator(&url, &["key", "revoke", &revoked[4..16]]);
    let profile = operator(&url, &["profile", "create", "--org", "acme", "--name", "p"]);
    let profile2 = operator(&url, &["profile", "create", "--org", "acme", "--name", "q"]);
    let listed = operator(&url, &["key", "list", "--org", "acme"]);
    let keys = [&admin, &member, &revoked, &other];

    let mut server = ServerProcess::start(&url, &[], "trace").await;
    let http = reqwest::Client::new();
    let zones_url = format!("{}{}", server.base, zones());
    let profile_url = |id: &str| format!("{}{}", server.base, TestApp::profile_path(id));
    let mut requests = vec![
        http.get(&zones_url).header("x-api-key", &member),
        http.get(&zones_url).header("x-api-key", &admin),
        http.delete(profile_url(&profile))
            .header("x-api-key", &member),
        http.delete(profile_url(&profile))
            .header("x-api-key", &other),
        http.delete(profile_url(&profile))
            .header("x-api-key", &admin),
        http.delete(profile_url(&profile2))
            .header("x-api-key", &revoked),
        http.get(&zones_url)
            .header("x-api-key", format!("{}{}", &admin[..17], "x".repeat(32))),
        http.get(&zones_url)
            .header("x-api-key", format!("Bearer {admin}")),
        http.get(&zones_url)
            .header("x-api-key", &admin)
            .header("x-api-key", &member),
        http.get(format!("{}{}", server.base, "/api/v1/nope"))
            .header("x-api-key", &admin),
        http.put(&zones_url).header("x-api-key", &admin),
    ];
    // Misplaced keys are refused; they must not be logged either.
    requests.push(http.get(format!("{zones_url}?api_key={admin}")));
    requests.push(
        http.get(&zones_url)
            .header("authorization", format!("Bearer {member}")),
    );
    let mut answers = Vec::new();
    for request in requests {
        answers.push(Resp::read(request.send().await.unwrap()).await);
    }
    let statuses: Vec<u16> = answers.iter().map(|r| r.status).collect();
    assert_eq!(
        statuses,
        [200, 200, 403, 404, 204, 401, 401, 401, 401, 404, 405, 401, 401]
    );
    let exit = server.terminate().await;
    assert!(exit.success());
    let logs = server.logs();
    let text = String::from_utf8_lossy(&logs).into_owned();
    let log_lines = text.lines().count();
    let request_lines = text
        .lines()
        .filter(|l| l.contains(r#""target":"appzone::request""#))
        .count();
    let statement_lines = text.lines().filter(|l| l.contains("db.statement")).count();

    let db_bytes: Vec<u8> = ["", "-wal", "-shm"]
        .iter()
        .flat_map(|suffix| std::fs::read(format!("{}{suffix}", file.display())).unwrap_or_default())
        .collect();
    let contains = |haystack: &[u8], needle: &str| {
        haystack
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    };
    let mut hits = Vec::new();
    for key in keys {
        let secret = &key[17..];
        for (place, bytes) in [
            ("trace log", logs.as_slice()),
            ("database file", db_bytes.as_slice()),
            ("key list output", listed.as_bytes()),
        ] {
            if contains(bytes, secret) {
                hits.push(format!("secret of {} in the {place}", &key[4..16]));
            }
        }
        for resp in &answers {
            if resp.body.contains(secret)
                || resp
                    .headers
                    .values()
                    .any(|v| contains(v.as_bytes(), secret))
            {
                hits.push(format!(
                    "secret of {} in a {} response",
                    &key[4..16],
                    resp.status
                ));
            }
        }
        // The digest is not a secret in itself, but logs have no reason to carry it.
        if contains(&logs, &appzone_server::keys::digest_hex(key)) {
            hits.push(format!("digest of {} in the trace log", &key[4..16]));
        }
    }
    eprintln!(
        "keys: {} keys issued by the CLI, {} requests with real, wrong and misplaced keys; \
         {log_lines} trace log lines ({request_lines} request lines, {statement_lines} SQL \
         statements), {} bytes of database files, {} response bodies: {} hits",
        keys.len(),
        answers.len(),
        db_bytes.len(),
        answers.len(),
        hits.len()
    );
    assert!(
        request_lines >= answers.len() && statement_lines > 0,
        "trace logging was on: {request_lines} request lines, {statement_lines} SQL statements"
    );
    assert!(hits.is_empty(), "{hits:#?}");
}

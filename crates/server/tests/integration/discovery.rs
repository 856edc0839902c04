//! The discovery listings (`GET /api/v1/providers`, `GET /api/v1/providers/{providerId}/regions`)
//! and the hints of the unknown-id errors: one test per promise, on both backends.

use std::time::Duration;

use appzone_server::model::catalog_file::{CatalogFile, ProviderEntry};

use crate::server_process::{acme_database, acme_key, operator, ServerProcess};

use appzone_test_support::{
    both_backends, eventually, fast_config, postgres_only, test_catalog, Resp, TestApp,
};

const PROVIDERS: &str = "/api/v1/providers";

fn regions_path(provider: &str) -> String {
    format!("/api/v1/providers/{provider}/regions")
}

/// The region ids of `provider` in the test catalog, in catalog order.
fn catalog_regions(provider: &str) -> Vec<String> {
    test_catalog()
        .providers
        .iter()
        .find(|p| p.id.as_str() == provider)
        .unwrap()
        .regions
        .iter()
        .map(|r| r.id.to_string())
        .collect()
}

/// Asserts a listing's 200: JSON, all four fields, `id` the request id; returns `data`.
#[track_caller]
fn listing(resp: &Resp, message: &str) -> Vec<String> {
    assert_eq!(resp.status, 200, "{}", resp.body);
    assert_eq!(resp.header("content-type"), Some("application/json"));
    let body = resp.json();
    assert_eq!(
        body.as_object().unwrap().len(),
        4,
        "data, id, message, status: {body}"
    );
    assert_eq!(body["id"], resp.header("x-request-id").unwrap());
    assert_eq!(body["message"], message);
    assert_eq!(body["status"], "success");
    serde_json::from_value(body["data"].clone()).unwrap()
}

both_backends! {
    async fn providers_are_listed_in_catalog_order_with_all_four_fields(app: TestApp) {
        let resp = app.get(PROVIDERS, Some(&app.member_key)).await;
        assert_eq!(listing(&resp, "4 providers"), ["aws", "gcp", "azure", "acme-cloud"]);
    }

    async fn regions_are_listed_in_catalog_order_with_all_four_fields(app: TestApp) {
        for provider in ["aws", "gcp", "azure"] {
            let resp = app.get(&regions_path(provider), Some(&app.admin_key)).await;
            let expected = catalog_regions(provider);
            let message = format!("{} regions in {provider}", expected.len());
            assert_eq!(listing(&resp, &message), expected, "{provider}");
        }
        let resp = app.get(&regions_path("acme-cloud"), Some(&app.member_key)).await;
        assert_eq!(listing(&resp, "2 regions in acme-cloud"), ["empty-1", "one-1"]);
        // Every region listed has a zone listing.
        for region in catalog_regions("gcp") {
            let zones = app.get(&TestApp::zones_path("gcp", &region), Some(&app.member_key)).await;
            assert_eq!(zones.status, 200, "gcp/{region}");
        }
    }

    async fn a_provider_without_regions_answers_200_with_empty_data(app: TestApp) {
        let mut catalog = test_catalog();
        catalog.providers.push(ProviderEntry {
            id: "bare-cloud".parse().unwrap(),
            name: "Bare".into(),
            regions: vec![],
        });
        app.store.import_catalog(&catalog, false).await.unwrap();
        let path = regions_path("bare-cloud");
        let served = eventually(Duration::from_secs(3), || async {
            app.get(&path, Some(&app.member_key)).await.status == 200
        })
        .await;
        assert!(served, "the import was not served within the refresh interval");
        let resp = app.get(&path, Some(&app.member_key)).await;
        assert_eq!(listing(&resp, "0 regions in bare-cloud"), Vec::<String>::new());
    }

    async fn malformed_or_unknown_provider_of_the_region_listing_answers_400_invalid_provider(app: TestApp) {
        let long = "a".repeat(64);
        for provider in ["AWS", "aws_", "-aws", "%FF", "a%2Fb", "%C3%A9", long.as_str(), "nope", "us-east-1"] {
            let resp = app.get(&regions_path(provider), Some(&app.member_key)).await;
            let message = resp.assert_error(400, "invalid_provider");
            assert!(message.contains("provider"), "{provider}: {message}");
        }
        // Percent-decoded before it is looked up, like the zone listing's segments.
        let resp = app.get(&regions_path("%61ws"), Some(&app.member_key)).await;
        assert_eq!(listing(&resp, "34 regions in aws").len(), 34);
    }

    async fn an_unknown_provider_names_the_closest_id_or_points_to_the_provider_listing(app: TestApp) {
        let cases = [
            ("awz", "unknown provider: no provider has the id \"awz\"; did you mean \"aws\"?"),
            ("gpc", "unknown provider: no provider has the id \"gpc\"; did you mean \"gcp\"?"),
            ("azrue", "unknown provider: no provider has the id \"azrue\"; did you mean \"azure\"?"),
            ("acme-clod", "unknown provider: no provider has the id \"acme-clod\"; did you mean \"acme-cloud\"?"),
            ("oracle", "unknown provider: no provider has the id \"oracle\"; GET /api/v1/providers lists the providers"),
            ("x", "unknown provider: no provider has the id \"x\"; GET /api/v1/providers lists the providers"),
        ];
        for (provider, expected) in cases {
            // The same message from both operations that take a provider.
            for path in [regions_path(provider), TestApp::zones_path(provider, "us-east-1")] {
                let message = app.get(&path, Some(&app.member_key)).await.assert_error(400, "invalid_provider");
                assert_eq!(message, expected, "{path}");
            }
        }
        // A malformed id is reported as malformed, without a guess.
        let message = app.get(&regions_path("AWS"), Some(&app.member_key)).await.assert_error(400, "invalid_provider");
        assert!(message.starts_with("invalid provider id: "), "{message}");
        assert!(!message.contains("did you mean"), "{message}");
    }

    async fn an_unknown_region_names_the_closest_id_or_points_to_the_region_listing(app: TestApp) {
        let cases = [
            ("aws", "us-eats-1", "region not found: aws has no region \"us-eats-1\"; did you mean \"us-east-1\"?"),
            ("gcp", "europe-west", "region not found: gcp has no region \"europe-west\"; GET /api/v1/providers/gcp/regions lists its regions"),
            ("gcp", "europe-wset1", "region not found: gcp has no region \"europe-wset1\"; did you mean \"europe-west1\"?"),
            // Equally close to us-east-1 and us-east-2: no guess.
            ("aws", "us-east-9", "region not found: aws has no region \"us-east-9\"; GET /api/v1/providers/aws/regions lists its regions"),
            // Another provider's region is not suggested.
            ("gcp", "us-east-1", "region not found: gcp has no region \"us-east-1\"; did you mean \"us-east1\"?"),
            ("acme-cloud", "mars-1", "region not found: acme-cloud has no region \"mars-1\"; GET /api/v1/providers/acme-cloud/regions lists its regions"),
        ];
        for (provider, region, expected) in cases {
            let path = TestApp::zones_path(provider, region);
            let message = app.get(&path, Some(&app.member_key)).await.assert_error(404, "region_not_found");
            assert_eq!(message, expected, "{path}");
        }
        // The pointer is a path that answers.
        let pointed = app.get(&regions_path("acme-cloud"), Some(&app.member_key)).await;
        assert_eq!(pointed.status, 200);
    }

    async fn discovery_listings_have_a_weak_etag_private_cache_control_and_answer_304(app: TestApp) {
        let mut etags = Vec::new();
        for path in [PROVIDERS.to_owned(), regions_path("aws"), regions_path("gcp")] {
            let resp = app.get(&path, Some(&app.member_key)).await;
            assert_eq!(resp.status, 200, "{path}");
            let etag = resp.header("etag").unwrap().to_owned();
            assert!(etag.starts_with("W/\""), "{path}: {etag}");
            assert_eq!(resp.header("cache-control"), Some("private, max-age=60"), "{path}");
            let again = app.get(&path, Some(&app.admin_key)).await;
            assert_eq!(again.header("etag"), Some(etag.as_str()), "{path}: not per request or key");

            let not_modified = app
                .send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", etag.as_str())])
                .await;
            assert_eq!(not_modified.status, 304, "{path}");
            assert_eq!(not_modified.body, "", "{path}: 304 has no body");
            assert_eq!(not_modified.header("etag"), Some(etag.as_str()));
            assert_eq!(not_modified.header("cache-control"), Some("private, max-age=60"));
            assert!(not_modified.header("x-request-id").is_some());
            let listed = format!("W/\"other\", {etag}");
            let among = app
                .send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", listed.as_str())])
                .await;
            assert_eq!(among.status, 304, "{path}: one of several tags");
            let stale = app
                .send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", "W/\"stale\"")])
                .await;
            assert_eq!(stale.status, 200, "{path}: another tag gets the listing");
            etags.push(etag);
        }
        let distinct: std::collections::BTreeSet<_> = etags.iter().collect();
        assert_eq!(distinct.len(), 3, "each listing has its own validator: {etags:?}");
    }

    async fn the_key_is_checked_before_anything_on_the_discovery_listings(app: TestApp) {
        for path in [PROVIDERS.to_owned(), regions_path("aws"), regions_path("AWS"), regions_path("nope")] {
            app.get(&path, None).await.assert_error(401, "missing_api_key");
            app.get(&path, Some("  ")).await.assert_error(401, "missing_api_key");
            app.get(&path, Some(&app.revoked_key)).await.assert_error(401, "invalid_api_key");
            app.get(&path, Some("apz_nope")).await.assert_error(401, "invalid_api_key");
        }
    }

    async fn admin_member_and_other_tenants_keys_may_list_providers_and_regions(app: TestApp) {
        for key in [&app.admin_key, &app.member_key, &app.other_admin_key] {
            assert_eq!(app.get(PROVIDERS, Some(key)).await.status, 200);
            assert_eq!(app.get(&regions_path("azure"), Some(key)).await.status, 200);
        }
    }

    async fn head_of_a_discovery_listing_answers_its_headers_without_a_body(app: TestApp) {
        for path in [PROVIDERS.to_owned(), regions_path("aws")] {
            let get = app.get(&path, Some(&app.member_key)).await;
            let head = app.send(reqwest::Method::HEAD, &path, Some(&app.member_key), &[]).await;
            assert_eq!((head.status, head.body.as_str()), (200, ""), "{path}");
            assert_eq!(head.header("etag"), get.header("etag"), "{path}");
            assert_eq!(head.header("cache-control"), get.header("cache-control"));
        }
        let head = app.send(reqwest::Method::HEAD, &regions_path("awz"), Some(&app.member_key), &[]).await;
        assert_eq!((head.status, head.body.as_str()), (400, ""));
    }

    async fn a_catalog_import_changes_the_discovery_listings_and_their_etags(app: TestApp) {
        let before = app.get(PROVIDERS, Some(&app.member_key)).await;
        let old_etag = before.header("etag").unwrap().to_owned();
        let mut catalog = test_catalog();
        catalog.providers.swap(0, 1); // gcp first now
        catalog.providers.retain(|p| p.id.as_str() != "azure");
        let import = app.store.import_catalog(&catalog, true).await.unwrap();
        assert!(!import.changes.is_empty(), "the import changed the catalog");
        let seen = eventually(Duration::from_secs(3), || async {
            app.get(PROVIDERS, Some(&app.member_key)).await.header("etag") != Some(old_etag.as_str())
        })
        .await;
        assert!(seen, "the import was not served within the refresh interval");
        let resp = app.get(PROVIDERS, Some(&app.member_key)).await;
        assert_eq!(listing(&resp, "3 providers"), ["gcp", "aws", "acme-cloud"]);
        let stale = app
            .send(reqwest::Method::GET, PROVIDERS, Some(&app.member_key), &[("if-none-match", old_etag.as_str())])
            .await;
        assert_eq!(stale.status, 200, "the old validator no longer matches");
        app.get(&regions_path("azure"), Some(&app.member_key)).await.assert_error(400, "invalid_provider");
    }
}

/// The regions' order is the catalog's, not sorted: a catalog in another order is listed in
/// that order.
#[tokio::test]
async fn regions_keep_the_order_of_the_imported_catalog() {
    let app = TestApp::sqlite().await;
    let mut catalog = test_catalog();
    catalog.providers[0].regions.reverse();
    let expected: Vec<String> = catalog.providers[0]
        .regions
        .iter()
        .map(|r| r.id.to_string())
        .collect();
    app.store.import_catalog(&catalog, false).await.unwrap();
    let path = regions_path("aws");
    let seen = eventually(Duration::from_secs(3), || async {
        app.get(&path, Some(&app.member_key)).await.json()["data"][0] == expected[0].as_str()
    })
    .await;
    assert!(
        seen,
        "the import was not served within the refresh interval"
    );
    let resp = app.get(&path, Some(&app.member_key)).await;
    assert_eq!(listing(&resp, "34 regions in aws"), expected);
}

postgres_only! {
    /// `catalog import` by the operator CLI reaches both replicas' discovery listings.
    async fn postgres_a_catalog_import_is_seen_through_the_discovery_listings_of_both_replicas() {
        let a = TestApp::postgres().await;
        let b = a.replica(fast_config()).await;
        let url = a.store.pool().connect_options().database_url.to_string();
        let on = |base: &str, path: &str| {
            let request = a
                .http
                .get(format!("{base}{path}"))
                .header("x-api-key", &a.member_key);
            async move { Resp::read(request.send().await.unwrap()).await }
        };
        for base in [&a.base, &b.base] {
            let providers = on(base, PROVIDERS).await.json()["data"].clone();
            assert_eq!(
                providers,
                serde_json::json!(["aws", "gcp", "azure", "acme-cloud"])
            );
        }

        let mut catalog = CatalogFile::builtin();
        catalog.providers[2].regions.truncate(2); // azure keeps two regions
        catalog.providers[2].regions[1].id = "newregion-1".parse().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("catalog.json");
        std::fs::write(&file, catalog.to_json()).unwrap();
        operator(
            &url,
            &["catalog", "import", file.to_str().unwrap(), "--prune"],
        );

        let want_providers = serde_json::json!(["aws", "gcp", "azure"]);
        let azure_regions =
            serde_json::json!([catalog.providers[2].regions[0].id.as_str(), "newregion-1"]);
        let both = eventually(Duration::from_secs(5), || async {
            let mut all = true;
            for base in [&a.base, &b.base] {
                all &= on(base, PROVIDERS).await.json()["data"] == want_providers;
                all &= on(base, &regions_path("azure")).await.json()["data"] == azure_regions;
            }
            all
        })
        .await;
        assert!(
            both,
            "the import was not served by both replicas within the refresh interval"
        );
        // Both replicas answer alike, validators included.
        for path in [PROVIDERS.to_owned(), regions_path("azure")] {
            let (on_a, on_b) = (on(&a.base, &path).await, on(&b.base, &path).await);
            assert_eq!(on_a.header("etag"), on_b.header("etag"), "{path}");
            assert_eq!(on_a.json()["data"], on_b.json()["data"], "{path}");
        }
        on(&b.base, &regions_path("acme-cloud"))
            .await
            .assert_error(400, "invalid_provider");
    }
}

/// The discovery listings are served from the in-memory snapshot: with the database file
/// gone and its connections closed, they still answer 200.
#[tokio::test]
async fn discovery_listings_are_served_without_the_database() {
    // Keys stay cached for the whole test: authentication may need the database; the
    // listings must not.
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        key_cache_ttl: Duration::from_secs(600),
        ..fast_config()
    })
    .await;
    assert_eq!(app.get(PROVIDERS, Some(&app.member_key)).await.status, 200);
    app.store.pool().close().await;
    for path in [
        PROVIDERS.to_owned(),
        regions_path("aws"),
        TestApp::zones_path("aws", "us-east-1"),
    ] {
        let resp = app.get(&path, Some(&app.member_key)).await;
        assert_eq!(resp.status, 200, "{path}: {}", resp.body);
    }
    // The database is indeed gone for what needs it.
    let delete = app
        .delete(
            &TestApp::profile_path(app.profile.as_str()),
            Some(&app.admin_key),
        )
        .await;
    assert_eq!(delete.status, 503, "{}", delete.body);
}

/// Requests to the new listings are counted under their route templates, logged with them,
/// and rate limited per key like every `/api/v1` request.
#[tokio::test]
async fn discovery_requests_are_counted_logged_under_their_route_and_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "member");
    let mut server = ServerProcess::start(&url, &["--rate-limit-per-key", "4"], "info").await;
    let http = reqwest::Client::new();
    let get = |path: String| {
        http.get(format!("{}{path}", server.base))
            .header("x-api-key", &key)
            .header("x-request-id", "discovery-test")
            .send()
    };
    let regions = "/api/v1/providers/{providerId}/regions";
    // (route, status) of each request sent, in order.
    let mut sent: Vec<(&str, u16)> = Vec::new();
    for (route, path) in [
        (PROVIDERS, PROVIDERS.to_owned()),
        (regions, regions_path("aws")),
        (regions, regions_path("awz")),
    ] {
        sent.push((route, get(path).await.unwrap().status().as_u16()));
    }
    assert_eq!(sent, [(PROVIDERS, 200), (regions, 200), (regions, 400)]);
    // The limit (4 a second) is hit at the fifth request of the second; a slow machine may
    // let a token come back first, so go on, boundedly, until the 429.
    while sent.last().map(|(_, status)| *status) != Some(429) {
        assert!(
            sent.len() < 24,
            "no 429 from a limit of 4 a second: {sent:?}"
        );
        sent.push((
            PROVIDERS,
            get(PROVIDERS.to_owned()).await.unwrap().status().as_u16(),
        ));
    }
    let mut expected: Vec<(String, u64)> = sent
        .iter()
        .map(|(route, status)| ((*route).to_owned(), u64::from(*status)))
        .collect();
    expected.sort();

    let metrics = http
        .get(format!("{}/metrics", server.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for (route, status) in [
        (PROVIDERS, 200),
        (PROVIDERS, 429),
        (regions, 200),
        (regions, 400),
    ] {
        let count = sent.iter().filter(|s| **s == (route, status)).count();
        let line = format!(
            "appzone_http_requests_total{{method=\"GET\",route=\"{route}\",status=\"{status}\"}} {count}"
        );
        assert!(
            metrics.lines().any(|l| l == line),
            "no `{line}` in:\n{metrics}"
        );
    }

    server.terminate().await;
    let logs = String::from_utf8(server.logs()).unwrap();
    let requests: Vec<serde_json::Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|l| l["target"] == "appzone::request")
        .collect();
    // Sorted: each worker thread's lines keep their order, but two threads' may interleave.
    let mut routes: Vec<(String, u64)> = requests
        .iter()
        .filter(|l| l["fields"]["request_id"] == "discovery-test")
        .map(|l| {
            (
                l["fields"]["route"].as_str().unwrap_or_default().to_owned(),
                l["fields"]["status"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    routes.sort();
    assert_eq!(routes, expected, "one log line per request: {logs}");
}

/// What the built-in catalog serves (its references' descriptions and its notes, in every
/// identity listing) speaks to callers: none of the compiler's working notes (which search
/// found a fact, what "this pass" did not re-read, internal file names), which once reached
/// every tenant.
#[tokio::test]
async fn the_built_in_catalog_serves_no_working_notes() {
    const WORKING_NOTES: &[&str] = &[
        "find_string",
        "steering",
        "this pass",
        "corpus",
        "stored copy",
        "research note",
        "catalog compiler",
        "by rule",
        "TODO",
        "FIXME",
    ];
    let app = TestApp::sqlite().await;
    let (_, catalog) = app.store.load_catalog().await.unwrap();
    let served = catalog.to_json();
    let found: Vec<&str> = WORKING_NOTES
        .iter()
        .copied()
        .filter(|note| served.contains(note))
        .collect();
    assert!(found.is_empty(), "the built-in catalog serves {found:?}");
}

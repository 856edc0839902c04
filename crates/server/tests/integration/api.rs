//! One test per promise of docs/API.md about the two operations, on both backends.

use std::time::{Duration, Instant};

use appzone_test_support::{both_backends, eventually, fast_config, test_catalog, TestApp};

/// Insta settings shared by both backends, so one snapshot proves both answer alike.
fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_prepend_module_to_snapshot(false);
    settings.set_snapshot_path("snapshots");
    settings
}

both_backends! {
    async fn list_zones_answers_200_with_all_four_fields(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("aws", "us-east-1"), Some(&app.member_key)).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        assert_eq!(resp.header("content-type"), Some("application/json"));
        let body = resp.json();
        assert_eq!(body["id"], resp.header("x-request-id").unwrap(), "id is the request id");
        snapshot_settings().bind(|| {
            insta::assert_json_snapshot!("list_zones_200", body, { ".id" => "[request-id]" });
        });
    }

    async fn list_zones_keeps_catalog_order_and_serves_other_clouds(app: TestApp) {
        for (provider, region, first) in [("gcp", "europe-west1", "europe-west1-b"), ("azure", "westeurope", "westeurope-az1")] {
            let resp = app.get(&TestApp::zones_path(provider, region), Some(&app.admin_key)).await;
            assert_eq!(resp.status, 200, "{provider}/{region}: {}", resp.body);
            assert_eq!(resp.json()["data"][0], first);
        }
    }

    async fn region_without_zones_answers_200_with_empty_data(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("acme-cloud", "empty-1"), Some(&app.member_key)).await;
        assert_eq!(resp.status, 200);
        let body = resp.json();
        assert_eq!(body["data"], serde_json::json!([]));
        assert_eq!(body["message"], "0 zones in acme-cloud/empty-1");
        assert_eq!(body["status"], "success");
    }

    async fn malformed_or_unknown_provider_answers_400_invalid_provider(app: TestApp) {
        let long = "a".repeat(64);
        for provider in ["AWS", "aws_", "-aws", "%FF", "a%2Fb", "%C3%A9", long.as_str(), "nope"] {
            let resp = app.get(&TestApp::zones_path(provider, "us-east-1"), Some(&app.member_key)).await;
            let message = resp.assert_error(400, "invalid_provider");
            assert!(message.contains("provider"), "{provider}: {message}");
        }
    }

    async fn malformed_region_answers_400_invalid_region(app: TestApp) {
        for region in ["US-EAST-1", "us_east_1", "%FF", "us%20east", &"a".repeat(64)] {
            let resp = app.get(&TestApp::zones_path("aws", region), Some(&app.member_key)).await;
            resp.assert_error(400, "invalid_region");
        }
    }

    async fn unknown_region_answers_404_region_not_found(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("aws", "us-east-9"), Some(&app.member_key)).await;
        resp.assert_error(404, "region_not_found");
        // A region of another provider is unknown for this one.
        let resp = app.get(&TestApp::zones_path("gcp", "us-east-1"), Some(&app.member_key)).await;
        resp.assert_error(404, "region_not_found");
    }

    async fn provider_is_checked_before_region(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("AWS", "US"), Some(&app.member_key)).await;
        resp.assert_error(400, "invalid_provider");
        let resp = app.get(&TestApp::zones_path("nope", "US"), Some(&app.member_key)).await;
        resp.assert_error(400, "invalid_provider");
    }

    async fn path_segments_are_percent_decoded_before_validation(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("%61ws", "us%2Deast-1"), Some(&app.member_key)).await;
        assert_eq!(resp.status, 200, "{}", resp.body);
        assert_eq!(resp.json()["message"], "6 zones in aws/us-east-1");
    }

    async fn listing_has_weak_etag_and_private_cache_control(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("aws", "us-east-1"), Some(&app.member_key)).await;
        let etag = resp.header("etag").unwrap().to_owned();
        assert!(etag.starts_with("W/\""), "{etag}");
        assert_eq!(resp.header("cache-control"), Some("private, max-age=60"));
        let again = app.get(&TestApp::zones_path("aws", "us-east-1"), Some(&app.admin_key)).await;
        assert_eq!(again.header("etag"), Some(etag.as_str()), "etag does not depend on the request id or key");
        let other = app.get(&TestApp::zones_path("aws", "us-west-2"), Some(&app.admin_key)).await;
        assert_ne!(other.header("etag"), Some(etag.as_str()));
    }

    async fn matching_if_none_match_answers_304_without_body(app: TestApp) {
        let path = TestApp::zones_path("aws", "us-east-1");
        let etag = app.etag(&path).await;
        let strong = etag.trim_start_matches("W/").to_owned();
        for candidate in [etag.clone(), strong, "*".to_owned(), format!("\"other\", {etag}")] {
            let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", &candidate)]).await;
            assert_eq!(resp.status, 304, "If-None-Match: {candidate}");
            assert!(resp.body.is_empty());
            assert_eq!(resp.header("etag"), Some(etag.as_str()));
            assert_eq!(resp.header("cache-control"), Some("private, max-age=60"));
            assert!(resp.header("x-request-id").is_some());
        }
        // A list may arrive split over several header lines (RFC 9110 §5.3): any line may match.
        let split = [("if-none-match", "\"other\""), ("if-none-match", etag.as_str())];
        let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &split).await;
        assert_eq!(resp.status, 304, "If-None-Match over two lines");
        let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", "W/\"stale\"")]).await;
        assert_eq!(resp.status, 200);
        // Any other value is accepted, never refused (the document's `IfNoneMatch` says so):
        // empty, blank, malformed, unquoted or long, it gets the listing as no header does.
        let unquoted = etag.trim_start_matches("W/").trim_matches('"').to_owned();
        let long = format!("W/\"{}\"", "0".repeat(4096));
        for odd in ["", "   ", ",", "W/", "not a tag", unquoted.as_str(), long.as_str()] {
            let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("if-none-match", odd)]).await;
            assert_eq!(resp.status, 200, "If-None-Match: {odd:?}");
            assert_eq!(resp.json()["status"], "success", "If-None-Match: {odd:?}");
        }
    }

    async fn missing_empty_or_blank_key_answers_401_missing_api_key(app: TestApp) {
        for path in [TestApp::zones_path("aws", "us-east-1"), TestApp::profile_path(app.profile.as_str())] {
            for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
                let resp = app.send(method.clone(), &path, None, &[]).await;
                resp.assert_error(401, "missing_api_key");
                for blank in ["", "   "] {
                    let resp = app.send(method.clone(), &path, None, &[("x-api-key", blank)]).await;
                    resp.assert_error(401, "missing_api_key");
                }
            }
        }
        assert!(app.profile_is_live(&app.profile, "acme").await);
    }

    async fn unknown_malformed_or_revoked_key_answers_401_invalid_api_key(app: TestApp) {
        let forged = format!("{}{}", &app.admin_key[..17], "x".repeat(32));
        let bearer = format!("Bearer {}", app.admin_key);
        let unknown = appzone_contract::ApiKey::generate();
        let wrong = [forged.as_str(), bearer.as_str(), unknown.expose_secret(), "not-a-key", app.revoked_key.as_str()];
        for key in wrong {
            let resp = app.get(&TestApp::zones_path("aws", "us-east-1"), Some(key)).await;
            resp.assert_error(401, "invalid_api_key");
            let resp = app.delete(&TestApp::profile_path(app.profile.as_str()), Some(key)).await;
            resp.assert_error(401, "invalid_api_key");
            assert!(!resp.body.contains(key), "the key is not echoed");
        }
        assert!(app.profile_is_live(&app.profile, "acme").await);
    }

    async fn key_is_checked_before_path_parameters(app: TestApp) {
        let resp = app.get(&TestApp::zones_path("NOT VALID", "%FF"), None).await;
        resp.assert_error(401, "missing_api_key");
        let resp = app.delete(&TestApp::profile_path(".."), Some("apz_bad")).await;
        resp.assert_error(401, "invalid_api_key");
        let resp = app.get("/api/v1/no/such/route", None).await;
        resp.assert_error(401, "missing_api_key");
    }

    async fn admin_delete_answers_204_with_empty_body_then_404(app: TestApp) {
        let path = TestApp::profile_path(app.profile.as_str());
        let resp = app.delete(&path, Some(&app.admin_key)).await;
        assert_eq!(resp.status, 204, "{}", resp.body);
        assert!(resp.body.is_empty());
        assert!(resp.header("x-request-id").is_some());
        assert!(!app.profile_is_live(&app.profile, "acme").await, "deleted before 204");
        let again = app.delete(&path, Some(&app.admin_key)).await;
        again.assert_error(404, "profile_not_found");
        assert!(app.profile_is_live(&app.profile2, "acme").await, "only that profile");
    }

    async fn member_delete_answers_403_forbidden_and_keeps_the_profile(app: TestApp) {
        let resp = app.delete(&TestApp::profile_path(app.profile.as_str()), Some(&app.member_key)).await;
        let message = resp.assert_error(403, "forbidden");
        assert!(message.contains("contact your organization admin"), "{message}");
        assert!(app.profile_is_live(&app.profile, "acme").await);
        snapshot_settings().bind(|| insta::assert_json_snapshot!("delete_403", resp.json()));
    }

    async fn other_tenants_profile_answers_404_like_a_missing_one(app: TestApp) {
        let theirs = app.delete(&TestApp::profile_path(app.other_profile.as_str()), Some(&app.admin_key)).await;
        let missing = app.delete(&TestApp::profile_path("prof_missing"), Some(&app.admin_key)).await;
        theirs.assert_error(404, "profile_not_found");
        assert_eq!(theirs.body, missing.body, "byte-identical bodies");
        assert_eq!(theirs.header_names(), missing.header_names());
        // A member of another organization gets 404, not 403: existence is not revealed.
        let member = app.delete(&TestApp::profile_path(app.other_profile.as_str()), Some(&app.member_key)).await;
        assert_eq!(member.body, missing.body);
        assert!(app.profile_is_live(&app.other_profile, "globex").await);
        snapshot_settings().bind(|| insta::assert_json_snapshot!("delete_404", missing.json()));
    }

    async fn deleted_profile_answers_404_even_to_a_member(app: TestApp) {
        let path = TestApp::profile_path(app.profile.as_str());
        assert_eq!(app.delete(&path, Some(&app.admin_key)).await.status, 204);
        app.delete(&path, Some(&app.member_key)).await.assert_error(404, "profile_not_found");
    }

    async fn malformed_profile_id_answers_404_profile_not_found(app: TestApp) {
        let long = "a".repeat(129);
        for id in [".hidden", "%FF", "a%2Fb", "a%20b", "%C3%A9t%C3%A9", long.as_str()] {
            let resp = app.delete(&TestApp::profile_path(id), Some(&app.admin_key)).await;
            resp.assert_error(404, "profile_not_found");
        }
        // Dot segments, sent raw: HTTP clients would normalize them away.
        for id in ["..", ".", "%2E%2E"] {
            let resp = app.raw("DELETE", &TestApp::profile_path(id), Some(&app.admin_key)).await;
            assert_eq!(resp.status, 404, "{id}");
            assert!(resp.text().contains("\"error_code\":\"profile_not_found\""), "{id}: {resp:?}");
        }
    }

    async fn profile_ids_are_case_sensitive(app: TestApp) {
        let upper = app.profile.as_str().replace("prof_", "PROF_");
        let resp = app.delete(&TestApp::profile_path(&upper), Some(&app.admin_key)).await;
        resp.assert_error(404, "profile_not_found");
        assert!(app.profile_is_live(&app.profile, "acme").await);
    }

    async fn concurrent_deletes_of_one_profile_give_exactly_one_204(app: TestApp) {
        let path = TestApp::profile_path(app.profile.as_str());
        let attempts = (0..16).map(|_| app.delete(&path, Some(&app.admin_key)));
        let statuses: Vec<u16> = futures_util::future::join_all(attempts).await.into_iter().map(|r| r.status).collect();
        assert_eq!(statuses.iter().filter(|s| **s == 204).count(), 1, "{statuses:?}");
        assert_eq!(statuses.iter().filter(|s| **s == 404).count(), 15, "{statuses:?}");
        let audits = audit_count(&app, app.profile.as_str()).await;
        assert_eq!(audits, 1, "one audit record per delete");
    }

    async fn every_delete_writes_an_audit_record(app: TestApp) {
        let resp = app.send(reqwest::Method::DELETE, &TestApp::profile_path(app.profile.as_str()), Some(&app.admin_key), &[("x-request-id", "audit-me-1")]).await;
        assert_eq!(resp.status, 204);
        let row = sqlx::query_as::<_, (String, String, String, String, String, i64)>(
            "SELECT profile_id, org_id, action, key_id, request_id, at FROM profile_audit WHERE profile_id = $1",
        )
        .bind(app.profile.as_str())
        .fetch_one(app.store.pool())
        .await
        .unwrap();
        assert_eq!((row.0.as_str(), row.1.as_str(), row.2.as_str()), (app.profile.as_str(), "acme", "delete"));
        assert_eq!(row.3, app.admin_key[4..16]);
        assert_eq!(row.4, "audit-me-1");
        assert!(row.5 > 1_700_000_000_000);
    }

    async fn restored_profile_can_be_deleted_again(app: TestApp) {
        let path = TestApp::profile_path(app.profile.as_str());
        assert_eq!(app.delete(&path, Some(&app.admin_key)).await.status, 204);
        app.store.restore_profile(&app.profile).await.unwrap();
        assert_eq!(app.delete(&path, Some(&app.admin_key)).await.status, 204);
    }

    async fn tombstones_are_purged_after_retention(app: TestApp) {
        let path = TestApp::profile_path(app.profile.as_str());
        assert_eq!(app.delete(&path, Some(&app.admin_key)).await.status, 204);
        assert_eq!(app.store.purge_tombstones(0).await.unwrap(), 0, "not yet expired");
        let purged = app.store.purge_tombstones(appzone_server::model::now_ms() + 1).await.unwrap();
        assert_eq!(purged, 1);
        assert!(app.store.restore_profile(&app.profile).await.is_err(), "gone for good");
    }

    async fn request_id_is_echoed_when_valid_and_replaced_otherwise(app: TestApp) {
        let path = TestApp::zones_path("aws", "us-east-1");
        let valid = "Trace.id_1:2-3";
        let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("x-request-id", valid)]).await;
        assert_eq!(resp.header("x-request-id"), Some(valid));
        assert_eq!(resp.json()["id"], valid);
        let max = "r".repeat(128);
        let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("x-request-id", &max)]).await;
        assert_eq!(resp.header("x-request-id"), Some(max.as_str()));
        for invalid in ["has space", "semi;colon", &"r".repeat(129), "slash/id"] {
            let resp = app.send(reqwest::Method::GET, &path, Some(&app.member_key), &[("x-request-id", invalid)]).await;
            let id = resp.header("x-request-id").unwrap();
            assert_ne!(id, invalid);
            assert!(appzone_contract::headers::is_valid_request_id(id));
            assert_eq!(resp.json()["id"], id);
        }
        let a = app.get(&path, Some(&app.member_key)).await;
        let b = app.get(&path, Some(&app.member_key)).await;
        assert_ne!(a.header("x-request-id"), b.header("x-request-id"), "fresh ids differ");
        for resp in [app.get("/nope", None).await, app.delete(&TestApp::profile_path("x"), None).await] {
            assert!(resp.header("x-request-id").is_some());
        }
    }

    async fn unknown_routes_answer_404_not_found_in_json(app: TestApp) {
        for path in ["/", "/nope", "/api/v2/providers/aws/regions/us-east-1/zones", "/api/v1/providers/aws/regions/us-east-1/zones/extra", "/api/v1/applications/profiles/"] {
            let resp = app.get(path, Some(&app.admin_key)).await;
            resp.assert_error(404, "not_found");
        }
        let body = app.get("/nope", None).await.json();
        snapshot_settings().bind(|| insta::assert_json_snapshot!("not_found", body));
    }

    async fn trailing_slash_answers_404_naming_the_route_without_it(app: TestApp) {
        let zones = TestApp::zones_path("aws", "us-east-1");
        let profile = TestApp::profile_path(app.profile2.as_str());
        let encoded = TestApp::zones_path("%61ws", "us%2Deast-1");
        let long = TestApp::profile_path(&"a".repeat(600));
        // (path sent, method, the route the message names)
        let suggested = [
            (format!("{zones}/"), reqwest::Method::GET, zones.as_str()),
            (format!("{zones}/?next=abc"), reqwest::Method::GET, zones.as_str()),
            (format!("{encoded}/"), reqwest::Method::GET, encoded.as_str()),
            (format!("{profile}/"), reqwest::Method::DELETE, profile.as_str()),
            ("/healthz/".to_owned(), reqwest::Method::GET, "/healthz"),
            ("/readyz/".to_owned(), reqwest::Method::GET, "/readyz"),
            ("/metrics/".to_owned(), reqwest::Method::GET, "/metrics"),
            ("/openapi.json/".to_owned(), reqwest::Method::GET, "/openapi.json"),
        ];
        for (path, method, route) in suggested {
            let resp = app.send(method.clone(), &path, Some(&app.admin_key), &[]).await;
            let message = resp.assert_error(404, "not_found");
            assert_eq!(message, format!("no such route; did you mean {route} (no trailing slash)?"), "{path}");
            // The path named is served.
            let there = app.send(method, route, Some(&app.admin_key), &[]).await;
            assert!([200, 204].contains(&there.status), "{route}: {} {}", there.status, there.body);
        }
        // Without the slash no route either: the message names none.
        for path in ["/nope/", "/api/v1/providers/aws/regions/us-east-1/", "/api/v1/applications/profiles/", "/api/v1/", "/healthz//", "/zones/"] {
            let message = app.get(path, Some(&app.admin_key)).await.assert_error(404, "not_found");
            assert_eq!(message, "no such route", "{path}");
        }
        // A path too long to echo whole is not echoed, nor cut.
        let message = app.get(&format!("{long}/"), Some(&app.admin_key)).await.assert_error(404, "not_found");
        assert_eq!(message, "no such route; did you mean this path without its trailing slash?");
        // The key is still checked first.
        app.get(&format!("{zones}/"), None).await.assert_error(401, "missing_api_key");
    }

    async fn wrong_methods_answer_405_with_allow(app: TestApp) {
        let zones = TestApp::zones_path("aws", "us-east-1");
        let profile = TestApp::profile_path(app.profile.as_str());
        for (method, path, allow) in [
            (reqwest::Method::POST, zones.as_str(), "GET,HEAD"),
            (reqwest::Method::DELETE, zones.as_str(), "GET,HEAD"),
            (reqwest::Method::GET, profile.as_str(), "DELETE"),
            (reqwest::Method::PUT, profile.as_str(), "DELETE"),
            (reqwest::Method::POST, "/healthz", "GET,HEAD"),
        ] {
            let resp = app.send(method.clone(), path, Some(&app.admin_key), &[]).await;
            resp.assert_error(405, "method_not_allowed");
            assert_eq!(resp.header("allow"), Some(allow), "{method} {path}");
        }
        assert!(app.profile_is_live(&app.profile, "acme").await);
    }

    async fn revoked_key_stops_working_within_the_cache_ttl(app: TestApp) {
        let path = TestApp::zones_path("aws", "us-east-1");
        let ttl = fast_config().key_cache_ttl;
        // The first use fills the cache: the TTL counts from no earlier than this.
        let filled = Instant::now();
        assert_eq!(app.get(&path, Some(&app.member_key)).await.status, 200, "cached as valid");
        app.store.revoke_key(&app.member_key[4..16]).await.unwrap();
        // The change log usually drops it sooner (`replicas.rs` measures that); the TTL is the
        // bound.
        let mut status = 200;
        while status == 200 && filled.elapsed() < Duration::from_secs(3) {
            tokio::time::sleep(Duration::from_millis(20)).await;
            status = app.get(&path, Some(&app.member_key)).await.status;
        }
        let took = filled.elapsed();
        assert_eq!(status, 401, "still accepted {took:?} after the cache was filled");
        assert!(took < ttl + Duration::from_millis(300), "refused only {took:?} after the cache was filled (TTL {ttl:?})");
    }

    async fn catalog_changes_reach_the_running_server(app: TestApp) {
        let mut catalog = test_catalog();
        catalog.providers[0].regions[0].zones = vec!["af-south-1z".into()];
        let region = catalog.providers[0].regions[0].id.to_string();
        app.store.replace_catalog(&catalog).await.unwrap();
        let path = TestApp::zones_path("aws", &region);
        let seen = eventually(Duration::from_secs(3), || async {
            app.get(&path, Some(&app.member_key)).await.json()["data"] == serde_json::json!(["af-south-1z"])
        })
        .await;
        assert!(seen, "new catalog not served within the refresh interval");
    }

    async fn health_readiness_and_document_need_no_key(app: TestApp) {
        let health = app.get("/healthz", None).await;
        assert_eq!((health.status, health.json()["status"].as_str()), (200, Some("ok")));
        let ready = app.get("/readyz", None).await;
        assert_eq!(ready.status, 200);
        let doc = app.get("/openapi.json", None).await;
        assert_eq!(doc.status, 200);
        assert_eq!(doc.header("content-type"), Some("application/json"));
        // The contract crate's document, not the checked-in file: the contract's own test is the
        // one that pins the file.
        assert!(
            doc.body == appzone_contract::openapi::document_json(),
            "GET /openapi.json is byte-identical to the contract's document"
        );
    }
}

async fn audit_count(app: &TestApp, profile: &str) -> i64 {
    sqlx::query_as::<_, (i64,)>(
        "SELECT COUNT(*) FROM profile_audit WHERE profile_id = $1 AND action = 'delete'",
    )
    .bind(profile)
    .fetch_one(app.store.pool())
    .await
    .unwrap()
    .0
}

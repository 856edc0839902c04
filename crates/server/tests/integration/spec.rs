//! The served routes and the OpenAPI document agree, and every operation demands a key.

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use tower::ServiceExt;

use appzone_test_support::{fill_path, TestApp};

/// The contract crate's document (the contract's own test pins `openapi.json` to it).
fn document() -> serde_json::Value {
    appzone_contract::openapi::document()
}

#[test]
fn router_operations_match_openapi_json() {
    let (_, from_routes) = appzone_server::http::api_routes();
    // The routes as registered, completed as the document is (shared responses, HEAD twins).
    let routed = appzone_contract::openapi::finish(from_routes)["paths"].clone();
    let published = document()["paths"].clone();
    assert_eq!(
        routed, published,
        "routes registered by the server differ from the contract's document"
    );
}

/// The zone mapping the coverage test stores, so that its operations name a real one.
const MAPPING: &str = "prod";

/// Fills a path template's parameters with values that would otherwise succeed (real ids of
/// the fixture); a parameter without one fails the test.
fn concrete(template: &str, profile: &str) -> String {
    fill_path(
        template,
        &[
            ("providerId", "aws"),
            ("regionId", "us-east-1"),
            ("profileId", profile),
            ("mappingId", MAPPING),
        ],
    )
}

#[tokio::test]
async fn every_operation_refuses_a_missing_and_a_wrong_key() {
    let app = TestApp::sqlite().await;
    app.store_mapping(MAPPING).await;
    let doc = document();
    let mut covered = 0;
    for (template, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let responses = operation["responses"].as_object().unwrap();
            assert!(
                responses.contains_key("401"),
                "{method} {template} documents 401"
            );
            let method: reqwest::Method = method.to_uppercase().parse().unwrap();
            let path = concrete(template, app.profile.as_str());
            let missing = app.send(method.clone(), &path, None, &[]).await;
            let wrong = app
                .send(
                    method.clone(),
                    &path,
                    Some(appzone_contract::ApiKey::generate().expose_secret()),
                    &[],
                )
                .await;
            if method == reqwest::Method::HEAD {
                // The same answers without their bodies.
                assert_eq!((missing.status, missing.body.as_str()), (401, ""));
                assert_eq!((wrong.status, wrong.body.as_str()), (401, ""));
            } else {
                missing.assert_error(401, "missing_api_key");
                wrong.assert_error(401, "invalid_api_key");
            }
            covered += 1;
        }
    }
    assert_eq!(
        covered, 17,
        "every operation walked (GET and HEAD of the five listings and of the two zone-mapping \
         reads, the profile delete, the zone mapping's PUT and DELETE)"
    );
    assert!(app.profile_is_live(&app.profile, "acme").await);
    let audit = app.store.zone_mapping_audit("acme", MAPPING).await.unwrap();
    assert_eq!(audit.len(), 1, "the mapping is as it was stored");
}

#[tokio::test]
async fn panics_answer_500_internal_error_without_details() {
    let app = TestApp::sqlite().await;
    let routes = Router::new().route(
        "/boom",
        get(|| async {
            if true {
                panic!("secret detail /etc/passwd");
            }
            "unreachable"
        }),
    );
    let router = appzone_server::http::with_middleware(routes, app.service.state.clone());
    let response = router
        .router
        .oneshot(http::Request::get("/boom").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert!(response.headers().contains_key("x-request-id"));
    let body = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(body["error_code"], "internal_error");
    assert!(!body.to_string().contains("passwd"), "{body}");
}

/// The document marks every response header it declares `required`: each answer below carries
/// every header the document declares for its operation and status.
#[tokio::test]
async fn every_documented_response_header_is_sent_with_its_status() {
    use appzone_contract::paths::{DELETE_PROFILE, LIST_ZONES};
    use reqwest::Method;

    let app = TestApp::sqlite().await;
    let doc = document();
    let zones = TestApp::zones_path("aws", "us-east-1");
    let etag = app.etag(&zones).await;
    let profile = TestApp::profile_path(app.profile.as_str());
    let member = Some(app.member_key.as_str());
    let admin = Some(app.admin_key.as_str());
    // (method, documented path, request path, key, request headers, expected status)
    type Case<'a> = (
        Method,
        &'a str,
        String,
        Option<&'a str>,
        &'a [(&'a str, &'a str)],
        u16,
    );
    let missing = TestApp::profile_path("prof_missing");
    let key1 = [("idempotency-key", "spec-key-1")];
    let key2 = [("idempotency-key", "spec-key-2")];
    let cases: [Case; 15] = [
        (Method::GET, LIST_ZONES, zones.clone(), member, &[], 200),
        (Method::HEAD, LIST_ZONES, zones.clone(), member, &[], 200),
        (
            Method::GET,
            LIST_ZONES,
            zones.clone(),
            member,
            &[("if-none-match", etag.as_str())],
            304,
        ),
        (
            Method::GET,
            LIST_ZONES,
            TestApp::zones_path("awz", "us-east-1"),
            member,
            &[],
            400,
        ),
        (Method::GET, LIST_ZONES, zones.clone(), None, &[], 401),
        (
            Method::GET,
            LIST_ZONES,
            TestApp::zones_path("aws", "us-east-9"),
            member,
            &[],
            404,
        ),
        (
            Method::DELETE,
            DELETE_PROFILE,
            profile.clone(),
            member,
            &[],
            403,
        ),
        (
            Method::DELETE,
            DELETE_PROFILE,
            profile.clone(),
            admin,
            &key1,
            204,
        ),
        // The same key again: the first answer, replayed.
        (
            Method::DELETE,
            DELETE_PROFILE,
            profile.clone(),
            admin,
            &key1,
            204,
        ),
        (
            Method::DELETE,
            DELETE_PROFILE,
            profile.clone(),
            admin,
            &[],
            404,
        ),
        (
            Method::DELETE,
            DELETE_PROFILE,
            missing.clone(),
            admin,
            &key2,
            404,
        ),
        (
            Method::DELETE,
            DELETE_PROFILE,
            missing.clone(),
            admin,
            &key2,
            404,
        ),
        // key1 belongs to another profile's deletion.
        (
            Method::DELETE,
            DELETE_PROFILE,
            missing.clone(),
            admin,
            &key1,
            422,
        ),
        (
            Method::DELETE,
            DELETE_PROFILE,
            missing,
            admin,
            &[("idempotency-key", "two words")],
            400,
        ),
        (Method::DELETE, DELETE_PROFILE, profile, None, &[], 401),
    ];
    // Headers sent on some answers of their status only: each must be seen on at least one.
    let mut optional_seen: std::collections::BTreeMap<String, bool> = Default::default();
    for (method, template, path, key, headers, status) in cases {
        let resp = app.send(method.clone(), &path, key, headers).await;
        assert_eq!(resp.status, status, "{method} {path}: {}", resp.body);
        let declared = doc["paths"][template][method.as_str().to_lowercase()]["responses"]
            [status.to_string()]["headers"]
            .as_object()
            .unwrap_or_else(|| panic!("{method} {template} documents no headers for {status}"));
        for (name, header) in declared {
            if header["required"] == true {
                assert!(
                    resp.header(name).is_some(),
                    "{method} {path} answered {status} without {name}"
                );
            } else {
                *optional_seen.entry(name.clone()).or_default() |= resp.header(name).is_some();
            }
        }
    }
    assert_eq!(
        optional_seen,
        [
            ("Idempotent-Replayed".to_owned(), true),
            ("RateLimit".to_owned(), true),
            ("RateLimit-Policy".to_owned(), true),
        ]
        .into(),
        "the optional headers the document declares, and whether an answer carried each"
    );
}

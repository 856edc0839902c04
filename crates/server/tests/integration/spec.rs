//! The served routes and the OpenAPI document agree, and every operation demands a key.

use axum::body::Body;
use axum::routing::get;
use axum::Router;
use tower::ServiceExt;

use crate::support::TestApp;

fn document() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../openapi.json"))
            .unwrap(),
    )
    .unwrap()
}

#[test]
fn router_operations_match_openapi_json() {
    let (_, from_routes) = appzone_server::http::api_routes();
    // The routes as registered, completed as the document is (shared responses, HEAD twins).
    let routed = appzone_contract::openapi::finish(from_routes)["paths"].clone();
    let published = document()["paths"].clone();
    assert_eq!(
        routed, published,
        "routes registered by the server differ from openapi.json"
    );
}

/// Fills a path template's parameters with values that would otherwise succeed.
fn concrete(template: &str, profile: &str) -> String {
    template
        .replace("{providerId}", "aws")
        .replace("{regionId}", "us-east-1")
        .replace("{profileId}", profile)
}

#[tokio::test]
async fn every_operation_refuses_a_missing_and_a_wrong_key() {
    let app = TestApp::sqlite().await;
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
        covered, 3,
        "every operation walked (GET and HEAD of the listing, the delete)"
    );
    assert!(app
        .store
        .live_profile_exists(&app.profile, "acme")
        .await
        .unwrap());
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

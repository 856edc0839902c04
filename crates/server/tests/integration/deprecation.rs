//! Deprecation on the wire: a deprecated operation keeps answering as before, with
//! `Deprecation` (RFC 9745) and `Sunset` (RFC 8594) on every answer, and the served document
//! marks it. No operation of this version is deprecated, so these tests deprecate one.

use appzone_contract::Deprecation;
use appzone_server::http::HttpConfig;
use appzone_server::ServiceConfig;
use appzone_test_support::{fast_config, TestApp};

const PROVIDERS: &str = "/api/v1/providers";
const ZONES: &str = "/api/v1/providers/aws/regions/us-east-1/zones";

/// A server on which `listProviders` is deprecated since 2027-01-01, with `sunset`.
async fn deprecating_list_providers(sunset: Option<u64>) -> TestApp {
    TestApp::sqlite_with(ServiceConfig {
        http: HttpConfig {
            deprecations: vec![Deprecation {
                operation_id: "listProviders",
                since: 1_798_761_600,
                sunset,
            }],
            ..HttpConfig::default()
        },
        ..fast_config()
    })
    .await
}

#[tokio::test]
async fn a_deprecated_operation_answers_as_before_with_deprecation_and_sunset_headers() {
    let app = deprecating_list_providers(Some(1_814_400_000)).await;
    let listed = app.get(PROVIDERS, Some(&app.admin_key)).await;
    assert_eq!(listed.status, 200);
    assert!(listed.json()["data"].as_array().unwrap().len() >= 3);
    let refused = app.get(PROVIDERS, None).await;
    refused.assert_error(401, "missing_api_key");
    let head = app
        .send(reqwest::Method::HEAD, PROVIDERS, Some(&app.admin_key), &[])
        .await;
    assert_eq!(head.status, 200);
    for answer in [&listed, &refused, &head] {
        assert_eq!(answer.header("deprecation"), Some("@1798761600"));
        assert_eq!(
            answer.header("sunset"),
            Some("Thu, 01 Jul 2027 00:00:00 GMT")
        );
    }
    // Only that operation's answers.
    let zones = app.get(ZONES, Some(&app.admin_key)).await;
    assert_eq!(zones.status, 200);
    assert_eq!(
        (zones.header("deprecation"), zones.header("sunset")),
        (None, None)
    );
    let wrong_method = app.delete(PROVIDERS, Some(&app.admin_key)).await;
    wrong_method.assert_error(405, "method_not_allowed");
    assert_eq!(wrong_method.header("deprecation"), None);
}

#[tokio::test]
async fn a_deprecation_without_a_date_of_removal_sends_no_sunset() {
    let app = deprecating_list_providers(None).await;
    let listed = app.get(PROVIDERS, Some(&app.admin_key)).await;
    assert_eq!(listed.status, 200);
    assert_eq!(listed.header("deprecation"), Some("@1798761600"));
    assert_eq!(listed.header("sunset"), None);
}

#[tokio::test]
async fn the_served_document_marks_the_deprecated_operation_and_nothing_else() {
    let app = deprecating_list_providers(Some(1_814_400_000)).await;
    let doc = app.get("/openapi.json", None).await.json();
    let providers = &doc["paths"][PROVIDERS];
    assert_eq!(providers["get"]["deprecated"], true);
    assert_eq!(providers["head"]["deprecated"], true);
    let declared = &providers["get"]["responses"]["200"]["headers"];
    assert_eq!(declared["Deprecation"]["example"], "@1798761600");
    assert_eq!(
        declared["Sunset"]["example"],
        "Thu, 01 Jul 2027 00:00:00 GMT"
    );
    assert!(doc["paths"][appzone_contract::paths::LIST_ZONES]["get"]
        .get("deprecated")
        .is_none());

    // The default server deprecates nothing, in its answers or its document.
    let current = TestApp::sqlite().await;
    let listed = current.get(PROVIDERS, Some(&current.admin_key)).await;
    assert_eq!(listed.header("deprecation"), None);
    let doc = current.get("/openapi.json", None).await;
    assert!(!doc.body.contains("\"deprecated\""));
}

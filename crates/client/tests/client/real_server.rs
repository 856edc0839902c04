//! End to end: the client against the real `appzone-server`, started
//! in-process on an ephemeral port of 127.0.0.1 over a fresh SQLite database, one per test.
//!
//! Every status of every operation must arrive as the right `Result`/`Error` variant. Nothing
//! here works around the server: when it breaks the contract, these tests fail.

use std::future::Future;
use std::time::Duration;

use appzone_client::{exit_code, Client, Error, ErrorCode};
use appzone_contract::headers::{is_valid_request_id, REQUEST_ID};
use appzone_contract::ApiKey;
use appzone_test_support::TestApp;
use http::StatusCode;

use crate::support::{
    assert_invalid_id, assert_invalid_setting, client, closed_port, fast_retries,
};

mod listings;
mod profiles;

/// The longest any test here may take, server start included.
const TEST_BOUND: Duration = Duration::from_secs(60);

/// The zones of aws/us-east-1 in the built-in catalog, in catalog order.
const US_EAST_1: [&str; 6] = [
    "us-east-1a",
    "us-east-1b",
    "us-east-1c",
    "us-east-1d",
    "us-east-1e",
    "us-east-1f",
];

/// A well-formed profile id that was never created.
const NEVER_CREATED: &str = "prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2";

/// Runs a test body, failing it when it takes longer than [`TEST_BOUND`].
///
/// Each test starts its own server: `TestApp::sqlite()`, the server's own test fixture (see
/// `appzone-test-support`): organization `acme` (an admin key, a member key, a revoked admin
/// key, two profiles) and organization `globex` (an admin key, one profile); the built-in
/// catalog plus provider `acme-cloud`, whose region `empty-1` has no zones.
async fn bounded(test: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_BOUND, test)
        .await
        .expect("the test did not finish within its time bound");
}

/// Asserts `error` is the API's answer with `status` and `code`, made in one attempt, and
/// carrying a request id. Returns the message.
#[track_caller]
fn assert_api(error: &Error, status: u16, code: ErrorCode) -> String {
    let Error::Api(api) = error else {
        panic!("expected Error::Api, got {error:?}");
    };
    assert_eq!(api.status.as_u16(), status, "{error}");
    assert_eq!(api.code.as_ref(), Some(&code), "{error}");
    assert_eq!(error.status(), Some(api.status));
    assert_eq!(error.error_code(), Some(&code));
    assert_eq!(api.attempts, 1, "no 4xx is retried: {error}");
    assert!(!error.is_retryable(), "{error}");
    assert!(is_ulid(&api.request_id), "{error}");
    assert!(!api.message.is_empty(), "{error}");
    api.message.clone()
}

/// Whether `id` has the shape of the server's own request ids (and the client's): a ULID,
/// 26 characters of Crockford base32.
fn is_ulid(id: &str) -> bool {
    id.len() == 26
        && is_valid_request_id(id)
        && id
            .bytes()
            .all(|b| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&b))
}

// ---- list zones -------------------------------------------------------------------------------

#[tokio::test]
async fn list_zones_200_returns_the_zone_list_in_catalog_order_with_the_request_id() {
    bounded(async {
        let server = TestApp::sqlite().await;
        for key in [&server.admin_key, &server.member_key] {
            let zones = client(&server.base, key)
                .list_zones("aws", "us-east-1")
                .await
                .unwrap();
            assert_eq!(zones.data, US_EAST_1);
            assert_eq!(zones.status, "success");
            assert_eq!(zones.message, "6 zones in aws/us-east-1");
            assert!(is_ulid(&zones.id), "{zones:?}");
        }
        // A new request id per call.
        let client = client(&server.base, &server.admin_key);
        let a = client.list_zones("aws", "us-east-1").await.unwrap();
        let b = client.list_zones("aws", "us-east-1").await.unwrap();
        assert_ne!(a.id, b.id);
        // Other providers of the built-in catalog, by contract type too.
        let gcp = client
            .list_zones(
                "gcp".parse::<appzone_client::ProviderId>().unwrap(),
                "us-central1",
            )
            .await
            .unwrap();
        assert!(!gcp.data.is_empty(), "{gcp:?}");
    })
    .await;
}

#[tokio::test]
async fn list_zones_200_of_a_region_without_zones_is_an_empty_list() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let zones = client(&server.base, &server.admin_key)
            .list_zones("acme-cloud", "empty-1")
            .await
            .unwrap();
        assert!(zones.data.is_empty(), "{zones:?}");
        assert_eq!(zones.status, "success");
        assert!(is_ulid(&zones.id), "{zones:?}");
    })
    .await;
}

#[tokio::test]
async fn list_zones_of_an_unknown_region_is_api_404_region_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.member_key);
        // Unknown anywhere, and known only for another provider.
        for (provider, region) in [("aws", "mars-1"), ("gcp", "us-east-1")] {
            let error = client.list_zones(provider, region).await.unwrap_err();
            assert_api(&error, 404, ErrorCode::RegionNotFound);
            assert!(error.is_not_found(), "{error}");
            assert!(!error.is_forbidden() && !error.is_unauthorized(), "{error}");
        }
    })
    .await;
}

#[tokio::test]
async fn list_zones_of_an_unknown_provider_is_api_400_invalid_provider_without_retry() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let error = client(&server.base, &server.admin_key)
            .list_zones("nope", "us-east-1")
            .await
            .unwrap_err();
        // assert_api checks attempts == 1.
        assert_api(&error, 400, ErrorCode::InvalidProvider);
        assert!(!error.is_not_found(), "{error}");
    })
    .await;
}

#[tokio::test]
async fn list_zones_with_a_malformed_provider_or_region_is_invalid_argument_before_sending() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.admin_key);
        // Sent, these would come back as 400 invalid_provider / invalid_region (Error::Api).
        for (provider, region) in [
            ("AWS", "us-east-1"),
            ("", "us-east-1"),
            ("aws/x", "us-east-1"),
            ("aws", "US-EAST-1"),
            ("aws", "us_east_1"),
            ("aws", ""),
        ] {
            let error = client.list_zones(provider, region).await.unwrap_err();
            let code = if provider.parse::<appzone_client::ProviderId>().is_ok() {
                ErrorCode::InvalidRegion
            } else {
                ErrorCode::InvalidProvider
            };
            assert_invalid_id(&error, code, &format!("{provider:?}/{region:?}"));
        }
        // Also when nothing listens: no connection is even tried.
        let offline = Client::new(format!("http://{}", closed_port().await), &server.admin_key)
            .unwrap()
            .list_zones("AWS", "us-east-1")
            .await
            .unwrap_err();
        assert_invalid_id(&offline, ErrorCode::InvalidProvider, "offline");
    })
    .await;
}

/// The same mistake has the same meaning whether the client finds it before sending or the
/// server answers it: for each malformed id, the client's local error and the real server's
/// answer to the same request (sent raw, past the client's checks) agree on the status, the
/// error code and `is_not_found`; and a well-formed id the server refuses agrees with them too.
#[tokio::test]
async fn a_mistake_found_locally_has_the_code_and_status_of_the_servers_answer_to_it() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.admin_key);
        let raw = reqwest::Client::new();
        // (what, the client's error, the method and path the same call sends)
        let cases: Vec<(&str, Error, http::Method, String)> = vec![
            (
                "malformed provider",
                client.list_zones("AWS", "us-east-1").await.unwrap_err(),
                http::Method::GET,
                "/api/v1/providers/AWS/regions/us-east-1/zones".into(),
            ),
            (
                "malformed region",
                client.list_zones("aws", "us_east_1").await.unwrap_err(),
                http::Method::GET,
                "/api/v1/providers/aws/regions/us_east_1/zones".into(),
            ),
            (
                "malformed provider of a region listing",
                client.list_regions("a b").await.unwrap_err(),
                http::Method::GET,
                "/api/v1/providers/a%20b/regions".into(),
            ),
            (
                "malformed profile id",
                client.delete_profile("bad id!").await.unwrap_err(),
                http::Method::DELETE,
                "/api/v1/applications/profiles/bad%20id!".into(),
            ),
            (
                "profile id with a leading underscore",
                client.delete_profile("_prof").await.unwrap_err(),
                http::Method::DELETE,
                "/api/v1/applications/profiles/_prof".into(),
            ),
        ];
        for (what, local, method, path) in cases {
            assert_eq!(
                local.request_id(),
                None,
                "{what}: found locally, nothing sent"
            );
            let answer = raw
                .request(method, format!("{}{path}", server.base))
                .header("X-API-KEY", &server.admin_key)
                .send()
                .await
                .unwrap();
            let status = answer.status();
            let body: serde_json::Value = answer.json().await.unwrap();
            assert_eq!(local.status(), Some(status), "{what}: {local}");
            assert_eq!(
                local.error_code().map(ErrorCode::as_str),
                body["error_code"].as_str(),
                "{what}: {local}"
            );
            assert_eq!(
                local.is_not_found(),
                status == StatusCode::NOT_FOUND,
                "{what}"
            );
            assert!(!local.is_retryable(), "{what}");
        }
        // Well-formed ids the server refuses: the client's Error::Api agrees with the local
        // errors for the same class of mistake.
        let unknown_provider = client.list_zones("awz", "us-east-1").await.unwrap_err();
        let malformed_provider = client.list_zones("AWS", "us-east-1").await.unwrap_err();
        let never_created = client.delete_profile(NEVER_CREATED).await.unwrap_err();
        let malformed_profile = client.delete_profile("bad id!").await.unwrap_err();
        for (server_found, local) in [
            (&unknown_provider, &malformed_provider),
            (&never_created, &malformed_profile),
        ] {
            assert!(matches!(server_found, Error::Api(_)), "{server_found:?}");
            assert_eq!(server_found.error_code(), local.error_code());
            assert_eq!(server_found.status(), local.status());
            assert_eq!(server_found.is_not_found(), local.is_not_found());
        }
        assert_eq!(
            exit_code::for_error(&unknown_provider),
            exit_code::for_error(&malformed_provider)
        );
    })
    .await;
}

// ---- authentication -----------------------------------------------------------------------------

#[tokio::test]
async fn a_missing_or_blank_api_key_cannot_build_a_client() {
    bounded(async {
        let server = TestApp::sqlite().await;
        // The server would answer 401 missing_api_key; the client refuses to send such a call.
        for blank in ["", " ", "\t \t"] {
            let error = Client::new(&server.base, blank).unwrap_err();
            assert_invalid_setting(&error, "API key", &format!("{blank:?}"));
        }
        // A key that cannot go in a header is refused locally too.
        let error = Client::new(&server.base, "apz_x\ny").unwrap_err();
        assert_invalid_setting(&error, "API key", "a line break");
    })
    .await;
}

#[tokio::test]
async fn a_wrong_api_key_is_api_401_invalid_api_key_for_both_operations() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let unknown = ApiKey::generate();
        let wrong_keys = [
            Client::builder(&server.base, &unknown),
            // Malformed: the admin key behind a scheme, and a string of another format.
            Client::builder(&server.base, format!("Bearer {}", server.admin_key)),
            Client::builder(&server.base, "not-an-appzone-key"),
        ];
        for builder in wrong_keys {
            let client = builder.retry_policy(fast_retries()).build().unwrap();
            let error = client.list_zones("aws", "us-east-1").await.unwrap_err();
            assert_api(&error, 401, ErrorCode::InvalidApiKey);
            assert!(error.is_unauthorized(), "{error}");
            assert!(!error.is_forbidden() && !error.is_not_found(), "{error}");
            // Authentication comes first: a live profile, an absent one, another org's.
            for id in [&server.profile, &server.other_profile] {
                let error = client.delete_profile(id).await.unwrap_err();
                assert_api(&error, 401, ErrorCode::InvalidApiKey);
                assert!(error.is_unauthorized(), "{error}");
            }
            let error = client.delete_profile(NEVER_CREATED).await.unwrap_err();
            assert_api(&error, 401, ErrorCode::InvalidApiKey);
        }
        // The 401s deleted nothing.
        let admin = client(&server.base, &server.admin_key);
        admin.delete_profile(&server.profile).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_revoked_api_key_is_api_401_invalid_api_key() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.revoked_key);
        let error = client.list_zones("aws", "us-east-1").await.unwrap_err();
        assert_api(&error, 401, ErrorCode::InvalidApiKey);
        assert!(error.is_unauthorized(), "{error}");
        let error = client.delete_profile(&server.profile).await.unwrap_err();
        assert_api(&error, 401, ErrorCode::InvalidApiKey);
    })
    .await;
}

// ---- request ids --------------------------------------------------------------------------------

#[tokio::test]
async fn errors_carry_the_request_id_in_the_servers_format() {
    bounded(async {
        let server = TestApp::sqlite().await;
        // The server's own ids, for a request that sends none: a ULID.
        let raw = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap()
            .get(format!(
                "{}/api/v1/providers/nope/regions/x/zones",
                server.base
            ))
            .send()
            .await
            .unwrap();
        let servers_id = raw.headers()[REQUEST_ID.as_str()].to_str().unwrap();
        assert!(is_ulid(servers_id), "{servers_id}");

        let admin = client(&server.base, &server.admin_key);
        let member = client(&server.base, &server.member_key);
        let stranger = client(&server.base, ApiKey::generate());
        let errors = [
            admin.list_zones("nope", "us-east-1").await.unwrap_err(),
            admin.list_zones("aws", "mars-1").await.unwrap_err(),
            stranger.list_zones("aws", "us-east-1").await.unwrap_err(),
            stranger.delete_profile(&server.profile).await.unwrap_err(),
            member.delete_profile(&server.profile).await.unwrap_err(),
            admin.delete_profile(NEVER_CREATED).await.unwrap_err(),
        ];
        let mut seen = Vec::new();
        for error in &errors {
            let id = error
                .request_id()
                .unwrap_or_else(|| panic!("no request id: {error:?}"));
            assert!(is_ulid(id), "{id}: {error}");
            assert_eq!(Some(id), error.as_api().map(|a| a.request_id.as_str()));
            assert!(error.to_string().contains(id), "{error}");
            assert!(!seen.contains(&id), "one id per call: {id}");
            seen.push(id);
        }
    })
    .await;
}

//! Requests, answers and error classification against the scripted server.

use std::time::Duration;

use appzone_client::{Client, Error, ErrorCode, ProfileId, ProviderId, RegionId, RetryPolicy};
use appzone_contract::headers::{is_valid_request_id, API_KEY, REQUEST_ID};
use appzone_contract::{paths, ApiKey};
use http::{Method, StatusCode};

use crate::support::{assert_invalid_id, assert_invalid_setting, client, key, Reply, Server};

mod listings;

#[tokio::test]
async fn list_zones_sends_the_contract_request_and_returns_the_list() {
    let server = Server::start(vec![Reply::zones(&["us-east-1a", "us-east-1b"])]).await;
    let key = key();
    let zones = client(&server.url(), &key)
        .list_zones("aws", "us-east-1")
        .await
        .unwrap();

    assert_eq!(zones.data, ["us-east-1a", "us-east-1b"]);
    assert_eq!(zones.id, "srv-id");
    assert_eq!(zones.message, "2 zones in aws/us-east-1");
    assert_eq!(zones.status, "success");

    let path = paths::list_zones(&"aws".parse().unwrap(), &"us-east-1".parse().unwrap());
    assert_one_contract_get(&server, &path, &key);
    assert!(appzone_client::DEFAULT_USER_AGENT.starts_with("appzone-client/"));
}

/// Asserts `server` received exactly one request: the contract's `GET path`, with `key`, a
/// valid request id, the client's user agent, and `Accept: application/json`.
#[track_caller]
fn assert_one_contract_get(server: &Server, path: &str, key: &ApiKey) {
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    let request = &seen[0];
    assert_eq!(request.method, Method::GET);
    assert_eq!(request.path, path);
    assert_eq!(request.header(API_KEY.as_str()), Some(key.expose_secret()));
    let request_id = request.header(REQUEST_ID.as_str()).unwrap();
    assert!(is_valid_request_id(request_id), "{request_id}");
    assert_eq!(
        request.header("user-agent"),
        Some(appzone_client::DEFAULT_USER_AGENT)
    );
    assert_eq!(request.header("accept"), Some("application/json"));
}

#[tokio::test]
async fn arguments_may_be_contract_ids_or_strings() {
    let server = Server::start(vec![Reply::zones(&["z"])]).await;
    let client = client(&server.url(), key());
    let provider: ProviderId = "gcp".parse().unwrap();
    let region: RegionId = "europe-west1".parse().unwrap();
    client.list_zones(&provider, &region).await.unwrap();
    client
        .list_zones(provider, String::from("europe-west1"))
        .await
        .unwrap();
    client
        .list_zones(&String::from("gcp"), region)
        .await
        .unwrap();
    let profile: ProfileId = "prof_1".parse().unwrap();
    client.delete_profile(&profile).await.unwrap();
    client.delete_profile(profile).await.unwrap();
    client.delete_profile(String::from("prof_2")).await.unwrap();
    let paths: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        paths,
        [
            "/api/v1/providers/gcp/regions/europe-west1/zones",
            "/api/v1/providers/gcp/regions/europe-west1/zones",
            "/api/v1/providers/gcp/regions/europe-west1/zones",
            "/api/v1/applications/profiles/prof_1",
            "/api/v1/applications/profiles/prof_1",
            "/api/v1/applications/profiles/prof_2",
        ]
    );
}

#[tokio::test]
async fn a_base_url_with_a_path_prefix_is_kept() {
    let server = Server::start(vec![Reply::zones(&[])]).await;
    let client = client(&format!("{}/appzone/", server.url()), key());
    assert_eq!(client.base_url(), format!("{}/appzone", server.url()));
    let zones = client.list_zones("aws", "us-east-1").await.unwrap();
    assert!(zones.data.is_empty());
    assert_eq!(
        server.seen()[0].path,
        "/appzone/api/v1/providers/aws/regions/us-east-1/zones"
    );
}

/// Asserts a listing's `id`, `message` and `status` decoded empty: the answer had none.
#[track_caller]
fn assert_absent(id: &str, message: &str, status: &str) {
    assert_eq!((id, message, status), ("", "", ""));
}

#[tokio::test]
async fn a_zone_list_missing_id_message_and_status_still_decodes() {
    let server = Server::start(vec![
        Reply::json(200, serde_json::json!({"data": ["a", "b"]})),
        Reply::json(
            200,
            serde_json::json!({"data": [], "extra": {"ignored": true}}),
        ),
    ])
    .await;
    let client = client(&server.url(), key());
    let zones = client.list_zones("aws", "us-east-1").await.unwrap();
    assert_eq!(zones.data, ["a", "b"]);
    assert_absent(&zones.id, &zones.message, &zones.status);
    let zones = client.list_zones("aws", "us-east-1").await.unwrap();
    assert!(zones.data.is_empty());
}

#[tokio::test]
async fn invalid_provider_or_region_ids_fail_before_any_request() {
    let server = Server::start(vec![Reply::zones(&["z"])]).await;
    let client = client(&server.url(), key());
    for (provider, region) in [
        ("AWS", "us-east-1"),
        ("", "us-east-1"),
        ("aws", "us_east_1"),
        ("aws", "a/b"),
        ("aws", ""),
    ] {
        let error = client.list_zones(provider, region).await.unwrap_err();
        // The provider is checked first, as by the server.
        let code = if provider.parse::<appzone_client::ProviderId>().is_ok() {
            ErrorCode::InvalidRegion
        } else {
            ErrorCode::InvalidProvider
        };
        assert_invalid_id(&error, code, &format!("{provider}/{region}"));
    }
    let long = "a".repeat(64);
    assert!(client.list_zones(long.as_str(), "r").await.is_err());
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn delete_returns_unit_on_204_and_on_any_2xx() {
    let server = Server::start(vec![
        Reply::status(204),
        Reply::json(200, serde_json::json!({"deleted": true})),
    ])
    .await;
    let client = client(&server.url(), key());
    client
        .delete_profile("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2")
        .await
        .unwrap();
    client
        .delete_profile("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2")
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].method, Method::DELETE);
    assert_eq!(
        seen[0].path,
        "/api/v1/applications/profiles/prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2"
    );
}

#[tokio::test]
async fn a_malformed_profile_id_is_not_found_locally_without_a_request() {
    let server = Server::start(vec![Reply::status(204)]).await;
    let client = client(&server.url(), key());
    let long = "p".repeat(129);
    for id in [
        "",
        "../etc",
        "has space",
        "a/b",
        "_leading",
        "prof_é",
        long.as_str(),
    ] {
        let error = client.delete_profile(id).await.unwrap_err();
        assert!(
            matches!(error, Error::ProfileNotFound { .. }),
            "{id:?}: {error:?}"
        );
        assert!(error.is_not_found(), "{id:?}");
        assert_eq!(error.status(), Some(StatusCode::NOT_FOUND));
        assert_eq!(error.error_code(), Some(&ErrorCode::ProfileNotFound));
        assert_eq!(error.request_id(), None);
        assert!(!error.is_retryable() && !error.is_forbidden() && !error.is_unauthorized());
        assert!(
            error
                .to_string()
                .starts_with("profile not found: profile id "),
            "{error}"
        );
        assert!(std::error::Error::source(&error).is_some());
    }
    // The longest valid id is sent.
    client.delete_profile("p".repeat(128)).await.unwrap();
    assert_eq!(server.attempts(), 1);
}

/// Every status the contract gives the two operations, classified.
#[tokio::test]
async fn api_errors_carry_status_code_message_and_request_id() {
    struct Case {
        status: u16,
        code: &'static str,
        not_found: bool,
        forbidden: bool,
        unauthorized: bool,
        retryable: bool,
    }
    let case = |status, code| Case {
        status,
        code,
        not_found: status == 404,
        forbidden: status == 403,
        unauthorized: status == 401,
        retryable: [429, 503].contains(&status),
    };
    let cases = [
        case(400, "invalid_provider"),
        case(400, "invalid_region"),
        case(401, "missing_api_key"),
        case(401, "invalid_api_key"),
        case(403, "forbidden"),
        case(404, "region_not_found"),
        case(404, "profile_not_found"),
        case(404, "not_found"),
        case(405, "method_not_allowed"),
        case(413, "payload_too_large"),
        case(429, "rate_limited"),
        case(500, "internal_error"),
        case(503, "unavailable"),
    ];
    for c in cases {
        let server =
            Server::start(vec![Reply::error(c.status, c.code, "scripted message")
                .header("x-request-id", "req-123")])
            .await;
        // One attempt, so retryable statuses answer at once.
        let client = Client::builder(server.url(), key())
            .retry_policy(RetryPolicy::none())
            .build()
            .unwrap();
        for error in [
            client.list_zones("aws", "us-east-1").await.unwrap_err(),
            client.delete_profile("prof_1").await.unwrap_err(),
        ] {
            let what = format!("{} {}: {error:?}", c.status, c.code);
            let api = error.as_api().expect(&what);
            assert_eq!(api.status.as_u16(), c.status, "{what}");
            assert_eq!(api.code, Some(ErrorCode::from_wire(c.code)), "{what}");
            assert!(!matches!(api.code, Some(ErrorCode::Other(_))), "{what}");
            assert_eq!(api.message, "scripted message");
            assert_eq!(api.request_id, "req-123");
            assert_eq!(api.attempts, 1);
            assert_eq!(error.status().map(|s| s.as_u16()), Some(c.status));
            assert_eq!(error.error_code().map(ErrorCode::as_str), Some(c.code));
            assert_eq!(error.request_id(), Some("req-123"));
            assert_eq!(error.is_not_found(), c.not_found, "{what}");
            assert_eq!(error.is_forbidden(), c.forbidden, "{what}");
            assert_eq!(error.is_unauthorized(), c.unauthorized, "{what}");
            assert_eq!(error.is_retryable(), c.retryable, "{what}");
            assert!(!error.is_timeout() && !error.is_connect());
            assert_eq!(
                error.to_string(),
                format!(
                    "appzone API error {} {}: scripted message (request id req-123)",
                    c.status, c.code
                )
            );
        }
    }
}

#[tokio::test]
async fn an_unknown_error_code_arrives_as_other() {
    let server = Server::start(vec![Reply::error(
        418,
        "teapot_overflow",
        "short and stout",
    )])
    .await;
    let error = client(&server.url(), key())
        .delete_profile("prof_1")
        .await
        .unwrap_err();
    assert_eq!(
        error.error_code(),
        Some(&ErrorCode::Other("teapot_overflow".into()))
    );
    assert_eq!(error.status(), Some(StatusCode::IM_A_TEAPOT));
    assert!(!error.is_not_found() && !error.is_retryable());
    assert!(error
        .to_string()
        .starts_with("appzone API error 418 teapot_overflow: short and stout"));
}

#[tokio::test]
async fn error_answers_without_the_contract_body_keep_the_status_and_quote_the_body() {
    let html = "<html><body><h1>502 Bad Gateway</h1>\n<hr>nginx</body></html>";
    let server = Server::start(vec![
        Reply::text(404, "text/html", html),
        Reply::status(403),
        Reply::json(500, serde_json::json!({"detail": "boom"})),
        Reply::text(500, "application/json", "{\"error\": \"cut"),
        Reply::text(400, "text/plain", &"x".repeat(10_000)),
    ])
    .await;
    let client = Client::builder(server.url(), key())
        .retry_policy(RetryPolicy::none())
        .build()
        .unwrap();

    let error = client.delete_profile("prof_1").await.unwrap_err();
    assert!(error.is_not_found());
    assert_eq!(error.error_code(), None);
    let api = error.as_api().unwrap();
    assert_eq!(api.code, None);
    assert!(
        api.message.contains("<h1>502 Bad Gateway</h1> <hr>nginx"),
        "{}",
        api.message
    );
    assert!(!error.to_string().contains('\n'));
    assert!(error
        .to_string()
        .starts_with("appzone API error 404 Not Found: not an appzone error body: \"<html>"));

    // The seed allows a 403 without a body.
    let error = client.delete_profile("prof_1").await.unwrap_err();
    assert!(error.is_forbidden());
    assert_eq!(error.error_code(), None);
    assert!(
        error.to_string().starts_with(
            "appzone API error 403 Forbidden: the answer has no error body (request id "
        ),
        "{error}"
    );

    for expected in [r#"{\"detail\":\"boom\"}"#, r#"{\"error\": \"cut"#] {
        let error = client.delete_profile("prof_1").await.unwrap_err();
        assert_eq!(error.status(), Some(StatusCode::INTERNAL_SERVER_ERROR));
        assert_eq!(error.error_code(), None);
        assert!(
            error.as_api().unwrap().message.contains(expected),
            "{error}"
        );
    }

    let error = client.delete_profile("prof_1").await.unwrap_err();
    let message = &error.as_api().unwrap().message;
    assert!(message.len() < 300 && message.ends_with("…\""), "{message}");
    assert_eq!(server.attempts(), 5);
}

/// Four successful answers that are no listing: an HTML page, an object whose list is named
/// `field` instead of `data`, a list of numbers, and no body; and their excerpts.
fn not_listings(field: &str) -> (Vec<Reply>, [String; 4]) {
    let misnamed = serde_json::json!({ field: ["a"] });
    let excerpts = [
        "<html>login page</html>".to_owned(),
        misnamed.to_string(),
        "{\"data\":[1,2]}".to_owned(),
        String::new(),
    ];
    let replies = vec![
        Reply::text(200, "text/html", "<html>login page</html>"),
        Reply::json(200, misnamed),
        Reply::json(200, serde_json::json!({"data": [1, 2]})),
        Reply::status(204),
    ];
    (replies, excerpts)
}

/// Asserts `error` is the decode error of a successful answer to a GET, its reason starting
/// with `reason`, not retryable; returns its body excerpt.
#[track_caller]
fn decode_excerpt(error: &Error, reason: &str) -> String {
    let Error::Decode(decode) = error else {
        panic!("expected a decode error, got {error:?}");
    };
    assert!(decode.status.is_success());
    assert!(decode.reason.starts_with(reason), "{}", decode.reason);
    assert!(is_valid_request_id(&decode.request_id));
    assert!(!error.is_retryable() && !error.is_not_found());
    assert!(error
        .to_string()
        .starts_with("appzone response to GET http://127.0.0.1:"));
    decode.body_excerpt.clone()
}

#[tokio::test]
async fn an_undecodable_zone_list_is_a_decode_error_with_status_and_excerpt() {
    let (replies, expected) = not_listings("zones");
    let server = Server::start(replies).await;
    let client = client(&server.url(), key());
    let mut excerpts = Vec::new();
    for _ in 0..4 {
        let error = client.list_zones("aws", "us-east-1").await.unwrap_err();
        excerpts.push(decode_excerpt(&error, "not a zone list: "));
    }
    assert_eq!(excerpts, expected);
    assert_eq!(server.attempts(), 4, "decode errors are not retried");
}

#[tokio::test]
async fn the_request_id_is_the_servers_or_else_the_one_sent() {
    let server = Server::start(vec![
        Reply::error(404, "profile_not_found", "gone").header("x-request-id", "from-server"),
        Reply::error(404, "profile_not_found", "gone").without_request_id(),
        Reply::error(404, "profile_not_found", "gone").header("x-request-id", "not valid!"),
    ])
    .await;
    let client = client(&server.url(), key());
    let first = client.delete_profile("prof_1").await.unwrap_err();
    assert_eq!(first.request_id(), Some("from-server"));
    for _ in 0..2 {
        let error = client.delete_profile("prof_1").await.unwrap_err();
        let sent = server
            .seen()
            .last()
            .unwrap()
            .header(REQUEST_ID.as_str())
            .unwrap()
            .to_owned();
        assert_eq!(error.request_id(), Some(sent.as_str()));
    }
}

#[tokio::test]
async fn redirects_are_not_followed_so_the_key_stays_home() {
    let elsewhere = Server::start(vec![Reply::zones(&["stolen"])]).await;
    let server = Server::start(vec![Reply::status(307).header(
        "location",
        &format!(
            "{}/api/v1/providers/aws/regions/us-east-1/zones",
            elsewhere.url()
        ),
    )])
    .await;
    let error = client(&server.url(), key())
        .list_zones("aws", "us-east-1")
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(StatusCode::TEMPORARY_REDIRECT));
    assert_eq!(elsewhere.attempts(), 0);
}

#[tokio::test]
async fn builder_settings_are_used() {
    let server = Server::start(vec![Reply::zones(&[])]).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let client = Client::builder(server.url(), key())
        .user_agent("inventory-sync/1.4")
        .timeout(Duration::from_secs(7))
        .connect_timeout(Duration::from_secs(1))
        .retry_policy(RetryPolicy::none())
        .http_client(http)
        .build()
        .unwrap();
    assert_eq!(client.timeout(), Duration::from_secs(7));
    assert_eq!(client.retry_policy().max_attempts(), 1);
    client.list_zones("aws", "us-east-1").await.unwrap();
    assert_eq!(
        server.seen()[0].header("user-agent"),
        Some("inventory-sync/1.4")
    );
}

#[tokio::test]
async fn bad_settings_are_invalid_arguments() {
    let key = key();
    for url in [
        "",
        "localhost:8080",
        "ftp://127.0.0.1",
        "http://user:pw@127.0.0.1",
        "http://h/?q=1",
    ] {
        let error = Client::new(url, &key).unwrap_err();
        assert_invalid_setting(&error, "base URL", url);
    }
    for bad_key in ["", "   ", "apz_line\nbreak", "apz_\u{7f}"] {
        let error = Client::new("http://127.0.0.1:1", bad_key).unwrap_err();
        assert_invalid_setting(&error, "API key", &format!("{bad_key:?}"));
        if !bad_key.trim().is_empty() {
            assert!(
                !error.to_string().contains(bad_key) && !format!("{error:?}").contains(bad_key)
            );
        }
    }
    let error = Client::builder("http://127.0.0.1:1", &key)
        .user_agent("bad\nagent")
        .build()
        .unwrap_err();
    assert!(matches!(
        error,
        Error::InvalidArgument {
            argument: "user agent",
            ..
        }
    ));
    // Keys of other implementations need not have the contract's format.
    Client::new("http://127.0.0.1:1", "any-opaque-token").unwrap();
}

#[tokio::test]
async fn an_oversized_zone_list_is_a_decode_error() {
    let huge = format!("{{\"data\":[\"{}\"]}}", "z".repeat(4 * 1024 * 1024));
    let server = Server::start(vec![Reply::text(200, "application/json", &huge)]).await;
    let error = client(&server.url(), key())
        .list_zones("aws", "us-east-1")
        .await
        .unwrap_err();
    let Error::Decode(decode) = &error else {
        panic!("expected a decode error, got {error:?}");
    };
    assert!(
        decode.reason.contains("longer than 4194304 bytes"),
        "{}",
        decode.reason
    );
    assert!(decode.body_excerpt.starts_with("{\"data\":[\"zzz") && decode.body_excerpt.len() < 300);
}

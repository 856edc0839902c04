//! The provider and region listings.

use super::*;

// ---- provider and region listings (issue 17) ----------------------------------------------------

#[tokio::test]
async fn list_providers_sends_the_contract_request_and_returns_the_list() {
    let server = Server::start(vec![Reply::providers(&["aws", "gcp", "azure"])]).await;
    let key = key();
    let providers = client(&server.url(), &key).list_providers().await.unwrap();

    assert_eq!(providers.data, ["aws", "gcp", "azure"]);
    assert_eq!(providers.id, "srv-id");
    assert_eq!(providers.message, "3 providers");
    assert_eq!(providers.status, "success");

    assert_one_contract_get(&server, paths::LIST_PROVIDERS, &key);
}

#[tokio::test]
async fn list_regions_sends_the_contract_request_and_returns_the_list() {
    let server = Server::start(vec![Reply::regions(&["af-south-1", "us-east-1"])]).await;
    let key = key();
    let regions = client(&server.url(), &key)
        .list_regions("aws")
        .await
        .unwrap();

    assert_eq!(regions.data, ["af-south-1", "us-east-1"]);
    assert_eq!(regions.id, "srv-id");
    assert_eq!(regions.message, "2 regions in aws");
    assert_eq!(regions.status, "success");

    let path = paths::list_regions(&"aws".parse().unwrap());
    assert_eq!(path, "/api/v1/providers/aws/regions");
    assert_one_contract_get(&server, &path, &key);
}

#[tokio::test]
async fn list_regions_takes_a_contract_id_or_a_string_and_both_listings_keep_a_path_prefix() {
    let server = Server::start(vec![Reply::regions(&["r"])]).await;
    let client = client(&format!("{}/appzone/", server.url()), key());
    let provider: ProviderId = "gcp".parse().unwrap();
    client.list_regions(&provider).await.unwrap();
    client.list_regions(provider).await.unwrap();
    client.list_regions(String::from("azure")).await.unwrap();
    client.list_regions(&String::from("aws")).await.unwrap();
    // The listings share one envelope, so this body answers the provider listing too.
    client.list_providers().await.unwrap();
    let paths: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    assert_eq!(
        paths,
        [
            "/appzone/api/v1/providers/gcp/regions",
            "/appzone/api/v1/providers/gcp/regions",
            "/appzone/api/v1/providers/azure/regions",
            "/appzone/api/v1/providers/aws/regions",
            "/appzone/api/v1/providers",
        ]
    );
}

#[tokio::test]
async fn provider_and_region_lists_missing_id_message_and_status_still_decode() {
    let server = Server::start(vec![
        Reply::json(200, serde_json::json!({"data": ["aws", "gcp"]})),
        Reply::json(
            200,
            serde_json::json!({"data": ["us-east-1"], "extra": {"ignored": true}}),
        ),
        Reply::json(200, serde_json::json!({"data": []})),
    ])
    .await;
    let client = client(&server.url(), key());
    let providers = client.list_providers().await.unwrap();
    assert_eq!(providers.data, ["aws", "gcp"]);
    assert_absent(&providers.id, &providers.message, &providers.status);
    let regions = client.list_regions("aws").await.unwrap();
    assert_eq!(regions.data, ["us-east-1"]);
    assert_absent(&regions.id, &regions.message, &regions.status);
    assert!(client.list_regions("aws").await.unwrap().data.is_empty());
}

#[tokio::test]
async fn list_regions_of_a_malformed_provider_id_fails_before_any_request() {
    let server = Server::start(vec![Reply::regions(&["r"])]).await;
    let client = client(&server.url(), key());
    let long = "a".repeat(64);
    for provider in ["AWS", "", "a/b", "aws ", "a_b", long.as_str()] {
        let error = client.list_regions(provider).await.unwrap_err();
        assert_invalid_id(&error, ErrorCode::InvalidProvider, &format!("{provider:?}"));
    }
    assert_eq!(server.attempts(), 0);
}

/// The statuses the contract gives the listings (and a few it may), classified as for
/// `list_zones`: 400 `invalid_provider` is an `Error::Api`, not a local `InvalidArgument`.
#[tokio::test]
async fn listing_errors_carry_status_code_message_and_request_id() {
    let cases = [
        (400, "invalid_provider"),
        (401, "missing_api_key"),
        (401, "invalid_api_key"),
        (403, "forbidden"),
        (404, "not_found"),
        (405, "method_not_allowed"),
        (429, "rate_limited"),
        (500, "internal_error"),
        (503, "unavailable"),
    ];
    for (status, code) in cases {
        let server = Server::start(vec![
            Reply::error(status, code, "scripted message").header("x-request-id", "req-123")
        ])
        .await;
        // One attempt, so retryable statuses answer at once.
        let client = Client::builder(server.url(), key())
            .retry_policy(RetryPolicy::none())
            .build()
            .unwrap();
        for error in [
            client.list_providers().await.unwrap_err(),
            client.list_regions("aws").await.unwrap_err(),
        ] {
            let what = format!("{status} {code}: {error:?}");
            let api = error.as_api().expect(&what);
            assert_eq!(api.status.as_u16(), status, "{what}");
            assert_eq!(api.code, Some(ErrorCode::from_wire(code)), "{what}");
            assert!(!matches!(api.code, Some(ErrorCode::Other(_))), "{what}");
            assert_eq!(api.message, "scripted message");
            assert_eq!(api.request_id, "req-123");
            assert_eq!(api.attempts, 1);
            assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
            assert_eq!(error.error_code().map(ErrorCode::as_str), Some(code));
            assert_eq!(error.request_id(), Some("req-123"));
            assert_eq!(error.is_not_found(), status == 404, "{what}");
            assert_eq!(error.is_forbidden(), status == 403, "{what}");
            assert_eq!(error.is_unauthorized(), status == 401, "{what}");
            assert_eq!(error.is_retryable(), [429, 503].contains(&status), "{what}");
            assert_eq!(
                error.to_string(),
                format!("appzone API error {status} {code}: scripted message (request id req-123)")
            );
        }
        assert_eq!(server.attempts(), 2);
    }
    // An error answer that is not the contract's body keeps its status, as for zones.
    let server = Server::start(vec![Reply::text(404, "text/html", "<h1>Not Found</h1>")]).await;
    let error = client(&server.url(), key())
        .list_providers()
        .await
        .unwrap_err();
    assert!(
        error.is_not_found() && error.error_code().is_none(),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .starts_with("appzone API error 404 Not Found: not an appzone error body: "),
        "{error}"
    );
}

#[tokio::test]
async fn undecodable_provider_and_region_lists_are_decode_errors_naming_the_listing() {
    let (replies, expected) = not_listings("providers");
    let server = Server::start(replies).await;
    let client = client(&server.url(), key());
    let mut excerpts = Vec::new();
    for call in 0..4 {
        let excerpt = if call % 2 == 0 {
            let error = client.list_providers().await.unwrap_err();
            decode_excerpt(&error, "not a provider list: ")
        } else {
            let error = client.list_regions("aws").await.unwrap_err();
            decode_excerpt(&error, "not a region list: ")
        };
        excerpts.push(excerpt);
    }
    assert_eq!(excerpts, expected);
    assert_eq!(server.attempts(), 4, "decode errors are not retried");
}

#[tokio::test]
async fn oversized_provider_and_region_lists_are_decode_errors() {
    let huge = format!("{{\"data\":[\"{}\"]}}", "p".repeat(4 * 1024 * 1024));
    let server = Server::start(vec![Reply::text(200, "application/json", &huge)]).await;
    let client = client(&server.url(), key());
    for error in [
        client.list_providers().await.unwrap_err(),
        client.list_regions("aws").await.unwrap_err(),
    ] {
        let Error::Decode(decode) = &error else {
            panic!("expected a decode error, got {error:?}");
        };
        assert!(
            decode.reason.contains("longer than 4194304 bytes"),
            "{}",
            decode.reason
        );
        assert!(
            decode.body_excerpt.starts_with("{\"data\":[\"ppp") && decode.body_excerpt.len() < 300
        );
    }
}

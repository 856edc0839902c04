//! Storing a zone mapping.

use super::*;

// ---- put ----------------------------------------------------------------------------------------

#[tokio::test]
async fn put_zone_mapping_sends_the_request_as_json_and_tells_created_from_replaced() {
    let server = Server::start(vec![
        mapping_reply(201, "zone mapping prod stored: 2 zones in 1 region"),
        mapping_reply(200, "zone mapping prod replaced: 2 zones in 1 region"),
    ])
    .await;
    let key = key();
    let client = client(&server.url(), &key);
    let request = aws_request();
    let created = client.put_zone_mapping(&prod(), &request).await.unwrap();
    assert!(created.created, "{created:?}");
    assert_eq!(created.attempts, 1);
    assert_eq!(created.answer.data.id, "prod");
    assert_eq!(
        created.answer.data.name_of("us-east-1", "use1-az4"),
        Some("us-east-1b")
    );
    assert_eq!(
        created.answer.message,
        "zone mapping prod stored: 2 zones in 1 region"
    );
    let replaced = client.put_zone_mapping(&prod(), &request).await.unwrap();
    assert!(!replaced.created, "{replaced:?}");

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for request_seen in &seen {
        assert_eq!(request_seen.method, Method::PUT);
        assert_eq!(request_seen.path, "/api/v1/zone-mappings/prod");
        assert_eq!(
            request_seen.header("content-type"),
            Some("application/json")
        );
        assert_eq!(
            request_seen.header(API_KEY.as_str()),
            Some(key.expose_secret())
        );
        let body: serde_json::Value = serde_json::from_slice(&request_seen.body).unwrap();
        assert_eq!(body["provider"], "aws");
        assert_eq!(body["label"], "production account");
        // The cloud's output, unchanged.
        let fixture: serde_json::Value = serde_json::from_str(DESCRIBE_US_EAST_1).unwrap();
        assert_eq!(body["output"], fixture);
    }
    assert_eq!(
        created.request_id,
        seen[0].header(REQUEST_ID.as_str()).unwrap()
    );
}

#[tokio::test]
async fn put_zone_mapping_without_a_label_sends_none() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let request = ZoneMappingRequest::new(
        "azure".parse().unwrap(),
        None,
        serde_json::from_str(LIST_LOCATIONS).unwrap(),
    );
    client(&server.url(), key())
        .put_zone_mapping(&prod(), &request)
        .await
        .unwrap();
    let body: serde_json::Value = serde_json::from_slice(&server.seen()[0].body).unwrap();
    let mut fields: Vec<&String> = body.as_object().unwrap().keys().collect();
    fields.sort();
    assert_eq!(fields, ["output", "provider"], "no label");
    assert_eq!(body["provider"], "azure");
}

#[tokio::test]
async fn put_zone_mapping_over_the_limits_is_refused_before_sending_as_the_servers_413() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    // Zones over 1 MiB (MAX_ZONE_MAPPING_OUTPUT_BYTES), and offerings making the body over
    // 32 MiB (MAX_ZONE_MAPPING_BYTES, counted uncompressed).
    let zones_over = ZoneMappingRequest::new(
        "aws".parse().unwrap(),
        None,
        serde_json::json!({"AvailabilityZones": [], "padding": "x".repeat(MAX_ZONE_MAPPING_OUTPUT_BYTES)}),
    );
    let body_over = aws_request().with_offerings(serde_json::json!({
        "InstanceTypeOfferings": [], "padding": "x".repeat(MAX_ZONE_MAPPING_BYTES)
    }));
    for (request, says) in [
        (zones_over, "(1 MiB) for the zones"),
        (body_over, "(32 MiB), compressed or not"),
    ] {
        let error = client(&server.url(), key())
            .put_zone_mapping(&prod(), &request)
            .await
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::InvalidArgument {
                    argument: "zone mapping",
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(error.to_string().contains(says), "{error}");
        assert_eq!(error.status(), Some(StatusCode::PAYLOAD_TOO_LARGE));
        assert_eq!(error.error_code(), Some(&ErrorCode::PayloadTooLarge));
        assert_eq!(error.request_id(), None);
    }
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn put_zone_mapping_is_retried_like_get_with_the_same_body_and_request_id() {
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy"),
        Reply::status(502),
        mapping_reply(201, "stored"),
    ])
    .await;
    let outcome = client(&server.url(), key())
        .put_zone_mapping(&prod(), &aws_request())
        .await
        .unwrap();
    assert_eq!(outcome.attempts, 3);
    assert!(outcome.created);
    let seen = server.seen();
    assert_eq!(seen.len(), 3);
    assert!(seen
        .iter()
        .all(|s| s.body == seen[0].body && !s.body.is_empty()));
    let ids: Vec<&str> = seen
        .iter()
        .map(|s| s.header(REQUEST_ID.as_str()).unwrap())
        .collect();
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");

    for (status, attempts) in [
        (429, 3),
        (502, 3),
        (503, 3),
        (504, 3),
        (400, 1),
        (403, 1),
        (409, 1),
        (413, 1),
        (422, 1),
        (500, 1),
    ] {
        let server = Server::start(vec![Reply::error(status, "scripted", "scripted")]).await;
        let error = client(&server.url(), key())
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap_err();
        assert_eq!(server.attempts(), attempts, "PUT {status}");
        assert_eq!(error.as_api().unwrap().attempts as usize, attempts);
    }
}

#[tokio::test]
async fn put_zone_mapping_is_not_resent_after_a_timeout() {
    let server = Server::start(vec![
        mapping_reply(201, "stored").delay(Duration::from_secs(10))
    ])
    .await;
    let client = appzone_client::Client::builder(server.url(), key())
        .timeout(Duration::from_millis(300))
        .retry_policy(crate::support::fast_retries())
        .build()
        .unwrap();
    let error = client
        .put_zone_mapping(&prod(), &aws_request())
        .await
        .unwrap_err();
    assert!(error.is_timeout(), "{error:?}");
    assert_eq!(server.attempts(), 1);
}

#[tokio::test]
async fn put_zone_mapping_refusals_keep_their_codes_and_helpers() {
    let cases = [
        (
            400,
            ErrorCode::INVALID_BODY,
            "invalid body: output: expected AvailabilityZones",
        ),
        (
            403,
            "forbidden",
            "your role may not change zone mappings; contact your organization admin",
        ),
        (
            422,
            ErrorCode::INVALID_ZONE_MAPPING,
            "invalid zone mapping: us-east-1: zone id \"use1-az9\"",
        ),
        (413, "payload_too_large", "request body too large"),
    ];
    for (status, code, message) in cases {
        let server = Server::start(vec![Reply::error(status, code, message)]).await;
        let error = client(&server.url(), key())
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap_err();
        let api = error.as_api().unwrap();
        assert_eq!(api.status.as_u16(), status);
        assert_eq!(api.code.as_ref().map(ErrorCode::as_str), Some(code));
        assert_eq!(api.message, message);
        assert_eq!(error.is_forbidden(), status == 403);
        assert!(!error.is_retryable() && !error.is_not_found());
    }
}

#[tokio::test]
async fn a_put_answered_with_something_other_than_a_mapping_is_a_decode_error() {
    let server = Server::start(vec![Reply::text(201, "text/html", "<html>ok</html>")]).await;
    let error = client(&server.url(), key())
        .put_zone_mapping(&prod(), &aws_request())
        .await
        .unwrap_err();
    let Error::Decode(decode) = &error else {
        panic!("expected Error::Decode, got {error:?}");
    };
    assert_eq!(decode.status, StatusCode::CREATED);
    assert!(decode.reason.starts_with("not a zone mapping: "), "{error}");
}

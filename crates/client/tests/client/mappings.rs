//! Zone identities and zone mappings (API 1.2) against the scripted server: what goes on the
//! wire, how answers decode, how errors and retries go. `mappings_real` runs the same methods
//! against the real server.

use std::time::Duration;

use appzone_client::{
    Conditional, Error, ErrorCode, NameScope, Visibility, ZoneMappingId, ZoneMappingRequest,
    ZoneType, MAX_ZONE_MAPPING_BYTES, MAX_ZONE_MAPPING_OUTPUT_BYTES,
};
use appzone_contract::headers::{API_KEY, IDEMPOTENCY_KEY, REQUEST_ID};
use http::{Method, StatusCode};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

use crate::support::{assert_invalid_id, client, closed_port, key, Reply, Server};
pub use appzone_test_support::fixtures::{DESCRIBE_US_EAST_1, LIST_LOCATIONS};
pub use appzone_test_support::scripted::{identities_reply, mapping_reply, mappings_reply};

mod put;

pub fn prod() -> ZoneMappingId {
    "prod".parse().unwrap()
}

/// The request storing the AWS fixture.
pub fn aws_request() -> ZoneMappingRequest {
    ZoneMappingRequest::new(
        "aws".parse().unwrap(),
        Some("production account".into()),
        serde_json::from_str(DESCRIBE_US_EAST_1).unwrap(),
    )
}

// ---- zone identities ----------------------------------------------------------------------------

#[tokio::test]
async fn zone_identities_sends_the_contract_get_with_the_mapping_query_and_decodes_the_list() {
    let server = Server::start(vec![identities_reply(true)]).await;
    let key = key();
    let list = client(&server.url(), &key)
        .zone_identities("aws", "us-east-1", Some(&prod()))
        .await
        .unwrap();
    assert_eq!(list.data.len(), 2);
    let first = &list.data[0];
    assert_eq!(first.zone_id, "use1-az1");
    assert_eq!(first.zone_name.as_deref(), Some("us-east-1d"));
    assert_eq!(first.name_scope, NameScope::Account);
    assert_eq!(first.zone_type, ZoneType::AvailabilityZone);
    assert_eq!(first.visibility, Visibility::AllAccounts);
    assert_eq!(first.note.as_deref(), Some("name mapped per account"));
    assert_eq!(list.data[1].note, None);
    let mapping = list.mapping.as_ref().unwrap();
    assert_eq!(
        (mapping.id.as_str(), mapping.label.as_str()),
        ("prod", "production account")
    );
    assert_eq!(list.source.compiled_on.as_deref(), Some("2026-11-27"));
    // An answer without the fields edge zones brought decodes with what they mean for an
    // availability zone.
    assert_eq!(first.opt_in, appzone_client::OptIn::NotRequired);
    assert_eq!(first.parent_zone_id, None);
    assert_eq!(list.source.refreshed_on, None);
    assert_eq!(
        list.source.references[0].location,
        "https://docs.aws.amazon.com/"
    );
    assert_eq!(
        (list.id.as_str(), list.status.as_str()),
        ("srv-id", "success")
    );

    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, Method::GET);
    assert_eq!(
        seen[0].path,
        "/api/v1/providers/aws/regions/us-east-1/zone-identities"
    );
    assert_eq!(seen[0].query.as_deref(), Some("mapping=prod"));
    assert_eq!(seen[0].header(API_KEY.as_str()), Some(key.expose_secret()));
    assert_eq!(seen[0].header("accept"), Some("application/json"));
    assert!(seen[0].body.is_empty());
}

#[tokio::test]
async fn zone_identities_without_a_mapping_sends_no_query_and_names_stay_none() {
    let server = Server::start(vec![identities_reply(false)]).await;
    let list = client(&server.url(), key())
        .zone_identities("aws", "us-east-1", None)
        .await
        .unwrap();
    assert!(list.data.iter().all(|zone| zone.zone_name.is_none()));
    assert_eq!(list.mapping, None);
    assert_eq!(server.seen()[0].query, None);
}

#[tokio::test]
async fn an_identity_list_with_values_added_later_and_fields_missing_still_decodes() {
    let server = Server::start(vec![Reply::json(
        200,
        serde_json::json!({"data": [
            {"zone_id": "use1-lax1", "zone_name": null, "name_scope": "organization",
             "zone_type": "local-zone", "visibility": "by_request", "extra": true}
        ]}),
    )])
    .await;
    let list = client(&server.url(), key())
        .zone_identities("aws", "us-east-1", None)
        .await
        .unwrap();
    let zone = &list.data[0];
    assert_eq!(zone.name_scope, NameScope::Other("organization".into()));
    assert_eq!(zone.zone_type.as_str(), "local-zone");
    assert_eq!(zone.visibility, Visibility::Other("by_request".into()));
    assert_eq!(
        (
            list.id.as_str(),
            list.message.as_str(),
            list.status.as_str()
        ),
        ("", "", "")
    );
    assert_eq!(list.mapping, None);
    assert!(list.source.references.is_empty());
}

#[tokio::test]
async fn zone_identities_with_a_malformed_provider_or_region_fails_before_any_request() {
    let server = Server::start(vec![identities_reply(false)]).await;
    let client = client(&server.url(), key());
    let error = client
        .zone_identities("AWS", "us-east-1", Some(&prod()))
        .await
        .unwrap_err();
    assert_invalid_id(&error, ErrorCode::InvalidProvider, "AWS");
    let error = client
        .zone_identities("aws", "us_east_1", None)
        .await
        .unwrap_err();
    assert_invalid_id(&error, ErrorCode::InvalidRegion, "us_east_1");
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn zone_identities_if_changed_sends_the_etag_and_reads_304_as_not_modified() {
    let server = Server::start(vec![identities_reply(true), Reply::status(304)]).await;
    let client = client(&server.url(), key());
    let first = client
        .zone_identities_if_changed("aws", "us-east-1", Some(&prod()), None)
        .await
        .unwrap();
    assert_eq!(first.etag(), Some("W/\"ids-1\""));
    assert_eq!(first.listing().map(|l| l.data.len()), Some(2));
    let again = client
        .zone_identities_if_changed("aws", "us-east-1", Some(&prod()), first.etag())
        .await
        .unwrap();
    assert!(matches!(again, Conditional::NotModified), "{again:?}");
    let seen = server.seen();
    assert_eq!(seen[0].header("if-none-match"), None);
    assert_eq!(seen[1].header("if-none-match"), Some("W/\"ids-1\""));
    assert!(seen
        .iter()
        .all(|s| s.query.as_deref() == Some("mapping=prod")));
}

#[tokio::test]
async fn zone_identities_errors_of_the_mapping_keep_their_codes_and_are_not_retried() {
    for (status, code) in [
        (404, ErrorCode::ZONE_MAPPING_NOT_FOUND),
        (422, ErrorCode::INVALID_ZONE_MAPPING),
    ] {
        let server = Server::start(vec![Reply::error(status, code, "scripted")]).await;
        let error = client(&server.url(), key())
            .zone_identities("azure", "eastus", Some(&prod()))
            .await
            .unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(status));
        assert_eq!(error.error_code().map(ErrorCode::as_str), Some(code));
        assert_eq!(error.is_not_found(), status == 404);
        assert!(!error.is_retryable());
        assert_eq!(server.attempts(), 1);
    }
}

// ---- list, read -------------------------------------------------------------------------------

#[tokio::test]
async fn zone_mappings_and_zone_mapping_send_gets_and_decode_the_answers() {
    let server = Server::start(vec![
        mappings_reply(),
        mapping_reply(200, "zone mapping prod: 2 zones in 1 region"),
    ])
    .await;
    let client = client(&server.url(), key());
    let list = client.zone_mappings().await.unwrap();
    assert_eq!(list.data.len(), 1);
    assert_eq!(list.data[0].id, "prod");
    assert_eq!(list.data[0].regions[0].as_str(), "us-east-1");
    assert_eq!(list.message, "1 zone mapping");
    let answer = client.zone_mapping(&prod()).await.unwrap();
    assert_eq!(answer.data.provider.as_str(), "aws");
    assert_eq!(answer.data.regions[0].zones.len(), 2);
    let seen = server.seen();
    assert_eq!(
        seen.iter()
            .map(|s| (s.method.clone(), s.path.as_str()))
            .collect::<Vec<_>>(),
        [
            (Method::GET, "/api/v1/zone-mappings"),
            (Method::GET, "/api/v1/zone-mappings/prod"),
        ]
    );
}

#[tokio::test]
async fn a_mapping_list_missing_id_message_and_status_still_decodes() {
    let server = Server::start(vec![Reply::json(200, serde_json::json!({"data": []}))]).await;
    let list = client(&server.url(), key()).zone_mappings().await.unwrap();
    assert!(list.data.is_empty());
    assert_eq!(
        (
            list.id.as_str(),
            list.message.as_str(),
            list.status.as_str()
        ),
        ("", "", "")
    );
}

#[tokio::test]
async fn zone_mapping_of_an_unknown_id_is_not_found_with_the_zone_mapping_not_found_code() {
    let server = Server::start(vec![Reply::error(
        404,
        ErrorCode::ZONE_MAPPING_NOT_FOUND,
        "zone mapping not found: your organization has no zone mapping \"prod\"",
    )])
    .await;
    let error = client(&server.url(), key())
        .zone_mapping(&prod())
        .await
        .unwrap_err();
    assert!(error.is_not_found(), "{error}");
    assert_eq!(
        error.error_code().map(ErrorCode::as_str),
        Some(ErrorCode::ZONE_MAPPING_NOT_FOUND)
    );
    assert_eq!(server.attempts(), 1);
}

#[tokio::test]
async fn mapping_ids_are_sent_as_they_are_in_the_path() {
    let server = Server::start(vec![Reply::status(204)]).await;
    let id: ZoneMappingId = "Prod_2026.v-1".parse().unwrap();
    client(&server.url(), key())
        .delete_zone_mapping(&id)
        .await
        .unwrap();
    assert_eq!(server.seen()[0].path, "/api/v1/zone-mappings/Prod_2026.v-1");
}

// ---- delete -------------------------------------------------------------------------------------

#[tokio::test]
async fn delete_zone_mapping_returns_unit_on_204_and_sends_no_idempotency_key() {
    let server = Server::start(vec![Reply::status(204)]).await;
    client(&server.url(), key())
        .delete_zone_mapping(&prod())
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].method, Method::DELETE);
    assert_eq!(seen[0].path, "/api/v1/zone-mappings/prod");
    assert_eq!(seen[0].header(IDEMPOTENCY_KEY.as_str()), None);
    assert!(seen[0].body.is_empty());
}

/// The operation takes no `Idempotency-Key`: a resent deletion whose first answer was lost
/// would find nothing and answer 404. So only the answers that say the server changed nothing
/// (429, 503) are retried, not a gateway's 502 or 504.
#[tokio::test]
async fn delete_zone_mapping_is_retried_only_on_answers_that_changed_nothing() {
    for (status, attempts) in [
        (429, 3),
        (503, 3),
        (502, 1),
        (504, 1),
        (403, 1),
        (404, 1),
        (409, 1),
        (500, 1),
    ] {
        let server = Server::start(vec![Reply::error(status, "scripted", "scripted")]).await;
        let error = client(&server.url(), key())
            .delete_zone_mapping(&prod())
            .await
            .unwrap_err();
        assert_eq!(server.attempts(), attempts, "DELETE {status}");
        assert_eq!(error.as_api().unwrap().attempts as usize, attempts);
    }
    let server = Server::start(vec![
        Reply::error(503, "unavailable", "busy"),
        Reply::status(204),
    ])
    .await;
    client(&server.url(), key())
        .delete_zone_mapping(&prod())
        .await
        .unwrap();
    assert_eq!(server.attempts(), 2);
}

#[tokio::test]
async fn a_delete_whose_answer_may_be_lost_is_not_resent() {
    // Timed out: the server may have deleted; a resend would answer 404.
    let server = Server::start(vec![Reply::status(204).delay(Duration::from_secs(10))]).await;
    let client = appzone_client::Client::builder(server.url(), key())
        .timeout(Duration::from_millis(300))
        .retry_policy(crate::support::fast_retries())
        .build()
        .unwrap();
    let error = client.delete_zone_mapping(&prod()).await.unwrap_err();
    assert!(error.is_timeout() && error.is_retryable(), "{error:?}");
    assert_eq!(server.attempts(), 1);

    // Hung up on after the request arrived.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&accepted);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buffer = [0u8; 4096];
            let _ = socket.read(&mut buffer).await;
            drop(socket);
        }
    });
    let error = crate::support::client(&format!("http://{addr}"), key())
        .delete_zone_mapping(&prod())
        .await
        .unwrap_err();
    assert!(
        matches!(error, Error::Transport { attempts: 1, .. }),
        "{error:?}"
    );
    assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn every_mapping_call_is_retried_after_a_connect_failure() {
    let url = format!("http://{}", closed_port().await);
    let client = client(&url, key());
    let errors = [
        client.delete_zone_mapping(&prod()).await.unwrap_err(),
        client
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap_err(),
        client.zone_mappings().await.unwrap_err(),
        client
            .zone_identities("aws", "us-east-1", None)
            .await
            .unwrap_err(),
    ];
    for error in errors {
        assert!(
            matches!(error, Error::Connect { attempts: 3, .. }),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn the_exit_codes_of_mapping_refusals_are_those_of_their_class() {
    use appzone_client::exit_code;
    let cases = [
        (404, ErrorCode::ZONE_MAPPING_NOT_FOUND, exit_code::NOT_FOUND),
        (403, "forbidden", exit_code::FORBIDDEN),
        (400, ErrorCode::INVALID_BODY, exit_code::INVALID_INPUT),
        (
            422,
            ErrorCode::INVALID_ZONE_MAPPING,
            exit_code::INVALID_INPUT,
        ),
        (413, "payload_too_large", exit_code::INVALID_INPUT),
        // Another 422 is not about the input's content: unchanged.
        (422, ErrorCode::IDEMPOTENCY_KEY_REUSED, exit_code::API),
    ];
    for (status, code, exit) in cases {
        let server = Server::start(vec![Reply::error(status, code, "scripted")]).await;
        let error = client(&server.url(), key())
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap_err();
        assert_eq!(exit_code::for_error(&error), exit, "{status} {code}");
    }
}

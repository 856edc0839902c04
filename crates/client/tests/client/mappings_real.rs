//! Zone identities and zone mappings end to end: the client's methods against the real
//! `appzone-server` (`TestApp`: organizations `acme` and `globex`, the built-in catalog), with
//! the cloud-output fixtures in `tests/fixtures`.

use std::future::Future;
use std::time::Duration;

use appzone_client::{
    Error, ErrorCode, NameScope, Visibility, ZoneMappingId, ZoneMappingRequest,
    MAX_ZONE_MAPPING_BYTES, MAX_ZONE_MAPPING_OUTPUT_BYTES,
};
use appzone_test_support::TestApp;
use http::StatusCode;

use crate::mappings::{aws_request, prod, LIST_LOCATIONS};
use crate::support::client;

/// The longest any test here may take, server start included.
const TEST_BOUND: Duration = Duration::from_secs(60);

async fn bounded(test: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_BOUND, test)
        .await
        .expect("the test did not finish within its time bound");
}

/// Asserts `error` is the API's answer with `status` and wire code `code`, in one attempt.
#[track_caller]
fn assert_api(error: &Error, status: u16, code: &str) -> String {
    let Error::Api(api) = error else {
        panic!("expected Error::Api, got {error:?}");
    };
    assert_eq!(api.status.as_u16(), status, "{error}");
    assert_eq!(
        api.code.as_ref().map(ErrorCode::as_str),
        Some(code),
        "{error}"
    );
    assert_eq!(api.attempts, 1, "{error}");
    assert!(!error.is_retryable(), "{error}");
    api.message.clone()
}

#[tokio::test]
async fn zone_identities_of_a_region_whose_names_are_per_account_have_ids_and_no_names() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let list = client(&server.base, &server.member_key)
            .zone_identities("aws", "us-east-1", None)
            .await
            .unwrap();
        assert_eq!(list.data.len(), 6, "{list:?}");
        for zone in &list.data {
            assert!(zone.zone_id.starts_with("use1-az"), "{zone:?}");
            assert_eq!(zone.zone_name, None, "never guessed: {zone:?}");
            assert_eq!(zone.name_scope, NameScope::Account, "{zone:?}");
            assert!(zone.note.is_some(), "a null name says why: {zone:?}");
        }
        assert_eq!(list.mapping, None);
        assert_eq!(list.status, "success");
        assert!(list.source.compiled_on.is_some(), "{:?}", list.source);
        assert!(list.message.contains("?mapping="), "{}", list.message);
    })
    .await;
}

#[tokio::test]
async fn zone_identities_of_gcp_are_their_names_in_every_project() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let list = client(&server.base, &server.admin_key)
            .zone_identities("gcp", "us-central1", None)
            .await
            .unwrap();
        assert!(!list.data.is_empty());
        for zone in &list.data {
            assert_eq!(zone.zone_name.as_deref(), Some(zone.zone_id.as_str()));
            assert_eq!(zone.name_scope, NameScope::Global);
            assert_eq!(zone.visibility, Visibility::AllAccounts);
        }
    })
    .await;
}

#[tokio::test]
async fn a_mapping_stored_from_aws_output_fills_the_names_of_the_identity_listing() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let created = admin
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap();
        assert!(created.created, "{created:?}");
        assert_eq!(created.answer.data.id, "prod");
        assert_eq!(created.answer.data.label, "production account");
        assert_eq!(
            created.answer.data.name_of("us-east-1", "use1-az1"),
            Some("us-east-1d")
        );
        assert_eq!(created.answer.id, created.request_id);

        // Any key of the organization sees its names.
        let member = client(&server.base, &server.member_key);
        let list = member
            .zone_identities("aws", "us-east-1", Some(&prod()))
            .await
            .unwrap();
        let named: Vec<(&str, Option<&str>)> = list
            .data
            .iter()
            .map(|z| (z.zone_id.as_str(), z.zone_name.as_deref()))
            .collect();
        assert_eq!(named[0], ("use1-az1", Some("us-east-1d")));
        assert_eq!(named[1], ("use1-az2", Some("us-east-1a")));
        let applied = list.mapping.as_ref().unwrap();
        assert_eq!(
            (applied.id.as_str(), applied.provider.as_str()),
            ("prod", "aws")
        );

        // Stored again: replaced.
        let replaced = admin
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap();
        assert!(!replaced.created, "{replaced:?}");

        let mappings = member.zone_mappings().await.unwrap();
        assert_eq!(mappings.data.len(), 1);
        assert_eq!(mappings.data[0].id, "prod");
        assert_eq!(mappings.data[0].regions[0].as_str(), "us-east-1");
        let read = member.zone_mapping(&prod()).await.unwrap();
        assert_eq!(read.data, replaced.answer.data);
    })
    .await;
}

#[tokio::test]
async fn a_mapping_stored_from_azure_output_gives_the_logical_zones() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let id: ZoneMappingId = "sub-1".parse().unwrap();
        let request = ZoneMappingRequest::new(
            "azure".parse().unwrap(),
            None,
            serde_json::from_str(LIST_LOCATIONS).unwrap(),
        );
        let outcome = admin.put_zone_mapping(&id, &request).await.unwrap();
        assert!(outcome.created);
        assert_eq!(
            outcome.answer.data.label, "sub-1",
            "the id when no label is given"
        );
        let list = admin
            .zone_identities("azure", "eastus", Some(&id))
            .await
            .unwrap();
        let named: Vec<(&str, Option<&str>)> = list
            .data
            .iter()
            .map(|z| (z.zone_id.as_str(), z.zone_name.as_deref()))
            .collect();
        assert_eq!(
            named,
            [
                ("eastus-az1", Some("2")),
                ("eastus-az2", Some("3")),
                ("eastus-az3", Some("1"))
            ]
        );
        // The aws listing refuses a mapping of azure.
        let error = admin
            .zone_identities("aws", "us-east-1", Some(&id))
            .await
            .unwrap_err();
        assert_api(&error, 422, ErrorCode::INVALID_ZONE_MAPPING);
    })
    .await;
}

#[tokio::test]
async fn the_real_servers_refusals_of_mappings_arrive_with_their_codes() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let member = client(&server.base, &server.member_key);
        let other = client(&server.base, &server.other_admin_key);
        admin
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap();

        let error = member
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap_err();
        let message = assert_api(&error, 403, "forbidden");
        assert!(
            error.is_forbidden() && message.contains("admin"),
            "{message}"
        );

        let not_the_shape = ZoneMappingRequest::new(
            "aws".parse().unwrap(),
            None,
            serde_json::json!({"Zones": []}),
        );
        let error = admin
            .put_zone_mapping(&prod(), &not_the_shape)
            .await
            .unwrap_err();
        assert_api(&error, 400, ErrorCode::INVALID_BODY);

        let unknown_zone = ZoneMappingRequest::new(
            "aws".parse().unwrap(),
            None,
            serde_json::json!({"AvailabilityZones": [{"RegionName": "us-east-1",
                "ZoneName": "us-east-1a", "ZoneId": "use1-az9", "ZoneType": "availability-zone"}]}),
        );
        let error = admin
            .put_zone_mapping(&prod(), &unknown_zone)
            .await
            .unwrap_err();
        let message = assert_api(&error, 422, ErrorCode::INVALID_ZONE_MAPPING);
        assert!(
            message.contains("use1-az9"),
            "names the offender: {message}"
        );

        // Unknown, and another organization's: the same 404.
        let staging: ZoneMappingId = "staging".parse().unwrap();
        for error in [
            admin.zone_mapping(&staging).await.unwrap_err(),
            other.zone_mapping(&prod()).await.unwrap_err(),
            other.delete_zone_mapping(&prod()).await.unwrap_err(),
            admin
                .zone_identities("aws", "us-east-1", Some(&staging))
                .await
                .unwrap_err(),
        ] {
            assert_api(&error, 404, ErrorCode::ZONE_MAPPING_NOT_FOUND);
            assert!(error.is_not_found(), "{error}");
        }
        let error = member.delete_zone_mapping(&prod()).await.unwrap_err();
        assert_api(&error, 403, "forbidden");

        // Nothing above changed acme's mapping.
        let read = admin.zone_mapping(&prod()).await.unwrap();
        assert_eq!(read.data.label, "production account");
        assert_eq!(other.zone_mappings().await.unwrap().data, []);
    })
    .await;
}

/// What the client refuses before sending, a JSON body over 32 MiB or an `output` (the zones)
/// over 1 MiB, has the code and status the real server answers the same body with.
#[tokio::test]
async fn a_mapping_over_the_limits_refused_locally_has_the_code_and_status_of_the_servers_answer() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let over_32_mib = ZoneMappingRequest::new(
            "aws".parse().unwrap(),
            Some("x".repeat(MAX_ZONE_MAPPING_BYTES)),
            serde_json::json!({"AvailabilityZones": []}),
        );
        let zones_over_1_mib = ZoneMappingRequest::new(
            "aws".parse().unwrap(),
            None,
            serde_json::json!({"AvailabilityZones": [], "padding": "x".repeat(MAX_ZONE_MAPPING_OUTPUT_BYTES)}),
        );
        for (request, says) in [
            (over_32_mib, "at most 33554432 (32 MiB)"),
            (zones_over_1_mib, "at most 1048576 (1 MiB) for the zones"),
        ] {
            let local = client(&server.base, &server.admin_key)
                .put_zone_mapping(&prod(), &request)
                .await
                .unwrap_err();
            assert_eq!(local.request_id(), None, "nothing was sent");
            assert!(local.to_string().contains(says), "{local}");
            let answer = reqwest::Client::new()
                .put(format!("{}/api/v1/zone-mappings/prod", server.base))
                .header("X-API-KEY", &server.admin_key)
                .header("content-type", "application/json")
                .body(serde_json::to_vec(&request).unwrap())
                .send()
                .await
                .unwrap();
            let status = answer.status();
            let body: serde_json::Value = answer.json().await.unwrap();
            assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{says}");
            assert_eq!(local.status(), Some(status));
            assert_eq!(
                local.error_code().map(ErrorCode::as_str),
                body["error_code"].as_str()
            );
            assert_eq!(
                appzone_client::exit_code::for_error(&local),
                appzone_client::exit_code::INVALID_INPUT
            );
        }
        assert!(client(&server.base, &server.admin_key)
            .zone_mappings()
            .await
            .unwrap()
            .data
            .is_empty());
    })
    .await;
}

#[tokio::test]
async fn delete_zone_mapping_deletes_once_and_then_answers_404() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        admin
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap();
        admin.delete_zone_mapping(&prod()).await.unwrap();
        let error = admin.delete_zone_mapping(&prod()).await.unwrap_err();
        assert_api(&error, 404, ErrorCode::ZONE_MAPPING_NOT_FOUND);
        let error = admin
            .zone_identities("aws", "us-east-1", Some(&prod()))
            .await
            .unwrap_err();
        assert_api(&error, 404, ErrorCode::ZONE_MAPPING_NOT_FOUND);
        assert_eq!(admin.zone_mappings().await.unwrap().data, []);
    })
    .await;
}

#[tokio::test]
async fn the_identity_listings_etag_gives_304_until_the_mapping_applied_changes() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let first = admin
            .zone_identities_if_changed("aws", "us-east-1", None, None)
            .await
            .unwrap();
        let etag = first.etag().unwrap().to_owned();
        assert!(etag.starts_with("W/\""), "{etag}");
        let again = admin
            .zone_identities_if_changed("aws", "us-east-1", None, Some(&etag))
            .await
            .unwrap();
        assert!(again.is_not_modified(), "{again:?}");

        admin
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap();
        let mapped = admin
            .zone_identities_if_changed("aws", "us-east-1", Some(&prod()), Some(&etag))
            .await
            .unwrap();
        assert!(
            !mapped.is_not_modified(),
            "the mapping is part of the validator"
        );
        assert_ne!(mapped.etag(), Some(etag.as_str()));
    })
    .await;
}

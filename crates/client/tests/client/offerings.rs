//! What runs where (API 1.3) against the scripted server: what goes on the wire (the
//! instance-type listing, `offers`, a large zone-mapping body gzip-compressed) and how answers
//! and errors decode. `offerings_real` runs the same methods against the real server.

use std::io::Read;

use appzone_client::{
    Conditional, ErrorCode, ProviderId, RegionId, ZoneIdentityQuery, ZoneMappingRequest,
};
use appzone_test_support::fixtures::offerings::AWS_BY_ZONE_ID;
use http::Method;

use crate::mappings::{aws_request, identities_reply, mapping_reply, prod};
use crate::support::{assert_invalid_id, client, key, Reply, Server};

/// The contract's instance-type list of `prod` in aws/us-east-1.
fn instance_types_reply() -> Reply {
    Reply::json(
        200,
        serde_json::json!({
            "data": [
                {"instance_type": "c5.xlarge", "zone_ids": ["use1-az1", "use1-az2", "use1-az4"]},
                {"instance_type": "p5.48xlarge", "zone_ids": ["use1-az2"]}
            ],
            "id": "srv-id",
            "message": "2 instance types offered in aws/us-east-1 by zone mapping prod",
            "status": "success",
        }),
    )
    .header("etag", "W/\"types-1\"")
}

/// The JSON of a body as it was received: inflated when it came gzip-compressed.
fn inflated(body: &[u8]) -> Vec<u8> {
    let mut json = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut json)
        .unwrap();
    json
}

/// `types` instance types offered in each of the six us-east-1 zone ids, as `aws ec2
/// describe-instance-type-offerings --location-type availability-zone-id --output json` would
/// print them (compact): about 95 bytes an offering.
pub fn synthetic_offerings(types: usize) -> serde_json::Value {
    let offerings: Vec<serde_json::Value> = (0..types)
        .flat_map(|i| {
            (1..=6).map(move |az| {
                serde_json::json!({"InstanceType": format!("syn{i}.8xlarge"),
                    "LocationType": "availability-zone-id", "Location": format!("use1-az{az}")})
            })
        })
        .collect();
    serde_json::json!({ "InstanceTypeOfferings": offerings })
}

#[tokio::test]
async fn put_zone_mapping_sends_a_body_over_one_mebibyte_gzip_compressed_and_a_smaller_one_plain() {
    let server = Server::start(vec![mapping_reply(200, "stored")]).await;
    let client = client(&server.url(), key());
    let small = aws_request().with_offerings(serde_json::from_str(AWS_BY_ZONE_ID).unwrap());
    let large = aws_request().with_offerings(synthetic_offerings(3_000));
    client.put_zone_mapping(&prod(), &small).await.unwrap();
    client.put_zone_mapping(&prod(), &large).await.unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen
        .iter()
        .all(|s| s.method == Method::PUT && s.path == "/api/v1/zone-mappings/prod"));
    assert!(seen
        .iter()
        .all(|s| s.header("content-type") == Some("application/json")));
    // Under 1 MiB: the JSON as it is.
    assert_eq!(seen[0].header("content-encoding"), None);
    assert_eq!(seen[0].body, serde_json::to_vec(&small).unwrap());
    // Over 1 MiB: gzip, inflating to the same JSON, a fraction of its size.
    let json = serde_json::to_vec(&large).unwrap();
    assert!(json.len() > 1024 * 1024, "{}", json.len());
    assert_eq!(seen[1].header("content-encoding"), Some("gzip"));
    assert_eq!(&seen[1].body[..2], [0x1f, 0x8b], "the gzip magic");
    assert!(
        seen[1].body.len() < json.len() / 10,
        "{}",
        seen[1].body.len()
    );
    assert_eq!(inflated(&seen[1].body), json);
}

#[tokio::test]
async fn a_compressed_put_is_retried_with_the_same_compressed_body() {
    let server = Server::start(vec![Reply::status(503), mapping_reply(201, "stored")]).await;
    let large = aws_request().with_offerings(synthetic_offerings(3_000));
    let outcome = client(&server.url(), key())
        .put_zone_mapping(&prod(), &large)
        .await
        .unwrap();
    assert_eq!((outcome.attempts, outcome.created), (2, true));
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].body, seen[1].body);
    assert!(seen
        .iter()
        .all(|s| s.header("content-encoding") == Some("gzip")));
}

#[tokio::test]
async fn a_gcp_mapping_is_sent_with_offerings_alone_and_no_output() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let machine_types = serde_json::json!([{"name": "n2-standard-4", "zone": "us-central1-a"}]);
    let request = ZoneMappingRequest::new("gcp".parse().unwrap(), None, serde_json::Value::Null)
        .with_offerings(machine_types.clone());
    client(&server.url(), key())
        .put_zone_mapping(&"my-project".parse().unwrap(), &request)
        .await
        .unwrap();
    let sent: serde_json::Value = serde_json::from_slice(&server.seen()[0].body).unwrap();
    assert_eq!(
        sent,
        serde_json::json!({"provider": "gcp", "offerings": machine_types})
    );
}

#[tokio::test]
async fn instance_types_sends_the_contract_get_with_the_mapping_and_zone_id_and_decodes_the_list() {
    let server = Server::start(vec![instance_types_reply()]).await;
    let key = key();
    let client = client(&server.url(), &key);
    // The ids typed, as a caller holding them passes them.
    let aws: ProviderId = "aws".parse().unwrap();
    let us_east_1: RegionId = "us-east-1".parse().unwrap();
    let list = client
        .instance_types(&aws, &us_east_1, &prod(), None)
        .await
        .unwrap();
    assert_eq!(list.data.len(), 2);
    assert_eq!(list.data[0].instance_type, "c5.xlarge");
    assert_eq!(list.data[0].zone_ids, ["use1-az1", "use1-az2", "use1-az4"]);
    assert_eq!(
        (
            list.id.as_str(),
            list.message.as_str(),
            list.status.as_str()
        ),
        (
            "srv-id",
            "2 instance types offered in aws/us-east-1 by zone mapping prod",
            "success"
        )
    );
    client
        .instance_types("aws", "us-east-1", &prod(), Some("use1-az2"))
        .await
        .unwrap();

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(request.method, Method::GET);
        assert_eq!(
            request.path,
            "/api/v1/providers/aws/regions/us-east-1/instance-types"
        );
        assert_eq!(request.header("accept"), Some("application/json"));
        assert!(request.body.is_empty());
    }
    assert_eq!(seen[0].query.as_deref(), Some("mapping=prod"));
    assert_eq!(
        seen[1].query.as_deref(),
        Some("mapping=prod&zone_id=use1-az2")
    );
}

#[tokio::test]
async fn an_instance_type_list_missing_id_message_and_status_still_decodes() {
    let server = Server::start(vec![Reply::json(
        200,
        serde_json::json!({"data": [{"instance_type": "t3.micro", "zone_ids": ["use1-az1"], "extra": 1}]}),
    )])
    .await;
    let list = client(&server.url(), key())
        .instance_types("aws", "us-east-1", &prod(), None)
        .await
        .unwrap();
    assert_eq!(list.data[0].instance_type, "t3.micro");
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
async fn instance_types_with_a_malformed_provider_or_region_fails_before_any_request() {
    let server = Server::start(vec![instance_types_reply()]).await;
    let client = client(&server.url(), key());
    let error = client
        .instance_types("AWS", "us-east-1", &prod(), None)
        .await
        .unwrap_err();
    assert_invalid_id(&error, ErrorCode::InvalidProvider, "AWS");
    let error = client
        .instance_types("aws", "us east 1", &prod(), None)
        .await
        .unwrap_err();
    assert_invalid_id(&error, ErrorCode::InvalidRegion, "us east 1");
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn instance_types_if_changed_sends_the_etag_and_reads_304_as_not_modified() {
    let server = Server::start(vec![instance_types_reply(), Reply::status(304)]).await;
    let client = client(&server.url(), key());
    let first = client
        .instance_types_if_changed("aws", "us-east-1", &prod(), None, None)
        .await
        .unwrap();
    assert_eq!(first.etag(), Some("W/\"types-1\""));
    assert_eq!(first.listing().map(|l| l.data.len()), Some(2));
    let again = client
        .instance_types_if_changed("aws", "us-east-1", &prod(), None, first.etag())
        .await
        .unwrap();
    assert!(matches!(again, Conditional::NotModified), "{again:?}");
    let seen = server.seen();
    assert_eq!(seen[0].header("if-none-match"), None);
    assert_eq!(seen[1].header("if-none-match"), Some("W/\"types-1\""));
}

#[tokio::test]
async fn zone_identities_with_offers_sends_the_types_as_one_comma_separated_list() {
    let server = Server::start(vec![identities_reply(true)]).await;
    let query = ZoneIdentityQuery::default()
        .mapping(prod())
        .mapping("staging".parse().unwrap())
        .offers("p5.48xlarge")
        .offers("c5.xlarge");
    client(&server.url(), key())
        .zone_identities_with("aws", "us-east-1", &query)
        .await
        .unwrap();
    assert_eq!(
        server.seen()[0].query.as_deref(),
        Some("mapping=prod&mapping=staging&offers=p5.48xlarge,c5.xlarge")
    );
}

#[tokio::test]
async fn offerings_not_stored_arrives_with_its_code_and_status_and_is_not_retried() {
    let server = Server::start(vec![Reply::error(
        422,
        ErrorCode::OFFERINGS_NOT_STORED,
        "zone mapping \"prod\" holds no instance-type offerings for aws/us-east-1",
    )])
    .await;
    let client = client(&server.url(), key());
    let query = ZoneIdentityQuery::default()
        .mapping(prod())
        .offers("p5.48xlarge");
    for error in [
        client
            .instance_types("aws", "us-east-1", &prod(), None)
            .await
            .unwrap_err(),
        client
            .zone_identities_with("aws", "us-east-1", &query)
            .await
            .unwrap_err(),
    ] {
        assert_eq!(error.status().map(|s| s.as_u16()), Some(422));
        assert_eq!(
            error.error_code().map(ErrorCode::as_str),
            Some(ErrorCode::OFFERINGS_NOT_STORED)
        );
        assert!(!error.is_retryable() && !error.is_not_found(), "{error}");
        assert_eq!(
            appzone_client::exit_code::for_error(&error),
            appzone_client::exit_code::INVALID_INPUT
        );
    }
    assert_eq!(server.attempts(), 2);
}

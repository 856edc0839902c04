//! What runs where (API 1.3) end to end: the client's methods against the real
//! `appzone-server` (`TestApp`), with the recorded cloud outputs of
//! `appzone_test_support::fixtures::offerings` (moto's recording of AWS us-east-1: 52 types,
//! 227 offerings over the six zone ids; the recording account names a=use1-az2, b=use1-az4,
//! c=use1-az6, d=use1-az1, e=use1-az3, f=use1-az5, as the AWS zone fixture does).

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use appzone_client::{
    Error, ErrorCode, ProviderId, RegionId, RegionOfferings, ZoneIdentityQuery, ZoneMappingId,
    ZoneMappingRequest,
};
use appzone_test_support::fixtures::offerings::{
    AWS_BY_ZONE_ID, AWS_BY_ZONE_NAME, GCP_US_CENTRAL1,
};
use appzone_test_support::TestApp;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::mappings::{aws_request, prod};
use crate::offerings::synthetic_offerings;
use crate::support::client;

/// The longest any test here may take, server start included.
const TEST_BOUND: Duration = Duration::from_secs(60);

async fn bounded(test: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_BOUND, test)
        .await
        .expect("the test did not finish within its time bound");
}

fn staging() -> ZoneMappingId {
    "staging".parse().unwrap()
}

/// The AWS zone fixture with moto's recorded offerings by zone id.
fn prod_with_offerings() -> ZoneMappingRequest {
    aws_request().with_offerings(serde_json::from_str(AWS_BY_ZONE_ID).unwrap())
}

/// The counts of us-east-1 for `instance_types` types and `offerings` offerings.
fn us_east_1(instance_types: u64, offerings: u64) -> Vec<RegionOfferings> {
    vec![RegionOfferings::new(
        "us-east-1".parse().unwrap(),
        instance_types,
        offerings,
    )]
}

/// Asserts `error` is the API's 422 `offerings_not_stored` naming `mapping`.
#[track_caller]
fn assert_offerings_not_stored(error: &Error, mapping: &str) {
    let Error::Api(api) = error else {
        panic!("expected Error::Api, got {error:?}");
    };
    assert_eq!(api.status.as_u16(), 422, "{error}");
    assert_eq!(
        api.code.as_ref().map(ErrorCode::as_str),
        Some(ErrorCode::OFFERINGS_NOT_STORED),
        "{error}"
    );
    assert!(api.message.contains(&format!("{mapping:?}")), "{error}");
    assert!(
        api.message.contains("describe-instance-type-offerings"),
        "says how to store them: {error}"
    );
    assert_eq!(api.attempts, 1, "not retried: {error}");
}

#[tokio::test]
async fn a_mapping_stored_with_offerings_reads_back_counts_per_region_in_put_get_and_list() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let outcome = admin
            .put_zone_mapping(&prod(), &prod_with_offerings())
            .await
            .unwrap();
        assert!(outcome.created);
        assert_eq!(outcome.answer.data.offerings, us_east_1(52, 227));
        assert_eq!(outcome.answer.skipped, []);
        assert_eq!(outcome.answer.data.regions[0].zones.len(), 6);

        let member = client(&server.base, &server.member_key);
        let read = member.zone_mapping(&prod()).await.unwrap();
        assert_eq!(read.data.offerings, us_east_1(52, 227));
        let list = member.zone_mappings().await.unwrap();
        assert_eq!(list.data[0].offerings, us_east_1(52, 227));

        // By name, read through the mapping's own names: the same 227 offerings.
        let by_name = aws_request().with_offerings(serde_json::from_str(AWS_BY_ZONE_NAME).unwrap());
        let outcome = admin.put_zone_mapping(&staging(), &by_name).await.unwrap();
        assert_eq!(outcome.answer.data.offerings, us_east_1(52, 227));

        // Stored again without offerings: none held, none counted.
        let outcome = admin
            .put_zone_mapping(&prod(), &aws_request())
            .await
            .unwrap();
        assert!(!outcome.created);
        assert_eq!(outcome.answer.data.offerings, []);
        assert_eq!(
            member.zone_mapping(&prod()).await.unwrap().data.offerings,
            []
        );
    })
    .await;
}

#[tokio::test]
async fn instance_types_lists_each_type_with_its_zones_and_zone_id_keeps_the_types_of_that_zone() {
    bounded(async {
        let server = TestApp::sqlite().await;
        client(&server.base, &server.admin_key)
            .put_zone_mapping(&prod(), &prod_with_offerings())
            .await
            .unwrap();
        let member = client(&server.base, &server.member_key);
        let aws: ProviderId = "aws".parse().unwrap();
        let region: RegionId = "us-east-1".parse().unwrap();
        let all = member
            .instance_types(&aws, &region, &prod(), None)
            .await
            .unwrap();
        assert_eq!(all.data.len(), 52);
        let types: Vec<&str> = all.data.iter().map(|t| t.instance_type.as_str()).collect();
        let mut sorted = types.clone();
        sorted.sort_unstable();
        assert_eq!(types, sorted, "sorted by type");
        let zones_of = |name: &str| {
            all.data
                .iter()
                .find(|t| t.instance_type == name)
                .map(|t| t.zone_ids.clone())
                .unwrap_or_default()
        };
        // Recorded: p4de.24xlarge in two zones, p5.48xlarge in all six, in catalog order.
        assert_eq!(zones_of("p4de.24xlarge"), ["use1-az4", "use1-az6"]);
        assert_eq!(
            zones_of("p5.48xlarge"),
            ["use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6"]
        );
        assert_eq!(all.status, "success");
        assert!(all.message.contains("52 instance types"), "{}", all.message);

        // use1-az3 offers 8 of them; each still listed with all its zones.
        let az3 = member
            .instance_types("aws", "us-east-1", &prod(), Some("use1-az3"))
            .await
            .unwrap();
        assert_eq!(az3.data.len(), 8, "{az3:?}");
        assert!(az3
            .data
            .iter()
            .all(|t| t.zone_ids.iter().any(|z| z == "use1-az3")));
        assert!(az3.data.iter().any(|t| t.instance_type == "p5.48xlarge"));
        assert!(!az3.data.iter().any(|t| t.instance_type == "p4de.24xlarge"));
        assert_eq!(
            az3.data
                .iter()
                .find(|t| t.instance_type == "c3.large")
                .map(|t| t.zone_ids.len()),
            Some(4)
        );

        // A zone the region lacks matches nothing; the message says so.
        let nowhere = member
            .instance_types("aws", "us-east-1", &prod(), Some("use1-az9"))
            .await
            .unwrap();
        assert!(nowhere.data.is_empty(), "{nowhere:?}");
        assert!(
            nowhere
                .message
                .contains("aws/us-east-1 has no zone use1-az9"),
            "{}",
            nowhere.message
        );
        // A malformed one: 400 invalid_query.
        let error = member
            .instance_types("aws", "us-east-1", &prod(), Some("use1_az1"))
            .await
            .unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(400));
        assert_eq!(
            error.error_code().map(ErrorCode::as_str),
            Some(ErrorCode::INVALID_QUERY)
        );
    })
    .await;
}

#[tokio::test]
async fn instance_types_if_changed_gives_304_until_the_offerings_change() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        admin
            .put_zone_mapping(&prod(), &prod_with_offerings())
            .await
            .unwrap();
        let first = admin
            .instance_types_if_changed("aws", "us-east-1", &prod(), None, None)
            .await
            .unwrap();
        let etag = first.etag().unwrap().to_owned();
        assert_eq!(first.listing().map(|l| l.data.len()), Some(52));
        let again = admin
            .instance_types_if_changed("aws", "us-east-1", &prod(), None, Some(&etag))
            .await
            .unwrap();
        assert!(again.is_not_modified(), "{again:?}");

        // Fewer offerings: a new listing, with a new tag.
        let fewer = aws_request().with_offerings(serde_json::json!({"InstanceTypeOfferings": [
            {"InstanceType": "t3.micro", "LocationType": "availability-zone-id", "Location": "use1-az1"}
        ]}));
        admin.put_zone_mapping(&prod(), &fewer).await.unwrap();
        let changed = admin
            .instance_types_if_changed("aws", "us-east-1", &prod(), None, Some(&etag))
            .await
            .unwrap();
        assert_eq!(changed.listing().map(|l| l.data.len()), Some(1), "{changed:?}");
        assert_ne!(changed.etag(), Some(etag.as_str()));
    })
    .await;
}

#[tokio::test]
async fn offers_keeps_the_zones_where_every_mapping_asked_offers_every_type() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        admin
            .put_zone_mapping(&prod(), &prod_with_offerings())
            .await
            .unwrap();
        // Staging may launch p4de.24xlarge in use1-az4 and use1-az1 only.
        let staging_offers = aws_request().with_offerings(serde_json::json!({"InstanceTypeOfferings": [
            {"InstanceType": "p4de.24xlarge", "LocationType": "availability-zone-id", "Location": "use1-az1"},
            {"InstanceType": "p4de.24xlarge", "LocationType": "availability-zone-id", "Location": "use1-az4"},
            {"InstanceType": "t3.micro", "LocationType": "availability-zone-id", "Location": "use1-az4"}
        ]}));
        admin
            .put_zone_mapping(&staging(), &staging_offers)
            .await
            .unwrap();
        let member = client(&server.base, &server.member_key);
        let zone_ids = |query: ZoneIdentityQuery| {
            let member = member.clone();
            async move {
                member
                    .zone_identities_with("aws", "us-east-1", &query)
                    .await
                    .unwrap()
                    .data
                    .into_iter()
                    .map(|z| z.zone_id)
                    .collect::<Vec<_>>()
            }
        };
        let prod_only = ZoneIdentityQuery::default().mapping(prod()).offers("p4de.24xlarge");
        assert_eq!(zone_ids(prod_only).await, ["use1-az4", "use1-az6"]);
        let both = ZoneIdentityQuery::default()
            .mapping(prod())
            .mapping(staging())
            .offers("p4de.24xlarge");
        assert_eq!(zone_ids(both).await, ["use1-az4"]);
        let every_type = ZoneIdentityQuery::default()
            .mapping(staging())
            .offers("p4de.24xlarge")
            .offers("t3.micro");
        assert_eq!(zone_ids(every_type).await, ["use1-az4"]);
        let nowhere = ZoneIdentityQuery::default().mapping(prod()).offers("p9.nowhere");
        assert_eq!(zone_ids(nowhere).await, Vec::<String>::new());

        // The names of each account stay on the zones kept.
        let both = ZoneIdentityQuery::default()
            .mapping(prod())
            .mapping(staging())
            .offers("p4de.24xlarge");
        let list = member
            .zone_identities_with("aws", "us-east-1", &both)
            .await
            .unwrap();
        assert_eq!(list.data[0].zone_name.as_deref(), Some("us-east-1b"));
        assert_eq!(list.data[0].names.len(), 2);

        // Without a mapping: 400 invalid_query naming offers.
        let error = member
            .zone_identities_with(
                "aws",
                "us-east-1",
                &ZoneIdentityQuery::default().offers("p4de.24xlarge"),
            )
            .await
            .unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(400));
        assert_eq!(
            error.error_code().map(ErrorCode::as_str),
            Some(ErrorCode::INVALID_QUERY)
        );
    })
    .await;
}

#[tokio::test]
async fn offerings_asked_of_a_mapping_without_them_arrive_as_422_offerings_not_stored() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        admin
            .put_zone_mapping(&prod(), &prod_with_offerings())
            .await
            .unwrap();
        admin
            .put_zone_mapping(&staging(), &aws_request())
            .await
            .unwrap();
        let error = admin
            .instance_types("aws", "us-east-1", &staging(), None)
            .await
            .unwrap_err();
        assert_offerings_not_stored(&error, "staging");
        let query = ZoneIdentityQuery::default()
            .mapping(prod())
            .mapping(staging())
            .offers("p5.48xlarge");
        let error = admin
            .zone_identities_with("aws", "us-east-1", &query)
            .await
            .unwrap_err();
        assert_offerings_not_stored(&error, "staging");
        assert_eq!(
            appzone_client::exit_code::for_error(&error),
            appzone_client::exit_code::INVALID_INPUT
        );
        // Without offers, the same mappings list as before.
        let plain = ZoneIdentityQuery::default()
            .mapping(prod())
            .mapping(staging());
        let list = admin
            .zone_identities_with("aws", "us-east-1", &plain)
            .await
            .unwrap();
        assert_eq!(list.data.len(), 6);
    })
    .await;
}

#[tokio::test]
async fn a_gcp_mapping_carries_offerings_alone_and_lists_its_instance_types() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let project: ZoneMappingId = "my-project".parse().unwrap();
        let request =
            ZoneMappingRequest::new("gcp".parse().unwrap(), None, serde_json::Value::Null)
                .with_offerings(serde_json::from_str(GCP_US_CENTRAL1).unwrap());
        let outcome = admin.put_zone_mapping(&project, &request).await.unwrap();
        assert_eq!(outcome.answer.data.regions, []);
        assert_eq!(
            outcome.answer.data.offerings,
            vec![RegionOfferings::new("us-central1".parse().unwrap(), 12, 21)]
        );
        let list = admin
            .instance_types("gcp", "us-central1", &project, Some("us-central1-a"))
            .await
            .unwrap();
        assert_eq!(list.data.len(), 9, "{list:?}");
        let ultramem = admin
            .instance_types("gcp", "us-central1", &project, None)
            .await
            .unwrap()
            .data
            .into_iter()
            .find(|t| t.instance_type == "n1-ultramem-40")
            .unwrap();
        assert_eq!(ultramem.zone_ids, ["us-central1-b"]);
    })
    .await;
}

/// A TCP relay in front of `upstream` that keeps every byte the client sent: what went on the
/// wire to the real server.
async fn recording_relay(upstream: String) -> (String, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    let sent = Arc::new(Mutex::new(Vec::new()));
    let recorded = Arc::clone(&sent);
    let upstream = upstream.trim_start_matches("http://").to_owned();
    tokio::spawn(async move {
        loop {
            let (client, _) = listener.accept().await.unwrap();
            let server = TcpStream::connect(&upstream).await.unwrap();
            let (mut from_client, mut to_client) = client.into_split();
            let (mut from_server, mut to_server) = server.into_split();
            let recorded = Arc::clone(&recorded);
            tokio::spawn(async move {
                let mut buffer = vec![0; 64 * 1024];
                loop {
                    let n = from_client.read(&mut buffer).await.unwrap_or(0);
                    if n == 0 || to_server.write_all(&buffer[..n]).await.is_err() {
                        break;
                    }
                    recorded.lock().unwrap().extend_from_slice(&buffer[..n]);
                }
            });
            tokio::spawn(async move {
                let _ = tokio::io::copy(&mut from_server, &mut to_client).await;
            });
        }
    });
    (address, sent)
}

#[tokio::test]
async fn a_large_offerings_body_is_sent_gzip_compressed_and_stored() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let (relay, sent) = recording_relay(server.base.clone()).await;
        // 6,000 types in each of the six zones: 36,000 offerings, over 3 MiB of JSON.
        let request = aws_request().with_offerings(synthetic_offerings(6_000));
        let json = serde_json::to_vec(&request).unwrap();
        assert!(json.len() > 3 * 1024 * 1024, "{}", json.len());
        let outcome = client(&relay, &server.admin_key)
            .put_zone_mapping(&prod(), &request)
            .await
            .unwrap();
        assert_eq!(outcome.answer.data.offerings, us_east_1(6_000, 36_000));
        assert_eq!(outcome.answer.skipped, []);

        // What went on the wire: one request, gzip, a fraction of the JSON.
        let sent = sent.lock().unwrap().clone();
        let end = sent.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&sent[..end]).to_ascii_lowercase();
        assert!(
            head.starts_with("put /api/v1/zone-mappings/prod "),
            "{head}"
        );
        assert!(head.contains("\r\ncontent-encoding: gzip"), "{head}");
        let body = &sent[end + 4..];
        assert_eq!(&body[..2], [0x1f, 0x8b], "the gzip magic");
        assert!(
            body.len() < json.len() / 10,
            "{} of {}",
            body.len(),
            json.len()
        );

        // Stored: the instance types read back.
        let list = client(&server.base, &server.member_key)
            .instance_types("aws", "us-east-1", &prod(), Some("use1-az5"))
            .await
            .unwrap();
        assert_eq!(list.data.len(), 6_000);
        assert!(list.data.iter().all(|t| t.zone_ids.len() == 6));
    })
    .await;
}

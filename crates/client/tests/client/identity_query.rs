//! `Client::zone_identities_with`: several zone mappings side by side and the filters, against
//! the scripted server (what goes on the wire, how `names` and `mappings` decode, the 400
//! `invalid_query`).

use appzone_client::{ErrorCode, ZoneIdentityQuery, ZoneType};
use serde_json::json;

use crate::support::{client, key, Reply, Server};

/// The answer of `?mapping=a&mapping=b&zone_name=us-east-1a`: one zone, its name in each.
fn side_by_side_reply() -> Reply {
    let applied = |id: &str| json!({"id": id, "provider": "aws", "label": id, "imported_at": "2026-11-27T10:00:00Z"});
    Reply::json(
        200,
        json!({
            "data": [{
                "zone_id": "use1-az2", "zone_name": "us-east-1a", "name_scope": "account",
                "zone_type": "availability-zone", "visibility": "all_accounts",
                "names": [
                    {"mapping": "a", "zone_name": "us-east-1a", "state": null, "opt_in_status": null},
                    {"mapping": "b", "zone_name": "us-east-1c", "state": "available", "opt_in_status": null}
                ]
            }],
            "id": "srv-id",
            "mapping": applied("a"),
            "mappings": [applied("a"), applied("b")],
            "message": "6 zones in aws/us-east-1",
            "source": {"compiled_on": "2026-11-27", "references": []},
            "status": "success",
        }),
    )
}

#[tokio::test]
async fn zone_identities_with_sends_each_mapping_in_order_and_each_filter_as_one_comma_list() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    let query = ZoneIdentityQuery::default()
        .mapping("a".parse().unwrap())
        .mapping("b".parse().unwrap())
        .zone_type(ZoneType::AvailabilityZone)
        .zone_type(ZoneType::LocalZone)
        .zone_id("use1-az1")
        .zone_id("use1-az2")
        .zone_name("us-east-1a");
    client(&server.url(), key())
        .zone_identities_with("aws", "us-east-1", &query)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(
        seen[0].path,
        "/api/v1/providers/aws/regions/us-east-1/zone-identities"
    );
    assert_eq!(
        seen[0].query.as_deref(),
        Some(
            "mapping=a&mapping=b&zone_type=availability-zone,local-zone\
             &zone_id=use1-az1,use1-az2&zone_name=us-east-1a"
        )
    );
}

#[tokio::test]
async fn zone_identities_with_the_default_query_sends_no_query_and_all_types_sends_all() {
    let server = Server::start(vec![side_by_side_reply(), side_by_side_reply()]).await;
    let client = client(&server.url(), key());
    client
        .zone_identities_with("aws", "us-east-1", &ZoneIdentityQuery::default())
        .await
        .unwrap();
    let all = ZoneIdentityQuery::default().all_zone_types();
    client
        .zone_identities_with("aws", "us-east-1", &all)
        .await
        .unwrap();
    let seen = server.seen();
    assert_eq!(seen[0].query, None);
    assert_eq!(seen[1].query.as_deref(), Some("zone_type=all"));
}

#[tokio::test]
async fn zone_identities_with_several_mappings_decodes_each_zones_names_and_the_mappings() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    let query = ZoneIdentityQuery::default()
        .mapping("a".parse().unwrap())
        .mapping("b".parse().unwrap());
    let list = client(&server.url(), key())
        .zone_identities_with("aws", "us-east-1", &query)
        .await
        .unwrap();
    let names: Vec<(&str, Option<&str>, Option<&str>)> = list.data[0]
        .names
        .iter()
        .map(|n| {
            (
                n.mapping.as_str(),
                n.zone_name.as_deref(),
                n.state.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("a", Some("us-east-1a"), None),
            ("b", Some("us-east-1c"), Some("available"))
        ]
    );
    let applied: Vec<&str> = list.mappings.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(applied, ["a", "b"]);
    assert_eq!(list.mapping.as_ref().map(|m| m.id.as_str()), Some("a"));
}

#[tokio::test]
async fn an_invalid_query_answer_is_an_api_error_with_the_invalid_query_code() {
    let body = json!({
        "error": "invalid query parameter \"zone_id\": \"USE1\" is not a zone id",
        "error_code": "invalid_query"
    });
    let server = Server::start(vec![Reply::json(400, body)]).await;
    let query = ZoneIdentityQuery::default().zone_id("USE1");
    let error = client(&server.url(), key())
        .zone_identities_with("aws", "us-east-1", &query)
        .await
        .unwrap_err();
    assert_eq!(
        error.error_code(),
        Some(&ErrorCode::Other(ErrorCode::INVALID_QUERY.to_owned()))
    );
    assert_eq!(error.status().map(|s| s.as_u16()), Some(400));
    assert!(!error.is_retryable());
}

//! `appzone zones --identities` with several mappings and filters, run as a process against
//! the scripted server: the query it sends, a name column per mapping, the body as JSON.

use appzone_client::{exit_code, ZoneIdentityList};
use appzone_test_support::scripted::{Reply, Server};
use serde_json::json;

use crate::run::{appzone, assert_exit, Run};

const KEY: &str = "apz_AAAAAAAAAAAA_0123456789abcdefghijABCDEFGHIJklmn";

async fn against(server: &Server, args: &[&str]) -> Run {
    let url = server.url();
    let mut all = vec!["--url", url.as_str(), "--api-key", KEY];
    all.extend_from_slice(args);
    appzone(&all, &[]).await
}

/// The answer of `?mapping=a&mapping=b&zone_name=us-east-1a`: one zone, its name in each; b
/// does not see the second zone.
fn side_by_side_reply() -> Reply {
    let applied = |id: &str| json!({"id": id, "provider": "aws", "label": id, "imported_at": "2026-11-27T10:00:00Z"});
    let name = |mapping: &str, zone_name: Option<&str>| json!({"mapping": mapping, "zone_name": zone_name, "state": null, "opt_in_status": null});
    Reply::json(
        200,
        json!({
            "data": [
                {"zone_id": "use1-az2", "zone_name": "us-east-1a", "name_scope": "account",
                 "zone_type": "availability-zone", "visibility": "all_accounts",
                 "names": [name("a", Some("us-east-1a")), name("b", Some("us-east-1c"))]},
                {"zone_id": "use1-az3", "zone_name": "us-east-1e", "name_scope": "account",
                 "zone_type": "availability-zone", "visibility": "all_accounts",
                 "names": [name("a", Some("us-east-1e")), name("b", None)]}
            ],
            "id": "srv-id",
            "mapping": applied("a"),
            "mappings": [applied("a"), applied("b")],
            "message": "6 zones in aws/us-east-1; names of zone mappings a, b side by side",
            "source": {"compiled_on": "2026-11-27", "references": []},
            "status": "success",
        }),
    )
}

const SIDE_BY_SIDE: [&str; 15] = [
    "zones",
    "aws",
    "us-east-1",
    "--identities",
    "--mapping",
    "a",
    "--mapping",
    "b",
    "--zone-name",
    "us-east-1a,us-east-1e",
    "--zone-type",
    "availability-zone",
    "--zone-type",
    "local-zone",
    "--zone-id=use1-az2",
];

#[tokio::test]
async fn zones_identities_with_mappings_repeated_prints_a_name_column_per_mapping() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    let run = against(&server, &SIDE_BY_SIDE).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "ZONE_ID   ZONE_NAME(a)  ZONE_NAME(b)  SCOPE    VISIBILITY\n\
         use1-az2  us-east-1a    us-east-1c    account  all_accounts\n\
         use1-az3  us-east-1e    -             account  all_accounts\n\
         6 zones in aws/us-east-1; names of zone mappings a, b side by side\n"
    );
    assert_eq!(run.stderr, "");
}

#[tokio::test]
async fn zones_identities_sends_each_mapping_and_the_filters_as_comma_lists() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    let run = against(&server, &SIDE_BY_SIDE).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        server.seen()[0].query.as_deref(),
        Some(
            "mapping=a&mapping=b&zone_type=availability-zone,local-zone&zone_id=use1-az2\
             &zone_name=us-east-1a,us-east-1e"
        )
    );
}

#[tokio::test]
async fn zones_identities_zone_type_all_asks_for_every_type() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    let args = [
        "zones",
        "aws",
        "us-east-1",
        "--identities",
        "--zone-type",
        "all",
    ];
    assert_exit(&against(&server, &args).await, exit_code::OK);
    assert_eq!(server.seen()[0].query.as_deref(), Some("zone_type=all"));
}

#[tokio::test]
async fn zones_identities_json_with_several_mappings_prints_the_body_with_names() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    let mut args = vec!["--output", "json"];
    args.extend_from_slice(&SIDE_BY_SIDE);
    let run = against(&server, &args).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let list: ZoneIdentityList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.mappings.len(), 2);
    assert_eq!(
        list.data[0].names[1].zone_name.as_deref(),
        Some("us-east-1c")
    );
}

#[tokio::test]
async fn zone_filters_without_identities_are_a_usage_error_naming_identities() {
    let server = Server::start(vec![side_by_side_reply()]).await;
    for filter in ["--zone-name", "--zone-id", "--zone-type"] {
        let run = against(&server, &["zones", "aws", "us-east-1", filter, "x"]).await;
        assert_exit(&run, exit_code::USAGE);
        assert!(
            run.stderr.contains("--identities"),
            "{filter}: {}",
            run.stderr
        );
    }
    assert!(server.seen().is_empty());
}

//! What runs where (API 1.3) from the command line against the scripted server, the queries:
//! `zones --identities --offers` and `instance-types` (what they send, print and refuse), and
//! the help that shows them.

use appzone_client::InstanceTypeList;
use serde_json::json;

use super::*;

/// The contract's instance-type list of `prod` in aws/us-east-1.
fn instance_types_reply() -> Reply {
    Reply::json(
        200,
        json!({
            "data": [
                {"instance_type": "c5.xlarge", "zone_ids": ["use1-az1", "use1-az2", "use1-az4"]},
                {"instance_type": "p4de.24xlarge", "zone_ids": ["use1-az4", "use1-az6"]}
            ],
            "id": "srv-id",
            "message": "2 instance types offered in aws/us-east-1 by zone mapping prod",
            "status": "success",
        }),
    )
}

#[tokio::test]
async fn zones_offers_sends_the_types_as_one_comma_list_beside_the_mappings() {
    let server = Server::start(vec![identities_reply(true)]).await;
    let run = against(
        &server,
        &[
            "zones",
            "aws",
            "us-east-1",
            "--identities",
            "--mapping",
            "prod",
            "--mapping",
            "staging",
            "--offers",
            "p5.48xlarge,c5.xlarge",
            "--offers",
            "t3.micro",
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert!(run.stdout.starts_with("ZONE_ID "), "{}", run.stdout);
    let seen = server.seen();
    assert_eq!(
        seen[0].path,
        "/api/v1/providers/aws/regions/us-east-1/zone-identities"
    );
    assert_eq!(
        seen[0].query.as_deref(),
        Some("mapping=prod&mapping=staging&offers=p5.48xlarge,c5.xlarge,t3.micro")
    );
}

#[tokio::test]
async fn zones_offers_without_a_mapping_is_a_usage_error_before_sending() {
    let server = Server::start(vec![identities_reply(true)]).await;
    let run = against(
        &server,
        &[
            "zones",
            "aws",
            "us-east-1",
            "--identities",
            "--offers",
            "p5.48xlarge",
        ],
    )
    .await;
    assert_exit(&run, exit_code::USAGE);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(
            "error: --offers needs --mapping: offerings are stored with your zone mappings"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .lines()
            .any(|l| l == "Usage: appzone zones [OPTIONS] <PROVIDER> <REGION>"),
        "{}",
        run.stderr
    );
    // Without --identities, as the other filters.
    let run = against(
        &server,
        &[
            "zones",
            "aws",
            "us-east-1",
            "--mapping",
            "prod",
            "--offers",
            "p5.48xlarge",
        ],
    )
    .await;
    assert_exit(&run, exit_code::USAGE);
    assert!(run.stderr.contains("--identities"), "{}", run.stderr);
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn zones_offers_of_a_mapping_without_offerings_exits_invalid_input_with_the_servers_message()
{
    let server = Server::start(vec![Reply::error(
        422,
        "offerings_not_stored",
        "zone mapping \"staging\" holds no instance-type offerings for aws/us-east-1; store them with its zones",
    )])
    .await;
    let args = [
        "zones",
        "aws",
        "us-east-1",
        "--identities",
        "--mapping",
        "staging",
        "--offers",
        "p5.48xlarge",
    ];
    let run = against(&server, &args).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert!(
        run.stderr.starts_with(
            "error: offerings_not_stored: zone mapping \"staging\" holds no instance-type offerings"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(server.attempts(), 1, "not retried");
}

// ---- instance-types -----------------------------------------------------------------------------

#[tokio::test]
async fn instance_types_prints_a_table_then_the_message_and_json_prints_the_body() {
    let server = Server::start(vec![instance_types_reply()]).await;
    let run = against(
        &server,
        &["instance-types", "aws", "us-east-1", "--mapping", "prod"],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "INSTANCE_TYPE  ZONE_IDS\n\
         c5.xlarge      use1-az1,use1-az2,use1-az4\n\
         p4de.24xlarge  use1-az4,use1-az6\n\
         2 instance types offered in aws/us-east-1 by zone mapping prod\n"
    );
    assert_eq!(run.stderr, "");
    let run = against(
        &server,
        &[
            "--output",
            "json",
            "instance-types",
            "aws",
            "us-east-1",
            "--mapping",
            "prod",
            "--zone-id",
            "use1-az4",
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let list: InstanceTypeList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data[1].zone_ids, ["use1-az4", "use1-az6"]);
    assert_eq!(list.id, "srv-id");

    let seen = server.seen();
    assert!(seen.iter().all(|s| s.method == Method::GET
        && s.path == "/api/v1/providers/aws/regions/us-east-1/instance-types"));
    assert_eq!(seen[0].query.as_deref(), Some("mapping=prod"));
    assert_eq!(
        seen[1].query.as_deref(),
        Some("mapping=prod&zone_id=use1-az4")
    );
}

#[tokio::test]
async fn instance_types_errors_exit_with_the_code_of_their_class() {
    for (reply, code) in [
        (
            Reply::error(
                422,
                "offerings_not_stored",
                "zone mapping \"prod\" holds no instance-type offerings",
            ),
            exit_code::INVALID_INPUT,
        ),
        (
            Reply::error(
                404,
                "zone_mapping_not_found",
                "your organization has no zone mapping \"prod\"",
            ),
            exit_code::NOT_FOUND,
        ),
        (
            Reply::error(400, "invalid_query", "invalid query parameter \"zone_id\""),
            exit_code::INVALID_INPUT,
        ),
    ] {
        let server = Server::start(vec![reply]).await;
        let run = against(
            &server,
            &["instance-types", "aws", "us-east-1", "--mapping", "prod"],
        )
        .await;
        assert_exit(&run, code);
        assert_eq!(run.stdout, "");
    }
    // Refused before sending: no --mapping (usage), malformed ids (invalid input).
    let server = Server::start(vec![instance_types_reply()]).await;
    let run = against(&server, &["instance-types", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::USAGE);
    assert!(run.stderr.contains("--mapping <ID>"), "{}", run.stderr);
    for args in [
        &["instance-types", "AWS", "us-east-1", "--mapping", "prod"][..],
        &["instance-types", "aws", "us-east-1", "--mapping", "../prod"],
    ] {
        let run = against(&server, args).await;
        assert_exit(&run, exit_code::INVALID_INPUT);
    }
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn help_shows_the_offerings_commands_with_examples() {
    let run = appzone(&["--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "  instance-types ",
        "aws ec2 describe-instance-type-offerings --location-type availability-zone-id",
        "--offerings prod-offers.json",
        "--mapping prod --mapping staging --offers p5.48xlarge",
        "appzone instance-types aws us-east-1 --mapping prod --zone-id use1-az1",
    ] {
        assert!(
            run.stdout.contains(expected),
            "help lacks {expected:?}:\n{}",
            run.stdout
        );
    }
    let run = appzone(&["instance-types", "--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "Usage: appzone instance-types [OPTIONS] --mapping <ID> <PROVIDER> <REGION>",
        "INSTANCE_TYPE",
        "ZONE_IDS",
        "--zone-id <ZONE_ID>",
        "offerings_not_stored",
        "appzone instance-types aws us-east-1 --mapping prod --zone-id use1-az1",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?}:\n{}",
            run.stdout
        );
    }
    let run = appzone(&["zones", "--help"], &[]).await;
    for expected in ["--offers <TYPE>", "--offers p5.48xlarge"] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?}:\n{}",
            run.stdout
        );
    }
}

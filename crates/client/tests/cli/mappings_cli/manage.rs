//! `mappings list`, `show` and `delete`, their errors, and `--help`.

use super::*;

// ---- mappings list, show, delete ----------------------------------------------------------------

#[tokio::test]
async fn mappings_list_prints_a_table_then_the_message_and_json_prints_the_body() {
    let server = Server::start(vec![mappings_reply()]).await;
    let run = against(&server, &["mappings", "list"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "ID    PROVIDER  ACCOUNT  REGIONS    OFFERINGS  IMPORTED_AT           LABEL\n\
         prod  aws       -        us-east-1  -          2026-11-27T10:00:00Z  production account\n\
         1 zone mapping\n"
    );
    let run = against(&server, &["mappings", "list", "--output", "json"]).await;
    assert_exit(&run, exit_code::OK);
    let list: ZoneMappingList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data[0].id, "prod");
    let seen = server.seen();
    assert!(seen
        .iter()
        .all(|s| s.method == Method::GET && s.path == "/api/v1/zone-mappings"));
}

#[tokio::test]
async fn mappings_show_prints_the_mapping_then_its_pairs() {
    let server = Server::start(vec![mapping_reply(
        200,
        "zone mapping prod: 2 zones in 1 region",
    )])
    .await;
    let run = against(&server, &["mappings", "show", "prod"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "id:          prod\n\
         provider:    aws\n\
         account:     -\n\
         label:       production account\n\
         imported_at: 2026-11-27T10:00:00Z\n\
         \n\
         REGION     ZONE_ID   ZONE_NAME   STATE  OPT_IN_STATUS\n\
         us-east-1  use1-az2  us-east-1a  -      -\n\
         us-east-1  use1-az4  us-east-1b  -      -\n"
    );
    assert_eq!(server.seen()[0].path, "/api/v1/zone-mappings/prod");
    let run = against(&server, &["--output", "json", "mappings", "show", "prod"]).await;
    let body: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        body["data"]["regions"][0]["zones"][1]["zone_name"],
        "us-east-1b"
    );
}

#[tokio::test]
async fn mappings_delete_confirms_in_text_and_json() {
    let server = Server::start(vec![Reply::status(204)]).await;
    let run = against(&server, &["mappings", "delete", "prod"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "deleted zone mapping prod\n");
    let run = against(&server, &["--output", "json", "mappings", "delete", "prod"]).await;
    assert_exit(&run, exit_code::OK);
    let body: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(body, serde_json::json!({"deleted": "prod"}));
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen
        .iter()
        .all(|s| s.method == Method::DELETE && s.path == "/api/v1/zone-mappings/prod"));
}

#[tokio::test]
async fn mapping_errors_exit_with_the_code_of_their_class() {
    let put_args = |file: &str| -> Vec<String> {
        [
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            file,
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let file = file_with(DESCRIBE_US_EAST_1);
    let put = put_args(file.path().to_str().unwrap());
    let put: Vec<&str> = put.iter().map(String::as_str).collect();
    let show: &[&str] = &["mappings", "show", "prod"];
    let delete: &[&str] = &["mappings", "delete", "prod"];
    let identities: &[&str] = &[
        "zones",
        "azure",
        "eastus",
        "--identities",
        "--mapping",
        "prod",
    ];
    let cases: Vec<(&str, Reply, &[&str], u8, &str)> = vec![
        (
            "show of a missing mapping",
            Reply::error(404, ErrorCode::ZONE_MAPPING_NOT_FOUND, "zone mapping not found: your organization has no zone mapping \"prod\""),
            show,
            exit_code::NOT_FOUND,
            "error: zone_mapping_not_found: your organization has no zone mapping \"prod\"",
        ),
        (
            "delete of a missing mapping",
            Reply::error(404, ErrorCode::ZONE_MAPPING_NOT_FOUND, "no such mapping"),
            delete,
            exit_code::NOT_FOUND,
            "error: zone_mapping_not_found: no such mapping",
        ),
        (
            "delete by a member",
            Reply::error(403, "forbidden", "your role may not change zone mappings; contact your organization admin"),
            delete,
            exit_code::FORBIDDEN,
            "error: forbidden: your role may not change zone mappings; contact your organization admin",
        ),
        (
            "put by a member",
            Reply::error(403, "forbidden", "ask your admin"),
            &put,
            exit_code::FORBIDDEN,
            "error: forbidden: ask your admin",
        ),
        (
            "put of zones the catalog does not know",
            Reply::error(422, ErrorCode::INVALID_ZONE_MAPPING, "invalid zone mapping: us-east-1: zone id \"use1-az9\" is not a zone of aws/us-east-1"),
            &put,
            exit_code::INVALID_INPUT,
            "error: invalid_zone_mapping: us-east-1: zone id \"use1-az9\" is not a zone of aws/us-east-1",
        ),
        (
            "put of a body the server cannot read",
            Reply::error(400, ErrorCode::INVALID_BODY, "invalid body: output: expected AvailabilityZones"),
            &put,
            exit_code::INVALID_INPUT,
            "error: invalid_body: output: expected AvailabilityZones",
        ),
        (
            "put over the server's body limit",
            Reply::error(413, "payload_too_large", "request body too large"),
            &put,
            exit_code::INVALID_INPUT,
            "error: payload_too_large: request body too large",
        ),
        (
            "identities with a mapping of another provider",
            Reply::error(422, ErrorCode::INVALID_ZONE_MAPPING, "zone mapping \"prod\" is of aws, not of azure"),
            identities,
            exit_code::INVALID_INPUT,
            "error: invalid_zone_mapping: zone mapping \"prod\" is of aws, not of azure",
        ),
        (
            "list with an invalid key",
            Reply::error(401, "invalid_api_key", "API key is not valid"),
            &["mappings", "list"],
            exit_code::UNAUTHORIZED,
            "error: invalid_api_key: API key is not valid",
        ),
        (
            "delete answered by a gateway's HTML 502",
            // Not retried: the server may have deleted behind the gateway.
            Reply::text(502, "text/html", "<h1>bad gateway</h1>"),
            delete,
            exit_code::API,
            "error: 502 Bad Gateway: not an appzone error body: \"<h1>bad gateway</h1>\"",
        ),
    ];
    for (name, reply, args, code, first_line) in cases {
        let server = Server::start(vec![reply.header("x-request-id", "req-cli-1")]).await;
        let run = against(&server, args).await;
        assert_eq!(run.code, i32::from(code), "{name}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{name}");
        assert_eq!(
            run.stderr,
            format!("{first_line}\nrequest id: req-cli-1\n"),
            "{name}"
        );
        assert_eq!(server.attempts(), 1, "{name}");
    }
}

#[tokio::test]
async fn mapping_commands_need_a_key_and_honour_the_environment() {
    let server = Server::start(vec![mappings_reply()]).await;
    let url = server.url();
    let run = appzone(&["--url", url.as_str(), "mappings", "list"], &[]).await;
    assert_exit(&run, exit_code::UNAUTHORIZED);
    assert_eq!(server.attempts(), 0);
    let run = appzone(
        &["mappings", "list"],
        &[("APPZONE_URL", url.as_str()), ("APPZONE_API_KEY", KEY)],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(server.seen()[0].header(API_KEY.as_str()), Some(KEY));

    let refused = format!("http://{}", closed_port().await);
    let run = appzone(
        &["mappings", "delete", "prod"],
        &[("APPZONE_URL", refused.as_str()), ("APPZONE_API_KEY", KEY)],
    )
    .await;
    assert_exit(&run, exit_code::TRANSPORT);
}

#[tokio::test]
async fn help_shows_the_mapping_commands_with_examples() {
    let run = appzone(&["--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "  mappings ",
        "appzone zones aws us-east-1 --identities",
        "appzone mappings put prod --provider aws",
        "aws ec2 describe-availability-zones",
    ] {
        assert!(
            run.stdout.contains(expected),
            "help lacks {expected:?}:\n{}",
            run.stdout
        );
    }
    let run = appzone(&["zones", "--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "Usage: appzone zones [OPTIONS] <PROVIDER> <REGION>",
        "--identities",
        "--mapping <ID>",
        "ZONE_ID",
        "appzone zones aws us-east-1 --identities --mapping prod",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?}:\n{}",
            run.stdout
        );
    }
    let run = appzone(&["mappings", "put", "--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "Usage: appzone mappings put [OPTIONS] --provider <PROVIDER> <ID>",
        "[possible values: aws, azure, gcp]",
        "az account list-locations -o json",
        "--file -",
        "--offerings <FILE>...",
        "aws ec2 describe-instance-type-offerings --location-type availability-zone-id",
        "gzip-compressed",
    ] {
        assert!(
            run.stdout.contains(expected),
            "{expected:?}:\n{}",
            run.stdout
        );
    }
    for sub in ["list", "show", "delete"] {
        let run = appzone(&["mappings", sub, "--help"], &[]).await;
        assert_exit(&run, exit_code::OK);
        assert!(
            run.stdout
                .contains(&format!("Usage: appzone mappings {sub}")),
            "{}",
            run.stdout
        );
    }
}

//! `zones --identities [--mapping ID]`.

use super::*;

// ---- zones --identities -------------------------------------------------------------------------

#[tokio::test]
async fn zones_identities_prints_a_table_with_a_dash_for_unknown_names_then_the_message() {
    let server = Server::start(vec![identities_reply(false)]).await;
    let run = against(&server, &["zones", "aws", "us-east-1", "--identities"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "ZONE_ID   ZONE_NAME  SCOPE    VISIBILITY\n\
         use1-az1  -          account  all_accounts\n\
         use1-az2  -          account  all_accounts\n\
         2 zones in aws/us-east-1\n"
    );
    assert_eq!(run.stderr, "");
    let seen = server.seen();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].path,
        "/api/v1/providers/aws/regions/us-east-1/zone-identities"
    );
    assert_eq!(seen[0].query, None);
    assert_eq!(seen[0].header(API_KEY.as_str()), Some(KEY));
}

#[tokio::test]
async fn zones_identities_with_a_mapping_sends_it_and_shows_its_names() {
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
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "ZONE_ID   ZONE_NAME   SCOPE    VISIBILITY\n\
         use1-az1  us-east-1d  account  all_accounts\n\
         use1-az2  us-east-1a  account  all_accounts\n\
         2 zones in aws/us-east-1\n"
    );
    assert_eq!(server.seen()[0].query.as_deref(), Some("mapping=prod"));
}

#[tokio::test]
async fn zones_identities_json_prints_the_body_on_one_line() {
    let server = Server::start(vec![identities_reply(true)]).await;
    let run = against(
        &server,
        &[
            "--output",
            "json",
            "zones",
            "aws",
            "us-east-1",
            "--identities",
            "--mapping",
            "prod",
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let list: ZoneIdentityList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data[0].zone_name.as_deref(), Some("us-east-1d"));
    assert_eq!(list.mapping.map(|m| m.id), Some("prod".to_owned()));
    let body: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(body["data"][1]["zone_name"], "us-east-1a");
    assert_eq!(body["source"]["compiled_on"], "2026-11-27");
}

#[tokio::test]
async fn zones_without_identities_is_unchanged() {
    let server = Server::start(vec![Reply::zones(&["us-east-1a", "us-east-1b"])]).await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "us-east-1a\nus-east-1b\n");
    assert_eq!(
        server.seen()[0].path,
        "/api/v1/providers/aws/regions/us-east-1/zones"
    );
}

#[tokio::test]
async fn mapping_without_identities_is_a_usage_error_naming_identities() {
    let server = Server::start(vec![identities_reply(true)]).await;
    let run = against(&server, &["zones", "aws", "us-east-1", "--mapping", "prod"]).await;
    assert_exit(&run, exit_code::USAGE);
    assert_eq!(run.stdout, "");
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    assert!(run.stderr.contains("--identities"), "{}", run.stderr);
    assert!(!run.stderr.contains(KEY), "{}", run.stderr);
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn a_malformed_mapping_id_is_invalid_input_before_sending() {
    let server = Server::start(vec![identities_reply(true)]).await;
    for args in [
        &[
            "zones",
            "aws",
            "us-east-1",
            "--identities",
            "--mapping",
            "../prod",
        ][..],
        &["mappings", "show", "_prod"],
        &["mappings", "delete", "a b"],
    ] {
        let run = against(&server, args).await;
        assert_exit(&run, exit_code::INVALID_INPUT);
        assert_eq!(
            run.stderr,
            "error: invalid zone mapping id: a zone mapping id is 1 to 64 ASCII letters, \
             digits, '.', '_' or '-', starting with a letter or digit\n",
            "{args:?}"
        );
    }
    // With --output json: the code and status the server answers such an id with.
    let run = against(&server, &["--output", "json", "mappings", "show", "a/b"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    let json: serde_json::Value = serde_json::from_str(&run.stderr).unwrap();
    assert_eq!(json["error_code"], ErrorCode::ZONE_MAPPING_NOT_FOUND);
    assert_eq!(json["status"], 404);
    assert_eq!(json["request_id"], serde_json::Value::Null);
    assert_eq!(server.attempts(), 0);
}

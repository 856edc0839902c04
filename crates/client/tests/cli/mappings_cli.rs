//! The `appzone` commands of API 1.2, run as a process: `zones --identities [--mapping ID]` and
//! `mappings put|list|show|delete`, against the scripted server for what goes on the wire and
//! what is printed, and against the real server end to end.

use std::process::Stdio;
use std::time::Duration;

use appzone_client::{exit_code, ErrorCode, ZoneIdentityList, ZoneMappingList};
use appzone_contract::headers::API_KEY;
use appzone_test_support::TestApp;
use http::Method;
use tokio::io::AsyncWriteExt;

use crate::run::{appzone, assert_exit, Run};
use appzone_test_support::fixtures::{DESCRIBE_US_EAST_1, LIST_LOCATIONS};
use appzone_test_support::scripted::{closed_port, Reply, Server};
use appzone_test_support::scripted::{identities_reply, mapping_reply, mappings_reply};

const KEY: &str = "apz_AAAAAAAAAAAA_0123456789abcdefghijABCDEFGHIJklmn";

/// Runs `appzone --url <server> --api-key KEY <args>`.
async fn against(server: &Server, args: &[&str]) -> Run {
    let url = server.url();
    let mut all = vec!["--url", url.as_str(), "--api-key", KEY];
    all.extend_from_slice(args);
    appzone(&all, &[]).await
}

/// Runs `appzone <args>` with `stdin` on its standard input and `APPZONE_URL`/`APPZONE_API_KEY`
/// from `env` only.
async fn appzone_with_stdin(args: &[&str], env: &[(&str, &str)], stdin: &[u8]) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_appzone"));
    command
        .args(args)
        .env_remove("APPZONE_URL")
        .env_remove("APPZONE_API_KEY")
        .env("COLUMNS", "100")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    drop(input);
    let output = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("appzone did not finish within 30 s")
        .unwrap();
    Run {
        code: output.status.code().unwrap(),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// A file holding `contents`, removed when the returned guard drops.
fn file_with(contents: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, contents.as_bytes()).unwrap();
    file
}

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

// ---- mappings put -------------------------------------------------------------------------------

#[tokio::test]
async fn mappings_put_sends_the_file_unchanged_and_says_whether_it_created_or_replaced() {
    let server = Server::start(vec![
        mapping_reply(201, "zone mapping prod stored: 2 zones in 1 region"),
        mapping_reply(200, "zone mapping prod replaced: 2 zones in 1 region"),
    ])
    .await;
    let file = file_with(DESCRIBE_US_EAST_1);
    let path = file.path().to_str().unwrap();
    let args = [
        "mappings",
        "put",
        "prod",
        "--provider",
        "aws",
        "--label",
        "production account",
        "--file",
        path,
    ];
    let run = against(&server, &args).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "created zone mapping prod: 2 zones in 1 region\n"
    );
    assert_eq!(run.stderr, "");
    let run = against(&server, &args).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "replaced zone mapping prod: 2 zones in 1 region\n"
    );

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    let fixture: serde_json::Value = serde_json::from_str(DESCRIBE_US_EAST_1).unwrap();
    for request in &seen {
        assert_eq!(request.method, Method::PUT);
        assert_eq!(request.path, "/api/v1/zone-mappings/prod");
        assert_eq!(request.header("content-type"), Some("application/json"));
        let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"provider": "aws", "label": "production account", "output": fixture})
        );
    }
}

#[tokio::test]
async fn mappings_put_json_prints_the_body_with_created() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let file = file_with(DESCRIBE_US_EAST_1);
    let run = against(
        &server,
        &[
            "--output",
            "json",
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            file.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let body: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(body["created"], true);
    assert_eq!(body["data"]["id"], "prod");
    assert_eq!(
        body["data"]["regions"][0]["zones"][0]["zone_id"],
        "use1-az2"
    );
    assert_eq!(body["status"], "success");
    // No --label: none is sent, the server uses the id.
    let sent: serde_json::Value = serde_json::from_slice(&server.seen()[0].body).unwrap();
    assert_eq!(sent.get("label"), None, "{sent}");
}

#[tokio::test]
async fn mappings_put_reads_stdin_for_a_dash() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let url = server.url();
    let run = appzone_with_stdin(
        &[
            "mappings",
            "put",
            "sub-a",
            "--provider",
            "azure",
            "--file",
            "-",
        ],
        &[("APPZONE_URL", url.as_str()), ("APPZONE_API_KEY", KEY)],
        LIST_LOCATIONS.as_bytes(),
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let seen = server.seen();
    assert_eq!(seen[0].path, "/api/v1/zone-mappings/sub-a");
    let body: serde_json::Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(body["provider"], "azure");
    let fixture: serde_json::Value = serde_json::from_str(LIST_LOCATIONS).unwrap();
    assert_eq!(body["output"], fixture);
}

#[tokio::test]
async fn mappings_put_refuses_what_it_cannot_send_before_sending() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let not_json = file_with("AvailabilityZones: none\n");
    let run = against(
        &server,
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            not_json.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("is not JSON"),
        "{}",
        run.stderr
    );
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);

    // A file that cannot be read: the command could not do its work.
    let run = against(
        &server,
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            "/nonexistent/us-east-1.json",
        ],
    )
    .await;
    assert_exit(&run, exit_code::FAILURE);
    assert!(
        run.stderr
            .starts_with("error: cannot read /nonexistent/us-east-1.json: "),
        "{}",
        run.stderr
    );

    // Over 1 MiB once compact: the client's local 413.
    let big = format!(
        "{{\"AvailabilityZones\": [], \"padding\": \"{}\"}}",
        "x".repeat(1024 * 1024)
    );
    let big = file_with(&big);
    let run = against(
        &server,
        &[
            "--output",
            "json",
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            big.path().to_str().unwrap(),
        ],
    )
    .await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    let json: serde_json::Value = serde_json::from_str(&run.stderr).unwrap();
    assert_eq!(json["error_code"], "payload_too_large", "{json}");
    assert_eq!(json["status"], 413);

    // Usage errors: a provider whose names hold for every project, no --file, no --provider.
    for args in [
        &[
            "mappings",
            "put",
            "prod",
            "--provider",
            "gcp",
            "--file",
            "-",
        ][..],
        &["mappings", "put", "prod", "--provider", "aws"],
        &["mappings", "put", "prod", "--file", "-"],
        &["mappings"],
    ] {
        let run = against(&server, args).await;
        assert_exit(&run, exit_code::USAGE);
        assert_eq!(run.stdout, "", "{args:?}");
    }
    assert_eq!(server.attempts(), 0);
}

// ---- mappings list, show, delete ----------------------------------------------------------------

#[tokio::test]
async fn mappings_list_prints_a_table_then_the_message_and_json_prints_the_body() {
    let server = Server::start(vec![mappings_reply()]).await;
    let run = against(&server, &["mappings", "list"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "ID    PROVIDER  REGIONS    IMPORTED_AT           LABEL\n\
         prod  aws       us-east-1  2026-11-27T10:00:00Z  production account\n\
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
         label:       production account\n\
         imported_at: 2026-11-27T10:00:00Z\n\
         \n\
         REGION     ZONE_ID   ZONE_NAME\n\
         us-east-1  use1-az2  us-east-1a\n\
         us-east-1  use1-az4  us-east-1b\n"
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
    let cases: Vec<(Reply, &[&str], u8, &str)> = vec![
        (
            Reply::error(404, ErrorCode::ZONE_MAPPING_NOT_FOUND, "zone mapping not found: your organization has no zone mapping \"prod\""),
            show,
            exit_code::NOT_FOUND,
            "error: zone_mapping_not_found: your organization has no zone mapping \"prod\"",
        ),
        (
            Reply::error(404, ErrorCode::ZONE_MAPPING_NOT_FOUND, "no such mapping"),
            delete,
            exit_code::NOT_FOUND,
            "error: zone_mapping_not_found: no such mapping",
        ),
        (
            Reply::error(403, "forbidden", "your role may not change zone mappings; contact your organization admin"),
            delete,
            exit_code::FORBIDDEN,
            "error: forbidden: your role may not change zone mappings; contact your organization admin",
        ),
        (
            Reply::error(403, "forbidden", "ask your admin"),
            &put,
            exit_code::FORBIDDEN,
            "error: forbidden: ask your admin",
        ),
        (
            Reply::error(422, ErrorCode::INVALID_ZONE_MAPPING, "invalid zone mapping: us-east-1: zone id \"use1-az9\" is not a zone of aws/us-east-1"),
            &put,
            exit_code::INVALID_INPUT,
            "error: invalid_zone_mapping: us-east-1: zone id \"use1-az9\" is not a zone of aws/us-east-1",
        ),
        (
            Reply::error(400, ErrorCode::INVALID_BODY, "invalid body: output: expected AvailabilityZones"),
            &put,
            exit_code::INVALID_INPUT,
            "error: invalid_body: output: expected AvailabilityZones",
        ),
        (
            Reply::error(413, "payload_too_large", "request body too large"),
            &put,
            exit_code::INVALID_INPUT,
            "error: payload_too_large: request body too large",
        ),
        (
            Reply::error(422, ErrorCode::INVALID_ZONE_MAPPING, "zone mapping \"prod\" is of aws, not of azure"),
            identities,
            exit_code::INVALID_INPUT,
            "error: invalid_zone_mapping: zone mapping \"prod\" is of aws, not of azure",
        ),
        (
            Reply::error(401, "invalid_api_key", "API key is not valid"),
            &["mappings", "list"],
            exit_code::UNAUTHORIZED,
            "error: invalid_api_key: API key is not valid",
        ),
        (
            // Not retried: the server may have deleted behind the gateway.
            Reply::text(502, "text/html", "<h1>bad gateway</h1>"),
            delete,
            exit_code::API,
            "error: 502 Bad Gateway: not an appzone error body: \"<h1>bad gateway</h1>\"",
        ),
    ];
    for (reply, args, code, first_line) in cases {
        let server = Server::start(vec![reply.header("x-request-id", "req-cli-1")]).await;
        let run = against(&server, args).await;
        assert_eq!(run.code, i32::from(code), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert_eq!(
            run.stderr,
            format!("{first_line}\nrequest id: req-cli-1\n"),
            "{args:?}"
        );
        assert_eq!(server.attempts(), 1, "{args:?}");
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
        "Usage: appzone mappings put [OPTIONS] --provider <PROVIDER> --file <FILE> <ID>",
        "[possible values: aws, azure]",
        "az account list-locations -o json",
        "--file -",
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

// ---- end to end ---------------------------------------------------------------------------------

#[tokio::test]
async fn the_commands_store_apply_list_show_and_delete_a_mapping_on_the_real_server() {
    let server = TestApp::sqlite().await;
    let env = |key: &str| -> Vec<(String, String)> {
        vec![
            ("APPZONE_URL".to_owned(), server.base.clone()),
            ("APPZONE_API_KEY".to_owned(), key.to_owned()),
        ]
    };
    let run_as = |key: String, args: Vec<&'static str>, extra: Option<String>| {
        let env = env(&key);
        async move {
            let env: Vec<(&str, &str)> =
                env.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
            let mut all: Vec<&str> = args;
            if let Some(extra) = extra.as_deref() {
                all.push(extra);
            }
            appzone(&all, &env).await
        }
    };
    let file = file_with(DESCRIBE_US_EAST_1);
    let path = file.path().to_str().unwrap().to_owned();
    let put = vec![
        "mappings",
        "put",
        "prod",
        "--provider",
        "aws",
        "--label",
        "production",
        "--file",
    ];

    let run = run_as(server.member_key.clone(), put.clone(), Some(path.clone())).await;
    assert_exit(&run, exit_code::FORBIDDEN);
    let run = run_as(server.admin_key.clone(), put.clone(), Some(path.clone())).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "created zone mapping prod: 6 zones in 1 region\n"
    );
    let run = run_as(server.admin_key.clone(), put, Some(path)).await;
    assert_eq!(
        run.stdout,
        "replaced zone mapping prod: 6 zones in 1 region\n"
    );

    let run = run_as(
        server.member_key.clone(),
        vec![
            "zones",
            "aws",
            "us-east-1",
            "--identities",
            "--mapping",
            "prod",
        ],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], "ZONE_ID   ZONE_NAME   SCOPE    VISIBILITY");
    assert_eq!(lines[1], "use1-az1  us-east-1d  account  all_accounts");
    assert_eq!(lines.len(), 8, "{}", run.stdout);
    assert!(lines[7].contains("zone mapping prod"), "{}", run.stdout);

    let run = run_as(
        server.member_key.clone(),
        vec!["zones", "aws", "us-east-1", "--identities"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout.lines().nth(1),
        Some("use1-az1  -          account  all_accounts")
    );

    let run = run_as(server.member_key.clone(), vec!["mappings", "list"], None).await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .unwrap_or_default()
            .starts_with("prod  aws       us-east-1  "),
        "{}",
        run.stdout
    );
    let run = run_as(
        server.member_key.clone(),
        vec!["mappings", "show", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout.contains("\nus-east-1  use1-az2  us-east-1a\n"),
        "{}",
        run.stdout
    );

    let run = run_as(
        server.member_key.clone(),
        vec!["mappings", "delete", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::FORBIDDEN);
    let run = run_as(
        server.admin_key.clone(),
        vec!["mappings", "delete", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "deleted zone mapping prod\n");
    let run = run_as(
        server.admin_key.clone(),
        vec!["mappings", "delete", "prod"],
        None,
    )
    .await;
    assert_exit(&run, exit_code::NOT_FOUND);
    assert!(
        run.stderr.starts_with(
            "error: zone_mapping_not_found: your organization has no zone mapping \"prod\""
        ),
        "{}",
        run.stderr
    );
}

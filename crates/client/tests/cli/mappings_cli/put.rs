//! `mappings put`.

use super::*;

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

/// One thing `mappings put` refuses before sending: its arguments, its exit code, and what its
/// stderr must say.
struct Refusal<'a> {
    name: &'static str,
    args: Vec<&'a str>,
    code: u8,
    stderr: fn(&str) -> bool,
}

#[tokio::test]
async fn mappings_put_refuses_what_it_cannot_send_before_sending() {
    let server = Server::start(vec![mapping_reply(201, "stored")]).await;
    let not_json = file_with("AvailabilityZones: none\n");
    // Zones over 1 MiB once compact (the API's limit for `output`): the client's local 413.
    let big = file_with(&format!(
        "{{\"AvailabilityZones\": [], \"padding\": \"{}\"}}",
        "x".repeat(1024 * 1024)
    ));
    let put = |file| {
        vec![
            "mappings",
            "put",
            "prod",
            "--provider",
            "aws",
            "--file",
            file,
        ]
    };
    let cases = [
        Refusal {
            name: "a file that is not JSON",
            args: put(not_json.path().to_str().unwrap()),
            code: exit_code::INVALID_INPUT,
            stderr: |stderr| {
                stderr.starts_with("error: ")
                    && stderr.contains("is not JSON")
                    && stderr.lines().count() == 1
            },
        },
        Refusal {
            // The command could not do its work.
            name: "a file that cannot be read",
            args: put("/nonexistent/us-east-1.json"),
            code: exit_code::FAILURE,
            stderr: |stderr| stderr.starts_with("error: cannot read /nonexistent/us-east-1.json: "),
        },
        Refusal {
            name: "zones over 1 MiB, with --output json",
            args: [
                &["--output", "json"][..],
                &put(big.path().to_str().unwrap()),
            ]
            .concat(),
            code: exit_code::INVALID_INPUT,
            stderr: |stderr| {
                let json: serde_json::Value = serde_json::from_str(stderr).unwrap();
                json["error_code"] == "payload_too_large" && json["status"] == 413
            },
        },
        Refusal {
            // GCP names hold for every project: a gcp mapping holds offerings alone.
            name: "gcp with a zones file",
            args: vec![
                "mappings",
                "put",
                "prod",
                "--provider",
                "gcp",
                "--file",
                "-",
            ],
            code: exit_code::USAGE,
            stderr: |stderr| stderr.starts_with("error: "),
        },
        Refusal {
            name: "no --file",
            args: vec!["mappings", "put", "prod", "--provider", "aws"],
            code: exit_code::USAGE,
            stderr: |stderr| stderr.starts_with("error: "),
        },
        Refusal {
            name: "no --provider",
            args: vec!["mappings", "put", "prod", "--file", "-"],
            code: exit_code::USAGE,
            stderr: |stderr| stderr.starts_with("error: "),
        },
        Refusal {
            name: "no subcommand",
            args: vec!["mappings"],
            code: exit_code::USAGE,
            stderr: |stderr| !stderr.is_empty(),
        },
    ];
    for case in cases {
        let name = case.name;
        let run = against(&server, &case.args).await;
        assert_eq!(run.code, i32::from(case.code), "{name}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{name}");
        assert!((case.stderr)(&run.stderr), "{name}: {}", run.stderr);
    }
    assert_eq!(server.attempts(), 0);
}

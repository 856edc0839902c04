//! The commands' output, their environment, and `--help`.

use super::*;

#[tokio::test]
async fn zones_prints_one_zone_per_line() {
    let server = Server::start(vec![Reply::zones(&[
        "us-east-1a",
        "us-east-1b",
        "us-east-1c",
    ])])
    .await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "us-east-1a\nus-east-1b\nus-east-1c\n");
    assert_eq!(run.stderr, "");
    let seen = server.seen();
    assert_eq!(
        seen[0].path,
        "/api/v1/providers/aws/regions/us-east-1/zones"
    );
    assert_eq!(seen[0].header(API_KEY.as_str()), Some(KEY));
}

#[tokio::test]
async fn zones_json_prints_the_body() {
    let server = Server::start(vec![Reply::zones(&["a", "b"])]).await;
    let run = against(&server, &["--output", "json", "zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1);
    let list: ZoneList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data, ["a", "b"]);
    assert_eq!(list.id, "srv-id");
    assert_eq!(list.status, "success");
    // Global options work after the subcommand too.
    let run = against(&server, &["zones", "aws", "us-east-1", "--output", "json"]).await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout.starts_with("{\"data\":[\"a\",\"b\"]"),
        "{}",
        run.stdout
    );
}

#[tokio::test]
async fn an_empty_region_prints_nothing_and_succeeds() {
    let server = Server::start(vec![Reply::zones(&[])]).await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
}

#[tokio::test]
async fn profiles_delete_confirms_in_text_and_json() {
    let server = Server::start(vec![Reply::status(204)]).await;
    let run = against(
        &server,
        &["profiles", "delete", "prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2"],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(
        run.stdout,
        "deleted profile prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2\n"
    );
    let run = against(
        &server,
        &[
            "--output",
            "json",
            "profiles",
            "delete",
            "prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
        ],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    let body: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"deleted": "prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2"})
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    assert!(seen.iter().all(|s| s.method == http::Method::DELETE
        && s.path == "/api/v1/applications/profiles/prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2"));
}

#[tokio::test]
async fn url_and_key_come_from_the_environment() {
    let server = Server::start(vec![Reply::zones(&["z1"])]).await;
    let url = server.url();
    let run = appzone(
        &["zones", "gcp", "europe-west1"],
        &[("APPZONE_URL", url.as_str()), ("APPZONE_API_KEY", KEY)],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "z1\n");
    assert_eq!(server.seen()[0].header(API_KEY.as_str()), Some(KEY));

    // Flags win over the environment.
    let other = Server::start(vec![Reply::zones(&["z2"])]).await;
    let other_url = other.url();
    let run = appzone(
        &[
            "--url",
            other_url.as_str(),
            "--api-key",
            "flag-key",
            "zones",
            "gcp",
            "europe-west1",
        ],
        &[("APPZONE_URL", url.as_str()), ("APPZONE_API_KEY", KEY)],
    )
    .await;
    assert_eq!(run.stdout, "z2\n");
    assert_eq!(other.seen()[0].header(API_KEY.as_str()), Some("flag-key"));
    assert_eq!(server.attempts(), 1);
}

#[tokio::test]
async fn profiles_delete_sends_a_fresh_idempotency_key_or_the_one_given() {
    let server = Server::start(vec![Reply::status(204)]).await;
    for _ in 0..2 {
        let run = against(&server, &["profiles", "delete", "p1"]).await;
        assert_exit(&run, exit_code::OK);
    }
    let run = against(
        &server,
        &["profiles", "delete", "p1", "--idempotency-key", "job-7:p1"],
    )
    .await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "deleted profile p1\n");
    let keys: Vec<String> = server
        .seen()
        .iter()
        .map(|s| s.header("idempotency-key").unwrap().to_owned())
        .collect();
    assert_eq!(keys.len(), 3);
    assert_ne!(keys[0], keys[1], "a fresh key per run");
    assert_eq!(keys[2], "job-7:p1");

    // Not a key: refused before sending, as invalid input.
    let run = against(
        &server,
        &["profiles", "delete", "p1", "--idempotency-key", "two words"],
    )
    .await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_lines(&run.stderr, &["error: invalid idempotency key: it must be"]);
    assert_eq!(server.attempts(), 3);
}

#[tokio::test]
async fn help_shows_examples_and_exit_codes_but_not_the_key() {
    let run = appzone(&["--help"], &[("APPZONE_API_KEY", KEY)]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "Examples:",
        "appzone zones aws us-east-1",
        "appzone profiles delete",
        "Exit codes:",
        "5  not found",
        "APPZONE_URL",
        "APPZONE_API_KEY",
        "--output",
        "--timeout",
    ] {
        assert!(
            run.stdout.contains(expected),
            "help lacks {expected:?}:\n{}",
            run.stdout
        );
    }
    assert!(
        !run.stdout.contains(KEY),
        "help shows the key:\n{}",
        run.stdout
    );

    let run = appzone(&["profiles", "delete", "--help"], &[]).await;
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("Usage: appzone profiles delete"),
        "{}",
        run.stdout
    );

    let run = appzone(&["--version"], &[]).await;
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout.trim(),
        format!("appzone {}", env!("CARGO_PKG_VERSION"))
    );
}

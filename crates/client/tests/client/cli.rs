//! The `appzone` binary, run as a process against the scripted server.

use std::process::Stdio;
use std::time::{Duration, Instant};

use appzone_contract::headers::API_KEY;
use appzone_contract::ZoneList;

use crate::support::{closed_port, Reply, Server};

const KEY: &str = "apz_AAAAAAAAAAAA_0123456789abcdefghijABCDEFGHIJklmn";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs `appzone` with `args` and only the `APPZONE_*` variables in `env`.
async fn appzone(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_appzone"));
    command
        .args(args)
        .env_remove("APPZONE_URL")
        .env_remove("APPZONE_API_KEY")
        .env("COLUMNS", "100")
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = tokio::time::timeout(Duration::from_secs(30), command.output())
        .await
        .expect("appzone did not finish within 30 s")
        .unwrap();
    Run {
        code: output
            .status
            .code()
            .expect("appzone was killed by a signal"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

/// Runs `appzone --url <server> --api-key KEY <args>`.
async fn against(server: &Server, args: &[&str]) -> Run {
    let url = server.url();
    let mut all = vec!["--url", url.as_str(), "--api-key", KEY];
    all.extend_from_slice(args);
    appzone(&all, &[]).await
}

#[tokio::test]
async fn zones_prints_one_zone_per_line() {
    let server = Server::start(vec![Reply::zones(&[
        "us-east-1a",
        "us-east-1b",
        "us-east-1c",
    ])])
    .await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
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
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 1);
    let list: ZoneList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data, ["a", "b"]);
    assert_eq!(list.id, "srv-id");
    assert_eq!(list.status, "success");
    // Global options work after the subcommand too.
    let run = against(&server, &["zones", "aws", "us-east-1", "--output", "json"]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
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
    assert_eq!(run.code, 0, "{}", run.stderr);
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
    assert_eq!(run.code, 0, "{}", run.stderr);
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
    assert_eq!(run.code, 0, "{}", run.stderr);
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
async fn api_errors_print_one_line_and_exit_with_the_documented_code() {
    let cases: [(Reply, &[&str], i32, &str); 8] = [
        (
            Reply::error(401, "invalid_api_key", "API key is not valid"),
            &["zones", "aws", "r"],
            3,
            "invalid_api_key",
        ),
        (
            Reply::error(401, "missing_api_key", "no key"),
            &["profiles", "delete", "p1"],
            3,
            "missing_api_key",
        ),
        (
            Reply::error(403, "forbidden", "contact your organization admin"),
            &["profiles", "delete", "p1"],
            4,
            "forbidden",
        ),
        (
            Reply::error(404, "profile_not_found", "application profile not found"),
            &["profiles", "delete", "p1"],
            5,
            "profile_not_found",
        ),
        (
            Reply::error(404, "region_not_found", "no region"),
            &["zones", "aws", "r"],
            5,
            "region_not_found",
        ),
        (
            Reply::error(400, "invalid_provider", "unknown provider"),
            &["zones", "nope", "r"],
            6,
            "invalid_provider",
        ),
        (
            Reply::error(500, "internal_error", "bug"),
            &["zones", "aws", "r"],
            6,
            "internal_error",
        ),
        (
            Reply::error(503, "unavailable", "busy"),
            &["profiles", "delete", "p1"],
            6,
            "unavailable",
        ),
    ];
    for (reply, args, code, error_code) in cases {
        let server = Server::start(vec![reply.header("x-request-id", "req-cli-1")]).await;
        let run = against(&server, args).await;
        assert_eq!(run.code, code, "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        let line = run.stderr.trim_end();
        assert!(
            line.starts_with("appzone: error: appzone API error "),
            "{line}"
        );
        assert!(line.contains(error_code), "{line}");
        assert!(line.ends_with("(request id req-cli-1)"), "{line}");
        assert!(!line.contains(KEY));
    }
}

#[tokio::test]
async fn other_failures_have_their_own_exit_codes() {
    // 7: a 200 that is not a zone list.
    let server = Server::start(vec![Reply::text(200, "text/html", "<html>hi</html>")]).await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_eq!(run.code, 7, "{}", run.stderr);
    assert!(
        run.stderr.contains("could not be decoded"),
        "{}",
        run.stderr
    );

    // 6: an error answer without the contract's body.
    let server = Server::start(vec![Reply::text(502, "text/html", "<h1>bad gateway</h1>")]).await;
    let run = against(&server, &["profiles", "delete", "p1"]).await;
    assert_eq!(run.code, 6, "{}", run.stderr);
    assert!(run.stderr.contains("502 Bad Gateway") && run.stderr.contains("<h1>bad gateway</h1>"));

    // 5 without a request: a malformed profile id.
    let server = Server::start(vec![Reply::status(204)]).await;
    let run = against(&server, &["profiles", "delete", "../../etc/passwd"]).await;
    assert_eq!(run.code, 5, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("appzone: error: profile not found: "),
        "{}",
        run.stderr
    );

    // 1 without a request: invalid provider id, bad URL, no key.
    let run = against(&server, &["zones", "AWS", "us-east-1"]).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("provider id"), "{}", run.stderr);
    let run = appzone(
        &["--url", "not a url", "--api-key", KEY, "zones", "aws", "r"],
        &[],
    )
    .await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("invalid base URL"), "{}", run.stderr);
    let url = server.url();
    let run = appzone(&["--url", url.as_str(), "zones", "aws", "r"], &[]).await;
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("APPZONE_API_KEY"), "{}", run.stderr);
    assert_eq!(server.attempts(), 0);

    // 1: usage errors.
    for args in [
        &["zones", "aws"][..],
        &["frobnicate"],
        &["--output", "yaml", "zones", "a", "b"],
        &["--timeout", "soon", "zones", "a", "b"],
    ] {
        let run = appzone(args, &[("APPZONE_API_KEY", KEY)]).await;
        assert_eq!(run.code, 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("error"), "{}", run.stderr);
        assert_eq!(run.stdout, "");
    }
}

#[tokio::test]
async fn transport_failures_and_timeouts_exit_2() {
    let addr = closed_port().await;
    let url = format!("http://{addr}");
    let run = appzone(
        &[
            "--url",
            url.as_str(),
            "--api-key",
            KEY,
            "profiles",
            "delete",
            "p1",
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(
        run.stderr.contains("could not connect") && run.stderr.contains("request id"),
        "{}",
        run.stderr
    );

    let server = Server::start(vec![Reply::zones(&["late"]).delay(Duration::from_secs(10))]).await;
    let started = Instant::now();
    let run = against(
        &server,
        &["--timeout", "300ms", "zones", "aws", "us-east-1"],
    )
    .await;
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("timed out after 300ms"),
        "{}",
        run.stderr
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn help_shows_examples_and_exit_codes_but_not_the_key() {
    let run = appzone(&["--help"], &[("APPZONE_API_KEY", KEY)]).await;
    assert_eq!(run.code, 0, "{}", run.stderr);
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

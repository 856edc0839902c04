//! The `appzone` binary, run as a process against the scripted server, and against the real
//! server where its exact answers matter.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use appzone_client::exit_code;
use appzone_contract::headers::API_KEY;
use appzone_contract::{ProviderList, RegionList, ZoneList};
use appzone_test_support::TestApp;

use crate::run::{appzone, assert_exit, Run};
use appzone_test_support::scripted::{closed_port, Reply, Server};

const KEY: &str = "apz_AAAAAAAAAAAA_0123456789abcdefghijABCDEFGHIJklmn";

/// Asserts `stderr` is exactly one line per prefix, each starting with its prefix.
#[track_caller]
fn assert_lines(stderr: &str, prefixes: &[&str]) {
    assert!(stderr.ends_with('\n'), "{stderr:?}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), prefixes.len(), "{stderr}");
    for (line, prefix) in lines.iter().zip(prefixes) {
        assert!(
            line.starts_with(prefix),
            "{line:?} should start with {prefix:?}"
        );
    }
    assert!(!stderr.contains(KEY), "{stderr}");
}

/// Runs `appzone --url <url> <args>` with the admin key of `server` (the real appzone server,
/// for the answers whose exact text the command line's report is about: no such route, unknown
/// region) in `APPZONE_API_KEY`.
async fn as_admin(server: &TestApp, url: &str, args: &[&str]) -> Run {
    let mut all = vec!["--url", url];
    all.extend_from_slice(args);
    appzone(&all, &[("APPZONE_API_KEY", &server.admin_key)]).await
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
async fn api_errors_print_the_code_and_message_then_the_request_id() {
    let cases: [(Reply, &[&str], u8, &str); 8] = [
        (
            Reply::error(401, "invalid_api_key", "API key is not valid"),
            &["zones", "aws", "r"],
            exit_code::UNAUTHORIZED,
            "error: invalid_api_key: API key is not valid",
        ),
        (
            Reply::error(401, "missing_api_key", "no key"),
            &["profiles", "delete", "p1"],
            exit_code::UNAUTHORIZED,
            "error: missing_api_key: no key",
        ),
        (
            Reply::error(403, "forbidden", "contact your organization admin"),
            &["profiles", "delete", "p1"],
            exit_code::FORBIDDEN,
            "error: forbidden: contact your organization admin",
        ),
        (
            Reply::error(404, "profile_not_found", "application profile not found"),
            &["profiles", "delete", "p1"],
            exit_code::NOT_FOUND,
            "error: profile_not_found: application profile not found",
        ),
        (
            // The code in words is not repeated after the code.
            Reply::error(
                404,
                "region_not_found",
                "region not found: aws has no region \"r\"",
            ),
            &["zones", "aws", "r"],
            exit_code::NOT_FOUND,
            "error: region_not_found: aws has no region \"r\"",
        ),
        (
            Reply::error(400, "invalid_provider", "unknown provider"),
            &["zones", "nope", "r"],
            exit_code::INVALID_INPUT,
            "error: invalid_provider: unknown provider",
        ),
        (
            Reply::error(500, "internal_error", "bug"),
            &["zones", "aws", "r"],
            exit_code::API,
            "error: internal_error: bug",
        ),
        (
            Reply::error(503, "unavailable", "busy"),
            &["profiles", "delete", "p1"],
            exit_code::API,
            // A DELETE is retried like a GET (it sends an Idempotency-Key).
            "error: unavailable: busy (after 3 attempts)",
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
    }
}

#[tokio::test]
async fn other_failures_have_their_own_exit_codes() {
    let server = Server::start(vec![Reply::text(200, "text/html", "<html>hi</html>")]).await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::UNEXPECTED_ANSWER);
    assert_lines(
        &run.stderr,
        &[
            "error: the answer (HTTP 200) could not be decoded: not a zone list: ",
            "request id: ",
            &format!(
                "hint: {} did not answer like an appzone server (not the API's JSON)",
                server.url()
            ),
        ],
    );
    assert!(run.stderr.contains("<html>hi</html>"), "{}", run.stderr);

    // A proxy's error page: the status decides, the missing body gets the hint.
    let server = Server::start(vec![Reply::text(502, "text/html", "<h1>bad gateway</h1>")]).await;
    let run = against(&server, &["profiles", "delete", "p1"]).await;
    assert_exit(&run, exit_code::API);
    assert_lines(
        &run.stderr,
        &[
            "error: 502 Bad Gateway: not an appzone error body: \"<h1>bad gateway</h1>\"",
            "request id: ",
        ],
    );

    // Refused before sending: malformed ids, a bad URL, no key.
    let server = Server::start(vec![Reply::status(204)]).await;
    let run = against(&server, &["profiles", "delete", "../../etc/passwd"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_eq!(
        run.stderr,
        "error: profile id must start with an ASCII letter or digit, got '.'\n"
    );
    let run = against(&server, &["zones", "AWS", "us-east-1"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_eq!(
        run.stderr,
        "error: provider id must start with a lowercase ASCII letter or digit, got 'A'\n"
    );
    let run = appzone(
        &["--url", "not a url", "--api-key", KEY, "zones", "aws", "r"],
        &[],
    )
    .await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_eq!(
        run.stderr,
        "error: invalid base URL: relative URL without a base\n"
    );
    let url = server.url();
    let run = appzone(&["--url", url.as_str(), "zones", "aws", "r"], &[]).await;
    assert_exit(&run, exit_code::UNAUTHORIZED);
    assert_eq!(
        run.stderr,
        "error: no API key: set APPZONE_API_KEY or pass --api-key\n"
    );
    assert_eq!(server.attempts(), 0);

    // Usage errors.
    for args in [
        &["zones", "aws"][..],
        &["frobnicate"],
        &["--output", "yaml", "zones", "a", "b"],
        &["--timeout", "soon", "zones", "a", "b"],
    ] {
        let run = appzone(args, &[("APPZONE_API_KEY", KEY)]).await;
        assert_eq!(
            run.code,
            i32::from(exit_code::USAGE),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert_eq!(run.stdout, "");
    }
}

#[tokio::test]
async fn transport_failures_and_timeouts_exit_9() {
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
    assert_exit(&run, exit_code::TRANSPORT);
    // No request id: the request never reached a server, no log holds it.
    assert_lines(
        &run.stderr,
        &[&format!("error: could not connect to {url}: ")],
    );
    assert!(run.stderr.contains("refused"), "{}", run.stderr);

    let server = Server::start(vec![Reply::zones(&["late"]).delay(Duration::from_secs(10))]).await;
    let started = Instant::now();
    let run = against(
        &server,
        &["--timeout", "300ms", "zones", "aws", "us-east-1"],
    )
    .await;
    assert_exit(&run, exit_code::TRANSPORT);
    assert_lines(
        &run.stderr,
        &[
            &format!(
                "error: no answer from {}: timed out after 300ms",
                server.url()
            ),
            "request id: ",
        ],
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

/// A 429 shows the wait it asked for; with `--output json`, every error is one JSON object on
/// stderr (stdout stays empty), with the same fields whether the server answered or the
/// command refused the input itself.
#[tokio::test]
async fn with_output_json_errors_are_one_json_object_on_stderr_and_a_429_shows_its_retry_after() {
    let limited = || Reply::error(429, "rate_limited", "slow down").header("retry-after", "60");
    let server = Server::start(vec![limited()]).await;
    let run = against(&server, &["zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::API);
    assert_lines(
        &run.stderr,
        &[
            "error: rate_limited: slow down",
            "request id: ",
            "retry after: 60s",
        ],
    );

    let error = |run: &Run| -> serde_json::Value {
        assert_eq!(run.stdout, "", "stdout stays empty");
        assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
        serde_json::from_str(&run.stderr).unwrap()
    };
    let server = Server::start(vec![limited()]).await;
    let run = against(&server, &["--output", "json", "zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::API);
    let json = error(&run);
    assert_eq!(json["error_code"], "rate_limited", "{json}");
    assert_eq!(json["status"], 429);
    assert_eq!(json["retry_after_seconds"], 60);
    assert_eq!(json["exit_code"], i64::from(exit_code::API));
    assert!(
        json["request_id"].as_str().is_some_and(|id| !id.is_empty()),
        "{json}"
    );
    assert!(
        json["error"].as_str().unwrap().contains("slow down"),
        "{json}"
    );

    // Refused before sending: the code and status the server would have answered.
    let refused = format!("http://{}", closed_port().await);
    let env = [("APPZONE_URL", refused.as_str()), ("APPZONE_API_KEY", KEY)];
    let run = appzone(&["--output", "json", "zones", "AWS", "us-east-1"], &env).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    let json = error(&run);
    assert_eq!(json["error_code"], "invalid_provider", "{json}");
    assert_eq!(json["status"], 400);
    assert_eq!(json["request_id"], serde_json::Value::Null);
    assert_eq!(json["exit_code"], i64::from(exit_code::INVALID_INPUT));

    // No connection: no code, no status, no request id (no server saw one).
    let run = appzone(&["--output", "json", "zones", "aws", "us-east-1"], &env).await;
    assert_exit(&run, exit_code::TRANSPORT);
    let json = error(&run);
    for field in ["error_code", "status", "request_id", "retry_after_seconds"] {
        assert_eq!(json[field], serde_json::Value::Null, "{field}: {json}");
    }
    assert!(
        json["error"]
            .as_str()
            .unwrap()
            .starts_with("could not connect"),
        "{json}"
    );
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

// ---- hints for a wrong --url (issue point 15) ---------------------------------------------------

#[tokio::test]
async fn a_base_url_ending_in_api_v1_gets_a_hint_and_not_the_code_of_a_missing_region() {
    let server = TestApp::sqlite().await;
    for url in [
        format!("{}/api/v1", server.base),
        format!("{}/api/v1/", server.base),
    ] {
        let run = as_admin(&server, &url, &["zones", "aws", "us-east-1"]).await;
        assert_exit(&run, exit_code::UNEXPECTED_ANSWER);
        assert_eq!(run.stdout, "");
        assert_lines(
            &run.stderr,
            &[
                "error: not_found: no such route",
                "request id: ",
                "hint: the base URL should not include /api/v1: try --url ",
            ],
        );
        assert!(
            run.stderr
                .ends_with(&format!("try --url {}\n", server.base)),
            "{}",
            run.stderr
        );
    }
    // Another path: the same code, and the hint says what --url should be.
    let run = as_admin(
        &server,
        &format!("{}/appzone", server.base),
        &["zones", "aws", "us-east-1"],
    )
    .await;
    assert_exit(&run, exit_code::UNEXPECTED_ANSWER);
    assert_lines(
        &run.stderr,
        &[
            "error: not_found: no such route",
            "request id: ",
            &format!(
                "hint: {}/appzone answered like an appzone server that has no such route; \
                 --url should be where it listens, such as http://host:8080",
                server.base
            ),
        ],
    );
    // The hint's URL works, and a missing region there has its own code.
    let run = as_admin(&server, &server.base, &["zones", "aws", "us-east-1"]).await;
    assert_exit(&run, exit_code::OK);
    let run = as_admin(&server, &server.base, &["zones", "aws", "mars-1"]).await;
    assert_exit(&run, exit_code::NOT_FOUND);
}

#[tokio::test]
async fn an_html_404_of_another_server_gets_a_hint_and_not_the_code_of_a_missing_region() {
    let page = "<!DOCTYPE html><html><body><h1>404 Not Found</h1></body></html>";
    let server = Server::start(vec![Reply::text(404, "text/html", page)]).await;
    for args in [
        &["zones", "aws", "us-east-1"][..],
        &["profiles", "delete", "p1"],
    ] {
        let run = against(&server, args).await;
        assert_exit(&run, exit_code::UNEXPECTED_ANSWER);
        assert_eq!(run.stdout, "");
        assert_lines(
            &run.stderr,
            &[
                "error: 404 Not Found: not an appzone error body: \"<!DOCTYPE html>",
                "request id: ",
                &format!(
                    "hint: {} did not answer like an appzone server (no JSON error body)",
                    server.url()
                ),
            ],
        );
    }
}

#[tokio::test]
async fn https_to_a_plain_http_server_gets_a_hint() {
    let server = Server::start(vec![Reply::zones(&["z"])]).await;
    let plain = server.url();
    let tls = plain.replacen("http://", "https://", 1);
    let run = appzone(
        &["--url", &tls, "--api-key", KEY, "zones", "aws", "us-east-1"],
        &[],
    )
    .await;
    assert_exit(&run, exit_code::TRANSPORT);
    assert_eq!(run.stdout, "");
    assert_lines(
        &run.stderr,
        &[
            &format!("error: could not connect to {tls}: "),
            &format!("hint: the server speaks plain HTTP; use {plain} instead of https://"),
        ],
    );
    assert!(run.stderr.contains("InvalidContentType"), "{}", run.stderr);
    // The hint's URL works.
    let run = appzone(
        &[
            "--url",
            &plain,
            "--api-key",
            KEY,
            "zones",
            "aws",
            "us-east-1",
        ],
        &[],
    )
    .await;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "z\n"),
        "{}",
        run.stderr
    );
}

// ---- the shape of errors (issue point 16) -------------------------------------------------------

#[tokio::test]
async fn errors_of_the_real_server_are_the_code_and_message_then_the_request_id() {
    let server = TestApp::sqlite().await;
    let run = as_admin(&server, &server.base, &["zones", "aws", "us-east-9"]).await;
    assert_exit(&run, exit_code::NOT_FOUND);
    assert_eq!(run.stdout, "");
    let (first, rest) = run.stderr.split_once('\n').unwrap();
    assert_eq!(
        first,
        "error: region_not_found: aws has no region \"us-east-9\"; GET /api/v1/providers/aws/regions lists its regions"
    );
    let id = rest
        .strip_prefix("request id: ")
        .and_then(|id| id.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    // The server's own id: a ULID.
    assert_eq!(id.len(), 26, "{id}");
    assert!(id.bytes().all(|b| b.is_ascii_alphanumeric()), "{id}");

    let run = as_admin(&server, &server.base, &["zones", "nope", "us-east-1"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_lines(
        &run.stderr,
        &[
            "error: invalid_provider: unknown provider: no provider has the id \"nope\"",
            "request id: ",
        ],
    );
    let run = as_admin(
        &server,
        &server.base,
        &["profiles", "delete", "prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2"],
    )
    .await;
    assert_exit(&run, exit_code::NOT_FOUND);
    assert_lines(
        &run.stderr,
        &[
            "error: profile_not_found: application profile not found",
            "request id: ",
        ],
    );
}

#[tokio::test]
async fn a_servers_message_cannot_break_the_lines_of_the_report() {
    let server = Server::start(vec![Reply::error(
        404,
        "region_not_found",
        "two\nlines\u{1b}[31m",
    )
    .header("x-request-id", "req-cli-1")])
    .await;
    let run = against(&server, &["zones", "aws", "r"]).await;
    assert_eq!(
        run.stderr,
        "error: region_not_found: two lines [31m\nrequest id: req-cli-1\n"
    );
}

// ---- one exit code per class (issue point 17) ---------------------------------------------------

/// How one case of [`every_row_of_the_exit_code_table_is_exercised`] runs.
enum Case {
    /// `appzone <args>` with `APPZONE_API_KEY` set and nothing listening at `APPZONE_URL`.
    Local(&'static [&'static str]),
    /// `appzone <args>` with no API key, against a server that must see nothing.
    NoKey(&'static [&'static str]),
    /// `appzone --url <server> --api-key KEY <args>` against a server answering `reply`.
    Remote(Reply, &'static [&'static str]),
    /// `appzone --url <closed port> <args>`.
    Refused(&'static [&'static str]),
    /// `appzone --url <server> --api-key KEY <args>` with stdout on `/dev/full`.
    StdoutFull(Reply, &'static [&'static str]),
}

#[tokio::test]
async fn every_row_of_the_exit_code_table_is_exercised() {
    use exit_code::*;
    let zones: &[&str] = &["zones", "aws", "us-east-1"];
    let delete: &[&str] = &["profiles", "delete", "p1"];
    // (code, what, how): each class once found locally and once answered by a server, where
    // both can happen.
    let cases: Vec<(u8, &str, Case)> = vec![
        (OK, "zones", Case::Remote(Reply::zones(&["a"]), zones)),
        (OK, "delete", Case::Remote(Reply::status(204), delete)),
        (
            FAILURE,
            "stdout cannot be written",
            Case::StdoutFull(Reply::zones(&["a"]), zones),
        ),
        (USAGE, "missing argument", Case::Local(&["zones", "aws"])),
        (USAGE, "unknown command", Case::Local(&["frobnicate"])),
        (
            USAGE,
            "bad --timeout",
            Case::Local(&["--timeout", "x", "zones", "a", "b"]),
        ),
        (TRANSPORT, "connection refused", Case::Refused(zones)),
        (
            TRANSPORT,
            "timeout",
            Case::Remote(
                Reply::zones(&[]).delay(Duration::from_secs(10)),
                &["--timeout", "200ms", "zones", "aws", "us-east-1"],
            ),
        ),
        (UNAUTHORIZED, "no key, locally", Case::NoKey(zones)),
        (
            UNAUTHORIZED,
            "401 missing_api_key",
            Case::Remote(Reply::error(401, "missing_api_key", "no key"), zones),
        ),
        (
            UNAUTHORIZED,
            "401 invalid_api_key",
            Case::Remote(Reply::error(401, "invalid_api_key", "bad key"), delete),
        ),
        (
            FORBIDDEN,
            "403 forbidden",
            Case::Remote(Reply::error(403, "forbidden", "ask an admin"), delete),
        ),
        (
            NOT_FOUND,
            "404 region_not_found",
            Case::Remote(Reply::error(404, "region_not_found", "no region"), zones),
        ),
        (
            NOT_FOUND,
            "404 profile_not_found",
            Case::Remote(Reply::error(404, "profile_not_found", "no profile"), delete),
        ),
        (
            INVALID_INPUT,
            "malformed provider, locally",
            Case::Local(&["zones", "AWS", "us-east-1"]),
        ),
        (
            INVALID_INPUT,
            "400 invalid_provider",
            Case::Remote(
                Reply::error(400, "invalid_provider", "unknown provider"),
                zones,
            ),
        ),
        (
            INVALID_INPUT,
            "malformed region, locally",
            Case::Local(&["zones", "aws", "US_EAST_1"]),
        ),
        (
            INVALID_INPUT,
            "400 invalid_region",
            Case::Remote(Reply::error(400, "invalid_region", "bad region"), zones),
        ),
        (
            INVALID_INPUT,
            "malformed profile id, locally",
            Case::Local(&["profiles", "delete", "bad id"]),
        ),
        (
            INVALID_INPUT,
            "400 invalid_profile_id (a code this version does not know)",
            Case::Remote(Reply::error(400, "invalid_profile_id", "bad id"), delete),
        ),
        (
            INVALID_INPUT,
            "malformed --url, locally",
            Case::Local(&["--url", "ftp://h", "zones", "aws", "us-east-1"]),
        ),
        (
            UNEXPECTED_ANSWER,
            "404 not_found (no such route)",
            Case::Remote(Reply::error(404, "not_found", "no such route"), zones),
        ),
        (
            UNEXPECTED_ANSWER,
            "HTML 404",
            Case::Remote(Reply::text(404, "text/html", "<h1>Not Found</h1>"), delete),
        ),
        (
            UNEXPECTED_ANSWER,
            "200 that is not a zone list",
            Case::Remote(Reply::text(200, "text/html", "<html></html>"), zones),
        ),
        (
            API,
            "429 rate_limited",
            Case::Remote(Reply::error(429, "rate_limited", "slow down"), delete),
        ),
        (
            API,
            "500 internal_error",
            Case::Remote(Reply::error(500, "internal_error", "bug"), zones),
        ),
        (
            API,
            "405 method_not_allowed",
            Case::Remote(Reply::error(405, "method_not_allowed", "no"), delete),
        ),
    ];
    let mut exercised = BTreeSet::new();
    let mut wrong = Vec::new();
    for (code, what, case) in cases {
        let run = match case {
            Case::Local(args) => {
                // Nothing listens there: a request would fail with another code.
                let refused = format!("http://{}", closed_port().await);
                appzone(args, &[("APPZONE_URL", &refused), ("APPZONE_API_KEY", KEY)]).await
            }
            Case::NoKey(args) => {
                let server = Server::start(vec![Reply::status(204)]).await;
                let url = server.url();
                let mut all = vec!["--url", url.as_str()];
                all.extend_from_slice(args);
                let run = appzone(&all, &[]).await;
                assert_eq!(server.attempts(), 0, "{what}: nothing may be sent");
                run
            }
            Case::Remote(reply, args) => {
                // One attempt: the retries of a GET 429 must not slow the test down.
                let server = Server::start(vec![reply.header("retry-after", "60")]).await;
                against(&server, args).await
            }
            Case::Refused(args) => {
                let refused = format!("http://{}", closed_port().await);
                let mut all = vec!["--url", refused.as_str(), "--api-key", KEY];
                all.extend_from_slice(args);
                appzone(&all, &[]).await
            }
            Case::StdoutFull(reply, args) => {
                let server = Server::start(vec![reply]).await;
                let url = server.url();
                let mut all = vec!["--url", url.as_str(), "--api-key", KEY];
                all.extend_from_slice(args);
                crate::run::appzone_with_full_stdout(&all, &[]).await
            }
        };
        if run.code != i32::from(code) {
            wrong.push(format!(
                "{what}: exit {} instead of {code}: {}",
                run.code, run.stderr
            ));
        }
        if code == OK {
            assert_eq!(run.stderr, "", "{what}");
        } else {
            assert_eq!(run.stdout, "", "{what}");
            assert!(run.stderr.starts_with("error: "), "{what}: {}", run.stderr);
        }
        exercised.insert(code);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let table: BTreeSet<u8> = exit_code::TABLE.iter().map(|row| row.code).collect();
    assert_eq!(
        exercised, table,
        "every row of the table, and no other code"
    );
}

#[tokio::test]
async fn the_help_and_the_readme_show_the_exit_code_table() {
    let run = appzone(&["--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    let section: Vec<&str> = run
        .stdout
        .lines()
        .skip_while(|line| *line != "Exit codes:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .collect();
    let rows: Vec<String> = exit_code::TABLE
        .iter()
        .map(|row| format!("  {}  {}", row.code, row.meaning))
        .collect();
    assert_eq!(section, rows, "{}", run.stdout);

    let readme = include_str!("../../README.md");
    let table: Vec<&str> = readme
        .lines()
        .skip_while(|line| *line != "| exit code | meaning |")
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .collect();
    let rows: Vec<String> = exit_code::TABLE
        .iter()
        .map(|row| format!("| {} | {} |", row.code, row.meaning))
        .collect();
    assert_eq!(table, rows, "crates/client/README.md's exit code table");
}

// ---- usage lines (issue point 18) ---------------------------------------------------------------

#[tokio::test]
async fn usage_does_not_claim_the_api_key_is_required_when_the_environment_has_it() {
    let env = [
        ("APPZONE_API_KEY", KEY),
        ("APPZONE_URL", "http://127.0.0.1:1"),
    ];
    for (args, usage) in [
        (
            &["zones", "aws"][..],
            "Usage: appzone zones [OPTIONS] <PROVIDER> <REGION>",
        ),
        (
            &["profiles", "delete"],
            "Usage: appzone profiles delete [OPTIONS] <ID>",
        ),
        (&["profiles"], "Usage: appzone profiles [OPTIONS] <COMMAND>"),
        (&["--output", "json"], "Usage: appzone [OPTIONS] <COMMAND>"),
    ] {
        let run = appzone(args, &env).await;
        assert_eq!(
            run.code,
            i32::from(exit_code::USAGE),
            "{args:?}: {}",
            run.stderr
        );
        assert!(
            run.stderr.lines().any(|line| line == usage),
            "{args:?}: expected {usage:?}:\n{}",
            run.stderr
        );
        assert!(
            !run.stderr.contains("--api-key"),
            "{args:?}:\n{}",
            run.stderr
        );
        assert!(!run.stderr.contains(KEY), "{args:?}:\n{}", run.stderr);
    }
    for (args, usage) in [
        (&["--help"][..], "Usage: appzone [OPTIONS] <COMMAND>"),
        (
            &["zones", "--help"],
            "Usage: appzone zones [OPTIONS] <PROVIDER> <REGION>",
        ),
    ] {
        let run = appzone(args, &env).await;
        assert_exit(&run, exit_code::OK);
        assert!(
            run.stdout.lines().any(|line| line == usage),
            "{args:?}: expected {usage:?}:\n{}",
            run.stdout
        );
    }
}

// ---- provider and region listings (issue 17) ----------------------------------------------------

#[tokio::test]
async fn providers_prints_one_provider_per_line_and_json_prints_the_body() {
    let server = Server::start(vec![Reply::providers(&["aws", "gcp", "azure"])]).await;
    let run = against(&server, &["providers"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "aws\ngcp\nazure\n");
    assert_eq!(run.stderr, "");

    let run = against(&server, &["--output", "json", "providers"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let list: ProviderList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data, ["aws", "gcp", "azure"]);
    assert_eq!(list.id, "srv-id");
    assert_eq!(list.message, "3 providers");
    assert_eq!(list.status, "success");

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(request.method, http::Method::GET);
        assert_eq!(request.path, "/api/v1/providers");
        assert_eq!(request.header(API_KEY.as_str()), Some(KEY));
    }
}

#[tokio::test]
async fn regions_prints_one_region_per_line_and_json_prints_the_body() {
    let server = Server::start(vec![Reply::regions(&["af-south-1", "us-east-1"])]).await;
    let run = against(&server, &["regions", "aws"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout, "af-south-1\nus-east-1\n");
    assert_eq!(run.stderr, "");

    let run = against(&server, &["regions", "aws", "--output", "json"]).await;
    assert_exit(&run, exit_code::OK);
    assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
    let list: RegionList = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(list.data, ["af-south-1", "us-east-1"]);
    assert_eq!(list.message, "2 regions in aws");

    let seen = server.seen();
    assert_eq!(seen.len(), 2);
    for request in &seen {
        assert_eq!(request.path, "/api/v1/providers/aws/regions");
        assert_eq!(request.header(API_KEY.as_str()), Some(KEY));
    }
}

#[tokio::test]
async fn listing_errors_exit_with_the_codes_of_zones() {
    let cases: [(Reply, &[&str], u8, &str); 6] = [
        (
            Reply::error(401, "invalid_api_key", "API key is not valid"),
            &["providers"],
            exit_code::UNAUTHORIZED,
            "error: invalid_api_key: API key is not valid",
        ),
        (
            Reply::error(401, "invalid_api_key", "API key is not valid"),
            &["regions", "aws"],
            exit_code::UNAUTHORIZED,
            "error: invalid_api_key: API key is not valid",
        ),
        (
            Reply::error(400, "invalid_provider", "unknown provider: no provider has the id \"awz\"; did you mean \"aws\"?"),
            &["regions", "awz"],
            exit_code::INVALID_INPUT,
            "error: invalid_provider: unknown provider: no provider has the id \"awz\"; did you mean \"aws\"?",
        ),
        (
            Reply::error(404, "not_found", "no such route"),
            &["providers"],
            exit_code::UNEXPECTED_ANSWER,
            "error: not_found: no such route",
        ),
        (
            Reply::error(500, "internal_error", "bug"),
            &["regions", "aws"],
            exit_code::API,
            "error: internal_error: bug",
        ),
        (
            // One attempt: Retry-After beyond the cap returns at once.
            Reply::error(429, "rate_limited", "slow down").header("retry-after", "60"),
            &["providers"],
            exit_code::API,
            "error: rate_limited: slow down",
        ),
    ];
    for (reply, args, code, first_line) in cases {
        let server = Server::start(vec![reply.header("x-request-id", "req-cli-1")]).await;
        let run = against(&server, args).await;
        assert_eq!(run.code, i32::from(code), "{args:?}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{args:?}");
        let (first, rest) = run.stderr.split_once('\n').unwrap_or_default();
        assert_eq!(first, first_line, "{args:?}");
        assert!(
            rest.starts_with("request id: req-cli-1\n"),
            "{args:?}: {}",
            run.stderr
        );
    }

    // An answer that is not a listing: the base URL is probably wrong.
    let server = Server::start(vec![Reply::text(200, "text/html", "<html>hi</html>")]).await;
    let run = against(&server, &["providers"]).await;
    assert_exit(&run, exit_code::UNEXPECTED_ANSWER);
    assert_lines(
        &run.stderr,
        &[
            "error: the answer (HTTP 200) could not be decoded: not a provider list: ",
            "request id: ",
            "hint: ",
        ],
    );
}

#[tokio::test]
async fn regions_of_a_malformed_provider_is_refused_locally_with_invalid_input() {
    let server = Server::start(vec![Reply::regions(&["r"])]).await;
    let run = against(&server, &["regions", "A"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        "error: provider id must start with a lowercase ASCII letter or digit, got 'A'\n"
    );
    // Usage errors: a missing provider, an extra argument.
    for args in [&["regions"][..], &["providers", "aws"]] {
        let run = against(&server, args).await;
        assert_eq!(
            run.code,
            i32::from(exit_code::USAGE),
            "{args:?}: {}",
            run.stderr
        );
        assert_eq!(run.stdout, "");
    }
    // No key: refused before sending, as for zones.
    let url = server.url();
    for args in [&["providers"][..], &["regions", "aws"]] {
        let mut all = vec!["--url", url.as_str()];
        all.extend_from_slice(args);
        let run = appzone(&all, &[]).await;
        assert_eq!(
            run.code,
            i32::from(exit_code::UNAUTHORIZED),
            "{args:?}: {}",
            run.stderr
        );
    }
    assert_eq!(server.attempts(), 0);
}

#[tokio::test]
async fn regions_of_an_unknown_provider_of_the_real_server_exit_invalid_input_with_its_message() {
    let server = TestApp::sqlite().await;
    let run = as_admin(&server, &server.base, &["regions", "nope"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_eq!(run.stdout, "");
    let (first, rest) = run.stderr.split_once('\n').unwrap();
    assert_eq!(
        first,
        "error: invalid_provider: unknown provider: no provider has the id \"nope\"; GET /api/v1/providers lists the providers"
    );
    let id = rest
        .strip_prefix("request id: ")
        .and_then(|id| id.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("{}", run.stderr));
    assert_eq!(id.len(), 26, "{id}");

    let run = as_admin(&server, &server.base, &["regions", "awz"]).await;
    assert_exit(&run, exit_code::INVALID_INPUT);
    assert_lines(
        &run.stderr,
        &[
            "error: invalid_provider: unknown provider: no provider has the id \"awz\"; did you mean \"aws\"?",
            "request id: ",
        ],
    );
    // The listing the message points at works, and so does the provider it names.
    let run = as_admin(&server, &server.base, &["providers"]).await;
    assert_exit(&run, exit_code::OK);
    assert!(
        run.stdout.starts_with("aws\ngcp\nazure\n"),
        "{}",
        run.stdout
    );
    let run = as_admin(&server, &server.base, &["regions", "aws"]).await;
    assert_exit(&run, exit_code::OK);
    assert!(run.stdout.starts_with("af-south-1\n"), "{}", run.stdout);
}

#[tokio::test]
async fn help_shows_the_listing_commands() {
    let run = appzone(&["--help"], &[]).await;
    assert_exit(&run, exit_code::OK);
    for expected in [
        "  providers  ",
        "  regions    ",
        "appzone providers",
        "appzone regions aws",
        "one id per line",
    ] {
        assert!(
            run.stdout.contains(expected),
            "help lacks {expected:?}:\n{}",
            run.stdout
        );
    }
    for (args, usage) in [
        (
            &["providers", "--help"][..],
            "Usage: appzone providers [OPTIONS]",
        ),
        (
            &["regions", "--help"],
            "Usage: appzone regions [OPTIONS] <PROVIDER>",
        ),
    ] {
        let run = appzone(args, &[]).await;
        assert_exit(&run, exit_code::OK);
        assert!(
            run.stdout.lines().any(|line| line == usage),
            "{args:?}: expected {usage:?}:\n{}",
            run.stdout
        );
    }
}

//! Errors: API errors, other failures, transport failures, JSON errors, and what each
//! report shows.

use super::*;

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

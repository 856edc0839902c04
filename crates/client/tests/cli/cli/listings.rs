//! The provider and region listings.

use super::*;

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

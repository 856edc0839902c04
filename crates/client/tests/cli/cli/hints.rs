//! Hints for a wrong `--url`, and usage lines.

use super::*;

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

//! One exit code per class of failure, as the table in `--help` and the README says.

use super::*;

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

    let readme = include_str!("../../../README.md");
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

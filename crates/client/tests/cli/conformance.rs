//! The `appzone conformance` command against the real server: its report, its JUnit XML and
//! its exit code, passing and failing (through the mutating proxy of `appzone-test-support`).
//! The kit's checks themselves are tested in appzone-conformance.

use appzone_client::exit_code;
use appzone_test_support::proxy::{self, Mutation};
use appzone_test_support::TestApp;

use crate::run::{appzone, assert_exit};

#[tokio::test]
async fn the_command_passes_against_the_real_server_and_writes_junit() {
    let server = TestApp::sqlite().await;
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("conformance.xml");
    let junit_arg = junit.to_str().unwrap();
    let run = appzone(
        &[
            "--url",
            &server.base,
            "--api-key",
            &server.member_key,
            "conformance",
            "--admin-key",
            &server.admin_key,
            "--member-key",
            &server.member_key,
            "--profile",
            server.profile.as_str(),
            "--foreign-profile",
            server.other_profile.as_str(),
            "--junit",
            junit_arg,
        ],
        &[],
    )
    .await;
    assert_eq!(
        run.code,
        i32::from(exit_code::OK),
        "{}{}",
        run.stdout,
        run.stderr
    );
    let last = run.stdout.lines().last().unwrap();
    assert!(last.ends_with("0 failed, 1 skipped"), "{}", run.stdout);
    let passed = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("PASS "))
        .count();
    assert!(
        last.starts_with(&format!("{passed} passed")),
        "{}",
        run.stdout
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let document = roxmltree::Document::parse(&xml).unwrap();
    let suite = document.root_element();
    assert_eq!(suite.tag_name().name(), "testsuite");
    let cases: Vec<_> = suite
        .children()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(
        suite.attribute("tests"),
        Some(cases.len().to_string().as_str())
    );
    assert_eq!(cases.len(), passed + 1);
    assert_eq!(suite.attribute("failures"), Some("0"));
    assert_eq!(suite.attribute("skipped"), Some("1"));
    let skipped = cases
        .iter()
        .filter(|c| c.children().any(|n| n.has_tag_name("skipped")));
    assert_eq!(skipped.count(), 1);
}

#[tokio::test]
async fn the_command_exits_1_on_a_broken_promise_with_an_escaped_junit_failure() {
    let server = TestApp::sqlite().await;
    let url = proxy::start(&server, Mutation::TextErrorBodies).await;
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("conformance.xml");
    let run = appzone(
        &[
            "--url",
            &url,
            "--api-key",
            &server.member_key,
            "--output",
            "json",
            "conformance",
            "--read-only",
            "--junit",
            junit.to_str().unwrap(),
        ],
        &[],
    )
    .await;
    assert_exit(&run, exit_code::FAILURE);
    let report: serde_json::Value = serde_json::from_str(run.stdout.trim()).unwrap();
    let failed = report["summary"]["failed"].as_u64().unwrap();
    assert!(failed > 0, "{}", run.stdout);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let document = roxmltree::Document::parse(&xml).unwrap();
    let failures: Vec<_> = document
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .collect();
    assert_eq!(failures.len() as u64, failed);
    // The failure messages quote `"` and `<`-free text faithfully through the escaping.
    assert!(failures.iter().all(|f| f
        .attribute("message")
        .is_some_and(|m| m.contains(" expected "))));
    assert_eq!(
        document.root_element().attribute("failures"),
        Some(failed.to_string().as_str())
    );
}

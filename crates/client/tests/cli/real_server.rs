//! End to end: the `appzone` binary against the real `appzone-server`, started in-process on
//! an ephemeral port of 127.0.0.1 over a fresh SQLite database, one per test.
//!
//! Every answer must arrive as the right output and exit code. Nothing here works around the
//! server: when it breaks the contract, these tests fail.

use std::future::Future;
use std::time::Duration;

use appzone_client::{exit_code, Client, ProviderList, RegionList, ZoneList};
use appzone_contract::headers::is_valid_request_id;
use appzone_contract::ApiKey;
use appzone_test_support::TestApp;

use crate::run::{appzone, assert_exit, Run};

/// The longest any test here may take, server start included.
const TEST_BOUND: Duration = Duration::from_secs(60);

/// The zones of aws/us-east-1 in the built-in catalog, in catalog order.
const US_EAST_1: [&str; 6] = [
    "us-east-1a",
    "us-east-1b",
    "us-east-1c",
    "us-east-1d",
    "us-east-1e",
    "us-east-1f",
];

/// Runs a test body, failing it when it takes longer than [`TEST_BOUND`].
///
/// Each test starts its own server: `TestApp::sqlite()`, the server's own test fixture (see
/// `appzone-test-support`): organization `acme` (an admin key, a member key, a revoked admin
/// key, two profiles) and organization `globex` (an admin key, one profile); the built-in
/// catalog plus provider `acme-cloud`, whose region `empty-1` has no zones.
async fn bounded(test: impl Future<Output = ()>) {
    tokio::time::timeout(TEST_BOUND, test)
        .await
        .expect("the test did not finish within its time bound");
}

/// Whether `id` has the shape of the server's own request ids (and the client's): a ULID,
/// 26 characters of Crockford base32.
fn is_ulid(id: &str) -> bool {
    id.len() == 26
        && is_valid_request_id(id)
        && id
            .bytes()
            .all(|b| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&b))
}

/// Runs `appzone <args>` against `server` with `key` in `APPZONE_API_KEY` (none when `None`).
async fn appzone_against(server: &TestApp, key: Option<&str>, args: &[&str]) -> Run {
    let mut env = vec![("APPZONE_URL", server.base.as_str())];
    env.extend(key.map(|key| ("APPZONE_API_KEY", key)));
    appzone(args, &env).await
}

/// Asserts a failed run: `code`, nothing on stdout, and on stderr a line with `error_code` and
/// the message, then a line with the request id.
#[track_caller]
fn assert_failed(run: &Run, code: u8, error_code: &str) {
    assert_exit(run, code);
    assert_eq!(run.stdout, "");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{}", run.stderr);
    assert!(
        lines[0].starts_with(&format!("error: {error_code}: ")),
        "{}",
        run.stderr
    );
    let id = lines[1].strip_prefix("request id: ").unwrap_or_default();
    assert!(is_ulid(id), "{}", run.stderr);
}

/// Asserts a run refused before sending anything: `code`, nothing on stdout, one line on
/// stderr.
#[track_caller]
fn assert_refused_locally(run: &Run, code: u8, args: &[&str]) {
    assert_eq!(run.code, i32::from(code), "{args:?}: {}", run.stderr);
    assert_eq!(run.stdout, "");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
}

#[tokio::test]
async fn cli_zones_lists_the_six_zones_of_aws_us_east_1_and_exits_0() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let run = appzone_against(
            &server,
            Some(server.member_key.as_str()),
            &["zones", "aws", "us-east-1"],
        )
        .await;
        assert_exit(&run, exit_code::OK);
        assert_eq!(run.stdout, format!("{}\n", US_EAST_1.join("\n")));
        assert_eq!(run.stderr, "");

        let run = appzone_against(
            &server,
            Some(server.admin_key.as_str()),
            &["--output", "json", "zones", "aws", "us-east-1"],
        )
        .await;
        assert_exit(&run, exit_code::OK);
        let list: ZoneList = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(list.data, US_EAST_1);
        assert_eq!(list.status, "success");
        assert!(is_ulid(&list.id), "{list:?}");
    })
    .await;
}

#[tokio::test]
async fn cli_profiles_delete_exits_forbidden_for_a_member_0_for_an_admin_then_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let id = server.profile.as_str();
        let run = appzone_against(
            &server,
            Some(server.member_key.as_str()),
            &["profiles", "delete", id],
        )
        .await;
        assert_failed(&run, exit_code::FORBIDDEN, "forbidden");

        let run = appzone_against(
            &server,
            Some(server.admin_key.as_str()),
            &["profiles", "delete", id],
        )
        .await;
        assert_exit(&run, exit_code::OK);
        assert_eq!(run.stdout, format!("deleted profile {id}\n"));
        assert_eq!(run.stderr, "");

        let run = appzone_against(
            &server,
            Some(server.admin_key.as_str()),
            &["profiles", "delete", id],
        )
        .await;
        assert_failed(&run, exit_code::NOT_FOUND, "profile_not_found");
    })
    .await;
}

#[tokio::test]
async fn cli_other_errors_of_the_real_server_map_to_their_exit_codes() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = Some(server.admin_key.as_str());
        let stranger = ApiKey::generate();

        let run = appzone_against(
            &server,
            Some(stranger.expose_secret()),
            &["zones", "aws", "us-east-1"],
        )
        .await;
        assert_failed(&run, exit_code::UNAUTHORIZED, "invalid_api_key");
        let run = appzone_against(&server, admin, &["zones", "nope", "us-east-1"]).await;
        assert_failed(&run, exit_code::INVALID_INPUT, "invalid_provider");
        let run = appzone_against(&server, admin, &["zones", "aws", "mars-1"]).await;
        assert_failed(&run, exit_code::NOT_FOUND, "region_not_found");
        let other = server.other_profile.as_str();
        let run = appzone_against(&server, admin, &["profiles", "delete", other]).await;
        assert_failed(&run, exit_code::NOT_FOUND, "profile_not_found");

        // Refused locally, nothing sent: the codes of the server's answers to the same mistakes.
        for (key, args, code) in [
            (
                admin,
                &["zones", "AWS", "us-east-1"][..],
                exit_code::INVALID_INPUT,
            ),
            (
                admin,
                &["profiles", "delete", "bad id"][..],
                exit_code::INVALID_INPUT,
            ),
            (
                None,
                &["zones", "aws", "us-east-1"][..],
                exit_code::UNAUTHORIZED,
            ),
        ] {
            let run = appzone_against(&server, key, args).await;
            assert_refused_locally(&run, code, args);
        }

        // Nothing above deleted globex's profile.
        Client::new(server.base.as_str(), &server.other_admin_key)
            .unwrap()
            .delete_profile(&server.other_profile)
            .await
            .unwrap();
    })
    .await;
}

// ---- provider and region listings (issue 17) ----------------------------------------------------

#[tokio::test]
async fn cli_providers_and_regions_list_the_catalog_and_exit_0() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let member = Some(server.member_key.as_str());
        let run = appzone_against(&server, member, &["providers"]).await;
        assert_exit(&run, exit_code::OK);
        assert_eq!(run.stdout, "aws\ngcp\nazure\nacme-cloud\n");
        assert_eq!(run.stderr, "");

        let run = appzone_against(&server, member, &["--output", "json", "providers"]).await;
        assert_exit(&run, exit_code::OK);
        assert_eq!(run.stdout.lines().count(), 1, "{}", run.stdout);
        let list: ProviderList = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(list.data, ["aws", "gcp", "azure", "acme-cloud"]);
        assert_eq!(list.status, "success");
        assert!(is_ulid(&list.id), "{list:?}");

        let regions = Client::new(server.base.as_str(), &server.member_key)
            .unwrap()
            .list_regions("aws")
            .await
            .unwrap();
        let run = appzone_against(&server, member, &["regions", "aws"]).await;
        assert_exit(&run, exit_code::OK);
        assert_eq!(run.stdout, format!("{}\n", regions.data.join("\n")));
        assert!(run.stdout.starts_with("af-south-1\n"), "{}", run.stdout);
        assert_eq!(run.stderr, "");

        let run = appzone_against(&server, member, &["regions", "aws", "--output", "json"]).await;
        assert_exit(&run, exit_code::OK);
        let list: RegionList = serde_json::from_str(&run.stdout).unwrap();
        assert_eq!(list.data, regions.data);
    })
    .await;
}

#[tokio::test]
async fn cli_listing_errors_of_the_real_server_map_to_their_exit_codes() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = Some(server.admin_key.as_str());
        let stranger = ApiKey::generate();
        let run = appzone_against(&server, Some(stranger.expose_secret()), &["providers"]).await;
        assert_failed(&run, exit_code::UNAUTHORIZED, "invalid_api_key");
        let run =
            appzone_against(&server, Some(stranger.expose_secret()), &["regions", "aws"]).await;
        assert_failed(&run, exit_code::UNAUTHORIZED, "invalid_api_key");
        let run = appzone_against(&server, admin, &["regions", "nope"]).await;
        assert_failed(&run, exit_code::INVALID_INPUT, "invalid_provider");
        assert!(
            run.stderr.starts_with(
                "error: invalid_provider: unknown provider: no provider has the id \"nope\"; \
                 GET /api/v1/providers lists the providers\n"
            ),
            "{}",
            run.stderr
        );
        let run = appzone_against(&server, admin, &["regions", "awz"]).await;
        assert_failed(&run, exit_code::INVALID_INPUT, "invalid_provider");
        assert!(
            run.stderr
                .lines()
                .next()
                .unwrap_or_default()
                .ends_with("; did you mean \"aws\"?"),
            "{}",
            run.stderr
        );
        // Refused locally, nothing sent.
        for (key, args, code) in [
            (admin, &["regions", "A"][..], exit_code::INVALID_INPUT),
            (None, &["providers"][..], exit_code::UNAUTHORIZED),
            (None, &["regions", "aws"][..], exit_code::UNAUTHORIZED),
        ] {
            let run = appzone_against(&server, key, args).await;
            assert_refused_locally(&run, code, args);
        }
    })
    .await;
}

//! The test harness of the server's integration tests and the client's tests, one of each
//! thing: [`TestApp`] (the server in process on SQLite or PostgreSQL, on a real socket, seeded
//! with two organizations), [`raw`] (HTTP/1.1 bytes over a TCP connection, for what an HTTP
//! client would refuse or normalize), [`seed_profiles`] (profiles in bulk), [`scripted`] (a
//! server answering from a script, for the client's tests) and [`proxy`] (the real server with
//! one promise broken, for the conformance kit's).
//!
//! Tests that take a [`TestApp`] run once per backend through [`both_backends!`]. PostgreSQL
//! tests are marked ignored: a run without PostgreSQL lists them as ignored, never as passed.
//! Run them with [`PG_ENV`] set and `-- --include-ignored` (as `cargo xtask ci` does); each test
//! gets its own schema, so they run in parallel.

// Test code: a panic is the failure report.
#![allow(clippy::unwrap_used)]

mod app;
mod backend;
mod cluster;
pub mod fixtures;
mod postgres;
pub mod proxy;
pub mod raw;
pub mod scripted;
mod seed;

pub use app::{eventually, fast_config, spawn_server, test_catalog, Replica, Resp, TestApp};
/// The server the harness runs, for tests that configure it (`ServiceConfig`, `HttpConfig`).
pub use appzone_server;
pub use backend::{Backend, FreshDatabase, OnBackend};
pub use cluster::ThrowawayPostgres;
pub use postgres::{
    connect_admin, fresh_postgres_schema, postgres_schema, scoped_url, PgSchema, PG_ENV,
};
pub use seed::seed_profiles;

/// Whether an optional tool a test needs was `found`. Without it the test is skipped with a
/// printed `SKIPPED: <notice>`, never counted as having checked anything; under `CI=true`,
/// where `.ci/run` installs every such tool, a missing one fails the test instead.
pub fn found_or_skipped(found: bool, notice: &str) -> bool {
    if !found {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI=true: {notice}; it is required under CI"
        );
        eprintln!("SKIPPED: {notice}");
    }
    found
}

/// `template` (a path of the OpenAPI document, `{name}` for each parameter) with every parameter
/// replaced by its value in `values`. Panics naming a parameter `values` lacks, so that a test
/// walking the document never sends a literal `{name}` (which a route may answer as it answers
/// any unknown id, and so pass whatever the route does).
pub fn fill_path(template: &str, values: &[(&str, &str)]) -> String {
    let mut path = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let close = rest[open..]
            .find('}')
            .map(|close| open + close)
            .unwrap_or_else(|| panic!("{template}: unclosed parameter"));
        let name = &rest[open + 1..close];
        let value = values
            .iter()
            .find(|(known, _)| *known == name)
            .map(|(_, value)| *value)
            .unwrap_or_else(|| {
                panic!("{template}: no value for the parameter {{{name}}}: add one to the test")
            });
        path.push_str(&rest[..open]);
        path.push_str(value);
        rest = &rest[close + 1..];
    }
    path.push_str(rest);
    path
}

/// The environment variable naming the Redis the tests of the shared rate limits use
/// (`redis://127.0.0.1:6379` when unset); `.ci/run` starts one there.
pub const REDIS_ENV: &str = "APPZONE_TEST_REDIS_URL";

/// The URL of the test Redis ([`REDIS_ENV`]) when something listens there; else `None`, the
/// test skipped as [`found_or_skipped`] does (a failure under `CI=true`).
pub fn test_redis_url() -> Option<String> {
    use std::net::ToSocketAddrs;
    let url = std::env::var(REDIS_ENV).unwrap_or_else(|_| "redis://127.0.0.1:6379".to_owned());
    // redis://[USER:PASSWORD@]HOST[:PORT][/DB]
    let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let address = if host_port.contains(':') {
        host_port.to_owned()
    } else {
        format!("{host_port}:6379")
    };
    let found = address
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .is_some_and(|addr| {
            std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(1)).is_ok()
        });
    let notice = format!(
        "no Redis listening at {address} ({REDIS_ENV}); the limits shared through Redis were \
         not checked"
    );
    found_or_skipped(found, &notice).then_some(url)
}

/// A Redis key prefix of this test's own, so tests sharing one Redis never share a bucket.
pub fn redis_test_prefix() -> String {
    format!("appzone:test:{}:rl:", ulid::Ulid::generate())
}

/// Runs each `async fn name(arg: T)` once per backend, as `sqlite::name` and `postgres::name`,
/// with `arg` made by [`OnBackend`] for that backend (a [`TestApp`], the [`Backend`] itself for
/// tests that set up their own server or database, or a suite's own fixture). The PostgreSQL
/// half is ignored unless selected (`--include-ignored`), so a run without PostgreSQL reports
/// those tests as ignored rather than as passed: every test that needs PostgreSQL for one
/// backend of a pair goes through here, and [`postgres_only!`] for the others, so the message
/// is written once.
///
/// Each test runs on `#[tokio::test]`; a test may name its runtime instead
/// (`#[tokio::test(flavor = "multi_thread", worker_threads = 2)]`) after its doc comment.
#[macro_export]
macro_rules! both_backends {
    ($(
        $(#[doc = $doc:expr])*
        $(#[tokio::test $runtime:tt])?
        async fn $name:ident($arg:ident: $ty:ty) $body:block
    )*) => {
        mod sqlite {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[doc = $doc])*
                #[::tokio::test $($runtime)?]
                async fn $name() {
                    let $arg = <$ty as $crate::OnBackend>::on($crate::Backend::Sqlite).await;
                    $body
                }
            )*
        }
        mod postgres {
            #[allow(unused_imports)]
            use super::*;
            $(
                $(#[doc = $doc])*
                #[::tokio::test $($runtime)?]
                #[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
                async fn $name() {
                    let $arg = <$ty as $crate::OnBackend>::on($crate::Backend::Postgres).await;
                    $body
                }
            )*
        }
    };
}

/// Tests with no SQLite half (replicas following PostgreSQL's `NOTIFY`, a proxy in front of
/// PostgreSQL, a throwaway cluster), ignored as the PostgreSQL half of [`both_backends!`] is,
/// under their own names.
#[macro_export]
macro_rules! postgres_only {
    ($(
        $(#[doc = $doc:expr])*
        $(#[tokio::test $runtime:tt])?
        async fn $name:ident() $body:block
    )*) => {
        $(
            $(#[doc = $doc])*
            #[::tokio::test $($runtime)?]
            #[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
            async fn $name() $body
        )*
    };
}

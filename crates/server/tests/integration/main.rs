//! End-to-end tests of appzone-server through HTTP, the operator CLI and the database.
//!
//! One binary (faster linking); each module is one area. The harness (`TestApp`, raw HTTP/1.1,
//! seeding) is `appzone-test-support`, shared with the client's tests. Tests that take a
//! `TestApp` run once per backend through `both_backends!`. PostgreSQL tests (those of
//! `both_backends!` and of `postgres_only!`) are marked ignored: a run without
//! PostgreSQL lists them as ignored, never as passed. Run them with `APPZONE_TEST_POSTGRES_URL`
//! set and `-- --include-ignored` (as `cargo xtask ci` does); each test gets its own schema, so
//! they run in parallel.

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod api;
mod body_limit;
mod cli;
mod deploy;
mod deprecation;
mod discovery;
mod idempotency;
mod identities;
mod identity_filters;
mod offerings;
mod ops;
mod readme;
mod reliability;
mod replicas;
mod request_log;
mod security;
mod server_process;
mod shared_limits;
mod spec;
mod spec_examples;
mod startup;
mod storage;
mod timing;
mod zone_kinds;

/// A run without PostgreSQL must not count PostgreSQL tests as passed: every test that needs it
/// (named `postgres...` or in a `postgres` module) is marked ignored, so the summary says so.
#[test]
fn tests_needing_postgresql_are_reported_as_ignored_unless_selected() {
    let list = |extra: &[&str]| {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--list", "--format", "terse"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .filter_map(|line| line.strip_suffix(": test").map(str::to_owned))
            .collect::<Vec<String>>()
    };
    let ignored = list(&["--ignored"]);
    let needs_postgres: Vec<String> = list(&[])
        .into_iter()
        .filter(|name| name.split("::").any(|part| part.starts_with("postgres")))
        .collect();
    assert!(needs_postgres.len() > 30, "{needs_postgres:#?}");
    let counted_as_run: Vec<&String> = needs_postgres
        .iter()
        .filter(|name| !ignored.contains(name))
        .collect();
    assert!(
        counted_as_run.is_empty(),
        "PostgreSQL tests not marked ignored: {counted_as_run:#?}"
    );
}

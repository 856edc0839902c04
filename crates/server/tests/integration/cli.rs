//! The operator CLI, run as the real binary on a fresh SQLite file.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

struct Cli {
    dir: tempfile::TempDir,
}

impl Cli {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_appzone-server"));
        command
            .current_dir(self.dir.path())
            .env_remove("APPZONE_DATABASE_URL")
            .env_remove("APPZONE_LOG")
            .env_remove("RUST_LOG");
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs and expects success; returns stdout.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs and expects an operator error: exit 1, empty stdout, stderr starting `error: `.
    #[track_caller]
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?} should fail");
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed on stdout: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr:?}");
        stderr
    }
}

#[test]
fn default_database_is_appzone_db_in_the_working_directory() {
    let cli = Cli::new();
    assert_eq!(cli.ok(&["migrate"]), "");
    assert!(cli.dir.path().join("appzone.db").exists());
}

#[test]
fn org_and_key_create_print_only_the_result() {
    let cli = Cli::new();
    assert_eq!(
        cli.ok(&["org", "create", "acme", "--name", "Acme Corp"]),
        "acme\n"
    );
    let key = cli.ok(&[
        "key", "create", "--org", "acme", "--role", "admin", "--name", "ci",
    ]);
    let key = key.strip_suffix('\n').unwrap();
    assert!(key.parse::<appzone_contract::ApiKey>().is_ok(), "{key}");
    let table = cli.ok(&["key", "list", "--org", "acme"]);
    let mut lines = table.lines();
    assert!(lines.next().unwrap().starts_with("KEY_ID"));
    let row = lines.next().unwrap();
    assert!(
        row.starts_with(&key[4..16]) && row.contains("admin") && row.contains("ci"),
        "{row}"
    );
    assert!(!table.contains(&key[17..]), "key list never shows secrets");
}

#[test]
fn operator_errors_exit_1_with_one_clear_line_and_write_nothing() {
    let cli = Cli::new();
    let err = cli.fails(&["key", "create", "--org", "ghost", "--role", "admin"]);
    assert!(err.contains("ghost"), "{err}");
    cli.ok(&["org", "create", "acme"]);
    cli.fails(&["org", "create", "acme"]);
    cli.fails(&["org", "create", "bad id!"]);
    cli.fails(&["key", "revoke", "AAAAAAAAAAAA"]);
    cli.fails(&["profile", "create", "--org", "ghost", "--name", "x"]);
    cli.fails(&["profile", "restore", "prof_missing"]);
    cli.fails(&[
        "profile", "create", "--org", "acme", "--name", "x", "--id", "../bad",
    ]);
    let table = cli.ok(&["key", "list", "--org", "acme"]);
    assert_eq!(table.lines().count(), 1, "no key was half-written: {table}");
    let usage = cli.run(&["key", "create", "--org", "acme", "--role", "owner"]);
    assert_eq!(usage.status.code(), Some(2), "usage errors exit 2");
}

#[test]
fn key_revoke_and_profile_lifecycle() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    let key = cli.ok(&["key", "create", "--org", "acme", "--role", "member"]);
    assert_eq!(cli.ok(&["key", "revoke", &key[4..16]]), "");
    assert!(
        !cli.ok(&["key", "list", "--org", "acme"])
            .lines()
            .nth(1)
            .unwrap()
            .ends_with(" -"),
        "revoked shows a time"
    );
    let id = cli.ok(&[
        "profile",
        "create",
        "--org",
        "acme",
        "--name",
        "checkout",
        "--id",
        "prof_fixed.1",
    ]);
    assert_eq!(id, "prof_fixed.1\n");
    let generated = cli.ok(&["profile", "create", "--org", "acme", "--name", "billing"]);
    assert!(
        generated.starts_with("prof_") && generated.trim_end().len() == 31,
        "{generated}"
    );
    cli.fails(&[
        "profile",
        "create",
        "--org",
        "acme",
        "--name",
        "dup",
        "--id",
        "prof_fixed.1",
    ]);
    let live = cli.ok(&["profile", "list", "--org", "acme"]);
    assert!(
        live.contains("prof_fixed.1") && live.contains("checkout"),
        "{live}"
    );
    assert_eq!(
        cli.ok(&["profile", "list", "--org", "acme", "--deleted"])
            .lines()
            .count(),
        1,
        "header only"
    );
}

#[test]
fn catalog_export_import_round_trip_and_bad_import_keeps_the_old_catalog() {
    let cli = Cli::new();
    let builtin = cli.ok(&["catalog", "export"]);
    let parsed: serde_json::Value = serde_json::from_str(&builtin).unwrap();
    assert_eq!(parsed["providers"][0]["id"], "aws");

    let bad = cli.dir.path().join("bad.json");
    for text in [
        "{not json",
        r#"{"providers":[{"id":"AWS","name":"x","regions":[]}]}"#,
        r#"{"providers":[{"id":"a","name":"x","regions":[{"id":"r","name":"R","zones":["z","z"]}]}]}"#,
    ] {
        std::fs::write(&bad, text).unwrap();
        cli.fails(&["catalog", "import", bad.to_str().unwrap()]);
        assert_eq!(cli.ok(&["catalog", "export"]), builtin, "old catalog kept");
    }
    cli.fails(&["catalog", "import", "/no/such/file.json"]);

    let small = r#"{"providers":[{"id":"tiny","name":"Tiny","regions":[{"id":"r1","name":"R1","zones":["r1-b","r1-a"]}]}]}"#;
    let good = cli.dir.path().join("good.json");
    std::fs::write(&good, small).unwrap();
    assert_eq!(cli.ok(&["catalog", "import", good.to_str().unwrap()]), "");
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    assert_eq!(
        exported,
        serde_json::from_str::<serde_json::Value>(small).unwrap(),
        "order kept"
    );
}

#[test]
fn help_lists_commands_and_examples() {
    let cli = Cli::new();
    let help = cli.ok(&["--help"]);
    for word in [
        "serve",
        "migrate",
        "org",
        "key",
        "profile",
        "catalog",
        "APPZONE_DATABASE_URL",
        "Examples:",
    ] {
        assert!(help.contains(word), "--help lacks {word}");
    }
    let serve = cli.ok(&["serve", "--help"]);
    for word in [
        "--listen",
        "APPZONE_LISTEN",
        "--demo",
        "--rate-limit-per-key",
        "APPZONE_RATE_LIMIT_PER_KEY",
    ] {
        assert!(serve.contains(word), "serve --help lacks {word}");
    }
}

/// The README's first-run promise: `serve --demo` prints curl lines whose labelled statuses hold,
/// and SIGTERM stops the server cleanly.
#[test]
fn serve_demo_prints_curl_lines_that_give_the_labelled_statuses() {
    let cli = Cli::new();
    let Demo {
        mut child,
        mut lines,
        expectations,
    } = Demo::start(&cli, "info");
    let statuses: Vec<u16> = expectations.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses, [200, 204, 403, 404]);

    for (expected, curl) in &expectations {
        assert_eq!(Demo::send(curl), *expected, "{curl}");
    }
    Demo::stop(&mut child);

    // One log line per request, with route template, status and key id, and no key material.
    let rest: Vec<String> = lines.by_ref().map_while(Result::ok).collect();
    let requests: Vec<&String> = rest
        .iter()
        .filter(|l| l.contains("appzone::request"))
        .collect();
    assert!(requests.len() >= 4, "request log lines: {rest:#?}");
    let zones = requests
        .iter()
        .find(|l| l.contains("route=\"/api/v1/providers/{providerId}/regions/{regionId}/zones\""));
    let zones = zones.unwrap_or_else(|| panic!("no zone listing line in {requests:#?}"));
    assert!(
        zones.contains("status=200") && zones.contains("key_id=") && zones.contains("request_id="),
        "{zones}"
    );
    assert!(
        !zones.contains('\u{1b}'),
        "no colour codes in a pipe: {zones}"
    );
    for (_, curl) in &expectations {
        let key = Demo::key(curl);
        for line in &rest {
            assert!(!line.contains(&key[17..]), "key secret in log line: {line}");
        }
    }
}

/// `serve --demo` running, with its stderr being read and its four labelled curl lines.
struct Demo {
    child: std::process::Child,
    lines: std::io::Lines<BufReader<std::process::ChildStderr>>,
    /// (status the line is labelled with, the curl command line after `curl `)
    expectations: Vec<(u16, String)>,
}

impl Demo {
    fn start(cli: &Cli, log_filter: &str) -> Self {
        let mut child = cli
            .command()
            .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
            .env("APPZONE_LOG", log_filter)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let mut lines = BufReader::new(stderr).lines();
        let mut expectations = Vec::new();
        let mut label = None;
        while let Some(Ok(line)) = lines.next() {
            if let Some(rest) = line.strip_prefix("# ") {
                label = rest.split(':').next().and_then(|s| s.parse::<u16>().ok());
            } else if let Some(curl) = line.strip_prefix("curl ") {
                expectations.push((
                    label.take().expect("each curl line is labelled"),
                    curl.to_owned(),
                ));
                if expectations.len() == 4 {
                    break;
                }
            }
        }
        Self {
            child,
            lines,
            expectations,
        }
    }

    /// The API key a printed curl line sends.
    fn key(curl: &str) -> &str {
        curl.split("X-API-KEY: ")
            .nth(1)
            .unwrap()
            .split('\'')
            .next()
            .unwrap()
    }

    /// Sends what a printed curl line sends; the status.
    fn send(curl: &str) -> u16 {
        let words: Vec<&str> = curl.split_whitespace().collect();
        let url = words.last().unwrap();
        let key = Demo::key(curl);
        let method = if curl.contains("-X DELETE") {
            reqwest::Method::DELETE
        } else {
            reqwest::Method::GET
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            reqwest::Client::new()
                .request(method, *url)
                .header("X-API-KEY", key)
                .send()
                .await
                .unwrap()
                .status()
                .as_u16()
        })
    }

    /// SIGTERM, then waits (bounded) for a clean exit.
    fn stop(child: &mut std::process::Child) {
        crate::server_process::sigterm(child.id());
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "server did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "exit status after SIGTERM: {status}");
    }
}

/// Successful requests' lines are written by a fast path, not as `tracing` events
/// (`logging::request`): the log filter must still decide, per target and level, in the text
/// format the binary uses by default.
#[test]
fn request_lines_follow_the_log_filter_in_the_text_format() {
    let cli = Cli::new();
    let Demo {
        mut child,
        lines,
        expectations,
    } = Demo::start(&cli, "info,appzone::request=warn");
    for (expected, curl) in &expectations {
        assert_eq!(Demo::send(curl), *expected, "{curl}");
    }
    Demo::stop(&mut child);
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let requests: Vec<&String> = rest
        .iter()
        .filter(|l| l.contains("appzone::request"))
        .collect();
    // Answers without an internal detail (all four here) are INFO lines: filtered out.
    assert!(requests.is_empty(), "{requests:#?}");
    // The INFO lines of other targets still pass: the server's own start and stop lines.
    assert!(
        rest.iter()
            .any(|l| l.contains("INFO") && l.contains("drain")),
        "{rest:#?}"
    );
}

/// Request lines are buffered per thread: under concurrent load every request still gets
/// exactly one whole line by the time the server has stopped.
#[test]
fn every_request_gets_one_whole_log_line_under_concurrent_load() {
    const REQUESTS: usize = 400;
    let cli = Cli::new();
    let Demo {
        mut child,
        lines,
        expectations,
    } = Demo::start(&cli, "info");
    let (_, listing) = expectations
        .iter()
        .find(|(status, curl)| *status == 200 && !curl.contains("DELETE"))
        .expect("the demo prints a listing");
    let url = listing.split_whitespace().last().unwrap().to_owned();
    let key = Demo::key(listing).to_owned();
    // Read the log while it is written: a full pipe would block the server's writes.
    let log = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<String>>());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let sends = (0..REQUESTS).map(|i| {
            let (http, url, key) = (http.clone(), url.clone(), key.clone());
            async move {
                let status = http
                    .get(&url)
                    .header("X-API-KEY", key)
                    .header("X-Request-Id", format!("load-{i}"))
                    .send()
                    .await
                    .unwrap()
                    .status();
                assert_eq!(status, 200);
            }
        });
        futures_util::future::join_all(sends).await;
    });
    Demo::stop(&mut child);
    let rest = log.join().unwrap();
    let mut seen = vec![0; REQUESTS];
    for line in rest.iter().filter(|l| l.contains("request_id=\"load-")) {
        assert!(
            line.starts_with("20")
                && line.contains(" INFO appzone::request: request method=GET ")
                && line.ends_with('"'),
            "not one whole line: {line:?}"
        );
        let id = line.split("request_id=\"load-").nth(1).unwrap();
        let n: usize = id[..id.find('"').unwrap()].parse().unwrap();
        seen[n] += 1;
    }
    let wrong: Vec<(usize, usize)> = seen
        .iter()
        .enumerate()
        .filter(|(_, count)| **count != 1)
        .map(|(i, count)| (i, *count))
        .collect();
    assert!(
        wrong.is_empty(),
        "requests without exactly one line: {wrong:?}"
    );
}

fn sh(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The README's SQLite backup and restore commands, run as written.
#[test]
fn sqlite_backup_and_restore_as_documented() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    let id = cli.ok(&["profile", "create", "--org", "acme", "--name", "kept"]);
    let db = cli.dir.path().join("appzone.db");
    let backup = cli.dir.path().join("appzone-backup.db");
    sh(
        "sqlite3",
        &[
            db.to_str().unwrap(),
            &format!(".backup '{}'", backup.display()),
        ],
    );
    cli.ok(&[
        "profile",
        "create",
        "--org",
        "acme",
        "--name",
        "after-backup",
    ]);
    std::fs::copy(&backup, &db).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(cli.dir.path().join(format!("appzone.db{suffix}")));
    }
    let live = cli.ok(&["profile", "list", "--org", "acme"]);
    assert!(live.contains(id.trim()), "{live}");
    assert!(
        !live.contains("after-backup"),
        "restored to the backup's state: {live}"
    );
}

/// The README's PostgreSQL backup and restore, scoped to the test's schema.
#[tokio::test]
async fn postgres_backup_and_restore_as_documented() {
    let Some((url, schema)) = crate::support::postgres_schema().await else {
        return;
    };
    let scoped = crate::support::scoped_url(&url, &schema);
    let cli = Cli::new();
    let run = |args: &[&str], db_url: &str| {
        let out = cli
            .command()
            .env("APPZONE_DATABASE_URL", db_url)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    run(&["org", "create", "acme"], &scoped);
    let id = run(
        &["profile", "create", "--org", "acme", "--name", "kept"],
        &scoped,
    );
    let dump = cli.dir.path().join("appzone.dump");
    let dump = dump.to_str().unwrap();
    // `--schema` only because the test database holds other tests' schemas too.
    sh(
        "pg_dump",
        &[
            "--format=custom",
            &format!("--file={dump}"),
            &format!("--schema={schema}"),
            &url,
        ],
    );

    let restored_db = format!("r_{}", schema.trim_start_matches("t_"));
    let mut admin = crate::support::connect_admin(&url).await.unwrap();
    sqlx::Executor::execute(
        &mut admin,
        sqlx::AssertSqlSafe(format!("CREATE DATABASE {restored_db}")),
    )
    .await
    .unwrap();
    let base = url.rsplit_once('/').map(|(base, _)| base).unwrap();
    let restored_url = format!("{base}/{restored_db}");
    sh(
        "pg_restore",
        &["--no-owner", &format!("--dbname={restored_url}"), dump],
    );
    let live = run(
        &["profile", "list", "--org", "acme"],
        &crate::support::scoped_url(&restored_url, &schema),
    );
    sqlx::Executor::execute(
        &mut admin,
        sqlx::AssertSqlSafe(format!("DROP DATABASE {restored_db} WITH (FORCE)")),
    )
    .await
    .unwrap();
    let _ = sqlx::Executor::execute(
        &mut admin,
        sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")),
    )
    .await;
    assert!(live.contains(id.trim()), "{live}");
}

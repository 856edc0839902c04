//! Usage errors, operator errors and what they show and write.

use super::*;

#[test]
fn default_database_is_appzone_db_in_the_working_directory() {
    let cli = Cli::empty();
    assert_eq!(cli.ok(&["migrate"]), "");
    assert!(cli.dir.path().join("appzone.db").exists());
}

#[test]
fn operator_errors_exit_1_with_one_clear_line_and_write_nothing() {
    let cli = Cli::new();
    let err = cli.fails(&["key", "create", "--org", "ghost", "--role", "admin"]);
    assert!(err.contains("ghost"), "{err}");
    cli.ok(&["org", "create", "acme"]);
    cli.fails(&["org", "create", "acme"]);
    cli.fails(&["key", "revoke", "AAAAAAAAAAAA"]);
    cli.fails(&["profile", "create", "--org", "ghost", "--name", "x"]);
    cli.fails(&["profile", "restore", "prof_missing"]);
    let table = cli.ok(&["key", "list", "--org", "acme"]);
    assert_eq!(table.lines().count(), 1, "no key was half-written: {table}");
}

#[test]
fn invalid_arguments_exit_2_naming_the_argument_and_do_nothing() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    let err = cli.refused(&["org", "create", "bad id!"]);
    assert!(err.contains("<ORG_ID>") && err.contains("bad id!"), "{err}");
    let err = cli.refused(&[
        "profile", "create", "--org", "acme", "--name", "x", "--id", "../bad",
    ]);
    assert!(err.contains("--id"), "{err}");
    let err = cli.refused(&["key", "create", "--org", "acme", "--role", "owner"]);
    assert!(err.contains("--role"), "{err}");
    assert_eq!(
        cli.ok(&["profile", "list", "--org", "acme"])
            .lines()
            .count(),
        1,
        "nothing was created"
    );
}

/// A secret in `APPZONE_DATABASE_URL` (a password in the URL or a `password` parameter) is in
/// no help text and no error; errors show the URL with `***` in its place.
#[test]
fn database_passwords_are_never_shown() {
    let cli = Cli::empty();
    let url = "postgres://appzone:s3cretPW@127.0.0.1:1/appzone?password=alsoSecret";
    let run = |args: &[&str]| {
        let out = cli
            .command()
            .env("APPZONE_DATABASE_URL", url)
            .args(args)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        for secret in ["s3cretPW", "alsoSecret"] {
            assert!(!text.contains(secret), "{args:?} shows {secret}: {text}");
        }
        text
    };
    for help in [
        &["--help"][..],
        &["serve", "--help"],
        &["org", "create", "--help"],
    ] {
        assert!(run(help).contains("APPZONE_DATABASE_URL"));
    }
    for command in [&["org", "create", "acme"][..], &["serve"], &["migrate"]] {
        let err = run(command);
        assert!(
            err.contains("postgres://appzone:***@127.0.0.1:1/appzone?password=***"),
            "{command:?}: {err}"
        );
    }
}

/// Each failure says its cause once, on one line, naming the file, URL or directory at fault,
/// and without waiting for a pool timeout first.
#[test]
fn errors_name_what_is_at_fault_and_say_the_cause_once() {
    let cli = Cli::new();
    let dir = cli.dir.path();
    let once = |err: &str, cause: &str| {
        assert_eq!(err.matches(cause).count(), 1, "{cause:?} once in {err:?}");
        assert_eq!(err.lines().count(), 1, "one line: {err:?}");
    };

    let err = cli.fails(&["--database-url", "sqlite://no/such/dir/a.db", "migrate"]);
    assert!(err.contains("sqlite://no/such/dir/a.db"), "{err}");
    once(&err, "the directory no/such/dir does not exist");

    let truncated = dir.join("truncated.json");
    std::fs::write(&truncated, "{\"providers\": [").unwrap();
    let err = cli.fails(&["catalog", "import", truncated.to_str().unwrap()]);
    assert!(err.contains("truncated.json"), "{err}");
    once(&err, "EOF while parsing");

    std::fs::write(
        dir.join("notes.db"),
        "these are not SQLite pages\n".repeat(200),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let err = cli.fails(&["--database-url", "sqlite://notes.db", "migrate"]);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "answered only after {:?}",
        started.elapsed()
    );
    assert!(err.contains("sqlite://notes.db"), "{err}");
    once(&err, "file is not a database");

    let started = std::time::Instant::now();
    let err = cli.fails(&[
        "--database-url",
        "postgres://appzone@127.0.0.1:1/appzone",
        "key",
        "list",
        "--org",
        "acme",
    ]);
    assert!(started.elapsed() < Duration::from_secs(2), "{err}");
    assert!(
        err.contains("postgres://appzone@127.0.0.1:1/appzone"),
        "{err}"
    );
    once(&err, "Connection refused");
}

/// Only `serve` and `migrate` create a database: another command on a mistyped URL, or one
/// with invalid input, leaves no file behind and says the database is missing.
#[test]
fn failing_commands_create_no_database() {
    let cli = Cli::empty();
    let typo = cli.dir.path().join("typo.db");
    let url = "sqlite://typo.db";
    cli.refused(&["--database-url", url, "org", "create", "bad org!"]);
    for command in [
        &["org", "create", "acme"][..],
        &["key", "list", "--org", "acme"],
        &["profile", "list", "--org", "acme"],
        &["catalog", "export"],
    ] {
        let args: Vec<&str> = ["--database-url", url]
            .iter()
            .chain(command)
            .copied()
            .collect();
        let err = cli.fails(&args);
        assert!(err.contains("typo.db does not exist"), "{command:?}: {err}");
    }
    let bad = cli.dir.path().join("bad.json");
    std::fs::write(&bad, "{").unwrap();
    cli.fails(&[
        "--database-url",
        url,
        "catalog",
        "import",
        bad.to_str().unwrap(),
    ]);
    let left: Vec<_> = std::fs::read_dir(cli.dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(left, ["bad.json"], "nothing created");

    // An existing file that was never migrated is not migrated behind the operator's back.
    std::fs::write(&typo, "").unwrap();
    let err = cli.fails(&["--database-url", url, "org", "create", "acme"]);
    assert!(err.contains("appzone-server migrate"), "{err}");
    assert_eq!(std::fs::metadata(&typo).unwrap().len(), 0, "left untouched");

    cli.ok(&["--database-url", url, "migrate"]);
    assert_eq!(
        cli.ok(&["--database-url", url, "org", "create", "acme"]),
        "acme\n"
    );
}

/// A `--database-url` without a scheme the server knows is a usage error (exit 2, as clap's
/// own), naming the value as far as it cannot hold a password and suggesting the SQLite form;
/// `postgresql://` is a PostgreSQL URL like `postgres://`.
/// `serve --redis-url` that the Redis client cannot read is a usage error before anything is
/// opened, and never shows the value (it may hold a password).
#[test]
fn a_redis_url_the_client_cannot_read_is_a_usage_error_that_keeps_passwords_out() {
    let cli = Cli::empty();
    let err = cli.refused(&["serve", "--redis-url", "memcached://:hunter2@cache/0"]);
    assert!(!err.contains("hunter2"), "{err}");
    assert!(
        err.contains("--redis-url") && err.contains("redis://"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(cli.dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing created: {left:?}");
}

#[test]
fn a_database_url_without_a_known_scheme_is_a_usage_error_that_keeps_passwords_out() {
    let cli = Cli::empty();
    let err = cli.refused(&["--database-url", "appzone.db", "org", "list"]);
    assert!(
        err.contains("`appzone.db`") && err.contains("sqlite://appzone.db"),
        "{err}"
    );
    assert!(err.contains("postgresql://"), "{err}");
    let err = cli.refused(&[
        "--database-url",
        "mysql://root:hunter2@db.internal/appzone",
        "migrate",
    ]);
    assert!(!err.contains("hunter2") && !err.contains("root"), "{err}");
    assert!(err.contains("***@db.internal/appzone"), "{err}");
    let err = cli.refused(&["--database-url", "appzone:hunter2@db/appzone", "migrate"]);
    assert!(!err.contains("hunter2"), "{err}");
    // The same from the environment.
    let out = cli
        .command()
        .env("APPZONE_DATABASE_URL", "appzone.db")
        .args(["org", "list"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let left: Vec<_> = std::fs::read_dir(cli.dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing created: {left:?}");

    // postgresql:// is accepted: the failure is the connection's (exit 1), not the URL's.
    let err = cli.fails(&[
        "--database-url",
        "postgresql://appzone@127.0.0.1:1/appzone",
        "org",
        "list",
    ]);
    assert!(err.contains("Connection refused"), "{err}");
}

/// `appzone-server --help` prints its rows of the exit-code table it shares with `appzone`,
/// and the table of docs/OPERATING.md is that table.
#[test]
fn the_help_and_the_operating_guide_show_the_exit_code_table_shared_with_appzone() {
    use appzone_contract::exit_code::{help_rows, TABLE};
    let help = Cli::empty().ok(&["--help"]);
    let section: String = help
        .lines()
        .skip_while(|line| !line.starts_with("Exit status"))
        .skip(1)
        .take_while(|line| !line.is_empty())
        .map(|line| format!("{line}\n"))
        .collect();
    assert_eq!(section, help_rows(true), "{help}");

    let guide = include_str!("../../../../../docs/OPERATING.md");
    let table: Vec<&str> = guide
        .lines()
        .skip_while(|line| *line != "| exit code | meaning | `appzone-server` |")
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .collect();
    let rows: Vec<String> = TABLE
        .iter()
        .map(|row| {
            let server = if row.server { "yes" } else { "no" };
            format!("| {} | {} | {server} |", row.code, row.meaning)
        })
        .collect();
    assert_eq!(table, rows, "docs/OPERATING.md's exit code table");
}

#[test]
fn blank_names_are_refused() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    for name in ["", "   "] {
        let err = cli.refused(&["profile", "create", "--org", "acme", "--name", name]);
        assert!(err.contains("--name"), "{err}");
        cli.refused(&["org", "create", "globex", "--name", name]);
    }
    assert_eq!(
        cli.ok(&["profile", "list", "--org", "acme"])
            .lines()
            .count(),
        1,
        "no profile created"
    );
    cli.fails(&["key", "list", "--org", "globex"]);
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
        "--redis-url",
        "APPZONE_REDIS_URL",
    ] {
        assert!(serve.contains(word), "serve --help lacks {word}");
    }
}

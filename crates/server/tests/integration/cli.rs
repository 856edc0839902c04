//! The operator CLI, run as the real binary on a fresh SQLite file.

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use appzone_test_support::{eventually, fast_config, TestApp};

use crate::server_process::{stdout_of, ServerProcess};

struct Cli {
    dir: tempfile::TempDir,
    /// The PostgreSQL schema the commands use instead of `./appzone.db`, if any.
    postgres: Option<appzone_test_support::PgSchema>,
}

impl Cli {
    /// A working directory whose default database `migrate` has created.
    fn new() -> Self {
        let cli = Self::empty();
        cli.ok(&["migrate"]);
        cli
    }

    /// An empty working directory: no database yet.
    fn empty() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            postgres: None,
        }
    }

    /// A working directory whose commands use a fresh, migrated PostgreSQL schema.
    async fn postgres() -> Self {
        let cli = Self {
            postgres: Some(appzone_test_support::fresh_postgres_schema().await),
            ..Self::empty()
        };
        cli.ok(&["migrate"]);
        cli
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_appzone-server"));
        command
            .current_dir(self.dir.path())
            .env_remove("APPZONE_DATABASE_URL")
            .env_remove("APPZONE_LOG")
            .env_remove("RUST_LOG");
        if let Some(schema) = &self.postgres {
            command.env("APPZONE_DATABASE_URL", &schema.url);
        }
        command
    }

    /// The database URL the commands use.
    fn url(&self) -> String {
        match &self.postgres {
            Some(schema) => schema.url.clone(),
            None => format!("sqlite://{}", self.dir.path().join("appzone.db").display()),
        }
    }

    /// The database, opened as the server opens it.
    async fn store(&self) -> appzone_server::storage::Store {
        let settings = appzone_server::storage::PoolSettings::default();
        appzone_server::storage::Store::connect_existing(&self.url(), &settings)
            .await
            .unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs and expects success; returns stdout.
    #[track_caller]
    fn ok(&self, args: &[&str]) -> String {
        stdout_of(self.command().args(args), &format!("{args:?}"))
    }

    /// Runs and expects success with nothing on stdout; returns stderr.
    #[track_caller]
    fn quiet(&self, args: &[&str]) -> String {
        let out = self.run(args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(out.status.success(), "{args:?} failed: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{args:?} printed on stdout: {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
        stderr
    }

    /// Runs and expects an operator error: exit 1, empty stdout, and one line on stderr,
    /// starting `error: `.
    #[track_caller]
    fn fails(&self, args: &[&str]) -> String {
        let stderr = self.fails_with(1, args);
        assert_eq!(
            stderr.lines().count(),
            1,
            "{args:?}: one error line: {stderr:?}"
        );
        stderr
    }

    /// Runs and expects an invalid command line: exit 2, empty stdout, stderr starting
    /// `error: `.
    #[track_caller]
    fn refused(&self, args: &[&str]) -> String {
        self.fails_with(2, args)
    }

    #[track_caller]
    fn fails_with(&self, code: i32, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{args:?} should exit {code}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
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

/// The cell of a `table` (as the CLI prints them: left-aligned columns under their headers) in
/// data row `row` (0 is the first after the header) and the column headed `column`.
#[track_caller]
fn cell(table: &str, row: usize, column: &str) -> String {
    let mut lines = table.lines();
    let header = lines.next().unwrap();
    let start = header
        .find(column)
        .unwrap_or_else(|| panic!("no column {column}: {table}"));
    let end = header[start..]
        .find("  ")
        .and_then(|gap| {
            header[start + gap..]
                .find(|c: char| c != ' ')
                .map(|next| start + gap + next)
        })
        .unwrap_or(usize::MAX);
    let line = lines
        .nth(row)
        .unwrap_or_else(|| panic!("no row {row}: {table}"));
    line.get(start..end.min(line.len()))
        .unwrap_or("")
        .trim()
        .to_owned()
}

#[test]
fn default_database_is_appzone_db_in_the_working_directory() {
    let cli = Cli::empty();
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

/// A name's limit is 200 characters, as `--help` says, whatever their bytes: 200 Japanese
/// characters (600 bytes) are a name, 201 are not.
#[test]
fn names_are_limited_in_characters_not_bytes() {
    let cli = Cli::new();
    let longest = "東".repeat(200);
    assert_eq!(
        cli.ok(&["org", "create", "acme", "--name", &longest]),
        "acme\n"
    );
    assert!(cli.ok(&["org", "list"]).contains(&longest));
    let err = cli.refused(&["org", "create", "beta", "--name", &"東".repeat(201)]);
    assert!(err.contains("1 to 200 printable characters"), "{err}");
}

/// A table's columns line up in a terminal: a Japanese name takes two cells per character, so
/// it is padded by its width on screen, not by its count of characters.
#[test]
fn org_list_lines_up_names_of_wide_characters() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme", "--name", "東京オフィス"]);
    cli.ok(&["org", "create", "beta", "--name", "Beta Inc"]);
    let table = cli.ok(&["org", "list"]);
    let lines: Vec<&str> = table.lines().collect();
    // 6 wide characters are 12 cells, the column's widest: 2 spaces follow them, and 4 follow
    // the 8 cells of "Beta Inc".
    assert!(
        lines[0].starts_with("ORG_ID  NAME          CREATED"),
        "{table}"
    );
    for (line, start) in lines[1..]
        .iter()
        .zip(["acme    東京オフィス  ", "beta    Beta Inc      "])
    {
        let created = line.strip_prefix(start).unwrap_or_default();
        assert!(created.starts_with(|c: char| c.is_ascii_digit()), "{table}");
    }
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

/// A catalog import that renames a zone is refused without --prune, with the truth about
/// zones: the region's listing still answers 200, without the zone.
#[test]
fn catalog_import_refusing_a_zone_rename_says_the_zone_is_no_longer_listed() {
    let cli = Cli::new();
    let mut catalog: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    catalog["providers"][0]["regions"][0]["zones"][0] = "renamed-zone-1x".into();
    let file = cli.dir.path().join("renamed.json");
    std::fs::write(&file, catalog.to_string()).unwrap();
    let err = cli.fails(&["catalog", "import", file.to_str().unwrap()]);
    assert!(
        err.contains("remove 0 providers, 0 regions, 1 zone (a removed zone is no longer listed in its region)"),
        "{err}"
    );
    assert!(!err.contains("stop answering"), "{err}");
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

    let guide = include_str!("../../../../docs/OPERATING.md");
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

/// `key revoke` takes the whole key as well as its id, and never prints what it was given.
#[test]
fn key_revoke_accepts_a_whole_key_and_never_echoes_it() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    let key = cli.ok(&["key", "create", "--org", "acme", "--role", "admin"]);
    let key = key.trim();
    let secret = &key[17..];
    let mangled = format!("{key}x");
    let err = cli.fails(&["key", "revoke", &mangled]);
    assert!(!err.contains(secret), "secret echoed: {err}");
    assert!(err.contains("key list"), "{err}");
    let said = cli.quiet(&["key", "revoke", key]);
    assert!(!said.contains(secret), "secret echoed: {said}");
    let row = cli.ok(&["key", "list", "--org", "acme"]);
    assert_ne!(cell(&row, 0, "REVOKED"), "-", "revoked: {row}");
    let said = cli.quiet(&["key", "revoke", key]);
    assert!(
        said.contains(&key[4..16]) && !said.contains(secret),
        "{said}"
    );
}

/// `key revoke` confirms on stderr (stdout stays empty), and revoking a key already revoked
/// succeeds and says so, so a rotation script can be re-run; an id no key has is an error.
#[test]
fn key_revoke_confirms_on_stderr_and_revoking_a_revoked_key_succeeds() {
    key_revoke_confirms_and_is_repeatable(&Cli::new());
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_key_revoke_confirms_on_stderr_and_revoking_a_revoked_key_succeeds() {
    key_revoke_confirms_and_is_repeatable(&Cli::postgres().await);
}

fn key_revoke_confirms_and_is_repeatable(cli: &Cli) {
    cli.ok(&["org", "create", "acme"]);
    let key = cli.ok(&["key", "create", "--org", "acme", "--role", "admin"]);
    let key_id = &key[4..16];
    assert_eq!(
        cli.quiet(&["key", "revoke", key_id]),
        format!("revoked key {key_id} (organization acme)\n")
    );
    let listed = cli.ok(&["key", "list", "--org", "acme"]);
    for _ in 0..2 {
        assert_eq!(
            cli.quiet(&["key", "revoke", key_id]),
            format!("key {key_id} was already revoked\n")
        );
    }
    assert_eq!(
        cli.ok(&["key", "list", "--org", "acme"]),
        listed,
        "the revocation time is the first revocation's"
    );
    let err = cli.fails(&["key", "revoke", "AAAAAAAAAAAA"]);
    assert!(err.contains("\"AAAAAAAAAAAA\""), "{err}");
}

/// `org list` prints a table of every organization with its active keys and live profiles.
#[tokio::test]
async fn org_list_prints_a_table_with_active_keys_and_live_profiles() {
    org_list_counts_active_keys_and_live_profiles(&Cli::new()).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_org_list_prints_a_table_with_active_keys_and_live_profiles() {
    org_list_counts_active_keys_and_live_profiles(&Cli::postgres().await).await;
}

async fn org_list_counts_active_keys_and_live_profiles(cli: &Cli) {
    assert_eq!(
        cli.ok(&["org", "list"]),
        "ORG_ID  NAME  CREATED  KEYS  PROFILES\n"
    );
    cli.ok(&["org", "create", "globex"]);
    cli.ok(&["org", "create", "acme", "--name", "Acme Corp"]);
    let key = cli.ok(&["key", "create", "--org", "acme", "--role", "admin"]);
    cli.ok(&["key", "create", "--org", "acme", "--role", "member"]);
    cli.quiet(&["key", "revoke", &key[4..16]]);
    cli.ok(&["profile", "create", "--org", "acme", "--name", "a"]);
    let deleted = cli.ok(&["profile", "create", "--org", "acme", "--name", "b"]);
    cli.ok(&["profile", "create", "--org", "globex", "--name", "c"]);
    // Deleted as the API deletes: a tombstone.
    let store = cli.store().await;
    sqlx::query("UPDATE profiles SET deleted_at = 1 WHERE id = $1")
        .bind(deleted.trim())
        .execute(store.pool())
        .await
        .unwrap();
    store.close().await;

    let table = cli.ok(&["org", "list"]);
    assert_eq!(table.lines().count(), 3, "{table}");
    assert!(
        table.starts_with("ORG_ID  NAME       CREATED               KEYS  PROFILES\n"),
        "{table}"
    );
    let expected = [
        ("acme", "Acme Corp", "1", "1"),
        ("globex", "globex", "0", "1"),
    ];
    for (row, (id, name, keys, profiles)) in expected.into_iter().enumerate() {
        assert_eq!(cell(&table, row, "ORG_ID"), id, "{table}");
        assert_eq!(cell(&table, row, "NAME"), name, "{table}");
        assert!(cell(&table, row, "CREATED").ends_with('Z'), "{table}");
        assert_eq!(cell(&table, row, "KEYS"), keys, "{table}");
        assert_eq!(cell(&table, row, "PROFILES"), profiles, "{table}");
    }
}

/// `key list`'s LAST_USED says when a key last authenticated a request (`-`: never), written
/// by the server at most once a minute per key, off the request's path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_list_shows_when_each_key_was_last_used_written_at_most_once_a_minute() {
    let cli = Cli::new();
    let app = TestApp::sqlite_at(&cli.url(), fast_config()).await;
    key_last_used_is_recorded_at_most_once_a_minute(&cli, &app).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_key_list_shows_when_each_key_was_last_used_written_at_most_once_a_minute() {
    let cli = Cli::postgres().await;
    let app = TestApp::postgres_at(&cli.url(), fast_config()).await;
    key_last_used_is_recorded_at_most_once_a_minute(&cli, &app).await;
}

async fn key_last_used_is_recorded_at_most_once_a_minute(cli: &Cli, app: &TestApp) {
    let acme: appzone_server::model::OrgId = "acme".parse().unwrap();
    let last_used = |key: String| {
        let store = app.store.clone();
        let acme = acme.clone();
        async move {
            let keys = store.list_keys(&acme).await.unwrap();
            let key = keys.into_iter().find(|k| k.key_id == key[4..16]).unwrap();
            key.last_used_at
        }
    };
    let row_of = |table: &str, key: &str| {
        table
            .lines()
            .skip(1)
            .position(|line| line.starts_with(&key[4..16]))
            .unwrap()
    };
    let table = cli.ok(&["key", "list", "--org", "acme"]);
    assert_eq!(
        cell(&table, row_of(&table, &app.admin_key), "LAST_USED"),
        "-"
    );

    let path = TestApp::zones_path("aws", "us-east-1");
    assert_eq!(app.get(&path, Some(&app.admin_key)).await.status, 200);
    let admin = app.admin_key.clone();
    assert!(
        eventually(Duration::from_secs(10), || {
            let admin = admin.clone();
            async { last_used(admin).await.is_some() }
        })
        .await,
        "the first use is written"
    );
    let first = last_used(admin.clone()).await;
    for _ in 0..5 {
        assert_eq!(app.get(&path, Some(&app.admin_key)).await.status, 200);
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        last_used(admin.clone()).await,
        first,
        "not written again within the minute"
    );
    assert_eq!(last_used(app.member_key.clone()).await, None);
    assert_eq!(
        app.service.state.last_used.len(),
        1,
        "one entry per key used"
    );

    let table = cli.ok(&["key", "list", "--org", "acme"]);
    let shown = cell(&table, row_of(&table, &app.admin_key), "LAST_USED");
    assert_eq!(
        shown,
        appzone_server::model::format_ms(first.unwrap()),
        "{table}"
    );
    assert_eq!(
        cell(&table, row_of(&table, &app.member_key), "LAST_USED"),
        "-",
        "{table}"
    );
}

/// The key-rotation procedure of docs/OPERATING.md, step by step against a serving server:
/// create the new key, move the client to it, watch the old key's LAST_USED stop moving, revoke
/// the old key; the revocation step re-run twice (a script run again) succeeds and changes
/// nothing.
///
/// Multi-threaded: the operator commands run blocking on the test's thread, and the server in
/// this process must go on meanwhile (on one thread, a transaction of its own, most likely the
/// start-up purge's, could stay open until the command gave up on the lock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_rotation_as_the_readme_describes_it_can_be_re_run() {
    let cli = Cli::new();
    let app = TestApp::sqlite_at(&cli.url(), fast_config()).await;
    let path = TestApp::zones_path("aws", "us-east-1");
    let old = app.admin_key.clone();
    let last_used = |key: &str| {
        let table = cli.ok(&["key", "list", "--org", "acme"]);
        let row = table
            .lines()
            .skip(1)
            .position(|line| line.starts_with(&key[4..16]))
            .unwrap();
        cell(&table, row, "LAST_USED")
    };
    // A client uses the old key.
    assert_eq!(app.get(&path, Some(&old)).await.status, 200);
    assert!(
        eventually(Duration::from_secs(10), || async { last_used(&old) != "-" }).await,
        "the old key's use is recorded"
    );
    // 1. Create the new key.
    let new = cli.ok(&[
        "key", "create", "--org", "acme", "--role", "admin", "--name", "ci-2026",
    ]);
    let new = new.trim().to_owned();
    assert_eq!(last_used(&new), "-");
    // 2. Deploy it: the client switches.
    assert_eq!(app.get(&path, Some(&new)).await.status, 200);
    assert!(
        eventually(Duration::from_secs(10), || async { last_used(&new) != "-" }).await,
        "the new key's use is recorded"
    );
    // 3. The old key's LAST_USED no longer moves.
    let seen = last_used(&old);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(app.get(&path, Some(&new)).await.status, 200);
    assert_eq!(last_used(&old), seen);
    // 4. Revoke the old key; the script re-run twice succeeds and keeps the first revocation.
    let old_id = &old[4..16];
    assert_eq!(
        cli.quiet(&["key", "revoke", old_id]),
        format!("revoked key {old_id} (organization acme)\n")
    );
    let after = cli.ok(&["key", "list", "--org", "acme"]);
    for _ in 0..2 {
        assert_eq!(
            cli.quiet(&["key", "revoke", old_id]),
            format!("key {old_id} was already revoked\n")
        );
        assert_eq!(cli.ok(&["key", "list", "--org", "acme"]), after);
    }
    assert!(
        eventually(Duration::from_secs(5), || async {
            app.get(&path, Some(&old)).await.status == 401
        })
        .await,
        "the old key stops working within the key cache TTL"
    );
    assert_eq!(
        app.get(&path, Some(&new)).await.status,
        200,
        "the new key works"
    );
}

/// `profile restore ID` prints nothing on stdout (nor on stderr) and makes the tombstone a live
/// profile again; a profile that is not deleted is an error.
#[tokio::test]
async fn profile_restore_prints_nothing_and_the_profile_is_live_again() {
    profile_restore_is_quiet(&Cli::new()).await;
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_profile_restore_prints_nothing_and_the_profile_is_live_again() {
    profile_restore_is_quiet(&Cli::postgres().await).await;
}

async fn profile_restore_is_quiet(cli: &Cli) {
    cli.ok(&["org", "create", "acme"]);
    let id = cli.ok(&["profile", "create", "--org", "acme", "--name", "checkout"]);
    let id = id.trim();
    let store = cli.store().await;
    sqlx::query("UPDATE profiles SET deleted_at = 1 WHERE id = $1")
        .bind(id)
        .execute(store.pool())
        .await
        .unwrap();
    store.close().await;
    let tombstones = cli.ok(&["profile", "list", "--org", "acme", "--deleted"]);
    assert_eq!(cell(&tombstones, 0, "ID"), id, "{tombstones}");

    assert_eq!(cli.quiet(&["profile", "restore", id]), "");
    let live = cli.ok(&["profile", "list", "--org", "acme"]);
    assert_eq!(cell(&live, 0, "ID"), id, "{live}");
    assert_eq!(cell(&live, 0, "DELETED"), "-", "{live}");
    let err = cli.fails(&["profile", "restore", id]);
    assert!(err.contains(id), "{err}");
}

/// `catalog import` never removes providers, regions or zones unless told to with `--prune`,
/// and says on stderr what it added, changed and removed.
#[test]
fn catalog_import_removes_only_with_prune_and_prints_a_summary() {
    let cli = Cli::new();
    let builtin = cli.ok(&["catalog", "export"]);
    let empty = cli.dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"providers":[]}"#).unwrap();
    let empty = empty.to_str().unwrap();
    let err = cli.fails(&["catalog", "import", empty]);
    assert!(
        err.contains("--prune") && err.contains("remove 3 providers"),
        "{err}"
    );
    assert_eq!(cli.ok(&["catalog", "export"]), builtin, "nothing changed");

    let mut catalog: serde_json::Value = serde_json::from_str(&builtin).unwrap();
    let file = cli.dir.path().join("catalog.json");
    let import = |catalog: &serde_json::Value, extra: &[&str]| {
        std::fs::write(&file, catalog.to_string()).unwrap();
        let mut args = vec!["catalog", "import", file.to_str().unwrap()];
        args.extend(extra);
        let out = cli.run(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        String::from_utf8(out.stderr).unwrap()
    };
    assert_eq!(
        import(&catalog, &[]),
        "catalog import: no change (catalog version 2)\n"
    );
    catalog["providers"][0]["regions"][0]["zones"]
        .as_array_mut()
        .unwrap()
        .push("new-zone-1x".into());
    catalog["providers"][1]["name"] = "Renamed".into();
    assert_eq!(
        import(&catalog, &[]),
        "catalog import: added 0 providers, 0 regions, 1 zone; changed 1 provider, 0 regions, \
         0 zones; removed 0 providers, 0 regions, 0 zones (catalog version 3)\n"
    );
    catalog["providers"].as_array_mut().unwrap().truncate(2);
    let summary = import(&catalog, &["--prune"]);
    assert!(summary.contains("removed 1 provider,"), "{summary}");
}

#[test]
fn key_revoke_and_profile_lifecycle() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    let key = cli.ok(&["key", "create", "--org", "acme", "--role", "member"]);
    cli.quiet(&["key", "revoke", &key[4..16]]);
    let keys = cli.ok(&["key", "list", "--org", "acme"]);
    assert_ne!(
        cell(&keys, 0, "REVOKED"),
        "-",
        "revoked shows a time: {keys}"
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
    assert_eq!(
        cli.ok(&["catalog", "import", "--prune", good.to_str().unwrap()]),
        ""
    );
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
        "--redis-url",
        "APPZONE_REDIS_URL",
    ] {
        assert!(serve.contains(word), "serve --help lacks {word}");
    }
}

/// The README's first-run promise ("Two commands"): `serve --demo` prints curl lines whose
/// labelled statuses hold, and SIGTERM stops the server cleanly.
#[test]
fn serve_demo_prints_curl_lines_that_give_the_labelled_statuses() {
    let cli = Cli::new();
    let Demo {
        mut child,
        mut lines,
        expectations,
        ..
    } = Demo::start(&cli, "info");
    let statuses: Vec<u16> = expectations.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses, [200, 204, 403, 404, 200]);

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
    // stderr, from the start, is the log: it never carries a key (the demo's go to stdout).
    for (_, curl) in &expectations {
        let key = Demo::key(curl);
        for line in &rest {
            assert!(!line.contains(&key[17..]), "key secret in log line: {line}");
            assert!(!line.starts_with("curl "), "a curl line on stderr: {line}");
        }
    }
}

/// A second `serve --demo` says that the first run's keys, and so its curl lines, stopped
/// working, and its 204 line works again (the example profile the first run's deleted is
/// restored); it listens on a host name as well as on an address.
#[test]
fn a_second_demo_run_says_it_revoked_the_first_runs_keys() {
    let cli = Cli::new();
    let mut first = Demo::start_on(&cli, "info", "localhost:0");
    assert!(
        !first.preamble.iter().any(|line| line.contains("revoked")),
        "{:#?}",
        first.preamble
    );
    let (status, zones) = first.expectations[0].clone();
    assert_eq!(Demo::send(&zones), status, "served on localhost: {zones}");
    assert_eq!(Demo::send(&first.expectations[1].1), 204);
    Demo::stop(&mut first.child);

    let mut second = Demo::start(&cli, "info");
    assert!(
        second.preamble.iter().any(|line| line
            == "revoked the 2 keys of the previous --demo run: its curl lines now answer 401"),
        "{:#?}",
        second.preamble
    );
    let (status, _) = &second.expectations[0];
    assert_eq!(Demo::send(&second.expectations[0].1), *status);
    // The 204 line deletes the document's example profile: the first run's deleted it, and
    // the second run restored it, so its line answers 204 again.
    for run in [&first, &second] {
        let (status, delete) = &run.expectations[1];
        assert_eq!(*status, 204);
        assert!(
            delete.ends_with(&format!(
                "/{}",
                appzone_contract::openapi::EXAMPLE_PROFILE_ID
            )),
            "{delete}"
        );
    }
    assert_eq!(Demo::send(&second.expectations[1].1), 204);
    let stale = zones.replace(
        zones.rsplit_once(' ').unwrap().1,
        second.expectations[0].1.rsplit_once(' ').unwrap().1,
    );
    assert_eq!(Demo::send(&stale), 401, "the first run's key is revoked");
    Demo::stop(&mut second.child);
}

/// `serve --demo` running: its labelled curl lines (stdout), and its log (stderr) to read.
struct Demo {
    child: std::process::Child,
    /// The demo's stdout, kept open while the server runs (as a terminal would be).
    _stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
    lines: std::io::Lines<BufReader<std::process::ChildStderr>>,
    /// The lines before the first curl line.
    preamble: Vec<String>,
    /// (status the line is labelled with, the curl command line after `curl `)
    expectations: Vec<(u16, String)>,
}

impl Demo {
    fn start(cli: &Cli, log_filter: &str) -> Self {
        Self::start_on(cli, log_filter, "127.0.0.1:0")
    }

    fn start_on(cli: &Cli, log_filter: &str, listen: &str) -> Self {
        Self::start_with(cli, log_filter, listen, &[])
    }

    /// [`Self::start_on`] with these `APPZONE_*` settings in the environment.
    fn start_with(cli: &Cli, log_filter: &str, listen: &str, env: &[(&str, &str)]) -> Self {
        let mut child = cli
            .command()
            .args(["serve", "--demo", "--listen", listen])
            .env("APPZONE_LOG", log_filter)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The demo's lines come on stdout; stderr carries only the log.
        let stdout = child.stdout.take().unwrap();
        let mut demo_lines = BufReader::new(stdout).lines();
        let stderr = child.stderr.take().unwrap();
        let lines = BufReader::new(stderr).lines();
        let mut expectations = Vec::new();
        let mut preamble = Vec::new();
        let mut label = None;
        while let Some(Ok(line)) = demo_lines.next() {
            if expectations.is_empty() {
                preamble.push(line.clone());
            }
            if let Some(rest) = line.strip_prefix("# ") {
                label = rest.split(':').next().and_then(|s| s.parse::<u16>().ok());
            } else if let Some(curl) = line.strip_prefix("curl ") {
                expectations.push((
                    label.take().expect("each curl line is labelled"),
                    curl.to_owned(),
                ));
                if expectations.len() == 5 {
                    break;
                }
            }
        }
        assert_eq!(expectations.len(), 5, "demo output: {preamble:#?}");
        Self {
            child,
            _stdout: demo_lines,
            lines,
            preamble,
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
        let url = words.last().unwrap().trim_matches('\'');
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
                .request(method, url)
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
        ..
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
        ..
    } = Demo::start_with(
        &cli,
        "info",
        "127.0.0.1:0",
        // The requests all go at once, each on a connection of its own from 127.0.0.1: more
        // than one address may open by default.
        &[("APPZONE_MAX_CONNECTIONS_PER_ADDRESS", "1024")],
    );
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

/// `backup FILE` makes a consistent copy of the SQLite database while the server serves
/// deletes: every profile in it is live or deleted with its audit record, the deletes answered
/// before it started are in it, none it holds was left unanswered, its keys are the source's,
/// SQLite finds it intact, and it is private (0600). Restored as docs/OPERATING.md says, it serves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backup_copies_the_database_consistently_while_deletes_are_served() {
    use std::collections::BTreeSet;
    use std::os::unix::fs::PermissionsExt;

    let cli = Cli::new();
    let app = std::sync::Arc::new(TestApp::sqlite_at(&cli.url(), fast_config()).await);
    let ids = app.seed_profiles("acme", "bk", 300).await;

    // Deletes answered before the backup starts must be in it.
    let mut before = BTreeSet::new();
    for id in &ids[..20] {
        let resp = app
            .delete(&TestApp::profile_path(id), Some(&app.admin_key))
            .await;
        assert_eq!(resp.status, 204);
        before.insert(id.clone());
    }
    // Four clients deleting the rest while the backup runs.
    let deleters: Vec<_> = ids[20..]
        .chunks(70)
        .map(|chunk| {
            let (app, chunk) = (app.clone(), chunk.to_vec());
            tokio::spawn(async move {
                let mut done = Vec::new();
                for id in chunk {
                    let resp = app
                        .delete(&TestApp::profile_path(&id), Some(&app.admin_key))
                        .await;
                    assert_eq!(resp.status, 204, "{}", resp.body);
                    done.push(id);
                }
                done
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let backup = cli.dir.path().join("appzone-backup.db");
    let out = {
        let mut command = cli.command();
        command
            .arg("backup")
            .arg(&backup)
            .env("APPZONE_DATABASE_URL", cli.url());
        tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap()
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out:?}");
    let mut after = BTreeSet::new();
    for deleter in deleters {
        after.extend(deleter.await.unwrap());
    }
    after.extend(before.iter().cloned());
    assert_eq!(after.len(), 300, "every delete was answered 204");

    let mode = std::fs::metadata(&backup).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "private like the database");

    // Read the copy as a database of its own.
    let copy_url = format!("sqlite://{}?mode=ro", backup.display());
    let mut copy = appzone_test_support::connect_admin(&copy_url)
        .await
        .unwrap();
    let integrity: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut copy)
        .await
        .unwrap();
    assert_eq!(integrity, "ok");
    let rows: Vec<(String, Option<i64>)> =
        sqlx::query_as("SELECT id, deleted_at FROM profiles WHERE id LIKE 'prof_bk_%'")
            .fetch_all(&mut copy)
            .await
            .unwrap();
    assert_eq!(
        rows.len(),
        300,
        "every profile is in the copy, live or deleted"
    );
    let deleted: BTreeSet<String> = rows
        .into_iter()
        .filter(|(_, deleted_at)| deleted_at.is_some())
        .map(|(id, _)| id)
        .collect();
    let audited: BTreeSet<String> = sqlx::query_scalar(
        "SELECT profile_id FROM profile_audit WHERE action = 'delete' AND profile_id LIKE 'prof_bk_%'",
    )
    .fetch_all(&mut copy)
    .await
    .unwrap()
    .into_iter()
    .collect();
    assert_eq!(
        audited, deleted,
        "each delete with its audit record: one moment"
    );
    assert!(
        before.is_subset(&deleted),
        "deletes answered before the backup are in it"
    );
    assert!(deleted.is_subset(&after));
    eprintln!(
        "the copy holds {} of the 300 deletes ({} answered before it started)",
        deleted.len(),
        before.len()
    );
    drop(copy);

    // Restored as docs/OPERATING.md says, into a new directory: the CLI reads what the copy holds.
    let restored = Cli::empty();
    std::fs::copy(&backup, restored.dir.path().join("appzone.db")).unwrap();
    let live = restored.ok(&["profile", "list", "--org", "acme"]);
    let tombstones = restored.ok(&["profile", "list", "--org", "acme", "--deleted"]);
    for id in &ids {
        assert_ne!(
            live.contains(id.as_str()),
            tombstones.contains(id.as_str()),
            "{id} is live or deleted, not both nor neither"
        );
        assert_eq!(tombstones.contains(id.as_str()), deleted.contains(id));
    }
    assert_eq!(
        restored.ok(&["key", "list", "--org", "acme"]),
        cli.ok(&["key", "list", "--org", "acme"]),
        "the keys are the source's"
    );
}

/// `backup` refuses a FILE that exists (left as it was) and a PostgreSQL database (pg_dump's
/// job), with one `error:` line and nothing on stdout.
#[test]
fn backup_refuses_an_existing_file_and_a_postgresql_database_and_writes_nothing() {
    let cli = Cli::new();
    let existing = cli.dir.path().join("existing.db");
    std::fs::write(&existing, "keep me").unwrap();
    let err = cli.fails(&["backup", existing.to_str().unwrap()]);
    assert!(err.contains("existing.db exists"), "{err}");
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "keep me");

    let missing_dir = cli.dir.path().join("no-such-dir").join("copy.db");
    let err = cli.fails(&["backup", missing_dir.to_str().unwrap()]);
    assert!(err.contains("copy.db"), "{err}");

    let err = cli.fails(&[
        "--database-url",
        "postgres://appzone:secret@127.0.0.1:1/appzone",
        "backup",
        "copy.db",
    ]);
    assert_eq!(
        err,
        "error: backup copies SQLite databases; for PostgreSQL use pg_dump (for example: \
         pg_dump --format=custom --file=FILE DATABASE_URL)\n"
    );
    assert!(!cli.dir.path().join("copy.db").exists());
}

#[tokio::test]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_backup_is_refused_naming_pg_dump() {
    let cli = Cli::postgres().await;
    let err = cli.fails(&["backup", "copy.db"]);
    assert!(err.contains("pg_dump --format=custom"), "{err}");
    assert!(!cli.dir.path().join("copy.db").exists());
}

fn sh(program: &str, args: &[&str]) {
    let what = format!("{program} {args:?}");
    stdout_of(Command::new(program).args(args), &what);
}

/// The SQLite backup and restore commands of docs/OPERATING.md, run as written.
#[test]
fn sqlite_backup_and_restore_as_documented() {
    let cli = Cli::new();
    cli.ok(&["org", "create", "acme"]);
    let id = cli.ok(&["profile", "create", "--org", "acme", "--name", "kept"]);
    let db = cli.dir.path().join("appzone.db");
    let backup = cli.dir.path().join("appzone-backup.db");
    assert_eq!(cli.ok(&["backup", "appzone-backup.db"]), "");
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

/// The PostgreSQL backup and restore of docs/OPERATING.md, scoped to the test's schema.
#[tokio::test]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_backup_and_restore_as_documented() {
    let (url, schema) = appzone_test_support::postgres_schema().await;
    let scoped = appzone_test_support::scoped_url(&url, &schema);
    let cli = Cli::new();
    let run = |args: &[&str], db_url: &str| {
        let mut command = cli.command();
        command.env("APPZONE_DATABASE_URL", db_url).args(args);
        stdout_of(&mut command, &format!("{args:?}"))
    };
    run(&["migrate"], &scoped);
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
    let mut admin = appzone_test_support::connect_admin(&url).await.unwrap();
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
        &appzone_test_support::scoped_url(&restored_url, &schema),
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

#[tokio::test]
async fn healthcheck_exits_0_on_a_200_from_the_local_server_and_1_with_one_line_otherwise() {
    let served = Cli::new();
    let database = format!(
        "sqlite://{}",
        served.dir.path().join("appzone.db").display()
    );
    let mut server = ServerProcess::start(&database, &[], "info").await;
    let port = server.addr().rsplit_once(':').unwrap().1.to_owned();
    // Run where no database is: the health check must not open (or create) one.
    let cli = Cli::empty();
    let wildcard = format!("0.0.0.0:{port}");
    assert_eq!(cli.ok(&["healthcheck", "--listen", &wildcard]), "");
    assert_eq!(
        cli.ok(&["healthcheck", "--listen", &wildcard, "--ready"]),
        ""
    );
    let from_env = cli
        .command()
        .env("APPZONE_LISTEN", &wildcard)
        .arg("healthcheck")
        .output()
        .unwrap();
    assert!(from_env.status.success(), "{from_env:?}");
    assert!(!cli.dir.path().join("appzone.db").exists());

    assert!(server.terminate().await.success());
    let error = cli.fails(&["healthcheck", "--listen", &wildcard, "--timeout-secs", "1"]);
    assert!(
        error.starts_with(&format!(
            "error: cannot reach http://127.0.0.1:{port}/healthz"
        )),
        "{error}"
    );
    cli.refused(&["healthcheck", "--listen", "nowhere"]);
    cli.refused(&["healthcheck", "--timeout-secs", "0"]);
}

/// `catalog export` then `catalog import` changes nothing, identities and source included,
/// and a 1.1 catalog file (no identities, no source) still imports and exports as it was.
#[test]
fn catalog_export_import_is_a_no_op_with_identities_and_a_1_1_file_still_imports() {
    let cli = Cli::new();
    let builtin = cli.ok(&["catalog", "export"]);
    let parsed: serde_json::Value = serde_json::from_str(&builtin).unwrap();
    assert_eq!(parsed["source"]["compiled_on"], "2026-11-27");
    assert_eq!(
        parsed["providers"][0]["regions"][0]["name_scope"],
        "uniform"
    );
    let file = cli.dir.path().join("catalog.json");
    std::fs::write(&file, &builtin).unwrap();
    let stderr = cli.quiet(&["catalog", "import", file.to_str().unwrap()]);
    assert!(stderr.contains("no change"), "{stderr}");
    assert_eq!(cli.ok(&["catalog", "export"]), builtin);

    // The 1.1 form: the same providers, regions and zones, nothing else.
    let mut old = parsed.clone();
    old.as_object_mut().unwrap().remove("source");
    for provider in old["providers"].as_array_mut().unwrap() {
        for region in provider["regions"].as_array_mut().unwrap() {
            let region = region.as_object_mut().unwrap();
            for field in ["name_scope", "identities", "sources", "note"] {
                region.remove(field);
            }
        }
    }
    std::fs::write(&file, old.to_string()).unwrap();
    cli.quiet(&["catalog", "import", file.to_str().unwrap()]);
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    assert_eq!(exported, old);
}

/// `catalog import --from` refreshes the regions a cloud's output shows: it adds ids and names
/// (names only where the region's names are uniform), removes nothing, prints each change, and
/// refuses, changing nothing, an output that names a uniform region's zone otherwise.
#[test]
fn catalog_import_from_cloud_output_adds_what_it_shows_and_never_one_accounts_letters() {
    let cli = Cli::new();
    let zone = |region: &str, name: &str, id: &str| {
        serde_json::json!({"RegionName": region, "ZoneName": name, "ZoneId": id,
                           "ZoneType": "availability-zone", "State": "available"})
    };
    let london = cli.dir.path().join("eu-west-2.json");
    let zones = ["a", "b", "c", "d"]
        .iter()
        .zip(["euw2-az2", "euw2-az3", "euw2-az1", "euw2-az4"])
        .map(|(letter, id)| zone("eu-west-2", &format!("eu-west-2{letter}"), id))
        .collect::<Vec<_>>();
    std::fs::write(
        &london,
        serde_json::json!({"AvailabilityZones": zones}).to_string(),
    )
    .unwrap();
    let virginia = cli.dir.path().join("us-east-1.json");
    std::fs::write(&virginia, include_str!("fixtures/describe-us-east-1.json")).unwrap();
    let stderr = cli.quiet(&[
        "catalog",
        "import",
        "--from",
        "aws-describe",
        london.to_str().unwrap(),
        virginia.to_str().unwrap(),
    ]);
    assert!(
        stderr.contains("aws/eu-west-2: euw2-az4 is named eu-west-2d"),
        "{stderr}"
    );
    assert!(stderr.contains("aws/us-east-1: no change"), "{stderr}");
    let exported: serde_json::Value =
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    let region = |id: &str| {
        exported["providers"][0]["regions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    let az4 = region("eu-west-2")["identities"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["zone_id"] == "euw2-az4")
        .unwrap()
        .clone();
    assert_eq!(az4["zone_name"], "eu-west-2d");
    assert!(region("us-east-1")["identities"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["zone_name"].is_null()));

    let before = cli.ok(&["catalog", "export"]);
    let wrong = cli.dir.path().join("wrong.json");
    let renamed = serde_json::json!({"AvailabilityZones": [zone("eu-central-1", "eu-central-1b", "euc1-az2")]});
    std::fs::write(&wrong, renamed.to_string()).unwrap();
    let err = cli.fails(&[
        "catalog",
        "import",
        "--from",
        "aws-describe",
        wrong.to_str().unwrap(),
    ]);
    assert!(err.contains("one of them is wrong"), "{err}");
    assert_eq!(cli.ok(&["catalog", "export"]), before, "nothing changed");

    let locations = cli.dir.path().join("locations.json");
    std::fs::write(
        &locations,
        include_str!("fixtures/list-locations-sample.json"),
    )
    .unwrap();
    let stderr = cli.quiet(&[
        "catalog",
        "import",
        "--from",
        "azure-locations",
        locations.to_str().unwrap(),
    ]);
    assert!(stderr.contains("azure/eastus: no change"), "{stderr}");
}

/// A database an earlier release seeded keeps that release's built-in catalog (no identities,
/// no regions without zones); `migrate` (as `serve`) replaces it with this release's, which only
/// adds. A catalog an operator changed is left as it is.
#[test]
fn an_earlier_releases_built_in_catalog_is_upgraded_and_an_operators_is_not() {
    let cli = Cli::new();
    let builtin: serde_json::Value = serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap();
    // The 1.1 built-in catalog: no source, no identities, no regions without zones.
    let mut old = builtin.clone();
    old.as_object_mut().unwrap().remove("source");
    for provider in old["providers"].as_array_mut().unwrap() {
        let regions = provider["regions"].as_array_mut().unwrap();
        regions.retain(|r| !r["zones"].as_array().unwrap().is_empty());
        for region in regions {
            let region = region.as_object_mut().unwrap();
            for field in ["name_scope", "identities", "sources", "note"] {
                region.remove(field);
            }
        }
    }
    let file = cli.dir.path().join("old.json");
    std::fs::write(&file, old.to_string()).unwrap();
    cli.quiet(&["catalog", "import", "--prune", file.to_str().unwrap()]);
    let exported = |cli: &Cli| -> serde_json::Value {
        serde_json::from_str(&cli.ok(&["catalog", "export"])).unwrap()
    };
    assert_eq!(exported(&cli), old);
    cli.ok(&["migrate"]);
    assert_eq!(
        exported(&cli),
        builtin,
        "upgraded to this release's built-in catalog"
    );

    // An operator's catalog (one zone fewer) stays as imported.
    let mut curated = old.clone();
    curated["providers"][0]["regions"][0]["zones"]
        .as_array_mut()
        .unwrap()
        .pop();
    std::fs::write(&file, curated.to_string()).unwrap();
    cli.quiet(&["catalog", "import", "--prune", file.to_str().unwrap()]);
    cli.ok(&["migrate"]);
    assert_eq!(exported(&cli), curated);
}

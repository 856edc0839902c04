//! `backup`, and the backup and restore procedures of docs/OPERATING.md.

use super::*;

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

postgres_only! {
    async fn postgres_backup_is_refused_naming_pg_dump() {
        let cli = Cli::postgres().await;
        let err = cli.fails(&["backup", "copy.db"]);
        assert!(err.contains("pg_dump --format=custom"), "{err}");
        assert!(!cli.dir.path().join("copy.db").exists());
    }
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

postgres_only! {
    /// The PostgreSQL backup and restore of docs/OPERATING.md, scoped to the test's schema.
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
}

//! Organizations, keys and profiles: creating, listing, revoking, restoring.

use super::*;

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

both_backends! {
    /// `key revoke` confirms on stderr (stdout stays empty), and revoking a key already revoked
    /// succeeds and says so, so a rotation script can be re-run; an id no key has is an error.
    async fn key_revoke_confirms_on_stderr_and_revoking_a_revoked_key_succeeds(cli: Cli) {
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
    async fn org_list_prints_a_table_with_active_keys_and_live_profiles(cli: Cli) {
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
    async fn key_list_shows_when_each_key_was_last_used_written_at_most_once_a_minute(cli: Cli) {
    let app = cli.serve().await;
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

    /// `profile restore ID` prints nothing on stdout (nor on stderr) and makes the tombstone a live
    /// profile again; a profile that is not deleted is an error.
    async fn profile_restore_prints_nothing_and_the_profile_is_live_again(cli: Cli) {
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

//! A full disk (deletes and zone-mapping stores) and a write lock held past the request
//! timeout, on both backends.

use super::*;

/// A tmpfs of `size` mounted on a fresh directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` (with a notice) where mounting is not possible, which CI does not accept.
    fn mount(size: &str) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|status| status.success());
        appzone_test_support::found_or_skipped(
            mounted,
            "cannot mount a tmpfs (needs root); the full-disk test did not run",
        )
        .then_some(Self { dir })
    }

    /// Writes a file until the disk is full; returns its path.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.dir.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 16 * 1024];
        while file.write_all(&chunk).is_ok() {}
        // The last partial chunks, down to the byte.
        while file.write_all(&[0u8; 512]).is_ok() {}
        while file.write_all(&[0u8]).is_ok() {}
        let _ = file.sync_all();
        path
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// SQLite on a full disk: every delete is answered with the truth (204 only for a committed
/// delete, 503 only for one that changed nothing), and once space is back the same process
/// writes again, and each delete answered 503 is done by its retry with the same key.
#[tokio::test]
async fn a_full_disk_never_gets_a_204_for_an_unwritten_delete_and_the_writer_recovers_without_restart(
) {
    let Some(disk) = SmallDisk::mount("4m") else {
        return;
    };
    let url = format!("sqlite://{}", disk.dir.path().join("appzone.db").display());
    let app = TestApp::sqlite_at(&url, fast_config()).await;
    let ids = app.seed_profiles("acme", "disk", 40).await;
    // Warm the admin key, so that key lookups need nothing from the disk.
    assert_eq!(
        delete_with_key(&app, "prof_absent", "warm").await.status,
        404
    );

    let filler = disk.fill();
    let mut answers = Vec::new();
    for (i, id) in ids[..20].iter().enumerate() {
        let resp = delete_with_key(&app, id, &format!("disk-{i}")).await;
        assert!(
            [204, 503].contains(&resp.status),
            "{id}: {} {}",
            resp.status,
            resp.body
        );
        if resp.status == 503 {
            resp.assert_error(503, "unavailable");
            assert!(resp.header("retry-after").is_some());
        }
        answers.push((id.clone(), resp.status));
    }
    let failed = answers.iter().filter(|(_, status)| *status == 503).count();
    assert!(failed > 0, "the full disk failed no delete: {answers:?}");

    std::fs::remove_file(&filler).unwrap();
    // Space is back: the same process writes again, at once.
    for id in &ids[20..] {
        let resp = delete_with_key(&app, id, &format!("after-{id}")).await;
        assert_eq!(resp.status, 204, "after space came back: {}", resp.body);
    }
    // Each answer against the data, before any retry.
    for (id, status) in &answers {
        let live = live_on_fresh_connection(&url, id).await;
        match status {
            204 => assert!(!live, "{id} answered 204 but is live"),
            _ => assert!(live, "{id} answered 503 but is deleted"),
        }
    }
    // Each delete that failed is done by its retry, which is not a replay (nothing was kept).
    for (i, (id, status)) in answers.iter().enumerate() {
        let retry = delete_with_key(&app, id, &format!("disk-{i}")).await;
        if *status == 503 {
            assert_eq!(retry.status, 204, "{id}: {}", retry.body);
            assert_eq!(retry.header("idempotent-replayed"), None);
        } else {
            assert_eq!(retry.status, 204);
            assert_eq!(retry.header("idempotent-replayed"), Some("true"));
        }
        assert!(!live_on_fresh_connection(&url, id).await);
    }
    eprintln!(
        "full disk: {} deletes answered 204 and {failed} answered 503; after space came back \
         {} of {} answered 204; every answer matched the data",
        answers.len() - failed,
        ids.len() - 20,
        ids.len() - 20
    );
}

/// SQLite on a full disk, the zone-mapping writes (through the pool, not the delete writer):
/// every store is answered with the truth (200 or 201 only for a stored mapping, 503 only for
/// one that changed nothing, the version before it still the one stored), and once space is
/// back the same process stores again, on the same pool.
#[tokio::test]
async fn a_full_disk_never_gets_a_success_for_an_unstored_zone_mapping_and_the_pool_recovers() {
    let Some(disk) = SmallDisk::mount("4m") else {
        return;
    };
    let url = format!("sqlite://{}", disk.dir.path().join("appzone.db").display());
    let app = TestApp::sqlite_at(&url, fast_config()).await;
    assert_eq!(put_mapping(&app, "kept", "before").await.status, 201);

    let filler = disk.fill();
    let mut answers = Vec::new();
    for i in 0..20 {
        // Every other store replaces `kept`; the others create mappings of their own.
        let (id, label) = if i % 2 == 0 {
            ("kept".to_owned(), format!("replacement-{i}"))
        } else {
            (format!("created-{i}"), format!("created-{i}"))
        };
        let resp = put_mapping(&app, &id, &label).await;
        assert!(
            [200, 201, 503].contains(&resp.status),
            "{id}: {} {}",
            resp.status,
            resp.body
        );
        if resp.status == 503 {
            // What the client learns: nothing was stored, and when to try again.
            resp.assert_error(503, "unavailable");
            assert!(resp.header("retry-after").is_some(), "{id}: {resp:?}");
        }
        answers.push((id, label, resp.status));
    }
    let failed = answers
        .iter()
        .filter(|(_, _, status)| *status == 503)
        .count();
    assert!(failed > 0, "the full disk failed no store: {answers:?}");

    // Each answer against the data, on a fresh connection, before space comes back: `kept`
    // holds the label of its last store answered 200; a mapping answered 201 is stored, one
    // answered 503 is not.
    let kept = answers
        .iter()
        .rev()
        .find(|(id, _, status)| id == "kept" && *status == 200)
        .map_or("before", |(_, label, _)| label.as_str());
    assert_eq!(
        label_on_fresh_connection(&url, "kept").await.as_deref(),
        Some(kept),
        "{answers:?}"
    );
    for (id, label, status) in answers.iter().filter(|(id, _, _)| id != "kept") {
        let stored = label_on_fresh_connection(&url, id).await;
        match status {
            201 => assert_eq!(stored.as_deref(), Some(label.as_str()), "{id}"),
            _ => assert_eq!(stored, None, "{id} answered 503 but is stored"),
        }
    }

    std::fs::remove_file(&filler).unwrap();
    // Space is back: the same process stores again, at once.
    for (id, label, _) in &answers {
        let again = format!("{label}-again");
        let resp = put_mapping(&app, id, &again).await;
        assert!(
            [200, 201].contains(&resp.status),
            "{id} after space came back: {} {}",
            resp.status,
            resp.body
        );
        assert_eq!(label_on_fresh_connection(&url, id).await, Some(again));
    }
    eprintln!(
        "full disk: {} zone-mapping stores answered 200 or 201 and {failed} answered 503; \
         every answer matched the data, and after space came back every store succeeded",
        answers.len() - failed
    );
}

/// Stores the organization's mapping `id` (the AWS fixture, with its offerings) as `label`.
async fn put_mapping(app: &TestApp, id: &str, label: &str) -> Resp {
    let output: serde_json::Value =
        serde_json::from_str(appzone_test_support::fixtures::DESCRIBE_US_EAST_1).unwrap();
    let offerings: serde_json::Value =
        serde_json::from_str(appzone_test_support::fixtures::offerings::AWS_BY_ZONE_ID).unwrap();
    let body = serde_json::json!({
        "provider": "aws",
        "label": label,
        "output": output,
        "offerings": offerings,
    });
    let resp = app
        .http
        .put(app.url(&format!("/api/v1/zone-mappings/{id}")))
        .header("X-API-KEY", &app.admin_key)
        .json(&body)
        .send()
        .await
        .unwrap();
    Resp::read(resp).await
}

/// The label of acme's mapping `id` as stored, read on a connection of its own.
async fn label_on_fresh_connection(url: &str, id: &str) -> Option<String> {
    let mut conn = AnyConnection::connect(url).await.unwrap();
    let label = sqlx::query("SELECT label FROM zone_mappings WHERE org_id = 'acme' AND id = $1")
        .bind(id)
        .fetch_optional(&mut conn)
        .await
        .unwrap()
        .map(|row| row.try_get::<String, _>("label").unwrap());
    let _ = conn.close().await;
    label
}

/// A holder of the database's write lock, released when told.
enum LockHolder {
    Sqlite(AnyConnection),
    Postgres(AnyConnection),
}

impl LockHolder {
    async fn take(url: &str) -> Self {
        let mut conn = AnyConnection::connect(url).await.unwrap();
        if url.starts_with("sqlite:") {
            sqlx::query("BEGIN EXCLUSIVE")
                .execute(&mut conn)
                .await
                .unwrap();
            Self::Sqlite(conn)
        } else {
            sqlx::query("BEGIN").execute(&mut conn).await.unwrap();
            sqlx::query("LOCK TABLE profiles IN EXCLUSIVE MODE")
                .execute(&mut conn)
                .await
                .unwrap();
            Self::Postgres(conn)
        }
    }

    async fn release(self) {
        let (Self::Sqlite(mut conn) | Self::Postgres(mut conn)) = self;
        sqlx::query("ROLLBACK").execute(&mut conn).await.unwrap();
        let _ = conn.close().await;
    }
}

fn two_second_requests() -> ServiceConfig {
    ServiceConfig {
        http: HttpConfig {
            request_timeout: Duration::from_secs(2),
            ..HttpConfig::default()
        },
        ..fast_config()
    }
}

both_backends! {
    /// A delete that waits on a lock held past the request timeout ends, rolled back, within the
    /// request timeout, and its 503 is the truth: the profile stays live after the lock goes. The
    /// retry with the same key deletes it (204, not a replay), and a further retry replays it.
    async fn a_lock_held_past_the_request_timeout_answers_503_and_changes_nothing(backend: Backend) {
    let app = backend.app_with(two_second_requests()).await;
    // The URL the server was given: the lock holder's connection opens the same database.
    let url = &app.store.pool().connect_options().database_url.to_string();
        let id = app.profile.as_str().to_owned();
        let lock = LockHolder::take(url).await;
        let started = Instant::now();
        let resp = delete_with_key(&app, &id, "locked-1").await;
        let answered = started.elapsed();
        // Held 3 s in all: longer than the 2 s request timeout.
        tokio::time::sleep(Duration::from_secs(3).saturating_sub(started.elapsed())).await;
        lock.release().await;
        resp.assert_error(503, "unavailable");
        assert!(
            answered < Duration::from_millis(2500),
            "answered after {answered:?}"
        );
        // Well after the lock went, nothing was written behind the 503.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(
            live_on_fresh_connection(url, &id).await,
            "the delete answered 503 went on and deleted the profile"
        );
        let retry = delete_with_key(&app, &id, "locked-1").await;
        assert_eq!(retry.status, 204, "{}", retry.body);
        assert_eq!(retry.header("idempotent-replayed"), None);
        assert!(!live_on_fresh_connection(url, &id).await);
        let again = delete_with_key(&app, &id, "locked-1").await;
        assert_eq!(again.status, 204);
        assert_eq!(again.header("idempotent-replayed"), Some("true"));
        eprintln!(
            "lock held 3 s, request timeout 2 s: 503 after {answered:?}, profile live; retry 204"
        );
    }
}

/// The second request with a key whose first one is still running gets 409 at once; once the
/// first ends, a retry gets its outcome replayed.
#[tokio::test]
async fn a_key_whose_first_request_is_still_running_answers_409_then_replays() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("appzone.db").display());
    let app = TestApp::sqlite_at(&url, fast_config()).await;
    let id = app.profile.as_str().to_owned();
    let lock = LockHolder::take(&url).await;
    let first = delete_with_key(&app, &id, "busy-1");
    let second = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let started = Instant::now();
        let resp = delete_with_key(&app, &id, "busy-1").await;
        let took = started.elapsed();
        lock.release().await;
        (resp, took)
    };
    let (first, (second, took)) = tokio::join!(first, second);
    second.assert_error(409, "idempotency_key_in_use");
    assert!(second.header("retry-after").is_some());
    assert!(took < Duration::from_millis(200), "409 took {took:?}");
    assert_eq!(first.status, 204, "{}", first.body);
    let retry = delete_with_key(&app, &id, "busy-1").await;
    assert_eq!(retry.status, 204);
    assert_eq!(retry.header("idempotent-replayed"), Some("true"));
}

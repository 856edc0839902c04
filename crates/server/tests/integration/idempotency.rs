//! `Idempotency-Key` on DELETE: the first attempt's outcome is kept with the key for the
//! caller's organization and replayed to a retry (`Idempotent-Replayed: true`); the key on
//! another profile is 422, a malformed key 400; keys of one organization are not another's;
//! a key is forgotten after 24 hours. On both backends, and across two replicas.

use appzone_server::model::now_ms;

use appzone_test_support::{both_backends, fast_config, postgres_only, Resp, TestApp};

async fn delete(app: &TestApp, base: &str, key: &str, id: &str, idem: Option<&str>) -> Resp {
    let mut request = app
        .http
        .delete(format!("{base}{}", TestApp::profile_path(id)))
        .header("x-api-key", key);
    if let Some(idem) = idem {
        request = request.header("idempotency-key", idem);
    }
    Resp::read(request.send().await.unwrap()).await
}

async fn audit_records(app: &TestApp, id: &str) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM profile_audit WHERE profile_id = $1 AND action = 'delete'",
    )
    .bind(id)
    .fetch_one(app.store.pool())
    .await
    .unwrap()
}

both_backends! {
    async fn a_retry_with_the_same_key_gets_the_first_outcome_replayed(app: TestApp) {
        let (base, admin, id) = (&app.base, &app.admin_key, app.profile.as_str());
        let first = delete(&app, base, admin, id, Some("retry-1")).await;
        assert_eq!(first.status, 204, "{}", first.body);
        assert_eq!(first.header("idempotent-replayed"), None);
        for _ in 0..2 {
            let retry = delete(&app, base, admin, id, Some("retry-1")).await;
            assert_eq!(retry.status, 204, "{}", retry.body);
            assert_eq!(retry.header("idempotent-replayed"), Some("true"));
        }
        // The draft's structured-field form names the same key.
        let quoted = delete(&app, base, admin, id, Some("\"retry-1\"")).await;
        assert_eq!(quoted.header("idempotent-replayed"), Some("true"));
        assert_eq!(audit_records(&app, id).await, 1, "one deletion, one audit record");
        // Without a key, a repeated delete is what it always was.
        delete(&app, base, admin, id, None).await.assert_error(404, "profile_not_found");
        // A 404 is kept and replayed as well.
        let missing = delete(&app, base, admin, "prof_missing", Some("retry-2")).await;
        missing.assert_error(404, "profile_not_found");
        assert_eq!(missing.header("idempotent-replayed"), None);
        let replayed = delete(&app, base, admin, "prof_missing", Some("retry-2")).await;
        replayed.assert_error(404, "profile_not_found");
        assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    }

    async fn the_same_key_for_another_profile_is_422_and_changes_nothing(app: TestApp) {
        let (base, admin) = (&app.base, &app.admin_key);
        assert_eq!(delete(&app, base, admin, app.profile.as_str(), Some("k")).await.status, 204);
        let reused = delete(&app, base, admin, app.profile2.as_str(), Some("k")).await;
        reused.assert_error(422, "idempotency_key_reused");
        assert!(app.profile_is_live(&app.profile2, "acme").await);
    }

    async fn keys_of_one_organization_are_not_anothers(app: TestApp) {
        let shared = Some("shared-key");
        assert_eq!(delete(&app, &app.base, &app.admin_key, app.profile.as_str(), shared).await.status, 204);
        let theirs = delete(&app, &app.base, &app.other_admin_key, app.other_profile.as_str(), shared).await;
        assert_eq!(theirs.status, 204, "{}", theirs.body);
        assert_eq!(theirs.header("idempotent-replayed"), None);
        assert!(!app.profile_is_live(&app.other_profile, "globex").await);
    }

    async fn a_malformed_key_is_400_after_the_api_key_and_changes_nothing(app: TestApp) {
        let id = app.profile.as_str();
        let long = "k".repeat(256);
        for bad in ["", "two words", "tab\there", long.as_str(), "\"unterminated"] {
            let resp = app.send(
                reqwest::Method::DELETE,
                &TestApp::profile_path(id),
                Some(&app.admin_key),
                &[("idempotency-key", bad)],
            ).await;
            resp.assert_error(400, "invalid_idempotency_key");
        }
        // The API key is checked first.
        let unauthenticated = app.send(
            reqwest::Method::DELETE,
            &TestApp::profile_path(id),
            None,
            &[("idempotency-key", "two words")],
        ).await;
        unauthenticated.assert_error(401, "missing_api_key");
        assert!(app.profile_is_live(&app.profile, "acme").await);
        let max = "k".repeat(255);
        assert_eq!(delete(&app, &app.base, &app.admin_key, id, Some(&max)).await.status, 204);
    }

    async fn answers_that_change_nothing_are_not_kept(app: TestApp) {
        // A member's 403 is not an outcome of the deletion: the admin's retry with the key runs.
        let (base, id) = (&app.base, app.profile.as_str());
        delete(&app, base, &app.member_key, id, Some("role")).await.assert_error(403, "forbidden");
        let admin = delete(&app, base, &app.admin_key, id, Some("role")).await;
        assert_eq!(admin.status, 204);
        assert_eq!(admin.header("idempotent-replayed"), None);
    }

    async fn a_key_older_than_24_hours_is_forgotten(app: TestApp) {
        let (base, admin) = (&app.base, &app.admin_key);
        assert_eq!(delete(&app, base, admin, app.profile.as_str(), Some("old")).await.status, 204);
        let day_and_a_minute_ago = now_ms() - (24 * 3600 + 60) * 1000;
        sqlx::query("UPDATE idempotency_keys SET created_at = $1 WHERE idem_key = 'old'")
            .bind(day_and_a_minute_ago)
            .execute(app.store.pool())
            .await
            .unwrap();
        // Another profile: a new request now, not 422.
        let fresh = delete(&app, base, admin, app.profile2.as_str(), Some("old")).await;
        assert_eq!(fresh.status, 204, "{}", fresh.body);
        assert_eq!(fresh.header("idempotent-replayed"), None);
        let purged = app.store.purge_idempotency_keys(now_ms() - 1000).await.unwrap();
        assert_eq!(purged, 0, "the expired record was replaced, the fresh one is kept");
    }
}

postgres_only! {
    /// Two replicas on one PostgreSQL, the same key sent to both at once, many times: the profile is
    /// deleted once, one answer is that deletion, and every other answer is its replay (or 409 while
    /// it ran on the same replica); never 422, 404 or 5xx.
    async fn the_same_key_on_two_replicas_at_once_deletes_once_and_replays_to_the_rest() {
        let app = TestApp::postgres().await;
        let replica = app.replica(fast_config()).await;
        let ids = app.seed_profiles("acme", "twin", 20).await;
        for (n, id) in ids.iter().enumerate() {
            let key = format!("twin-{n}");
            let calls = (0..8).map(|i| {
                let base = if i % 2 == 0 { &app.base } else { &replica.base };
                delete(&app, base, &app.admin_key, id, Some(key.as_str()))
            });
            let answers = futures_util::future::join_all(calls).await;
            let mut own = 0;
            for answer in &answers {
                match (answer.status, answer.header("idempotent-replayed")) {
                    (204, None) => own += 1,
                    (204, Some("true")) => {}
                    (409, _) => {
                        answer.assert_error(409, "idempotency_key_in_use");
                    }
                    (status, _) => panic!("{id}: {status} {}", answer.body),
                }
            }
            assert_eq!(own, 1, "{id}: {own} answers claim the deletion");
            assert_eq!(audit_records(&app, id).await, 1, "{id}");
        }
    }
}

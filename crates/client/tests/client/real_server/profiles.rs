//! Deleting profiles against the real server.

use super::*;

// ---- delete profile -----------------------------------------------------------------------------

#[tokio::test]
async fn a_member_deleting_its_organizations_profile_is_api_403_forbidden() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let error = client(&server.base, &server.member_key)
            .delete_profile(&server.profile)
            .await
            .unwrap_err();
        let message = assert_api(&error, 403, ErrorCode::Forbidden);
        assert!(error.is_forbidden(), "{error}");
        assert!(!error.is_not_found() && !error.is_unauthorized(), "{error}");
        assert!(
            message.to_lowercase().contains("admin"),
            "the message tells the caller to contact the organization admin: {message:?}"
        );
        // The profile is still there.
        client(&server.base, &server.admin_key)
            .delete_profile(&server.profile)
            .await
            .unwrap();
    })
    .await;
}

/// Against the real server: a delete with a key of the caller's own is replayed to a retry with
/// that key (a retry whose first answer was lost learns it succeeded), the key on another
/// profile is API 422 `idempotency_key_reused`, and the profile is deleted once.
#[tokio::test]
async fn a_delete_retried_with_its_idempotency_key_is_replayed_by_the_real_server() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let first = admin
            .delete_profile_with_key(&server.profile, "job-42:profile")
            .await
            .unwrap();
        assert!(!first.replayed, "{first:?}");
        let again = admin
            .delete_profile_with_key(&server.profile, "job-42:profile")
            .await
            .unwrap();
        assert!(again.replayed, "{again:?}");
        assert_eq!(again.idempotency_key, "job-42:profile");
        let error = admin
            .delete_profile_with_key(&server.profile2, "job-42:profile")
            .await
            .unwrap_err();
        assert_eq!(error.status().map(|s| s.as_u16()), Some(422), "{error}");
        assert_eq!(
            error.error_code().map(ErrorCode::as_str),
            Some(ErrorCode::IDEMPOTENCY_KEY_REUSED)
        );
        // profile2 untouched; a plain delete (a fresh key) of profile 1 is a 404 now.
        admin.delete_profile(&server.profile2).await.unwrap();
        let error = admin.delete_profile(&server.profile).await.unwrap_err();
        assert_api(&error, 404, ErrorCode::ProfileNotFound);
    })
    .await;
}

#[tokio::test]
async fn an_admin_deletes_a_profile_once_then_it_is_api_404_profile_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        assert!(matches!(
            admin.delete_profile(&server.profile).await,
            Ok(())
        ));
        let error = admin.delete_profile(&server.profile).await.unwrap_err();
        assert_api(&error, 404, ErrorCode::ProfileNotFound);
        assert!(error.is_not_found(), "{error}");
        // A member now gets 404 too, not 403: there is nothing to forbid.
        let error = client(&server.base, &server.member_key)
            .delete_profile(&server.profile)
            .await
            .unwrap_err();
        assert_api(&error, 404, ErrorCode::ProfileNotFound);
        // The other profile of the organization is untouched.
        admin.delete_profile(&server.profile2).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_never_created_profile_is_api_404_profile_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        for key in [&server.admin_key, &server.member_key] {
            let error = client(&server.base, key)
                .delete_profile(NEVER_CREATED)
                .await
                .unwrap_err();
            assert_api(&error, 404, ErrorCode::ProfileNotFound);
            assert!(error.is_not_found(), "{error}");
        }
    })
    .await;
}

#[tokio::test]
async fn another_organizations_profile_is_api_404_profile_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        // Neither an admin nor a member learns that globex's profile exists.
        for key in [&server.admin_key, &server.member_key] {
            let error = client(&server.base, key)
                .delete_profile(&server.other_profile)
                .await
                .unwrap_err();
            assert_api(&error, 404, ErrorCode::ProfileNotFound);
            assert!(error.is_not_found() && !error.is_forbidden(), "{error}");
        }
        // It is still there for its own organization.
        client(&server.base, &server.other_admin_key)
            .delete_profile(&server.other_profile)
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn a_malformed_profile_id_is_answered_locally_as_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let client = client(&server.base, &server.admin_key);
        let offline =
            Client::new(format!("http://{}", closed_port().await), &server.admin_key).unwrap();
        let raw = reqwest::Client::builder()
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        for (id, encoded) in [
            ("bad id", "bad%20id"),
            ("-leading-dash", "-leading-dash"),
            ("prof_é", "prof_%C3%A9"),
        ] {
            for error in [
                client.delete_profile(id).await.unwrap_err(),
                // No request: the same answer when nothing listens.
                offline.delete_profile(id).await.unwrap_err(),
            ] {
                assert!(
                    matches!(error, Error::ProfileNotFound { .. }),
                    "{id:?}: {error:?}"
                );
                assert!(error.is_not_found(), "{error}");
                assert_eq!(error.status(), Some(StatusCode::NOT_FOUND));
                assert_eq!(error.error_code(), Some(&ErrorCode::ProfileNotFound));
                assert_eq!(error.request_id(), None, "nothing was sent: {error}");
            }
            // The real server gives that same answer when the id is sent anyway.
            let response = raw
                .delete(format!(
                    "{}/api/v1/applications/profiles/{encoded}",
                    server.base
                ))
                .header("X-API-KEY", &server.admin_key)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{id:?}");
            let body: serde_json::Value = response.json().await.unwrap();
            assert_eq!(body["error_code"], "profile_not_found", "{id:?}: {body}");
        }
    })
    .await;
}

#[tokio::test]
async fn concurrent_deletes_of_one_profile_give_one_ok_and_one_not_found() {
    bounded(async {
        let server = TestApp::sqlite().await;
        let admin = client(&server.base, &server.admin_key);
        let (a, b) = tokio::join!(
            admin.delete_profile(&server.profile),
            admin.delete_profile(&server.profile)
        );
        let error = match (a, b) {
            (Ok(()), Err(e)) | (Err(e), Ok(())) => e,
            other => panic!("expected exactly one Ok: {other:?}"),
        };
        assert_api(&error, 404, ErrorCode::ProfileNotFound);
    })
    .await;
}

//! The deletion matrix: member, foreign profile, malformed id, the admin's 204 and its replay.
//! The 403 and 404 checks run before the admin's deletion, while the profile is still live.

use appzone_contract::headers::{IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED};
use appzone_contract::paths;
use http::Method;

use crate::support::{done, encode, skip, MALFORMED_ID};
use crate::wire::{Kit, Req};
use crate::Outcome;

fn path(id: &str) -> String {
    format!("{}/applications/profiles/{}", paths::API_PREFIX, encode(id))
}

/// Sends a DELETE with `key`, or says why it was not sent.
async fn delete(
    kit: &mut Kit,
    key: Option<String>,
    id: &str,
    extra: Option<(&str, &str)>,
) -> Result<super::wire::Exchange, Outcome> {
    let Some(key) = key else {
        return Err(skip(
            "needs --admin-key (and --member-key, --profile, --foreign-profile)",
        ));
    };
    let mut req = Req::new(Method::DELETE, id)
        .key(&key)
        .operation(paths::DELETE_PROFILE);
    if let Some((name, value)) = extra {
        req = req.header(name, value);
    }
    kit.send(req).await
}

fn missing(what: &str) -> Outcome {
    skip(format!("needs {what}"))
}

pub(crate) async fn run(kit: &mut Kit) {
    let read_only = kit.config.read_only;
    let admin = kit.config.admin_key.clone();
    let member = kit.config.member_key.clone();
    let profile = kit.config.profile.clone();
    let foreign = kit.config.foreign_profile.clone();
    let no_delete = || skip("--read-only: no DELETE is sent");

    // 413: the body limit comes before the route, so nothing can be deleted by it.
    let outcome = if read_only {
        no_delete()
    } else {
        let big = vec![b'x'; 1024 * 1024 + 1];
        let key = kit.config.api_key.clone();
        let req = Req::new(Method::DELETE, path_raw(MALFORMED_ID))
            .key(&key)
            .header("content-type", "application/octet-stream")
            // A server may answer before reading the body and close the connection: sent on
            // a connection of its own, closed after the answer (reused, it broke the next
            // check's request with EPIPE, 1 run in 3 under load).
            .header("connection", "close")
            .body(big)
            .operation(paths::DELETE_PROFILE);
        match kit.send_refusable(req).await {
            Ok(ex) if ex.status == 404 && ex.error_code().as_deref() == Some("profile_not_found") => {
                skip("the server took a 1 MiB body: its limit is set above that (the document lets operators raise it)")
            }
            Ok(ex) => done(ex.expect_error(413, "payload_too_large")),
            Err(failure) => failure,
        }
    };
    kit.record(
        "oversized_body_is_413_payload_too_large",
        "Body size: a body over the limit (64 KiB by default) gets 413 `payload_too_large`; no operation takes a body.",
        outcome,
    );

    let outcome = match (&member, &profile) {
        _ if read_only => no_delete(),
        (Some(_), Some(id)) => match delete(kit, member.clone(), &path(id), None).await {
            Ok(ex) => done(ex.expect_error(403, "forbidden")),
            Err(o) => o,
        },
        _ => missing("--member-key and --profile"),
    };
    kit.record(
        "member_delete_is_403_forbidden",
        "A `member` key: 403 `forbidden` (after the existence check, so a member learns only about its own organization's profiles).",
        outcome,
    );

    let outcome = match (&admin, &foreign) {
        _ if read_only => no_delete(),
        (Some(_), Some(id)) => match delete(kit, admin.clone(), &path(id), None).await {
            Ok(ex) => done(ex.expect_error(404, "profile_not_found")),
            Err(o) => o,
        },
        _ => missing("--admin-key and --foreign-profile"),
    };
    kit.record(
        "foreign_profile_delete_is_404_profile_not_found",
        "A profile that does not exist, is already deleted, belongs to **another organization**, or whose id is malformed: 404 `profile_not_found`, the same answer in every case",
        outcome,
    );

    let outcome = match &admin {
        _ if read_only => no_delete(),
        Some(_) => match delete(kit, admin.clone(), &path_raw(MALFORMED_ID), None).await {
            Ok(ex) => done(ex.expect_error(404, "profile_not_found")),
            Err(o) => o,
        },
        None => missing("--admin-key"),
    };
    kit.record(
        "malformed_profile_id_delete_is_404_profile_not_found",
        "A profile ... whose id is malformed: 404 `profile_not_found`",
        outcome,
    );

    // One Idempotency-Key per run: a replay of an earlier run's key would be a 404.
    let idempotency_key = crate::support::idempotency_key();
    let header_name = IDEMPOTENCY_KEY;
    let header = Some((header_name.as_str(), idempotency_key.as_str()));
    let deleted = match (&admin, &profile) {
        _ if read_only => Err(no_delete()),
        (Some(_), Some(id)) => {
            let target = path(id);
            let first = delete(kit, admin.clone(), &target, header).await;
            match first {
                Ok(ex) if ex.status == 204 => match delete(kit, admin.clone(), &target, None).await
                {
                    Ok(again) => again
                        .expect_error(404, "profile_not_found")
                        .map(|()| target),
                    Err(o) => Err(o),
                },
                Ok(ex) => Err(ex.fail("204 (the profile must be live)", ex.describe())),
                Err(o) => Err(o),
            }
        }
        _ => Err(missing("--admin-key and --profile")),
    };
    kit.record(
        "admin_delete_is_204_then_404",
        "An `admin` key: 204 ... Of concurrent deletions of one profile, exactly one gets 204; the others, and any later one, get 404.",
        deleted.as_ref().err().cloned().unwrap_or(Outcome::Pass),
    );

    let outcome = match deleted {
        Ok(target) => match delete(kit, admin.clone(), &target, header).await {
            Ok(ex)
                if ex.status == 204 && ex.header(IDEMPOTENT_REPLAYED.as_str()) == Some("true") =>
            {
                Outcome::Pass
            }
            Ok(ex) => ex.fail(
                "204 with Idempotent-Replayed: true",
                format!(
                    "{} with Idempotent-Replayed: {:?}",
                    ex.describe(),
                    ex.header(IDEMPOTENT_REPLAYED.as_str())
                ),
            ),
            Err(o) => o,
        },
        Err(Outcome::Skip { why }) => skip(why),
        Err(_) => skip("the deletion it replays did not pass"),
    };
    kit.record(
        "idempotent_retry_replays_204",
        "A retry with the same key gets that outcome again with `Idempotent-Replayed: true`, whatever happened in between: a retry after a lost 204 gets 204, not 404.",
        outcome,
    );
}

/// The deletion path of an already-encoded id.
fn path_raw(encoded: &str) -> String {
    format!("{}/applications/profiles/{encoded}", paths::API_PREFIX)
}

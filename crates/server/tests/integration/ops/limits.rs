//! Per-key rate limits and the limit on failed authentications.

use super::*;

#[tokio::test]
async fn per_key_rate_limit_answers_429_with_retry_after_and_spares_other_keys() {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 5,
        ..fast_config()
    })
    .await;
    let mut statuses = Vec::new();
    for _ in 0..8 {
        statuses.push(app.get(&zones(), Some(&app.member_key)).await.status);
    }
    assert_eq!(&statuses[..5], [200; 5], "{statuses:?}");
    assert!(statuses[5..].iter().all(|s| *s == 429), "{statuses:?}");
    let limited = app.get(&zones(), Some(&app.member_key)).await;
    limited.assert_error(429, "rate_limited");
    let retry: u64 = limited.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=2).contains(&retry), "Retry-After {retry}");
    assert_eq!(
        app.get(&zones(), Some(&app.admin_key)).await.status,
        200,
        "other keys are not limited"
    );
    assert_eq!(app.get("/healthz", None).await.status, 200);
}

#[tokio::test]
async fn answers_carry_ratelimit_headers_of_their_limit_and_none_when_it_is_off() {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 3,
        auth_failures_per_minute: 60,
        ..fast_config()
    })
    .await;
    // Per key: the quota left counts down with each answer, the 429 included.
    let mut left = Vec::new();
    for _ in 0..4 {
        let resp = app.get(&zones(), Some(&app.member_key)).await;
        assert_eq!(
            resp.header("ratelimit-policy"),
            Some("\"per-key\";q=3;w=1"),
            "{resp:?}"
        );
        left.push((resp.status, resp.header("ratelimit").map(str::to_owned)));
    }
    let state = |r: u32| Some(format!("\"per-key\";r={r};t=1"));
    assert_eq!(
        left,
        [
            (200, state(2)),
            (200, state(1)),
            (200, state(0)),
            (429, state(0))
        ]
    );
    // Errors after authentication carry them too.
    let unknown = app
        .get(&TestApp::zones_path("aws", "nope-1"), Some(&app.admin_key))
        .await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.header("ratelimit"), Some("\"per-key\";r=2;t=1"));
    let too_large = delete_with_an_oversized_body(&app).await;
    assert_eq!(too_large.status, 413);
    assert_eq!(too_large.header("ratelimit"), Some("\"per-key\";r=1;t=1"));
    // A 401 carries the client address's failed-authentication limit.
    let refused = app.get(&zones(), None).await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.header("ratelimit-policy"),
        Some("\"auth-failures\";q=60;w=60")
    );
    assert_eq!(
        refused.header("ratelimit"),
        Some("\"auth-failures\";r=59;t=1")
    );
    // Unlimited routes carry none, and neither does anything once the limits are off.
    assert_eq!(app.get("/healthz", None).await.header("ratelimit"), None);
    let off = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 0,
        auth_failures_per_minute: 0,
        ..fast_config()
    })
    .await;
    for resp in [
        off.get(&zones(), Some(&off.member_key)).await,
        off.get(&zones(), None).await,
    ] {
        assert!(
            resp.header("ratelimit").is_none() && resp.header("ratelimit-policy").is_none(),
            "{resp:?}"
        );
    }
}

/// The limiter's unit test (`limits::tests::a_limit_of_zero_never_refuses`) proves a limit of 0
/// never refuses, however many requests; this proves the setting reaches it: a burst of
/// concurrent requests on one key, none refused, none carrying the headers of a limit.
#[tokio::test]
async fn rate_limit_zero_disables_it() {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        rate_limit_per_key: 0,
        ..fast_config()
    })
    .await;
    let path = zones();
    let burst = (0..48).map(|_| app.get(&path, Some(&app.member_key)));
    let answers = futures_util::future::join_all(burst).await;
    let statuses: Vec<u16> = answers.iter().map(|resp| resp.status).collect();
    assert_eq!(statuses, [200; 48]);
    for resp in &answers {
        assert!(
            resp.header("ratelimit").is_none() && resp.header("ratelimit-policy").is_none(),
            "{resp:?}"
        );
    }
}

/// A server that allows three failed authentications a minute per address, and a key it will
/// refuse (a real key id with a forged secret).
async fn three_failures_a_minute() -> (TestApp, String) {
    let app = TestApp::sqlite_with(appzone_server::ServiceConfig {
        auth_failures_per_minute: 3,
        ..fast_config()
    })
    .await;
    let forged = format!("{}{}", &app.admin_key[..17], "x".repeat(32));
    (app, forged)
}

#[tokio::test]
async fn failed_authentications_per_address_are_limited_but_valid_keys_pass() {
    let (app, forged) = three_failures_a_minute().await;
    let path = zones();
    let attempts = (0..6).map(|_| app.get(&path, Some(&forged)));
    let statuses: Vec<u16> = futures_util::future::join_all(attempts)
        .await
        .iter()
        .map(|r| r.status)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        3,
        "{statuses:?}"
    );
    let limited = app.get(&zones(), Some(&forged)).await;
    limited.assert_error(429, "rate_limited");
    assert!(limited.header("retry-after").is_some());
    assert_eq!(app.get(&zones(), Some(&app.member_key)).await.status, 200);
}

#[tokio::test]
async fn a_refused_address_is_told_to_retry_when_its_next_attempt_is_allowed() {
    // Three failures a minute: a refill every 20 s, so the fourth is told to wait about 20 s,
    // not the 1 s every 429 starts with.
    let (app, forged) = three_failures_a_minute().await;
    for _ in 0..3 {
        assert_eq!(app.get(&zones(), Some(&forged)).await.status, 401);
    }
    let limited = app.get(&zones(), Some(&forged)).await;
    limited.assert_error(429, "rate_limited");
    let retry: u64 = limited
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("a Retry-After in seconds");
    assert!((15..=20).contains(&retry), "Retry-After {retry}");
}

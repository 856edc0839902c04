//! API2: broken authentication.

use super::*;

// ---- API2: broken authentication ----------------------------------------------------------

/// (label, headers sent, query parameter carrying the admin key, expected error code).
type CredentialCase = (
    &'static str,
    Vec<(&'static str, String)>,
    &'static str,
    &'static str,
);

#[tokio::test]
async fn api2_every_malformed_or_misplaced_credential_gets_a_json_401() {
    let app = TestApp::sqlite().await;
    let path = zones();
    let admin = app.admin_key.clone();
    let cases: Vec<CredentialCase> = vec![
        ("no key", vec![], "", "missing_api_key"),
        (
            "empty key",
            vec![("x-api-key", String::new())],
            "",
            "missing_api_key",
        ),
        (
            "blank key",
            vec![("x-api-key", "  \t ".into())],
            "",
            "missing_api_key",
        ),
        (
            "wrong key",
            vec![("x-api-key", ApiKey::generate().expose_secret().into())],
            "",
            "invalid_api_key",
        ),
        (
            "revoked key",
            vec![("x-api-key", app.revoked_key.clone())],
            "",
            "invalid_api_key",
        ),
        (
            "Bearer-prefixed key",
            vec![("x-api-key", format!("Bearer {admin}"))],
            "",
            "invalid_api_key",
        ),
        (
            "key sent twice",
            vec![("x-api-key", admin.clone()), ("x-api-key", admin.clone())],
            "",
            "invalid_api_key",
        ),
        (
            "key in Authorization",
            vec![("authorization", format!("Bearer {admin}"))],
            "",
            "missing_api_key",
        ),
        (
            "key in a cookie",
            vec![("cookie", format!("x-api-key={admin}"))],
            "",
            "missing_api_key",
        ),
        (
            "key in the query string",
            vec![],
            "api_key",
            "missing_api_key",
        ),
        (
            "key in the query string as the header name",
            vec![],
            "X-API-KEY",
            "missing_api_key",
        ),
        (
            "truncated key",
            vec![("x-api-key", admin[..admin.len() - 1].to_owned())],
            "",
            "invalid_api_key",
        ),
        (
            "lowercased key",
            vec![("x-api-key", admin.to_lowercase())],
            "",
            "invalid_api_key",
        ),
    ];
    for (label, headers, query, code) in &cases {
        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let target = if method == reqwest::Method::GET {
                path.clone()
            } else {
                TestApp::profile_path(app.profile.as_str())
            };
            let target = if query.is_empty() {
                target
            } else {
                format!("{target}?{query}={admin}")
            };
            let mut request = app.http.request(method.clone(), app.url(&target));
            for (name, value) in headers {
                request = request.header(*name, value);
            }
            let resp = Resp::read(request.send().await.unwrap()).await;
            assert_eq!(resp.status, 401, "{label} ({method}): {}", resp.body);
            resp.assert_error(401, code);
            assert!(!resp.body.contains(&admin[17..]), "{label}: key echoed");
        }
    }
    assert!(app.profile_is_live(&app.profile, "acme").await);
    // Header names are case-insensitive and surrounding whitespace is not part of the value.
    for header in ["X-API-KEY", "x-api-key", "X-Api-Key"] {
        let resp = app
            .send(
                reqwest::Method::GET,
                &path,
                None,
                &[(header, &format!(" {admin} "))],
            )
            .await;
        assert_eq!(resp.status, 200, "{header}");
    }
    eprintln!("API2 credentials: {} malformed or misplaced credentials x 2 operations: all JSON 401, 0 5xx", cases.len());
}

#[tokio::test]
async fn api2_brute_force_of_keys_is_rate_limited_per_address_at_the_default_limit() {
    let config = ServiceConfig::default();
    let limit = config.auth_failures_per_minute;
    assert_eq!(limit, 600, "the documented default");
    let app = TestApp::sqlite_with(ServiceConfig {
        rate_limit_per_key: 0,
        ..config
    })
    .await;
    // Guesses for a real key id: what an attacker who saw a key id in a log would try.
    let key_id = &app.admin_key[4..16];
    let attempts = limit as usize + 80;
    let started = Instant::now();
    let (mut refused, mut limited, mut other) = (0, 0, Vec::new());
    let mut first_limited = None;
    for i in 0..attempts {
        let guess = format!(
            "apz_{key_id}_{}",
            ApiKey::generate().expose_secret()[17..].to_owned()
        );
        let resp = app.get(&zones(), Some(&guess)).await;
        match resp.status {
            401 => refused += 1,
            429 => {
                resp.assert_error(429, "rate_limited");
                let retry: u64 = resp.header("retry-after").unwrap().parse().unwrap();
                assert!(retry >= 1);
                limited += 1;
                first_limited.get_or_insert(i);
            }
            status => other.push(status),
        }
    }
    let elapsed = started.elapsed();
    // GCRA at 600/min: a burst of 600, then one more every 0.1 s.
    let replenished = (elapsed.as_secs_f64() * f64::from(limit) / 60.0).ceil() as usize;
    eprintln!(
        "API2 brute force: {attempts} guesses in {elapsed:?}: {refused} x 401, {limited} x 429 \
         (first at guess {first_limited:?}), limit {limit}/min per address"
    );
    assert!(other.is_empty(), "{other:?}");
    assert!(
        (limit as usize..=limit as usize + replenished + 1).contains(&refused),
        "{refused} guesses checked"
    );
    assert_eq!(refused + limited, attempts);
    // The limited address's valid key still works (no lock-out of the legitimate user).
    assert_eq!(app.get(&zones(), Some(&app.admin_key)).await.status, 200);
}

// The timing of wrong keys (API2) is tested in `timing.rs`, by instruction counts.

/// Made-up key ids (a flood of wrong keys) each cost a database query and a negative cache
/// entry; those entries are bounded in bytes and expire on their own, shorter TTL, so the
/// memory they take is bounded and returned, whatever the key cache TTL.
#[tokio::test]
async fn api2_negative_key_lookups_take_bounded_memory_that_expires_on_its_own() {
    use appzone_server::keys::{KeyVerifier, NEGATIVE_ENTRY_OVERHEAD, NEGATIVE_TTL};
    let app = TestApp::sqlite().await;
    let cap: u64 = 20 * 1024;
    let verifier =
        KeyVerifier::with_negative_capacity(app.store.clone(), Duration::from_secs(60), cap);
    for _ in 0..500 {
        let wrong = ApiKey::generate();
        assert!(verifier.verify(wrong.expose_secret()).await.is_err());
    }
    let (entries, bytes) = verifier.negative_entries();
    let most = cap / (12 + u64::from(NEGATIVE_ENTRY_OVERHEAD));
    assert!(
        bytes <= cap,
        "{entries} negative entries count for {bytes} bytes, over {cap}"
    );
    assert!(
        entries > 0 && entries <= most,
        "{entries} negative entries (at most {most} fit)"
    );
    assert!(verifier.verify(&app.member_key).await.is_ok());
    tokio::time::sleep(NEGATIVE_TTL + Duration::from_millis(300)).await;
    assert_eq!(
        verifier.negative_entries().0,
        0,
        "negative entries outlived their own TTL ({NEGATIVE_TTL:?}; the key cache's is 60 s)"
    );
    assert!(
        verifier.verify(&app.member_key).await.is_ok(),
        "the live key's entry stays"
    );
}

//! `/docs`, CORS, and the headers every answer carries.

use super::*;

#[tokio::test]
async fn head_errors_state_the_content_length_of_their_get() {
    let app = TestApp::sqlite().await;
    for (path, key) in [
        (zones(), None),
        (
            zones(),
            Some("apz_wrongwrongwr_0123456789abcdefghijABCDEFGHIJKL"),
        ),
        (
            TestApp::zones_path("aws", "nope-1"),
            Some(app.member_key.as_str()),
        ),
        ("/nope".to_owned(), None),
    ] {
        let get = app.send(reqwest::Method::GET, &path, key, &[]).await;
        let head = app.send(reqwest::Method::HEAD, &path, key, &[]).await;
        assert_eq!(head.status, get.status, "{path}");
        assert!(head.body.is_empty(), "{path}: {}", head.body);
        let length = get.body.len().to_string();
        assert_eq!(
            get.header("content-length"),
            Some(length.as_str()),
            "{path}"
        );
        assert_eq!(
            head.header("content-length"),
            Some(length.as_str()),
            "HEAD {path}"
        );
    }
}

#[tokio::test]
async fn docs_page_names_the_api_forbids_other_origins_and_framing_and_is_cached_and_compressed() {
    let app = TestApp::sqlite().await;
    let page = app.get("/docs/", None).await;
    assert_eq!(page.status, 200);
    assert!(
        page.body.contains("<title>appzone API</title>"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("favicon"), "{}", page.body);
    let csp = page.header("content-security-policy").unwrap();
    for directive in [
        "default-src 'none'",
        "script-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{csp}");
    }
    assert!(!csp.contains("http"), "no other origin is allowed: {csp}");
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));

    // No top bar with a box to load another document: the base layout.
    let init = app.get("/docs/swagger-initializer.js", None).await;
    assert!(
        init.body.contains(r#""layout": "BaseLayout""#),
        "{}",
        init.body
    );

    let bundle = "/docs/swagger-ui-bundle.js";
    let plain = app.get(bundle, None).await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("content-encoding"), None);
    assert_eq!(plain.header("cache-control"), Some("no-cache"));
    let gzipped = app
        .send(
            reqwest::Method::GET,
            bundle,
            None,
            &[("accept-encoding", "br, gzip")],
        )
        .await;
    assert_eq!(gzipped.status, 200);
    assert_eq!(gzipped.header("content-encoding"), Some("gzip"));
    assert_eq!(gzipped.header("vary"), Some("accept-encoding"));
    let length = |r: &Resp| -> usize { r.header("content-length").unwrap().parse().unwrap() };
    assert!(
        length(&gzipped) * 3 < length(&plain),
        "gzip {} vs {} bytes",
        length(&gzipped),
        length(&plain)
    );
    // Each encoding has its own validator, and a matching one answers 304 with no body.
    let tag = plain.header("etag").unwrap();
    assert_ne!(Some(tag), gzipped.header("etag"));
    let again = app
        .send(
            reqwest::Method::GET,
            bundle,
            None,
            &[("if-none-match", tag)],
        )
        .await;
    assert_eq!((again.status, again.body.as_str()), (304, ""));
    assert_eq!(again.header("etag"), Some(tag));
}

#[tokio::test]
async fn docs_are_served_from_the_binary_with_no_external_assets() {
    let app = TestApp::sqlite().await;
    let page = app.get("/docs", None).await;
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .unwrap()
        .starts_with("text/html"));
    assert!(page.body.contains("swagger-ui-bundle.js"), "{}", page.body);
    for line in page
        .body
        .lines()
        .filter(|l| l.contains("src=") || l.contains("href="))
    {
        assert!(
            !line.contains("http://") && !line.contains("https://"),
            "external asset: {line}"
        );
    }
    let init = app.get("/docs/swagger-initializer.js", None).await;
    assert_eq!(init.status, 200);
    assert!(init.body.contains("/openapi.json"), "{}", init.body);
    assert_eq!(
        app.get("/docs/swagger-ui-bundle.js", None).await.status,
        200
    );
    app.get("/docs/nope.js", None)
        .await
        .assert_error(404, "not_found");
}

/// `GET path` with the member key, from a page of `origin`.
async fn from_origin(app: &TestApp, path: &str, origin: &str) -> Resp {
    let origin = [("origin", origin)];
    let key = Some(app.member_key.as_str());
    app.send(reqwest::Method::GET, path, key, &origin).await
}

#[tokio::test]
async fn cors_is_off_by_default_and_answers_preflights_when_configured() {
    let app = TestApp::sqlite().await;
    let resp = from_origin(&app, &zones(), "https://portal.example").await;
    assert!(resp.header("access-control-allow-origin").is_none());

    let config = appzone_server::ServiceConfig {
        http: HttpConfig {
            cors_origins: vec!["https://portal.example".parse().unwrap()],
            ..HttpConfig::default()
        },
        ..fast_config()
    };
    let app = TestApp::sqlite_with(config).await;
    let preflight = app
        .send(
            reqwest::Method::OPTIONS,
            &zones(),
            None,
            &[
                ("origin", "https://portal.example"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "x-api-key"),
            ],
        )
        .await;
    assert_eq!(preflight.status, 200, "{}", preflight.body);
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some("https://portal.example")
    );
    assert!(preflight
        .header("access-control-allow-headers")
        .unwrap()
        .contains("x-api-key"));
    let resp = from_origin(&app, &zones(), "https://portal.example").await;
    assert_eq!(resp.status, 200, "{}", resp.body);
    assert_eq!(
        resp.header("access-control-allow-origin"),
        Some("https://portal.example")
    );
    // The allowed origin echoes the request's, so a shared cache must key on `Origin`; methods
    // and headers are fixed lists, so nothing else varies (tower-http 0.6 also listed the two
    // preflight request headers here).
    for answer in [&resp, &preflight] {
        let vary: Vec<_> = answer.headers.get_all("vary").iter().collect();
        assert_eq!(vary, ["origin"]);
    }
    // A listing with a percent-encoded id goes through the same layers: the handler finds the
    // caller that authentication recorded, behind CORS.
    let routed = from_origin(
        &app,
        &TestApp::zones_path("%61ws", "us-east-1"),
        "https://portal.example",
    )
    .await;
    assert_eq!(routed.status, 200, "{}", routed.body);
    assert_eq!(
        routed.body,
        resp.body.replace(
            resp.header("x-request-id").unwrap(),
            routed.header("x-request-id").unwrap(),
        )
    );
    let other = from_origin(&app, &zones(), "https://evil.example").await;
    assert!(other.header("access-control-allow-origin").is_none());
}

#[tokio::test]
async fn every_response_carries_nosniff() {
    let app = TestApp::sqlite().await;
    for resp in [
        app.get(&zones(), Some(&app.member_key)).await,
        app.get("/nope", None).await,
        app.get("/healthz", None).await,
    ] {
        assert_eq!(resp.header("x-content-type-options"), Some("nosniff"));
    }
}

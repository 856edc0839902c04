//! Replicas on one database, and shutdown.

use super::*;

postgres_only! {
    async fn two_replicas_on_one_postgres_behave_as_one_service() {
        let a = TestApp::postgres().await;
        let b = a.replica(fast_config()).await;
        let on_b = |path: &str, key: &str, method: reqwest::Method| {
            let request = a
                .http
                .request(method, format!("{}{path}", b.base))
                .header("x-api-key", key);
            async move { Resp::read(request.send().await.unwrap()).await }
        };
        // A delete through A is seen by B at once, and the other way round.
        let p1 = TestApp::profile_path(a.profile.as_str());
        assert_eq!(a.delete(&p1, Some(&a.admin_key)).await.status, 204);
        on_b(&p1, &a.admin_key, reqwest::Method::DELETE)
            .await
            .assert_error(404, "profile_not_found");
        let p2 = TestApp::profile_path(a.profile2.as_str());
        assert_eq!(
            on_b(&p2, &a.admin_key, reqwest::Method::DELETE)
                .await
                .status,
            204
        );
        a.delete(&p2, Some(&a.admin_key))
            .await
            .assert_error(404, "profile_not_found");

        // A catalog import is served by both within the refresh interval.
        let mut catalog = test_catalog();
        catalog.providers[0].regions[0].zones = vec!["af-south-1z".into()];
        a.store.replace_catalog(&catalog).await.unwrap();
        let path = TestApp::zones_path("aws", "af-south-1");
        let both = eventually(Duration::from_secs(3), || async {
            let want = serde_json::json!(["af-south-1z"]);
            a.get(&path, Some(&a.member_key)).await.json()["data"] == want
                && on_b(&path, &a.member_key, reqwest::Method::GET)
                    .await
                    .json()["data"]
                    == want
        })
        .await;
        assert!(
            both,
            "catalog not served by both replicas within the refresh interval"
        );

        // A revoked key fails on both within the cache TTL.
        assert_eq!(
            on_b(&zones(), &a.member_key, reqwest::Method::GET)
                .await
                .status,
            200
        );
        a.store.revoke_key(&a.member_key[4..16]).await.unwrap();
        let refused = eventually(Duration::from_secs(3), || async {
            a.get(&zones(), Some(&a.member_key)).await.status == 401
                && on_b(&zones(), &a.member_key, reqwest::Method::GET)
                    .await
                    .status
                    == 401
        })
        .await;
        assert!(
            refused,
            "revocation not effective on both replicas within the TTL"
        );
    }
}

#[tokio::test]
async fn shutdown_lets_in_flight_requests_finish_and_refuses_new_connections() {
    let app = TestApp::sqlite().await;
    let router = slow_router(&app, HttpConfig::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(appzone_server::serve::serve(
        listener,
        router,
        async {
            let _ = stopped.await;
        },
        ServeOptions {
            drain_timeout: Duration::from_secs(5),
            ..ServeOptions::default()
        },
    ));
    let http = app.http.clone();
    let in_flight =
        tokio::spawn(async move { http.get(format!("http://{addr}/slow")).send().await });
    // Wait until the slow request (600 ms) is being handled, then ask the server to stop.
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(()).unwrap();
    // While that request is still in flight, the port takes no new connection.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let refused = TcpStream::connect(addr).await.is_err();
    assert!(
        !in_flight.is_finished(),
        "the slow request ended before the check: the test proves nothing"
    );
    assert!(refused, "a new connection was accepted while draining");
    let response = in_flight
        .await
        .unwrap()
        .expect("in-flight request completed");
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "done");
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("server stopped after draining")
        .unwrap();
    assert!(
        TcpStream::connect(addr).await.is_err(),
        "no new connections after shutdown"
    );
}

/// The drain deadline is kept by `serve` itself: when it passes, `serve` returns and the
/// connections still open are dropped, so a request still running gets no answer (it would
/// otherwise go on in the background of whatever embeds the server).
#[tokio::test]
async fn at_the_drain_deadline_serve_returns_and_drops_what_is_still_open() {
    let app = TestApp::sqlite().await;
    let router = slow_router(&app, HttpConfig::default());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let deadline = Duration::from_millis(150);
    let server = tokio::spawn(appzone_server::serve::serve(
        listener,
        router,
        async {
            let _ = stopped.await;
        },
        ServeOptions {
            drain_timeout: deadline,
            ..ServeOptions::default()
        },
    ));
    let http = app.http.clone();
    // Takes 600 ms: longer than the deadline.
    let in_flight =
        tokio::spawn(async move { http.get(format!("http://{addr}/slow")).send().await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stopping = std::time::Instant::now();
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("serve returned")
        .unwrap();
    let returned_after = stopping.elapsed();
    assert!(
        returned_after < deadline + Duration::from_millis(100),
        "serve returned {returned_after:?} after the stop, deadline {deadline:?}"
    );
    let answer = tokio::time::timeout(Duration::from_secs(5), in_flight)
        .await
        .expect("the client is not left waiting")
        .unwrap();
    assert!(
        answer.is_err(),
        "the request still running at the deadline was answered: {answer:?}"
    );
}

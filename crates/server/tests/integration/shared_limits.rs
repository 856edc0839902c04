//! The rate limits shared by replicas through Redis (`serve --redis-url`), and what happens when
//! Redis fails: each request falls back to the replica's own limits, within a bounded delay.
//!
//! Tests that need a Redis skip (and fail under `CI=true`) when none listens at
//! `APPZONE_TEST_REDIS_URL`; each uses a key prefix of its own.

use std::sync::atomic::{AtomicUsize, Ordering};

use std::sync::{Arc, Mutex};

use std::time::{Duration, Instant};

use appzone_server::ServiceConfig;

use appzone_test_support::{
    fast_config, postgres_only, redis_test_prefix, test_redis_url, Replica, Resp, TestApp,
};

fn zones() -> String {
    TestApp::zones_path("aws", "us-east-1")
}

fn config(per_key: u32, redis_url: Option<&str>) -> ServiceConfig {
    ServiceConfig {
        rate_limit_per_key: per_key,
        redis_url: redis_url.map(str::to_owned),
        ..fast_config()
    }
}

async fn get(app: &TestApp, base: &str, path: &str, key: &str) -> Resp {
    let response = app
        .http
        .get(format!("{base}{path}"))
        .header("x-api-key", key)
        .send()
        .await
        .unwrap();
    Resp::read(response).await
}

/// Sends `key`'s listing through every base in `bases`, two callers each (far over the quota,
/// and light enough that Redis answers within its timeout on a loaded test machine), for `run`; the
/// number of 200s and of 429s.
async fn hammer(app: &TestApp, bases: &[String], key: &str, run: Duration) -> (usize, usize) {
    let ok = Arc::new(AtomicUsize::new(0));
    let limited = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + run;
    let mut callers = Vec::new();
    for base in bases {
        for _ in 0..2 {
            let (http, url, key) = (
                app.http.clone(),
                format!("{base}{}", zones()),
                key.to_owned(),
            );
            let (ok, limited) = (ok.clone(), limited.clone());
            callers.push(tokio::spawn(async move {
                while Instant::now() < deadline {
                    let status = http
                        .get(&url)
                        .header("x-api-key", &key)
                        .send()
                        .await
                        .unwrap()
                        .status()
                        .as_u16();
                    match status {
                        200 => ok.fetch_add(1, Ordering::Relaxed),
                        429 => limited.fetch_add(1, Ordering::Relaxed),
                        other => panic!("status {other}"),
                    };
                }
            }));
        }
    }
    for caller in callers {
        caller.await.unwrap();
    }
    (ok.load(Ordering::Relaxed), limited.load(Ordering::Relaxed))
}

postgres_only! {
    /// The quota of one key at 20/s, hammered for 3 s through three replicas: with Redis the
    /// replicas accept what one would (20 a second plus a burst of 20), without it each accepts
    /// its own quota. The Redis timeout is raised: a test machine running many tests at once can
    /// leave a call unanswered for 25 ms, and a replica deciding locally for a second would blur
    /// what this measures (the fallback has a test of its own).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_three_replicas_with_redis_hold_one_quota_per_key() {
        let Some(redis) = test_redis_url() else {
            return;
        };
        let shared = ServiceConfig {
            redis_key_prefix: redis_test_prefix(),
            redis_timeout: Duration::from_millis(500),
            ..config(20, Some(&redis))
        };
        let app = TestApp::postgres_with(shared.clone(), |url| url).await;
        let b = app.replica(shared.clone()).await;
        let c = app.replica(shared).await;
        let bases = vec![app.base.clone(), b.base.clone(), c.base.clone()];
        let run = Duration::from_secs(3);
        let (accepted, refused) = hammer(&app, &bases, &app.admin_key, run).await;
        let mut fallbacks = 0.0;
        for base in &bases {
            let body = get(&app, base, "/metrics", "").await.body;
            fallbacks += metric(&body, "appzone_rate_limit_fallbacks_total");
        }
        eprintln!(
            "with Redis: {accepted} accepted, {refused} refused in 3 s through 3 replicas; \
             {fallbacks} requests decided locally (Redis over its timeout)"
        );
        // 20/s for 3 s plus the burst of 20, and 30% for the edges of the run.
        assert!(
            accepted <= 104,
            "{accepted} accepted with Redis, at most 104 expected"
        );
        assert!(
            accepted >= 60,
            "{accepted} accepted with Redis, at least 60 expected"
        );
        assert!(refused > 0);

        // The same through three replicas counting on their own: about three times as many.
        let local: Vec<Replica> = vec![
            app.replica(config(20, None)).await,
            app.replica(config(20, None)).await,
            app.replica(config(20, None)).await,
        ];
        let bases: Vec<String> = local.iter().map(|r| r.base.clone()).collect();
        let (accepted_local, _) = hammer(&app, &bases, &app.member_key, run).await;
        eprintln!("without Redis: {accepted_local} accepted in 3 s through 3 replicas");
        assert!(
            accepted_local > 2 * 80,
            "{accepted_local} accepted without Redis: each replica should allow its own quota"
        );
    }
}

postgres_only! {
    /// With Redis, the `RateLimit` headers of two replicas count one key's quota down together,
    /// and the 429 says when to retry; the failed authentications of one address add up too.
    async fn postgres_ratelimit_headers_count_down_across_replicas_sharing_redis() {
        let Some(redis) = test_redis_url() else {
            return;
        };
        let shared = ServiceConfig {
            redis_key_prefix: redis_test_prefix(),
            redis_timeout: Duration::from_millis(500),
            auth_failures_per_minute: 60,
            ..config(5, Some(&redis))
        };
        let app = TestApp::postgres_with(shared.clone(), |url| url).await;
        let b = app.replica(shared).await;
        let bases = [app.base.clone(), b.base.clone()];
        let mut seen = Vec::new();
        for n in 0..6 {
            let resp = get(&app, &bases[n % 2], &zones(), &app.member_key).await;
            assert_eq!(
                resp.header("ratelimit-policy"),
                Some("\"per-key\";q=5;w=1"),
                "{resp:?}"
            );
            seen.push((
                resp.status,
                resp.header("ratelimit").unwrap().to_owned(),
                resp.header("retry-after").map(str::to_owned),
            ));
        }
        let states: Vec<(u16, &str)> = seen.iter().map(|(s, r, _)| (*s, r.as_str())).collect();
        assert_eq!(
            states,
            [
                (200, "\"per-key\";r=4;t=1"),
                (200, "\"per-key\";r=3;t=1"),
                (200, "\"per-key\";r=2;t=1"),
                (200, "\"per-key\";r=1;t=1"),
                (200, "\"per-key\";r=0;t=1"),
                (429, "\"per-key\";r=0;t=1"),
            ],
            "{seen:?}"
        );
        let retry: u64 = seen[5].2.as_deref().unwrap().parse().unwrap();
        assert!(retry >= 1, "Retry-After {retry}");
        assert!(seen[..5].iter().all(|(_, _, retry)| retry.is_none()));

        // A failed authentication on each replica: the address's one bucket, taken twice.
        let mut failures = Vec::new();
        for base in &bases {
            let resp = get(&app, base, &zones(), "apz_nonsense").await;
            assert_eq!(resp.status, 401, "{resp:?}");
            failures.push(resp.header("ratelimit").unwrap().to_owned());
        }
        assert_eq!(
            failures,
            ["\"auth-failures\";r=59;t=1", "\"auth-failures\";r=58;t=2"]
        );
    }
}

/// Requests that arrive together share calls to Redis, and each still gets a decision of its
/// own in its turn: 90 failed authentications at once from one address against a quota of 60
/// a minute give 60 answers 401 counting the bucket down from 59 to 0, each value once, and 30
/// answers 429, in fewer calls than requests.
#[tokio::test]
async fn requests_arriving_together_share_redis_calls_each_decided_in_its_turn() {
    let Some(redis) = test_redis_url() else {
        return;
    };
    let app = TestApp::sqlite_with(ServiceConfig {
        redis_key_prefix: redis_test_prefix(),
        redis_timeout: Duration::from_millis(500),
        auth_failures_per_minute: 60,
        ..config(0, Some(&redis))
    })
    .await;
    let path = zones();
    let answers = futures_util::future::join_all(
        (0..90).map(|_| get(&app, &app.base, &path, "apz_nonsense")),
    )
    .await;
    let mut left: Vec<u32> = Vec::new();
    let mut refused = 0;
    for resp in &answers {
        match resp.status {
            401 => {
                let state = resp.header("ratelimit").unwrap();
                let r = state
                    .split(';')
                    .find_map(|part| part.strip_prefix("r="))
                    .unwrap();
                left.push(r.parse().unwrap());
            }
            429 => refused += 1,
            other => panic!("status {other}: {resp:?}"),
        }
    }
    left.sort_unstable();
    assert_eq!(left, (0..60).collect::<Vec<u32>>());
    assert_eq!(refused, 30);
    let metrics = app.get("/metrics", None).await.body;
    let calls = metric(&metrics, "appzone_rate_limit_redis_calls_total");
    eprintln!("90 requests decided in {calls} calls to Redis");
    assert_eq!(metric(&metrics, "appzone_rate_limit_fallbacks_total"), 0.0);
    assert!((1.0..90.0).contains(&calls), "{calls} calls");
}

/// A tracing subscriber for this test's thread, its lines kept for the test to read.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn lines_with(&self, text: &str) -> usize {
        String::from_utf8_lossy(&self.0.lock().unwrap())
            .lines()
            .filter(|line| line.contains(text))
            .count()
    }
}

fn metric(body: &str, name: &str) -> f64 {
    body.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{body}"))
}

/// Redis configured but failing (nothing listening; a server that accepts and never answers):
/// requests succeed under the replica's own limits, each fallback counts, one warning is
/// logged for the outage, and the delay Redis adds is bounded by its timeout, paid by at most
/// one request per back-off.
#[tokio::test]
async fn a_failing_redis_falls_back_to_local_limits_within_a_bounded_delay() {
    let log = Captured::default();
    let writer = log.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    // The test's runtime is one thread, so the servers' tasks log here too.
    let _guard = tracing::subscriber::set_default(subscriber);

    // Nothing listening: the connection is refused at once.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    // A server that accepts and never answers: each call waits for the timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let silent_addr = silent.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = silent.accept().await {
            held.push(stream);
        }
    });
    let no_redis = TestApp::sqlite_with(config(5, None)).await;

    for (what, redis) in [
        ("closed port", format!("redis://{closed}")),
        ("silent server", format!("redis://{silent_addr}")),
    ] {
        let before = log.lines_with("Redis failed");
        let app = TestApp::sqlite_with(config(5, Some(&redis))).await;
        let mut latencies = Vec::new();
        let mut statuses = Vec::new();
        for _ in 0..8 {
            let started = Instant::now();
            let resp = app.get(&zones(), Some(&app.member_key)).await;
            latencies.push(started.elapsed());
            statuses.push(resp.status);
            if resp.status == 200 {
                assert!(resp.header("ratelimit").is_some(), "{resp:?}");
            }
        }
        // The local limit of 5 a second, as without Redis.
        assert_eq!(statuses, [200, 200, 200, 200, 200, 429, 429, 429], "{what}");
        // The same requests on a server without Redis, for comparison.
        let mut baseline = Vec::new();
        for _ in 0..8 {
            let started = Instant::now();
            no_redis
                .get("/api/v1/providers", Some(&no_redis.admin_key))
                .await;
            baseline.push(started.elapsed());
        }
        baseline.sort();
        let steady = {
            let mut rest = latencies[1..].to_vec();
            rest.sort();
            rest[rest.len() / 2]
        };
        eprintln!(
            "{what}: first request {:?}, steady state median {steady:?} (without Redis: median \
             {:?})",
            latencies[0],
            baseline[baseline.len() / 2]
        );
        // The first request waits at most the 25 ms timeout (and a debug build's own time);
        // the next ones skip Redis during the back-off.
        assert!(
            latencies[0] < Duration::from_millis(500),
            "{what}: {latencies:?}"
        );
        assert!(
            latencies[1..]
                .iter()
                .all(|l| *l < Duration::from_millis(200)),
            "{what}: {latencies:?}"
        );
        // During the back-off no request waits for Redis: a silent one would cost each the
        // 25 ms timeout.
        assert!(steady < Duration::from_millis(20), "{what}: {latencies:?}");
        let metrics = app.get("/metrics", None).await.body;
        assert_eq!(
            metric(&metrics, "appzone_rate_limit_fallbacks_total"),
            8.0,
            "{what}"
        );
        assert_eq!(metric(&metrics, "appzone_rate_limit_shared"), 0.0, "{what}");
        assert_eq!(
            log.lines_with("Redis failed") - before,
            1,
            "{what}: one warning per outage"
        );
    }
    let metrics = no_redis.get("/metrics", None).await.body;
    assert_eq!(metric(&metrics, "appzone_rate_limit_fallbacks_total"), 0.0);
}

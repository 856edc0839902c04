//! Sustained load against the real binary: a fixed rate of mixed listing and deleting for 10 s
//! (`APPZONE_SOAK_SECS` for longer) gives only the expected statuses, bounded memory (RSS
//! sampled from `/proc`), one log line per request and a clean exit on SIGTERM.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use appzone_server::storage::{PoolSettings, Store};
use appzone_test_support::{seed_profiles, TestApp};

use crate::server_process::{acme_database, acme_key, rss_kib, ServerProcess};

/// Soak length in seconds: 10 by default, `APPZONE_SOAK_SECS` to run longer by hand.
fn soak_secs() -> u64 {
    std::env::var("APPZONE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

/// Requests per second the soak sends, whatever the answers take (open loop).
const SOAK_RATE: u64 = 150;
/// RSS the server may gain between the end of the warm-up and the end of the soak.
const SOAK_RSS_GROWTH_BOUND_KIB: u64 = 6 * 1024;
/// RSS the server may never exceed during the soak (debug build).
const SOAK_RSS_PEAK_BOUND_KIB: u64 = 64 * 1024;

#[derive(Debug, Clone, Copy)]
enum SoakKind {
    List,
    NotModified,
    UnknownRegion,
    Delete,
    DeleteAgain,
    MemberDelete,
}

impl SoakKind {
    fn of(i: u64) -> Self {
        match i % 20 {
            0 | 1 => SoakKind::Delete,
            2 => SoakKind::DeleteAgain,
            3 => SoakKind::MemberDelete,
            4 | 5 => SoakKind::NotModified,
            6 => SoakKind::UnknownRegion,
            _ => SoakKind::List,
        }
    }

    fn expected(self) -> u16 {
        match self {
            SoakKind::List => 200,
            SoakKind::NotModified => 304,
            SoakKind::UnknownRegion | SoakKind::DeleteAgain => 404,
            SoakKind::Delete => 204,
            SoakKind::MemberDelete => 403,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_of_mixed_listing_and_deleting_at_a_fixed_rate_keeps_statuses_and_memory_bounded() {
    let secs = soak_secs();
    let total = secs * SOAK_RATE;
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let (admin, member) = (acme_key(&url, "admin"), acme_key(&url, "member"));
    let store = Store::connect(&url, &PoolSettings::default())
        .await
        .unwrap();
    let deletable =
        Arc::new(seed_profiles(&store, "acme", "soak", (total / 10 + 10) as usize).await);
    let kept = Arc::new(seed_profiles(&store, "acme", "kept", 20).await);
    store.close().await;

    let server = ServerProcess::start(&url, &["--rate-limit-per-key", "0"], "info").await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .pool_max_idle_per_host(64)
        .build()
        .unwrap();
    let zones = format!("{}{}", server.base, TestApp::zones_path("aws", "us-east-1"));
    let etag = http
        .get(&zones)
        .header("x-api-key", &member)
        .send()
        .await
        .unwrap()
        .headers()["etag"]
        .to_str()
        .unwrap()
        .to_owned();

    let samples = Arc::new(Mutex::new(Vec::<(Duration, u64)>::new()));
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (samples, stop) = (samples.clone(), stop.clone());
        let pid = server.pid();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(500));
            while !stop.load(Ordering::SeqCst) {
                tick.tick().await;
                let rss = rss_kib(pid).expect("the server is running");
                samples.lock().unwrap().push((started.elapsed(), rss));
            }
        })
    };

    let regions = ["us-east-1", "us-west-2", "eu-west-1", "ap-southeast-1"];
    let next_delete = Arc::new(AtomicU64::new(0));
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / SOAK_RATE));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut calls = Vec::with_capacity(total as usize);
    for i in 0..total {
        tick.tick().await;
        let kind = SoakKind::of(i);
        let request = match kind {
            SoakKind::List => http
                .get(format!(
                    "{}{}",
                    server.base,
                    TestApp::zones_path("aws", regions[(i as usize / 20) % regions.len()])
                ))
                .header("x-api-key", if i % 2 == 0 { &member } else { &admin }),
            SoakKind::NotModified => http
                .get(&zones)
                .header("x-api-key", &member)
                .header("if-none-match", &etag),
            SoakKind::UnknownRegion => http
                .get(format!(
                    "{}{}",
                    server.base,
                    TestApp::zones_path("aws", "nowhere-1")
                ))
                .header("x-api-key", &member),
            SoakKind::Delete => {
                let n = next_delete.fetch_add(1, Ordering::SeqCst) as usize;
                http.delete(format!(
                    "{}{}",
                    server.base,
                    TestApp::profile_path(&deletable[n])
                ))
                .header("x-api-key", &admin)
            }
            SoakKind::DeleteAgain => {
                // A profile whose delete was sent 45 deletes (about 3 s) ago, so its 204 is
                // long back, or one never created.
                let done = next_delete.load(Ordering::SeqCst) as usize;
                let id = if done > 45 {
                    deletable[done - 45].clone()
                } else {
                    "prof_never_created".to_owned()
                };
                http.delete(format!("{}{}", server.base, TestApp::profile_path(&id)))
                    .header("x-api-key", &admin)
            }
            SoakKind::MemberDelete => http
                .delete(format!(
                    "{}{}",
                    server.base,
                    TestApp::profile_path(&kept[i as usize % kept.len()])
                ))
                .header("x-api-key", &member),
        };
        calls.push(tokio::spawn(async move {
            let sent = Instant::now();
            let status = request.send().await.map(|r| r.status().as_u16());
            (kind, status, sent.elapsed())
        }));
    }
    let mut unexpected = Vec::new();
    let mut latencies = Vec::with_capacity(calls.len());
    for call in calls {
        let (kind, status, latency) = call.await.unwrap();
        latencies.push(latency);
        match status {
            Ok(status) if status == kind.expected() => {}
            other => unexpected.push(format!("{kind:?}: {other:?}")),
        }
    }
    let elapsed = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    sampler.await.unwrap();
    let mut server = server;
    let exit = server.terminate().await;
    let logged = String::from_utf8_lossy(&server.logs())
        .lines()
        .filter(|l| l.contains(r#""target":"appzone::request""#))
        .count() as u64;

    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 - 1.0) * p) as usize];
    let samples = samples.lock().unwrap().clone();
    let warm = samples
        .iter()
        .filter(|(t, _)| *t <= elapsed / 5)
        .map(|s| s.1)
        .max()
        .unwrap();
    let last = samples
        .iter()
        .filter(|(t, _)| *t >= elapsed * 4 / 5)
        .map(|s| s.1)
        .max()
        .unwrap();
    let peak = samples.iter().map(|s| s.1).max().unwrap();
    eprintln!(
        "soak: {total} requests in {elapsed:?} ({:.0}/s asked {SOAK_RATE}/s; {} deletes), \
         {} unexpected statuses; latency p50 {:?} p99 {:?} max {:?}; server RSS after warm-up \
         {warm} KiB, in the last fifth {last} KiB, peak {peak} KiB ({} samples); {logged} request \
         log lines; exit {exit}",
        total as f64 / elapsed.as_secs_f64(),
        next_delete.load(Ordering::SeqCst),
        unexpected.len(),
        pct(0.5),
        pct(0.99),
        latencies.last().unwrap(),
        samples.len()
    );
    assert!(
        unexpected.is_empty(),
        "{} unexpected: {:?}",
        unexpected.len(),
        &unexpected[..unexpected.len().min(20)]
    );
    assert!(
        last <= warm + SOAK_RSS_GROWTH_BOUND_KIB,
        "RSS grew from {warm} KiB to {last} KiB (bound +{SOAK_RSS_GROWTH_BOUND_KIB} KiB)"
    );
    assert!(
        peak <= SOAK_RSS_PEAK_BOUND_KIB,
        "RSS peaked at {peak} KiB (bound {SOAK_RSS_PEAK_BOUND_KIB} KiB)"
    );
    assert!(exit.success(), "graceful exit after the soak: {exit}");
    assert_eq!(
        logged,
        total + 1,
        "one request log line per request, none dropped"
    );
}

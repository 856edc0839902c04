//! Crash durability, concurrency, hostile input and sustained load.
//!
//! Each test prints its figures on stderr (`cargo test -p appzone-server --test integration
//! reliability -- --nocapture` shows them). Everything is bounded in time and request count and
//! talks to 127.0.0.1 only.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use appzone_contract::headers::is_valid_request_id;
use appzone_contract::{ErrorCode, ProfileId};
use appzone_server::model::OrgId;
use appzone_server::serve::ServeOptions;
use appzone_server::storage::{PoolSettings, Store};
use appzone_server::ServiceConfig;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::server_process::{operator, rss_kib, ServerProcess};
use crate::support::{both_backends, fast_config, fresh_postgres_schema, TestApp};

fn acme() -> OrgId {
    "acme".parse().unwrap()
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// Inserts `n` profiles of `org` in one transaction (fast seeding; the CLI makes one of them
/// elsewhere). Ids are `prof_{tag}_{i}`.
async fn seed_profiles(store: &Store, org: &str, tag: &str, n: usize) -> Vec<String> {
    let ids: Vec<String> = (0..n).map(|i| format!("prof_{tag}_{i:05}")).collect();
    let mut tx = store.pool().begin().await.unwrap();
    for id in &ids {
        sqlx::query("INSERT INTO profiles (id, org_id, name, created_at) VALUES ($1, $2, $3, $4)")
            .bind(id)
            .bind(org)
            .bind(format!("seeded {id}"))
            .bind(appzone_server::model::now_ms())
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    ids
}

// ---- durability under SIGKILL -------------------------------------------------------------

/// What the client knows about a profile, from answers it received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Known {
    /// Never deleted, or restored (the restore committed) after its last acknowledged delete.
    Live,
    /// The last delete got 204.
    Deleted,
    /// A delete was in flight when the server died (or got 503): either outcome is allowed.
    InFlight,
}

#[derive(Debug)]
struct Tracked {
    id: String,
    known: Known,
    /// Request ids of deletes answered 204; each must have its audit record.
    acked: Vec<String>,
    /// Deletes the database must have applied (audit `delete` records).
    deletes_applied: usize,
    /// Restores committed by the test (audit `restore` records).
    restores: usize,
}

#[derive(Debug, Default)]
struct WorkerLog {
    sent: u64,
    acked: u64,
    restores: u64,
    unavailable: u64,
    violations: Vec<String>,
}

/// One client task: deletes its own live profiles through the server and restores its deleted
/// ones through the store, until the first transport error (the server died) or `stop`.
async fn crash_worker(
    base: String,
    key: String,
    store: Store,
    mut profiles: Vec<Tracked>,
    stop: Arc<AtomicBool>,
    seed: u64,
) -> (Vec<Tracked>, WorkerLog) {
    let http = http_client();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut log = WorkerLog::default();
    while !stop.load(Ordering::SeqCst) {
        let candidates: Vec<usize> = (0..profiles.len())
            .filter(|i| profiles[*i].known != Known::InFlight)
            .collect();
        if candidates.is_empty() {
            break;
        }
        let p = &mut profiles[candidates[rng.random_range(0..candidates.len())]];
        match p.known {
            Known::Live => {
                log.sent += 1;
                let request_id = format!("crash-{seed}-{}", log.sent);
                let sent = http
                    .delete(format!("{base}{}", TestApp::profile_path(&p.id)))
                    .header("x-api-key", &key)
                    .header("x-request-id", &request_id)
                    .send()
                    .await;
                match sent.map(|r| r.status().as_u16()) {
                    Ok(204) => {
                        p.known = Known::Deleted;
                        p.acked.push(request_id);
                        p.deletes_applied += 1;
                        log.acked += 1;
                    }
                    Ok(503) => {
                        // Retryable, and the delete may still have committed.
                        p.known = Known::InFlight;
                        log.unavailable += 1;
                    }
                    Ok(status) => {
                        log.violations.push(format!(
                            "live profile {} answered {status} to {request_id}",
                            p.id
                        ));
                        p.known = Known::InFlight;
                    }
                    Err(_) => {
                        // The server is gone; this delete's fate is unknown.
                        p.known = Known::InFlight;
                        break;
                    }
                }
            }
            Known::Deleted => {
                let id: ProfileId = p.id.parse().unwrap();
                match store.restore_profile(&id).await {
                    Ok(()) => {
                        p.known = Known::Live;
                        p.restores += 1;
                        log.restores += 1;
                    }
                    Err(err) => log.violations.push(format!(
                        "restore of acknowledged delete {} failed: {err}",
                        p.id
                    )),
                }
            }
            Known::InFlight => unreachable!(),
        }
    }
    (profiles, log)
}

/// `PRAGMA integrity_check` and `foreign_key_check` on a SQLite file, through a fresh
/// connection (which also recovers the WAL the killed process left).
async fn sqlite_integrity(path: &Path) -> (Vec<String>, usize) {
    let mut conn = crate::support::connect_admin(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let rows: Vec<(String,)> = sqlx::query_as("PRAGMA integrity_check")
        .fetch_all(&mut conn)
        .await
        .unwrap();
    let fk = sqlx::query("PRAGMA foreign_key_check")
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .len();
    (rows.into_iter().map(|r| r.0).collect(), fk)
}

#[derive(Debug, Default)]
struct CrashFigures {
    crashes: u64,
    deletes_sent: u64,
    acked_checked: u64,
    in_flight: u64,
    restores: u64,
    profiles_checked: u64,
}

/// Compares the database after a crash with the client's log; resolves in-flight deletes to
/// what the database says. Returns how many acknowledged deletes were checked.
async fn check_against_log(store: &Store, tracked: &mut [Tracked]) -> (u64, Vec<String>) {
    let live: HashSet<String> = store
        .list_profiles(&acme(), false)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    let deleted: HashSet<String> = store
        .list_profiles(&acme(), true)
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    let audits: Vec<(String, String, String)> = sqlx::query_as(
        "SELECT profile_id, action, request_id FROM profile_audit WHERE org_id = $1",
    )
    .bind("acme")
    .fetch_all(store.pool())
    .await
    .unwrap();
    let mut delete_ids: HashMap<&str, HashSet<&str>> = HashMap::new();
    let mut deletes: HashMap<&str, usize> = HashMap::new();
    let mut restores: HashMap<&str, usize> = HashMap::new();
    for (profile, action, request_id) in &audits {
        match action.as_str() {
            "delete" => {
                *deletes.entry(profile).or_default() += 1;
                delete_ids.entry(profile).or_default().insert(request_id);
            }
            "restore" => *restores.entry(profile).or_default() += 1,
            _ => {}
        }
    }
    let mut problems = Vec::new();
    let mut acked_checked = 0;
    for t in tracked.iter_mut() {
        let id = t.id.as_str();
        let (is_live, is_deleted) = (live.contains(id), deleted.contains(id));
        if is_live == is_deleted {
            problems.push(format!("{id}: live={is_live} deleted={is_deleted}"));
            continue;
        }
        match t.known {
            Known::Live if !is_live => problems.push(format!(
                "{id} was never acknowledged as deleted since its last restore, but is gone"
            )),
            Known::Deleted if !is_deleted => problems.push(format!(
                "{id}: delete {} got 204 but the profile is live after the crash",
                t.acked.last().unwrap()
            )),
            _ => {}
        }
        if t.known == Known::InFlight {
            // The in-flight delete was of a live profile: it applied iff the profile is gone.
            t.deletes_applied += usize::from(is_deleted);
            t.known = if is_deleted {
                Known::Deleted
            } else {
                Known::Live
            };
        }
        for request_id in &t.acked {
            acked_checked += 1;
            if !delete_ids
                .get(id)
                .is_some_and(|ids| ids.contains(request_id.as_str()))
            {
                problems.push(format!(
                    "{id}: no audit record for acknowledged {request_id}"
                ));
            }
        }
        let (d, r) = (
            deletes.get(id).copied().unwrap_or(0),
            restores.get(id).copied().unwrap_or(0),
        );
        if d != t.deletes_applied || r != t.restores {
            problems.push(format!(
                "{id}: audit has {d} deletes / {r} restores, the log says {} / {}",
                t.deletes_applied, t.restores
            ));
        }
        if d as i64 - r as i64 != i64::from(is_deleted) {
            problems.push(format!(
                "{id}: {d} deletes and {r} restores audited, but deleted={is_deleted}"
            ));
        }
    }
    (acked_checked, problems)
}

/// One seed: a fresh database seeded with the CLI, `rounds` times (start the server, delete
/// and restore from `WORKERS` tasks, SIGKILL at a random moment, check integrity, restart,
/// compare with the client log).
async fn crash_seed(url: &str, sqlite_file: Option<&Path>, seed: u64, rounds: u32) -> CrashFigures {
    const WORKERS: usize = 6;
    const PROFILES: usize = 90;
    let mut rng = StdRng::seed_from_u64(seed);
    operator(url, &["migrate"]);
    assert_eq!(operator(url, &["org", "create", "acme"]), "acme");
    let key = operator(url, &["key", "create", "--org", "acme", "--role", "admin"]);
    let by_cli = operator(
        url,
        &["profile", "create", "--org", "acme", "--name", "from-cli"],
    );
    let store = Store::connect(url, &PoolSettings::default()).await.unwrap();
    let mut ids = seed_profiles(&store, "acme", &format!("c{seed}"), PROFILES - 1).await;
    ids.push(by_cli);
    let mut tracked: Vec<Tracked> = ids
        .into_iter()
        .map(|id| Tracked {
            id,
            known: Known::Live,
            acked: Vec::new(),
            deletes_applied: 0,
            restores: 0,
        })
        .collect();

    let serve_args = ["--rate-limit-per-key", "0"];
    let mut figures = CrashFigures::default();
    let mut server = ServerProcess::start(url, &serve_args, "info").await;
    for round in 0..rounds {
        let stop = Arc::new(AtomicBool::new(false));
        let mut shares: Vec<Vec<Tracked>> = (0..WORKERS).map(|_| Vec::new()).collect();
        for (i, t) in tracked.drain(..).enumerate() {
            shares[i % WORKERS].push(t);
        }
        let workers: Vec<_> = shares
            .into_iter()
            .enumerate()
            .map(|(w, share)| {
                tokio::spawn(crash_worker(
                    server.base.clone(),
                    key.clone(),
                    store.clone(),
                    share,
                    stop.clone(),
                    seed * 1000 + u64::from(round) * 100 + w as u64,
                ))
            })
            .collect();
        // The random moment: the workers keep deletes in flight the whole time.
        let kill_after = Duration::from_millis(rng.random_range(300..1500));
        tokio::time::sleep(kill_after).await;
        let status = server.kill9();
        stop.store(true, Ordering::SeqCst);
        let mut logs = Vec::new();
        for worker in workers {
            let (share, log) = worker.await.unwrap();
            tracked.extend(share);
            logs.push(log);
        }
        let violations: Vec<&String> = logs.iter().flat_map(|l| &l.violations).collect();
        assert!(violations.is_empty(), "while running: {violations:?}");
        let sent: u64 = logs.iter().map(|l| l.sent).sum();
        let acked: u64 = logs.iter().map(|l| l.acked).sum();
        let restores: u64 = logs.iter().map(|l| l.restores).sum();
        let unavailable: u64 = logs.iter().map(|l| l.unavailable).sum();
        let in_flight = tracked
            .iter()
            .filter(|t| t.known == Known::InFlight)
            .count();
        assert!(
            acked > 0,
            "no delete was acknowledged before the kill at {kill_after:?}"
        );

        let integrity = match sqlite_file {
            Some(path) => {
                let (check, fk_violations) = sqlite_integrity(path).await;
                assert_eq!(check, ["ok"], "PRAGMA integrity_check after SIGKILL");
                assert_eq!(fk_violations, 0, "PRAGMA foreign_key_check after SIGKILL");
                "integrity_check ok"
            }
            None => "committed transactions only",
        };
        server = ServerProcess::start(url, &serve_args, "info").await;
        let (acked_checked, problems) = check_against_log(&store, &mut tracked).await;
        assert!(
            problems.is_empty(),
            "seed {seed} round {round}: {problems:#?}"
        );
        // Through the restarted server: every acknowledged delete stays deleted.
        let http = http_client();
        for t in tracked.iter().filter(|t| t.known == Known::Deleted) {
            let resp = http
                .delete(format!("{}{}", server.base, TestApp::profile_path(&t.id)))
                .header("x-api-key", &key)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status(), 404, "{} after restart", t.id);
        }
        eprintln!(
            "crash seed {seed} round {round}: SIGKILL ({status}) after {kill_after:?}; \
             {sent} deletes sent, {acked} acknowledged, {in_flight} in flight, \
             {unavailable} answered 503, {restores} restores; {integrity}; \
             {acked_checked} acknowledged deletes checked over {} profiles",
            tracked.len()
        );
        figures.crashes += 1;
        figures.deletes_sent += sent;
        figures.acked_checked += acked;
        figures.in_flight += in_flight as u64;
        figures.restores += restores;
        figures.profiles_checked += tracked.len() as u64;
    }
    // Finally, every profile the log says is live is intact: the API deletes it.
    let http = http_client();
    for t in tracked.iter().filter(|t| t.known == Known::Live) {
        let resp = http
            .delete(format!("{}{}", server.base, TestApp::profile_path(&t.id)))
            .header("x-api-key", &key)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 204, "{} is intact after the crashes", t.id);
    }
    server.terminate().await;
    store.close().await;
    figures
}

fn report_crashes(backend: &str, figures: &[CrashFigures]) {
    let sum = |f: fn(&CrashFigures) -> u64| figures.iter().map(f).sum::<u64>();
    eprintln!(
        "crash durability ({backend}): {} SIGKILLs survived over {} seeds; {} deletes sent, \
         {} acknowledged deletes checked, {} in flight at a kill, {} restores",
        sum(|f| f.crashes),
        figures.len(),
        sum(|f| f.deletes_sent),
        sum(|f| f.acked_checked),
        sum(|f| f.in_flight),
        sum(|f| f.restores),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_acknowledged_deletes_survive_sigkill_and_the_file_stays_intact() {
    let mut figures = Vec::new();
    for seed in [0xA1, 0xB2, 0xC3] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("appzone.db");
        let url = format!("sqlite://{}", file.display());
        figures.push(crash_seed(&url, Some(&file), seed, 2).await);
    }
    report_crashes("SQLite", &figures);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_acknowledged_deletes_survive_sigkill_of_the_server() {
    let mut figures = Vec::new();
    for seed in [0xD4, 0xE5] {
        let schema = fresh_postgres_schema().await;
        figures.push(crash_seed(&schema.url, None, seed, 2).await);
    }
    report_crashes("PostgreSQL", &figures);
}

// ---- concurrent deletes -------------------------------------------------------------------

/// Deletes each profile `per_profile` times at once, spreading the requests over `bases`
/// (servers on one database), each request with its own id. Returns (profile, request id,
/// status) for every request.
async fn delete_all_at_once(
    http: &reqwest::Client,
    bases: &[&str],
    key: &str,
    profiles: &[String],
    per_profile: usize,
) -> Vec<(String, String, u16)> {
    let mut calls = Vec::new();
    for (p, profile) in profiles.iter().enumerate() {
        for attempt in 0..per_profile {
            let base = bases[(p + attempt) % bases.len()];
            let request_id = format!("conc-{p}-{attempt}");
            let request = http
                .delete(format!("{base}{}", TestApp::profile_path(profile)))
                .header("x-api-key", key)
                .header("x-request-id", &request_id);
            let profile = profile.clone();
            calls.push(async move {
                let status = request.send().await.unwrap().status().as_u16();
                (profile, request_id, status)
            });
        }
    }
    futures_util::future::join_all(calls).await
}

/// Exactly one 204 per profile, 404 for every other attempt, and exactly one audit record per
/// profile, written by the request that got the 204.
async fn assert_exactly_once(
    store: &Store,
    results: &[(String, String, u16)],
    profiles: &[String],
) {
    let mut winners: HashMap<&str, Vec<&str>> = HashMap::new();
    for (profile, request_id, status) in results {
        match status {
            204 => winners.entry(profile).or_default().push(request_id),
            404 => {}
            other => panic!("{profile}: {request_id} answered {other}"),
        }
    }
    let audits: Vec<(String, String)> =
        sqlx::query_as("SELECT profile_id, request_id FROM profile_audit WHERE action = 'delete'")
            .fetch_all(store.pool())
            .await
            .unwrap();
    let mut audited: HashMap<&str, Vec<&str>> = HashMap::new();
    for (profile, request_id) in &audits {
        audited.entry(profile).or_default().push(request_id);
    }
    for profile in profiles {
        let won = winners.get(profile.as_str()).cloned().unwrap_or_default();
        assert_eq!(won.len(), 1, "{profile}: 204s from {won:?}");
        let records = audited.get(profile.as_str()).cloned().unwrap_or_default();
        assert_eq!(records, won, "{profile}: audit records");
    }
}

both_backends! {
    async fn fifty_profiles_deleted_eight_times_at_once_give_exactly_one_204_each(app: TestApp) {
        let profiles = seed_profiles(&app.store, "acme", "conc", 50).await;
        let started = Instant::now();
        let results = delete_all_at_once(&app.http, &[&app.base], &app.admin_key, &profiles, 8).await;
        let elapsed = started.elapsed();
        assert_exactly_once(&app.store, &results, &profiles).await;
        eprintln!(
            "concurrent deletes ({:?}): {} requests (50 profiles x 8) in {elapsed:?}: 50 x 204, {} x 404, 0 x 5xx",
            app.store.backend(),
            results.len(),
            results.len() - 50
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: set APPZONE_TEST_POSTGRES_URL and pass --include-ignored"]
async fn postgres_two_replicas_deleting_the_same_profiles_give_exactly_one_204_each() {
    let app = TestApp::postgres().await;
    let replica = app.replica(fast_config()).await;
    let profiles = seed_profiles(&app.store, "acme", "repl", 50).await;
    let started = Instant::now();
    let results = delete_all_at_once(
        &app.http,
        &[&app.base, &replica.base],
        &app.admin_key,
        &profiles,
        8,
    )
    .await;
    let elapsed = started.elapsed();
    assert_exactly_once(&app.store, &results, &profiles).await;
    eprintln!(
        "concurrent deletes through two replicas: {} requests in {elapsed:?}, exactly one 204 per profile",
        results.len()
    );
}

// ---- hostile input ------------------------------------------------------------------------

/// What a generated request presents in `X-API-KEY`.
#[derive(Debug, Clone)]
enum KeyChoice {
    Absent,
    Admin,
    Member,
    Revoked,
    OtherAdmin,
    /// The admin key sent twice.
    Twice,
    /// The admin key changed by `Mutation` at position `usize` (modulo its length).
    Mutated(Mutation, usize),
    /// Arbitrary bytes (dropped when not a legal header value).
    Raw(Vec<u8>),
}

#[derive(Debug, Clone, Copy)]
enum Mutation {
    Bearer,
    PaddedWithSpaces,
    Truncated,
    Appended,
    Flipped,
    Lowercased,
    SameKeyIdRandomSecret,
    SharedSecretPrefix,
}

#[derive(Debug, Clone)]
struct Hostile {
    method: String,
    path: String,
    key: KeyChoice,
    request_id: Option<Vec<u8>>,
    if_none_match: Option<Vec<u8>>,
    body: Vec<u8>,
}

/// Profiles seeded per organization for the generated requests to hit.
const HOSTILE_PROFILES: usize = 200;

mod gen {
    use super::{Hostile, KeyChoice, Mutation, HOSTILE_PROFILES};
    use proptest::prelude::*;
    use proptest::sample::select;

    fn piece() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9-]{1,8}",
            "[A-Za-z0-9._~-]{1,8}",
            "%[0-9A-Fa-f]{2}",
            "%[0-9A-Za-z]?",
            select(vec![
                "%2F",
                "%2f",
                "%2E",
                "%2E%2E",
                "%00",
                "%FF",
                "%C3",
                "%C3%A9",
                "%E2%82%AC",
                "%F0%9F%98%80",
                "%ED%A0%80",
                "%C0%AF",
                "%25",
                "%20",
                "+",
                ":",
                "@",
                "!",
                "$",
                "&",
                "'",
                "(",
                ")",
                "*",
                ",",
                ";",
                "=",
                "..",
                ".",
                "~",
            ])
            .prop_map(String::from),
        ]
    }

    /// One path segment: well-formed ids, known names, percent-encoding soup, long runs.
    fn segment() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => prop::collection::vec(piece(), 0..6).prop_map(|v| v.concat()),
            2 => select(vec![
                "aws", "gcp", "azure", "us-east-1", "europe-west1", "acme-cloud", "empty-1",
                "{profile}", "{other_profile}", "prof_missing", "..", ".", "",
            ])
            .prop_map(String::from),
            1 => "[a-z][a-z0-9-]{55,70}",
            1 => "[A-Za-z0-9][A-Za-z0-9._-]{120,300}",
        ]
    }

    fn path() -> impl Strategy<Value = String> {
        let real_zones = (
            select(vec![
                ("aws", "us-east-1"),
                ("gcp", "europe-west1"),
                ("azure", "westeurope"),
                ("acme-cloud", "empty-1"),
                ("aws", "us-east-9"),
            ]),
            select(vec!["", "%2D", "%61", "-"]),
            any::<bool>(),
        )
            .prop_map(|((p, r), twist, upper)| {
                let p = if upper {
                    p.to_uppercase()
                } else {
                    p.to_owned()
                };
                let r = r.replacen('-', twist, usize::from(!twist.is_empty()));
                format!("/api/v1/providers/{p}/regions/{r}/zones")
            });
        let shaped = prop_oneof![
            3 => real_zones,
            2 => (any::<bool>(), 0..HOSTILE_PROFILES)
                .prop_map(|(ours, i)| format!(
                    "/api/v1/applications/profiles/prof_{}_{i:05}",
                    if ours { "h" } else { "g" }
                )),
            3 => (segment(), segment(), select(vec!["", "/", "/extra", "//"]))
                .prop_map(|(p, r, tail)| format!("/api/v1/providers/{p}/regions/{r}/zones{tail}")),
            3 => (segment(), select(vec!["", "/", "/x"]))
                .prop_map(|(id, tail)| format!("/api/v1/applications/profiles/{id}{tail}")),
            // The discovery listings: real and hostile providers, with and without tails.
            2 => (
                prop_oneof![
                    select(vec!["aws", "gcp", "azure", "acme-cloud", "awz", "AWS", "%61ws"])
                        .prop_map(String::from),
                    segment(),
                ],
                select(vec!["", "/", "/extra", "//"]),
            )
                .prop_map(|(p, tail)| format!("/api/v1/providers/{p}/regions{tail}")),
            1 => select(vec!["", "/", "//", "/x"])
                .prop_map(|tail| format!("/api/v1/providers{tail}")),
            2 => (
                select(vec![
                    "", "/api", "/api/v1", "/api/v2", "/healthz", "/readyz", "/metrics",
                    "/openapi.json", "/docs", "/providers", "/applications/profiles",
                    "/api/v1/providers", "/api/v1/applications", "/API/V1",
                ]),
                prop::collection::vec(segment(), 0..4),
            )
                .prop_map(|(prefix, segments)| {
                    let rest: String = segments.iter().map(|s| format!("/{s}")).collect();
                    let path = format!("{prefix}{rest}");
                    if path.is_empty() { "/".to_owned() } else { path }
                }),
            1 => "/[!-~]{0,60}",
        ];
        let query = prop::option::of("[a-zA-Z0-9=&%_.-]{0,24}");
        (shaped, query).prop_map(|(path, query)| match query {
            Some(q) => format!("{path}?{q}"),
            None => path,
        })
    }

    fn method() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => Just("GET".to_owned()),
            3 => Just("DELETE".to_owned()),
            3 => select(vec!["HEAD", "POST", "PUT", "PATCH", "OPTIONS", "TRACE", "CONNECT"])
                .prop_map(String::from),
            1 => "[A-Z]{1,12}",
            1 => "[a-z]{1,6}",
            1 => "[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}",
        ]
    }

    fn header_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            "[A-Za-z0-9._:-]{1,140}".prop_map(String::into_bytes),
            "[ -~]{0,200}".prop_map(String::into_bytes),
            prop::collection::vec(any::<u8>(), 0..200),
        ]
    }

    fn key() -> impl Strategy<Value = KeyChoice> {
        let mutation = select(vec![
            Mutation::Bearer,
            Mutation::PaddedWithSpaces,
            Mutation::Truncated,
            Mutation::Appended,
            Mutation::Flipped,
            Mutation::Lowercased,
            Mutation::SameKeyIdRandomSecret,
            Mutation::SharedSecretPrefix,
        ]);
        prop_oneof![
            1 => Just(KeyChoice::Absent),
            4 => Just(KeyChoice::Admin),
            3 => Just(KeyChoice::Member),
            1 => Just(KeyChoice::Revoked),
            1 => Just(KeyChoice::OtherAdmin),
            1 => Just(KeyChoice::Twice),
            3 => (mutation, 0..64usize).prop_map(|(m, at)| KeyChoice::Mutated(m, at)),
            2 => header_bytes().prop_map(KeyChoice::Raw),
        ]
    }

    pub fn hostile() -> impl Strategy<Value = Hostile> {
        (
            method(),
            path(),
            key(),
            prop::option::of(header_bytes()),
            prop::option::of(prop_oneof![
                header_bytes(),
                Just(b"{etag}".to_vec()),
                Just(b"*".to_vec()),
                Just(b"W/\"x\", *".to_vec()),
            ]),
            prop_oneof![
                4 => Just(Vec::new()),
                1 => prop::collection::vec(any::<u8>(), 1..256),
            ],
        )
            .prop_map(
                |(method, path, key, request_id, if_none_match, body)| Hostile {
                    method,
                    path,
                    key,
                    request_id,
                    if_none_match,
                    body,
                },
            )
    }
}

/// The fixture values a generated request refers to.
struct Fixture {
    admin: String,
    member: String,
    revoked: String,
    other_admin: String,
    profile: String,
    other_profile: String,
    /// The ETag of aws/us-east-1.
    etag: String,
}

impl Fixture {
    async fn of(app: &TestApp) -> Self {
        let etag = app
            .get(
                &TestApp::zones_path("aws", "us-east-1"),
                Some(&app.member_key),
            )
            .await
            .header("etag")
            .unwrap()
            .to_owned();
        Self {
            etag,
            admin: app.admin_key.clone(),
            member: app.member_key.clone(),
            revoked: app.revoked_key.clone(),
            other_admin: app.other_admin_key.clone(),
            profile: app.profile.to_string(),
            other_profile: app.other_profile.to_string(),
        }
    }
}

/// A request ready to send: method, target and header lines, plus what the checks need to know.
struct Prepared {
    method: String,
    target: String,
    headers: Vec<(&'static str, Vec<u8>)>,
    body: Vec<u8>,
    /// The key is one the server must accept, and its role may delete.
    valid_key: bool,
    admin_key: bool,
    /// Key material sent, which must never come back.
    sent_key: Option<String>,
    sent_request_id: Option<String>,
}

fn mutate(key: &str, mutation: Mutation, at: usize) -> String {
    let at = at % key.len();
    match mutation {
        Mutation::Bearer => format!("Bearer {key}"),
        Mutation::PaddedWithSpaces => format!("  {key}\t "),
        Mutation::Truncated => key[..at].to_owned(),
        Mutation::Appended => format!("{key}A"),
        Mutation::Flipped => {
            let mut bytes = key.as_bytes().to_vec();
            bytes[at] = if bytes[at] == b'Z' { b'Y' } else { b'Z' };
            String::from_utf8(bytes).unwrap()
        }
        Mutation::Lowercased => key.to_lowercase(),
        Mutation::SameKeyIdRandomSecret => {
            format!("{}{}", &key[..17], "Q".repeat(key.len() - 17))
        }
        Mutation::SharedSecretPrefix => {
            format!("{}{}", &key[..33], "Q".repeat(key.len() - 33))
        }
    }
}

fn prepare(case: &Hostile, f: &Fixture) -> Prepared {
    let mut headers = Vec::new();
    let mut valid_key = false;
    let mut admin_key = false;
    let mut sent_key = None;
    let mut key = |value: &str, valid: bool, admin: bool| {
        headers.push(("x-api-key", value.as_bytes().to_vec()));
        valid_key = valid;
        admin_key = admin;
        sent_key = Some(value.trim().to_owned());
    };
    match &case.key {
        KeyChoice::Absent => {}
        KeyChoice::Admin => key(&f.admin, true, true),
        KeyChoice::Member => key(&f.member, true, false),
        KeyChoice::Revoked => key(&f.revoked, false, false),
        KeyChoice::OtherAdmin => key(&f.other_admin, true, true),
        KeyChoice::Twice => {
            key(&f.admin, false, false);
            headers.push(("x-api-key", f.admin.as_bytes().to_vec()));
        }
        KeyChoice::Mutated(m, at) => {
            let mutated = mutate(&f.admin, *m, *at);
            let accepted = matches!(m, Mutation::PaddedWithSpaces);
            key(&mutated, accepted, accepted);
        }
        KeyChoice::Raw(bytes) => {
            if http::HeaderValue::from_bytes(bytes).is_ok() {
                headers.push(("x-api-key", bytes.clone()));
            }
        }
    }
    let mut sent_request_id = None;
    if let Some(id) = &case.request_id {
        if http::HeaderValue::from_bytes(id).is_ok() {
            headers.push(("x-request-id", id.clone()));
            sent_request_id = std::str::from_utf8(id).ok().map(str::to_owned);
        }
    }
    if let Some(tag) = &case.if_none_match {
        let tag = if tag == b"{etag}" {
            f.etag.as_bytes().to_vec()
        } else {
            tag.clone()
        };
        if http::HeaderValue::from_bytes(&tag).is_ok() {
            headers.push(("if-none-match", tag));
        }
    }
    Prepared {
        method: case.method.clone(),
        target: case
            .path
            .replace("{profile}", &f.profile)
            .replace("{other_profile}", &f.other_profile),
        headers,
        body: case.body.clone(),
        valid_key,
        admin_key,
        sent_key,
        sent_request_id,
    }
}

/// A response as the checks see it, whichever way it was obtained.
#[derive(Debug)]
struct Seen {
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_slice())
    }
}

/// The properties every answer to every request must have.
fn check_answer(req: &Prepared, seen: &Seen) -> Result<(), String> {
    let status = seen.status;
    let what = format!("{} {} -> {status}", req.method, req.target);
    if !(100..500).contains(&status) {
        return Err(format!(
            "{what}: server error: {}",
            String::from_utf8_lossy(&seen.body)
        ));
    }
    let request_id = seen
        .header("x-request-id")
        .and_then(|v| std::str::from_utf8(v).ok())
        .ok_or_else(|| format!("{what}: no X-Request-Id"))?;
    if !is_valid_request_id(request_id) {
        return Err(format!("{what}: X-Request-Id {request_id:?} is not valid"));
    }
    if let Some(sent) = req
        .sent_request_id
        .as_deref()
        .filter(|s| is_valid_request_id(s))
    {
        if request_id != sent {
            return Err(format!(
                "{what}: sent request id {sent:?}, got {request_id:?}"
            ));
        }
    }
    if seen.header("x-content-type-options") != Some(b"nosniff") {
        return Err(format!("{what}: no X-Content-Type-Options: nosniff"));
    }
    if let Some(key) = req.sent_key.as_deref().filter(|k| k.len() >= 12) {
        if seen.body.windows(key.len()).any(|w| w == key.as_bytes()) {
            return Err(format!("{what}: the key came back in the body"));
        }
    }
    if req.method == "HEAD" && !seen.body.is_empty() {
        return Err(format!("{what}: HEAD answered with a body"));
    }
    let path = req.target.split('?').next().unwrap_or_default();
    if (200..300).contains(&status) && path.starts_with("/api/v1/") && !req.valid_key {
        return Err(format!("{what}: success under /api/v1 without a valid key"));
    }
    if status == 204 && !(req.method == "DELETE" && req.admin_key) {
        return Err(format!("{what}: 204 without an admin DELETE"));
    }
    if status >= 400 && req.method != "HEAD" {
        if seen.header("content-type") != Some(b"application/json") {
            return Err(format!(
                "{what}: error content-type {:?}",
                seen.header("content-type").map(String::from_utf8_lossy)
            ));
        }
        let body: serde_json::Value = serde_json::from_slice(&seen.body).map_err(|e| {
            format!(
                "{what}: error body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&seen.body)
            )
        })?;
        let object = body
            .as_object()
            .filter(|o| o.len() == 2 && o["error"].is_string() && o["error_code"].is_string())
            .ok_or_else(|| format!("{what}: not {{error, error_code}}: {body}"))?;
        let code = ErrorCode::from_wire(object["error_code"].as_str().unwrap_or_default());
        if matches!(code, ErrorCode::Other(_)) {
            return Err(format!("{what}: error_code outside the contract: {body}"));
        }
        if code.status().as_u16() != status {
            return Err(format!("{what}: {code} is not a {status} code"));
        }
    }
    Ok(())
}

/// Sends through the router in process (no socket, so no peer address).
async fn send_in_process(app: &TestApp, req: &Prepared) -> Option<Seen> {
    use tower::ServiceExt;
    let mut builder = http::Request::builder()
        .method(http::Method::from_bytes(req.method.as_bytes()).ok()?)
        .uri(req.target.parse::<http::Uri>().ok()?);
    for (name, value) in &req.headers {
        builder = builder.header(*name, http::HeaderValue::from_bytes(value).ok()?);
    }
    let request = builder
        .body(axum::body::Body::from(req.body.clone()))
        .ok()?;
    let response = app.service.router.clone().oneshot(request).await.unwrap();
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
        .collect();
    let body = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap()
        .to_vec();
    Some(Seen {
        status,
        headers,
        body,
    })
}

/// Writes one HTTP/1.1 request on a fresh connection and reads the whole answer.
async fn send_raw(addr: &str, req: &Prepared) -> Result<Seen, String> {
    let mut head =
        format!("{} {} HTTP/1.1\r\nHost: {addr}\r\n", req.method, req.target).into_bytes();
    for (name, value) in &req.headers {
        head.extend_from_slice(name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(
        format!(
            "Content-Length: {}\r\nConnection: close\r\n\r\n",
            req.body.len()
        )
        .as_bytes(),
    );
    head.extend_from_slice(&req.body);
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
        stream.write_all(&head).await.map_err(|e| e.to_string())?;
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .await
            .map_err(|e| e.to_string())?;
        Ok::<_, String>(answer)
    };
    let answer = tokio::time::timeout(Duration::from_secs(20), exchange)
        .await
        .map_err(|_| "no answer within 20 s".to_owned())??;
    parse_raw_response(&answer)
}

fn parse_raw_response(answer: &[u8]) -> Result<Seen, String> {
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| format!("incomplete answer: {:?}", String::from_utf8_lossy(answer)))?;
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line: {head:?}"))?;
    let headers: Vec<(String, Vec<u8>)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_lowercase(), v.trim().as_bytes().to_vec()))
        .collect();
    let mut body = answer[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case(b"chunked"))
    {
        body = dechunk(&body)?;
    }
    Ok(Seen {
        status,
        headers,
        body,
    })
}

fn dechunk(mut raw: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let line_end = raw
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("bad chunk")?;
        let size = usize::from_str_radix(
            std::str::from_utf8(&raw[..line_end])
                .map_err(|e| e.to_string())?
                .trim(),
            16,
        )
        .map_err(|e| e.to_string())?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        out.extend_from_slice(raw.get(..size).ok_or("short chunk")?);
        raw = raw.get(size + 2..).ok_or("short chunk")?;
    }
}

fn hostile_app_config() -> ServiceConfig {
    // Limits off, so every generated request reaches the routing and the handlers.
    ServiceConfig {
        rate_limit_per_key: 0,
        auth_failures_per_minute: 0,
        ..fast_config()
    }
}

fn proptest_seed() -> u64 {
    std::env::var("APPZONE_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0007)
}

/// Runs `cases` generated requests through `send`; panics with the shrunk failing case.
fn run_hostile<F>(label: &str, cases: u32, send: F)
where
    F: Fn(
        &TestApp,
        Prepared,
    ) -> futures_util::future::BoxFuture<'_, Result<(Prepared, Option<Seen>), String>>,
{
    use proptest::test_runner::{Config, RngSeed, TestCaseError, TestRunner};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let app = rt.block_on(TestApp::sqlite_with(hostile_app_config()));
    let fixture = rt.block_on(async {
        seed_profiles(&app.store, "acme", "h", HOSTILE_PROFILES).await;
        seed_profiles(&app.store, "globex", "g", HOSTILE_PROFILES).await;
        Fixture::of(&app).await
    });
    let statuses = Mutex::new(std::collections::BTreeMap::<u16, u64>::new());
    let unsendable = AtomicU64::new(0);
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        rng_seed: RngSeed::Fixed(proptest_seed()),
        max_shrink_iters: 512,
        ..Config::default()
    });
    let started = Instant::now();
    let result = runner.run(&gen::hostile(), |case| {
        let prepared = prepare(&case, &fixture);
        let (prepared, seen) = rt
            .block_on(send(&app, prepared))
            .map_err(TestCaseError::fail)?;
        let Some(seen) = seen else {
            unsendable.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        };
        *statuses.lock().unwrap().entry(seen.status).or_default() += 1;
        check_answer(&prepared, &seen).map_err(TestCaseError::fail)
    });
    if let Err(failure) = result {
        panic!("{label}: {failure}");
    }
    let statuses = statuses.into_inner().unwrap();
    let sent: u64 = statuses.values().sum();
    eprintln!(
        "hostile input ({label}): {sent} generated requests in {:?} (seed {:#x}), statuses {statuses:?}; \
         {} not expressible as an http::Request; 0 5xx, every error in the contract's shape",
        started.elapsed(),
        proptest_seed(),
        unsendable.into_inner()
    );
    drop(app);
}

#[test]
fn in_process_hostile_requests_never_get_5xx_and_errors_keep_the_contract_shape() {
    run_hostile("in process", 4000, |app, prepared| {
        Box::pin(async move {
            let seen = send_in_process(app, &prepared).await;
            Ok((prepared, seen))
        })
    });
}

#[test]
fn socket_hostile_requests_never_get_5xx_and_errors_keep_the_contract_shape() {
    run_hostile("over the socket", 600, |app, prepared| {
        Box::pin(async move {
            // What an HTTP client could not express is left to the in-process test.
            if prepared.target.parse::<http::Uri>().is_err()
                || http::Method::from_bytes(prepared.method.as_bytes()).is_err()
            {
                return Ok((prepared, None));
            }
            let addr = app.base.trim_start_matches("http://").to_owned();
            let seen = send_raw(&addr, &prepared).await?;
            Ok((prepared, Some(seen)))
        })
    });
}

// The grammar of docs/API.md, written independently of the contract crate, as the oracle.
fn contract_id_ok(s: &str, first: fn(u8) -> bool, rest: fn(u8) -> bool, max: usize) -> bool {
    let b = s.as_bytes();
    !b.is_empty() && b.len() <= max && first(b[0]) && b[1..].iter().all(|c| rest(*c))
}
fn lower_digit(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}
fn lower_digit_dash(c: u8) -> bool {
    lower_digit(c) || c == b'-'
}
fn alnum(c: u8) -> bool {
    c.is_ascii_alphanumeric()
}
fn profile_rest(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-')
}
fn contract_key_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 4 + 12 + 1 + 32
        && s.starts_with("apz_")
        && b[16] == b'_'
        && b[4..16].iter().all(u8::is_ascii_alphanumeric)
        && b[17..].iter().all(u8::is_ascii_alphanumeric)
}

mod parser_gen {
    use proptest::prelude::*;

    /// Strings near the grammar: its alphabet plus troublemakers, around its length limits.
    pub fn near_id() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z0-9-]{0,70}",
            "[A-Za-z0-9._-]{0,135}",
            "[a-z0-9][a-z0-9-]{60,64}",
            "[A-Za-z0-9][A-Za-z0-9._-]{125,130}",
            "[a-zA-Z0-9._/%é\u{0}\u{202e} -]{0,20}",
            any::<String>(),
        ]
    }

    pub fn near_key() -> impl Strategy<Value = String> {
        prop_oneof![
            "apz_[A-Za-z0-9]{12}_[A-Za-z0-9]{32}",
            "apz_[A-Za-z0-9_]{11,13}_[A-Za-z0-9]{31,33}",
            "(apz|APZ|ap)_[A-Za-z0-9é_-]{40,50}",
            any::<String>(),
        ]
    }
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config {
        cases: 4000,
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    })]

    /// The cargo-fuzz equivalent that runs in CI: identifier and key parsers accept exactly
    /// the contract's grammar, never panic, and a parsed key never shows its secret.
    #[test]
    fn identifier_and_key_parsers_accept_exactly_the_contract_grammar(
        id in parser_gen::near_id(),
        key in parser_gen::near_key(),
    ) {
        use appzone_contract::{ApiKey, ProviderId, RegionId};
        proptest::prop_assert_eq!(
            id.parse::<ProviderId>().is_ok(),
            contract_id_ok(&id, lower_digit, lower_digit_dash, 63),
            "providerId {:?}", id
        );
        proptest::prop_assert_eq!(
            id.parse::<RegionId>().is_ok(),
            contract_id_ok(&id, lower_digit, lower_digit_dash, 63),
            "regionId {:?}", id
        );
        proptest::prop_assert_eq!(
            id.parse::<ProfileId>().is_ok(),
            contract_id_ok(&id, alnum, profile_rest, 128),
            "profileId {:?}", id
        );
        // Percent-decoding arbitrary input never panics; what decodes is judged like the rest.
        if let Some(decoded) = appzone_contract::paths::decode_segment(&id) {
            proptest::prop_assert_eq!(
                decoded.parse::<ProfileId>().is_ok(),
                contract_id_ok(&decoded, alnum, profile_rest, 128)
            );
        }
        let parsed = key.parse::<ApiKey>();
        proptest::prop_assert_eq!(parsed.is_ok(), contract_key_ok(&key), "key {:?}", key);
        if let Ok(parsed) = parsed {
            let secret = &key[17..];
            let shown = format!("{parsed:?} {parsed}");
            proptest::prop_assert!(!shown.contains(secret), "{}", shown);
            proptest::prop_assert_eq!(parsed.key_id().as_str(), &key[4..16]);
        }
    }
}

// ---- idle connections ---------------------------------------------------------------------

/// Reads until the server closes `stream` (EOF or reset); the time it took, or `None` past
/// `within`.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut sink = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut sink))
        .await
        .ok()
        .map(|_| started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_idle_connections_do_not_stop_the_server_serving() {
    const IDLE: usize = 200;
    let timeout = Duration::from_secs(1);
    let app = TestApp::sqlite_serving(ServeOptions {
        header_read_timeout: timeout,
        ..ServeOptions::default()
    })
    .await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut silent = Vec::new();
    let mut stalled = Vec::new();
    let opened = Instant::now();
    for i in 0..IDLE {
        let mut stream = TcpStream::connect(&addr).await.unwrap();
        // A quarter start a request head and stall; the rest send nothing at all.
        if i % 4 == 0 {
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Stall: ")
                .await
                .unwrap();
            stalled.push(stream);
        } else {
            silent.push(stream);
        }
    }
    let started = Instant::now();
    for _ in 0..20 {
        let resp = app
            .get(
                &TestApp::zones_path("aws", "us-east-1"),
                Some(&app.member_key),
            )
            .await;
        assert_eq!(resp.status, 200);
    }
    let path = TestApp::profile_path(app.profile.as_str());
    assert_eq!(app.delete(&path, Some(&app.admin_key)).await.status, 204);
    let serving = started.elapsed();
    assert!(
        serving < Duration::from_secs(10),
        "21 requests beside {IDLE} idle connections took {serving:?}"
    );
    // Stalled request heads are cut by the header timeout.
    let cut = futures_util::future::join_all(stalled.iter_mut().map(|s| async {
        closed_within(s, Duration::from_secs(15))
            .await
            .map(|_| opened.elapsed())
    }))
    .await;
    let open = cut.iter().filter(|c| c.is_none()).count();
    assert_eq!(open, 0, "{open} stalled heads still open after 15 s");
    let slowest = cut.iter().flatten().max().copied().unwrap_or_default();
    assert_eq!(app.get("/healthz", None).await.status, 200);
    // So are connections that never sent a byte.
    let closed = futures_util::future::join_all(silent.iter_mut().map(|s| async {
        closed_within(s, Duration::from_secs(15))
            .await
            .map(|_| opened.elapsed())
    }))
    .await;
    let open = closed.iter().filter(|c| c.is_none()).count();
    assert_eq!(open, 0, "{open} silent connections still open after 15 s");
    let slowest_silent = closed.iter().flatten().max().copied().unwrap_or_default();
    eprintln!(
        "idle connections: {IDLE} open ({} silent, {} with a stalled head); 21 requests served \
         in {serving:?}; all closed by the server: stalled heads within {slowest:?} of opening, \
         silent ones within {slowest_silent:?} (header timeout {timeout:?})",
        silent.len(),
        stalled.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_that_send_nothing_are_closed_by_the_server() {
    let timeout = Duration::from_secs(1);
    let app = TestApp::sqlite_serving(ServeOptions {
        header_read_timeout: timeout,
        ..ServeOptions::default()
    })
    .await;
    let addr = app.base.trim_start_matches("http://").to_owned();
    let mut silent = TcpStream::connect(&addr).await.unwrap();
    let mut kept_alive = TcpStream::connect(&addr).await.unwrap();
    kept_alive
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    kept_alive.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let within = Duration::from_secs(10);
    let (silent, kept_alive) = tokio::join!(
        closed_within(&mut silent, within),
        closed_within(&mut kept_alive, within)
    );
    assert!(
        silent.is_some() && kept_alive.is_some(),
        "still open {within:?} later (header timeout {timeout:?}): a connection that sent \
         nothing: {}, an idle keep-alive connection: {}",
        silent.is_none(),
        kept_alive.is_none()
    );
}

// ---- sustained load -----------------------------------------------------------------------

/// Soak length in seconds (`APPZONE_SOAK_SECS` to run longer by hand).
fn soak_secs() -> u64 {
    std::env::var("APPZONE_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30)
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
    let url = format!("sqlite://{}", dir.path().join("appzone.db").display());
    operator(&url, &["migrate"]);
    operator(&url, &["org", "create", "acme"]);
    let admin = operator(&url, &["key", "create", "--org", "acme", "--role", "admin"]);
    let member = operator(
        &url,
        &["key", "create", "--org", "acme", "--role", "member"],
    );
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
                // A profile whose delete was sent 100 deletes (about 7 s) ago, so its 204 is
                // long back, or one never created.
                let done = next_delete.load(Ordering::SeqCst) as usize;
                let id = if done > 100 {
                    deletable[done - 100].clone()
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

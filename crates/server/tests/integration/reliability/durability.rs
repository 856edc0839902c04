//! Nothing acknowledged is lost: the real binary is SIGKILLed at random moments while client
//! tasks delete profiles (and the operator restores them); after each restart every `204` is
//! still a delete with its audit record, every profile never acknowledged is intact, and a
//! SQLite file passes its integrity checks. On SQLite and on PostgreSQL.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use appzone_contract::ProfileId;
use appzone_server::model::OrgId;
use appzone_server::storage::{PoolSettings, Store};
use appzone_test_support::{both_backends, connect_admin, seed_profiles, Backend, TestApp};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::server_process::{operator, ServerProcess};

fn acme() -> OrgId {
    "acme".parse().unwrap()
}

fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

/// `DELETE` of profile `id` through the server at `base` with `key`: its status.
async fn delete_status(http: &reqwest::Client, base: &str, key: &str, id: &str) -> u16 {
    let url = format!("{base}{}", TestApp::profile_path(id));
    let sent = http.delete(url).header("x-api-key", key).send().await;
    sent.unwrap().status().as_u16()
}

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

/// What the workers of one round share: when to stop, and how many deletes were acknowledged
/// so far (the kill waits for the first, so a slow machine cannot make a round test nothing).
#[derive(Debug, Default)]
struct Round {
    stop: AtomicBool,
    acked: AtomicU64,
}

/// One client task: deletes its own live profiles through the server and restores its deleted
/// ones through the store, until the first transport error (the server died) or `stop`.
async fn crash_worker(
    base: String,
    key: String,
    store: Store,
    mut profiles: Vec<Tracked>,
    round: Arc<Round>,
    seed: u64,
) -> (Vec<Tracked>, WorkerLog) {
    let http = http_client();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut log = WorkerLog::default();
    while !round.stop.load(Ordering::SeqCst) {
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
                        round.acked.fetch_add(1, Ordering::SeqCst);
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
    let mut conn = connect_admin(&format!("sqlite://{}", path.display()))
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
    let ids = |deleted| async move {
        let profiles = store.list_profiles(&acme(), deleted).await.unwrap();
        profiles
            .into_iter()
            .map(|p| p.id)
            .collect::<HashSet<String>>()
    };
    let (live, deleted) = (ids(false).await, ids(true).await);
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
        let round_state = Arc::new(Round::default());
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
                    round_state.clone(),
                    seed * 1000 + u64::from(round) * 100 + w as u64,
                ))
            })
            .collect();
        // The random moment, counted from the first acknowledged delete (on a loaded machine
        // the first answer may take longer than the whole window): the workers keep deletes in
        // flight the whole time.
        let first_ack = Instant::now();
        while round_state.acked.load(Ordering::SeqCst) == 0 {
            assert!(
                first_ack.elapsed() < Duration::from_secs(60),
                "no delete was acknowledged within 60 s of round {round}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let kill_after = Duration::from_millis(rng.random_range(0..1200));
        tokio::time::sleep(kill_after).await;
        let status = server.kill9();
        round_state.stop.store(true, Ordering::SeqCst);
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
            let status = delete_status(&http, &server.base, &key, &t.id).await;
            assert_eq!(status, 404, "{} after restart", t.id);
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
        let status = delete_status(&http, &server.base, &key, &t.id).await;
        assert_eq!(status, 204, "{} is intact after the crashes", t.id);
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

both_backends! {
    /// Acknowledged deletes survive SIGKILLs of the server, over several seeds (fewer on
    /// PostgreSQL, whose runs are longer); a SQLite file stays intact too.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn acknowledged_deletes_survive_sigkill_of_the_server(backend: Backend) {
        let seeds: &[u64] = match backend {
            Backend::Sqlite => &[0xA1, 0xB2, 0xC3],
            Backend::Postgres => &[0xD4, 0xE5],
        };
        let mut figures = Vec::new();
        for &seed in seeds {
            let db = backend.fresh_database().await;
            figures.push(crash_seed(&db.url, db.sqlite_file().as_deref(), seed, 2).await);
        }
        report_crashes(backend.name(), &figures);
    }
}

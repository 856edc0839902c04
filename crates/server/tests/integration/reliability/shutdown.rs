//! Shutdown under load, with the real binary: SIGTERM takes the replica out of the load
//! balancer (`/readyz` 503) while it goes on serving for the shutdown delay, then drains, and
//! the drain deadline is kept even when a request is stuck past it.
//!
//! A request is made slow, deterministically, by holding the SQLite database's write lock from
//! this process (`BEGIN EXCLUSIVE`): a `DELETE` then waits on it (up to SQLite's 5 s busy
//! timeout) until the lock is released.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::sqlite::SqliteConnection;
use sqlx::Connection as _;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::server_process::{acme_database, acme_key, operator, sigterm, ServerProcess};

/// One answer read off a connection.
#[derive(Debug)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    /// `Connection: close`: the server closes the connection after this answer.
    close: bool,
}

pub(crate) type Conn = BufReader<TcpStream>;

pub(crate) async fn open(addr: &str) -> Result<Conn, String> {
    TcpStream::connect(addr)
        .await
        .map(BufReader::new)
        .map_err(|e| format!("connect: {e}"))
}

/// Writes `request` and reads one answer (head, then its `Content-Length` body).
pub(crate) async fn exchange(conn: &mut Conn, request: &str) -> Result<Answer, String> {
    conn.get_mut()
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        let read = conn
            .read_line(&mut line)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if read == 0 {
            return Err(format!("closed without an answer (head so far {head:?})"));
        }
        if line == "\r\n" {
            break;
        }
        head.push(line);
    }
    let status = head
        .first()
        .and_then(|line| line.split_whitespace().nth(1))
        .and_then(|status| status.parse().ok())
        .ok_or_else(|| format!("no status line: {head:?}"))?;
    let header = |name: &str| {
        head.iter().find_map(|line| {
            let (field, value) = line.split_once(':')?;
            field
                .eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    };
    let length: usize = header("content-length")
        .map_or(Ok(0), |v| v.parse())
        .map_err(|e| format!("content-length: {e}"))?;
    let mut body = vec![0; length];
    conn.read_exact(&mut body)
        .await
        .map_err(|e| format!("body: {e}"))?;
    Ok(Answer {
        status,
        close: header("connection").is_some_and(|v| v.eq_ignore_ascii_case("close")),
    })
}

pub(crate) fn get(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: appzone\r\n\r\n")
}

/// What one load client saw: for each request, when it started and how it went.
type Log = Vec<(Instant, Result<Answer, String>)>;

/// Requests `GET /healthz` back to back on one keep-alive connection until `stop`; returns what
/// it saw and the connection (reopened after a failure).
async fn keep_alive_client(addr: String, stop: Arc<AtomicBool>) -> (Log, Option<Conn>) {
    let mut log = Vec::new();
    let mut conn = open(&addr).await.ok();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let outcome = match conn.as_mut() {
            Some(conn) => exchange(conn, &get("/healthz")).await,
            None => Err("could not connect".to_owned()),
        };
        if outcome.as_ref().map_or(true, |answer| answer.close) {
            conn = open(&addr).await.ok();
        }
        log.push((started, outcome));
    }
    (log, conn)
}

/// Requests `GET /healthz` on a new connection each time until `stop`.
async fn new_connection_client(addr: String, stop: Arc<AtomicBool>) -> Log {
    let mut log = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let started = Instant::now();
        let outcome = match open(&addr).await {
            Ok(mut conn) => exchange(&mut conn, &get("/healthz")).await,
            Err(e) => Err(e),
        };
        log.push((started, outcome));
    }
    log
}

/// Takes SQLite's write lock on the database at `url` until the connection is dropped or
/// rolled back: `DELETE`s wait on it.
async fn lock_database(url: &str) -> SqliteConnection {
    let mut lock = SqliteConnection::connect(url).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut lock)
        .await
        .unwrap();
    lock
}

fn delete(id: &str, key: &str) -> String {
    format!("DELETE /api/v1/applications/profiles/{id} HTTP/1.1\r\nHost: appzone\r\nX-API-KEY: {key}\r\n\r\n")
}

/// The first `/readyz` status on a new connection, asked until it is 503 or `within` passed.
async fn readyz_until_503(addr: &str, within: Duration) -> (Option<u16>, Duration) {
    let started = Instant::now();
    let mut last = None;
    while started.elapsed() < within {
        if let Ok(mut conn) = open(addr).await {
            last = exchange(&mut conn, &get("/readyz"))
                .await
                .ok()
                .map(|a| a.status);
            if last == Some(503) {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    (last, started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_keeps_serving_through_the_shutdown_delay_then_drains() {
    const DELAY: Duration = Duration::from_secs(2);
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "admin");
    let profile = operator(
        &url,
        &["profile", "create", "--org", "acme", "--name", "checkout"],
    );
    let mut server = ServerProcess::start(
        &url,
        &["--shutdown-delay-secs", "2", "--drain-timeout-secs", "10"],
        "info",
    )
    .await;
    let addr = server.addr().to_owned();

    let stop = Arc::new(AtomicBool::new(false));
    let keep_alive: Vec<_> = (0..4)
        .map(|_| tokio::spawn(keep_alive_client(addr.clone(), Arc::clone(&stop))))
        .collect();
    let fresh = tokio::spawn(new_connection_client(addr.clone(), Arc::clone(&stop)));
    // A keep-alive connection that will have a request in flight when the delay ends.
    let mut slow = open(&addr).await.unwrap();
    assert_eq!(
        exchange(&mut slow, &get("/healthz")).await.unwrap().status,
        200
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut lock = lock_database(&url).await;

    let signalled = Instant::now();
    sigterm(server.pid());
    let (readyz, readyz_after) = readyz_until_503(&addr, Duration::from_millis(500)).await;
    // When the 503 came back: draining had begun by then (readyz_after counts from the first
    // poll, a little after the signal, so signalled + readyz_after could be before it).
    let draining_seen = Instant::now();
    assert_eq!(readyz, Some(503), "/readyz {readyz_after:?} after SIGTERM");

    // Halfway through the delay, a DELETE that waits on the lock past the delay's end.
    tokio::time::sleep((signalled + DELAY / 2).saturating_duration_since(Instant::now())).await;
    let deleting = {
        let request = delete(&profile, &key);
        tokio::spawn(async move {
            let answer = exchange(&mut slow, &request).await;
            (answer, slow)
        })
    };
    // The load runs until just before the delay ends.
    let load_until = signalled + DELAY - Duration::from_millis(150);
    tokio::time::sleep(load_until.saturating_duration_since(Instant::now())).await;
    stop.store(true, Ordering::Relaxed);
    let mut logs: Vec<(&str, Log)> = Vec::new();
    let mut idle = Vec::new();
    for client in keep_alive {
        let (log, conn) = client.await.unwrap();
        logs.push(("keep-alive", log));
        idle.extend(conn);
    }
    logs.push(("new connection", fresh.await.unwrap()));

    // Past the delay, the lock goes: the DELETE is answered, with `Connection: close`.
    tokio::time::sleep(
        (signalled + DELAY + Duration::from_millis(500)).saturating_duration_since(Instant::now()),
    )
    .await;
    sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();
    let (answer, mut slow) = deleting.await.unwrap();
    let answer = answer.expect("the DELETE in flight at the end of the delay is answered");
    assert_eq!(answer.status, 204);
    assert!(
        answer.close,
        "the answer after the delay tells the client to close"
    );
    assert!(
        slow.get_mut()
            .read(&mut [0u8; 1])
            .await
            .is_ok_and(|n| n == 0),
        "the server closes the connection after that answer"
    );

    // Every request of the load was answered 200, before and during the delay: no refused
    // connection, no reset. A kept-alive connection is kept before SIGTERM, and each answer
    // once draining was seen tells its client to close it (the client reconnects: behind a
    // load balancer, to another replica).
    // Far longer than a loopback request takes, even on a loaded machine.
    const IN_FLIGHT_AT_SIGNAL: Duration = Duration::from_millis(250);
    let mut during_delay = (0, 0);
    for (kind, log) in &logs {
        for (started, outcome) in log {
            let expected_close = if *kind != "keep-alive" {
                None
            } else if *started + IN_FLIGHT_AT_SIGNAL < signalled {
                // Answered before SIGTERM; one started just before it may be answered after,
                // while draining, and then rightly says close.
                Some(false)
            } else if *started > draining_seen {
                Some(true)
            } else {
                None
            };
            match outcome {
                Ok(answer)
                    if answer.status == 200
                        && expected_close.is_none_or(|close| close == answer.close) => {}
                outcome => panic!(
                    "{kind} request {:?} after SIGTERM: {outcome:?}",
                    started.checked_duration_since(signalled)
                ),
            }
            if *started > signalled {
                if *kind == "keep-alive" {
                    during_delay.0 += 1;
                } else {
                    during_delay.1 += 1;
                }
            }
        }
    }
    assert!(
        during_delay.0 > 0 && during_delay.1 > 0,
        "requests during the delay: {during_delay:?}"
    );
    // The keep-alive connections left idle are closed once the delay is over.
    for mut conn in idle {
        let closed = tokio::time::timeout(Duration::from_secs(2), conn.read(&mut [0u8; 1])).await;
        assert!(
            matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
            "an idle keep-alive connection is closed after the delay: {closed:?}"
        );
    }
    let (status, exited) = server
        .exit_within(Duration::from_secs(5))
        .await
        .expect("the server exits once drained");
    assert!(status.success(), "{status:?}");
    eprintln!(
        "shutdown delay {DELAY:?}: /readyz 503 {readyz_after:?} after SIGTERM; during the delay \
         {} keep-alive and {} new-connection requests, all answered 200; exit {:?} after \
         SIGTERM",
        during_delay.0,
        during_delay.1,
        exited.into_std() - signalled
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_drain_deadline_is_kept_even_when_a_request_is_stuck_past_it() {
    const DEADLINE: Duration = Duration::from_secs(1);
    /// Exiting takes closing the connections and the database: a few milliseconds, and more
    /// on a loaded two-core machine.
    const MARGIN: Duration = Duration::from_millis(400);
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "admin");
    let profile = operator(
        &url,
        &["profile", "create", "--org", "acme", "--name", "checkout"],
    );
    let mut server = ServerProcess::start(&url, &["--drain-timeout-secs", "1"], "info").await;
    let addr = server.addr().to_owned();
    let mut lock = lock_database(&url).await;
    let mut stuck = open(&addr).await.unwrap();
    // With an Idempotency-Key, so that its retry can learn what happened.
    let request =
        delete(&profile, &key).replace("\r\n\r\n", "\r\nIdempotency-Key: drain-1\r\n\r\n");
    let retry = request.clone();
    let deleting = tokio::spawn(async move { exchange(&mut stuck, &request).await });
    // Long enough for the DELETE to reach the database and wait on the lock (5 s at most).
    tokio::time::sleep(Duration::from_millis(500)).await;

    let signalled = Instant::now();
    sigterm(server.pid());
    let exit = server.exit_within(Duration::from_secs(10)).await;
    let took = Instant::now() - signalled;
    sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();
    let (status, exited) = exit.expect("the server exits within 10 s of SIGTERM");
    let took = (exited.into_std() - signalled).min(took);
    eprintln!("drain deadline {DEADLINE:?}: exited {took:?} after SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(
        took >= DEADLINE && took <= DEADLINE + MARGIN,
        "exited {took:?} after SIGTERM, drain deadline {DEADLINE:?}"
    );
    let answer = deleting.await.unwrap();
    assert!(answer.is_err(), "the stuck request was dropped: {answer:?}");
    // Dropped unanswered, its transaction rolled back: the profile is live, and the client's
    // retry with the same key, on the next server, does the delete (not a replay).
    let live = operator(&url, &["profile", "list", "--org", "acme"]);
    assert!(
        live.contains(&profile),
        "the unanswered delete changed the data: {live}"
    );
    let next = ServerProcess::start(&url, &[], "info").await;
    let mut conn = open(next.addr()).await.unwrap();
    let answer = exchange(&mut conn, &retry).await.unwrap();
    assert_eq!(answer.status, 204, "the retry after the restart");
    let live = operator(&url, &["profile", "list", "--org", "acme"]);
    assert!(!live.contains(&profile), "{live}");
}

/// `GET path` on an HTTP/2 connection: the answer's status.
async fn h2_get(
    client: &h2::client::SendRequest<axum::body::Bytes>,
    path: &str,
) -> Result<u16, String> {
    let mut client = client
        .clone()
        .ready()
        .await
        .map_err(|e| format!("ready: {e}"))?;
    let request = http::Request::get(format!("http://appzone{path}"))
        .body(())
        .map_err(|e| e.to_string())?;
    let (response, _) = client
        .send_request(request, true)
        .map_err(|e| format!("send: {e}"))?;
    let response = response.await.map_err(|e| format!("answer: {e}"))?;
    Ok(response.status().as_u16())
}

/// Issue 44, point 2: during the shutdown delay a kept-alive client is told to go elsewhere by
/// the answer it gets (HTTP/1 `Connection: close`, HTTP/2 GOAWAY), while the listener still
/// accepts: it reconnects, to another replica behind a load balancer, before this one stops
/// listening, instead of failing on a connection closed under it after the delay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_during_the_shutdown_delay_move_kept_alive_clients_with_close_and_goaway() {
    const DELAY: Duration = Duration::from_secs(3);
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let mut server = ServerProcess::start(
        &url,
        &["--shutdown-delay-secs", "3", "--drain-timeout-secs", "5"],
        "info",
    )
    .await;
    let addr = server.addr().to_owned();

    let mut kept = open(&addr).await.unwrap();
    let before = exchange(&mut kept, &get("/healthz")).await.unwrap();
    assert!(
        before.status == 200 && !before.close,
        "before SIGTERM: {before:?}"
    );
    let tcp = TcpStream::connect(&addr).await.unwrap();
    let (h2, connection) = h2::client::handshake(tcp).await.unwrap();
    let h2_ended = tokio::spawn(async move {
        let outcome = connection.await;
        (Instant::now(), outcome.map_err(|e| e.to_string()))
    });
    assert_eq!(
        h2_get(&h2, "/healthz").await,
        Ok(200),
        "HTTP/2 before SIGTERM"
    );

    let signalled = Instant::now();
    sigterm(server.pid());
    let (readyz, readyz_after) = readyz_until_503(&addr, Duration::from_millis(500)).await;
    assert_eq!(readyz, Some(503), "/readyz {readyz_after:?} after SIGTERM");

    // HTTP/1: the answer is the same 200, with `Connection: close`, and the server closes the
    // connection after it, well before the delay ends.
    let during = exchange(&mut kept, &get("/healthz")).await.unwrap();
    assert_eq!(during.status, 200);
    assert!(
        during.close,
        "an answer during the shutdown delay on a kept-alive HTTP/1 connection: {during:?}"
    );
    let closed = tokio::time::timeout(Duration::from_secs(1), kept.read(&mut [0u8; 1])).await;
    assert!(
        matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
        "the server closes the connection after that answer: {closed:?}"
    );
    // A new connection during the delay is still served.
    let mut fresh = open(&addr).await.unwrap();
    assert_eq!(
        exchange(&mut fresh, &get("/healthz")).await.unwrap().status,
        200
    );

    // HTTP/2: the answer goes out, then GOAWAY ends the connection before the delay does.
    assert_eq!(
        h2_get(&h2, "/healthz").await,
        Ok(200),
        "HTTP/2 during the delay"
    );
    let (ended, outcome) = tokio::time::timeout(DELAY + Duration::from_secs(2), h2_ended)
        .await
        .expect("the HTTP/2 connection ends")
        .unwrap();
    let ended_after = ended - signalled;
    assert!(
        ended_after < DELAY - Duration::from_millis(500),
        "the HTTP/2 connection ended {ended_after:?} after SIGTERM ({outcome:?}), the delay is \
         {DELAY:?}"
    );
    assert!(
        h2_get(&h2, "/healthz").await.is_err(),
        "no new stream after GOAWAY"
    );
    let (status, _) = server
        .exit_within(Duration::from_secs(10))
        .await
        .expect("the server exits once drained");
    assert!(status.success(), "{status:?}");
    eprintln!(
        "shutdown delay {DELAY:?}: HTTP/1 answer with Connection: close, HTTP/2 connection \
         ended by GOAWAY {ended_after:?} after SIGTERM"
    );
}

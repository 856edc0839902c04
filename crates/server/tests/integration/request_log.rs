//! The request log with the real binary (issue 44, points 3 and 4): one line per request, even
//! when its client leaves before the answer (status 499, with how long it ran and, for a
//! delete, whether the delete committed), and levels that separate expected degradation
//! (`WARN`: 503 of shed load) from bugs (`ERROR`: 500).

use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use sqlx::sqlite::SqliteConnection;
use sqlx::Connection as _;
use tokio::io::AsyncWriteExt;

use crate::reliability::shutdown::{exchange, open};
use crate::server_process::{acme_database, acme_key, operator, ServerProcess};

fn signal(pid: u32, name: &str) {
    assert!(Command::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap()
        .success());
}

/// The request lines (target `appzone::request`) logged so far with request id `id`.
fn lines_of(server: &ServerProcess, id: &str) -> Vec<Value> {
    String::from_utf8_lossy(&server.logs())
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["target"] == "appzone::request" && line["fields"]["request_id"] == id)
        .collect()
}

/// The first request line with request id `id`, waited for up to `within`.
async fn line_of(server: &ServerProcess, id: &str, within: Duration) -> Value {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(line) = lines_of(server, id).into_iter().next() {
            return line;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no request line with request id {id} within {within:?}:\n{}",
            String::from_utf8_lossy(&server.logs())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn delete(id: &str, key: &str, request_id: &str) -> String {
    format!(
        "DELETE /api/v1/applications/profiles/{id} HTTP/1.1\r\nHost: appzone\r\nX-API-KEY: {key}\r\n\
         X-Request-Id: {request_id}\r\n\r\n"
    )
}

/// Takes SQLite's write lock on the database at `url` until rolled back: `DELETE`s wait on it.
async fn lock_database(url: &str) -> SqliteConnection {
    let mut lock = SqliteConnection::connect(url).await.unwrap();
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut lock)
        .await
        .unwrap();
    lock
}

/// Sends `request` on a new connection and closes it without reading anything.
async fn send_and_abandon(addr: &str, request: &str) {
    let mut conn = open(addr).await.unwrap();
    conn.get_mut().write_all(request.as_bytes()).await.unwrap();
    conn.get_mut().flush().await.unwrap();
    drop(conn);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_abandoned_by_their_clients_are_logged_with_499_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "admin");
    let profile = operator(
        &url,
        &["profile", "create", "--org", "acme", "--name", "checkout"],
    );
    let server = ServerProcess::start(&url, &[], "info").await;
    let addr = server.addr().to_owned();

    // With the server stopped, each request reaches its socket and its client leaves before
    // any answer: the server finds the request and the closed connection together.
    signal(server.pid(), "STOP");
    let listing = format!(
        "GET /api/v1/providers HTTP/1.1\r\nHost: appzone\r\nX-API-KEY: {key}\r\n\
         X-Request-Id: abandoned-listing\r\n\r\n"
    );
    send_and_abandon(&addr, &listing).await;
    send_and_abandon(&addr, &delete(&profile, &key, "abandoned-delete")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    signal(server.pid(), "CONT");

    let listing = line_of(&server, "abandoned-listing", Duration::from_secs(5)).await;
    assert_eq!(listing["fields"]["status"], 499, "{listing}");
    assert_eq!(listing["fields"]["route"], "/api/v1/providers", "{listing}");
    assert_eq!(listing["fields"]["method"], "GET", "{listing}");
    assert!(listing["fields"]["latency_us"].is_u64(), "{listing}");
    assert_eq!(listing["level"], "INFO", "{listing}");

    let deleted = line_of(&server, "abandoned-delete", Duration::from_secs(5)).await;
    assert_eq!(deleted["fields"]["status"], 499, "{deleted}");
    assert_eq!(
        deleted["fields"]["route"], "/api/v1/applications/profiles/{profileId}",
        "{deleted}"
    );
    assert!(deleted["fields"]["latency_us"].is_u64(), "{deleted}");
    let committed = deleted["fields"]["committed"]
        .as_bool()
        .unwrap_or_else(|| panic!("a delete's 499 line says whether it committed: {deleted}"));
    let live = operator(&url, &["profile", "list", "--org", "acme"]);
    assert_eq!(
        !committed,
        live.contains(&profile),
        "committed={committed}, profiles: {live}"
    );

    // Counted like any answer, under status 499.
    let body = reqwest::get(format!("{}/metrics", server.base))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        body.lines().any(|l| l
            == r#"appzone_http_requests_total{method="GET",route="/api/v1/providers",status="499"} 1"#),
        "no 499 in:\n{body}"
    );
    for id in ["abandoned-listing", "abandoned-delete"] {
        assert_eq!(lines_of(&server, id).len(), 1, "one line for {id}");
    }
    eprintln!("abandoned listing: {listing}\nabandoned delete: {deleted}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_delete_already_in_storages_hands_is_logged_once_its_write_commits() {
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "admin");
    let profile = operator(
        &url,
        &["profile", "create", "--org", "acme", "--name", "checkout"],
    );
    let server = ServerProcess::start(&url, &[], "info").await;
    let addr = server.addr().to_owned();
    let mut lock = lock_database(&url).await;
    let mut conn = open(&addr).await.unwrap();
    conn.get_mut()
        .write_all(delete(&profile, &key, "abandoned-writing").as_bytes())
        .await
        .unwrap();
    // Long enough for the delete to reach the writer and wait on the lock.
    tokio::time::sleep(Duration::from_millis(500)).await;
    drop(conn);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        lines_of(&server, "abandoned-writing").is_empty(),
        "the line waits for the write's outcome"
    );
    sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();

    let line = line_of(&server, "abandoned-writing", Duration::from_secs(5)).await;
    assert_eq!(line["fields"]["status"], 499, "{line}");
    assert_eq!(line["fields"]["committed"], true, "{line}");
    let latency = line["fields"]["latency_us"].as_u64().unwrap_or_default();
    // How long it ran until its client left (0.5 s), not until the write's outcome (1 s).
    assert!(
        (400_000..1_000_000).contains(&latency),
        "it ran until the client left: {line}"
    );
    let live = operator(&url, &["profile", "list", "--org", "acme"]);
    assert!(!live.contains(&profile), "the delete committed: {live}");
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(lines_of(&server, "abandoned-writing").len(), 1);
    eprintln!("abandoned delete in the writer's hands: {line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shed_load_is_logged_at_warn_and_a_bug_at_error() {
    let dir = tempfile::tempdir().unwrap();
    let url = acme_database(dir.path());
    let key = acme_key(&url, "admin");
    let profile = operator(
        &url,
        &["profile", "create", "--org", "acme", "--name", "checkout"],
    );
    let server = ServerProcess::start(&url, &["--max-in-flight", "1"], "info").await;
    let addr = server.addr().to_owned();

    // 503: a delete waiting on the lock holds the one in-flight slot; the next request is shed.
    let mut lock = lock_database(&url).await;
    let mut slow = open(&addr).await.unwrap();
    let request = delete(&profile, &key, "holds-the-slot");
    let holding = tokio::spawn(async move { exchange(&mut slow, &request).await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut conn = open(&addr).await.unwrap();
    let shed = exchange(
        &mut conn,
        "GET /healthz HTTP/1.1\r\nHost: appzone\r\nX-Request-Id: shed\r\n\r\n",
    )
    .await
    .unwrap();
    assert_eq!(shed.status, 503);
    sqlx::query("ROLLBACK").execute(&mut lock).await.unwrap();
    assert_eq!(holding.await.unwrap().unwrap().status, 204);

    // 500: a table the delete writes is gone, a bug of the deployment or the program.
    let mut db = SqliteConnection::connect(&url).await.unwrap();
    sqlx::query("DROP TABLE profile_audit")
        .execute(&mut db)
        .await
        .unwrap();
    let other = operator(
        &url,
        &["profile", "create", "--org", "acme", "--name", "billing"],
    );
    let broken = exchange(&mut conn, &delete(&other, &key, "broken")).await;
    assert_eq!(broken.unwrap().status, 500);

    let shed = line_of(&server, "shed", Duration::from_secs(5)).await;
    assert_eq!(shed["fields"]["status"], 503, "{shed}");
    assert_eq!(shed["level"], "WARN", "a 503 of shed load: {shed}");
    let broken = line_of(&server, "broken", Duration::from_secs(5)).await;
    assert_eq!(broken["fields"]["status"], 500, "{broken}");
    assert_eq!(broken["level"], "ERROR", "a 500: {broken}");
}

//! Faults production brings, and what each answer then says about the data: a full disk, a
//! write lock held past the request timeout, the database going away. Each test reads the
//! profiles' (or zone mappings') real state afterwards, on a connection of its own (committed
//! data only), and holds it against the answers: a `204` whose profile is live, or an error
//! whose profile is gone, is the failure, but for the one case the document names (a
//! PostgreSQL commit whose reply is lost). A retry with the same `Idempotency-Key` then learns
//! the outcome.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use appzone_server::http::HttpConfig;
use appzone_server::ServiceConfig;
use appzone_test_support::{
    both_backends, eventually, fast_config, postgres_only, Backend, Resp, TestApp,
};
use sqlx::{AnyConnection, Connection, Row};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

mod locks;
mod outages;

/// Deletes `id` as the fixture's admin with `key` as its `Idempotency-Key`.
async fn delete_with_key(app: &TestApp, id: &str, key: &str) -> Resp {
    app.send(
        reqwest::Method::DELETE,
        &TestApp::profile_path(id),
        Some(&app.admin_key),
        &[("idempotency-key", key)],
    )
    .await
}

/// Whether `id` is live, read on a new connection to `url`: only committed data.
async fn live_on_fresh_connection(url: &str, id: &str) -> bool {
    let mut conn = AnyConnection::connect(url).await.unwrap();
    let row = sqlx::query("SELECT deleted_at IS NULL AS live FROM profiles WHERE id = $1")
        .bind(id)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let live: bool = row.try_get::<bool, _>("live").unwrap_or_else(|_| {
        // SQLite answers the comparison as an integer.
        row.try_get::<i64, _>("live").unwrap() == 1
    });
    let _ = conn.close().await;
    live
}

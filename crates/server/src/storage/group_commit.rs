//! Group commit of profile deletes on SQLite.
//!
//! SQLite has one writer at a time. Letting every request open its own write transaction makes
//! them queue on the database lock, where SQLite's busy handler sleeps in growing steps, and pays
//! one WAL sync per delete. Instead, deletes are handed to one writer task, which takes every
//! delete waiting at that moment, applies them in one transaction (each with its own conditional
//! `UPDATE`, audit record and kept idempotency outcome, so exactly-once still holds), commits
//! once, and only then answers each caller. A `204` therefore still means "committed with
//! `synchronous=FULL`"; only the sync is shared.
//!
//! Every caller hears its batch's real outcome. If anything of a batch fails (a full disk, a
//! lock held past the batch's deadline, an I/O error), the transaction is rolled back, every
//! delete of the batch gets the error and none is acknowledged. The writer then closes its
//! connection rather than reuse one whose transaction state is unknown (a failed `COMMIT` can
//! leave SQLite's transaction and sqlx's bookkeeping of it apart, after which a later batch's
//! "commit" only released a savepoint of a transaction that never committed), and opens a new
//! one for the next batch: it recovers by itself as soon as the cause is gone.
//!
//! The writer has its own connection, outside the pool: it takes SQLite's write lock with
//! `BEGIN IMMEDIATE`, waiting at most until the earliest deadline of the batch (its busy
//! timeout follows the batch's deadline, in tenths of a second), so a lock held too long ends
//! the batch, rolled back, before the callers' request timeout. A delete whose deadline passed
//! while it queued is not started.

use std::sync::Arc;
use std::time::{Duration, Instant};

use sqlx::{AnyConnection, Connection as _, Executor};
use tokio::sync::{mpsc, oneshot};

use super::delete_one::{apply_in_transaction, DeleteAnswer, DeleteRequest};
use super::errors::ResultExt;
use super::sqlite_pragmas::{SQLITE_PRAGMAS, SQLITE_PRAGMAS_BUSY_MS};
use super::StoreError;

/// Most deletes applied in one transaction.
const MAX_BATCH: usize = 256;

/// One delete waiting for the writer: the request, moved here, and where its answer goes.
#[derive(Debug)]
pub(super) struct PendingDelete {
    request: DeleteRequest,
    reply: oneshot::Sender<Result<DeleteAnswer, StoreError>>,
}

/// Starts the writer task on its own connection to `url`; it ends when every sender is
/// dropped.
pub(super) fn start(url: String) -> mpsc::Sender<PendingDelete> {
    let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
    tokio::spawn(writer(url, rx));
    tx
}

/// Hands a delete to the writer and waits for its batch's outcome.
pub(super) async fn submit(
    writer: &mpsc::Sender<PendingDelete>,
    request: DeleteRequest,
) -> Result<DeleteAnswer, StoreError> {
    let (reply, answer) = oneshot::channel();
    let pending = PendingDelete { request, reply };
    writer
        .send(pending)
        .await
        .map_err(|_| StoreError::WriterGone)?;
    answer.await.map_err(|_| StoreError::WriterGone)?
}

async fn writer(url: String, mut rx: mpsc::Receiver<PendingDelete>) {
    let mut connection: Option<Connection> = None;
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let now = Instant::now();
        // Callers that gave up (client gone) need no work; those past their deadline are not
        // started, and hear so.
        batch.retain(|pending| !pending.reply.is_closed());
        let late: Vec<PendingDelete> = batch
            .extract_if(.., |pending| pending.request.deadline <= now)
            .collect();
        for pending in late {
            let _ = pending.reply.send(Err(StoreError::DeadlinePassed));
        }
        let Some(earliest) = batch.iter().map(|pending| pending.request.deadline).min() else {
            continue;
        };
        let mut conn = match connection.take() {
            Some(conn) => conn,
            None => match Connection::open(&url).await {
                Ok(conn) => conn,
                Err(err) => {
                    answer_all(&mut batch, err);
                    continue;
                }
            },
        };
        match conn
            .apply(&batch, earliest.saturating_duration_since(now))
            .await
        {
            Ok(answers) => {
                connection = Some(conn);
                for (pending, answer) in batch.drain(..).zip(answers) {
                    let _ = pending.reply.send(Ok(answer));
                }
            }
            Err(err) => {
                tracing::warn!(
                    error = %err,
                    deletes = batch.len(),
                    "group commit failed and was rolled back; its deletes were answered with \
                     the error and the writer reconnects"
                );
                // Closing a connection rolls back whatever is still open on it.
                let _ = conn.conn.close().await;
                answer_all(&mut batch, err);
            }
        }
    }
}

fn answer_all(batch: &mut Vec<PendingDelete>, err: StoreError) {
    let err = Arc::new(err);
    for pending in batch.drain(..) {
        let _ = pending.reply.send(Err(StoreError::Batch(Arc::clone(&err))));
    }
}

/// The writer's connection and the busy timeout last set on it.
struct Connection {
    conn: AnyConnection,
    busy_ms: u128,
}

impl Connection {
    async fn open(url: &str) -> Result<Self, StoreError> {
        let mut conn = AnyConnection::connect(url).await.classify()?;
        conn.execute(SQLITE_PRAGMAS).await.classify()?;
        Ok(Self {
            conn,
            busy_ms: SQLITE_PRAGMAS_BUSY_MS,
        })
    }

    /// Applies the batch in one transaction, waiting at most `wait` for SQLite's write lock.
    async fn apply(
        &mut self,
        batch: &[PendingDelete],
        wait: Duration,
    ) -> Result<Vec<DeleteAnswer>, StoreError> {
        // Rounded down to a tenth of a second, so that under steady load the value, and with it
        // the extra statement, rarely changes; never longer than the batch's earliest deadline.
        let busy_ms = (wait.as_millis() / 100 * 100).clamp(1, 60_000);
        if busy_ms != self.busy_ms {
            // A PRAGMA takes no bound parameter; the text holds one integer computed here.
            self.conn
                .execute(sqlx::AssertSqlSafe(format!(
                    "PRAGMA busy_timeout = {busy_ms}"
                )))
                .await
                .classify()?;
            self.busy_ms = busy_ms;
        }
        // sqlx's own transaction commands (run on its SQLite worker, no statement round trip);
        // after a failure the connection is closed, so its bookkeeping cannot outlive one.
        let mut tx = self.conn.begin_with("BEGIN IMMEDIATE").await.classify()?;
        let mut answers = Vec::with_capacity(batch.len());
        for pending in batch {
            answers.push(apply_in_transaction(&mut tx, &pending.request).await?);
        }
        tx.commit().await.classify()?;
        Ok(answers)
    }
}

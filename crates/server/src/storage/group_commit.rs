//! Group commit of profile deletes on SQLite.
//!
//! SQLite has one writer at a time. Letting every request open its own write transaction makes
//! them queue on the database lock, where SQLite's busy handler sleeps in growing steps, and pays
//! one WAL sync per delete. Instead, deletes are handed to one writer task, which takes every
//! delete waiting at that moment, applies them in one transaction (each with its own conditional
//! `UPDATE` and audit record, so exactly-once still holds), commits once, and only then answers
//! each caller. A `204` therefore still means "committed with `synchronous=FULL`"; only the sync
//! is shared. If the commit fails, every delete of the batch fails and none is acknowledged.

use std::sync::Arc;

use sqlx::AnyPool;
use tokio::sync::{mpsc, oneshot};

use super::errors::ResultExt;
use super::{apply_delete, DeleteOutcome, StoreError};

/// Most deletes applied in one transaction.
const MAX_BATCH: usize = 256;

/// One delete waiting for the writer.
#[derive(Debug)]
pub(super) struct PendingDelete {
    pub id: String,
    pub org: String,
    pub key_id: String,
    pub request_id: String,
    pub reply: oneshot::Sender<Result<DeleteOutcome, StoreError>>,
}

/// Starts the writer task; it ends when every sender is dropped.
pub(super) fn start(pool: AnyPool) -> mpsc::Sender<PendingDelete> {
    let (tx, rx) = mpsc::channel(4 * MAX_BATCH);
    tokio::spawn(writer(pool, rx));
    tx
}

async fn writer(pool: AnyPool, mut rx: mpsc::Receiver<PendingDelete>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut batch, MAX_BATCH).await > 0 {
        // Callers that gave up (client gone, timeout) need no work.
        batch.retain(|pending| !pending.reply.is_closed());
        if batch.is_empty() {
            continue;
        }
        match apply_batch(&pool, &batch).await {
            Ok(outcomes) => {
                for (pending, outcome) in batch.drain(..).zip(outcomes) {
                    let _ = pending.reply.send(Ok(outcome));
                }
            }
            Err(err) => {
                let err = Arc::new(err);
                for pending in batch.drain(..) {
                    let _ = pending.reply.send(Err(StoreError::Batch(err.clone())));
                }
            }
        }
    }
}

async fn apply_batch(
    pool: &AnyPool,
    batch: &[PendingDelete],
) -> Result<Vec<DeleteOutcome>, StoreError> {
    let mut tx = pool.begin().await.classify()?;
    let mut outcomes = Vec::with_capacity(batch.len());
    for pending in batch {
        outcomes.push(
            apply_delete(
                &mut tx,
                &pending.id,
                &pending.org,
                &pending.key_id,
                &pending.request_id,
            )
            .await?,
        );
    }
    tx.commit().await.classify()?;
    Ok(outcomes)
}

//! The change log: what other server processes must drop or reload from memory (a key created
//! or revoked, the catalog replaced), written in the transaction that makes the change.
//!
//! Every process reads the rows after the last one it applied ([`Store::changes_since`]), on
//! a short interval; on PostgreSQL, `pg_notify` in the same transaction wakes every listening
//! process at commit ([`ChangeListener`]), so a change is seen in milliseconds and the
//! interval only bounds a lost notice. The log is the truth either way: a listener that was
//! disconnected reads what it missed from it.

use std::time::Duration;

use sqlx::postgres::PgListener;
use sqlx::Row;

use super::errors::ResultExt;
use super::{Backend, Store, StoreError};
use crate::model::now_ms;

/// The PostgreSQL channel the notices go to.
pub const CHANNEL: &str = "appzone_changes";

/// A change that other processes must apply to what they hold in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The key with this id was created or revoked: drop what is cached about it.
    Key(String),
    /// The catalog was replaced: reload it.
    Catalog,
    /// The zone mapping `org/id` was stored, replaced or deleted: drop what is cached of it.
    ZoneMapping(String),
}

impl Change {
    fn kind_and_subject(&self) -> (&'static str, &str) {
        match self {
            Change::Key(key_id) => ("key", key_id),
            Change::Catalog => ("catalog", ""),
            Change::ZoneMapping(subject) => ("zone_mapping", subject),
        }
    }

    fn parse(kind: &str, subject: String) -> Option<Self> {
        match kind {
            "key" => Some(Change::Key(subject)),
            "catalog" => Some(Change::Catalog),
            "zone_mapping" => Some(Change::ZoneMapping(subject)),
            // Written by a newer version: nothing this one caches.
            _ => None,
        }
    }
}

/// Records `change` in the transaction `tx`, and on PostgreSQL sends the notice that wakes the
/// other processes when it commits.
pub(super) async fn record(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    backend: Backend,
    change: &Change,
) -> Result<(), StoreError> {
    let (kind, subject) = change.kind_and_subject();
    sqlx::query("INSERT INTO change_log (kind, subject, at) VALUES ($1, $2, $3)")
        .bind(kind)
        .bind(subject)
        .bind(now_ms())
        .execute(&mut **tx)
        .await
        .classify()?;
    if backend == Backend::Postgres {
        // Delivered at commit, to every session listening on the channel; dropped on rollback.
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(kind)
            .execute(&mut **tx)
            .await
            .classify()?;
    }
    Ok(())
}

impl Store {
    /// The sequence number of the last change recorded (0 when none is).
    pub async fn last_change(&self) -> Result<i64, StoreError> {
        let rows = sqlx::query("SELECT COALESCE(MAX(seq), 0) AS seq FROM change_log")
            .fetch_all(&self.pool)
            .await
            .classify()?;
        rows.first()
            .map_or(Ok(0), |row| row.try_get::<i64, _>("seq").classify())
    }

    /// The changes recorded after `seq`, oldest first, at most `limit` of them, with their
    /// sequence numbers.
    pub async fn changes_since(
        &self,
        seq: i64,
        limit: i64,
    ) -> Result<Vec<(i64, Option<Change>)>, StoreError> {
        let rows = sqlx::query(
            "SELECT seq, kind, subject FROM change_log WHERE seq > $1 ORDER BY seq LIMIT $2",
        )
        .bind(seq)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .classify()?;
        rows.iter()
            .map(|row| {
                let seq: i64 = row.try_get("seq").classify()?;
                let kind: String = row.try_get("kind").classify()?;
                let subject: String = row.try_get("subject").classify()?;
                Ok((seq, Change::parse(&kind, subject)))
            })
            .collect()
    }

    /// Deletes the changes recorded before `cutoff_ms`; returns how many. The newest row is
    /// kept whatever its age, so that sequence numbers never start again from 1 (SQLite's
    /// AUTOINCREMENT and PostgreSQL's sequence would not anyway; this keeps it obvious).
    pub async fn purge_changes(&self, cutoff_ms: i64) -> Result<u64, StoreError> {
        let purged = sqlx::query(
            "DELETE FROM change_log WHERE at < $1 \
             AND seq < (SELECT MAX(seq) FROM change_log)",
        )
        .bind(cutoff_ms)
        .execute(&self.pool)
        .await
        .classify()?;
        Ok(purged.rows_affected())
    }

    /// A listener for the change notices, on a connection of its own; `None` for SQLite, which
    /// has no notices (one server process serves it, and operator commands are read from the
    /// log on the interval).
    pub fn change_listener(&self) -> Option<ChangeListener> {
        (self.backend == Backend::Postgres).then(|| ChangeListener {
            url: self.pool.connect_options().database_url.to_string(),
            listener: None,
        })
    }
}

/// What woke a [`ChangeListener`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A notice: a change was committed.
    Notice,
    /// The listening connection was (re)made or lost: notices may have been missed.
    Reconnected,
}

/// PostgreSQL's `LISTEN` on [`CHANNEL`], on a connection of its own that it makes again when
/// lost.
#[derive(Debug)]
pub struct ChangeListener {
    url: String,
    listener: Option<PgListener>,
}

impl ChangeListener {
    /// Waits for a notice. Connects (again) first when needed; a failure to connect is
    /// retried after `retry`, and returns [`Wake::Reconnected`] once it succeeds, as does a
    /// connection lost while waiting (the caller reads the log for what it missed).
    pub async fn wait(&mut self, retry: Duration) -> Wake {
        loop {
            let Some(listener) = self.listener.as_mut() else {
                match self.connect().await {
                    Ok(listener) => {
                        self.listener = Some(listener);
                        return Wake::Reconnected;
                    }
                    Err(err) => {
                        tracing::debug!(error = %err, "change listener cannot connect; retrying");
                        tokio::time::sleep(retry).await;
                        continue;
                    }
                }
            };
            match listener.try_recv().await {
                Ok(Some(_)) => return Wake::Notice,
                // The connection was lost; notices sent meanwhile are gone.
                Ok(None) | Err(_) => {
                    tracing::warn!("change listener lost its connection; reconnecting");
                    self.listener = None;
                }
            }
        }
    }

    async fn connect(&self) -> Result<PgListener, sqlx::Error> {
        let mut listener = PgListener::connect(&self.url).await?;
        listener.listen(CHANNEL).await?;
        Ok(listener)
    }
}

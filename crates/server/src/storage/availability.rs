//! Whether the database can be reached: one state per [`Store`], shared by every request and
//! set by the background probe ([`Store::probe`], run by `readiness::watch_database`) and by the
//! first request that fails to reach the database.
//!
//! Why: sqlx's pool, asked for a connection while PostgreSQL is down, retries a refused
//! connection for its whole acquire timeout (1 s by default) before it says so, and each
//! request asking it pays that second. So a request that needs the database asks this state
//! first: while it says down, the request gets [`StoreError::Down`] at once (a 503 with
//! `Retry-After`, or the last verified key during an outage), and the pool is not asked at
//! all. A request already waiting for the pool when the state turns down stops waiting then.
//! The probe does not use the pool: it keeps a connection of its own and checks it every
//! [`PROBE_PERIOD`]; a stopped server refuses or closes that at once, so an outage is known
//! within about one period, and the probe is also what sets the state up again.
//!
//! Only errors about reaching the database turn it down (a dropped or refused connection,
//! PostgreSQL shutting down or starting up), never a constraint violation, a bad query, a lock
//! wait or a pool that is merely busy; and only on PostgreSQL: a SQLite file does not go away
//! like a server, and its errors (busy, full disk) are answered one request at a time.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, ConnectOptions, Executor, Transaction};
use tokio::sync::watch;

use super::errors::ResultExt;
use super::{Backend, Store, StoreError};

/// The database's state as last seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseState {
    /// Not checked yet.
    Unknown,
    /// The last check got an answer.
    Up,
    /// The last check, or a request, could not reach it.
    Down,
}

/// How often the probe checks the database: the longest an outage goes unnoticed when no
/// request has hit it, and how soon after the database is back requests use it again.
pub const PROBE_PERIOD: Duration = Duration::from_millis(100);

/// How long one probe may take before the database counts as down (a server that neither
/// answers nor refuses, such as one behind a lost network).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The shared state. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Availability(Arc<watch::Sender<DatabaseState>>);

impl Default for Availability {
    fn default() -> Self {
        Self(Arc::new(watch::Sender::new(DatabaseState::Unknown)))
    }
}

impl Availability {
    /// The state as last seen.
    pub fn state(&self) -> DatabaseState {
        *self.0.borrow()
    }

    /// Records `state`; returns the one before. A change is logged once, not on every probe.
    pub fn set(&self, state: DatabaseState) -> DatabaseState {
        let before = self.0.send_replace(state);
        match (before, state) {
            (DatabaseState::Up | DatabaseState::Unknown, DatabaseState::Down) => {
                tracing::warn!(
                    "database unreachable: requests that need it answer 503 at once; listings \
                     go on with the keys verified in the last 15 minutes"
                )
            }
            (DatabaseState::Down, DatabaseState::Up) => tracing::info!("database reachable again"),
            _ => {}
        }
        before
    }

    /// [`StoreError::Down`] while the database is known down: the pool is not to be asked.
    pub fn check(&self) -> Result<(), StoreError> {
        match self.state() {
            DatabaseState::Down => Err(StoreError::Down),
            DatabaseState::Up | DatabaseState::Unknown => Ok(()),
        }
    }

    /// Resolves once the state is down (at once if it is).
    async fn down(&self) {
        let mut state = self.0.subscribe();
        // The sender lives as long as `self`, so this cannot fail while it is awaited.
        let _ = state.wait_for(|state| *state == DatabaseState::Down).await;
    }
}

impl Store {
    /// The database's state as last seen by the probe or a request.
    pub fn availability(&self) -> &Availability {
        &self.availability
    }

    /// Whether the state decides for requests: on PostgreSQL only. SQLite's state informs
    /// `/readyz` and the metrics alone: a SQLite probe that fails (or is slow, on a loaded
    /// machine) says nothing about the next request, which asks the file itself.
    fn gates_requests(&self) -> bool {
        self.backend == Backend::Postgres
    }

    /// Whether requests are to be answered without asking the database: it is PostgreSQL
    /// (only its state gates requests) and known down.
    pub fn known_down(&self) -> bool {
        self.gates_requests() && self.availability.state() == DatabaseState::Down
    }

    /// Runs `op`, a request's use of the database, only while the database is not known down,
    /// and ends it with [`StoreError::Down`] as soon as it is known down; a failure to reach
    /// the database turns the state down for everyone. Only for operations that may be dropped
    /// at any point without changing anything (reads), or that change nothing before their
    /// connection is theirs ([`Self::acquire`], [`Self::begin`]).
    pub(super) async fn guarded<T>(
        &self,
        op: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        if !self.gates_requests() {
            return op.await;
        }
        self.availability.check()?;
        let outcome = tokio::select! {
            biased;
            outcome = op => outcome,
            () = self.availability.down() => Err(StoreError::Down),
        };
        self.noted(outcome)
    }

    /// `outcome`, having turned the state down when it is a failure to reach the database.
    pub(super) fn noted<T>(&self, outcome: Result<T, StoreError>) -> Result<T, StoreError> {
        if let Err(err) = &outcome {
            if self.gates_requests() && err.is_unreachable() {
                tracing::debug!(error = %err, "a request could not reach the database");
                self.availability.set(DatabaseState::Down);
            }
        }
        outcome
    }

    /// A pooled connection, for a write: [`Self::guarded`] over the pool's acquire, so a write
    /// waits for no connection while the database is known down.
    pub(super) async fn acquire(&self) -> Result<PoolConnection<Any>, StoreError> {
        self.guarded(async { self.pool.acquire().await.classify() })
            .await
    }

    /// A transaction on a pooled connection, as [`Self::acquire`]: nothing is written before it
    /// is returned, so giving up on it while it starts changes nothing.
    pub(super) async fn begin(&self) -> Result<Transaction<'static, Any>, StoreError> {
        self.guarded(async { self.pool.begin().await.classify() })
            .await
    }

    /// The background probe's check: `SELECT 1` on `conn`, its connection of its own
    /// (opened, or opened again after a failure, outside the pool, whose acquire would retry a
    /// refused connection for its whole timeout). SQLite's is the pool's `SELECT 1`, as before:
    /// its file does not go away.
    pub async fn probe(&self, conn: &mut Option<AnyConnection>) -> Result<(), StoreError> {
        if self.backend == Backend::Sqlite {
            return self.ping().await;
        }
        if let Some(open) = conn {
            if open.execute("SELECT 1").await.is_ok() {
                return Ok(());
            }
            // Closed under it (a restart, an idle timeout): one new connection decides.
            *conn = None;
        }
        let mut fresh = self
            .pool
            .connect_options()
            .connect()
            .await
            .map_err(StoreError::connect)?;
        fresh.execute("SELECT 1").await.classify()?;
        *conn = Some(fresh);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::storage::PoolSettings;

    /// A slow or failed SQLite probe marks the state down (for `/readyz`), but a request
    /// still asks the file: SQLite is never answered as known down.
    #[tokio::test]
    async fn a_sqlite_state_marked_down_does_not_gate_requests() {
        let store = Store::connect("sqlite::memory:", &PoolSettings::default())
            .await
            .unwrap();
        store.availability().set(DatabaseState::Down);
        assert!(!store.known_down());
        let asked = store.guarded(async { Ok(7) }).await;
        assert_eq!(asked.unwrap(), 7);
        assert_eq!(store.availability().state(), DatabaseState::Down);
    }
}

//! What `/readyz` reports: whether this replica is shutting down, and the database's state as
//! the background check last saw it.
//!
//! Readiness is about serving listings, which come from memory: a replica whose database is
//! unreachable still answers them (and verifies recently seen keys), so it stays ready and
//! says `"database":"down"` instead. Only a replica that is shutting down answers 503, at once,
//! so that its endpoint leaves the load balancer before it stops accepting.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::storage::Store;

/// The database's state as last checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseState {
    /// Not checked yet.
    Unknown,
    /// The last check got an answer.
    Up,
    /// The last check failed or timed out.
    Down,
}

impl DatabaseState {
    /// The word `/readyz` and the logs use.
    pub fn as_str(self) -> &'static str {
        match self {
            DatabaseState::Unknown => "unknown",
            DatabaseState::Up => "up",
            DatabaseState::Down => "down",
        }
    }
}

/// Shared readiness state. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Health(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    draining: AtomicBool,
    /// 0 unknown, 1 up, 2 down.
    database: AtomicU8,
}

impl Health {
    /// A replica that is not draining, database not checked yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// From now on `/readyz` answers 503: the replica is shutting down.
    pub fn start_draining(&self) {
        self.0.draining.store(true, Ordering::Release);
    }

    /// Whether shutdown has begun.
    pub fn is_draining(&self) -> bool {
        self.0.draining.load(Ordering::Acquire)
    }

    /// Records the outcome of a database check; returns the state before it.
    pub fn set_database(&self, state: DatabaseState) -> DatabaseState {
        let code = match state {
            DatabaseState::Unknown => 0,
            DatabaseState::Up => 1,
            DatabaseState::Down => 2,
        };
        match self.0.database.swap(code, Ordering::AcqRel) {
            1 => DatabaseState::Up,
            2 => DatabaseState::Down,
            _ => DatabaseState::Unknown,
        }
    }

    /// The database's state as last checked.
    pub fn database(&self) -> DatabaseState {
        match self.0.database.load(Ordering::Acquire) {
            1 => DatabaseState::Up,
            2 => DatabaseState::Down,
            _ => DatabaseState::Unknown,
        }
    }
}

/// How often the database is checked, and how long a check may take before it counts as down.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// Checks the database every [`CHECK_INTERVAL`] and records the outcome; a change is logged
/// once (not on every check).
pub async fn watch_database(store: Store, health: Health) {
    let mut tick = tokio::time::interval(CHECK_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let state = match tokio::time::timeout(CHECK_INTERVAL, store.ping()).await {
            Ok(Ok(())) => DatabaseState::Up,
            Ok(Err(err)) => {
                tracing::debug!(error = %err, "database check failed");
                DatabaseState::Down
            }
            Err(_elapsed) => DatabaseState::Down,
        };
        let before = health.set_database(state);
        match (before, state) {
            (DatabaseState::Up | DatabaseState::Unknown, DatabaseState::Down) => {
                tracing::warn!("database unreachable: deletes answer 503; listings go on")
            }
            (DatabaseState::Down, DatabaseState::Up) => tracing::info!("database reachable again"),
            _ => {}
        }
    }
}

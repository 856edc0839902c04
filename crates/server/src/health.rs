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
#[repr(u8)]
pub enum DatabaseState {
    /// Not checked yet.
    Unknown = 0,
    /// The last check got an answer.
    Up = 1,
    /// The last check failed or timed out.
    Down = 2,
}

impl DatabaseState {
    /// The state `Health` stores as a number (its atomic's value).
    fn from_code(code: u8) -> Self {
        match code {
            1 => DatabaseState::Up,
            2 => DatabaseState::Down,
            _ => DatabaseState::Unknown,
        }
    }
}

/// Shared readiness state. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Health(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    draining: AtomicBool,
    /// A [`DatabaseState`] as its number.
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
        DatabaseState::from_code(self.0.database.swap(state as u8, Ordering::AcqRel))
    }

    /// The database's state as last checked.
    pub fn database(&self) -> DatabaseState {
        DatabaseState::from_code(self.0.database.load(Ordering::Acquire))
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

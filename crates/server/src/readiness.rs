//! What `/readyz` reports: whether this replica is shutting down, and the database's state as
//! the background probe (or a request that could not reach it) last saw it.
//!
//! Readiness is about serving listings, which come from memory: a replica whose database is
//! unreachable still answers them (and verifies recently seen keys), so it stays ready and
//! says `"database":"down"` instead. Only a replica that is shutting down answers 503, at once,
//! so that its endpoint leaves the load balancer before it stops accepting.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Defined by storage, whose requests read and set it; re-exported for `/readyz` and metrics.
pub use crate::storage::DatabaseState;
use crate::storage::{Availability, Store, PROBE_PERIOD, PROBE_TIMEOUT};

/// Shared readiness state. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Readiness(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    draining: AtomicBool,
    /// The store's: what its requests and the probe last saw.
    database: Availability,
}

impl Readiness {
    /// A replica that is not draining, reporting the database's state from `database`.
    pub fn new(database: Availability) -> Self {
        Self(Arc::new(Inner {
            draining: AtomicBool::new(false),
            database,
        }))
    }

    /// From now on `/readyz` answers 503: the replica is shutting down.
    pub fn start_draining(&self) {
        self.0.draining.store(true, Ordering::Release);
    }

    /// Whether shutdown has begun.
    pub fn is_draining(&self) -> bool {
        self.0.draining.load(Ordering::Acquire)
    }

    /// The database's state as last seen.
    pub fn database(&self) -> DatabaseState {
        self.0.database.state()
    }
}

/// Probes the database every [`PROBE_PERIOD`] on a connection of its own (see
/// [`Store::probe`]) and records the outcome in the store's [`Availability`]: the probe is
/// what notices an outage when no request has, and what ends one. A change is logged once.
pub async fn watch_database(store: Store) {
    let mut tick = tokio::time::interval(PROBE_PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut conn = None;
    loop {
        tick.tick().await;
        let state = match tokio::time::timeout(PROBE_TIMEOUT, store.probe(&mut conn)).await {
            Ok(Ok(())) => DatabaseState::Up,
            Ok(Err(err)) => {
                tracing::debug!(error = %err, "database check failed");
                DatabaseState::Down
            }
            Err(_elapsed) => {
                // Its connection may be stuck mid-query: the next check opens another.
                conn = None;
                DatabaseState::Down
            }
        };
        store.availability().set(state);
    }
}

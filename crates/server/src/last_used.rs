//! When each API key last authenticated a request: `api_keys.last_used_at`, shown by `key list`
//! so an operator rotating a key can see when the old one stops being used.
//!
//! Approximate on purpose. A write per request would put a database write (on SQLite, the one
//! writer, shared with deletes) on every listing, which otherwise never touches the database.
//! So each process writes a key's time at most once per [`WRITE_INTERVAL`], from a task of its
//! own: the request neither waits for the write nor fails with it (a failed write is logged at
//! debug and forgotten; the next request after the interval tries again). With several
//! replicas the value is the latest any of them wrote, so it lags the true last use by at most
//! the interval.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::model::now_ms;
use crate::storage::Store;

/// The longest a key's `last_used_at` lags its last use (per process).
pub const WRITE_INTERVAL: Duration = Duration::from_secs(60);

/// Records key use, at most once per [`WRITE_INTERVAL`] per key. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LastUsed(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    store: Store,
    /// When this process last started a write for each key id. Only keys that authenticated
    /// a request get an entry, and [`LastUsed::forget_old`] drops the entries past the
    /// interval, so it holds at most the keys used within the last interval or so.
    written: Mutex<HashMap<String, Instant>>,
}

impl LastUsed {
    /// Records into `store`.
    pub fn new(store: Store) -> Self {
        Self(Arc::new(Inner {
            store,
            written: Mutex::new(HashMap::new()),
        }))
    }

    /// Notes that `key_id` authenticated a request now: starts a write of the time when this
    /// process wrote none for the key within [`WRITE_INTERVAL`], and returns at once.
    pub fn record(&self, key_id: &str) {
        let now = Instant::now();
        {
            // A panic while holding this lock leaves a map that is still whole: go on with it.
            let mut written = self
                .0
                .written
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if written
                .get(key_id)
                .is_some_and(|last| now.duration_since(*last) < WRITE_INTERVAL)
            {
                return;
            }
            written.insert(key_id.to_owned(), now);
        }
        let store = self.0.store.clone();
        let key_id = key_id.to_owned();
        let at = now_ms();
        tokio::spawn(async move {
            if let Err(err) = store.record_key_use(&key_id, at).await {
                // Only an approximate, informational time is lost; the next use retries.
                tracing::debug!(key_id, error = %err, "could not record the key's last use");
            }
        });
    }

    /// Drops the entries of keys not written within [`WRITE_INTERVAL`]: their next use writes
    /// anyway. Called periodically, so the map holds only recently used keys.
    pub fn forget_old(&self) {
        self.forget_as_of(Instant::now());
    }

    fn forget_as_of(&self, now: Instant) {
        let mut written = self
            .0
            .written
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        written.retain(|_, last| now.duration_since(*last) < WRITE_INTERVAL);
    }

    /// How many keys the map holds (for tests of its bound).
    pub fn len(&self) -> usize {
        self.0
            .written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::PoolSettings;

    /// The map holds one entry per key written within the interval, and the periodic
    /// `forget_old` empties it once the interval has passed: its memory follows the keys used
    /// lately, not every key ever used. (The writes fail here, on an empty in-memory database:
    /// that, too, must change nothing for the caller.)
    #[tokio::test]
    async fn entries_past_the_write_interval_are_forgotten() {
        let store = Store::connect("sqlite::memory:", &PoolSettings::default())
            .await
            .unwrap();
        let last_used = LastUsed::new(store);
        for key_id in ["AAAAAAAAAAAA", "BBBBBBBBBBBB", "AAAAAAAAAAAA"] {
            last_used.record(key_id);
        }
        assert_eq!(last_used.len(), 2);
        last_used.forget_as_of(Instant::now());
        assert_eq!(last_used.len(), 2, "written within the interval: kept");
        last_used.forget_as_of(Instant::now() + WRITE_INTERVAL);
        assert!(last_used.is_empty());
    }
}

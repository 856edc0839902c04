//! Follows the change log so that this process drops or reloads what another process changed:
//! a key revoked or created by `appzone-server key ...` or another replica, a catalog import, a
//! zone mapping stored or deleted through another replica.
//!
//! The log ([`crate::storage::Change`]) is read after the last change applied, every
//! [`POLL`] and, on PostgreSQL, as soon as a `NOTIFY` arrives. With the listener, a change
//! reaches every replica in milliseconds; without it (SQLite, or a lost connection being made
//! again) within [`POLL`] plus a read. The key cache's TTL stays the bound should reading the
//! log fail too.

use std::time::Duration;

use crate::catalog::Catalog;
use crate::keys::KeyVerifier;
use crate::mappings::MappingCache;
use crate::storage::{Change, Store, Wake};

/// How often the log is read by default whatever the notices say: the bound for a lost notice,
/// and for SQLite, where an operator command in another process has no way to wake the server.
pub const POLL: Duration = Duration::from_millis(250);

/// Most changes applied per read; a longer backlog is read on the next turn at once.
const BATCH: i64 = 500;

/// Applies the changes other processes commit, reading the log every `poll` and on every
/// notice, until the task is dropped.
pub async fn follow(
    store: Store,
    keys: KeyVerifier,
    mappings: MappingCache,
    catalog: Catalog,
    poll: Duration,
) {
    // Only what is committed from now on matters: the caches start empty and the catalog
    // was loaded just before.
    let mut seen = loop {
        match store.last_change().await {
            Ok(seq) => break seq,
            Err(err) => {
                tracing::debug!(error = %err, "cannot read the change log yet; retrying");
                tokio::time::sleep(poll).await;
            }
        }
    };
    let mut listener = store.change_listener();
    let mut tick = tokio::time::interval(poll);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            woke = wait(&mut listener) => {
                if woke == Wake::Reconnected {
                    tracing::debug!("change listener connected; reading what it may have missed");
                }
            }
        }
        loop {
            let changes = match store.changes_since(seen, BATCH).await {
                Ok(changes) => changes,
                Err(err) => {
                    tracing::debug!(error = %err, "cannot read the change log; the key cache TTL bounds revocations meanwhile");
                    break;
                }
            };
            let full = changes.len() == usize::try_from(BATCH).unwrap_or(usize::MAX);
            let mut reload = false;
            for (seq, change) in changes {
                seen = seq;
                match change {
                    Some(Change::Key(key_id)) => keys.forget(&key_id),
                    Some(Change::Catalog) => reload = true,
                    Some(Change::ZoneMapping(subject)) => mappings.forget(&subject),
                    None => {}
                }
            }
            if reload {
                if let Err(err) = catalog.refresh(&store).await {
                    tracing::warn!(error = %err, "catalog reload after a change failed; the refresh interval retries");
                }
            }
            if !full {
                break;
            }
        }
    }
}

/// The next wake of `listener`, or never without one.
async fn wait(listener: &mut Option<crate::storage::ChangeListener>) -> Wake {
    match listener {
        Some(listener) => listener.wait(Duration::from_secs(1)).await,
        None => std::future::pending().await,
    }
}

//! Organizations' zone mappings above storage: the cache the identity listing reads them
//! through, the clouds' CLI output turned into pairs the catalog accepts (`mappings/parse.rs`)
//! and offerings placed on zone identities (`mappings/offerings.rs`), and what both answer
//! about the parts they do not take (`mappings/outcome.rs`).
//!
//! The cache keeps a mapping (or its absence) per organization and id for the key cache's TTL;
//! a change, on any replica, drops the entry through the change log within a second (as keys
//! are dropped), and the TTL bounds it should the log not be read.

pub mod offerings;
pub mod outcome;
pub mod parse;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use appzone_contract::ZoneMappingId;

use crate::storage::{change_subject, Store, StoreError, StoredMapping};

/// Most bytes of mappings the cache keeps (about): every organization's few mappings, even
/// with a region's full offerings each, without letting a large tenant grow the process.
const CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// The mappings the identity listing applies, cached.
#[derive(Debug, Clone)]
pub struct MappingCache {
    store: Store,
    cache: moka::sync::Cache<String, Option<Arc<StoredMapping>>>,
    /// Counts the entries dropped: a read that raced with a change is not cached.
    forgotten: Arc<AtomicU64>,
}

impl MappingCache {
    /// A cache over `store` keeping entries for `ttl`.
    pub fn new(store: Store, ttl: Duration) -> Self {
        Self {
            store,
            // Weighed by size: a mapping with a region's full offerings holds hundreds of
            // kilobytes, one without them a few.
            cache: moka::sync::Cache::builder()
                .max_capacity(CACHE_BYTES)
                .weigher(|key: &String, mapping: &Option<Arc<StoredMapping>>| {
                    let bytes = key.len()
                        + mapping.as_ref().map_or(0, |m| {
                            1024 + m.offerings.approximate_bytes()
                                + m.mapping
                                    .regions
                                    .iter()
                                    .map(|r| 64 * r.zones.len())
                                    .sum::<usize>()
                        });
                    u32::try_from(bytes).unwrap_or(u32::MAX)
                })
                .time_to_live(ttl)
                .build(),
            forgotten: Arc::default(),
        }
    }

    /// The organization's mapping `id`: from the cache, else from storage (and cached).
    pub async fn get(
        &self,
        org: &str,
        id: &ZoneMappingId,
    ) -> Result<Option<Arc<StoredMapping>>, StoreError> {
        let subject = change_subject(org, id.as_str());
        if let Some(found) = self.cache.get(&subject) {
            return Ok(found);
        }
        let before = self.forgotten.load(Ordering::Acquire);
        let found = self.store.zone_mapping(org, id).await?.map(Arc::new);
        // A change dropped while this read ran may be newer than what it read.
        if self.forgotten.load(Ordering::Acquire) == before {
            self.cache.insert(subject, found.clone());
        }
        Ok(found)
    }

    /// Drops what is cached of the mapping the change-log subject `org/id` names.
    pub fn forget(&self, subject: &str) {
        self.forgotten.fetch_add(1, Ordering::AcqRel);
        self.cache.invalidate(subject);
    }
}

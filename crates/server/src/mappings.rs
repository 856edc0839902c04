//! Organizations' zone mappings above storage: the cache the identity listing reads them
//! through, and (`mappings/parse.rs`) the clouds' CLI output turned into pairs the catalog
//! accepts.
//!
//! The cache keeps a mapping (or its absence) per organization and id for the key cache's TTL;
//! a change, on any replica, drops the entry through the change log within a second (as keys
//! are dropped), and the TTL bounds it should the log not be read.

pub mod offerings;
pub mod parse;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use appzone_contract::ZoneMappingId;

use crate::storage::{change_subject, Store, StoreError, StoredMapping};

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
            cache: moka::sync::Cache::builder()
                .max_capacity(10_000)
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

//! Organizations' zone mappings above storage: the cache the identity listing reads them
//! through, and (`mappings/parse.rs`) the clouds' CLI output turned into pairs the catalog
//! accepts.
//!
//! The cache keeps a mapping (or its absence) per organization and id for the key cache's TTL;
//! a change, on any replica, drops the entry through the change log within a second (as keys
//! are dropped), and the TTL bounds it should the log not be read.

pub mod parse;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use appzone_contract::ZoneMappingId;

use crate::catalog::Answer;
use crate::storage::{change_subject, Store, StoreError, StoredMapping};

/// A mapping as the cache holds it, with the identity answers built with it so far (per
/// region, for one catalog version): a listing with a mapping then costs what one without
/// does, but for the first request of each region.
#[derive(Debug)]
pub struct CachedMapping {
    /// The mapping.
    pub stored: StoredMapping,
    answers: Mutex<(i64, HashMap<String, Arc<Answer>>)>,
}

impl CachedMapping {
    fn new(stored: StoredMapping) -> Self {
        Self {
            stored,
            answers: Mutex::new((0, HashMap::new())),
        }
    }

    /// The identity answer of `region` in catalog `version` with this mapping: the one built
    /// before, or `build`'s (kept). Answers of another catalog version are dropped.
    pub fn answer(
        &self,
        version: i64,
        region: &str,
        build: impl FnOnce() -> Answer,
    ) -> Arc<Answer> {
        // A poisoned lock only means another request panicked while holding it; the map is
        // still consistent (an insert either happened or not).
        let mut answers = self.answers.lock().unwrap_or_else(|e| e.into_inner());
        if answers.0 != version {
            *answers = (version, HashMap::new());
        }
        if let Some(answer) = answers.1.get(region) {
            return answer.clone();
        }
        let answer = Arc::new(build());
        answers.1.insert(region.to_owned(), answer.clone());
        answer
    }
}

/// The mappings the identity listing applies, cached.
#[derive(Debug, Clone)]
pub struct MappingCache {
    store: Store,
    cache: moka::sync::Cache<String, Option<Arc<CachedMapping>>>,
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
    ) -> Result<Option<Arc<CachedMapping>>, StoreError> {
        let subject = change_subject(org, id.as_str());
        if let Some(found) = self.cache.get(&subject) {
            return Ok(found);
        }
        let before = self.forgotten.load(Ordering::Acquire);
        let found = self
            .store
            .zone_mapping(org, id)
            .await?
            .map(|stored| Arc::new(CachedMapping::new(stored)));
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

//! The zone catalog as an in-memory snapshot, so the listing never waits on the database.
//!
//! Each snapshot precomputes, per region, the response body around the per-request `id` and the
//! weak `ETag`. A background task polls the catalog version (one tiny query per interval) and
//! swaps in a new snapshot when it changes, which is how an import on any replica, or by the
//! operator CLI, reaches every replica.

pub mod file;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use appzone_contract::{ProviderId, RegionId, ZoneList, STATUS_SUCCESS};
use arc_swap::ArcSwap;
use axum::body::Bytes;
use http::HeaderValue;
use sha2::{Digest, Sha256};

use crate::storage::{Store, StoreError};
use file::CatalogFile;

/// A region's precomputed answer.
#[derive(Debug)]
pub struct RegionAnswer {
    /// Weak validator over provider, region and zones.
    pub etag: HeaderValue,
    /// The body up to and including the opening quote of `id`.
    pub head: Bytes,
    /// The body from the closing quote of `id` to the end.
    pub tail: Bytes,
}

impl RegionAnswer {
    fn new(provider: &ProviderId, region: &RegionId, zones: &[String]) -> Self {
        let mut hasher = Sha256::new();
        for part in [provider.as_str(), region.as_str()]
            .into_iter()
            .chain(zones.iter().map(String::as_str))
        {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        let digest = hasher.finalize();
        let etag = format!("W/\"{}\"", hex::encode(&digest[..12]));
        // Serialize with a placeholder id and split around it, so the field order and escaping
        // come from the contract type itself. Request ids never need escaping.
        const MARK: &str = "\u{1}request-id\u{1}";
        let body = ZoneList {
            data: zones.to_vec(),
            id: MARK.to_owned(),
            message: format!(
                "{} zone{} in {provider}/{region}",
                zones.len(),
                if zones.len() == 1 { "" } else { "s" }
            ),
            status: STATUS_SUCCESS.to_owned(),
        };
        let json = serde_json::to_string(&body).unwrap_or_default();
        let mark = serde_json::to_string(MARK).unwrap_or_default();
        let mark = &mark[1..mark.len() - 1];
        let (head, tail) = json.split_once(mark).unwrap_or((&json, ""));
        Self {
            etag: HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("W/\"0\"")),
            head: Bytes::copy_from_slice(head.as_bytes()),
            tail: Bytes::copy_from_slice(tail.as_bytes()),
        }
    }

    /// The full body for one request id.
    pub fn body(&self, request_id: &str) -> Vec<u8> {
        let mut body = Vec::with_capacity(self.head.len() + request_id.len() + self.tail.len());
        body.extend_from_slice(&self.head);
        body.extend_from_slice(request_id.as_bytes());
        body.extend_from_slice(&self.tail);
        body
    }
}

/// Maps keyed by catalog ids. foldhash rather than SipHash: the keys come from the catalog
/// (lookups with caller-chosen ids only read), and two lookups per listing are on the hot path.
pub type IdMap<V> = HashMap<String, V, foldhash::fast::RandomState>;

/// One immutable version of the catalog.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// The catalog version this snapshot was built from.
    pub version: i64,
    providers: IdMap<IdMap<RegionAnswer>>,
}

impl Snapshot {
    /// Builds a snapshot of `catalog` at `version`.
    pub fn build(version: i64, catalog: &CatalogFile) -> Self {
        let providers = catalog
            .providers
            .iter()
            .map(|p| {
                let regions = p
                    .regions
                    .iter()
                    .map(|r| {
                        (
                            r.id.as_str().to_owned(),
                            RegionAnswer::new(&p.id, &r.id, &r.zones),
                        )
                    })
                    .collect();
                (p.id.as_str().to_owned(), regions)
            })
            .collect();
        Self { version, providers }
    }

    /// Looks up a provider's regions; `None` when the provider is not in the catalog.
    pub fn provider(&self, provider: &str) -> Option<&IdMap<RegionAnswer>> {
        self.providers.get(provider)
    }
}

/// The current snapshot, shared by all requests.
#[derive(Debug, Clone)]
pub struct Catalog {
    current: Arc<ArcSwap<Snapshot>>,
}

impl Catalog {
    /// Loads the catalog from storage.
    pub async fn load(store: &Store) -> Result<Self, StoreError> {
        let (version, file) = store.load_catalog().await?;
        Ok(Self {
            current: Arc::new(ArcSwap::from_pointee(Snapshot::build(version, &file))),
        })
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.current.load()
    }

    /// Reloads from storage when the stored version differs; returns whether it swapped.
    pub async fn refresh(&self, store: &Store) -> Result<bool, StoreError> {
        let stored = store.catalog_version().await?;
        if stored == self.current.load().version {
            return Ok(false);
        }
        let (version, file) = store.load_catalog().await?;
        self.current
            .store(Arc::new(Snapshot::build(version, &file)));
        tracing::info!(version, "catalog snapshot refreshed");
        Ok(true)
    }

    /// Polls for catalog changes every `interval` until the task is dropped.
    pub async fn refresh_forever(self, store: Store, interval: Duration) {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            if let Err(err) = self.refresh(&store).await {
                tracing::warn!(error = %err, "catalog refresh failed; serving the previous snapshot");
            }
        }
    }
}

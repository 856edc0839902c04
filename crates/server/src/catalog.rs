//! The zone catalog as an in-memory snapshot, so the listing never waits on the database.
//!
//! Each snapshot precomputes, for the provider listing, each provider's region listing and each
//! region's zone and zone-identity listings, the response body around the per-request `id` and
//! the weak `ETag`; the answers to a query (an identity listing with filters or the caller's
//! zone mappings, `identities.rs`; the instance types, `offerings.rs`) are built at their first
//! request and kept in the snapshot's answer cache. A background task polls the catalog
//! version (one tiny query per interval) and swaps in a new snapshot when it changes, which is
//! how an import on any replica, or by the operator CLI, reaches every replica.

pub mod identities;
pub mod offerings;
pub mod suggest;

use std::sync::Arc;
use std::time::Duration;

use appzone_contract::{
    ProviderId, ProviderList, RegionList, ZoneList, ZoneMappingId, STATUS_SUCCESS,
};
use arc_swap::ArcSwap;
use axum::body::Bytes;
use http::HeaderValue;
use indexmap::IndexMap;
use serde::Serialize;
use sha2::{Digest, Sha256};

pub use identities::RegionIdentities;

use crate::model::catalog_file::{CatalogFile, ProviderEntry, RegionEntry};
use crate::storage::{Store, StoreError};

/// Most bytes of answers to queries a snapshot keeps (identities with filters or mappings,
/// instance types): each is a few KiB, so thousands of distinct queries fit.
const ANSWER_CACHE_BYTES: u64 = 16 * 1024 * 1024;

/// The weak `ETag` over `parts`: the first 12 bytes of the SHA-256 of the parts, each followed
/// by a 0 byte (so `["ab", "c"]` and `["a", "bc"]` differ), in hex. Every listing's validator
/// is made here, so all have one form.
fn weak_etag<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> HeaderValue {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
        hasher.update([0]);
    }
    let etag = format!("W/\"{}\"", hex::encode(&hasher.finalize()[..12]));
    // Hex digits in quotes are always a valid header value; the fallback is never used.
    HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("W/\"0\""))
}

/// A listing's precomputed answer: its weak `ETag` and its body around the request id.
#[derive(Debug)]
pub struct Answer {
    /// Weak validator over the content the listing depends on.
    pub etag: HeaderValue,
    /// The body up to and including the opening quote of `id`.
    pub head: Bytes,
    /// The body from the closing quote of `id` to the end.
    pub tail: Bytes,
}

impl Answer {
    /// The answer whose `ETag` covers `content` (the listing's kind first, then the ids it
    /// depends on) and whose body is `body(id)`, a contract listing type with request id `id`.
    fn new<B: Serialize>(content: &[&str], body: impl FnOnce(String) -> B) -> Self {
        let etag = weak_etag(content.iter().map(|part| part.as_bytes()));
        // Serialize with a placeholder id and split around it, so the field order and escaping
        // come from the contract type itself. Request ids never need escaping.
        const MARK: &str = "\u{1}request-id\u{1}";
        let json = serde_json::to_string(&body(MARK.to_owned())).unwrap_or_default();
        let mark = serde_json::to_string(MARK).unwrap_or_default();
        let mark = &mark[1..mark.len() - 1];
        let (head, tail) = json.split_once(mark).unwrap_or((&json, ""));
        Self {
            etag,
            head: Bytes::copy_from_slice(head.as_bytes()),
            tail: Bytes::copy_from_slice(tail.as_bytes()),
        }
    }

    /// The answer whose body is `body(id)` and whose `ETag` covers `kind` and that whole body
    /// but the request id: for a body too rich to list its content as ids.
    fn over_body<B: Serialize>(kind: &str, body: impl Fn(String) -> B) -> Self {
        let mut answer = Self::new(&[], &body);
        answer.etag = weak_etag([kind.as_bytes(), &answer.head, &answer.tail]);
        answer
    }

    fn providers(catalog: &CatalogFile) -> Self {
        let ids: Vec<&str> = catalog.providers.iter().map(|p| p.id.as_str()).collect();
        let content: Vec<&str> = std::iter::once("providers")
            .chain(ids.iter().copied())
            .collect();
        Self::new(&content, |id| ProviderList {
            data: ids.iter().map(|&p| p.to_owned()).collect(),
            id,
            message: count(ids.len(), "provider", "providers"),
            status: STATUS_SUCCESS.to_owned(),
        })
    }

    fn regions(provider: &ProviderEntry) -> Self {
        let ids: Vec<&str> = provider.regions.iter().map(|r| r.id.as_str()).collect();
        let content: Vec<&str> = ["regions", provider.id.as_str()]
            .into_iter()
            .chain(ids.iter().copied())
            .collect();
        Self::new(&content, |id| RegionList {
            data: ids.iter().map(|&r| r.to_owned()).collect(),
            id,
            message: format!(
                "{} in {}",
                count(ids.len(), "region", "regions"),
                provider.id
            ),
            status: STATUS_SUCCESS.to_owned(),
        })
    }

    fn zones(provider: &ProviderId, region: &RegionEntry) -> Self {
        // The zone listing's ETag predates the other listings' and has no kind first: keeping
        // it keeps the validators clients already hold.
        let content: Vec<&str> = [provider.as_str(), region.id.as_str()]
            .into_iter()
            .chain(region.zones.iter().map(String::as_str))
            .collect();
        Self::new(&content, |id| ZoneList {
            data: region.zones.clone(),
            id,
            message: format!(
                "{} in {provider}/{}",
                count(region.zones.len(), "zone", "zones"),
                region.id
            ),
            status: STATUS_SUCCESS.to_owned(),
        })
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

/// Midnight UTC of a `YYYY-MM-DD` date in Unix seconds (the proleptic Gregorian calendar, as
/// in Howard Hinnant's `days_from_civil`).
fn unix_midnight(date: &str) -> Option<i64> {
    let mut parts = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    Some((era * 146_097 + day_of_era - 719_468) * 86_400)
}

/// `3 zones`, `1 zone`, `0 zones`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `message` cut to its first `max` characters.
pub fn at_most(message: String, max: usize) -> String {
    match message.char_indices().nth(max) {
        Some((cut, _)) => message[..cut].to_owned(),
        None => message,
    }
}

/// The key of the answer that organization `org` is given for `route` (its last path segment)
/// of region `at` (`aws/us-east-1`) with the query `raw` as the request spelled it. Two
/// spellings of one query are two entries; looking one up reads the query no further.
pub fn answer_key(org: &str, at: &str, route: &str, raw: &str) -> String {
    [org, "\0", at, "\0", route, "\0", raw].concat()
}

/// Maps keyed by catalog ids, in catalog order (what the listings and the suggestions walk).
/// foldhash rather than SipHash: the keys come from the catalog (lookups with caller-chosen ids
/// only read), and two lookups per listing are on the hot path.
pub type IdMap<V> = IndexMap<String, V, foldhash::fast::RandomState>;

/// One immutable version of the catalog.
#[derive(Debug)]
pub struct Snapshot {
    /// The catalog version this snapshot was built from.
    pub version: i64,
    /// When the catalog was compiled (`YYYY-MM-DD`), if it says.
    pub compiled_on: Option<String>,
    /// The oldest of the regions' newest dates (the compile date, or the region's last
    /// refresh from a cloud's output when later), midnight UTC, in Unix seconds; 0 when the
    /// catalog gives no date.
    pub oldest_facts_secs: i64,
    /// The provider listing.
    pub providers: Answer,
    by_id: IdMap<Provider>,
    /// Answers to a query, by the organization, the region, the route and the query as the
    /// request spelled it ([`Snapshot::kept_answer`]); dropped with the snapshot when the
    /// catalog changes.
    answers: moka::sync::Cache<String, Arc<KeptAnswer>>,
}

/// An answer to a query, with the zone mappings it applies, each at the version it was built
/// from: served again only while the mapping cache holds those versions, so a changed or
/// deleted mapping is never answered from an older one.
#[derive(Debug)]
pub struct KeptAnswer {
    /// The answer.
    pub answer: Answer,
    /// The ids of the mappings it applies and their versions, in the order asked.
    pub mappings: Vec<(ZoneMappingId, i64)>,
}

/// One provider of a [`Snapshot`].
#[derive(Debug)]
pub struct Provider {
    /// The provider's id.
    pub id: ProviderId,
    /// The provider's region listing.
    pub regions: Answer,
    by_region: IdMap<Region>,
}

/// One region of a [`Provider`]: its two listings.
#[derive(Debug)]
pub struct Region {
    /// The zone listing.
    pub zones: Answer,
    /// The zone-identity listing.
    pub identities: RegionIdentities,
}

impl Provider {
    /// The zone listing of `region`; `None` when the provider has no such region.
    pub fn region(&self, region: &str) -> Option<&Answer> {
        self.by_region.get(region).map(|r| &r.zones)
    }

    /// The zone identities of `region`; `None` when the provider has no such region.
    pub fn identities(&self, region: &str) -> Option<&RegionIdentities> {
        self.by_region.get(region).map(|r| &r.identities)
    }

    /// Each region's id and zone identities, in the catalog's order.
    pub fn identity_regions(&self) -> impl Iterator<Item = (&str, &RegionIdentities)> {
        self.by_region
            .iter()
            .map(|(id, region)| (id.as_str(), &region.identities))
    }

    /// The provider's region id closest to `typed`, when exactly one is close (see
    /// [`suggest::closest`]).
    pub fn closest_region(&self, typed: &str) -> Option<&str> {
        suggest::closest(typed, self.by_region.keys().map(String::as_str))
    }
}

impl Snapshot {
    /// Builds a snapshot of `catalog` at `version`.
    pub fn build(version: i64, catalog: &CatalogFile) -> Self {
        let by_id = catalog
            .providers
            .iter()
            .map(|p| {
                let by_region = p
                    .regions
                    .iter()
                    .map(|r| {
                        let region = Region {
                            zones: Answer::zones(&p.id, r),
                            identities: RegionIdentities::build(catalog, p.id.as_str(), r),
                        };
                        (r.id.as_str().to_owned(), region)
                    })
                    .collect();
                let provider = Provider {
                    id: p.id.clone(),
                    regions: Answer::regions(p),
                    by_region,
                };
                (p.id.as_str().to_owned(), provider)
            })
            .collect();
        let compiled_on = catalog.source.as_ref().and_then(|s| s.compiled_on.clone());
        let compiled = compiled_on.as_deref().and_then(unix_midnight);
        let oldest_facts_secs = catalog
            .providers
            .iter()
            .flat_map(|p| &p.regions)
            .filter_map(|r| {
                let refreshed = r.refreshed_on.as_deref().and_then(unix_midnight);
                compiled.max(refreshed)
            })
            .min()
            .unwrap_or(0);
        Self {
            version,
            compiled_on,
            oldest_facts_secs,
            providers: Answer::providers(catalog),
            answers: moka::sync::Cache::builder()
                .max_capacity(ANSWER_CACHE_BYTES)
                .weigher(|key: &String, kept: &Arc<KeptAnswer>| {
                    let answer = &kept.answer;
                    let bytes = key.len() + answer.head.len() + answer.tail.len();
                    u32::try_from(bytes).unwrap_or(u32::MAX)
                })
                .build(),
            by_id,
        }
    }

    /// The answer kept for `key`: the organization, the region, the route and the raw query
    /// (see [`answer_key`]). The caller checks its mappings' versions before serving it.
    pub fn kept_answer(&self, key: &str) -> Option<Arc<KeptAnswer>> {
        self.answers.get(key)
    }

    /// The answer for `key` built with `mappings` at their versions: the one kept when it was
    /// built with the same versions, else `build`'s, kept in its place (within the cache's
    /// bytes; requests that miss together build it once).
    pub fn keep_answer(
        &self,
        key: String,
        mappings: Vec<(ZoneMappingId, i64)>,
        build: impl FnOnce() -> Answer,
    ) -> Arc<KeptAnswer> {
        let current = mappings.clone();
        self.answers
            .entry(key)
            .or_insert_with_if(
                || {
                    Arc::new(KeptAnswer {
                        answer: build(),
                        mappings,
                    })
                },
                |kept| kept.mappings != current,
            )
            .into_value()
    }

    /// When the catalog was compiled, midnight UTC, in Unix seconds; 0 when it does not say.
    pub fn compiled_at_secs(&self) -> i64 {
        self.compiled_on
            .as_deref()
            .and_then(unix_midnight)
            .unwrap_or(0)
    }

    /// Looks up a provider; `None` when the provider is not in the catalog.
    pub fn provider(&self, provider: &str) -> Option<&Provider> {
        self.by_id.get(provider)
    }

    /// The provider id closest to `typed`, when exactly one is close (see
    /// [`suggest::closest`]).
    pub fn closest_provider(&self, typed: &str) -> Option<&str> {
        suggest::closest(typed, self.by_id.keys().map(String::as_str))
    }
}

/// The pause a reload takes after every [`storage::REGIONS_PER_PAUSE`] regions it reads: a
/// reload of 100 times the built-in catalog then spreads over about a second instead of
/// taking its CPU from the listings at once (BENCHMARKS.md, "Scale").
///
/// [`storage::REGIONS_PER_PAUSE`]: crate::storage::REGIONS_PER_PAUSE
const RELOAD_PAUSE: Duration = Duration::from_millis(20);

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
        let started = std::time::Instant::now();
        // Paced: the requests being served matter more than how soon the new catalog is seen.
        let (version, file) = store.load_catalog_paced(RELOAD_PAUSE).await?;
        let loaded = started.elapsed();
        // Building a snapshot takes time proportional to the catalog: on the blocking pool,
        // not on a worker that serves requests. Requests keep the old snapshot until the swap.
        let built = tokio::task::spawn_blocking(move || Snapshot::build(version, &file)).await;
        let snapshot = match built {
            Ok(snapshot) => snapshot,
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            // The runtime is shutting down.
            Err(_) => return Ok(false),
        };
        let built = started.elapsed() - loaded;
        let old = self.current.swap(Arc::new(snapshot));
        // The old snapshot is as big as the new one: free it off the request path too.
        tokio::task::spawn_blocking(move || drop(old));
        tracing::info!(
            version,
            load_ms = loaded.as_millis(),
            build_ms = built.as_millis(),
            "catalog snapshot refreshed"
        );
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

#[cfg(test)]
mod tests {
    #[test]
    fn compile_dates_are_midnight_utc_in_unix_seconds() {
        assert_eq!(super::unix_midnight("1970-01-01"), Some(0));
        assert_eq!(super::unix_midnight("2026-11-27"), Some(1_795_737_600));
        assert_eq!(super::unix_midnight("2000-03-01"), Some(951_868_800));
        assert_eq!(super::unix_midnight("2026-13-01"), None);
    }

    /// The staleness gauge reads each region's newest date: a refresh of some regions leaves
    /// it at the compile date, a refresh of every region moves it.
    #[test]
    fn the_oldest_facts_are_the_compile_date_until_every_region_is_refreshed() {
        let mut catalog = crate::model::catalog_file::CatalogFile::builtin();
        let compiled = super::Snapshot::build(1, &catalog).compiled_at_secs();
        assert!(compiled > 0);
        assert_eq!(
            super::Snapshot::build(1, &catalog).oldest_facts_secs,
            compiled
        );
        let regions = catalog.providers.iter_mut().flat_map(|p| &mut p.regions);
        let mut all: Vec<_> = regions.collect();
        for region in all.iter_mut().skip(1) {
            region.refreshed_on = Some("2027-03-01".to_owned());
        }
        assert_eq!(
            super::Snapshot::build(2, &catalog).oldest_facts_secs,
            compiled
        );
        for provider in &mut catalog.providers {
            for region in &mut provider.regions {
                region.refreshed_on = Some("2027-03-01".to_owned());
            }
        }
        assert_eq!(
            super::Snapshot::build(3, &catalog).oldest_facts_secs,
            super::unix_midnight("2027-03-01").unwrap()
        );
    }
}

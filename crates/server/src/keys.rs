//! API-key verification: digest at rest, constant-time comparison, and a short-TTL cache.
//!
//! The database holds `key_id` and the SHA-256 of the whole key. A fast hash is right here:
//! keys carry about 190 bits of CSPRNG entropy, so there is nothing for a slow password hash to
//! protect, and a slow hash per request would be a denial-of-service amplifier.
//!
//! Lookups are cached per `key_id` for a short TTL (default 10 s), so a flood of requests with
//! one key costs one query per TTL. A revocation or creation reaches every server process
//! through the change log ([`crate::change_follower`]), which drops the key from the caches within a
//! second; the TTL is the bound should that fail. Negative answers (no live key has this id) are cached apart, for at most
//! [`NEGATIVE_TTL`] and [`NEGATIVE_CACHE_BYTES`]: a repeated wrong key still costs one query per
//! period, while a flood of made-up key ids cannot hold more than that memory, nor hold it long.
//!
//! While the database cannot be asked, a key whose last successful look-up is at most
//! [`OUTAGE_GRACE`] old stays usable: the listings, served from memory, go on through an
//! outage instead of failing once cached entries expire. A look-up that finds the key revoked
//! or gone removes it from that memory at once; a revocation cannot happen while the database
//! is down, so the only key this lets through is one revoked less than the cache TTL before
//! the outage began (the same window as without an outage). While the database is known down
//! (the store's [`Availability`](crate::storage::Availability): its probe, or a request that
//! could not reach it), a look-up does not ask it: the last verified answer is used at once,
//! and a key never seen within the grace period is refused with 503 at once.
//!
//! Concurrent look-ups of one key share one attempt: the first starts the query on a task of
//! its own and the others wait for its outcome, so a burst of requests with a key whose entry
//! has just expired costs one query (and, in an outage, at most one wait) instead of one each.
//! The attempts in flight are the only entries of that map, each removed when its query ends:
//! its memory is bounded by the look-ups running, not by the keys ever seen.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use appzone_contract::ApiKey;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::model::KeyRecord;
/// Defined by storage, which writes it; re-exported so the digest keeps its old path.
pub use crate::storage::digest_hex;
use crate::storage::{Store, StoreError};

/// Who is calling: the result of a successful authentication.
#[derive(Debug, Clone)]
pub struct Caller {
    /// The verified key's record.
    pub key: Arc<KeyRecord>,
}

/// Why a presented key was refused.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// Unknown, malformed, revoked, or the secret does not match.
    #[error("invalid API key")]
    Invalid,
    /// The key could not be checked because storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Verifies keys against storage through a TTL cache. Cheap to clone (one `Arc`): cloning the
/// cache itself is not, as it reads the CPU's clock calibration (CPUID, which traps in VMs).
#[derive(Debug, Clone)]
pub struct KeyVerifier(Arc<Verifier>);

#[derive(Debug)]
struct Verifier {
    store: Store,
    /// `None` when the TTL is zero: every request reads the database.
    cache: Option<moka::sync::Cache<String, Lookup>>,
    /// Key ids no live key has; `None` when the TTL is zero.
    unknown: Option<moka::sync::Cache<String, ()>>,
    /// Live keys as last read, kept [`OUTAGE_GRACE`] after their last successful look-up,
    /// for when the database cannot be asked; `None` when the TTL is zero.
    last_known: Option<moka::sync::Cache<String, Lookup>>,
    /// The look-ups asking the database now, by key id: later ones wait for these.
    in_flight: Mutex<HashMap<String, Attempt>>,
}

/// The outcome of one look-up in the database, as every request waiting for it gets it.
type Outcome = Result<Option<Arc<KeyRecord>>, Arc<StoreError>>;

/// A look-up in flight: `None` until its query has ended.
type Attempt = tokio::sync::watch::Receiver<Option<Outcome>>;

/// How long after its last successful look-up a key stays usable while the database cannot be
/// asked.
pub const OUTAGE_GRACE: Duration = Duration::from_secs(15 * 60);

/// Longest a negative answer is cached (shorter when the key cache TTL is).
pub const NEGATIVE_TTL: Duration = Duration::from_secs(2);

/// Most memory the negative answers may take, counted as their key ids plus
/// [`NEGATIVE_ENTRY_OVERHEAD`] each: about 10,000 entries.
pub const NEGATIVE_CACHE_BYTES: u64 = 2 * 1024 * 1024;

/// What one cached negative answer costs besides its key id: the cache's node, its hash-table
/// slot and the `String` (an estimate, the same for every entry).
pub const NEGATIVE_ENTRY_OVERHEAD: u32 = 200;

/// A cached answer of the database: the live key with that id, if any.
#[derive(Debug, Clone)]
struct Lookup {
    record: Option<Arc<KeyRecord>>,
}

/// A digest no key has, compared against when the key id is unknown so that both paths do the
/// same work.
const NO_DIGEST: [u8; 32] = [0; 32];

impl KeyVerifier {
    /// A verifier caching lookups for `ttl` (zero disables the cache, and the outage grace
    /// with it).
    pub fn new(store: Store, ttl: Duration) -> Self {
        Self::with_negative_capacity(store, ttl, NEGATIVE_CACHE_BYTES)
    }

    /// [`Self::new`] with another bound on the negative answers' memory, in bytes (tests use a
    /// small one).
    pub fn with_negative_capacity(store: Store, ttl: Duration, negative_bytes: u64) -> Self {
        Self::build(store, ttl, negative_bytes)
    }

    fn build(store: Store, ttl: Duration, negative_bytes: u64) -> Self {
        let cache = (!ttl.is_zero()).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build()
        });
        let unknown = (!ttl.is_zero()).then(|| {
            moka::sync::Cache::builder()
                .weigher(|key_id: &String, _: &()| {
                    u32::try_from(key_id.len())
                        .unwrap_or(u32::MAX)
                        .saturating_add(NEGATIVE_ENTRY_OVERHEAD)
                })
                .max_capacity(negative_bytes)
                .time_to_live(ttl.min(NEGATIVE_TTL))
                .build()
        });
        let last_known = (!ttl.is_zero()).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(OUTAGE_GRACE)
                .build()
        });
        Self(Arc::new(Verifier {
            store,
            cache,
            unknown,
            last_known,
            in_flight: Mutex::default(),
        }))
    }

    /// How many negative answers are cached and the bytes they count for, after the cache's
    /// pending evictions and expiries have run.
    pub fn negative_entries(&self) -> (u64, u64) {
        self.0.unknown.as_ref().map_or((0, 0), |unknown| {
            unknown.run_pending_tasks();
            (unknown.entry_count(), unknown.weighted_size())
        })
    }

    /// Drops expired entries now (the caches otherwise do it only when used): called
    /// periodically, so memory held by a past flood of wrong keys is freed while the server
    /// is quiet.
    pub fn run_pending_tasks(&self) {
        for cache in self.0.cache.iter() {
            cache.run_pending_tasks();
        }
        for unknown in self.0.unknown.iter() {
            unknown.run_pending_tasks();
        }
        for last_known in self.0.last_known.iter() {
            last_known.run_pending_tasks();
        }
    }

    /// Forgets what is cached about `key_id` (created or revoked elsewhere): its next use reads
    /// the database. A revoked key is also dropped from the outage memory.
    pub fn forget(&self, key_id: &str) {
        for cache in [&self.0.cache, &self.0.last_known].into_iter().flatten() {
            cache.invalidate(key_id);
        }
        if let Some(unknown) = &self.0.unknown {
            unknown.invalidate(key_id);
        }
    }

    /// Checks a raw `X-API-KEY` value.
    pub async fn verify(&self, presented: &str) -> Result<Caller, AuthError> {
        let key_id = ApiKey::key_id_in(presented).map_err(|_| AuthError::Invalid)?;
        let lookup = self.lookup(key_id).await?;
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let stored = lookup.record.as_ref().map_or(&NO_DIGEST, |r| &r.digest);
        let matches = same_secret(&presented, stored);
        match lookup.record {
            Some(key) if matches => Ok(Caller { key }),
            _ => Err(AuthError::Invalid),
        }
    }

    async fn lookup(&self, key_id: &str) -> Result<Lookup, StoreError> {
        let (cache, unknown) = (self.0.cache.as_ref(), self.0.unknown.as_ref());
        if let Some(hit) = cache.and_then(|cache| cache.get(key_id)) {
            return Ok(hit);
        }
        if unknown.is_some_and(|unknown| unknown.contains_key(key_id)) {
            return Ok(Lookup { record: None });
        }
        if self.0.store.known_down() {
            // Not asked: it is known down, and trying would cost this request the pool's
            // whole acquire timeout.
            return self.during_outage(key_id, StoreError::Down);
        }
        match self.shared_attempt(key_id).await {
            Ok(record) => Ok(Lookup { record }),
            Err(err) if err.is_unavailable() => self.during_outage(key_id, StoreError::Shared(err)),
            Err(err) => Err(StoreError::Shared(err)),
        }
    }

    /// The outcome of the look-up of `key_id` in flight, or of a new one started for it.
    async fn shared_attempt(&self, key_id: &str) -> Outcome {
        let mut attempt = {
            let mut in_flight = self
                .0
                .in_flight
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match in_flight.get(key_id) {
                // Unless its task ended without sending (a panic): then a new attempt.
                Some(attempt) if attempt.has_changed().is_ok() => attempt.clone(),
                _ => {
                    let (done, attempt) = tokio::sync::watch::channel(None);
                    in_flight.insert(key_id.to_owned(), attempt.clone());
                    // On a task of its own: a request that gives up (its client gone, its
                    // timeout) does not end the attempt the others wait for.
                    let (verifier, key_id) = (self.clone(), key_id.to_owned());
                    tokio::spawn(async move {
                        let outcome = verifier.read(&key_id).await;
                        // Removed before the outcome is sent: a look-up from now on finds the
                        // caches filled, or starts a new attempt.
                        verifier
                            .0
                            .in_flight
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .remove(&key_id);
                        done.send_replace(Some(outcome));
                    });
                    attempt
                }
            }
        };
        let outcome = match attempt.wait_for(Option::is_some).await {
            Ok(outcome) => outcome.clone(),
            // The task ended without an outcome (the runtime is shutting down).
            Err(_) => None,
        };
        outcome.unwrap_or_else(|| Err(Arc::new(StoreError::Down)))
    }

    /// One look-up in the database, its answer recorded in the caches.
    async fn read(&self, key_id: &str) -> Outcome {
        let record = self
            .0
            .store
            .find_active_key(key_id)
            .await
            .map_err(Arc::new)?
            .map(Arc::new);
        let lookup = Lookup {
            record: record.clone(),
        };
        let (cache, unknown, last_known) = (
            self.0.cache.as_ref(),
            self.0.unknown.as_ref(),
            self.0.last_known.as_ref(),
        );
        match (&lookup.record, cache, unknown) {
            (Some(_), Some(cache), _) => {
                cache.insert(key_id.to_owned(), lookup.clone());
                if let Some(last_known) = last_known {
                    last_known.insert(key_id.to_owned(), lookup);
                }
            }
            (None, _, Some(unknown)) => {
                unknown.insert(key_id.to_owned(), ());
                // Revoked or gone: never let it through an outage.
                if let Some(last_known) = last_known {
                    last_known.invalidate(key_id);
                }
            }
            _ => {}
        }
        Ok(record)
    }

    /// The key as last read, when that was within [`OUTAGE_GRACE`]; else `err`.
    fn during_outage(&self, key_id: &str, err: StoreError) -> Result<Lookup, StoreError> {
        match self
            .0
            .last_known
            .as_ref()
            .and_then(|last_known| last_known.get(key_id))
        {
            // Not cached again: each request asks, and the first one after the outage reads
            // the database.
            Some(known) => Ok(known),
            None => Err(err),
        }
    }
}

/// Equality of two byte strings in time independent of their contents (not of their lengths,
/// which the key format fixes), compared a word at a time (subtle's slice comparison goes byte
/// by byte). Every comparison of secret material goes through here.
///
/// Never inlined, so that it exists under its own name in the binary: the timing test
/// (`timing::api2_wrong_key_timing_does_not_depend_on_how_much_of_the_key_matches`) counts its
/// instructions per call under callgrind, over a real connection.
#[inline(never)]
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a_words, b_words) = (a.chunks_exact(8), b.chunks_exact(8));
    let mut equal = a_words.remainder().ct_eq(b_words.remainder());
    for (x, y) in a_words.zip(b_words) {
        let word = |bytes: &[u8]| u64::from_ne_bytes(bytes.try_into().unwrap_or_default());
        equal &= word(x).ct_eq(&word(y));
    }
    equal.into()
}

#[cfg(test)]
mod tests {
    use super::same_secret;

    #[test]
    fn same_secret_compares_every_byte() {
        let key = b"apz_AbCdEfGhIjKl_0123456789abcdefghijABCDEFGHIJKL";
        assert!(same_secret(key, key));
        for i in 0..key.len() {
            let mut other = *key;
            other[i] ^= 1;
            assert!(!same_secret(key, &other), "byte {i} ignored");
        }
        assert!(!same_secret(key, &key[..key.len() - 1]));
        assert!(same_secret(b"", b""));
    }
}

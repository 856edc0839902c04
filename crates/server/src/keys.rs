//! API-key verification: digest at rest, constant-time comparison, and a short-TTL cache.
//!
//! The database holds `key_id` and the SHA-256 of the whole key. A fast hash is right here:
//! keys carry about 190 bits of CSPRNG entropy, so there is nothing for a slow password hash to
//! protect, and a slow hash per request would be a denial-of-service amplifier.
//!
//! Lookups are cached per `key_id` for a short TTL (default 10 s), negative answers included, so
//! a flood of requests with one key costs one query per TTL. Revocation therefore takes effect on
//! every replica within the TTL.

use std::sync::Arc;
use std::time::Duration;

use appzone_contract::ApiKey;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::model::KeyRecord;
use crate::storage::{Store, StoreError};

/// Lowercase hex SHA-256 of a whole key, as stored in `api_keys.digest`.
pub fn digest_hex(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

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
    cache: Option<moka::sync::Cache<String, Option<Arc<KeyRecord>>>>,
}

/// A digest no key has, compared against when the key id is unknown so that both paths do the
/// same work.
const NO_DIGEST: [u8; 32] = [0; 32];

impl KeyVerifier {
    /// A verifier caching lookups for `ttl` (zero disables the cache).
    pub fn new(store: Store, ttl: Duration) -> Self {
        let cache = (!ttl.is_zero()).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(ttl)
                .build()
        });
        Self(Arc::new(Verifier { store, cache }))
    }

    /// Checks a raw `X-API-KEY` value.
    pub async fn verify(&self, presented: &str) -> Result<Caller, AuthError> {
        let key_id = ApiKey::key_id_in(presented).map_err(|_| AuthError::Invalid)?;
        let record = self.lookup(key_id).await?;
        let presented: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let stored = record.as_ref().map_or(&NO_DIGEST, |r| &r.digest);
        let matches: bool = presented.ct_eq(stored).into();
        match record {
            Some(key) if matches => Ok(Caller { key }),
            _ => Err(AuthError::Invalid),
        }
    }

    async fn lookup(&self, key_id: &str) -> Result<Option<Arc<KeyRecord>>, StoreError> {
        let Some(cache) = &self.0.cache else {
            return Ok(self.0.store.find_active_key(key_id).await?.map(Arc::new));
        };
        if let Some(hit) = cache.get(key_id) {
            return Ok(hit);
        }
        let found = self.0.store.find_active_key(key_id).await?.map(Arc::new);
        cache.insert(key_id.to_owned(), found.clone());
        Ok(found)
    }
}

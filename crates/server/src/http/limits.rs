//! Rate limits: per API key, and per client address for failed authentication.
//!
//! Both are governor token buckets (GCRA) keyed in a concurrent map. A refused request answers
//! 429 `rate_limited` with `Retry-After` in whole seconds (at least 1). Keys seen once stay in the
//! maps until [`RateLimits::forget_idle`] drops the ones whose bucket is full again.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use appzone_contract::ErrorCode;
use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};

/// A keyed governor limiter hashing with foldhash: SipHash, the default, was half of the
/// per-key check's cost. Keys are server-made key ids and client addresses, so flooding one
/// map bucket needs no guessing either way; foldhash is seeded per process all the same.
type KeyedLimiter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K, foldhash::fast::RandomState>, DefaultClock>;

fn keyed<K: Clone + std::hash::Hash + Eq>(quota: Quota) -> Arc<KeyedLimiter<K>> {
    Arc::new(RateLimiter::dashmap_with_hasher(
        quota,
        foldhash::fast::RandomState::default(),
    ))
}

use super::error::ApiError;
use super::metrics::Metrics;

/// The two limiters; `None` where a limit is disabled.
#[derive(Debug, Clone)]
pub struct RateLimits {
    per_key: Option<Arc<KeyedLimiter<String>>>,
    auth_failures: Option<Arc<KeyedLimiter<IpAddr>>>,
    metrics: Metrics,
}

impl RateLimits {
    /// `per_key_rps` requests per second per key (burst of one second's worth) and
    /// `auth_failures_per_minute` failed authentications per address (burst of a minute's
    /// worth); `0` disables either.
    pub fn new(per_key_rps: u32, auth_failures_per_minute: u32, metrics: Metrics) -> Self {
        let per_key = NonZeroU32::new(per_key_rps).map(|rps| keyed(Quota::per_second(rps)));
        let auth_failures =
            NonZeroU32::new(auth_failures_per_minute).map(|n| keyed(Quota::per_minute(n)));
        Self {
            per_key,
            auth_failures,
            metrics,
        }
    }

    /// Takes one token for `key_id`; 429 when its bucket is empty.
    pub fn check_key(&self, key_id: &String) -> Result<(), ApiError> {
        let Some(limiter) = &self.per_key else {
            return Ok(());
        };
        limiter.check_key(key_id).map_err(|not_until| {
            self.metrics.rate_limited("key");
            refused(not_until.wait_time_from(DefaultClock::default().now()))
        })
    }

    /// Records a failed authentication from `addr`; 429 once the address is over its limit.
    pub fn auth_failed(&self, addr: IpAddr) -> Result<(), ApiError> {
        let Some(limiter) = &self.auth_failures else {
            return Ok(());
        };
        limiter.check_key(&addr).map_err(|not_until| {
            self.metrics.rate_limited("address");
            refused(not_until.wait_time_from(DefaultClock::default().now()))
        })
    }

    /// Drops state of keys and addresses whose buckets are full again, bounding memory.
    pub fn forget_idle(&self) {
        if let Some(limiter) = &self.per_key {
            limiter.retain_recent();
        }
        if let Some(limiter) = &self.auth_failures {
            limiter.retain_recent();
        }
    }
}

fn refused(wait: std::time::Duration) -> ApiError {
    let secs =
        u32::try_from(wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).unwrap_or(u32::MAX);
    ApiError::new(ErrorCode::RateLimited, "rate limit exceeded, retry later")
        .with_retry_after(secs.max(1))
}

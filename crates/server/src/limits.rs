//! Rate limits: per API key, and per client address for failed authentication, and the IETF
//! `RateLimit` / `RateLimit-Policy` headers that tell a caller where it stands.
//!
//! Both limits are governor token buckets (GCRA) keyed in a concurrent map, with a burst of one
//! window's worth: the per-key one allows `q` requests per second, the other `q` failed
//! authentications per minute. A refused request answers 429 `rate_limited` with `Retry-After`
//! in whole seconds, at least 1 (`http/auth.rs` writes that answer from [`Verdict`]). Keys seen
//! once stay in the maps until [`RateLimits::forget_idle`] drops the ones whose bucket is full
//! again.
//!
//! With a Redis URL both limits are enforced in Redis instead, one bucket per key or address
//! for all replicas ([`shared`]); a request Redis does not answer in time is decided by the
//! local bucket.
//!
//! The headers follow draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy: "per-key";q=1000;w=1`
//! names the quota, `RateLimit: "per-key";r=998;t=1` gives the requests left (`r`) and the
//! seconds until the quota is whole again (`t`). A disabled limit sends neither.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use appzone_contract::headers::{
    AUTH_FAILURES_POLICY, PER_KEY_POLICY, RATE_LIMIT, RATE_LIMIT_POLICY,
};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use http::{HeaderMap, HeaderValue};

use crate::metrics::{Metrics, RateLimitScope};

pub mod shared;

use shared::SharedLimiter;

type KeyedLimiter<K> =
    RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock, StateInformationMiddleware>;

/// One limit: its bucket per key, and its policy as the headers state it.
#[derive(Debug)]
struct Limit<K: std::hash::Hash + Eq + Clone> {
    limiter: KeyedLimiter<K>,
    /// Requests (or failures) allowed per window.
    quota: u32,
    /// The window, in seconds.
    window_secs: u32,
    name: &'static str,
    policy: HeaderValue,
    /// Which scope a 429 is counted under in the metrics.
    scope: RateLimitScope,
    /// Its prefix in Redis keys (`key`, `addr`).
    kind: &'static str,
    /// GCRA's emission interval (one unit per `t`) and burst tolerance, as governor derives
    /// them, for the shared bucket.
    t: Duration,
    tau: Duration,
}

/// What a bucket, local or shared, said to one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Allowed, with this many units left.
    Allowed { remaining: u32 },
    /// Refused; the next unit is there after `wait`.
    Refused { wait: Duration },
}

impl<K: std::hash::Hash + Eq + Clone> Limit<K> {
    fn new(
        name: &'static str,
        scope: RateLimitScope,
        kind: &'static str,
        quota: u32,
        window_secs: u32,
    ) -> Option<Self> {
        let per_window = NonZeroU32::new(quota)?;
        let governor_quota = match window_secs {
            1 => Quota::per_second(per_window),
            _ => Quota::per_minute(per_window),
        };
        let policy = format!("\"{name}\";q={quota};w={window_secs}");
        Some(Self {
            limiter: RateLimiter::dashmap(governor_quota).with_middleware(),
            quota,
            window_secs,
            name,
            policy: HeaderValue::from_str(&policy).ok()?,
            scope,
            kind,
            t: governor_quota.replenish_interval(),
            tau: governor_quota.replenish_interval() * (quota - 1),
        })
    }

    /// Takes one unit for `key` from the local bucket.
    fn take_local(&self, key: &K) -> Outcome {
        match self.limiter.check_key(key) {
            Ok(state) => Outcome::Allowed {
                remaining: state.remaining_burst_capacity(),
            },
            Err(not_until) => Outcome::Refused {
                wait: not_until.wait_time_from(self.limiter.clock().now()),
            },
        }
    }

    /// Takes one unit for `key`, from Redis when it is configured and answers, else locally.
    async fn take(&self, key: &K, shared: Option<&SharedLimiter>) -> Outcome
    where
        K: std::fmt::Display,
    {
        if let Some(shared) = shared {
            let id = key.to_string();
            if let Some(outcome) = shared.take(self.kind, &id, self.t, self.tau).await {
                return outcome;
            }
        }
        self.take_local(key)
    }

    /// The headers to send for `outcome`, and the wait to state when the bucket was empty.
    fn verdict(&self, outcome: Outcome, metrics: &Metrics) -> Verdict {
        match outcome {
            Outcome::Allowed { remaining } => Verdict {
                retry_after: None,
                headers: Some(self.headers(remaining)),
            },
            Outcome::Refused { wait } => {
                metrics.rate_limited(self.scope);
                let secs = u32::try_from(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
                    .unwrap_or(u32::MAX);
                Verdict {
                    retry_after: Some(secs.max(1)),
                    headers: Some(self.headers(0)),
                }
            }
        }
    }

    fn headers(&self, remaining: u32) -> RateLimitHeaders {
        // Seconds until the bucket is whole again: the missing units refill evenly over a window.
        let missing = u64::from(self.quota.saturating_sub(remaining));
        let reset = (missing * u64::from(self.window_secs)).div_ceil(u64::from(self.quota));
        let state = format!("\"{}\";r={remaining};t={reset}", self.name);
        RateLimitHeaders {
            policy: self.policy.clone(),
            state: HeaderValue::from_str(&state).unwrap_or(HeaderValue::from_static("")),
        }
    }
}

/// What a limit decided for one request.
#[derive(Debug)]
pub struct Verdict {
    /// When the request is over the limit, the whole seconds (at least 1) until the next unit:
    /// the 429's `Retry-After`.
    pub retry_after: Option<u32>,
    /// The `RateLimit` headers for the answer; `None` when the limit is off.
    pub headers: Option<RateLimitHeaders>,
}

impl Verdict {
    const OFF: Self = Self {
        retry_after: None,
        headers: None,
    };
}

/// The `RateLimit` and `RateLimit-Policy` values of one answer.
#[derive(Debug, Clone)]
pub struct RateLimitHeaders {
    policy: HeaderValue,
    state: HeaderValue,
}

impl RateLimitHeaders {
    /// Adds both headers to an answer.
    pub fn add_to(self, headers: &mut HeaderMap) {
        headers.insert(RATE_LIMIT_POLICY, self.policy);
        headers.insert(RATE_LIMIT, self.state);
    }
}

/// The two limits; `None` where a limit is disabled.
#[derive(Debug, Clone)]
pub struct RateLimits {
    per_key: Option<Arc<Limit<String>>>,
    auth_failures: Option<Arc<Limit<IpAddr>>>,
    /// Where both are enforced across replicas, when configured.
    shared: Option<Arc<SharedLimiter>>,
    metrics: Metrics,
}

impl RateLimits {
    /// `per_key_rps` requests per second per key (burst of one second's worth) and
    /// `auth_failures_per_minute` failed authentications per address (burst of a minute's
    /// worth); `0` disables either. Each replica counts on its own.
    pub fn new(per_key_rps: u32, auth_failures_per_minute: u32, metrics: Metrics) -> Self {
        Self {
            per_key: Limit::new(PER_KEY_POLICY, RateLimitScope::Key, "key", per_key_rps, 1)
                .map(Arc::new),
            auth_failures: Limit::new(
                AUTH_FAILURES_POLICY,
                RateLimitScope::Address,
                "addr",
                auth_failures_per_minute,
                60,
            )
            .map(Arc::new),
            shared: None,
            metrics,
        }
    }

    /// The same limits enforced in `shared` (Redis), the local buckets kept for when it fails.
    #[must_use]
    pub fn shared(mut self, shared: SharedLimiter) -> Self {
        self.shared = Some(Arc::new(shared));
        self
    }

    /// Takes one request from `key_id`'s quota.
    pub async fn check_key(&self, key_id: &String) -> Verdict {
        let Some(limit) = &self.per_key else {
            return Verdict::OFF;
        };
        let outcome = limit.take(key_id, self.shared.as_deref()).await;
        limit.verdict(outcome, &self.metrics)
    }

    /// Records a failed authentication from `addr`; a refusal once the address is over its
    /// limit.
    pub async fn auth_failed(&self, addr: IpAddr) -> Verdict {
        let Some(limit) = &self.auth_failures else {
            return Verdict::OFF;
        };
        let outcome = limit.take(&addr, self.shared.as_deref()).await;
        limit.verdict(outcome, &self.metrics)
    }

    /// Drops state of keys and addresses whose buckets are full again, bounding memory.
    pub fn forget_idle(&self) {
        if let Some(limit) = &self.per_key {
            limit.limiter.retain_recent();
        }
        if let Some(limit) = &self.auth_failures {
            limit.limiter.retain_recent();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn headers_state_the_policy_what_is_left_and_when_it_is_whole() {
        let limits = RateLimits::new(3, 60, Metrics::new());
        let key = "k".to_owned();
        let mut seen = Vec::new();
        for _ in 0..4 {
            let verdict = limits.check_key(&key).await;
            let mut headers = HeaderMap::new();
            verdict.headers.expect("on").add_to(&mut headers);
            assert_eq!(headers[RATE_LIMIT_POLICY], "\"per-key\";q=3;w=1");
            seen.push((verdict.retry_after.is_some(), headers[RATE_LIMIT].clone()));
        }
        let expected = [
            (false, "\"per-key\";r=2;t=1"),
            (false, "\"per-key\";r=1;t=1"),
            (false, "\"per-key\";r=0;t=1"),
            (true, "\"per-key\";r=0;t=1"),
        ];
        for ((refused, got), (want_refused, want)) in seen.iter().zip(expected) {
            assert_eq!((*refused, got.to_str().unwrap()), (want_refused, want));
        }
        let failed = limits.auth_failed(IpAddr::from([127, 0, 0, 1])).await;
        let mut headers = HeaderMap::new();
        failed.headers.expect("on").add_to(&mut headers);
        assert_eq!(headers[RATE_LIMIT_POLICY], "\"auth-failures\";q=60;w=60");
        assert_eq!(headers[RATE_LIMIT], "\"auth-failures\";r=59;t=1");
        let off = RateLimits::new(0, 0, Metrics::new());
        assert!(off.check_key(&key).await.headers.is_none());
    }

    /// A limit of 0 is off: no request is ever refused, however many come at once, and none
    /// gets the headers of a limit. 100,000 requests in one instant are a hundred times the
    /// default quota's burst; a limit of 1 refuses the second.
    #[tokio::test]
    async fn a_limit_of_zero_never_refuses() {
        let key = "k".to_owned();
        let addr = IpAddr::from([127, 0, 0, 1]);
        let off = RateLimits::new(0, 0, Metrics::new());
        for _ in 0..100_000 {
            let verdict = off.check_key(&key).await;
            assert!(verdict.retry_after.is_none() && verdict.headers.is_none());
            let verdict = off.auth_failed(addr).await;
            assert!(verdict.retry_after.is_none() && verdict.headers.is_none());
        }
        let one = RateLimits::new(1, 1, Metrics::new());
        assert!(one.check_key(&key).await.retry_after.is_none());
        assert!(one.check_key(&key).await.retry_after.is_some());
        assert!(one.auth_failed(addr).await.retry_after.is_none());
        assert!(one.auth_failed(addr).await.retry_after.is_some());
    }
}

//! The limits shared by every replica: the same GCRA as the local governor buckets, run in
//! Redis by one Lua script (one `EVALSHA` round trip per request, atomic, timed by Redis's own
//! clock so replicas' clocks do not matter).
//!
//! Redis is never allowed to fail a request: a call that errs or takes longer than
//! [`CALL_TIMEOUT`] falls back to the local bucket for that request, and for [`BACK_OFF`]
//! afterwards no request waits on Redis (one request then probes it again). The first failure
//! of an outage logs a warning and the first answer after it an info line; every request
//! decided locally while Redis is configured counts in `appzone_rate_limit_fallbacks_total`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisResult, Script};

use super::Outcome;
use crate::http::metrics::Metrics;
use crate::storage::redact_url;

/// The longest a request waits for Redis, by default ([`crate::ServiceConfig::redis_timeout`]).
/// Measured on loopback, on a 2-core machine busy with builds: `EVALSHA` of the GCRA script takes
/// 0.023 ms at the median, 0.071 ms at p99 and 4.2 ms at worst over 20,000 calls
/// (`redis-benchmark -c 1`), and `redis-cli --latency` saw at most 10 ms; a datacenter network
/// adds well under 1 ms. 25 ms is more than twice the worst seen, so a healthy Redis is not
/// taken for a failed one, and small next to the request timeout. During an outage only one
/// request per [`BACK_OFF`] pays it.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(25);

/// How long Redis is skipped after a failed call, so a long outage does not cost every request
/// the timeout.
pub const BACK_OFF: Duration = Duration::from_secs(1);

/// GCRA, as governor runs it (`governor::gcra`), on the theoretical arrival time stored at
/// `KEYS[1]`, in microseconds of Redis's clock. `ARGV[1]` is the emission interval `t`,
/// `ARGV[2]` the burst tolerance `tau = t * (burst - 1)`. Returns `{1, remaining, 0}` when
/// allowed, `{0, 0, wait}` when refused (`wait` in microseconds). The key expires when its
/// bucket is full again, which is the same as its absence.
const GCRA: &str = r"
local t = tonumber(ARGV[1])
local tau = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
local earliest = tat - tau
if now < earliest then
  return {0, 0, earliest - now}
end
local nxt = math.max(tat, now) + t
redis.call('SET', KEYS[1], string.format('%.0f', nxt), 'PX', math.ceil((nxt - now) / 1000) + 1)
return {1, math.floor(math.min(now + tau + t - nxt, tau + t) / t), 0}
";

/// The Redis side of [`RateLimits`](super::RateLimits).
#[derive(Debug)]
pub struct SharedLimiter {
    connection: ConnectionManager,
    script: Script,
    /// Put before `key:<key id>` and `addr:<address>`.
    prefix: String,
    /// Where Redis is, password hidden, for the logs.
    shown: String,
    /// When Redis may be tried again, in milliseconds since `epoch`; 0 while it answers.
    retry_at: AtomicU64,
    /// Whether the last call failed (an outage is under way).
    down: AtomicBool,
    /// The longest a request waits for Redis.
    timeout: Duration,
    epoch: Instant,
    metrics: Metrics,
}

impl SharedLimiter {
    /// A limiter on the Redis at `url`, its keys under `prefix`, each call bounded by
    /// `timeout`. Connects on first use, and again by itself after a lost connection; only a
    /// malformed URL is an error.
    pub fn new(url: &str, prefix: &str, timeout: Duration, metrics: Metrics) -> RedisResult<Self> {
        let config = ConnectionManagerConfig::new()
            // Our own back-off paces the retries; a request never waits for one.
            .set_number_of_retries(0)
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(None);
        let connection = ConnectionManager::new_lazy_with_config(Client::open(url)?, config)?;
        metrics.rate_limit_shared(true);
        Ok(Self {
            connection,
            script: Script::new(GCRA),
            prefix: prefix.to_owned(),
            shown: redact_url(url),
            retry_at: AtomicU64::new(0),
            down: AtomicBool::new(false),
            timeout,
            epoch: Instant::now(),
            metrics,
        })
    }

    /// Takes one unit of the bucket `kind:id` (emission interval `t`, tolerance `tau`); `None`
    /// when Redis did not answer in time, or is being skipped after a failure.
    pub async fn take(&self, kind: &str, id: &str, t: Duration, tau: Duration) -> Option<Outcome> {
        let now = self.now_ms();
        let retry_at = self.retry_at.load(Ordering::Relaxed);
        // After a failure, one request per back-off probes Redis; the others stay local.
        if retry_at != 0
            && (now < retry_at
                || self
                    .retry_at
                    .compare_exchange(
                        retry_at,
                        now + millis(BACK_OFF),
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    )
                    .is_err())
        {
            self.metrics.rate_limit_fallback();
            return None;
        }
        let mut connection = self.connection.clone();
        let mut call = self.script.key(format!("{}{kind}:{id}", self.prefix));
        call.arg(micros(t)).arg(micros(tau));
        let answer = tokio::time::timeout(
            self.timeout,
            call.invoke_async::<(i64, i64, i64)>(&mut connection),
        )
        .await;
        match answer {
            Ok(Ok((allowed, remaining, wait))) => {
                self.retry_at.store(0, Ordering::Relaxed);
                if self.down.swap(false, Ordering::Relaxed) {
                    self.metrics.rate_limit_shared(true);
                    tracing::info!(redis = %self.shown, "Redis answers again: rate limits are shared by the replicas again");
                }
                Some(if allowed == 1 {
                    Outcome::Allowed {
                        remaining: u32::try_from(remaining).unwrap_or(0),
                    }
                } else {
                    Outcome::Refused {
                        wait: Duration::from_micros(u64::try_from(wait).unwrap_or(0)),
                    }
                })
            }
            Ok(Err(err)) => self.failed(&err.to_string()),
            Err(_) => self.failed("no answer within the timeout"),
        }
    }

    fn failed(&self, error: &str) -> Option<Outcome> {
        self.retry_at
            .store(self.now_ms() + millis(BACK_OFF), Ordering::Relaxed);
        self.metrics.rate_limit_fallback();
        if !self.down.swap(true, Ordering::Relaxed) {
            self.metrics.rate_limit_shared(false);
            tracing::warn!(
                redis = %self.shown,
                error,
                timeout_ms = millis(self.timeout),
                "Redis failed: rate limits fall back to each replica's own until it answers again"
            );
        }
        None
    }

    fn now_ms(&self) -> u64 {
        // At least 1, so that 0 can mean "Redis answers".
        millis(self.epoch.elapsed()).max(1)
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

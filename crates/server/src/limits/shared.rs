//! The limits shared by every replica: the same GCRA as the local governor buckets, run in
//! Redis by one Lua script (atomic, timed by Redis's own clock so replicas' clocks do not
//! matter), the requests that arrive during one call sharing the next.
//!
//! Redis is never allowed to fail a request: a request that Redis has not decided within
//! [`CALL_TIMEOUT`] (its wait for a call already under way included), or whose call erred,
//! falls back to the local bucket, and for [`BACK_OFF`]
//! afterwards no request waits on Redis (one request then probes it again). The first failure
//! of an outage logs a warning and the first answer after it an info line; every request
//! decided locally while Redis is configured counts in `appzone_rate_limit_fallbacks_total`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisResult, Script};
use tokio::sync::{mpsc, oneshot};

use super::Outcome;
use crate::metrics::Metrics;
use crate::storage::redact_url;

/// The longest a request waits for Redis, by default ([`crate::ServiceConfig::redis_timeout`]).
/// Measured on loopback, on a 2-core machine busy with builds: `EVALSHA` of the GCRA script takes
/// 0.023 ms at the median, 0.103 ms at p99 and 5.0 ms at worst over 20,000 calls for one
/// request, the same median for one bucket of 18 (`redis-benchmark -c 1`), and
/// `redis-cli --latency` saw at most 10 ms; a datacenter network
/// adds well under 1 ms. 25 ms is more than twice the worst seen, so a healthy Redis is not
/// taken for a failed one, and small next to the request timeout. During an outage only one
/// request per [`BACK_OFF`] pays it.
pub const CALL_TIMEOUT: Duration = Duration::from_millis(25);

/// How long Redis is skipped after a failed call, so a long outage does not cost every request
/// the timeout.
pub const BACK_OFF: Duration = Duration::from_secs(1);

/// Up to this many requests' buckets go to Redis in one call.
const MAX_BATCH: usize = 128;

/// GCRA, as governor runs it (`governor::gcra`), for a batch: bucket `i` (its theoretical
/// arrival time stored at `KEYS[i]`, in microseconds of Redis's clock) is asked for `n =
/// ARGV[3i-2]` units, one per request, with emission interval `t = ARGV[3i-1]` and burst
/// tolerance `tau = ARGV[3i] = t * (burst - 1)`. Taking them one after another at the same
/// `now` grants the first `granted` and refuses the rest, so three numbers per bucket say it
/// all: `granted`, the units left after the first grant (one fewer after each next one), and
/// the wait of a refused request in microseconds. A key expires when its bucket is full again,
/// which is the same as its absence.
const GCRA: &str = r"
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000000 + tonumber(clock[2])
local out = {}
for i, key in ipairs(KEYS) do
  local n = tonumber(ARGV[3 * i - 2])
  local t = tonumber(ARGV[3 * i - 1])
  local tau = tonumber(ARGV[3 * i])
  local tat = math.max(tonumber(redis.call('GET', key)) or now, now)
  local room = now + tau - tat
  local granted = 0
  if room >= 0 then
    granted = math.min(n, math.floor(room / t) + 1)
    local nxt = tat + granted * t
    redis.call('SET', key, string.format('%.0f', nxt), 'PX', math.ceil((nxt - now) / 1000) + 1)
  end
  out[3 * i - 2] = granted
  out[3 * i - 1] = math.floor(room / t)
  out[3 * i] = granted * t - room
end
return out
";

/// The Redis side of [`RateLimits`](super::RateLimits).
///
/// Requests do not call Redis themselves: they queue their bucket for one task, which sends
/// everything queued since its last call as one `EVALSHA` of the GCRA script. While Redis is
/// quick each call carries one request; under load the requests that arrive during a call share
/// the next one, so the round trip's cost (a write and a read on each side, the script's start)
/// is paid once per batch instead of once per request. Each request still gets its own
/// decision from Redis, in arrival order.
#[derive(Debug)]
pub struct SharedLimiter {
    queue: mpsc::UnboundedSender<Take>,
    status: Arc<Status>,
    /// Put before `key:<key id>` and `addr:<address>`.
    prefix: String,
    /// The longest a request waits for Redis.
    timeout: Duration,
}

/// One request's unit to take, and where its decision goes.
#[derive(Debug)]
struct Take {
    key: String,
    t: u64,
    tau: u64,
    /// Dropped without an answer when the call failed.
    decision: oneshot::Sender<Outcome>,
}

/// Whether Redis answers, shared by the requests and the calling task.
#[derive(Debug)]
struct Status {
    /// Where Redis is, password hidden, for the logs.
    shown: String,
    /// When Redis may be tried again, in milliseconds since `epoch`; 0 while it answers.
    retry_at: AtomicU64,
    /// Whether the last call failed (an outage is under way).
    down: AtomicBool,
    timeout: Duration,
    epoch: Instant,
    metrics: Metrics,
}

impl SharedLimiter {
    /// A limiter on the Redis at `url`, its keys under `prefix`, each call bounded by
    /// `timeout`. Connects on first use, and again by itself after a lost connection; only a
    /// malformed URL is an error. Starts the task that calls Redis, which ends with the
    /// limiter.
    pub fn new(url: &str, prefix: &str, timeout: Duration, metrics: Metrics) -> RedisResult<Self> {
        let config = ConnectionManagerConfig::new()
            // Our own back-off paces the retries; a request never waits for one.
            .set_number_of_retries(0)
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(None);
        let connection = ConnectionManager::new_lazy_with_config(Client::open(url)?, config)?;
        metrics.rate_limit_shared(true);
        let status = Arc::new(Status {
            shown: redact_url(url),
            retry_at: AtomicU64::new(0),
            down: AtomicBool::new(false),
            timeout,
            epoch: Instant::now(),
            metrics,
        });
        let (queue, queued) = mpsc::unbounded_channel();
        tokio::spawn(call_redis(queued, connection, Arc::clone(&status)));
        Ok(Self {
            queue,
            status,
            prefix: prefix.to_owned(),
            timeout,
        })
    }

    /// Takes one unit of the bucket `kind:id` (emission interval `t`, tolerance `tau`); `None`
    /// when Redis did not answer in time, or is being skipped after a failure.
    pub async fn take(&self, kind: &str, id: &str, t: Duration, tau: Duration) -> Option<Outcome> {
        let status = &self.status;
        if status.skipping() {
            status.metrics.rate_limit_fallback();
            return None;
        }
        let (decision, decided) = oneshot::channel();
        let take = Take {
            key: format!("{}{kind}:{id}", self.prefix),
            t: micros(t),
            tau: micros(tau),
            decision,
        };
        // The bound covers the wait for a call already under way as well as this one's. A
        // request that gives up after its call was sent is counted in Redis and locally: the
        // error is on the side of refusing, never of admitting more than the quota.
        let outcome = match self.queue.send(take) {
            Ok(()) => tokio::time::timeout(self.timeout, decided)
                .await
                .ok()
                .and_then(Result::ok),
            Err(_) => None,
        };
        if outcome.is_none() {
            status.metrics.rate_limit_fallback();
        }
        outcome
    }
}

/// The requests of one batch that take from the same bucket, in arrival order.
struct Bucket {
    key: String,
    t: u64,
    tau: u64,
    decisions: Vec<oneshot::Sender<Outcome>>,
}

/// The task that calls Redis: everything queued since its last call goes in the next one,
/// grouped by bucket.
async fn call_redis(
    mut queued: mpsc::UnboundedReceiver<Take>,
    mut connection: ConnectionManager,
    status: Arc<Status>,
) {
    let script = Script::new(GCRA);
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while queued.recv_many(&mut batch, MAX_BATCH).await > 0 {
        let buckets = group(&mut batch);
        if buckets.is_empty() {
            continue;
        }
        let mut call = script.prepare_invoke();
        for bucket in &buckets {
            call.key(&bucket.key);
        }
        for bucket in &buckets {
            call.arg(bucket.decisions.len())
                .arg(bucket.t)
                .arg(bucket.tau);
        }
        status.metrics.rate_limit_redis_call();
        let answer = tokio::time::timeout(
            status.timeout,
            call.invoke_async::<Vec<i64>>(&mut connection),
        )
        .await;
        // After a failure, dropping the senders sends each request to its local bucket.
        match answer {
            Ok(Ok(numbers)) if numbers.len() == 3 * buckets.len() => {
                status.answered();
                for (bucket, numbers) in buckets.into_iter().zip(numbers.chunks_exact(3)) {
                    decide(bucket.decisions, numbers);
                }
            }
            Ok(Ok(numbers)) => status.failed(&format!(
                "{} numbers for {} buckets",
                numbers.len(),
                buckets.len()
            )),
            Ok(Err(err)) => status.failed(&err.to_string()),
            Err(_) => status.failed("no answer within the timeout"),
        }
    }
}

/// Empties `batch` into its buckets, in order of first arrival; a request that stopped
/// waiting has been decided locally already and is left out.
fn group(batch: &mut Vec<Take>) -> Vec<Bucket> {
    let mut buckets: Vec<Bucket> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for take in batch.drain(..) {
        if take.decision.is_closed() {
            continue;
        }
        match index.get(&take.key) {
            Some(&i) => buckets[i].decisions.push(take.decision),
            None => {
                index.insert(take.key.clone(), buckets.len());
                buckets.push(Bucket {
                    key: take.key,
                    t: take.t,
                    tau: take.tau,
                    decisions: vec![take.decision],
                });
            }
        }
    }
    buckets
}

/// Each request of a bucket its decision, from the script's three numbers for the bucket.
fn decide(decisions: Vec<oneshot::Sender<Outcome>>, numbers: &[i64]) {
    let &[granted, first_left, wait] = numbers else {
        return;
    };
    for (turn, decision) in (0..).zip(decisions) {
        let outcome = if turn < granted {
            Outcome::Allowed {
                remaining: u32::try_from(first_left - turn).unwrap_or(0),
            }
        } else {
            Outcome::Refused {
                wait: Duration::from_micros(u64::try_from(wait).unwrap_or(0)),
            }
        };
        // A request that timed out meanwhile was decided locally.
        let _ = decision.send(outcome);
    }
}

impl Status {
    /// Whether this request should not wait for Redis: after a failure, one request per
    /// back-off probes it; the others stay local.
    fn skipping(&self) -> bool {
        let now = self.now_ms();
        let retry_at = self.retry_at.load(Ordering::Relaxed);
        retry_at != 0
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
    }

    fn answered(&self) {
        self.retry_at.store(0, Ordering::Relaxed);
        if self.down.swap(false, Ordering::Relaxed) {
            self.metrics.rate_limit_shared(true);
            tracing::info!(redis = %self.shown, "Redis answers again: rate limits are shared by the replicas again");
        }
    }

    fn failed(&self, error: &str) {
        self.retry_at
            .store(self.now_ms() + millis(BACK_OFF), Ordering::Relaxed);
        if !self.down.swap(true, Ordering::Relaxed) {
            self.metrics.rate_limit_shared(false);
            tracing::warn!(
                redis = %self.shown,
                error,
                timeout_ms = millis(self.timeout),
                "Redis failed: rate limits fall back to each replica's own until it answers again"
            );
        }
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

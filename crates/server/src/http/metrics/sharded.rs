//! A counter and a latency histogram that every request updates without sharing a cache line
//! with the other cores.
//!
//! prometheus-client's `Histogram` takes a mutex per observation and its `Counter` is one
//! atomic: on the hot series (the zone listing's 200s) both cores wrote the same lines on every
//! request, and contended for the lock. Here each thread updates a shard of its own (chosen once
//! per thread, round robin), padded to its own cache lines; `/metrics` adds the shards up. The
//! exposition text is the same as prometheus-client's types give (a test compares them).
//!
//! A scrape reads the shards one after another while requests go on, so a histogram's sum may
//! be a few observations apart from its buckets; its count is the buckets' total, so it always
//! equals the `+Inf` bucket, and every value only grows.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_utils::CachePadded;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::exemplar::Exemplar;
use prometheus_client::metrics::{MetricType, TypedMetric};

/// Shards per metric: more than the threads that answer requests on most machines (tokio's
/// workers are one per core); threads beyond it share shards, which stays correct.
const SHARDS: usize = 16;

/// The shard of the calling thread.
fn shard() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    // A thread being torn down has no thread-locals left; any shard will do.
    SHARD.try_with(|s| *s).unwrap_or(0)
}

/// A monotonic counter, encoded as prometheus-client's `Counter<u64>` is.
#[derive(Debug, Clone, Default)]
pub(super) struct ShardedCounter(Arc<[CachePadded<AtomicU64>; SHARDS]>);

impl ShardedCounter {
    pub(super) fn inc(&self) {
        self.0[shard()].fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn get(&self) -> u64 {
        self.0
            .iter()
            .fold(0u64, |sum, s| sum.wrapping_add(s.load(Ordering::Relaxed)))
    }
}

impl TypedMetric for ShardedCounter {
    const TYPE: MetricType = MetricType::Counter;
}

impl EncodeMetric for ShardedCounter {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        encoder.encode_counter::<NoLabelSet, _, u64>(&self.get(), None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

/// Upper bounds of the latency buckets, in seconds (an `+Inf` bucket follows).
const BOUNDS_SECONDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];
/// The same bounds in nanoseconds, compared with each observation.
const BOUNDS_NANOS: [u64; 16] = [
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    25_000_000,
    50_000_000,
    100_000_000,
    250_000_000,
    500_000_000,
    1_000_000_000,
    2_500_000_000,
    5_000_000_000,
    10_000_000_000,
];
const BUCKETS: usize = BOUNDS_NANOS.len() + 1;

/// One thread's part of a histogram.
#[derive(Debug, Default)]
struct HistogramShard {
    /// Sum of the observations in nanoseconds: 584 years of request time before it wraps.
    sum_nanos: AtomicU64,
    /// Observations per bucket (not cumulative); the last is `+Inf`.
    buckets: [AtomicU64; BUCKETS],
}

/// A histogram of durations with the latency buckets above, encoded as prometheus-client's
/// `Histogram::new(BOUNDS_SECONDS)` is.
#[derive(Debug, Clone, Default)]
pub(super) struct ShardedHistogram(Arc<[CachePadded<HistogramShard>; SHARDS]>);

impl ShardedHistogram {
    pub(super) fn observe(&self, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BOUNDS_NANOS
            .iter()
            .position(|bound| nanos <= *bound)
            .unwrap_or(BUCKETS - 1);
        let shard = &self.0[shard()];
        shard.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        shard.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// Count, sum in seconds, and per-bucket counts with their upper bounds.
    fn totals(&self) -> (u64, f64, [(f64, u64); BUCKETS]) {
        let mut sum_nanos = 0u64;
        let mut buckets = [(f64::INFINITY, 0u64); BUCKETS];
        for (slot, bound) in buckets.iter_mut().zip(BOUNDS_SECONDS) {
            slot.0 = bound;
        }
        for shard in self.0.iter() {
            sum_nanos = sum_nanos.wrapping_add(shard.sum_nanos.load(Ordering::Relaxed));
            for (slot, n) in buckets.iter_mut().zip(&shard.buckets) {
                slot.1 = slot.1.wrapping_add(n.load(Ordering::Relaxed));
            }
        }
        let count = buckets
            .iter()
            .fold(0u64, |total, (_, n)| total.wrapping_add(*n));
        (
            count,
            Duration::from_nanos(sum_nanos).as_secs_f64(),
            buckets,
        )
    }
}

impl TypedMetric for ShardedHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for ShardedHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let (count, sum, buckets) = self.totals();
        encoder.encode_histogram::<NoLabelSet>(
            sum,
            count,
            &buckets,
            None::<&HashMap<usize, Exemplar<NoLabelSet, f64>>>,
        )
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
}

#[cfg(test)]
mod tests {
    use prometheus_client::encoding::text::encode;
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::histogram::Histogram;
    use prometheus_client::registry::Registry;

    use super::*;

    fn text(register: impl FnOnce(&mut Registry)) -> String {
        let mut registry = Registry::with_prefix("t");
        register(&mut registry);
        let mut out = String::new();
        encode(&mut out, &registry).expect("encodes");
        out
    }

    #[test]
    fn bounds_in_seconds_and_nanoseconds_agree() {
        for (seconds, nanos) in BOUNDS_SECONDS.iter().zip(BOUNDS_NANOS) {
            assert_eq!(
                Duration::from_secs_f64(*seconds).as_nanos(),
                u128::from(nanos)
            );
        }
    }

    #[test]
    fn encodes_as_prometheus_clients_own_types() {
        // Observations on every side of the bounds, from several threads.
        let observations: Vec<Duration> = [0, 1, 99_999, 100_000, 100_001, 750_000]
            .into_iter()
            .map(Duration::from_nanos)
            .chain([
                Duration::from_millis(3),
                Duration::from_secs(1),
                Duration::from_secs(11),
            ])
            .collect();
        let (ours, counter) = (ShardedHistogram::default(), ShardedCounter::default());
        let (theirs, their_counter) = (Histogram::new(BOUNDS_SECONDS), Counter::<u64>::default());
        std::thread::scope(|scope| {
            for chunk in observations.chunks(2) {
                let (ours, counter) = (&ours, &counter);
                scope.spawn(move || {
                    for d in chunk {
                        ours.observe(*d);
                        counter.inc();
                    }
                });
            }
        });
        for d in &observations {
            theirs.observe(d.as_secs_f64());
            their_counter.inc();
        }
        let expected = text(|r| {
            r.register("latency", "h", theirs);
            r.register("requests", "c", their_counter);
        });
        let actual = text(|r| {
            r.register("latency", "h", ours);
            r.register("requests", "c", counter);
        });
        assert_eq!(actual, expected);
        assert!(actual.contains("t_latency_count 9"), "{actual}");
        assert!(actual.contains("t_requests_total 9"), "{actual}");
    }
}

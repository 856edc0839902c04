//! When and how long the client waits before trying a call again.

use std::time::Duration;

use http::{HeaderMap, StatusCode};
use rand::RngExt;

/// How often and how patiently the client retries a call.
///
/// What is retried is fixed by the API's rules. A profile's `DELETE` carries an
/// `Idempotency-Key`, the same on each attempt of a call, so the server replays the first
/// attempt's outcome instead of acting twice, and it is retried whenever a `GET` is, and also
/// when the answer may have been lost. A zone mapping's `PUT` stores the same mapping however
/// often it is sent, and is retried like a `GET`. A zone mapping's `DELETE` takes no key: a
/// retry after a lost 204 would answer 404, so it is retried only where the server changed
/// nothing (see [`Client::delete_zone_mapping`](crate::Client::delete_zone_mapping)):
///
/// | failure | `GET` (`list_*`, `zone_*`), `put_zone_mapping` | `delete_profile*` | `delete_zone_mapping` |
/// |---|---|---|---|
/// | could not connect ([`Error::Connect`](crate::Error::Connect)) | retried | retried | retried |
/// | 429, 503 | retried | retried | retried |
/// | 502, 504 | retried | retried | not retried |
/// | 409 `idempotency_key_in_use` | (never answered) | retried | (never answered) |
/// | any other status | not retried | not retried | not retried |
/// | timeout, connection dropped after connecting | not retried | retried | not retried |
///
/// All attempts of one call together are bounded by the client's operation timeout
/// ([`ClientBuilder::operation_timeout`](crate::ClientBuilder::operation_timeout)): no retry
/// starts once it would begin after that bound, and an attempt still running when it ends is
/// cut short.
///
/// Between attempts the client waits a jittered exponential backoff: before retry `n` (1-based)
/// a random duration between half and all of `min(max_backoff, base_backoff * 2^(n-1))`. When the
/// answer carries `Retry-After` in the seconds form, the client waits at least that long. A
/// `Retry-After` longer than [`max_retry_after`](RetryPolicy::max_retry_after) ends the retries:
/// the error is returned at once (with [`ApiError::retry_after`](crate::ApiError::retry_after)
/// set) rather than blocking the caller for longer than it allowed, or retrying earlier than the
/// server asked. The HTTP-date form of `Retry-After` is ignored (plain backoff applies).
///
/// Every attempt of one call sends the same `X-Request-Id` (and, for a profile's `DELETE`, the
/// same `Idempotency-Key`; for a `PUT`, the same body).
///
/// ```
/// use std::time::Duration;
/// use appzone_client::RetryPolicy;
///
/// let policy = RetryPolicy::default()
///     .with_max_attempts(5)
///     .with_backoff(Duration::from_millis(50), Duration::from_secs(1))
///     .with_max_retry_after(Duration::from_secs(5));
/// assert_eq!(policy.max_attempts(), 5);
/// assert_eq!(RetryPolicy::none().max_attempts(), 1);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_backoff: Duration,
    max_backoff: Duration,
    max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// 3 attempts in total, backoff from 200 ms up to 2 s, `Retry-After` honoured up to 10 s.
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base_backoff: Duration::from_millis(200),
            max_backoff: Duration::from_secs(2),
            max_retry_after: Duration::from_secs(10),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries: one attempt per call.
    pub fn none() -> Self {
        Self::default().with_max_attempts(1)
    }

    /// Sets the number of attempts per call, the first one included. `0` is treated as `1`.
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// Sets the backoff before the first retry (`base`) and the longest backoff (`max`). A `max`
    /// below `base` is raised to `base`.
    pub fn with_backoff(mut self, base: Duration, max: Duration) -> Self {
        self.base_backoff = base;
        self.max_backoff = max.max(base);
        self
    }

    /// Sets the longest `Retry-After` the client waits for; a longer one ends the retries.
    pub fn with_max_retry_after(mut self, max: Duration) -> Self {
        self.max_retry_after = max;
        self
    }

    /// The number of attempts per call, the first one included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff before the first retry.
    pub fn base_backoff(&self) -> Duration {
        self.base_backoff
    }

    /// The longest backoff between two attempts (a `Retry-After` may ask for longer).
    pub fn max_backoff(&self) -> Duration {
        self.max_backoff
    }

    /// The longest `Retry-After` the client waits for.
    pub fn max_retry_after(&self) -> Duration {
        self.max_retry_after
    }

    /// The jittered backoff before retry number `retry` (1-based).
    pub(crate) fn backoff(&self, retry: u32) -> Duration {
        let exponent = retry.saturating_sub(1).min(20);
        let ceiling = self
            .base_backoff
            .saturating_mul(1u32 << exponent)
            .min(self.max_backoff);
        let ceiling_nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        if ceiling_nanos == 0 {
            return Duration::ZERO;
        }
        Duration::from_nanos(rand::rng().random_range(ceiling_nanos / 2..=ceiling_nanos))
    }

    /// How long to wait before the next attempt after an answer that may be retried, or `None`
    /// when its `Retry-After` is beyond the cap.
    pub(crate) fn delay(&self, retry: u32, retry_after: Option<Duration>) -> Option<Duration> {
        let backoff = self.backoff(retry);
        match retry_after {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(wait.max(backoff)),
            None => Some(backoff),
        }
    }
}

/// The statuses a `GET` is retried on, and that [`Error::is_retryable`](crate::Error) reports.
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
    )
}

/// The `Retry-After` header in its seconds form; `None` when absent or in another form.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers
        .get(http::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    value.parse::<u64>().ok().map(Duration::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_exponentially_within_the_jitter_band_and_the_cap() {
        let policy =
            RetryPolicy::default().with_backoff(Duration::from_millis(100), Duration::from_secs(1));
        for _ in 0..100 {
            let first = policy.backoff(1);
            assert!((Duration::from_millis(50)..=Duration::from_millis(100)).contains(&first));
            let third = policy.backoff(3);
            assert!((Duration::from_millis(200)..=Duration::from_millis(400)).contains(&third));
            let late = policy.backoff(40);
            assert!((Duration::from_millis(500)..=Duration::from_secs(1)).contains(&late));
        }
        assert_eq!(
            RetryPolicy::default()
                .with_backoff(Duration::ZERO, Duration::ZERO)
                .backoff(1),
            Duration::ZERO
        );
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let policy = RetryPolicy::default()
            .with_backoff(Duration::from_millis(10), Duration::from_millis(10))
            .with_max_retry_after(Duration::from_secs(5));
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(2))),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            policy.delay(1, Some(Duration::from_secs(5))),
            Some(Duration::from_secs(5))
        );
        assert_eq!(policy.delay(1, Some(Duration::from_secs(6))), None);
        let zero = policy.delay(1, Some(Duration::ZERO)).unwrap_or_default();
        assert!(
            zero >= Duration::from_millis(5),
            "backoff still applies: {zero:?}"
        );
    }

    #[test]
    fn retry_after_reads_the_seconds_form_only() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static(" 7 "),
        );
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(7)));
        headers.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
        headers.insert(
            http::header::RETRY_AFTER,
            http::HeaderValue::from_static("-1"),
        );
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn zero_attempts_means_one() {
        assert_eq!(
            RetryPolicy::default().with_max_attempts(0).max_attempts(),
            1
        );
    }
}

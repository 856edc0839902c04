//! [`ClientBuilder`]: the settings of a [`Client`], checked when it is built.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use http::HeaderValue;

use super::{Client, Inner, DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT};
use crate::{deprecation, Error, RetryPolicy};

/// A string that `Debug` never shows.
struct Secret(String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Builds a [`Client`] with non-default settings. Made by [`Client::builder`].
///
/// ```
/// use std::time::Duration;
/// use appzone_client::{Client, RetryPolicy};
///
/// let client = Client::builder("http://127.0.0.1:8080", "apz_...")
///     .timeout(Duration::from_secs(10))
///     .connect_timeout(Duration::from_secs(2))
///     .retry_policy(RetryPolicy::default().with_max_attempts(5))
///     .user_agent("inventory-sync/1.4")
///     .build()?;
/// assert_eq!(client.timeout(), Duration::from_secs(10));
/// assert!(!format!("{client:?}").contains("apz_..."));
/// # Ok::<(), appzone_client::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ClientBuilder {
    base_url: String,
    api_key: Secret,
    timeout: Duration,
    /// `None`: derived from `timeout` and `retry` in `build`.
    operation_timeout: Option<Duration>,
    connect_timeout: Duration,
    retry: RetryPolicy,
    user_agent: Option<String>,
    http: Option<reqwest::Client>,
}

impl ClientBuilder {
    /// The timeout of each attempt, from connecting until the last byte of the answer
    /// (default [`DEFAULT_TIMEOUT`]). It applies to a custom [`reqwest::Client`] too.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The bound on all attempts of one call together, the waits between them included: once
    /// it has elapsed the call returns its last error rather than try again, and an attempt
    /// running when it ends is cut short ([`Error::Timeout`], naming this duration).
    ///
    /// By default it is derived so that it never ends a call before the [`RetryPolicy`] would:
    /// the [per-attempt timeout](ClientBuilder::timeout) times the attempts, plus the longest
    /// wait ([`RetryPolicy::max_backoff`] or [`RetryPolicy::max_retry_after`], whichever is
    /// longer) before each retry. With the defaults that is 30 s × 3 + 2 × 10 s = 110 s. Set a
    /// shorter one when the caller has a deadline of its own:
    ///
    /// ```
    /// use std::time::Duration;
    /// use appzone_client::{Client, RetryPolicy};
    ///
    /// let client = Client::builder("http://127.0.0.1:8080", "apz_...")
    ///     .timeout(Duration::from_secs(5))
    ///     .retry_policy(RetryPolicy::default().with_max_attempts(10))
    ///     .operation_timeout(Duration::from_secs(20))
    ///     .build()?;
    /// assert_eq!(client.operation_timeout(), Duration::from_secs(20));
    ///
    /// let default = Client::new("http://127.0.0.1:8080", "apz_...")?;
    /// assert_eq!(default.operation_timeout(), Duration::from_secs(110));
    /// # Ok::<(), appzone_client::Error>(())
    /// ```
    pub fn operation_timeout(mut self, timeout: Duration) -> Self {
        self.operation_timeout = Some(timeout);
        self
    }

    /// The connect timeout (default [`DEFAULT_CONNECT_TIMEOUT`]). Ignored with a custom
    /// [`reqwest::Client`], which keeps its own.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// The retry policy (default [`RetryPolicy::default`]: 3 attempts).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// The `User-Agent` header (default [`DEFAULT_USER_AGENT`]). Include your application's
    /// name and version, it helps the operators.
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = Some(user_agent.into());
        self
    }

    /// Sends requests with this [`reqwest::Client`] instead of one the builder makes (to share a
    /// connection pool, or to set proxies and root certificates).
    ///
    /// The builder's own client does not follow redirects, because a redirect to another host
    /// would carry the `X-API-KEY` header there; configure yours the same way
    /// (`redirect(reqwest::redirect::Policy::none())`). The connect timeout of the builder does
    /// not apply to it; the request timeout does.
    pub fn http_client(mut self, client: reqwest::Client) -> Self {
        self.http = Some(client);
        self
    }

    /// Builds the client. See [`Client::new`] for the errors.
    pub fn build(self) -> Result<Client, Error> {
        let base_url = parse_base_url(&self.base_url)?;
        let key = self.api_key.0;
        if key.trim().is_empty() {
            return Err(Error::invalid("API key", "it is empty"));
        }
        let mut api_key = HeaderValue::from_str(&key).map_err(|_| {
            Error::invalid(
                "API key",
                "it contains characters that cannot be sent in an HTTP header",
            )
        })?;
        api_key.set_sensitive(true);
        let user_agent = self.user_agent.as_deref().unwrap_or(DEFAULT_USER_AGENT);
        let user_agent =
            HeaderValue::from_str(user_agent).map_err(|e| Error::invalid("user agent", e))?;
        let http = match self.http {
            Some(http) => http,
            None => reqwest::Client::builder()
                .connect_timeout(self.connect_timeout)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| Error::invalid("HTTP client", e))?,
        };
        let operation_timeout = self
            .operation_timeout
            .unwrap_or_else(|| default_operation_timeout(self.timeout, &self.retry));
        Ok(Client {
            inner: Arc::new(Inner {
                http,
                base_url,
                api_key,
                user_agent,
                timeout: self.timeout,
                operation_timeout,
                retry: self.retry,
                deprecations: deprecation::Seen::default(),
            }),
        })
    }
}

impl ClientBuilder {
    /// The builder [`Client::builder`] returns: the default settings for `base_url` and
    /// `api_key` (checked only in [`build`](ClientBuilder::build)).
    pub(super) fn with_defaults(base_url: String, api_key: String) -> Self {
        ClientBuilder {
            base_url,
            api_key: Secret(api_key),
            timeout: DEFAULT_TIMEOUT,
            operation_timeout: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            user_agent: None,
            http: None,
        }
    }
}

/// The operation timeout when none is set: long enough for every attempt the policy allows to
/// take its whole timeout, with the longest wait before each retry, so that by default the
/// policy alone decides when a call ends (as before the operation timeout existed).
fn default_operation_timeout(timeout: Duration, retry: &RetryPolicy) -> Duration {
    let attempts = retry.max_attempts();
    let longest_wait = retry.max_backoff().max(retry.max_retry_after());
    timeout
        .saturating_mul(attempts)
        .saturating_add(longest_wait.saturating_mul(attempts.saturating_sub(1)))
}

/// Checks a base URL and returns it without a trailing slash.
fn parse_base_url(raw: &str) -> Result<String, Error> {
    let url = reqwest::Url::parse(raw.trim()).map_err(|e| Error::invalid("base URL", e))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Error::invalid(
            "base URL",
            "the scheme must be http or https",
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Error::invalid(
            "base URL",
            "it must not contain credentials (the API key goes in X-API-KEY)",
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(Error::invalid(
            "base URL",
            "it must not have a query or a fragment",
        ));
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_checked_and_normalized() {
        let ok = |raw: &str| parse_base_url(raw).ok();
        assert_eq!(
            ok("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            ok("http://127.0.0.1:8080/").as_deref(),
            Some("http://127.0.0.1:8080")
        );
        assert_eq!(
            ok("https://h.example/appzone/").as_deref(),
            Some("https://h.example/appzone")
        );
        assert_eq!(
            ok(" http://h.example ").as_deref(),
            Some("http://h.example")
        );
        for bad in [
            "",
            "127.0.0.1:8080",
            "ftp://h",
            "http://u:p@h",
            "http://h/?x=1",
            "http://h/#f",
        ] {
            assert!(ok(bad).is_none(), "{bad}");
        }
    }
}

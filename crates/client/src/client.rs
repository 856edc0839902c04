//! The client and its builder.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use appzone_contract::headers::{
    is_valid_request_id, API_KEY, IDEMPOTENCY_KEY, IDEMPOTENT_REPLAYED, REQUEST_ID,
};
use appzone_contract::{
    paths, ErrorBody, ErrorCode, ProfileId, ProviderId, ProviderList, RegionId, RegionList,
    ZoneList,
};
use http::header::{ACCEPT, USER_AGENT};
use http::{HeaderValue, Method, StatusCode};

use crate::conditional::{self, Conditional, ExtraHeader};
use crate::deprecation::{self, DeprecationNotice};
use crate::error::{ApiError, DecodeError, DisplayDuration};
use crate::idempotency::{self, DeleteOutcome};
use crate::retry::{is_retryable_status, retry_after};
use crate::{request_id, Error, IntoApiKey, IntoId, RetryPolicy};

/// The `User-Agent` the client sends unless told otherwise: `appzone-client/<version>`.
pub const DEFAULT_USER_AGENT: &str = concat!("appzone-client/", env!("CARGO_PKG_VERSION"));

/// The default request timeout: 30 seconds per attempt, from connecting to the last body byte.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default connect timeout: 5 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The most body bytes the client reads from one answer (4 MiB). A longer success body is a
/// [`Error::Decode`]; a longer error body is cut (its excerpt is all the client keeps anyway).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The most characters of a body quoted in an error.
const EXCERPT_CHARS: usize = 200;

/// An async client of the appzone API.
///
/// Cheap to clone (the clones share one connection pool), and safe to share between tasks. Build
/// one with [`Client::new`] or [`Client::builder`], then call
/// [`list_providers`](Client::list_providers), [`list_regions`](Client::list_regions),
/// [`list_zones`](Client::list_zones) or [`delete_profile`](Client::delete_profile).
///
/// `Debug` shows the base URL and the settings, never the API key.
///
/// ```no_run
/// # async fn run() -> Result<(), appzone_client::Error> {
/// let client = appzone_client::Client::new("http://127.0.0.1:8080", "apz_...")?;
/// let zones = client.list_zones("aws", "us-east-1").await?;
/// println!("{}", zones.data.join(", "));
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    http: reqwest::Client,
    /// The base URL without a trailing slash; contract paths start with `/`.
    base_url: String,
    /// Marked sensitive.
    api_key: HeaderValue,
    user_agent: HeaderValue,
    timeout: Duration,
    /// The bound on all attempts of one call, waits included.
    operation_timeout: Duration,
    retry: RetryPolicy,
    /// The deprecated operations the server named in its answers.
    deprecations: deprecation::Seen,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("api_key", &"<redacted>")
            .field("user_agent", &self.inner.user_agent)
            .field("timeout", &self.inner.timeout)
            .field("operation_timeout", &self.inner.operation_timeout)
            .field("retry", &self.inner.retry)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client of the API at `base_url` (such as `http://127.0.0.1:8080`, or
    /// `https://example.com/appzone` behind a path prefix) with the default settings.
    ///
    /// Fails with [`Error::InvalidArgument`] when the base URL is not an `http` or `https` URL
    /// (or carries credentials, a query or a fragment), or when the key is blank or cannot be
    /// sent in an HTTP header. The error never contains the key.
    pub fn new(base_url: impl Into<String>, api_key: impl IntoApiKey) -> Result<Self, Error> {
        Self::builder(base_url, api_key).build()
    }

    /// A builder, to change the timeouts, the retry policy, the user agent or the HTTP client.
    pub fn builder(base_url: impl Into<String>, api_key: impl IntoApiKey) -> ClientBuilder {
        ClientBuilder {
            base_url: base_url.into(),
            api_key: Secret(api_key.into_secret()),
            timeout: DEFAULT_TIMEOUT,
            operation_timeout: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            retry: RetryPolicy::default(),
            user_agent: None,
            http: None,
        }
    }

    /// The base URL requests go to, without a trailing slash.
    pub fn base_url(&self) -> &str {
        &self.inner.base_url
    }

    /// The request timeout of each attempt.
    pub fn timeout(&self) -> Duration {
        self.inner.timeout
    }

    /// The bound on all attempts of one call together, the waits between them included: the
    /// one set with [`ClientBuilder::operation_timeout`], or the default derived from the
    /// per-attempt timeout and the retry policy (see there).
    pub fn operation_timeout(&self) -> Duration {
        self.inner.operation_timeout
    }

    /// The retry policy.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.inner.retry
    }

    /// The deprecated operations this client (and its clones) called, one notice per
    /// operation in the order first seen, with the dates the server gave: the operation still
    /// works until its [`sunset`](DeprecationNotice::sunset). The client also logs a warning
    /// (through `tracing`) the first time it sees each. Empty while the server deprecates
    /// nothing the client called.
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), appzone_client::Error> {
    /// client.list_zones("aws", "us-east-1").await?;
    /// for notice in client.deprecations() {
    ///     eprintln!("{} is deprecated; sunset: {:?}", notice.operation, notice.sunset);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn deprecations(&self) -> Vec<DeprecationNotice> {
        self.inner.deprecations.all()
    }

    /// Lists the providers of the catalog, in catalog order (`GET /api/v1/providers`).
    ///
    /// Each id in [`ProviderList::data`] is a provider id to pass to
    /// [`list_regions`](Client::list_regions) or [`list_zones`](Client::list_zones).
    ///
    /// Retried on connect failures and on 429, 502, 503 and 504 (see [`RetryPolicy`]). The
    /// answer is read tolerantly: `id`, `message` and `status` may be missing (they are then
    /// empty), so other implementations of the interface work too.
    ///
    /// Typical errors: 401 ([`Error::is_unauthorized`]), 429 `rate_limited`
    /// ([`Error::is_retryable`]), and [`Error::Decode`] when the base URL points at something
    /// other than the appzone API.
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), appzone_client::Error> {
    /// for provider in client.list_providers().await?.data {
    ///     println!("{provider}");
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_providers(&self) -> Result<ProviderList, Error> {
        self.get_listing(paths::LIST_PROVIDERS).await
    }

    /// Lists the regions of `provider`, in catalog order (`GET`).
    ///
    /// `provider` is a [`ProviderId`] or a string; a string that breaks the identifier rule
    /// fails with [`Error::InvalidArgument`] before any request is sent. Each id in
    /// [`RegionList::data`] is a region id to pass to [`list_zones`](Client::list_zones).
    ///
    /// Retried on connect failures and on 429, 502, 503 and 504 (see [`RetryPolicy`]). The
    /// answer is read tolerantly: `id`, `message` and `status` may be missing (they are then
    /// empty), so other implementations of the interface work too.
    ///
    /// Typical errors: 400 `invalid_provider` (unknown provider; the message names the closest
    /// known id, or points at [`list_providers`](Client::list_providers)), 401
    /// ([`Error::is_unauthorized`]).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), appzone_client::Error> {
    /// let regions = client.list_regions("aws").await?;
    /// println!("{}", regions.data.join(", "));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn list_regions(
        &self,
        provider: impl IntoId<ProviderId>,
    ) -> Result<RegionList, Error> {
        self.get_listing(&regions_path(provider)?).await
    }

    /// Lists the zones of `region` of `provider`, in catalog order (`GET`).
    ///
    /// `provider` and `region` are [`ProviderId`]/[`RegionId`] values or strings; a string that
    /// breaks the identifier rule fails with [`Error::InvalidArgument`] before any request is
    /// sent. A region without zones gives an empty list.
    ///
    /// Retried on connect failures and on 429, 502, 503 and 504 (see [`RetryPolicy`]). The
    /// answer is read tolerantly: `id`, `message` and `status` may be missing (they are then
    /// empty), so other implementations of the interface work too.
    ///
    /// Typical errors: 400 `invalid_provider` (unknown provider), 404 `region_not_found`
    /// ([`Error::is_not_found`]), 401 ([`Error::is_unauthorized`]).
    pub async fn list_zones(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
    ) -> Result<ZoneList, Error> {
        self.get_listing(&zones_path(provider, region)?).await
    }

    /// `GET`s a listing at `path` and decodes it as `T` ([`read_listing`]): the shared code of
    /// the three listings.
    async fn get_listing<T: Listing>(&self, path: &str) -> Result<T, Error> {
        let answer = self.listing_answer::<T>(path, None).await?;
        read_listing(answer).map(|(listing, _etag)| listing)
    }

    /// The answer to a `GET` of listing `T` at `path` (with `extra`, a conditional listing's
    /// `If-None-Match`), its deprecation headers noted.
    async fn listing_answer<T: Listing>(
        &self,
        path: &str,
        extra: Option<&ExtraHeader>,
    ) -> Result<Answer, Error> {
        let answer = self.call_with(Method::GET, path, extra, false).await?;
        self.inner
            .deprecations
            .note(T::OPERATION, answer.deprecation.as_ref());
        Ok(answer)
    }

    /// Deletes the application profile `id` (`DELETE`). `Ok(())` means the server answered 2xx
    /// (the contract's 204): the profile is deleted, by this call or, when the answer was a
    /// replay, by an earlier attempt of it whose answer was lost.
    ///
    /// `id` is a [`ProfileId`] or a string. **A malformed id is answered locally:** no profile
    /// can have it, and the contract answers it with 404 `profile_not_found`, so the client
    /// returns [`Error::ProfileNotFound`] without sending a request, and
    /// [`Error::is_not_found`] is true just as for the server's answer.
    ///
    /// Every call sends a fresh `Idempotency-Key` ([`new_idempotency_key`](crate::new_idempotency_key)),
    /// the same on each of its attempts, so the call is retried like a `GET` and more: on
    /// connect failures, timeouts and broken connections, on 429, 502, 503 and 504, and on 409
    /// `idempotency_key_in_use` (an earlier attempt still running), honouring `Retry-After`,
    /// within the [`RetryPolicy`] and the [operation timeout](ClientBuilder::operation_timeout).
    /// A retry after a lost answer gets the first attempt's outcome replayed (a 204 marked
    /// `Idempotent-Replayed: true`), not a 404, so a 404 always means the profile was not there.
    /// (A server older than contract 1.1 ignores the key; there, a retry after a lost answer
    /// can answer 404.) Use [`delete_profile_with_key`](Client::delete_profile_with_key) to keep
    /// the key across calls or restarts, or to learn whether the answer was a replay.
    ///
    /// Typical errors: 404 `profile_not_found` ([`Error::is_not_found`]; also for another
    /// organization's profile), 403 `forbidden` for a `member` key ([`Error::is_forbidden`]).
    pub async fn delete_profile(&self, id: impl IntoId<ProfileId>) -> Result<(), Error> {
        self.delete_profile_with_key(id, &idempotency::new_idempotency_key())
            .await
            .map(drop)
    }

    /// Deletes the application profile `id` (`DELETE`) with the caller's `Idempotency-Key`,
    /// and tells what the answer said: [`DeleteOutcome::replayed`] is true when the server
    /// repeated the 204 of an earlier request with this key rather than deleting now.
    ///
    /// Retried as [`delete_profile`](Client::delete_profile) is, every attempt with `key`. Use
    /// one key per deletion, the same for every try of it, also across process restarts (store
    /// it before the first try; [`new_idempotency_key`](crate::new_idempotency_key) makes one):
    /// for 24 hours the server answers a repeat with the first outcome (204, or 404 when there
    /// was no such profile), marked `Idempotent-Replayed: true`.
    ///
    /// `key` must be what the contract accepts ([`appzone_contract::headers::idempotency_key`]:
    /// 1 to 255 visible ASCII characters, optionally in double quotes, which are not part of
    /// the key); anything else is an [`Error::InvalidArgument`] naming `idempotency key`,
    /// before anything is sent. A malformed `id` is [`Error::ProfileNotFound`], as for
    /// [`delete_profile`](Client::delete_profile).
    ///
    /// Errors besides those of [`delete_profile`](Client::delete_profile): 422
    /// `idempotency_key_reused` when the key was used for another profile within 24 hours
    /// (`error_code().map(ErrorCode::as_str) == Some(ErrorCode::IDEMPOTENCY_KEY_REUSED)`),
    /// and 409 `idempotency_key_in_use` when an earlier request with the key was still running
    /// after the last attempt ([`Error::is_retryable`] is true).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), appzone_client::Error> {
    /// use appzone_client::ErrorCode;
    ///
    /// // Kept with the job, so that a run after a crash retries with the same key.
    /// let key = appzone_client::new_idempotency_key();
    /// match client.delete_profile_with_key("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2", &key).await {
    ///     Ok(outcome) if outcome.replayed => println!("deleted (by an earlier try)"),
    ///     Ok(_) => println!("deleted"),
    ///     Err(e) if e.is_not_found() => println!("no such profile"),
    ///     Err(e) if e.error_code().map(ErrorCode::as_str) == Some(ErrorCode::IDEMPOTENCY_KEY_REUSED) => {
    ///         println!("this key was used for another profile: make a new one")
    ///     }
    ///     Err(e) => return Err(e),
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn delete_profile_with_key(
        &self,
        id: impl IntoId<ProfileId>,
        key: &str,
    ) -> Result<DeleteOutcome, Error> {
        let id = id
            .into_id()
            .map_err(|source| Error::ProfileNotFound { source })?;
        let (key, value) = idempotency::header_value(key)?;
        let header = (IDEMPOTENCY_KEY, value);
        // With the key, an attempt that may have reached the server can be sent again: the
        // server replays its outcome instead of acting twice.
        let answer = self
            .call_with(
                Method::DELETE,
                &paths::delete_profile(&id),
                Some(&header),
                true,
            )
            .await?;
        self.inner
            .deprecations
            .note("deleteApplicationProfile", answer.deprecation.as_ref());
        if answer.status.is_success() {
            Ok(DeleteOutcome {
                idempotency_key: key,
                replayed: answer.replayed,
                request_id: answer.request_id,
                attempts: answer.attempts,
            })
        } else {
            Err(answer.into_api_error())
        }
    }

    /// Sends one call with one extra request header on every attempt (a conditional listing's
    /// `If-None-Match`, a delete's `Idempotency-Key`), retrying as the policy allows within the
    /// operation timeout, and reads the final answer.
    ///
    /// Connect failures and retryable answers ([`Answer::may_retry`]) are retried for any
    /// method; timeouts and broken connections only when `resend` says a request that may have
    /// reached the server can safely be sent again.
    async fn call_with(
        &self,
        method: Method,
        path: &str,
        extra: Option<&ExtraHeader>,
        resend: bool,
    ) -> Result<Answer, Error> {
        let url = format!("{}{}", self.inner.base_url, path);
        let request_id = request_id::generate();
        let request_id_value =
            HeaderValue::from_str(&request_id).map_err(|e| Error::invalid("request id", e))?;
        let policy = &self.inner.retry;
        // `None` when the bound is too far away to represent: no deadline then.
        let deadline = Instant::now().checked_add(self.inner.operation_timeout);
        let mut attempt = 1;
        loop {
            let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let limit = match remaining {
                Some(remaining) if remaining < self.inner.timeout => AttemptLimit {
                    timeout: remaining,
                    reported: self.inner.operation_timeout,
                },
                _ => AttemptLimit {
                    timeout: self.inner.timeout,
                    reported: self.inner.timeout,
                },
            };
            let result = self
                .attempt(&method, &url, &request_id, &request_id_value, extra, limit)
                .await;
            let may_retry = match &result {
                Err(Error::Connect { .. }) => true,
                Err(Error::Timeout { .. } | Error::Transport { .. }) => resend,
                Ok(answer) => answer.may_retry(),
                Err(_) => false,
            };
            let delay = match &result {
                _ if !may_retry || attempt >= policy.max_attempts() => None,
                Ok(answer) => policy.delay(attempt, answer.retry_after),
                Err(_) => policy.delay(attempt, None),
            };
            // A wait that would end at or after the deadline leaves no time for the attempt
            // after it: return what there is now rather than sleep for nothing.
            let delay = delay.filter(|delay| match deadline {
                Some(deadline) => Instant::now()
                    .checked_add(*delay)
                    .is_some_and(|wake| wake < deadline),
                None => true,
            });
            match delay {
                Some(delay) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => {
                    let mut result = result;
                    match &mut result {
                        Ok(answer) => answer.attempts = attempt,
                        Err(
                            Error::Connect { attempts, .. }
                            | Error::Timeout { attempts, .. }
                            | Error::Transport { attempts, .. },
                        ) => *attempts = attempt,
                        Err(_) => {}
                    }
                    return result;
                }
            }
        }
    }

    /// One attempt: send the request and read the answer's body.
    async fn attempt(
        &self,
        method: &Method,
        url: &str,
        request_id: &str,
        request_id_value: &HeaderValue,
        extra: Option<&ExtraHeader>,
        limit: AttemptLimit,
    ) -> Result<Answer, Error> {
        let inner = &self.inner;
        let failed = |source: reqwest::Error| {
            let (method, url, request_id) = (method.clone(), url.to_owned(), request_id.to_owned());
            if source.is_builder() {
                Error::invalid("request", source)
            } else if source.is_connect() {
                Error::Connect {
                    method,
                    url,
                    request_id,
                    attempts: 1,
                    source,
                }
            } else if source.is_timeout() {
                Error::Timeout {
                    method,
                    url,
                    timeout: limit.reported,
                    request_id,
                    attempts: 1,
                    source,
                }
            } else {
                Error::Transport {
                    method,
                    url,
                    request_id,
                    attempts: 1,
                    source,
                }
            }
        };
        let mut response = inner
            .http
            .request(method.clone(), url)
            .header(API_KEY, inner.api_key.clone())
            .header(REQUEST_ID, request_id_value.clone())
            .header(USER_AGENT, inner.user_agent.clone())
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .headers(conditional::extra_headers(extra))
            .timeout(limit.timeout)
            .send()
            .await
            .map_err(failed)?;
        let status = response.status();
        let headers = std::mem::take(response.headers_mut());
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            let room = MAX_BODY_BYTES - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let answered_id = headers
            .get(REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .filter(|v| is_valid_request_id(v))
            .unwrap_or(request_id)
            .to_owned();
        Ok(Answer {
            method: method.clone(),
            url: url.to_owned(),
            status,
            retry_after: retry_after(&headers),
            deprecation: deprecation::read(&headers),
            etag: conditional::etag_of(&headers),
            replayed: headers
                .get(IDEMPOTENT_REPLAYED)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
            request_id: answered_id,
            body,
            truncated,
            attempts: 1,
        })
    }
}

/// A listing body: the provider, region and zone lists, which share one envelope and are read
/// by [`Client::get_listing`].
pub(crate) trait Listing: Sized {
    /// What the body is, in a decode error's reason: `not a zone list: ...`.
    const NAME: &'static str;

    /// The `operationId` of the operation answering it.
    const OPERATION: &'static str;

    /// Decodes the body (tolerantly: the contract's types default the missing fields).
    fn decode(body: &[u8]) -> Result<Self, serde_json::Error>;
}

/// Implements [`Listing`] for contract types, each with its name for decode errors.
macro_rules! listing {
    ($($list:ty => $name:literal, $operation:literal);+ $(;)?) => {$(
        impl Listing for $list {
            const NAME: &'static str = $name;
            const OPERATION: &'static str = $operation;

            fn decode(body: &[u8]) -> Result<Self, serde_json::Error> {
                serde_json::from_slice(body)
            }
        }
    )+};
}

listing!(
    ProviderList => "provider list", "listProviders";
    RegionList => "region list", "listRegions";
    ZoneList => "zone list", "listZones";
);

/// How long one attempt may take, and the timeout an [`Error::Timeout`] names when it elapses:
/// the per-attempt timeout, or what is left of the operation timeout when that is shorter (the
/// error then names the operation timeout, the bound that ended the call).
#[derive(Debug, Clone, Copy)]
struct AttemptLimit {
    timeout: Duration,
    reported: Duration,
}

/// A complete answer: status, the parts of the headers the client uses, and the body.
struct Answer {
    method: Method,
    url: String,
    status: StatusCode,
    retry_after: Option<Duration>,
    /// The `Deprecation` and `Sunset` headers, when the operation is deprecated.
    deprecation: Option<(String, Option<String>)>,
    /// The `ETag`, for a conditional listing.
    etag: Option<String>,
    /// `Idempotent-Replayed: true`: the server repeated an earlier outcome for the same key.
    replayed: bool,
    request_id: String,
    body: Vec<u8>,
    truncated: bool,
    attempts: u32,
}

impl Answer {
    /// Whether the same request may get another answer later: 429, 502, 503 and 504, and 409
    /// `idempotency_key_in_use` (an earlier request with the key is still running; its outcome
    /// will be replayed once it ends). Any other 409 is not retried.
    fn may_retry(&self) -> bool {
        is_retryable_status(self.status)
            || (self.status == StatusCode::CONFLICT
                && serde_json::from_slice::<ErrorBody>(&self.body).is_ok_and(|body| {
                    body.error_code.as_str() == ErrorCode::IDEMPOTENCY_KEY_IN_USE
                }))
    }

    fn into_api_error(self) -> Error {
        let (code, message) = match serde_json::from_slice::<ErrorBody>(&self.body) {
            Ok(body) => (Some(body.error_code), body.error),
            Err(_) if self.body.iter().all(u8::is_ascii_whitespace) => {
                (None, "the answer has no error body".to_owned())
            }
            Err(_) => (
                None,
                format!("not an appzone error body: {:?}", excerpt(&self.body)),
            ),
        };
        Error::from(ApiError {
            method: self.method,
            url: self.url,
            status: self.status,
            code,
            message,
            request_id: self.request_id,
            retry_after: self.retry_after,
            attempts: self.attempts,
        })
    }

    fn into_decode_error(self, reason: String) -> Error {
        Error::Decode(Box::new(DecodeError {
            body_excerpt: excerpt(&self.body),
            method: self.method,
            url: self.url,
            status: self.status,
            reason,
            request_id: self.request_id,
        }))
    }
}

/// The start of a body on one line: at most [`EXCERPT_CHARS`] characters, control characters
/// replaced by spaces, `…` when cut.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut chars = text.trim().chars();
    let mut out: String = chars
        .by_ref()
        .take(EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

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

impl fmt::Display for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "appzone client for {} (timeout {}, {} attempts)",
            self.inner.base_url,
            DisplayDuration(self.inner.timeout),
            self.inner.retry.max_attempts()
        )
    }
}

// The conditional listings (see crate::conditional): the part that needs the call machinery.
impl Client {
    /// `GET`s a listing at `path` with `If-None-Match: etag` when `etag` is `Some`: 304 is
    /// [`Conditional::NotModified`], 2xx is decoded as [`get_listing`](Client::get_listing)
    /// does, any other status is an [`Error::Api`].
    pub(crate) async fn get_listing_if_changed<T: Listing>(
        &self,
        path: &str,
        etag: Option<&str>,
    ) -> Result<Conditional<T>, Error> {
        let extra = etag.map(conditional::if_none_match).transpose()?;
        let answer = self.listing_answer::<T>(path, extra.as_ref()).await?;
        if answer.status == StatusCode::NOT_MODIFIED {
            return Ok(Conditional::NotModified);
        }
        read_listing(answer).map(|(listing, etag)| Conditional::Modified { listing, etag })
    }
}

/// The path of `provider`'s region listing; a malformed id is an [`Error::InvalidArgument`].
pub(crate) fn regions_path(provider: impl IntoId<ProviderId>) -> Result<String, Error> {
    let provider = provider
        .into_id()
        .map_err(|e| Error::invalid("argument", e))?;
    Ok(paths::list_regions(&provider))
}

/// The path of the zone listing of `region` of `provider`; a malformed id is an
/// [`Error::InvalidArgument`].
pub(crate) fn zones_path(
    provider: impl IntoId<ProviderId>,
    region: impl IntoId<RegionId>,
) -> Result<String, Error> {
    let provider = provider
        .into_id()
        .map_err(|e| Error::invalid("argument", e))?;
    let region = region
        .into_id()
        .map_err(|e| Error::invalid("argument", e))?;
    Ok(paths::list_zones(&provider, &region))
}

/// A listing's answer as the listing and its `ETag`: a non-2xx answer is an [`Error::Api`]; a
/// 2xx body longer than [`MAX_BODY_BYTES`] or not decodable as `T` is an [`Error::Decode`]
/// (reason `not a <T::NAME>: ...`).
fn read_listing<T: Listing>(answer: Answer) -> Result<(T, Option<String>), Error> {
    if !answer.status.is_success() {
        return Err(answer.into_api_error());
    }
    if answer.truncated {
        let reason = format!("the body is longer than {MAX_BODY_BYTES} bytes");
        return Err(answer.into_decode_error(reason));
    }
    match T::decode(&answer.body) {
        Ok(listing) => Ok((listing, answer.etag)),
        Err(e) => Err(answer.into_decode_error(format!("not a {}: {e}", T::NAME))),
    }
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

    #[test]
    fn excerpts_are_short_single_lines() {
        assert_eq!(
            excerpt(b"  <h1>Bad\nGateway</h1>\r\n"),
            "<h1>Bad Gateway</h1>"
        );
        let long = "x".repeat(500);
        let cut = excerpt(long.as_bytes());
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt(&[0xff, b'a']), "\u{fffd}a");
    }
}

//! The client: [`Client`], its settings and its operations (the listings, the profile delete,
//! the zone identities and the zone mappings).
//! The submodules:
//!
//! - `builder`: [`ClientBuilder`] and the checks of its settings;
//! - `call`: one call's attempts, retried as the policy allows within the operation timeout,
//!   and one attempt's complete answer;
//! - `listing`: what the listings share (decoding, reading an answer, their paths);
//! - `zone_mappings`: the zone mappings' operations, a second `impl` block of `Client`;
//! - `offerings`: what runs where (the instance-type listing), a third `impl` block.
//!
//! Its other public methods, but the conditional listings, are in one `impl` block here. The
//! conditional listings (`crate::conditional`) build on these modules; nothing here depends on
//! them, so the imports go one way.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use appzone_contract::headers::IDEMPOTENCY_KEY;
use appzone_contract::{
    paths, ProfileId, ProviderId, ProviderList, RegionId, RegionList, ZoneIdentityList,
    ZoneIdentityQuery, ZoneList, ZoneMappingId,
};
use http::{HeaderValue, Method};

use crate::deprecation::{self, DeprecationNotice};
use crate::error::DisplayDuration;
use crate::idempotency::{self, DeleteOutcome};
use crate::{Error, IntoApiKey, IntoId, RetryPolicy};
use call::{Answer, Resend};

mod builder;
mod call;
mod listing;
mod offerings;
mod zone_mappings;

pub use builder::ClientBuilder;
// For the conditional listings, which send `If-None-Match` through the same calls.
pub(crate) use call::ExtraHeader;
pub(crate) use listing::{
    instance_types_path, read_listing, regions_path, zone_identities_path,
    zone_identities_query_path, zones_path, Listing,
};

/// The `User-Agent` the client sends unless told otherwise: `appzone-client/<version>`.
pub const DEFAULT_USER_AGENT: &str = concat!("appzone-client/", env!("CARGO_PKG_VERSION"));

/// The default request timeout: 30 seconds per attempt, from connecting to the last body byte.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The default connect timeout: 5 seconds.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An async client of the appzone API.
///
/// Cheap to clone (the clones share one connection pool), and safe to share between tasks. Build
/// one with [`Client::new`] or [`Client::builder`], then call
/// [`list_providers`](Client::list_providers), [`list_regions`](Client::list_regions),
/// [`list_zones`](Client::list_zones), [`zone_identities`](Client::zone_identities), the zone
/// mappings' [`put_zone_mapping`](Client::put_zone_mapping),
/// [`zone_mappings`](Client::zone_mappings), [`zone_mapping`](Client::zone_mapping) and
/// [`delete_zone_mapping`](Client::delete_zone_mapping), what runs where
/// ([`instance_types`](Client::instance_types)), or
/// [`delete_profile`](Client::delete_profile).
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
        ClientBuilder::with_defaults(base_url.into(), api_key.into_secret())
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

    /// Lists the zones of `region` of `provider` with their identities, in catalog order
    /// (`GET .../zone-identities`), with the names of the caller's zone mapping `mapping` when
    /// given (`?mapping=`).
    ///
    /// A zone name is not always a place: in 8 old AWS regions `us-east-1a` is another zone in
    /// each account, and Azure shuffles its logical zones `1`, `2`, `3` per subscription. Each
    /// [`ZoneIdentity`](crate::ZoneIdentity) pairs the account-independent
    /// [`zone_id`](crate::ZoneIdentity::zone_id) (`use1-az1`, `eastus-az1`) with the
    /// [`zone_name`](crate::ZoneIdentity::zone_name) the caller deploys with, which is `None`
    /// where the catalog cannot know it for this caller: never guessed. Store your cloud's
    /// output with [`put_zone_mapping`](Client::put_zone_mapping) and pass its id as `mapping`
    /// to see your names; [`ZoneIdentityList::mapping`] then names the mapping applied. The
    /// sets [`NameScope`](crate::NameScope), [`ZoneType`](crate::ZoneType) and
    /// [`Visibility`](crate::Visibility) are open: a value added later arrives as `Other`.
    ///
    /// `provider` and `region` are ids or strings, checked as for
    /// [`list_zones`](Client::list_zones). Retried as the other listings are (connect
    /// failures, 429, 502, 503, 504), and read as tolerantly (`id`, `message`, `status` may be
    /// missing; `mapping` then is `None`, `source` empty). A region without zones gives an
    /// empty list. [`zone_identities_if_changed`](Client::zone_identities_if_changed) sends an
    /// `ETag` back.
    ///
    /// Typical errors: those of [`list_zones`](Client::list_zones) (400 `invalid_provider`, 404
    /// `region_not_found`), then for `mapping` 404 `zone_mapping_not_found` (no such mapping in
    /// the caller's organization; [`Error::is_not_found`]) and 422 `invalid_zone_mapping` (a
    /// mapping of another provider).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use appzone_client::ZoneMappingId;
    ///
    /// let prod: ZoneMappingId = "prod".parse()?;
    /// let zones = client.zone_identities("aws", "us-east-1", Some(&prod)).await?;
    /// for zone in &zones.data {
    ///     let name = zone.zone_name.as_deref().unwrap_or("-");
    ///     println!("{} {name} ({})", zone.zone_id, zone.name_scope);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn zone_identities(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
        mapping: Option<&ZoneMappingId>,
    ) -> Result<ZoneIdentityList, Error> {
        self.get_listing(&zone_identities_path(provider, region, mapping)?)
            .await
    }

    /// Lists the zone identities of `region` of `provider` as `query` asks: several zone
    /// mappings side by side, and filters by zone type, id, name and the instance types offered
    /// (`GET .../zone-identities?mapping=a&mapping=b&zone_type=...&zone_id=...&zone_name=...`
    /// `&offers=...`).
    ///
    /// As [`zone_identities`](Client::zone_identities), which asks for one mapping or none.
    /// With several mappings, each [`ZoneIdentity::names`](crate::ZoneIdentity::names) gives the
    /// zone's name in each, in the order asked, and
    /// [`ZoneIdentityList::mappings`] lists them; `zone_name` is the first one's. A filter that
    /// matches nothing gives an empty list.
    ///
    /// [`ZoneIdentityQuery::offers`](crate::ZoneIdentityQuery::offers) keeps the zones where
    /// every mapping asked offers every instance type listed (at most
    /// [`MAX_OFFERS_PER_QUERY`](crate::MAX_OFFERS_PER_QUERY)), from the offerings stored with
    /// the mappings ([`put_zone_mapping`](Client::put_zone_mapping)): "where can I run
    /// `p5.48xlarge` in prod and in staging" is one request. It needs at least one mapping.
    ///
    /// Beside the errors of [`zone_identities`](Client::zone_identities): 400 `invalid_query`
    /// ([`ErrorCode::INVALID_QUERY`](crate::ErrorCode::INVALID_QUERY)) for a malformed filter
    /// value, a mapping asked twice, more than 10 mappings, or `offers` without a mapping; 422
    /// `offerings_not_stored`
    /// ([`ErrorCode::OFFERINGS_NOT_STORED`](crate::ErrorCode::OFFERINGS_NOT_STORED)) when
    /// `offers` is given and a mapping asked holds no offerings for the region (the message
    /// names it, and the command that prints them).
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use appzone_client::ZoneIdentityQuery;
    ///
    /// // Which zone in account b is account a's us-east-1a?
    /// let query = ZoneIdentityQuery::default()
    ///     .mapping("a".parse()?)
    ///     .mapping("b".parse()?)
    ///     .zone_name("us-east-1a");
    /// let zones = client.zone_identities_with("aws", "us-east-1", &query).await?;
    /// for zone in &zones.data {
    ///     let in_b = zone.names.get(1).and_then(|n| n.zone_name.as_deref());
    ///     println!("{}: {}", zone.zone_id, in_b.unwrap_or("-"));
    /// }
    ///
    /// // Where can both accounts run p5.48xlarge, and what does each call those zones?
    /// let query = ZoneIdentityQuery::default()
    ///     .mapping("a".parse()?)
    ///     .mapping("b".parse()?)
    ///     .offers("p5.48xlarge");
    /// for zone in client.zone_identities_with("aws", "us-east-1", &query).await?.data {
    ///     let names: Vec<&str> =
    ///         zone.names.iter().map(|n| n.zone_name.as_deref().unwrap_or("-")).collect();
    ///     println!("{}: {}", zone.zone_id, names.join(" / "));
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn zone_identities_with(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
        query: &ZoneIdentityQuery,
    ) -> Result<ZoneIdentityList, Error> {
        self.get_listing(&zone_identities_query_path(provider, region, query)?)
            .await
    }

    /// `GET`s a listing at `path` and decodes it as `T` ([`read_listing`]): the shared code of
    /// the listings and of reading one zone mapping.
    async fn get_listing<T: Listing>(&self, path: &str) -> Result<T, Error> {
        let answer = self.listing_answer::<T>(path, None).await?;
        read_listing(answer).map(|(listing, _etag)| listing)
    }

    /// The answer to a `GET` of listing `T` at `path` (with `extra`, a conditional listing's
    /// `If-None-Match`), its deprecation headers noted.
    pub(crate) async fn listing_answer<T: Listing>(
        &self,
        path: &str,
        extra: Option<&ExtraHeader>,
    ) -> Result<Answer, Error> {
        let answer = self
            .call_with(Method::GET, path, extra, None, Resend::OnRetryableStatus)
            .await?;
        self.inner
            .deprecations
            .note(T::OPERATION, answer.deprecation.as_ref());
        Ok(answer)
    }

    /// Deletes the application profile `id` (`DELETE`). `Ok(())` means the server answered 2xx
    /// (the API's 204): the profile is deleted, by this call or, when the answer was a
    /// replay, by an earlier attempt of it whose answer was lost.
    ///
    /// `id` is a [`ProfileId`] or a string. **A malformed id is answered locally:** no profile
    /// can have it, and the server answers it with 404 `profile_not_found`, so the client
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
    /// (A server older than API version 1.1 ignores the key; there, a retry after a lost answer
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
    /// `key` must be what the API accepts: 1 to 255 visible ASCII characters, optionally in
    /// double quotes, which are not part of the key; anything else is an [`Error::InvalidArgument`] naming `idempotency key`,
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
                None,
                Resend::EvenIfReceived,
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

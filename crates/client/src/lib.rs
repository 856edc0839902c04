//! A typed async client of the appzone API.
//!
//! The appzone API lists the catalog's cloud providers, their regions and the zones of a
//! region, with each zone's account-independent identity; it stores an organization's zone
//! mappings (its own zone names, from its cloud's CLI output, and what each account may launch
//! where), and deletes application profiles. This crate calls it with [`reqwest`] (rustls, no
//! OpenSSL). Its paths, header names and types come from the crate the server is built on too,
//! so client and server cannot drift apart; everything a caller needs is re-exported here.
//!
//! # Example
//!
//! ```no_run
//! use appzone_client::Client;
//!
//! # async fn run() -> Result<(), appzone_client::Error> {
//! let client = Client::new("http://127.0.0.1:8080", std::env::var("APPZONE_API_KEY").unwrap_or_default())?;
//!
//! // GET /api/v1/providers, then GET /api/v1/providers/aws/regions
//! let providers = client.list_providers().await?;
//! println!("providers: {}", providers.data.join(", "));
//! let regions = client.list_regions("aws").await?;
//! println!("aws has {} regions", regions.data.len());
//!
//! // GET /api/v1/providers/aws/regions/us-east-1/zones
//! let zones = client.list_zones("aws", "us-east-1").await?;
//! for zone in &zones.data {
//!     println!("{zone}");
//! }
//!
//! // GET /api/v1/providers/aws/regions/us-east-1/zone-identities: use1-az1 and the like, with
//! // the names that hold for every account (none in us-east-1: its names are per account).
//! let identities = client.zone_identities("aws", "us-east-1", None).await?;
//! for zone in &identities.data {
//!     println!("{} {}", zone.zone_id, zone.zone_name.as_deref().unwrap_or("-"));
//! }
//!
//! // GET /api/v1/providers/aws/regions/us-east-1/instance-types?mapping=prod: what the account
//! // of zone mapping prod may launch where (its offerings, stored with put_zone_mapping).
//! let prod = "prod".parse().expect("a zone mapping id");
//! for offered in client.instance_types("aws", "us-east-1", &prod, None).await?.data {
//!     println!("{}: {}", offered.instance_type, offered.zone_ids.join(","));
//! }
//!
//! // DELETE /api/v1/applications/profiles/prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2
//! match client.delete_profile("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2").await {
//!     Ok(()) => println!("deleted"),
//!     Err(e) if e.is_not_found() => println!("already gone"),
//!     Err(e) if e.is_forbidden() => println!("ask your organization admin: {e}"),
//!     Err(e) => return Err(e),
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Arguments
//!
//! The methods take the identifier types [`ProviderId`], [`RegionId`] and [`ProfileId`], or
//! strings, through [`IntoId`]. A string that breaks the API's identifier rule is refused
//! before any request is sent, with the answer the server would give: a malformed provider or
//! region id is an [`Error::InvalidArgument`] whose [`Error::error_code`] is `invalid_provider`
//! or `invalid_region` (status 400), and a malformed profile id an [`Error::ProfileNotFound`]
//! with `profile_not_found` (404), since no profile can have such an id. The zone-mapping
//! methods take a [`ZoneMappingId`], which only holds a well-formed id (parse one with
//! `"prod".parse()`; a malformed one fails there with a [`ZoneMappingIdError`]).
//!
//! # Errors
//!
//! One [`Error`] type. To act on what an error means, use its helpers, which give the same
//! answer whether the client found the mistake before sending or the server answered it:
//! [`Error::error_code`] (an [`ErrorCode`]; codes this version does not know arrive as
//! [`ErrorCode::Other`]), [`Error::status`], [`Error::is_not_found`], [`Error::is_forbidden`],
//! [`Error::is_unauthorized`], [`Error::is_retryable`] and [`Error::request_id`]. The variants
//! say where the answer came from: the API ([`Error::Api`], an [`ApiError`] with the status,
//! code, message, request id and `Retry-After`), no connection ([`Error::Connect`]), a broken
//! connection ([`Error::Transport`]), a timeout ([`Error::Timeout`]), an undecodable success
//! answer ([`Error::Decode`], a [`DecodeError`]), or a local refusal ([`Error::InvalidArgument`],
//! [`Error::ProfileNotFound`]). Variants and their structs are `#[non_exhaustive]`: match them
//! with `..`. The API key never appears in `Debug` or `Display` of the client, its builder or
//! any error.
//!
//! # Retries and timeouts
//!
//! `GET` (and the `PUT` of a zone mapping, which stores the same mapping however often it is
//! sent, gzip-compressed when its JSON is over 1 MiB) is retried on connect failures and on
//! 429, 502, 503 and 504, with jittered exponential backoff and honouring `Retry-After`. A
//! profile's `DELETE` sends an `Idempotency-Key` (a fresh UUID per call, the same on each of its
//! attempts; [`new_idempotency_key`]) and is retried like `GET`, and also after a timeout or a broken connection and on 409 `idempotency_key_in_use`: the
//! server replays the first attempt's outcome to a retry with the same key (marked
//! `Idempotent-Replayed: true`) instead of deleting again, so a retry after a lost answer gets
//! the 204, not a 404. [`Client::delete_profile_with_key`] takes a key of the caller's (to keep
//! it across restarts) and returns a [`DeleteOutcome`] telling whether the answer was a replay.
//! Every attempt of one call sends the same `X-Request-Id` (a new ULID-shaped id per call). The
//! defaults are 3 attempts, a 30 s timeout per attempt and a 5 s connect timeout; an operation
//! timeout bounds all attempts of a call together (by default 110 s, derived so that it never
//! ends a call before the policy would; set it with [`ClientBuilder::operation_timeout`]). See
//! [`RetryPolicy`] and [`ClientBuilder`].
//!
//! A zone mapping's `DELETE` takes no `Idempotency-Key`, so a retry after a lost 204 would
//! answer 404: it is retried only where the server changed nothing (connect failures, 429,
//! 503), never after a timeout, a broken connection, a 502 or a 504. See
//! [`Client::delete_zone_mapping`].
//!
//! # Conditional listings
//!
//! The server answers each catalog listing with a weak `ETag`.
//! [`Client::list_providers_if_changed`], [`Client::list_regions_if_changed`],
//! [`Client::list_zones_if_changed`], [`Client::zone_identities_if_changed`] and
//! [`Client::instance_types_if_changed`] send a tag kept
//! from an earlier answer in `If-None-Match` and return a [`Conditional`]: the listing with its
//! new tag, or [`Conditional::NotModified`] when the server answered `304 Not Modified` (no
//! body; not an error).
//!
//! # Tolerant reading
//!
//! A listing ([`ProviderList`], [`RegionList`], [`ZoneList`], [`ZoneIdentityList`],
//! [`InstanceTypeList`], [`ZoneMappingList`]) or a [`ZoneMappingAnswer`] missing `id`, `message` or `status` decodes
//! (they are then empty strings), and any 2xx answers a delete. An error answer
//! whose body is not the API's JSON error body (an HTML page of a proxy, an empty 403 from
//! another implementation) is still an [`Error::Api`] with its status; its [`ApiError::code`] is `None`
//! and its message quotes the start of the body. So the client also works against other
//! implementations of the same API.
//!
//! # The `appzone` command line and the conformance kit
//!
//! The `appzone` command is this crate's binary behind the feature `cli` (`cargo install --path
//! crates/client --features cli` from a checkout); the library does not depend on it. The
//! API's conformance checks it runs are the crate appzone-conformance since 2.0.0 (formerly
//! `appzone_client::conformance`, with the same names). [`exit_code`], the classes of failure
//! the command exits with, is the library's, for programs built on the client that exit the
//! same way.

#![warn(missing_docs)]

mod args;
mod client;
mod conditional;
mod deprecation;
mod error;
mod idempotency;
mod mappings;
mod request_id;
mod retry;

/// The zone-identity listing and the zone mappings (API 1.2).
pub use appzone_contract::{
    is_valid_account, AppliedMapping, CatalogSource, MappedName, MappedRegion, MappedZone,
    NameScope, OptIn, SkippedZone, SourceReference, Visibility, ZoneIdentity, ZoneIdentityList,
    ZoneIdentityQuery, ZoneMapping, ZoneMappingAnswer, ZoneMappingId, ZoneMappingIdError,
    ZoneMappingList, ZoneMappingRequest, ZoneMappingSummary, ZoneType, ZoneTypes,
    MAX_MAPPINGS_PER_LISTING, MAX_ZONE_MAPPING_BYTES, MAX_ZONE_MAPPING_OUTPUT_BYTES,
};
/// What runs where: instance-type offerings stored with zone mappings (API 1.3).
pub use appzone_contract::{
    is_valid_instance_type, InstanceTypeList, InstanceTypeZones, RegionOfferings,
    MAX_INSTANCE_TYPE_CHARS, MAX_OFFERS_PER_QUERY,
};
pub use appzone_contract::{
    ApiKey, ErrorCode, IdError, ProfileId, ProviderId, ProviderList, RegionId, RegionList, ZoneList,
};
/// The HTTP types that [`ApiError`], [`DecodeError`] and [`Error::status`] use.
pub use http::{Method, StatusCode};

pub use args::{IntoApiKey, IntoId};
pub use client::{
    Client, ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT,
};
pub use conditional::Conditional;
pub use deprecation::DeprecationNotice;
pub use error::{ApiError, DecodeError, Error};
pub use idempotency::{new_idempotency_key, DeleteOutcome};
pub use mappings::PutOutcome;
pub use retry::RetryPolicy;

/// Exit codes of the `appzone` command line (feature `cli`): one
/// [`TABLE`](exit_code::TABLE), shared with the operator's `appzone-server` (which uses 0, 1
/// and 2 of it), shown by `appzone --help` (which is generated from it) and in this crate's
/// README (a test compares them).
///
/// A class of failure has one code, whether the command line found it before sending anything
/// or the server answered it: a malformed provider id refused locally and the server's 400
/// `invalid_provider` both exit with [`INVALID_INPUT`](exit_code::INVALID_INPUT); a missing API
/// key and the server's 401 both exit with [`UNAUTHORIZED`](exit_code::UNAUTHORIZED).
///
/// Public so that programs built on this client can exit as `appzone` does, and scripts written
/// in Rust can name its codes; `appzone` maps [`Error`]s to them with [`exit_code::for_error`].
pub mod exit_code {
    use appzone_contract::ErrorCode;
    use http::StatusCode;

    use crate::{ApiError, Error};

    use appzone_contract::exit_code as shared;

    /// Success.
    pub const OK: u8 = shared::OK;
    /// The command failed for a reason not classed below (stdout could not be written).
    pub const FAILURE: u8 = shared::FAILURE;
    /// The command line could not be parsed. See [`TABLE`].
    pub const USAGE: u8 = shared::USAGE;
    /// No API key was given, or the server answered 401.
    pub const UNAUTHORIZED: u8 = shared::UNAUTHORIZED;
    /// The server answered 403.
    pub const FORBIDDEN: u8 = shared::FORBIDDEN;
    /// The server answered 404 for the region, the profile or the zone mapping.
    pub const NOT_FOUND: u8 = shared::NOT_FOUND;
    /// A malformed id or an unusable file refused before sending, or the server answered 400
    /// (or 413, or 422 `invalid_zone_mapping` or `offerings_not_stored`).
    pub const INVALID_INPUT: u8 = shared::INVALID_INPUT;
    /// The answer was not the appzone API's; the base URL is probably wrong.
    pub const UNEXPECTED_ANSWER: u8 = shared::UNEXPECTED_ANSWER;
    /// Any other answer of the API (429, 5xx, ...).
    pub const API: u8 = shared::API;
    /// No answer: could not connect, the connection broke, or the request timed out.
    pub const TRANSPORT: u8 = shared::TRANSPORT;

    /// One exit code and what it means, as `--help` and the README show it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    #[non_exhaustive]
    pub struct Row {
        /// The exit code.
        pub code: u8,
        /// One line: the class, a colon, then what falls in it.
        pub meaning: &'static str,
    }

    /// The rows of the table `appzone` and `appzone-server` share.
    const ROWS: [Row; shared::TABLE.len()] = {
        let mut rows = [Row {
            code: 0,
            meaning: "",
        }; shared::TABLE.len()];
        let mut i = 0;
        while i < rows.len() {
            rows[i] = Row {
                code: shared::TABLE[i].code,
                meaning: shared::TABLE[i].meaning,
            };
            i += 1;
        }
        rows
    };

    /// Every exit code of `appzone`, in order. `appzone --help` prints these rows; the README's
    /// table must hold the same ones. Each meaning fits one line of a 100-column terminal.
    pub const TABLE: &[Row] = &ROWS;

    /// The exit code the command line uses for `error`.
    ///
    /// Classes go by what the caller should do next, so the same failure gets the same code
    /// wherever it was found. A malformed profile id is invalid input even though the contract
    /// answers it with 404 `profile_not_found` ([`Error::ProfileNotFound`]): a script deleting
    /// profiles must be able to tell "already gone" from "you passed garbage". For the same
    /// reason a 413 `payload_too_large`, a 422 `invalid_zone_mapping` (a zone mapping the
    /// catalog contradicts) and a 422 `offerings_not_stored` (offerings asked of a mapping that
    /// holds none for the region) are invalid input, like a 400: the same input would be refused
    /// again. Any other 422 (`idempotency_key_reused`) stays [`API`].
    pub fn for_error(error: &Error) -> u8 {
        match error {
            Error::Api(api) => for_api_error(api),
            Error::Connect { .. } | Error::Transport { .. } | Error::Timeout { .. } => TRANSPORT,
            Error::InvalidArgument { .. } | Error::ProfileNotFound { .. } => INVALID_INPUT,
            Error::Decode(_) => UNEXPECTED_ANSWER,
        }
    }

    fn for_api_error(api: &ApiError) -> u8 {
        match (api.status, &api.code) {
            // Decided by the status alone: an empty 401 or 403 still means the key (the seed
            // interface allows such answers), and a proxy's 502 page still means "try later".
            (StatusCode::UNAUTHORIZED, _) => UNAUTHORIZED,
            (StatusCode::FORBIDDEN, _) => FORBIDDEN,
            (status, _) if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() => {
                API
            }
            // Any other answer without the contract's error body did not come from the appzone
            // API: an HTML 404 of another server, a proxy's 400, a redirect.
            (_, None) => UNEXPECTED_ANSWER,
            // The appzone server's "no such route": the base URL points at the wrong path.
            (StatusCode::NOT_FOUND, Some(ErrorCode::NotFound)) => UNEXPECTED_ANSWER,
            (StatusCode::NOT_FOUND, Some(_)) => NOT_FOUND,
            (StatusCode::BAD_REQUEST, Some(_)) => INVALID_INPUT,
            // The input itself is refused, as with a 400: a zone-mapping body over the limit
            // (which the client also refuses before sending, with this code), or a mapping the
            // catalog contradicts. Trying again later would get the same answer.
            (StatusCode::PAYLOAD_TOO_LARGE, Some(_)) => INVALID_INPUT,
            (StatusCode::UNPROCESSABLE_ENTITY, Some(code))
                if code.as_str() == ErrorCode::INVALID_ZONE_MAPPING
                    || code.as_str() == ErrorCode::OFFERINGS_NOT_STORED =>
            {
                INVALID_INPUT
            }
            _ => API,
        }
    }
}

/// The README's examples, compiled and checked as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The consumer example of docs/CLIENTS.md, compiled and checked as a doctest.
#[doc = include_str!("../../../docs/CLIENTS.md")]
#[cfg(doctest)]
pub struct WorkspaceReadmeDoctests;

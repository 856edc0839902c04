//! A typed async client of the appzone API, and the `appzone` command line.
//!
//! The appzone API lists the zones of a cloud provider's region and deletes application
//! profiles. This crate calls it with [`reqwest`] (rustls, no OpenSSL). Requests are built from
//! the [`appzone_contract`] crate's paths, header names and wire types, the same ones the server
//! routes with, so client and server cannot drift apart.
//!
//! # Example
//!
//! ```no_run
//! use appzone_client::Client;
//!
//! # async fn run() -> Result<(), appzone_client::Error> {
//! let client = Client::new("http://127.0.0.1:8080", std::env::var("APPZONE_API_KEY").unwrap_or_default())?;
//!
//! // GET /api/v1/providers/aws/regions/us-east-1/zones
//! let zones = client.list_zones("aws", "us-east-1").await?;
//! for zone in &zones.data {
//!     println!("{zone}");
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
//! The methods take the contract's identifier types ([`ProviderId`], [`RegionId`],
//! [`ProfileId`]) or strings, through [`IntoId`]. A string that breaks the identifier rule is
//! rejected before any request is sent: [`Error::InvalidArgument`] for a provider or region, and
//! [`Error::ProfileNotFound`] for a profile (the contract answers a malformed profile id with
//! 404 `profile_not_found`, and the client gives that same answer locally).
//!
//! # Errors
//!
//! One [`Error`] type separates an answer of the API ([`Error::Api`], with the HTTP status, the
//! [`ErrorCode`] (unknown codes arrive as [`ErrorCode::Other`]), the message and the request id)
//! from failures to connect ([`Error::Connect`]), broken connections ([`Error::Transport`]),
//! timeouts ([`Error::Timeout`]), answers that cannot be decoded ([`Error::Decode`], a
//! [`DecodeError`]) and
//! arguments rejected locally ([`Error::InvalidArgument`], [`Error::ProfileNotFound`]). Helpers
//! such as [`Error::is_not_found`], [`Error::is_forbidden`], [`Error::is_unauthorized`],
//! [`Error::is_retryable`], [`Error::status`], [`Error::error_code`] and [`Error::request_id`]
//! answer the usual questions. The API key never appears in `Debug` or `Display` of the client,
//! its builder or any error.
//!
//! # Retries and timeouts
//!
//! `GET` is retried on connect failures and on 429, 502, 503 and 504, with jittered exponential
//! backoff and honouring `Retry-After`; `DELETE` is retried on connect failures only. Every
//! attempt of one call sends the same `X-Request-Id` (a new ULID-shaped id per call). The
//! defaults are 3 attempts, a 30 s timeout per attempt and a 5 s connect timeout; see
//! [`RetryPolicy`] and [`ClientBuilder`].
//!
//! # Tolerant reading
//!
//! A zone list missing `id`, `message` or `status` decodes (they are then empty strings), and
//! any 2xx answers a delete. An error answer whose body is not the contract's error body (an
//! HTML page of a proxy, an empty 403 as the seed interface allows) is still an
//! [`Error::Api`] with its status; its [`ApiError::code`] is `None` and its message quotes the
//! start of the body. So the client also works against other implementations of the interface.
//!
//! # The `appzone` command line
//!
//! With the `cli` feature the crate builds the `appzone` binary:
//!
//! ```text
//! cargo install --path crates/client --features cli   # from a checkout; or cargo run -p appzone-client --features cli -- ...
//! export APPZONE_URL=http://127.0.0.1:8080 APPZONE_API_KEY=apz_...
//! appzone zones aws us-east-1
//! appzone --output json zones aws us-east-1
//! appzone profiles delete prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2
//! ```
//!
//! Options: `--url` (`APPZONE_URL`, default `http://127.0.0.1:8080`), `--api-key`
//! (`APPZONE_API_KEY`; prefer the variable, a command line is visible to other users),
//! `--output text|json`, `--timeout` (such as `10s`, `500ms`). Exit codes:
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success |
//! | 1 | usage or local error, nothing was sent (bad option, invalid provider or region id, no API key, bad URL) |
//! | 2 | could not connect, connection broken, or timed out |
//! | 3 | unauthorized (401): the API key is missing, unknown or revoked |
//! | 4 | forbidden (403): the key may not do this |
//! | 5 | not found (404): no such profile or region (also a malformed profile id) |
//! | 6 | any other API error (400, 429, 5xx, ...) |
//! | 7 | the answer could not be decoded |
//!
//! On an error the command prints one line to stderr with the message, the error code and the
//! request id, and nothing on stdout.

#![warn(missing_docs)]

mod args;
mod client;
mod error;
mod request_id;
mod retry;

pub use appzone_contract::{ErrorCode, ProfileId, ProviderId, RegionId, ZoneList};

pub use args::{IntoApiKey, IntoId};
pub use client::{
    Client, ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_TIMEOUT, DEFAULT_USER_AGENT,
};
pub use error::{ApiError, DecodeError, Error};
pub use retry::RetryPolicy;

/// Exit codes of the `appzone` command line, documented in the crate docs and its `--help`.
///
/// Public so scripts written in Rust can name them; the binary maps [`Error`]s to them with
/// [`exit_code::for_error`].
pub mod exit_code {
    use crate::Error;

    /// Success.
    pub const OK: u8 = 0;
    /// Usage or local error; nothing was sent.
    pub const USAGE: u8 = 1;
    /// Could not connect, connection broken, or timed out.
    pub const TRANSPORT: u8 = 2;
    /// 401: the API key is missing, unknown or revoked.
    pub const UNAUTHORIZED: u8 = 3;
    /// 403: the key may not do this.
    pub const FORBIDDEN: u8 = 4;
    /// 404: no such profile or region (also a malformed profile id).
    pub const NOT_FOUND: u8 = 5;
    /// Any other API error.
    pub const API: u8 = 6;
    /// The answer could not be decoded.
    pub const DECODE: u8 = 7;

    /// The exit code the command line uses for `error`.
    pub fn for_error(error: &Error) -> u8 {
        match error {
            Error::Connect { .. } | Error::Transport { .. } | Error::Timeout { .. } => TRANSPORT,
            Error::InvalidArgument { .. } => USAGE,
            Error::Decode(_) => DECODE,
            _ if error.is_unauthorized() => UNAUTHORIZED,
            _ if error.is_forbidden() => FORBIDDEN,
            _ if error.is_not_found() => NOT_FOUND,
            _ => API,
        }
    }
}

/// The README's examples, compiled and checked as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The workspace README's consumer example, compiled and checked as a doctest.
#[doc = include_str!("../../../README.md")]
#[cfg(doctest)]
pub struct WorkspaceReadmeDoctests;

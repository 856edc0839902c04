//! The one error type of the client.

use std::fmt;
use std::time::Duration;

use appzone_contract::{ErrorCode, IdError};
use http::{Method, StatusCode};

/// Everything that can go wrong in a call, in one type.
///
/// **To act on what an error means, ask the helpers, not the variant.** The same mistake gets
/// the same answer whether the client finds it before sending or the server answers it:
/// [`error_code`](Error::error_code), [`status`](Error::status) and the `is_*` helpers are equal
/// in both cases. A provider id `"AWS"` is refused locally, and an unknown provider by the
/// server, yet both give `error_code() == Some(&ErrorCode::InvalidProvider)` and status 400; a
/// malformed profile id and a profile the server does not have both give
/// `error_code() == Some(&ErrorCode::ProfileNotFound)` and [`is_not_found`](Error::is_not_found).
/// The variants only say *where* the answer came from:
///
/// | variant | what happened | request sent? | `status()`, `error_code()` |
/// |---|---|---|---|
/// | [`Error::Api`] | the API answered with a non-2xx status | yes | the answer's |
/// | [`Error::Connect`] | no connection could be made (refused, DNS, connect timeout) | no | `None` |
/// | [`Error::Transport`] | the connection failed after it was made (reset, closed early) | yes | `None` |
/// | [`Error::Timeout`] | the request timeout elapsed before the whole answer arrived | yes | `None` |
/// | [`Error::Decode`] | a success status arrived with a body that is not what the API sends | yes | the 2xx status, `None` |
/// | [`Error::InvalidArgument`] | an argument or setting was refused locally | no | for a provider or region id, 400 and `invalid_provider` / `invalid_region`, and for a zone mapping over the limits (a 32 MiB body, a 1 MiB `output`), 413 and `payload_too_large`, as the server answers; else `None` |
/// | [`Error::ProfileNotFound`] | a malformed profile id, answered locally | no | 404 and `profile_not_found`, as the server answers |
///
/// So `matches!(e, Error::ProfileNotFound { .. })` is true only for the local answer, while
/// `e.error_code() == Some(&ErrorCode::ProfileNotFound)` (or `e.is_not_found()`) also holds
/// for the server's 404. Every variant is `#[non_exhaustive]`: match struct variants with `..`.
///
/// Most callers need only the helpers: [`is_not_found`](Error::is_not_found),
/// [`is_forbidden`](Error::is_forbidden), [`is_unauthorized`](Error::is_unauthorized),
/// [`is_retryable`](Error::is_retryable), [`status`](Error::status),
/// [`error_code`](Error::error_code) and [`request_id`](Error::request_id).
///
/// ```
/// use appzone_client::{Client, Error, ErrorCode, StatusCode};
///
/// # async fn run() -> Result<(), Error> {
/// let client = Client::new("http://127.0.0.1:8080", "apz_...")?;
/// // Refused before sending: "AWS" breaks the provider id rule (lower case only).
/// let error = client.list_zones("AWS", "us-east-1").await.unwrap_err();
/// assert_eq!(error.error_code(), Some(&ErrorCode::InvalidProvider));
/// assert_eq!(error.status(), Some(StatusCode::BAD_REQUEST));
/// assert_eq!(error.request_id(), None); // nothing was sent
/// assert!(matches!(error, Error::InvalidArgument { .. }));
/// # Ok(())
/// # }
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(run()).unwrap();
/// ```
///
/// `Display` is one line meant for logs and people, for example
/// `appzone API error 404 profile_not_found: application profile not found (request id 01JD...)`.
/// The lower-level cause of a transport failure is available through
/// [`std::error::Error::source`] and is not repeated in the `Display` text. No variant ever holds
/// the API key, so neither `Debug` nor `Display` can show it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The API answered with a status other than 2xx. See [`ApiError`].
    #[error(transparent)]
    Api(Box<ApiError>),

    /// No connection to the server could be made: connection refused, name resolution failed,
    /// or the connect timeout elapsed. The request was not sent, so every call (even a `DELETE`)
    /// is retried on this error within the [`RetryPolicy`](crate::RetryPolicy).
    #[error(
        "appzone request {method} {url} failed: could not connect{}",
        AfterAttempts(*.attempts)
    )]
    #[non_exhaustive]
    Connect {
        /// The method of the request.
        method: Method,
        /// The URL the request was for.
        url: String,
        /// The `X-Request-Id` the request would have carried. No server saw it (no request
        /// was sent), so [`Error::request_id`] returns `None` for this variant.
        request_id: String,
        /// How many connections the call tried in total (more than 1 when it was retried).
        attempts: u32,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },

    /// The connection failed after it was made, for example it was reset or closed before the
    /// whole answer arrived. The server may have acted on the request. Retried for a `DELETE`
    /// (its `Idempotency-Key` makes that safe), not for a `GET`.
    #[error(
        "appzone request {method} {url} failed: connection error (request id {request_id}{})",
        AfterAttempts(*.attempts)
    )]
    #[non_exhaustive]
    Transport {
        /// The method of the request.
        method: Method,
        /// The URL the request was for.
        url: String,
        /// The `X-Request-Id` the client sent.
        request_id: String,
        /// How many attempts the call made in total (more than 1 when a `DELETE` was retried).
        attempts: u32,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },

    /// The request timeout elapsed before the whole answer arrived. The server may have acted on
    /// the request. Retried for a `DELETE` (its `Idempotency-Key` makes that safe), not for a
    /// `GET`; the operation timeout, when it ends the call first, is reported the same way.
    #[error(
        "appzone request {method} {url} timed out after {} (request id {request_id}{})",
        DisplayDuration(*.timeout),
        AfterAttempts(*.attempts)
    )]
    #[non_exhaustive]
    Timeout {
        /// The method of the request.
        method: Method,
        /// The URL the request was for.
        url: String,
        /// The configured request timeout that elapsed, or the operation timeout
        /// ([`ClientBuilder::operation_timeout`](crate::ClientBuilder::operation_timeout)) when
        /// that ended the call first.
        timeout: Duration,
        /// The `X-Request-Id` the client sent.
        request_id: String,
        /// How many attempts the call made in total (more than 1 when a `DELETE` was retried).
        attempts: u32,
        /// The underlying error.
        #[source]
        source: reqwest::Error,
    },

    /// A success status arrived, but its body could not be read as the contract's answer (for
    /// example HTML from a proxy, or JSON of another shape). See [`DecodeError`].
    #[error(transparent)]
    Decode(Box<DecodeError>),

    /// An argument or a setting was refused before any request was sent: an invalid provider
    /// or region id, an invalid idempotency key (`argument` is `idempotency key`), a zone
    /// mapping over the limits (a JSON body over 32 MiB or an `output` over 1 MiB; `argument`
    /// is `zone mapping`), a base URL that is not `http(s)`, an API key that cannot go in a
    /// header, or an HTTP client that could not be built.
    ///
    /// For a provider or region id, `code` is the code the server answers the same id with
    /// (`invalid_provider` or `invalid_region`, status 400), and for a zone mapping over the
    /// limit `payload_too_large` (413); [`Error::error_code`] and [`Error::status`] return it:
    /// match on those to treat both the same.
    #[error("invalid {argument}: {reason}")]
    #[non_exhaustive]
    InvalidArgument {
        /// Which argument or setting, such as `provider id` or `base URL`.
        argument: &'static str,
        /// What is wrong with it. Never contains the API key.
        reason: String,
        /// The error code the server answers the same input with, when it would answer it
        /// (an id); `None` for a setting of the client.
        code: Option<ErrorCode>,
    },

    /// [`Client::delete_profile`](crate::Client::delete_profile) was given a malformed profile
    /// id. Such a profile cannot exist, and the server answers it with 404
    /// `profile_not_found`; the client gives that answer itself, without sending a request.
    /// [`is_not_found`](Error::is_not_found) is true, [`status`](Error::status) is 404 and
    /// [`error_code`](Error::error_code) is `profile_not_found`, exactly as if the server had
    /// answered.
    ///
    /// The server's own 404 for a profile arrives as [`Error::Api`]: to mean "no such profile,
    /// or already deleted", test `error_code() == Some(&ErrorCode::ProfileNotFound)` or
    /// [`is_not_found`](Error::is_not_found), which hold for both, not this variant.
    #[error("profile not found: {source} (answered locally, no request was sent)")]
    #[non_exhaustive]
    ProfileNotFound {
        /// Why it is malformed.
        #[source]
        source: IdError,
    },
}

/// An answer of the API with a status other than 2xx.
///
/// When the body is the contract's error body (`{"error": ..., "error_code": ...}`), `code` and
/// `message` come from it; codes this version does not know arrive as [`ErrorCode::Other`].
/// When it is not (a proxy's HTML page, an empty body, another implementation's format), `code`
/// is `None` and `message` describes the body, quoting its start. The status is always there, so
/// the helpers of [`Error`] work either way.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiError {
    /// The method of the request.
    pub method: Method,
    /// The URL the request was for.
    pub url: String,
    /// The HTTP status of the answer.
    pub status: StatusCode,
    /// The `error_code` of the error body; `None` when the body was not the contract's error
    /// body.
    pub code: Option<ErrorCode>,
    /// The `error` message of the error body, or a description of a body that was not one.
    pub message: String,
    /// The `X-Request-Id` of the answer, or the one the client sent when the answer had none.
    /// Quote it when reporting a problem: the server logs it.
    pub request_id: String,
    /// The `Retry-After` of the answer, when it had one in the seconds form.
    pub retry_after: Option<Duration>,
    /// How many attempts the call made in total (more than 1 when it was retried).
    pub attempts: u32,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "appzone API error {} ", self.status.as_u16())?;
        match &self.code {
            Some(code) => write!(f, "{code}")?,
            None => f.write_str(self.status.canonical_reason().unwrap_or("(unknown status)"))?,
        }
        write!(
            f,
            ": {} (request id {}{})",
            self.message,
            self.request_id,
            AfterAttempts(self.attempts)
        )
    }
}

impl std::error::Error for ApiError {}

/// A success answer whose body is not what the contract says, for example an HTML login page of
/// a proxy, JSON of another shape, or a body over the client's size limit (4 MiB).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeError {
    /// The method of the request.
    pub method: Method,
    /// The URL the request was for.
    pub url: String,
    /// The HTTP status of the answer (a 2xx).
    pub status: StatusCode,
    /// Why decoding failed.
    pub reason: String,
    /// The start of the body: at most 200 characters, on one line, `…` when cut.
    pub body_excerpt: String,
    /// The `X-Request-Id` of the answer, or the one the client sent when the answer had none.
    pub request_id: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "appzone response to {} {} could not be decoded: HTTP {}: {}; body: {:?} (request id {})",
            self.method,
            self.url,
            self.status.as_u16(),
            self.reason,
            self.body_excerpt,
            self.request_id
        )
    }
}

impl std::error::Error for DecodeError {}

impl From<ApiError> for Error {
    fn from(error: ApiError) -> Self {
        Error::Api(Box::new(error))
    }
}

/// The code the local answer for a malformed profile id carries.
static PROFILE_NOT_FOUND: ErrorCode = ErrorCode::ProfileNotFound;

impl Error {
    /// The HTTP status of the answer, when there was one.
    ///
    /// For a mistake the client found before sending, the status the server answers it with:
    /// 404 for [`Error::ProfileNotFound`], 400 for a malformed provider or region id and 413
    /// for a zone mapping over the limits ([`Error::InvalidArgument`] with a `code`).
    pub fn status(&self) -> Option<StatusCode> {
        match self {
            Error::Api(api) => Some(api.status),
            Error::Decode(decode) => Some(decode.status),
            Error::ProfileNotFound { .. } => Some(PROFILE_NOT_FOUND.status()),
            Error::InvalidArgument {
                code: Some(code), ..
            } => Some(code.status()),
            _ => None,
        }
    }

    /// The machine-readable code of the error: the `error_code` of an API answer with the
    /// API's error body, or, for a mistake the client found before sending, the code the
    /// server answers it with (`profile_not_found` for [`Error::ProfileNotFound`],
    /// `invalid_provider` or `invalid_region` for a malformed id, `payload_too_large` for a
    /// zone mapping over the limits). `None` for failures without an answer (connect, transport,
    /// timeout, decode) and for settings of the client.
    pub fn error_code(&self) -> Option<&ErrorCode> {
        match self {
            Error::Api(api) => api.code.as_ref(),
            Error::ProfileNotFound { .. } => Some(&PROFILE_NOT_FOUND),
            Error::InvalidArgument { code, .. } => code.as_ref(),
            _ => None,
        }
    }

    /// The request id to quote when reporting a problem: the one the server answered with, or
    /// the one the client sent. `None` when no request was sent: a refused argument, or
    /// [`Error::Connect`] (no connection, so no server logged the id).
    pub fn request_id(&self) -> Option<&str> {
        match self {
            Error::Api(api) => Some(&api.request_id),
            Error::Transport { request_id, .. } | Error::Timeout { request_id, .. } => {
                Some(request_id)
            }
            Error::Decode(decode) => Some(&decode.request_id),
            Error::Connect { .. }
            | Error::InvalidArgument { .. }
            | Error::ProfileNotFound { .. } => None,
        }
    }

    /// The API error, when this is one.
    pub fn as_api(&self) -> Option<&ApiError> {
        match self {
            Error::Api(api) => Some(api),
            _ => None,
        }
    }

    /// Whether the answer is 404: the profile, region or zone mapping does not exist (for a
    /// profile or a zone mapping: it never existed, is already deleted, or belongs to another
    /// organization). Also true for a
    /// malformed profile id, which the client answers itself ([`Error::ProfileNotFound`]).
    ///
    /// This looks at the status only. A 404 with code [`ErrorCode::NotFound`] means the route
    /// does not exist, which usually points at a wrong base URL; compare
    /// [`error_code`](Error::error_code) with [`ErrorCode::ProfileNotFound`] or
    /// [`ErrorCode::RegionNotFound`] (or its [`as_str`](ErrorCode::as_str) with
    /// [`ErrorCode::ZONE_MAPPING_NOT_FOUND`]) to tell the cases apart.
    pub fn is_not_found(&self) -> bool {
        self.status() == Some(StatusCode::NOT_FOUND)
    }

    /// Whether the answer is 403: the key may not do this (a `member` key deleting a profile,
    /// or storing or deleting a zone mapping).
    pub fn is_forbidden(&self) -> bool {
        matches!(self, Error::Api(api) if api.status == StatusCode::FORBIDDEN)
    }

    /// Whether the answer is 401: the API key is missing, unknown, malformed or revoked.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, Error::Api(api) if api.status == StatusCode::UNAUTHORIZED)
    }

    /// Whether the same call may succeed later: a connect or transport failure, a timeout, an
    /// answer of 429, 502, 503 or 504, or a 409 `idempotency_key_in_use` (an earlier request
    /// with the same `Idempotency-Key` was still running).
    ///
    /// The client has already retried what its [`RetryPolicy`](crate::RetryPolicy) and its
    /// operation timeout allow before returning the error. Retrying a `DELETE` is safe with
    /// [`Client::delete_profile_with_key`](crate::Client::delete_profile_with_key) and the same
    /// key: the server replays the first outcome.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Api(api) => {
                crate::retry::is_retryable_status(api.status)
                    || (api.status == StatusCode::CONFLICT
                        && api
                            .code
                            .as_ref()
                            .is_some_and(|code| code.as_str() == ErrorCode::IDEMPOTENCY_KEY_IN_USE))
            }
            Error::Connect { .. } | Error::Transport { .. } | Error::Timeout { .. } => true,
            Error::Decode(_) | Error::InvalidArgument { .. } | Error::ProfileNotFound { .. } => {
                false
            }
        }
    }

    /// Whether no connection could be made ([`Error::Connect`]).
    pub fn is_connect(&self) -> bool {
        matches!(self, Error::Connect { .. })
    }

    /// Whether the request timed out ([`Error::Timeout`]).
    pub fn is_timeout(&self) -> bool {
        matches!(self, Error::Timeout { .. })
    }

    pub(crate) fn invalid(argument: &'static str, reason: impl fmt::Display) -> Self {
        Error::InvalidArgument {
            argument,
            reason: reason.to_string(),
            code: None,
        }
    }

    /// A malformed provider or region id, with the code the server answers it with.
    pub(crate) fn invalid_id(argument: &'static str, code: ErrorCode, reason: IdError) -> Self {
        Error::InvalidArgument {
            argument,
            reason: reason.to_string(),
            code: Some(code),
        }
    }
}

/// Formats a duration the way people write it: `500ms`, `2s`, `1.5s`.
/// `, after N attempts` when a call was retried, nothing otherwise.
struct AfterAttempts(u32);

impl fmt::Display for AfterAttempts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 > 1 {
            write!(f, ", after {} attempts", self.0)?;
        }
        Ok(())
    }
}

pub(crate) struct DisplayDuration(pub(crate) Duration);

impl fmt::Display for DisplayDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else if d < Duration::from_secs(1) && d.subsec_nanos().is_multiple_of(1_000_000) {
            write!(f, "{}ms", d.as_millis())
        } else {
            write!(f, "{:?}", d)
        }
    }
}

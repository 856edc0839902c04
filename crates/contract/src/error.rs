//! The error body and the closed-but-extensible set of error codes.

use std::borrow::Cow;
use std::fmt;

use http::StatusCode;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::schema::{AnyOfBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

/// Machine-readable error code of every error response.
///
/// Serialized in `snake_case`. Codes this version does not know deserialize to
/// [`ErrorCode::Other`], so a client keeps working when the server adds a code.
///
/// ```
/// # // Shown as clients use it: appzone-client re-exports the type.
/// # use appzone_contract as appzone_client;
/// use appzone_client::ErrorCode;
/// let code: ErrorCode = serde_json::from_str("\"profile_not_found\"").unwrap();
/// assert_eq!(code, ErrorCode::ProfileNotFound);
/// assert_eq!(code.status().as_u16(), 404);
/// let new: ErrorCode = serde_json::from_str("\"teapot\"").unwrap();
/// assert_eq!(new, ErrorCode::Other("teapot".into()));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: the provider id is malformed or unknown.
    InvalidProvider,
    /// 400: the region id is malformed.
    InvalidRegion,
    /// 401: no `X-API-KEY` header, or an empty one.
    MissingApiKey,
    /// 401: the key is unknown, malformed or revoked.
    InvalidApiKey,
    /// 403: the caller may not delete this profile.
    Forbidden,
    /// 404: the region is unknown for the provider.
    RegionNotFound,
    /// 404: the profile does not exist, is deleted, or belongs to another organization.
    ProfileNotFound,
    /// 404: no such route.
    NotFound,
    /// 405: the route exists, the method does not.
    MethodNotAllowed,
    /// 413: the request body is over the limit.
    PayloadTooLarge,
    /// 429: a per-key or per-address limit was hit.
    RateLimited,
    /// 500: a bug; details are in the server log under the request id.
    InternalError,
    /// 503: the database is unreachable, the server is overloaded, or the request timed out.
    Unavailable,
    /// A code outside this enum: one added within 1.x ([`ErrorCode::ADDED`], whose
    /// [`status`](ErrorCode::status) is known), or one added later.
    ///
    /// The enum is exhaustive, so within 1.x a new code never becomes a variant (that would
    /// break exhaustive `match`es): it arrives as `Other`, and its wire form is a constant such
    /// as [`ErrorCode::IDEMPOTENCY_KEY_REUSED`]. Version 2.0 will make the enum
    /// `#[non_exhaustive]` and turn those codes into variants.
    Other(String),
}

/// An error code added within 1.x: it reaches 1.x clients as [`ErrorCode::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddedCode {
    /// The wire form.
    pub code: &'static str,
    /// The HTTP status it comes with.
    pub status: u16,
    /// What it means, for the document's table.
    pub meaning: &'static str,
    /// The contract version that added it.
    pub since: &'static str,
}

impl ErrorCode {
    /// Every code this version knows, in the order of the contract's table.
    pub const KNOWN: [ErrorCode; 13] = [
        ErrorCode::InvalidProvider,
        ErrorCode::InvalidRegion,
        ErrorCode::MissingApiKey,
        ErrorCode::InvalidApiKey,
        ErrorCode::Forbidden,
        ErrorCode::RegionNotFound,
        ErrorCode::ProfileNotFound,
        ErrorCode::NotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::PayloadTooLarge,
        ErrorCode::RateLimited,
        ErrorCode::InternalError,
        ErrorCode::Unavailable,
    ];

    /// 400: the `Idempotency-Key` header is empty, longer than 255 characters, or not visible
    /// ASCII. Added in 1.1.0; arrives as [`ErrorCode::Other`].
    pub const INVALID_IDEMPOTENCY_KEY: &'static str = "invalid_idempotency_key";
    /// 409: a request with this `Idempotency-Key` is still being processed; retry later.
    /// Added in 1.1.0; arrives as [`ErrorCode::Other`].
    pub const IDEMPOTENCY_KEY_IN_USE: &'static str = "idempotency_key_in_use";
    /// 422: this `Idempotency-Key` was used with another request (another profile) within
    /// the last 24 hours. Added in 1.1.0; arrives as [`ErrorCode::Other`].
    pub const IDEMPOTENCY_KEY_REUSED: &'static str = "idempotency_key_reused";
    /// 400: a request body that is not JSON, or not of the operation's shape (zone
    /// mappings). Added in 1.2.0; arrives as [`ErrorCode::Other`].
    pub const INVALID_BODY: &'static str = "invalid_body";
    /// 404: no zone mapping with this id in the caller's organization. Added in 1.2.0;
    /// arrives as [`ErrorCode::Other`].
    pub const ZONE_MAPPING_NOT_FOUND: &'static str = "zone_mapping_not_found";
    /// 422: a zone mapping the catalog contradicts (an unknown zone id, a name outside its
    /// region, an id or a name twice); the message names the first offenders. Added in
    /// 1.2.0; arrives as [`ErrorCode::Other`].
    pub const INVALID_ZONE_MAPPING: &'static str = "invalid_zone_mapping";
    /// 400: an unknown query parameter, one repeated that may not repeat, or a malformed
    /// value (zone identities); the message names the parameter. Added in 1.2.0; arrives as
    /// [`ErrorCode::Other`].
    pub const INVALID_QUERY: &'static str = "invalid_query";
    /// 422: a zone mapping asked for its offerings (`offers`, the `instance-types` listing)
    /// holds none for the region; the message names the mapping. Added in 1.3.0; arrives as
    /// [`ErrorCode::Other`].
    pub const OFFERINGS_NOT_STORED: &'static str = "offerings_not_stored";

    /// The codes added within 1.x, in the order they were added.
    ///
    /// ```
    /// # use appzone_contract as appzone_client;
    /// use appzone_client::ErrorCode;
    /// let code: ErrorCode = serde_json::from_str("\"idempotency_key_reused\"").unwrap();
    /// assert_eq!(code.as_str(), ErrorCode::IDEMPOTENCY_KEY_REUSED);
    /// assert_eq!(code.status().as_u16(), 422);
    /// ```
    pub const ADDED: [AddedCode; 8] = [
        AddedCode {
            code: ErrorCode::INVALID_IDEMPOTENCY_KEY,
            status: 400,
            meaning: "the Idempotency-Key header is empty, longer than 255 characters, or not \
                      visible ASCII",
            since: "1.1.0",
        },
        AddedCode {
            code: ErrorCode::IDEMPOTENCY_KEY_IN_USE,
            status: 409,
            meaning: "a request with this Idempotency-Key is still being processed; retry \
                      after Retry-After",
            since: "1.1.0",
        },
        AddedCode {
            code: ErrorCode::IDEMPOTENCY_KEY_REUSED,
            status: 422,
            meaning: "this Idempotency-Key was used for another request within 24 hours; use \
                      a new key for a new request",
            since: "1.1.0",
        },
        AddedCode {
            code: ErrorCode::INVALID_BODY,
            status: 400,
            meaning: "the request body is not JSON, or not of the operation's shape",
            since: "1.2.0",
        },
        AddedCode {
            code: ErrorCode::ZONE_MAPPING_NOT_FOUND,
            status: 404,
            meaning: "no zone mapping with this id in the caller's organization",
            since: "1.2.0",
        },
        AddedCode {
            code: ErrorCode::INVALID_ZONE_MAPPING,
            status: 422,
            meaning: "a zone mapping the catalog contradicts; the message names the first \
                      offenders",
            since: "1.2.0",
        },
        AddedCode {
            code: ErrorCode::INVALID_QUERY,
            status: 400,
            meaning: "an unknown query parameter, a repeated one that may not repeat, or a \
                      malformed value; the message names the parameter",
            since: "1.2.0",
        },
        AddedCode {
            code: ErrorCode::OFFERINGS_NOT_STORED,
            status: 422,
            meaning: "a zone mapping asked for its instance-type offerings holds none for the \
                      region; the message names the mapping",
            since: "1.3.0",
        },
    ];

    /// The wire form of the code.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorCode::InvalidProvider => "invalid_provider",
            ErrorCode::InvalidRegion => "invalid_region",
            ErrorCode::MissingApiKey => "missing_api_key",
            ErrorCode::InvalidApiKey => "invalid_api_key",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::RegionNotFound => "region_not_found",
            ErrorCode::ProfileNotFound => "profile_not_found",
            ErrorCode::NotFound => "not_found",
            ErrorCode::MethodNotAllowed => "method_not_allowed",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::InternalError => "internal_error",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::Other(code) => code,
        }
    }

    /// Parses the wire form; unknown codes become [`ErrorCode::Other`].
    pub fn from_wire(code: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|known| known.as_str() == code)
            .unwrap_or_else(|| ErrorCode::Other(code.to_owned()))
    }

    /// The HTTP status the server answers with for this code: the one place that mapping lives.
    ///
    /// An [`ErrorCode::Other`] maps to its status when it is one of [`ErrorCode::ADDED`], else
    /// to 500.
    pub fn status(&self) -> StatusCode {
        match self {
            ErrorCode::InvalidProvider | ErrorCode::InvalidRegion => StatusCode::BAD_REQUEST,
            ErrorCode::MissingApiKey | ErrorCode::InvalidApiKey => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::RegionNotFound | ErrorCode::ProfileNotFound | ErrorCode::NotFound => {
                StatusCode::NOT_FOUND
            }
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Other(code) => ErrorCode::ADDED
                .iter()
                .find(|added| added.code == code)
                .and_then(|added| StatusCode::from_u16(added.status).ok())
                .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            ErrorCode::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// Whether a client may retry an idempotent request that failed with this code.
    pub fn is_retryable(&self) -> bool {
        match self {
            ErrorCode::RateLimited | ErrorCode::Unavailable => true,
            // The first attempt with the same key is still running: its outcome will be
            // replayed once it ends.
            ErrorCode::Other(code) => code == ErrorCode::IDEMPOTENCY_KEY_IN_USE,
            _ => false,
        }
    }
}

/// The code of a wire form, as [`ErrorCode::from_wire`] reads it: how a code added within 1.x,
/// a constant rather than a variant, becomes an `ErrorCode` (a known code's wire form gives its
/// variant).
///
/// ```
/// use appzone_contract::ErrorCode;
/// let code = ErrorCode::from(ErrorCode::ZONE_MAPPING_NOT_FOUND);
/// assert_eq!(code, ErrorCode::Other("zone_mapping_not_found".into()));
/// assert_eq!(code.status().as_u16(), 404);
/// assert_eq!(ErrorCode::from("forbidden"), ErrorCode::Forbidden);
/// ```
impl From<&str> for ErrorCode {
    fn from(code: &str) -> Self {
        ErrorCode::from_wire(code)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ErrorCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let code = Cow::<'de, str>::deserialize(deserializer)?;
        Ok(ErrorCode::from_wire(&code))
    }
}

impl ErrorCode {
    /// What the code means, for the document's `KnownErrorCode` table.
    fn meaning(&self) -> &'static str {
        match self {
            ErrorCode::InvalidProvider => "the provider id is malformed or not in the catalog",
            ErrorCode::InvalidRegion => "the region id is malformed",
            ErrorCode::MissingApiKey => "no X-API-KEY header, or an empty or blank one",
            ErrorCode::InvalidApiKey => "the key is unknown, malformed or revoked",
            ErrorCode::Forbidden => "the key's role may not do this",
            ErrorCode::RegionNotFound => "the provider has no such region",
            ErrorCode::ProfileNotFound => {
                "no such profile in the caller's organization (absent, deleted, or another \
                 organization's)"
            }
            ErrorCode::NotFound => "no route matches the path",
            ErrorCode::MethodNotAllowed => {
                "the path exists, the method does not; Allow lists the methods"
            }
            ErrorCode::PayloadTooLarge => "the request body is over the limit",
            ErrorCode::RateLimited => "a per-key or per-address limit was hit; see Retry-After",
            ErrorCode::InternalError => "a bug; details are in the service's log",
            ErrorCode::Unavailable => {
                "overloaded, timed out, or the database is unreachable; see Retry-After"
            }
            ErrorCode::Other(_) => "a code this version does not know",
        }
    }
}

/// Longest error code the service sends.
const ERROR_CODE_MAX_LEN: usize = 64;

impl PartialSchema for ErrorCode {
    /// Open to additions: a known code, or any other code of the same shape. Generated clients
    /// then keep an unknown code as a string instead of failing to decode the error.
    fn schema() -> RefOr<Schema> {
        let other = ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some("A code added after this version of the document."))
            .pattern(Some("^[a-z][a-z0-9_]*$"))
            .min_length(Some(1))
            .max_length(Some(ERROR_CODE_MAX_LEN));
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(KnownErrorCode::name()))
            .item(other)
            .description(Some(
                "Machine-readable error code: one of `KnownErrorCode`, or a code added later. \
                 Treat a code you do not know as a generic error of the response's HTTP status: \
                 codes are added without a new API version.",
            ))
            .examples([serde_json::json!("profile_not_found")])
            .into()
    }
}

/// Schema-only type: the error codes this version of the contract knows, with their statuses.
#[derive(Debug)]
pub struct KnownErrorCode;

impl PartialSchema for KnownErrorCode {
    fn schema() -> RefOr<Schema> {
        let mut table = String::from(
            "The error codes of this version, with the HTTP status each comes with:\n\n\
             | code | status | meaning |\n|---|---|---|\n",
        );
        for code in &ErrorCode::KNOWN {
            table.push_str(&format!(
                "| `{}` | {} | {} |\n",
                code.as_str(),
                code.status().as_u16(),
                code.meaning()
            ));
        }
        for added in &ErrorCode::ADDED {
            table.push_str(&format!(
                "| `{}` | {} | {} (since {}) |\n",
                added.code, added.status, added.meaning, added.since
            ));
        }
        let codes = ErrorCode::KNOWN
            .iter()
            .map(|c| c.as_str().to_owned())
            .chain(ErrorCode::ADDED.iter().map(|added| added.code.to_owned()));
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(table))
            .enum_values(Some(codes))
            .into()
    }
}

/// The body of every error response: `{"error": "<human message>", "error_code": "<code>"}`.
///
/// ```
/// use appzone_contract::{ErrorBody, ErrorCode};
/// let body = ErrorBody::new(ErrorCode::Forbidden, "ask your admin");
/// assert_eq!(
///     serde_json::to_string(&body).unwrap(),
///     r#"{"error":"ask your admin","error_code":"forbidden"}"#
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[schema(description = "The body of every error response.")]
#[schema(example = json!({"error": "application profile not found", "error_code": "profile_not_found"}))]
pub struct ErrorBody {
    /// Human-readable message, at most 1024 characters. Never contains SQL, stack traces, file
    /// paths or key material. Do not parse it.
    #[schema(max_length = 1024)]
    pub error: String,
    /// Machine-readable code; see the `ErrorCode` schema.
    pub error_code: ErrorCode,
}

impl ErrorBody {
    /// Builds an error body.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            error: message.into(),
            error_code: code,
        }
    }
}

schema_named_after_type!(ErrorCode, KnownErrorCode);

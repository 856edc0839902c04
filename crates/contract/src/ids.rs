//! Validated identifier newtypes.
//!
//! Identifiers arrive as path segments, so their rules are strict and ASCII-only: a value that
//! parses is safe to put into a path, a log line or a SQL parameter without further escaping.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// Which kind of identifier failed to parse; part of [`IdError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// A [`ProviderId`].
    Provider,
    /// A [`RegionId`].
    Region,
    /// A [`ProfileId`].
    Profile,
}

impl IdKind {
    fn rules(self) -> Rules {
        match self {
            IdKind::Provider | IdKind::Region => Rules {
                max_len: 63,
                allowed: "lowercase ASCII letters, digits and '-'",
                first_allowed: "a lowercase ASCII letter or digit",
                extra: |b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-',
                first: |b| b.is_ascii_lowercase() || b.is_ascii_digit(),
            },
            IdKind::Profile => Rules {
                max_len: 128,
                allowed: "ASCII letters, digits, '.', '_' and '-'",
                first_allowed: "an ASCII letter or digit",
                extra: |b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'),
                first: |b| b.is_ascii_alphanumeric(),
            },
        }
    }

    /// The error code the API answers a malformed id of this kind with: `invalid_provider`,
    /// `invalid_region`, or `profile_not_found` (no profile can have a malformed id).
    pub fn error_code(self) -> crate::ErrorCode {
        match self {
            IdKind::Provider => crate::ErrorCode::InvalidProvider,
            IdKind::Region => crate::ErrorCode::InvalidRegion,
            IdKind::Profile => crate::ErrorCode::ProfileNotFound,
        }
    }

    fn name(self) -> &'static str {
        match self {
            IdKind::Provider => "provider id",
            IdKind::Region => "region id",
            IdKind::Profile => "profile id",
        }
    }
}

struct Rules {
    max_len: usize,
    allowed: &'static str,
    first_allowed: &'static str,
    first: fn(u8) -> bool,
    extra: fn(u8) -> bool,
}

/// Why a string is not a valid identifier. The `Display` text says what is wrong and is safe to
/// show to API callers (it never echoes more than one offending character).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    /// The value is empty.
    #[error("{} must not be empty", kind.name())]
    Empty {
        /// Which identifier.
        kind: IdKind,
    },
    /// The value is longer than the maximum.
    #[error("{} must be at most {max} characters, got {len}", kind.name())]
    TooLong {
        /// Which identifier.
        kind: IdKind,
        /// The maximum length in characters.
        max: usize,
        /// The length that was given, in characters.
        len: usize,
    },
    /// The first character is not allowed there.
    #[error("{} must start with {first_allowed}, got {found:?}", kind.name())]
    BadFirst {
        /// Which identifier.
        kind: IdKind,
        /// Human description of the characters allowed first.
        first_allowed: &'static str,
        /// The offending character.
        found: char,
    },
    /// A character outside the allowed set.
    #[error("{} may contain only {allowed}; found {found:?} at position {position}", kind.name())]
    BadChar {
        /// Which identifier.
        kind: IdKind,
        /// Human description of the allowed set.
        allowed: &'static str,
        /// The offending character.
        found: char,
        /// Its zero-based character position.
        position: usize,
    },
}

impl IdError {
    /// Which identifier was malformed.
    pub fn kind(&self) -> IdKind {
        match self {
            IdError::Empty { kind }
            | IdError::TooLong { kind, .. }
            | IdError::BadFirst { kind, .. }
            | IdError::BadChar { kind, .. } => *kind,
        }
    }
}

fn validate(kind: IdKind, value: &str) -> Result<(), IdError> {
    let rules = kind.rules();
    let len = value.chars().count();
    let Some(first) = value.chars().next() else {
        return Err(IdError::Empty { kind });
    };
    if len > rules.max_len {
        return Err(IdError::TooLong {
            kind,
            max: rules.max_len,
            len,
        });
    }
    if !first.is_ascii() || !(rules.first)(first as u8) {
        return Err(IdError::BadFirst {
            kind,
            first_allowed: rules.first_allowed,
            found: first,
        });
    }
    for (position, found) in value.chars().enumerate().skip(1) {
        if !found.is_ascii() || !(rules.extra)(found as u8) {
            return Err(IdError::BadChar {
                kind,
                allowed: rules.allowed,
                found,
                position,
            });
        }
    }
    Ok(())
}

macro_rules! identifier {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// The identifier's kind, for error reporting.
            pub const KIND: IdKind = $kind;

            /// Validates `value` and wraps it.
            pub fn new(value: impl Into<String>) -> Result<Self, IdError> {
                let value = value.into();
                validate($kind, &value)?;
                Ok(Self(value))
            }

            /// Checks `value` against the identifier's rules without copying it; `parse`
            /// does the same check and then owns a copy.
            ///
            /// ```
            #[doc = concat!("use appzone_contract::", stringify!($name), ";")]
            #[doc = concat!("assert!(", stringify!($name), "::validate(\"ok-1\").is_ok());")]
            #[doc = concat!("assert!(", stringify!($name), "::validate(\"\").is_err());")]
            /// ```
            pub fn validate(value: &str) -> Result<(), IdError> {
                validate($kind, value)
            }

            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Unwraps the inner string.
            pub fn into_inner(self) -> String {
                self.0
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                validate($kind, s)?;
                Ok(Self(s.to_owned()))
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(value: String) -> Result<Self, IdError> {
                Self::new(value)
            }
        }

        impl TryFrom<&str> for $name {
            type Error = IdError;
            fn try_from(value: &str) -> Result<Self, IdError> {
                value.parse()
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({:?})", stringify!($name), self.0)
            }
        }
    };
}

identifier!(
    /// A cloud provider identifier such as `aws`, `gcp` or `azure`.
    ///
    /// Rule: `^[a-z0-9][a-z0-9-]{0,62}$`, case-sensitive.
    ///
    /// ```
    /// use appzone_contract::ProviderId;
    /// assert!("aws".parse::<ProviderId>().is_ok());
    /// assert!("AWS".parse::<ProviderId>().is_err());
    /// ```
    ProviderId,
    IdKind::Provider
);

identifier!(
    /// A region identifier, unique within its provider, such as `us-east-1`.
    ///
    /// Rule: `^[a-z0-9][a-z0-9-]{0,62}$`, case-sensitive.
    ///
    /// ```
    /// use appzone_contract::RegionId;
    /// assert!("europe-west1".parse::<RegionId>().is_ok());
    /// assert!("eu_west".parse::<RegionId>().is_err());
    /// ```
    RegionId,
    IdKind::Region
);

identifier!(
    /// An application profile identifier. New ids are `prof_` followed by a 26-character ULID.
    ///
    /// Rule: `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`, case-sensitive.
    ///
    /// ```
    /// use appzone_contract::ProfileId;
    /// assert!("prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2".parse::<ProfileId>().is_ok());
    /// assert!("../etc".parse::<ProfileId>().is_err());
    /// ```
    ProfileId,
    IdKind::Profile
);

/// Regular expression of provider and region ids, as published in the OpenAPI document.
pub(crate) const PROVIDER_REGION_PATTERN: &str = "^[a-z0-9][a-z0-9-]{0,62}$";
/// Regular expression of profile ids, as published in the OpenAPI document.
pub(crate) const PROFILE_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$";

macro_rules! identifier_schema {
    ($name:ident, $pattern:expr, $max:expr, $example:expr, $doc:expr) => {
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
                ObjectBuilder::new()
                    .schema_type(SchemaType::Type(Type::String))
                    .pattern(Some($pattern))
                    .min_length(Some(1))
                    .max_length(Some($max))
                    .description(Some($doc))
                    .examples([serde_json::json!($example)])
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    };
}

identifier_schema!(
    ProviderId,
    PROVIDER_REGION_PATTERN,
    63,
    "aws",
    "Cloud provider identifier (`aws`, `gcp`, `azure` in the built-in catalog). Case-sensitive."
);
identifier_schema!(
    RegionId,
    PROVIDER_REGION_PATTERN,
    63,
    "us-east-1",
    "Region identifier, unique within its provider. Case-sensitive."
);
identifier_schema!(
    ProfileId,
    PROFILE_PATTERN,
    128,
    EXAMPLE_PROFILE_ID,
    "Application profile identifier. Ids created by the service are `prof_` followed by a \
     26-character ULID. Case-sensitive."
);

/// The profile id the document's examples name. `appzone-server serve --demo` keeps a
/// deletable profile of the demo organization with this id, so a request built from the
/// document's examples (Swagger UI, a Postman collection converted from the document) deletes
/// a profile that exists. It lives beside [`ProfileId`], not in the openapi module, because the
/// schema above shows it and the openapi module imports this one (never the other way round).
pub const EXAMPLE_PROFILE_ID: &str = "prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2";

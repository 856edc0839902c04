//! The open string sets of the identity listing (`name_scope`, `zone_type`, `visibility`,
//! `opt_in`): known values as variants, anything else kept as `Other`, so a client keeps working
//! when the server adds a value; the document states each as a string whose description lists
//! the known values.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// The values an open string set may take, known or added later: lowercase letters, `_`, `-`.
const OPEN_SET_PATTERN: &str = "^[a-z_-]{1,64}$";

/// Declares an open string set: known values as variants, anything else as `Other`, the wire
/// form in one table, and a schema that is a string whose description lists the known values.
macro_rules! open_string_set {
    (
        $(#[$attr:meta])*
        pub enum $name:ident {
            $( $(#[$vattr:meta])* $variant:ident = $wire:literal, )+
        }
        schema: $description:literal, example: $example:literal
    ) => {
        $(#[$attr])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vattr])* $variant, )+
            /// A value this version does not know (added by a later server).
            Other(String),
        }

        impl $name {
            /// The wire form.
            pub fn as_str(&self) -> &str {
                match self {
                    $( $name::$variant => $wire, )+
                    $name::Other(other) => other,
                }
            }

            /// Whether `value` is a well-formed value of the set, known or not: 1 to 64
            /// lowercase letters, `_` and `-` (the document's pattern).
            pub fn is_valid(value: &str) -> bool {
                (1..=64).contains(&value.len())
                    && value.bytes().all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
            }

            /// Parses the wire form; unknown values become `Other`.
            pub fn from_wire(value: &str) -> Self {
                match value {
                    $( $wire => $name::$variant, )+
                    other => $name::Other(other.to_owned()),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = std::borrow::Cow::<'de, str>::deserialize(deserializer)?;
                Ok($name::from_wire(&value))
            }
        }

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(SchemaType::Type(Type::String))
                    .description(Some($description))
                    .pattern(Some(OPEN_SET_PATTERN))
                    .min_length(Some(1))
                    .max_length(Some(64))
                    .examples([serde_json::json!($example)])
                    .into()
            }
        }

        impl ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    };
}

open_string_set! {
    /// For whom a zone name holds.
    pub enum NameScope {
        /// GCP: a zone's name is its identity, the same in every project.
        Global = "global",
        /// One name per zone for every account (AWS regions with a uniform mapping).
        Uniform = "uniform",
        /// Names are mapped per account (the 8 oldest AWS regions, for accounts created
        /// before November 2025).
        Account = "account",
        /// Azure: deployments name logical zones `1`, `2`, `3`, mapped per subscription.
        Subscription = "subscription",
    }
    schema: "For whom a zone name holds. Known values: `global` (GCP: the name is the \
identity, the same in every project), `uniform` (one name for every account), `account` (names \
are mapped per account: the 8 oldest AWS regions), `subscription` (Azure: logical zones `1`, \
`2`, `3`, mapped per subscription). Values may be added: treat one you do not know like \
`account` (the name is not known to hold for you).",
    example: "account"
}

open_string_set! {
    /// What kind of zone an identity is.
    pub enum ZoneType {
        /// An availability zone of the region.
        AvailabilityZone = "availability-zone",
        /// AWS: a Local Zone, anchored to an availability zone of its parent region.
        LocalZone = "local-zone",
        /// AWS: a Wavelength Zone, in a carrier's network.
        WavelengthZone = "wavelength-zone",
        /// Azure: an Extended Zone, listed under its home region.
        ExtendedZone = "extended-zone",
        /// GCP: an AI zone.
        AiZone = "ai-zone",
    }
    schema: "The kind of zone. Known values: `availability-zone`, `local-zone` and \
`wavelength-zone` (AWS), `extended-zone` (Azure, listed under its home region), `ai-zone` \
(GCP). The listing shows availability zones only unless `zone_type` asks for others. Values \
may be added: accept one you do not know.",
    example: "availability-zone"
}

open_string_set! {
    /// Which accounts can see a zone.
    pub enum Visibility {
        /// Every account of the provider sees the zone.
        AllAccounts = "all_accounts",
        /// Only some accounts see it (a constrained zone hidden from new accounts, say); the
        /// item's `note` says what is known.
        SomeAccounts = "some_accounts",
        /// No source says which accounts see it: the zone is known from some accounts' own
        /// output (an edge zone, or a zone a catalog import added).
        Unknown = "unknown",
    }
    schema: "Which accounts can use the zone. Known values: `all_accounts`, `some_accounts` \
(for example a constrained zone that new accounts do not see; the item's `note` says what is \
known), `unknown` (the zone is known from some accounts' own output; whether every account \
sees it is not). Values may be added: accept one you do not know.",
    example: "all_accounts"
}

open_string_set! {
    /// Whether an account must opt in before it can use a zone.
    pub enum OptIn {
        /// Every account that sees the zone can use it (availability zones).
        NotRequired = "not_required",
        /// Each account (AWS: per zone group), project (GCP) or subscription (Azure) opts in
        /// first; a zone mapping's `opt_in_status` says whether that account has.
        Required = "required",
    }
    schema: "Whether an account must opt in before it can use the zone. Known values: \
`not_required` (availability zones), `required` (AWS Local and Wavelength Zones, opted into per \
zone group; GCP AI zones, per project; Azure Extended Zones, per subscription). A zone \
mapping's `opt_in_status` says whether that account has. Values may be added: accept one you \
do not know.",
    example: "not_required"
}

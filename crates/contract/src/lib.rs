//! The appzone API contract: everything the server and the client must agree on.
//!
//! This crate is the single source of truth for the wire format of the appzone API. It holds the
//! request and response bodies, the error codes and their HTTP statuses, the identifier rules, the
//! API-key format, the header names, the path templates and the OpenAPI document generated from all
//! of them. The server routes with these items and the client builds URLs with them, so the two
//! sides cannot drift apart; a test fails when the checked-in `openapi.json` no longer matches.
//!
//! The crate deliberately knows nothing about serving or sending requests: no axum, no reqwest, no
//! database. It depends on serde, utoipa and a few small helpers only.
//!
//! # Example
//!
//! ```
//! use appzone_contract::{paths, ProviderId, RegionId};
//!
//! let provider: ProviderId = "aws".parse()?;
//! let region: RegionId = "us-east-1".parse()?;
//! assert_eq!(
//!     paths::list_zones(&provider, &region),
//!     "/api/v1/providers/aws/regions/us-east-1/zones"
//! );
//! # Ok::<(), appzone_contract::IdError>(())
//! ```

/// Implements `ToSchema` for a type whose schema is hand-written (`PartialSchema`): the
/// document names the schema after the type.
macro_rules! schema_named_after_type {
    ($($name:ident),+ $(,)?) => {$(
        impl utoipa::ToSchema for $name {
            fn name() -> std::borrow::Cow<'static, str> {
                std::borrow::Cow::Borrowed(stringify!($name))
            }
        }
    )+};
}

/// Declares an answer's envelope: its `data` (with its own doc and schema attributes), the
/// fields every answer shares, `id`, `message` and `status`, whose serde and schema attributes
/// are spelled here once, and the answer's own fields after them. `message` takes the answer's
/// own doc, which quotes an example summary, and its longest length.
macro_rules! envelope {
    (
        $(#[$($attr:tt)*])*
        pub struct $name:ident {
            $(#[$($data_attr:tt)*])*
            pub data: $data:ty,
            message($max:tt): $message_doc:tt,
            $(
                $(#[$($extra_attr:tt)*])*
                pub $extra:ident: $extra_ty:ty,
            )*
        }
    ) => {
        #[derive(
            Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
        )]
        $(#[$($attr)*])*
        pub struct $name {
            $(#[$($data_attr)*])*
            pub data: $data,
            // One line, so the document's description has no line break in mid-sentence.
            #[doc = "The request id: the same value as the `X-Request-Id` response header. \
                     Quote it when reporting a problem."]
            #[serde(default)]
            #[schema(
                required = true,
                min_length = 1,
                max_length = 128,
                pattern = "^[A-Za-z0-9._:-]{1,128}$"
            )]
            pub id: String,
            #[doc = $message_doc]
            #[serde(default)]
            #[schema(required = true, max_length = $max)]
            pub message: String,
            /// Always `success` on a 2xx answer.
            #[serde(default)]
            #[schema(required = true, value_type = crate::zones::ListingStatus)]
            pub status: String,
            $(
                $(#[$($extra_attr)*])*
                pub $extra: $extra_ty,
            )*
        }
    };
}

mod api_key;
pub mod deprecation;
mod discovery;
mod error;
pub mod exit_code;
pub mod headers;
mod identities;
mod ids;
mod mappings;
mod offerings;
pub mod openapi;
pub mod paths;
mod zones;

pub use api_key::{ApiKey, ApiKeyError, KeyId};
pub use deprecation::{Deprecation, DEPRECATIONS};
pub use discovery::{ProviderList, RegionList, MAX_PROVIDERS, MAX_REGIONS_PER_PROVIDER};
pub use error::{AddedCode, ErrorBody, ErrorCode};
pub use identities::{
    AppliedMapping, CatalogSource, MappedName, NameScope, OptIn, SourceReference, Visibility,
    ZoneIdentity, ZoneIdentityList, ZoneIdentityQuery, ZoneType, ZoneTypes,
    MAX_MAPPINGS_PER_LISTING,
};
pub use ids::{IdError, IdKind, ProfileId, ProviderId, RegionId};
pub use mappings::{
    is_valid_account, is_valid_display_name, MappedRegion, MappedZone, SkippedZone, ZoneMapping,
    ZoneMappingAnswer, ZoneMappingId, ZoneMappingIdError, ZoneMappingList, ZoneMappingRequest,
    ZoneMappingSummary, MAX_ZONE_MAPPINGS_PER_ORGANIZATION, MAX_ZONE_MAPPING_BYTES,
    MAX_ZONE_MAPPING_LABEL_CHARS, MAX_ZONE_MAPPING_OUTPUT_BYTES,
};
pub use offerings::{
    is_valid_instance_type, AwsOfferingsOutput, AzureSku, GcpMachineType, InstanceTypeList,
    InstanceTypeZones, OfferingsOutput, RegionOfferings, MAX_INSTANCE_TYPE_CHARS,
    MAX_OFFERS_PER_QUERY,
};
pub use zones::{ZoneList, MAX_ZONES_PER_REGION, STATUS_SUCCESS};

//! The OpenAPI 3.1 document of the API, generated from this crate's types.
//!
//! The functions [`list_providers`], [`list_regions`], [`list_zones`] and
//! [`delete_application_profile`] are never called: they carry the `#[utoipa::path]`
//! description of each operation. The server registers its handlers under these same
//! descriptions (utoipa-axum's `routes!` finds `__path_list_zones` and the others through a
//! re-export), so a route cannot exist without its
//! documentation and the documentation cannot describe a route the server does not have.
//!
//! What every operation answers alike (413, 429, 500, 503 and the `default` error response) and
//! what every `GET` implies (its `HEAD`) are added by [`finish`], to the document and to the
//! server's registered routes alike, so no operation can forget them.
//!
//! `openapi.json` at the workspace root is [`document_json`]'s output, checked in; `cargo xtask
//! openapi` regenerates it and a test fails when it is stale.

use std::sync::LazyLock;

use serde_json::Value;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::deprecation::Deprecation;
use crate::error::KnownErrorCode;
use crate::mappings::{AwsDescribeOutput, AzureLocation, CloudOutput};
use crate::offerings::{
    AwsOfferingsOutput, AzureSku, GcpMachineType, InstanceTypeList, InstanceTypeZones,
    OfferingsOutput, RegionOfferings,
};
use crate::zones::{ListingStatus, ZoneId};
use crate::{
    AppliedMapping, CatalogSource, ErrorBody, ErrorCode, MappedRegion, MappedZone, NameScope,
    OptIn, ProfileId, ProviderId, ProviderList, RegionId, RegionList, SkippedZone, SourceReference,
    Visibility, ZoneIdentity, ZoneIdentityList, ZoneList, ZoneMapping, ZoneMappingAnswer,
    ZoneMappingId, ZoneMappingList, ZoneMappingRequest, ZoneMappingSummary, ZoneType,
};

// The module is in parts: `operations` (the four `#[utoipa::path]` descriptions), `schemas`
// (the schema-only types of headers), `complete` (`finish` and `mark_deprecated`, which turn
// utoipa's output into the published document) and `rate_limit` (the `RateLimit` headers
// `finish` declares).
mod complete;
mod examples;
mod identities;
mod offerings;
mod operations;
mod provider_shapes;
mod rate_limit;
mod schemas;

pub use crate::ids::EXAMPLE_PROFILE_ID;
pub use crate::mappings::EXAMPLE_ZONE_MAPPING_ID;
pub use complete::{finish, mark_deprecated};
// The `__path_*` types are what utoipa generates for each description; the server's routes and
// `ApiDoc` below find them next to the function of the same name, so they are re-exported too.
pub use identities::{
    __path_delete_zone_mapping, __path_get_zone_mapping, __path_list_zone_identities,
    __path_list_zone_mappings, __path_put_zone_mapping, delete_zone_mapping, get_zone_mapping,
    list_zone_identities, list_zone_mappings, put_zone_mapping,
};
pub use offerings::{__path_list_instance_types, list_instance_types};
pub use operations::{
    __path_delete_application_profile, __path_list_providers, __path_list_regions,
    __path_list_zones, delete_application_profile, list_providers, list_regions, list_zones,
};
pub use schemas::{
    CallerRequestId, EntityTag, IdempotencyKey, IdempotentReplayed, IfNoneMatch,
    ListingCacheControl, RequestId, ENTITY_TAG_MAX_LEN,
};

/// Name of the security scheme in the document.
pub const SECURITY_SCHEME: &str = "apiKey";
/// Tag of the zone operations.
pub const TAG_ZONES: &str = "zones";
/// Tag of the profile operations.
pub const TAG_PROFILES: &str = "profiles";
/// Tag of the zone-mapping operations.
pub const TAG_ZONE_MAPPINGS: &str = "zone-mappings";

/// The published document, as JSON.
///
/// Built once per process and copied for each caller: a process that builds several servers
/// (each test of the suites starts one) would otherwise build it again for each.
pub fn document() -> Value {
    DOCUMENT.clone()
}

static DOCUMENT: LazyLock<Value> = LazyLock::new(|| document_with(crate::DEPRECATIONS));

/// The document with `deprecations` marked (see [`mark_deprecated`]): [`document`] with this
/// version's own, or a test's.
pub fn document_with(deprecations: &[Deprecation]) -> Value {
    let mut doc = finish(ApiDoc::openapi());
    mark_deprecated(&mut doc, deprecations);
    doc
}

/// The generated document as it is checked in: pretty JSON with a trailing newline.
///
/// ```
/// let json = appzone_contract::openapi::document_json();
/// assert!(json.contains("\"listZones\""));
/// assert!(json.ends_with("}\n"));
/// ```
pub fn document_json() -> String {
    // Once per process, as `document`.
    static JSON: LazyLock<String> = LazyLock::new(|| pretty(&DOCUMENT));
    JSON.clone()
}

/// [`document_json`] with `deprecations` marked: what a server configured with them serves.
pub fn document_json_with(deprecations: &[Deprecation]) -> String {
    if deprecations == crate::DEPRECATIONS {
        return document_json();
    }
    pretty(&document_with(deprecations))
}

fn pretty(document: &Value) -> String {
    // Serializing a document built from static data cannot fail; a failure is a bug in utoipa.
    let mut json = serde_json::to_string_pretty(document)
        .unwrap_or_else(|err| panic!("the OpenAPI document must serialize: {err}"));
    json.push('\n');
    json
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "appzone API",
        description = "List the zones of a cloud provider's region, with their account-independent \
identities and the caller's own zone names, and delete an organization's application \
profiles. To find the ids to ask for, list the providers (`GET /api/v1/providers`), \
then a provider's regions (`GET /api/v1/providers/{providerId}/regions`).\n\n\
## Authentication\n\n\
Every operation needs an API key in the `X-API-KEY` header. Keys look like \
`apz_<key_id>_<secret>` and belong to one organization with a role, `admin` or `member`. \
**The key is checked before anything else**: a request without a valid key gets 401 whatever \
its path parameters are. A missing, empty or blank header gives `missing_api_key`; an unknown, \
malformed (for example `Bearer <key>`) or revoked key gives `invalid_api_key`.\n\n\
## Errors\n\n\
Every error response, whatever its cause (including unknown routes, wrong methods, timeouts and \
overload), has the content type `application/json` and the body \
`{\"error\": \"<human message>\", \"error_code\": \"<code>\"}`. Branch on `error_code`, never on \
the message. The `KnownErrorCode` schema lists and explains the codes of this version; codes may \
be added, so `error_code` accepts any code, and a client treats one it does not know like the \
HTTP status it came with. Besides the statuses each operation lists, every operation may \
answer 413, 429, 500 and 503, and any path 404 `not_found` (no such route) or 405 \
`method_not_allowed` (with an `Allow` header). The one exception to the error body is 431 \
(request headers too large, over 32 KiB by default): the HTTP layer (hyper) answers it before \
the service sees the request, with no body, no content type and no `X-Request-Id`, and closes \
the connection.\n\n\
## Request ids\n\n\
Every response the service answers carries `X-Request-Id` (a 431 from the HTTP layer, above, \
does not). Send your own to have it echoed: a value of 1 to 128 characters of \
`[A-Za-z0-9._:-]` is echoed; any other value is not refused but replaced by a new id, as a \
missing one is. Quote it when reporting a problem: it ties the response to the server's \
log.\n\n\
## Limits\n\n\
Requests may be rate limited per key and per client address (429 with `Retry-After`), and are \
shed with 503 `unavailable` and `Retry-After` when the service is overloaded or its database \
is unreachable. Both are safe to retry after the indicated delay. While a limit is on, answers \
announce it in the `RateLimit-Policy` and `RateLimit` headers (IETF \
draft-ietf-httpapi-ratelimit-headers): answers to a request with an accepted key show the \
key's quota and what is left of it, for example `RateLimit-Policy: \"per-key\";q=1000;w=1` and \
`RateLimit: \"per-key\";r=998;t=1`; a 401 shows the limit on failed authentications from the \
client address, `\"auth-failures\"`.\n\n\
## Compatibility\n\n\
Everything under `/api/v1` only changes in ways that keep working clients working: new \
operations, new optional parameters, new response fields, new error codes, new documented \
statuses and headers. Read responses tolerantly: ignore fields and codes you do not know. \
Breaking changes never happen within `/api/v1`: removing or renaming a path, operation, field, \
header or status; changing a field's type, format or pattern; making an optional input \
required; tightening a rule on what a request may send; loosening a promise about what a \
response holds (a field that may now be missing or null). Such a change comes as a new major \
path (`/api/v2`), with `/api/v1` kept beside it. An operation on its way out is marked \
`deprecated` here first, with its dates, and its answers carry `Deprecation` (RFC 9745) and, \
once a removal date is set, `Sunset` (RFC 8594); it keeps working for at least six months \
after it is deprecated, and is only removed with its major version.",
        license(name = "MIT OR Apache-2.0", identifier = "MIT OR Apache-2.0"),
        contact(name = "appzone maintainers", url = "https://github.com/appzone/appzone")
    ),
    servers(
        (
            url = "/",
            description = "The origin serving this document (local, staging or production). A \
copy hosted elsewhere names the deployment's URL here instead, for example \
https://appzone.example.com."
        )
    ),
    paths(
        list_providers,
        list_regions,
        list_zones,
        list_zone_identities,
        list_instance_types,
        delete_application_profile,
        list_zone_mappings,
        get_zone_mapping,
        put_zone_mapping,
        delete_zone_mapping
    ),
    components(schemas(
        ProviderList,
        RegionList,
        ZoneList,
        ErrorBody,
        ErrorCode,
        KnownErrorCode,
        ProviderId,
        RegionId,
        ProfileId,
        RequestId,
        CallerRequestId,
        EntityTag,
        IfNoneMatch,
        ZoneId,
        ListingStatus,
        ListingCacheControl,
        IdempotencyKey,
        IdempotentReplayed,
        ZoneIdentityList,
        ZoneIdentity,
        NameScope,
        ZoneType,
        Visibility,
        OptIn,
        AppliedMapping,
        CatalogSource,
        SourceReference,
        ZoneMappingId,
        ZoneMappingRequest,
        ZoneMappingAnswer,
        ZoneMapping,
        MappedRegion,
        MappedZone,
        SkippedZone,
        ZoneMappingList,
        ZoneMappingSummary,
        CloudOutput,
        AwsDescribeOutput,
        AzureLocation,
        OfferingsOutput,
        AwsOfferingsOutput,
        AzureSku,
        GcpMachineType,
        RegionOfferings,
        InstanceTypeList,
        InstanceTypeZones
    )),
    modifiers(&SecurityAddon),
    security(("apiKey" = [])),
    tags(
        (name = "zones", description = "The service's catalog: cloud providers, their regions, \
and the availability zones of each region. The three listings share one envelope and the same \
caching rules."),
        (name = "profiles", description = "Application profiles of the caller's organization."),
        (name = "zone-mappings", description = "The organization's own zone names, stored from \
its cloud CLI's output (`aws ec2 describe-availability-zones`, `az account list-locations`) and \
applied to the zone-identity listing with `?mapping=`, with the instance types each account may \
launch where (`describe-instance-type-offerings`, `az vm list-skus`, `gcloud compute \
machine-types list`).")
    )
)]
struct ApiDoc;

struct SecurityAddon;

impl Modify for SecurityAddon {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            SECURITY_SCHEME,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "X-API-KEY",
                "API key of the form `apz_<key_id>_<secret>`, issued by an operator with \
                 `appzone-server key create`. The key belongs to one organization and has the \
                 role `admin` or `member`.",
            ))),
        );
    }
}

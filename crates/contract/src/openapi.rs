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

use serde_json::{json, Map, Value};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, SecurityScheme};
use utoipa::openapi::RefOr;
use utoipa::{Modify, OpenApi, PartialSchema};

use crate::deprecation::Deprecation;
use crate::error::KnownErrorCode;
use crate::headers::{IDEMPOTENCY_KEY_MAX_LEN, LISTING_CACHE_CONTROL, REQUEST_ID_MAX_LEN};
use crate::zones::{ListingStatus, ZoneId};
use crate::{
    ErrorBody, ErrorCode, ProfileId, ProviderId, ProviderList, RegionId, RegionList, ZoneList,
};

/// Name of the security scheme in the document.
pub const SECURITY_SCHEME: &str = "apiKey";
/// Tag of the zone operations.
pub const TAG_ZONES: &str = "zones";
/// Tag of the profile operations.
pub const TAG_PROFILES: &str = "profiles";

/// The published document, as JSON.
pub fn document() -> Value {
    document_with(crate::DEPRECATIONS)
}

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
    document_json_with(crate::DEPRECATIONS)
}

/// [`document_json`] with `deprecations` marked: what a server configured with them serves.
pub fn document_json_with(deprecations: &[Deprecation]) -> String {
    // Serializing a document built from static data cannot fail; a failure is a bug in utoipa.
    let mut json = serde_json::to_string_pretty(&document_with(deprecations))
        .unwrap_or_else(|err| panic!("the OpenAPI document must serialize: {err}"));
    json.push('\n');
    json
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "appzone API",
        description = "List the zones of a cloud provider's region, and delete an organization's \
application profiles. To find the ids to ask for, list the providers (`GET /api/v1/providers`), \
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
(request headers too large), which the HTTP layer answers in plain text before the service \
sees the request.\n\n\
## Request ids\n\n\
Every response carries `X-Request-Id`. Send your own (1 to 128 characters of \
`[A-Za-z0-9._:-]`) to have it echoed; otherwise the service makes one. Quote it when reporting \
a problem: it ties the response to the server's log.\n\n\
## Limits\n\n\
Requests may be rate limited per key and per client address (429 with `Retry-After`), and are \
shed with 503 `unavailable` and `Retry-After` when the service is overloaded or its database \
is unreachable. Both are safe to retry after the indicated delay.\n\n\
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
    paths(list_providers, list_regions, list_zones, delete_application_profile),
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
        EntityTag,
        ZoneId,
        ListingStatus,
        ListingCacheControl,
        IdempotencyKey,
        IdempotentReplayed
    )),
    modifiers(&SecurityAddon),
    security(("apiKey" = [])),
    tags(
        (name = "zones", description = "The service's catalog: cloud providers, their regions, \
and the availability zones of each region. The three listings share one envelope and the same \
caching rules."),
        (name = "profiles", description = "Application profiles of the caller's organization.")
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

/// Description of the provider listing. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/providers",
    operation_id = "listProviders",
    tag = "zones",
    summary = "List the providers of the catalog",
    description = "Returns the ids of the cloud providers the service's catalog holds, in catalog \
order: the order of the catalog the operator imported (for the built-in catalog: `aws`, `gcp`, \
`azure`). The order changes only when an operator imports a catalog that changes it. Both admin \
and member keys may call it.\n\n\
The answer uses the zone listing's envelope (`data`, `id`, `message`, `status`), so one code path \
reads every listing, and each entry of `data` is a `providerId` for \
`GET /api/v1/providers/{providerId}/regions`.\n\n\
The answer carries a weak `ETag` computed over the provider ids (not over the per-request `id`), \
and `Cache-Control: private, max-age=60`. Send the ETag back in `If-None-Match` to get 304 with \
no body while the providers are unchanged.",
    params(
        ("If-None-Match" = Option<EntityTag>, Header, nullable = false, description = "An `ETag` from an earlier answer, for example `W/\"0a1b2c3d4e5f60718293a4b5\"`; a match gives 304. Leave it out to get the providers."),
        ("X-Request-Id" = Option<RequestId>, Header, nullable = false, description = "Optional request id of your own, for example `setup-3c9d`, echoed in the `X-Request-Id` response header and the body's `id`. Leave it out to get a fresh one.")
    ),
    responses(
        (status = 200, description = "The providers. `id` equals the `X-Request-Id` header.", body = ProviderList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over the provider ids, for `If-None-Match`."),
                ("Cache-Control" = ListingCacheControl, description = "Always `private, max-age=60`: a browser or client may reuse the answer for 60 seconds; shared caches must not keep it.")
            )),
    ),
    security(("apiKey" = []))
)]
pub fn list_providers() {}

/// Description of the region listing. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/providers/{providerId}/regions",
    operation_id = "listRegions",
    tag = "zones",
    summary = "List the regions of a provider",
    description = "Returns the region ids of one cloud provider, in catalog order. Both admin and \
member keys may call it.\n\n\
Checks happen in this order: API key (401), then `providerId` (400 `invalid_provider` when \
malformed or unknown; for an unknown one, the message names the closest provider id when \
exactly one is close, and points to `GET /api/v1/providers` otherwise). A known provider without \
regions answers 200 with an empty `data` array.\n\n\
Path segments are percent-decoded before validation and matched exactly (case-sensitive).\n\n\
The answer uses the zone listing's envelope (`data`, `id`, `message`, `status`), so one code path \
reads every listing, and each entry of `data` is a `regionId` for \
`GET /api/v1/providers/{providerId}/regions/{regionId}/zones`.\n\n\
The answer carries a weak `ETag` computed over the provider and its region ids (not over the \
per-request `id`), and `Cache-Control: private, max-age=60`. Send the ETag back in \
`If-None-Match` to get 304 with no body while the regions are unchanged.",
    params(
        ("providerId" = ProviderId, Path, description = "Provider identifier, for example `aws`, `gcp` or `azure`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("If-None-Match" = Option<EntityTag>, Header, nullable = false, description = "An `ETag` from an earlier answer, for example `W/\"0a1b2c3d4e5f60718293a4b5\"`; a match gives 304. Leave it out to get the regions."),
        ("X-Request-Id" = Option<RequestId>, Header, nullable = false, description = "Optional request id of your own, for example `setup-3c9d`, echoed in the `X-Request-Id` response header and the body's `id`. Leave it out to get a fresh one.")
    ),
    responses(
        (status = 200, description = "The provider's regions. `id` equals the `X-Request-Id` header.", body = RegionList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over the provider and its region ids, for `If-None-Match`."),
                ("Cache-Control" = ListingCacheControl, description = "Always `private, max-age=60`: a browser or client may reuse the answer for 60 seconds; shared caches must not keep it.")
            )),
        (status = 400, description = "`invalid_provider`: the provider id is malformed or not a provider of the catalog. For an unknown one, the message names the closest provider id when exactly one is close, and points to the provider listing otherwise.", body = ErrorBody,
            examples(
                ("close" = (summary = "Unknown provider, with the closest id", value = json!({"error": "unknown provider: no provider has the id \"awz\"; did you mean \"aws\"?", "error_code": "invalid_provider"}))),
                ("not_close" = (summary = "Unknown provider, none close", value = json!({"error": "unknown provider: no provider has the id \"oracle\"; GET /api/v1/providers lists the providers", "error_code": "invalid_provider"}))),
                ("malformed" = (summary = "Malformed provider id", value = json!({"error": "invalid provider id: provider id may contain only lowercase ASCII letters, digits and '-'; found 'W' at position 1", "error_code": "invalid_provider"})))
            )),
    ),
    security(("apiKey" = []))
)]
pub fn list_regions() {}

/// Description of the zone listing. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/providers/{providerId}/regions/{regionId}/zones",
    operation_id = "listZones",
    tag = "zones",
    summary = "List the zones of a provider's region",
    description = "Returns the availability zones of one region of one cloud provider, in catalog \
order. Both admin and member keys may call it.\n\n\
Checks happen in this order: API key (401), then `providerId` (400 `invalid_provider` when \
malformed or unknown), then `regionId` (400 `invalid_region` when malformed, 404 \
`region_not_found` when well-formed but unknown for that provider). A known region without zones \
answers 200 with an empty `data` array.\n\n\
Path segments are percent-decoded before validation and matched exactly (case-sensitive).\n\n\
The answer carries a weak `ETag` computed over provider, region and zones (not over the \
per-request `id`), and `Cache-Control: private, max-age=60`. Send the ETag back in \
`If-None-Match` to get 304 with no body while the zones are unchanged.",
    params(
        ("providerId" = ProviderId, Path, description = "Provider identifier, for example `aws`, `gcp` or `azure`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("regionId" = RegionId, Path, description = "Region identifier within the provider, for example `us-east-1`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("If-None-Match" = Option<EntityTag>, Header, nullable = false, description = "An `ETag` from an earlier answer, for example `W/\"6c1e0f7a2b9d4e11\"`; a match gives 304. Leave it out to get the zones."),
        ("X-Request-Id" = Option<RequestId>, Header, nullable = false, description = "Optional request id of your own, for example `checkout-7f3a`, echoed in the `X-Request-Id` response header and the body's `id`. Leave it out to get a fresh one.")
    ),
    responses(
        (status = 200, description = "The region's zones. `id` equals the `X-Request-Id` header.", body = ZoneList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over provider, region and zones, for `If-None-Match`."),
                ("Cache-Control" = ListingCacheControl, description = "Always `private, max-age=60`: a browser or client may reuse the answer for 60 seconds; shared caches must not keep it.")
            )),
        (status = 400, description = "`invalid_provider`: the provider id is malformed or not a provider of the catalog (the message then names the closest provider id when exactly one is close, and points to the provider listing otherwise). `invalid_region`: the region id is malformed.", body = ErrorBody,
            examples(
                ("invalid_provider" = (summary = "Unknown provider, with the closest id", value = json!({"error": "unknown provider: no provider has the id \"aws2\"; did you mean \"aws\"?", "error_code": "invalid_provider"}))),
                ("invalid_region" = (summary = "Malformed region id", value = json!({"error": "invalid region id: region id may contain only lowercase ASCII letters, digits and '-'; found 'E' at position 3", "error_code": "invalid_region"})))
            )),
        (status = 404, description = "`region_not_found`: the region id is well-formed but the provider has no such region. The message names the provider's closest region id when exactly one is close, and points to the region listing otherwise.", body = ErrorBody,
            examples(
                ("close" = (summary = "A region id close to one of the provider's", value = json!({"error": "region not found: aws has no region \"us-eats-1\"; did you mean \"us-east-1\"?", "error_code": "region_not_found"}))),
                ("not_close" = (summary = "No single region id is close", value = json!({"error": "region not found: aws has no region \"us-east-9\"; GET /api/v1/providers/aws/regions lists its regions", "error_code": "region_not_found"})))
            )),
    ),
    security(("apiKey" = []))
)]
pub fn list_zones() {}

/// Description of the profile deletion. Never called; see the module docs.
#[utoipa::path(
    delete,
    path = "/api/v1/applications/profiles/{profileId}",
    operation_id = "deleteApplicationProfile",
    tag = "profiles",
    summary = "Delete an application profile",
    description = "Deletes one application profile of the caller's organization. Only keys with \
the `admin` role may delete.\n\n\
Checks happen in this order: API key (401); then the profile: one that does not exist, is \
already deleted, or belongs to **another organization** answers 404 `profile_not_found`, \
exactly like a missing one, so the existence of other tenants' profiles is never revealed; a \
malformed `profileId` cannot exist and also answers 404. Then the role: a `member` key gets 403 \
`forbidden` (with a message to contact the organization admin). An `admin` key gets 204.\n\n\
A 204 means the deletion is committed durably. Of two concurrent deletions of one profile, \
exactly one gets 204 and the other 404; repeating a deletion answers 404. Deleted profiles are \
kept as tombstones for a retention period (30 days by default) during which an operator can \
restore them; every deletion is recorded in an audit log with the key id and request id.\n\n\
Every answer tells what happened: 204 only once the deletion is committed; a 5xx only when \
nothing was changed (a request timeout never leaves a deletion running behind its 503). A \
connection lost before the answer is the one case a caller cannot tell apart, and \
`Idempotency-Key` makes that case safe to retry.\n\n\
**Retries with `Idempotency-Key`** (IETF draft-ietf-httpapi-idempotency-key-header). Send a \
unique key of your own (a UUID, say) with each deletion and the same key with each retry of \
it. The outcome of the first attempt (204 or 404) is kept with the key for your organization \
for 24 hours, and a retry with the same key gets that outcome again, with \
`Idempotent-Replayed: true`, whatever happened in between: a retry after a lost answer learns \
that its deletion succeeded instead of seeing 404. Answers that change nothing (401, 403, \
429, 5xx) are not kept, so a retry runs again. The same key sent for another profile answers \
422 `idempotency_key_reused`; sent while the first attempt is still running on this replica, \
409 `idempotency_key_in_use` (retry after `Retry-After`). A key that is empty, longer than 255 \
characters or not visible ASCII answers 400 `invalid_idempotency_key`, checked after the API \
key. Without the header a deletion works as before, and a repeated one answers 404.",
    params(
        ("profileId" = ProfileId, Path, description = "Application profile identifier, for example `prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2`. Pattern `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`; a value outside it answers 404."),
        ("X-Request-Id" = Option<RequestId>, Header, nullable = false, description = "Optional request id of your own, for example `cleanup-job-42`, echoed in the `X-Request-Id` response header and recorded in the audit log. Leave it out to get a fresh one."),
        ("Idempotency-Key" = Option<IdempotencyKey>, Header, nullable = false, description = "Optional key of your own, for example `8e03978e-40d5-43e8-bc93-6894a57f9324`, the same on every retry of one deletion: a retry then gets the first attempt's outcome (204 or 404) again, marked `Idempotent-Replayed: true`. Kept 24 hours per organization.")
    ),
    responses(
        (status = 204, description = "Deleted and committed durably. No body. With `Idempotent-Replayed: true`, a replay of the first attempt with the same `Idempotency-Key`, which deleted the profile.",
            headers(
                ("Idempotent-Replayed" = IdempotentReplayed, description = "`true` when this answer replays the outcome of an earlier request with the same `Idempotency-Key`; absent otherwise.")
            )),
        (status = 400, description = "`invalid_idempotency_key`: the `Idempotency-Key` header is empty, longer than 255 characters, or not visible ASCII.", body = ErrorBody,
            example = json!({"error": "invalid Idempotency-Key: use 1 to 255 visible ASCII characters, for example a UUID", "error_code": "invalid_idempotency_key"})),
        (status = 409, description = "`idempotency_key_in_use`: a request with this `Idempotency-Key` is still being processed. Retry after `Retry-After` seconds to get its outcome.", body = ErrorBody,
            example = json!({"error": "a request with this Idempotency-Key is still being processed; retry shortly", "error_code": "idempotency_key_in_use"})),
        (status = 422, description = "`idempotency_key_reused`: this `Idempotency-Key` was used within 24 hours for another request (another profile). Use a new key for a new request.", body = ErrorBody,
            example = json!({"error": "this Idempotency-Key was used for another request; use a new key for each deletion", "error_code": "idempotency_key_reused"})),
        (status = 403, description = "`forbidden`: the key's role (`member`) may not delete profiles. Contact the organization admin.", body = ErrorBody,
            example = json!({"error": "your role may not delete application profiles; contact your organization admin", "error_code": "forbidden"})),
        (status = 404, description = "`profile_not_found`: no such profile in the caller's organization (absent, already deleted, malformed id, or another organization's). With `Idempotent-Replayed: true`, a replay of the first attempt with the same `Idempotency-Key`, which found no profile.", body = ErrorBody,
            headers(
                ("Idempotent-Replayed" = IdempotentReplayed, description = "`true` when this answer replays the outcome of an earlier request with the same `Idempotency-Key`; absent otherwise.")
            ),
            example = json!({"error": "application profile not found", "error_code": "profile_not_found"})),
    ),
    security(("apiKey" = []))
)]
pub fn delete_application_profile() {}

/// Schema of the `Idempotency-Key` request header.
#[derive(Debug)]
pub struct IdempotencyKey;

impl PartialSchema for IdempotencyKey {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "A key of the caller's choosing, unique per deletion (a UUID, say): 1 to 255 \
                 visible ASCII characters, optionally in double quotes (the draft's \
                 structured-field form; the quotes are not part of the key).",
            ))
            .pattern(Some(format!(
                "^(\"[!#-\\[\\]-~]{{1,{IDEMPOTENCY_KEY_MAX_LEN}}}\"|[!#-\\[\\]-~]{{1,{IDEMPOTENCY_KEY_MAX_LEN}}})$"
            )))
            .min_length(Some(1))
            .max_length(Some(IDEMPOTENCY_KEY_MAX_LEN + 2))
            .into()
    }
}

/// Schema of the `Idempotent-Replayed` response header.
#[derive(Debug)]
pub struct IdempotentReplayed;

impl PartialSchema for IdempotentReplayed {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .enum_values(Some(["true"]))
            .into()
    }
}

/// Schema of the `X-Request-Id` header, sent or answered.
#[derive(Debug)]
pub struct RequestId;

impl PartialSchema for RequestId {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "A request id: 1 to 128 letters, digits, '.', '_', ':' or '-'. The service \
                 echoes a valid one it receives, and makes a new one (26 characters) otherwise.",
            ))
            .pattern(Some(format!("^[A-Za-z0-9._:-]{{1,{REQUEST_ID_MAX_LEN}}}$")))
            .min_length(Some(1))
            .max_length(Some(REQUEST_ID_MAX_LEN))
            .into()
    }
}

/// Schema of the `ETag` and `If-None-Match` headers of the zone listing.
#[derive(Debug)]
pub struct EntityTag;

/// Longest `If-None-Match` value a client should send.
pub const ENTITY_TAG_MAX_LEN: usize = 1024;

/// One entity tag, a comma-separated list of them, or `*` (HTTP's `If-None-Match` grammar).
const ENTITY_TAGS_PATTERN: &str =
    r#"^(\*|(W/)?"[\x21\x23-\x7e]*"([ \t]*,[ \t]*(W/)?"[\x21\x23-\x7e]*")*)$"#;

impl PartialSchema for EntityTag {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .description(Some(
                "An entity tag as HTTP defines it, for example W/\"6c1e0f7a2b9d4e11\". The \
                 service's tags are weak; send one back unchanged in If-None-Match (several \
                 may be listed, separated by commas, or *).",
            ))
            .pattern(Some(ENTITY_TAGS_PATTERN))
            .min_length(Some(1))
            .max_length(Some(ENTITY_TAG_MAX_LEN))
            .into()
    }
}

/// Completes a document generated by utoipa into the published one (see the module docs):
///
/// - every operation gets the responses all routes share: 413, 429, 500, 503 and a `default`
///   error response; every operation that takes a key, its 401; every listing whose 200
///   carries an `ETag`, its 304;
/// - every response declares the `X-Request-Id` header;
/// - every `GET` gets its `HEAD`: the same answers without bodies;
/// - every server entry is marked public (`x-internal: false`);
/// - every response header the document declares is marked `required`: the service always sends
///   each one with the status it is declared for (utoipa has no field for this).
///
/// The server's test compares its registered routes, completed the same way, with the document.
pub fn finish(openapi: utoipa::openapi::OpenApi) -> Value {
    let mut doc = serde_json::to_value(openapi)
        .unwrap_or_else(|err| panic!("the OpenAPI document must serialize: {err}"));
    // Every server entry is meant for the public (an inventory mark API portals and the OWASP
    // ruleset read); utoipa has no field for extensions on servers.
    for server in doc
        .get_mut("servers")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        server.insert("x-internal".to_owned(), Value::Bool(false));
    }
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for item in paths.values_mut().filter_map(Value::as_object_mut) {
            for operation in item.values_mut() {
                add_shared_responses(operation);
                add_request_id_header(operation);
            }
            if let Some(get) = item.get("get") {
                let head = head_of(get);
                item.insert("head".to_owned(), head);
            }
            for operation in item.values_mut() {
                require_response_headers(operation);
            }
        }
    }
    doc
}

/// Marks each operation of `deprecations` (and the `HEAD` twin of a `GET`) `deprecated`, says
/// since when and until when in its description, and declares on each of its responses the
/// headers the server then sends: `Deprecation` always, `Sunset` once a date is set.
pub fn mark_deprecated(doc: &mut Value, deprecations: &[Deprecation]) {
    let operations = doc
        .get_mut("paths")
        .and_then(Value::as_object_mut)
        .into_iter()
        .flat_map(Map::values_mut)
        .filter_map(Value::as_object_mut)
        .flat_map(Map::values_mut);
    for operation in operations {
        let id = operation["operationId"].as_str().unwrap_or_default();
        let Some(deprecation) = deprecations
            .iter()
            .find(|d| id == d.operation_id || id.strip_suffix("Head") == Some(d.operation_id))
        else {
            continue;
        };
        let mut headers = Map::new();
        headers.insert("Deprecation".to_owned(), json!({
            "schema": {"type": "string", "pattern": "^@[0-9]+$"},
            "description": "When the operation was deprecated (RFC 9745): `@` and seconds since the Unix epoch.",
            "example": deprecation.deprecation_header().to_str().unwrap_or_default(),
            "required": true
        }));
        if let Some(sunset) = deprecation.sunset_header() {
            headers.insert(
                "Sunset".to_owned(),
                json!({
                    "schema": {"type": "string"},
                    "description": "When the operation stops answering (RFC 8594), an HTTP-date.",
                    "example": sunset.to_str().unwrap_or_default(),
                    "required": true
                }),
            );
        }
        let description = operation["description"].as_str().unwrap_or_default();
        operation["description"] =
            Value::String(format!("{description}\n\n{}", deprecation.description()));
        operation["deprecated"] = Value::Bool(true);
        let responses = operation
            .get_mut("responses")
            .and_then(Value::as_object_mut)
            .into_iter()
            .flat_map(Map::values_mut);
        for response in responses {
            let declared = response["headers"].as_object_mut();
            match declared {
                Some(declared) => declared.extend(headers.clone()),
                None => response["headers"] = Value::Object(headers.clone()),
            }
        }
    }
}

fn error_response(description: &str, headers: Value) -> Value {
    json!({
        "description": description,
        "headers": headers,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    })
}

fn request_id_header() -> Value {
    json!({"X-Request-Id": {
        "schema": {"$ref": "#/components/schemas/RequestId"},
        "description": "The request id."
    }})
}

fn retry_headers() -> Value {
    json!({
        "Retry-After": {
            "schema": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 3600},
            "description": "Seconds to wait before retrying."
        },
        "X-Request-Id": {
            "schema": {"$ref": "#/components/schemas/RequestId"},
            "description": "The request id."
        }
    })
}

fn add_shared_responses(operation: &mut Value) {
    let has_path_parameters = operation["parameters"]
        .as_array()
        .is_some_and(|params| params.iter().any(|p| p["in"] == "path"));
    let lists_with_etag = operation["responses"]["200"]["headers"]
        .get("ETag")
        .is_some();
    let takes_a_key = operation.get("security").is_some();
    let Some(responses) = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let shared = [
        (
            "413",
            error_response(
                "`payload_too_large`: the request carries a body over the service's limit \
                 (64 KiB by default). No operation of this API takes a body.",
                request_id_header(),
            ),
        ),
        (
            "429",
            error_response(
                "`rate_limited`: too many requests for this key or client address. Retry after \
                 `Retry-After` seconds.",
                retry_headers(),
            ),
        ),
        (
            "500",
            error_response(
                "`internal_error`: a bug. Details are only in the service's log, under the \
                 request id.",
                request_id_header(),
            ),
        ),
        (
            "503",
            error_response(
                "`unavailable`: the service is overloaded, timed out, or cannot reach its \
                 database; nothing was changed. Safe to retry after `Retry-After` seconds.",
                retry_headers(),
            ),
        ),
        (
            "default",
            error_response(
                "Any other error, with the same body: `not_found` (404) for a path that no \
                 route matches, such as one ending in `/`; `method_not_allowed` (405) for a \
                 method the path does not have, with an `Allow` header listing the ones it has; \
                 and codes added after this version of the document. Branch on `error_code`, \
                 and treat a code you do not know like its HTTP status.",
                request_id_header(),
            ),
        ),
    ];
    for (status, response) in shared {
        responses.entry(status).or_insert(response);
    }
    if takes_a_key {
        responses
            .entry("401")
            .or_insert_with(|| unauthorized(has_path_parameters));
    }
    if lists_with_etag {
        responses.entry("304").or_insert_with(not_modified);
    }
    // A 409 (an `Idempotency-Key` still in use) says when to retry, as 429 and 503 do.
    if let Some(conflict) = responses.get_mut("409").and_then(Value::as_object_mut) {
        conflict.insert("headers".to_owned(), retry_headers());
    }
    // Statuses in order, `default` last, wherever they were added.
    responses.sort_keys();
}

/// The 401 of every operation that takes a key.
fn unauthorized(checked_before_path_parameters: bool) -> Value {
    let description = format!(
        "`missing_api_key`: no, empty or blank `X-API-KEY`. `invalid_api_key`: unknown, \
         malformed or revoked key.{}",
        if checked_before_path_parameters {
            " Checked before the path parameters."
        } else {
            ""
        }
    );
    let mut response = error_response(&description, request_id_header());
    response["content"]["application/json"]["examples"] = json!({
        "invalid_api_key": {
            "summary": "Unknown or revoked key",
            "value": {"error": "invalid API key", "error_code": "invalid_api_key"}
        },
        "missing_api_key": {
            "summary": "No key sent",
            "value": {
                "error": "missing API key: send it in the X-API-KEY header",
                "error_code": "missing_api_key"
            }
        }
    });
    response
}

/// What every listing answer says of its `Cache-Control`.
const CACHE_CONTROL_DESCRIPTION: &str = "Always `private, max-age=60`: a browser or client may \
    reuse the answer for 60 seconds; shared caches must not keep it.";

/// The 304 of every listing whose 200 carries an `ETag`.
fn not_modified() -> Value {
    json!({
        "description": "Not modified: the `If-None-Match` value matches the current `ETag`. No body.",
        "headers": {
            "Cache-Control": {
                "schema": {"$ref": "#/components/schemas/ListingCacheControl"},
                "description": CACHE_CONTROL_DESCRIPTION
            },
            "ETag": {
                "schema": {"$ref": "#/components/schemas/EntityTag"},
                "description": "The current validator."
            },
            "X-Request-Id": {
                "schema": {"$ref": "#/components/schemas/RequestId"},
                "description": "The request id."
            }
        }
    })
}

/// The `HEAD` twin of a `GET` operation: the same parameters and statuses, no bodies.
fn head_of(get: &Value) -> Value {
    let mut head = get.clone();
    if let Some(op) = head.as_object_mut() {
        let id = op
            .get("operationId")
            .and_then(Value::as_str)
            .unwrap_or("operation");
        let id = format!("{id}Head");
        let summary = op
            .get("summary")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        op.insert("operationId".to_owned(), Value::String(id));
        op.insert(
            "summary".to_owned(),
            Value::String(format!("{summary} (headers only)")),
        );
        op.insert(
            "description".to_owned(),
            Value::String(
                "The same request as the `GET` of this path, answered with the same status and \
                 headers and no body: a cheap way to check a region or revalidate an `ETag`."
                    .to_owned(),
            ),
        );
        if let Some(responses) = op.get_mut("responses").and_then(Value::as_object_mut) {
            for response in responses.values_mut().filter_map(Value::as_object_mut) {
                response.remove("content");
            }
        }
    }
    head
}

/// Every answer carries `X-Request-Id`: declared once here rather than on each response.
fn add_request_id_header(operation: &mut Value) {
    let responses = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
        .map(Map::values_mut);
    for response in responses
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        let headers = response
            .entry("headers")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(headers) = headers {
            headers
                .entry("X-Request-Id")
                .or_insert_with(|| request_id_header()["X-Request-Id"].take());
        }
        // `content` stays after `headers`, where utoipa puts it.
        if let Some(content) = response.remove("content") {
            response.insert("content".to_owned(), content);
        }
    }
}

/// Response headers sent on some answers of their status only.
const OPTIONAL_RESPONSE_HEADERS: [&str; 1] = ["Idempotent-Replayed"];

fn require_response_headers(operation: &mut Value) {
    let responses = operation
        .get_mut("responses")
        .and_then(Value::as_object_mut)
        .map(Map::values_mut);
    for response in responses.into_iter().flatten() {
        let headers = response
            .get_mut("headers")
            .and_then(Value::as_object_mut)
            .map(Map::iter_mut);
        for (name, header) in headers.into_iter().flatten() {
            // Sent only on some answers of its status (a replay).
            if OPTIONAL_RESPONSE_HEADERS.contains(&name.as_str()) {
                continue;
            }
            if let Some(header) = header.as_object_mut() {
                header.insert("required".to_owned(), Value::Bool(true));
            }
        }
    }
}

/// Schema-only type: the `Cache-Control` of the zone listing.
#[derive(Debug)]
pub struct ListingCacheControl;

impl PartialSchema for ListingCacheControl {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .enum_values(Some([LISTING_CACHE_CONTROL]))
            .into()
    }
}

schema_named_after_type!(
    RequestId,
    EntityTag,
    ListingCacheControl,
    IdempotencyKey,
    IdempotentReplayed
);

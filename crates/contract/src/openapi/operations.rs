//! The `#[utoipa::path]` description of each operation (see the parent module's docs): what
//! each operation declares for itself. What all operations share is added by [`super::finish`].

use super::schemas::{
    if_none_match_parameter, request_id_parameter, CallerRequestId, EntityTag, IdempotencyKey,
    IdempotentReplayed, IfNoneMatch, ECHOED_IN_AUDIT_LOG, ECHOED_IN_BODY,
};
use crate::{ErrorBody, ProfileId, ProviderId, ProviderList, RegionId, RegionList, ZoneList};

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
        ("If-None-Match" = Option<IfNoneMatch>, Header, nullable = false, description = if_none_match_parameter("W/\"0a1b2c3d4e5f60718293a4b5\"", "providers")),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("setup-3c9d", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The providers. `id` equals the `X-Request-Id` header.", body = ProviderList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over the provider ids, for `If-None-Match`.")
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
        ("If-None-Match" = Option<IfNoneMatch>, Header, nullable = false, description = if_none_match_parameter("W/\"0a1b2c3d4e5f60718293a4b5\"", "regions")),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("setup-3c9d", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The provider's regions. `id` equals the `X-Request-Id` header.", body = RegionList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over the provider and its region ids, for `If-None-Match`.")
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
        ("If-None-Match" = Option<IfNoneMatch>, Header, nullable = false, description = if_none_match_parameter("W/\"6c1e0f7a2b9d4e11\"", "zones")),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("checkout-7f3a", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The region's zones. `id` equals the `X-Request-Id` header.", body = ZoneList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over provider, region and zones, for `If-None-Match`.")
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
Every answer tells what happened: 204 only once the deletion is committed; a 5xx when \
nothing was changed (a request timeout never leaves a deletion running behind its 503). Two \
cases cannot be told apart: a connection lost before the answer, and on PostgreSQL a database \
connection that breaks while the deletion commits (503, the commit may or may not have \
happened). `Idempotency-Key` makes both safe to retry: the kept outcome commits with the \
deletion, so the retry learns which.\n\n\
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
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("cleanup-job-42", ECHOED_IN_AUDIT_LOG)),
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

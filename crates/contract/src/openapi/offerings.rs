//! The `#[utoipa::path]` description of the 1.3 operation: the instance-type listing (what
//! runs where). What all operations share is added by [`super::finish`].

use super::schemas::{
    if_none_match_parameter, request_id_parameter, CallerRequestId, EntityTag, IfNoneMatch,
    ECHOED_IN_BODY,
};
use crate::{ErrorBody, InstanceTypeList, ProviderId, RegionId, ZoneMappingId};
use utoipa::openapi::schema::{ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::RefOr;
use utoipa::PartialSchema;

/// Schema-only type: the `zone_id` of the instance-type listing, one zone identity.
pub struct ZoneIdParameter;

impl PartialSchema for ZoneIdParameter {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .pattern(Some("^[a-z0-9][a-z0-9-]{0,62}$"))
            .min_length(Some(1))
            .max_length(Some(63))
            .examples([serde_json::json!("use1-az1")])
            .into()
    }
}

/// Description of the instance-type listing. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/providers/{providerId}/regions/{regionId}/instance-types",
    operation_id = "listInstanceTypes",
    tag = "zones",
    summary = "List the instance types a zone mapping's account may launch in a region",
    description = "Returns the instance types one zone mapping's account is offered in one \
region, sorted by type (byte order), each with the zone identities offering it, in the \
catalog's order. The offerings are the ones stored with the mapping (`offerings` in its `PUT`: \
the account's `aws ec2 describe-instance-type-offerings`, the subscription's `az vm list-skus` \
or the project's `gcloud compute machine-types list`), placed by zone identity, so they read \
the same across accounts whose zone names differ. Both admin and member keys may call it.\n\n\
`zone_id` keeps the types offered in that zone; a zone the region lacks matches nothing, as a \
filter of the zone-identity listing does (200 with `[]`, the message saying the region has no \
such zone). A type offered in no zone is not listed.\n\n\
Checks happen in this order: API key (401), then `providerId` (400 `invalid_provider`), then \
`regionId` (400 `invalid_region`, 404 `region_not_found`), exactly as for the zone listing, \
then the query (400 `invalid_query`, naming the parameter: an unknown parameter, `mapping` \
missing, given twice or malformed, `zone_id` given twice or malformed), then \
the mapping (404 `zone_mapping_not_found` when the caller's organization has none with that \
id; 422 `invalid_zone_mapping` when it is of another provider; 422 `offerings_not_stored` when \
it holds no offerings for the region).\n\n\
The answer carries a weak `ETag` over the region, the mapping's version and the filter, and \
`Cache-Control: private, max-age=60`; `If-None-Match` with it answers 304 while the mapping is \
unchanged. `HEAD` answers the same headers without a body.",
    params(
        ("providerId" = ProviderId, Path, description = "Provider identifier, for example `aws`, `gcp` or `azure`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("regionId" = RegionId, Path, description = "Region identifier within the provider, for example `us-east-1`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("mapping" = ZoneMappingId, Query, description = "The id of a zone mapping of your organization that holds offerings for this region, for example `prod`. Required, once."),
        ("zone_id" = inline(Option<ZoneIdParameter>), Query, description = "Only the types offered in this zone identity, for example `use1-az1`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("If-None-Match" = Option<IfNoneMatch>, Header, nullable = false, description = if_none_match_parameter("W/\"4f1c2d3e4a5b60718293a4b5\"", "instance types")),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("types-7f3a", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The instance types and their zones. `id` equals the `X-Request-Id` header.", body = InstanceTypeList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over the region, the mapping's version and the filter, for `If-None-Match`.")
            )),
        (status = 400, description = "`invalid_provider`: the provider id is malformed or not a provider of the catalog. `invalid_region`: the region id is malformed. `invalid_query`: an unknown parameter, `mapping` missing, repeated or malformed, or a `zone_id` that is malformed or repeated; the message names the parameter.", body = ErrorBody,
            examples(
                ("invalid_query" = (summary = "No mapping", value = json!({"error": "invalid query parameter \"mapping\": required: the zone mapping whose offerings to list", "error_code": "invalid_query"}))),
                ("invalid_region" = (summary = "Malformed region id", value = json!({"error": "invalid region id: region id may contain only lowercase ASCII letters, digits and '-'; found 'E' at position 3", "error_code": "invalid_region"})))
            )),
        (status = 404, description = "`region_not_found`: the provider has no such region. `zone_mapping_not_found`: the caller's organization has no zone mapping with that id.", body = ErrorBody,
            example = json!({"error": "zone mapping not found: your organization has no zone mapping \"staging\"; GET /api/v1/zone-mappings lists them", "error_code": "zone_mapping_not_found"})),
        (status = 422, description = "`invalid_zone_mapping`: the mapping is of another provider. `offerings_not_stored`: the mapping holds no offerings for this region.", body = ErrorBody,
            example = json!({"error": "zone mapping \"prod\" holds no instance-type offerings for aws/us-east-1; store them with its zones (offerings in PUT /api/v1/zone-mappings/prod), from aws ec2 describe-instance-type-offerings --location-type availability-zone-id --region us-east-1 --output json (a PUT names in skipped what it could not place)", "error_code": "offerings_not_stored"})),
    ),
    security(("apiKey" = []))
)]
pub fn list_instance_types() {}

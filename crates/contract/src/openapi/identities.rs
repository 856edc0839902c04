//! The `#[utoipa::path]` descriptions of the 1.2 operations: the zone-identity listing and the
//! zone mappings. What all operations share is added by [`super::finish`].

use super::schemas::{
    if_none_match_parameter, request_id_parameter, CallerRequestId, EntityTag, IfNoneMatch,
    ECHOED_IN_AUDIT_LOG, ECHOED_IN_BODY,
};
use crate::offerings::INSTANCE_TYPE_PATTERN;
use crate::{
    ErrorBody, ProviderId, RegionId, ZoneIdentityList, ZoneMappingAnswer, ZoneMappingId,
    ZoneMappingList, ZoneMappingRequest, MAX_INSTANCE_TYPE_CHARS, MAX_MAPPINGS_PER_LISTING,
    MAX_OFFERS_PER_QUERY, MAX_ZONES_PER_REGION,
};
use serde_json::json;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, SchemaType, Type};
use utoipa::openapi::{Ref, RefOr};
use utoipa::PartialSchema;

/// The schema of a query list: an array of `items`, at most `max`, with `example` in its
/// `examples` (a query parameter's own `example` would be pre-filled and sent by Swagger UI).
fn query_list(items: RefOr<Schema>, max: usize, example: serde_json::Value) -> RefOr<Schema> {
    ArrayBuilder::new()
        .items(items)
        .max_items(Some(max))
        .examples([example])
        .into()
}

/// A string of at most `max_length` characters matching `pattern` (the length stated too, for
/// the validators and proxies that read no pattern).
fn word(pattern: &str, max_length: usize) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(SchemaType::Type(Type::String))
        .pattern(Some(pattern))
        .min_length(Some(1))
        .max_length(Some(max_length))
        .into()
}

/// Declares the schema types of the identity listing's query lists.
macro_rules! query_lists {
    ($($(#[$doc:meta])* $name:ident => $schema:expr;)+) => {$(
        $(#[$doc])*
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                $schema
            }
        }
    )+};
}

query_lists! {
    /// `mapping`, repeated: zone mapping ids.
    MappingIds => query_list(
        Ref::from_schema_name("ZoneMappingId").into(),
        MAX_MAPPINGS_PER_LISTING,
        json!(["prod"]),
    );
    /// `zone_type`: zone types, or `all`.
    ZoneTypeList => query_list(
        word("^[a-z_-]{1,64}$", 64),
        MAX_ZONES_PER_REGION,
        json!(["local-zone", "wavelength-zone"]),
    );
    /// `zone_id`: zone ids.
    ZoneIdList => query_list(
        word(ZONE_WORD, 63),
        MAX_ZONES_PER_REGION,
        json!(["use1-az1", "use1-az2"]),
    );
    /// `zone_name`: zone names.
    ZoneNameList => query_list(word(ZONE_WORD, 63), MAX_ZONES_PER_REGION, json!(["us-east-1a"]));
    /// `offers`: instance types.
    InstanceTypeNames => query_list(
        word(INSTANCE_TYPE_PATTERN, MAX_INSTANCE_TYPE_CHARS),
        MAX_OFFERS_PER_QUERY,
        json!(["p5.48xlarge"]),
    );
}

/// The rule of a zone id or name (the region id's).
const ZONE_WORD: &str = "^[a-z0-9][a-z0-9-]{0,62}$";

/// Description of the zone-identity listing. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/providers/{providerId}/regions/{regionId}/zone-identities",
    operation_id = "listZoneIdentities",
    tag = "zones",
    summary = "List the zones of a region with their identities",
    description = "Returns each zone of one region with its account-independent identity \
(`zone_id`) and the name the caller deploys it with (`zone_name`). Both admin and member keys \
may call it.\n\n\
A zone name does not always name a place. In 8 old AWS regions (us-east-1, us-west-1, \
us-west-2, ap-southeast-1, ap-southeast-2, ap-northeast-1, eu-west-1, sa-east-1) `us-east-1a` \
is a different physical zone in each account created before November 2025; the AZ ID \
(`use1-az1`) is the same in every account. Azure deploys to logical zones `1`, `2`, `3`, \
shuffled per subscription; the physical zone (`eastus-az1`) is the identity. A GCP zone's \
name is its identity.\n\n\
`name_scope` says for whom names hold: `global` (GCP), `uniform` (one name for every AWS \
account, where the catalog's sources pair it), `account` (per AWS account), `subscription` \
(Azure). **A name is never guessed**: `zone_name` is `null` unless a source pairs it for every \
account, or the caller's own zone mapping does. To see your names in an `account` or \
`subscription` region, store your cloud CLI's output as a zone mapping (`PUT \
/api/v1/zone-mappings/{mappingId}`) and pass its id as `mapping`; the answer's `mapping` then \
names it, and zones it does not pair keep the catalog's name or `null`.\n\n\
**Several accounts side by side**: `mapping` may repeat, with up to 10 distinct mappings of the \
region's provider. Each item's `names` then gives the zone's name in each mapping, in the order \
asked; `zone_name` is the first mapping's, `mapping` the first mapping and `mappings` all of \
them. So `?mapping=a&mapping=b&zone_name=us-east-1a` answers \"which zone in account b is \
account a's us-east-1a\" in one request. Without `mapping`, `names` and `mappings` are empty \
arrays (always present, so a client never tells a missing field from an empty one).\n\n\
**Filters**: `zone_type` (comma-separated types, or `all`; when absent, availability zones \
only, so a reader never meets another type unasked), `zone_id` and `zone_name` \
(comma-separated, exact; `zone_name` matches the name the answer shows, which with mappings is \
the first mapping's, so a `null` name matches no filter). Filters combine: a zone is shown when \
it matches every filter given. A filter that matches nothing, or a well-formed type no zone \
has, answers 200 with an empty `data`.\n\n\
**What runs where**: `offers` (comma-separated instance types, at most 20, with at least one \
`mapping`) keeps the zones where every mapping asked offers every type listed, from the \
offerings stored with each mapping (`offerings` in its `PUT`). So \
`?mapping=prod&mapping=staging&offers=p5.48xlarge` answers \"where can I run p5.48xlarge in \
both accounts\", by zone identity and by each account's name. A mapping that holds no \
offerings for the region answers 422 `offerings_not_stored`, naming it; a type no zone offers \
answers 200 with an empty `data`.\n\n\
Checks happen in this order: API key (401), then `providerId` (400 `invalid_provider`), then \
`regionId` (400 `invalid_region`, 404 `region_not_found`), exactly as for the zone listing, \
then the query (400 `invalid_query`, naming the parameter: an unknown parameter, `zone_type`, \
`zone_id` or `zone_name` given twice or malformed, a malformed mapping id, a mapping asked \
twice, or more than 10 mappings, `offers` without a mapping), then each `mapping` in the \
order asked (404 `zone_mapping_not_found` when the caller's organization has no mapping with that id; 422 \
`invalid_zone_mapping` when the mapping is of another provider; 422 `offerings_not_stored` \
when `offers` is given and the mapping holds no offerings for the region). A region \
without availability zones (Azure `westus`, say) answers 200 with an empty `data` array.\n\n\
`source` says how old the catalog is (`compiled_on`) and what its facts about this region \
rest on. The answer carries a weak `ETag` over the region's identities, the filters and the \
mappings applied, and `Cache-Control: private, max-age=60`.",
    params(
        ("providerId" = ProviderId, Path, description = "Provider identifier, for example `aws`, `gcp` or `azure`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("regionId" = RegionId, Path, description = "Region identifier within the provider, for example `us-east-1`. Pattern `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("mapping" = inline(Option<MappingIds>), Query, style = Form, explode, description = "Optional ids of zone mappings of your organization, for example `prod`, repeated for several (`mapping=prod&mapping=staging`, at most 10, each once). The first one's names fill `zone_name`, each one's fill `names`. Leave it out to see the catalog's names only."),
        ("zone_type" = inline(Option<ZoneTypeList>), Query, style = Form, explode = false, description = "Comma-separated zone types to show, for example `local-zone,wavelength-zone`, or `all`. Known types: `availability-zone`, `local-zone`, `wavelength-zone`, `extended-zone`, `ai-zone`; a well-formed type no zone has matches nothing. Default: `availability-zone`. Each type matches `^[a-z_-]{1,64}$`."),
        ("zone_id" = inline(Option<ZoneIdList>), Query, style = Form, explode = false, description = "Comma-separated zone ids to show, exact, for example `use1-az1,use1-az2`. Each matches `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("zone_name" = inline(Option<ZoneNameList>), Query, style = Form, explode = false, description = "Comma-separated zone names to show, exact, compared with the name the answer shows (the first mapping's, with mappings), for example `us-east-1a`. Each matches `^[a-z0-9][a-z0-9-]{0,62}$`."),
        ("offers" = inline(Option<InstanceTypeNames>), Query, style = Form, explode = false, description = "Comma-separated instance types, for example `p5.48xlarge` or `Standard_D2s_v3,Standard_D4s_v3`: only the zones where every mapping asked offers each of them. Needs `mapping`. At most 20; each matches `^[A-Za-z0-9._-]{1,128}$`."),
        ("If-None-Match" = Option<IfNoneMatch>, Header, nullable = false, description = if_none_match_parameter("W/\"0a1b2c3d4e5f60718293a4b5\"", "identities")),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("zones-7f3a", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The region's zones with their identities. `id` equals the `X-Request-Id` header.", body = ZoneIdentityList,
            headers(
                ("ETag" = EntityTag, description = "Weak validator over the region's identities and the mapping applied, for `If-None-Match`.")
            ),
            examples(
                ("account" = (summary = "AWS, names per account: identities with null names", value = json!({
                    "data": [
                        {"zone_id": "use1-az1", "zone_name": null, "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "note": "name mapped per account for accounts created before November 2025 (S1, S2); accounts created from November 2025 share one mapping that AWS does not publish", "names": []},
                        {"zone_id": "use1-az2", "zone_name": null, "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "note": "name mapped per account for accounts created before November 2025 (S1, S2); accounts created from November 2025 share one mapping that AWS does not publish", "names": []}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "6 zones in aws/us-east-1; 0 names known: names here are per account, so store your account's aws ec2 describe-availability-zones output as a zone mapping and ask again with ?mapping=",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": [{"id": "S1", "what": "AWS 'AWS Availability Zones' page: the AZ ID table", "where": "https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-availability-zones.html", "date": "2026-11-27"}]},
                    "status": "success"
                }))),
                ("account_with_mapping" = (summary = "AWS, names per account, with the caller's mapping", value = json!({
                    "data": [
                        {"zone_id": "use1-az1", "zone_name": "us-east-1d", "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": [{"mapping": "prod", "zone_name": "us-east-1d", "state": null, "opt_in_status": null}]},
                        {"zone_id": "use1-az2", "zone_name": "us-east-1a", "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": [{"mapping": "prod", "zone_name": "us-east-1a", "state": null, "opt_in_status": null}]}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z"},
                    "mappings": [{"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z"}],
                    "message": "6 zones in aws/us-east-1; 6 names from zone mapping prod",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("side_by_side" = (summary = "Two accounts side by side: which zone in account staging is prod's us-east-1a (?mapping=prod&mapping=staging&zone_name=us-east-1a)", value = json!({
                    "data": [
                        {"zone_id": "use1-az2", "zone_name": "us-east-1a", "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": [
                            {"mapping": "prod", "zone_name": "us-east-1a", "state": null, "opt_in_status": null},
                            {"mapping": "staging", "zone_name": "us-east-1c", "state": null, "opt_in_status": null}
                        ]}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z"},
                    "mappings": [
                        {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z"},
                        {"id": "staging", "provider": "aws", "label": "staging account", "imported_at": "2026-11-27T11:00:00Z"}
                    ],
                    "message": "6 zones in aws/us-east-1; 6 names from zone mapping prod; names of zone mappings prod, staging side by side; 1 zone shown by the filters",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("offers" = (summary = "What runs where: the zones where both accounts may launch p5.48xlarge (?mapping=prod&mapping=staging&offers=p5.48xlarge)", value = json!({
                    "data": [
                        {"zone_id": "use1-az4", "zone_name": "us-east-1b", "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": [
                            {"mapping": "prod", "zone_name": "us-east-1b", "state": "available", "opt_in_status": "opt-in-not-required"},
                            {"mapping": "staging", "zone_name": "us-east-1d", "state": "available", "opt_in_status": "opt-in-not-required"}
                        ]},
                        {"zone_id": "use1-az6", "zone_name": "us-east-1c", "name_scope": "account", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": [
                            {"mapping": "prod", "zone_name": "us-east-1c", "state": "available", "opt_in_status": "opt-in-not-required"},
                            {"mapping": "staging", "zone_name": "us-east-1e", "state": "available", "opt_in_status": "opt-in-not-required"}
                        ]}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z"},
                    "mappings": [
                        {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z"},
                        {"id": "staging", "provider": "aws", "label": "staging account", "imported_at": "2026-11-27T11:00:00Z"}
                    ],
                    "message": "6 zones in aws/us-east-1; 6 names from zone mapping prod; names of zone mappings prod, staging side by side; offers p5.48xlarge in zone mappings prod, staging; 2 zones shown by the filters",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("uniform" = (summary = "AWS, one name for every account", value = json!({
                    "data": [
                        {"zone_id": "euc1-az2", "zone_name": "eu-central-1a", "name_scope": "uniform", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": []}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "3 zones in aws/eu-central-1; 3 names known, the same for every account",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("global" = (summary = "GCP: the name is the identity", value = json!({
                    "data": [
                        {"zone_id": "us-central1-a", "zone_name": "us-central1-a", "name_scope": "global", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": []}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "4 zones in gcp/us-central1; zone names are the same in every project",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("subscription" = (summary = "Azure: physical zones, logical names per subscription", value = json!({
                    "data": [
                        {"zone_id": "eastus-az1", "zone_name": null, "name_scope": "subscription", "zone_type": "availability-zone", "visibility": "all_accounts", "parent_zone_id": null, "network_border_group": null, "opt_in": "not_required", "names": []}
                    ],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "3 zones in azure/eastus; deployments name logical zones 1, 2, 3, mapped per subscription: store your az account list-locations output as a zone mapping and ask again with ?mapping=",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("edge_zones" = (summary = "AWS Local and Wavelength Zones (?zone_type=local-zone,wavelength-zone&zone_id=use1-bos1-az1,use1-wl1-bos-wlz1)", value = json!({
                    "data": [{"zone_id": "use1-bos1-az1", "zone_name": "us-east-1-bos-1a", "name_scope": "uniform", "zone_type": "local-zone", "visibility": "all_accounts", "parent_zone_id": "use1-az4", "network_border_group": "us-east-1-bos-1", "opt_in": "required", "note": "A Local Zone; opt in to its zone group us-east-1-bos-1 before use (E2, E4).", "names": []}, {"zone_id": "use1-wl1-bos-wlz1", "zone_name": null, "name_scope": "account", "zone_type": "wavelength-zone", "visibility": "unknown", "parent_zone_id": null, "network_border_group": "us-east-1-wl1-bos-wlz-1", "opt_in": "required", "note": "A Wavelength Zone, in a carrier's network; opt in to its zone group us-east-1-wl1 before use (E2, E4). AWS says the number and mapping of Wavelength Zones per region can differ between accounts (E6), so no name is given: one account's output names it us-east-1-wl1-bos-wlz-1 (E5, E7); store your account's output as a zone mapping to see yours.", "names": []}],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "33 zones in aws/us-east-1; 20 of 33 names known: the others are per account, so store your account's aws ec2 describe-availability-zones --all-availability-zones output as a zone mapping and ask again with ?mapping=; 2 zones shown by the filters",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("extended_zone" = (summary = "Azure Extended Zone, under its home region (?zone_type=extended-zone)", value = json!({
                    "data": [{"zone_id": "losangeles", "zone_name": "losangeles", "name_scope": "uniform", "zone_type": "extended-zone", "visibility": "unknown", "parent_zone_id": null, "network_border_group": null, "opt_in": "required", "note": "An Azure Extended Zone whose home region is westus: deploy with --location westus --edge-zone losangeles (E15, E16). Each subscription registers the Microsoft.EdgeZones provider and requests access first (E16).", "names": []}],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "1 zone in azure/westus; 1 name known, the same for every account; S10 shows no availability zones, yet one subscription's az account list-locations (S12, 2024) returned availabilityZoneMappings westus-az1..az3 for logical zones 1..3; treat as unconfirmed/not generally available; 1 zone shown by the filters",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                }))),
                ("ai_zone" = (summary = "GCP AI zone with its parent zone (?zone_type=ai-zone)", value = json!({
                    "data": [{"zone_id": "us-central1-ai1a", "zone_name": "us-central1-ai1a", "name_scope": "global", "zone_type": "ai-zone", "visibility": "unknown", "parent_zone_id": "us-central1-a", "network_border_group": null, "opt_in": "required", "note": "A GCP AI zone anchored to us-central1-a, its parent zone (E20); each project makes AI zones visible before use (E20). Listed by zones.list since January 2026 (E22).", "names": []}],
                    "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                    "mapping": null,
                    "mappings": [],
                    "message": "1 zone in gcp/us-central1; zone names are the same in every project; 1 zone shown by the filters",
                    "source": {"compiled_on": "2026-11-28", "refreshed_on": null, "references": []},
                    "status": "success"
                })))
            )),
        (status = 400, description = "`invalid_provider`: the provider id is malformed or not a provider of the catalog. `invalid_region`: the region id is malformed. `invalid_query`: an unknown query parameter, one given twice that may not repeat, a mapping asked twice or more than 10, or a malformed value; the message names the parameter.", body = ErrorBody,
            examples(
                ("invalid_region" = (summary = "Malformed region id", value = json!({"error": "invalid region id: region id may contain only lowercase ASCII letters, digits and '-'; found 'E' at position 3", "error_code": "invalid_region"}))),
                ("invalid_query" = (summary = "Unknown query parameter", value = json!({"error": "invalid query parameter \"foo\": unknown query parameter; this listing takes mapping, zone_type, zone_id, zone_name and offers", "error_code": "invalid_query"})))
            )),
        (status = 404, description = "`region_not_found`: the provider has no such region (the message names the closest region id when exactly one is close). `zone_mapping_not_found`: the caller's organization has no zone mapping with the id `mapping` names.", body = ErrorBody,
            examples(
                ("region_not_found" = (summary = "Unknown region", value = json!({"error": "region not found: aws has no region \"us-eats-1\"; did you mean \"us-east-1\"?", "error_code": "region_not_found"}))),
                ("zone_mapping_not_found" = (summary = "Unknown mapping", value = json!({"error": "zone mapping not found: your organization has no zone mapping \"staging\"; GET /api/v1/zone-mappings lists them", "error_code": "zone_mapping_not_found"})))
            )),
        (status = 422, description = "`invalid_zone_mapping`: the mapping named is of another provider. `offerings_not_stored`: `offers` was given and the mapping named holds no offerings for this region.", body = ErrorBody,
            examples(
                ("invalid_zone_mapping" = (summary = "A mapping of another provider", value = json!({"error": "zone mapping \"prod\" is of aws, not of azure", "error_code": "invalid_zone_mapping"}))),
                ("offerings_not_stored" = (summary = "A mapping without offerings for the region", value = json!({"error": "zone mapping \"prod\" holds no instance-type offerings for aws/us-east-1; store them with its zones (offerings in PUT /api/v1/zone-mappings/prod), from aws ec2 describe-instance-type-offerings --location-type availability-zone-id --region us-east-1 --output json (a PUT names in skipped what it could not place)", "error_code": "offerings_not_stored"})))
            )),
    ),
    security(("apiKey" = []))
)]
pub fn list_zone_identities() {}

/// Description of the zone-mapping listing. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/zone-mappings",
    operation_id = "listZoneMappings",
    tag = "zone-mappings",
    summary = "List the organization's zone mappings",
    description = "Returns the zone mappings of the caller's organization, ordered by id, \
without their pairs. Both admin and member keys may call it; other organizations' mappings are \
never shown.",
    params(
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("mappings-1", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The organization's zone mappings.", body = ZoneMappingList,
            example = json!({
                "data": [{"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z", "account": "111111111111", "regions": ["us-east-1"], "offerings": [{"region": "us-east-1", "instance_types": 52, "offerings": 227}]}],
                "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                "message": "1 zone mapping",
                "status": "success"
            })),
    ),
    security(("apiKey" = []))
)]
pub fn list_zone_mappings() {}

/// Description of the zone-mapping read. Never called; see the module docs.
#[utoipa::path(
    get,
    path = "/api/v1/zone-mappings/{mappingId}",
    operation_id = "getZoneMapping",
    tag = "zone-mappings",
    summary = "Read one zone mapping",
    description = "Returns one zone mapping of the caller's organization with its pairs. Both \
admin and member keys may call it. A mapping of another organization answers 404 exactly like \
a missing one.",
    params(
        ("mappingId" = ZoneMappingId, Path, description = "The mapping's id, for example `prod`. Pattern `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`; a value outside it answers 404."),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("mappings-2", ECHOED_IN_BODY))
    ),
    responses(
        (status = 200, description = "The mapping.", body = ZoneMappingAnswer,
            example = json!({
                "data": {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z",
                    "account": "111111111111",
                    "regions": [{"region": "us-east-1", "zones": [
                        {"zone_id": "use1-az2", "zone_name": "us-east-1a", "state": "available", "opt_in_status": "opt-in-not-required"},
                        {"zone_id": "use1-bos1-az1", "zone_name": "us-east-1-bos-1a", "state": "available", "opt_in_status": "opted-in"}]}],
                    "offerings": [{"region": "us-east-1", "instance_types": 52, "offerings": 227}]},
                "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                "message": "zone mapping prod: 2 zones in 1 region",
                "removed_regions": [],
                "skipped": [],
                "status": "success"
            })),
        (status = 404, description = "`zone_mapping_not_found`: no mapping with this id in the caller's organization.", body = ErrorBody,
            example = json!({"error": "zone mapping not found: your organization has no zone mapping \"staging\"; GET /api/v1/zone-mappings lists them", "error_code": "zone_mapping_not_found"})),
    ),
    security(("apiKey" = []))
)]
pub fn get_zone_mapping() {}

/// Description of the zone-mapping store. Never called; see the module docs.
#[utoipa::path(
    put,
    path = "/api/v1/zone-mappings/{mappingId}",
    operation_id = "putZoneMapping",
    tag = "zone-mappings",
    summary = "Store a zone mapping from the cloud's own output",
    description = "Stores, or replaces, a zone mapping of the caller's organization: the \
pairing of zone identities and the organization's own zone names, taken from the cloud CLI's \
output exactly as it printed it. Only keys with the `admin` role may store mappings.\n\n\
- `aws`: `aws ec2 describe-availability-zones --all-availability-zones --output json` for one \
region (the object with `AvailabilityZones`), or an array of such outputs. Every zone type is \
kept (availability zones, Local and Wavelength Zones) with the account's `State` and \
`OptInStatus`.\n\
- `azure`: `az account list-locations -o json`. Each logical zone a location maps is kept, with \
`state` `available`; locations without `availabilityZoneMappings` hold nothing to keep. When \
`account` is absent, it is the subscription the locations' `id` paths name, if they agree.\n\
- `gcp`: no `output` (GCP zone names are the same in every project); the mapping carries \
`offerings` alone.\n\n\
**Offerings** (optional): which instance types the same account may launch where, as the CLI \
printed it, one output or an array of them. `aws ec2 describe-instance-type-offerings \
--location-type availability-zone-id --output json` is placed by zone id; with \
`--location-type availability-zone` each name is read through this mapping's zones (or the \
catalog's name, where it is the same for every account); the region follows from the zones. \
`az vm list-skus --resource-type virtualMachines --location L --output json`: each SKU's \
logical zones are read through this mapping's zones of that location; a `Zone` restriction \
`NotAvailableForSubscription` removes its zones, a `Location` restriction the location. \
`gcloud compute machine-types list --format=json`: placed by zone name. What cannot be placed \
(a zone id or name neither the mapping nor the catalog holds, a region-level or Outposts \
output, a location the mapping does not map, a type offered in no zone) is named in \
`skipped`, one entry per region and zone with the number of offerings and the reason. A \
truncated AWS output (with `NextToken`, printed by `--max-items`) is refused 422 \
`invalid_zone_mapping`: the zones it leaves out would read as zones without the type. The \
answer gives counts per region in `offerings`; the `instance-types` listing and `offers` on \
the zone-identity listing serve them.\n\n\
What the catalog does not hold (a zone id unknown for its region, a region the catalog does \
not list, a zone mapping for a region without availability zones, an Azure Extended Zone or \
canary location) is stored nowhere and named in `skipped` with the reason; it never refuses \
the rest. The whole request is refused, changing nothing: 400 `invalid_body` for a body that \
is not JSON or not of this shape, or an `account` that is neither an AWS account id nor an \
Azure subscription id; 422 `invalid_zone_mapping` for a contradiction (a zone name outside its \
region or an Azure logical zone that is not a number, a zone id or name given twice in a \
region, or a pair that contradicts the catalog's sources where a zone's name is the same for \
every account), and for an output of which nothing could be kept; the message names the first \
offenders. A body over 32 MiB (33554432 bytes, counted once decoded) answers 413 naming the \
limit, as does an `output` over 1 MiB; send large bodies with `Content-Encoding: gzip` (a \
compressed body that inflates past the limit is refused without being inflated whole; another \
encoding answers 400 `invalid_body`). A \
refused request leaves the stored mapping as it was. An organization keeps at most 100 \
mappings.\n\n\
201 when the mapping is new, 200 when it replaced one; both return it, with `skipped`, and a \
replacement names in `removed_regions` the regions the old version had and the new one lacks. \
Every store is recorded in the audit log with the key id and request id. Every replica \
applies a stored mapping within a second.",
    params(
        ("mappingId" = ZoneMappingId, Path, description = "The mapping's id, for example `prod`. Pattern `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`; a value outside it answers 404."),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("mappings-3", ECHOED_IN_AUDIT_LOG))
    ),
    request_body(content = ZoneMappingRequest, description = "The provider, an optional label and account, and the cloud CLI's output unchanged.", content_type = "application/json"),
    responses(
        (status = 200, description = "Replaced: the mapping as now stored.", body = ZoneMappingAnswer,
            example = json!({
                "data": {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z",
                    "account": "111111111111",
                    "regions": [{"region": "us-east-1", "zones": [
                        {"zone_id": "use1-az2", "zone_name": "us-east-1a", "state": "available", "opt_in_status": "opt-in-not-required"},
                        {"zone_id": "use1-bos1-az1", "zone_name": "us-east-1-bos-1a", "state": "available", "opt_in_status": "opted-in"}]}],
                    "offerings": [{"region": "us-east-1", "instance_types": 52, "offerings": 227}]},
                "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                "message": "zone mapping prod replaced: 2 zones in 1 region; no longer holds 1 region (eu-west-1); 1 skipped, not held by the catalog (see skipped)",
                "removed_regions": ["eu-west-1"],
                "skipped": [{"region": "us-east-1", "zone_id": "use1-az9", "zone_name": "us-east-1g", "reason": "the catalog holds no zone use1-az9 in aws/us-east-1"}],
                "status": "success"
            })),
        (status = 201, description = "Created: the mapping as stored.", body = ZoneMappingAnswer,
            example = json!({
                "data": {"id": "prod", "provider": "aws", "label": "production account", "imported_at": "2026-11-27T10:00:00Z",
                    "account": "111111111111",
                    "regions": [{"region": "us-east-1", "zones": [
                        {"zone_id": "use1-az2", "zone_name": "us-east-1a", "state": "available", "opt_in_status": "opt-in-not-required"},
                        {"zone_id": "use1-bos1-az1", "zone_name": "us-east-1-bos-1a", "state": "available", "opt_in_status": "opted-in"}]}],
                    "offerings": [{"region": "us-east-1", "instance_types": 52, "offerings": 227}]},
                "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
                "message": "zone mapping prod stored: 2 zones in 1 region",
                "removed_regions": [],
                "skipped": [],
                "status": "success"
            })),
        (status = 400, description = "`invalid_body`: the body is not JSON, or not of the shape above (a missing field, a provider other than `aws` or `azure`, an output that is not the cloud's).", body = ErrorBody,
            example = json!({"error": "invalid body: output: expected what aws ec2 describe-availability-zones prints (an object with AvailabilityZones), or an array of them", "error_code": "invalid_body"})),
        (status = 403, description = "`forbidden`: the key's role (`member`) may not store zone mappings. Contact the organization admin.", body = ErrorBody,
            example = json!({"error": "your role may not change zone mappings; contact your organization admin", "error_code": "forbidden"})),
        (status = 404, description = "`zone_mapping_not_found`: the mapping id is malformed, so no mapping can have it.", body = ErrorBody,
            example = json!({"error": "zone mapping not found: a zone mapping id is 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a letter or digit", "error_code": "zone_mapping_not_found"})),
        (status = 422, description = "`invalid_zone_mapping`: the output contradicts itself or the catalog's sourced pairs, or nothing of it could be kept; the message names the first offenders (which id or name, which region). Nothing was stored.", body = ErrorBody,
            example = json!({"error": "invalid zone mapping: eu-central-1: the output names euc1-az2 \"eu-central-1b\", but its name is \"eu-central-1a\" for every account (the catalog's sources pair them); eu-central-1: the output names euc1-az3 \"eu-central-1a\", but its name is \"eu-central-1b\" for every account (the catalog's sources pair them)", "error_code": "invalid_zone_mapping"})),
    ),
    security(("apiKey" = []))
)]
pub fn put_zone_mapping() {}

/// Description of the zone-mapping deletion. Never called; see the module docs.
#[utoipa::path(
    delete,
    path = "/api/v1/zone-mappings/{mappingId}",
    operation_id = "deleteZoneMapping",
    tag = "zone-mappings",
    summary = "Delete a zone mapping",
    description = "Deletes one zone mapping of the caller's organization. Only keys with the \
`admin` role may delete. Checks happen in this order: API key (401); a mapping that does not \
exist or belongs to another organization answers 404 `zone_mapping_not_found`; then the role: \
a `member` key gets 403 `forbidden`. An `admin` key gets 204 once the deletion is committed; \
it is recorded in the audit log, and every replica stops applying the mapping within a \
second.",
    params(
        ("mappingId" = ZoneMappingId, Path, description = "The mapping's id, for example `prod`. Pattern `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`; a value outside it answers 404."),
        ("X-Request-Id" = Option<CallerRequestId>, Header, nullable = false, description = request_id_parameter("mappings-4", ECHOED_IN_AUDIT_LOG))
    ),
    responses(
        (status = 204, description = "Deleted and committed. No body."),
        (status = 403, description = "`forbidden`: the key's role (`member`) may not delete zone mappings. Contact the organization admin.", body = ErrorBody,
            example = json!({"error": "your role may not change zone mappings; contact your organization admin", "error_code": "forbidden"})),
        (status = 404, description = "`zone_mapping_not_found`: no mapping with this id in the caller's organization.", body = ErrorBody,
            example = json!({"error": "zone mapping not found: your organization has no zone mapping \"staging\"; GET /api/v1/zone-mappings lists them", "error_code": "zone_mapping_not_found"})),
    ),
    security(("apiKey" = []))
)]
pub fn delete_zone_mapping() {}

//! Path templates of the operations, and functions that build and parse concrete paths.
//!
//! Templates use the `{name}` syntax shared by OpenAPI and axum 0.8, so the server routes with the
//! same constants the document publishes.

use std::borrow::Cow;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

use crate::{ProfileId, ProviderId, RegionId, ZoneIdentityQuery, ZoneMappingId, ZoneTypes};

/// Prefix of every versioned API path.
pub const API_PREFIX: &str = "/api/v1";

/// Path of the provider listing (`GET`); it has no parameters.
pub const LIST_PROVIDERS: &str = "/api/v1/providers";

/// Template of the region listing (`GET`).
pub const LIST_REGIONS: &str = "/api/v1/providers/{providerId}/regions";

/// Template of the zone listing (`GET`).
pub const LIST_ZONES: &str = "/api/v1/providers/{providerId}/regions/{regionId}/zones";

/// Template of the zone-identity listing (`GET`); takes the optional query parameters
/// [`MAPPING_QUERY`] (repeatable), [`ZONE_TYPE_QUERY`], [`ZONE_ID_QUERY`] and
/// [`ZONE_NAME_QUERY`] (each at most once, a comma-separated list).
pub const LIST_ZONE_IDENTITIES: &str =
    "/api/v1/providers/{providerId}/regions/{regionId}/zone-identities";

/// The query parameter of the zone-identity listing naming a zone mapping to apply; repeated
/// for several, side by side.
pub const MAPPING_QUERY: &str = "mapping";

/// The zone-identity listing's filter by zone type: comma-separated types, or
/// [`ALL_ZONE_TYPES`].
pub const ZONE_TYPE_QUERY: &str = "zone_type";

/// The value of [`ZONE_TYPE_QUERY`] asking for every type.
pub const ALL_ZONE_TYPES: &str = "all";

/// The zone-identity listing's filter by zone id: comma-separated ids, exact.
pub const ZONE_ID_QUERY: &str = "zone_id";

/// The zone-identity listing's filter by the zone name the answer shows: comma-separated
/// names, exact.
pub const ZONE_NAME_QUERY: &str = "zone_name";

/// The zone-identity listing's filter by instance type: comma-separated types (at most
/// [`crate::MAX_OFFERS_PER_QUERY`]) that every mapping asked offers in the zone.
pub const OFFERS_QUERY: &str = "offers";

/// Template of the instance-type listing (`GET`); takes [`MAPPING_QUERY`] (required, once) and
/// [`ZONE_ID_QUERY`] (optional, one zone id).
pub const LIST_INSTANCE_TYPES: &str =
    "/api/v1/providers/{providerId}/regions/{regionId}/instance-types";

/// Path of the organization's zone mappings (`GET`).
pub const ZONE_MAPPINGS: &str = "/api/v1/zone-mappings";

/// Template of one zone mapping (`PUT`, `GET`, `DELETE`).
pub const ZONE_MAPPING: &str = "/api/v1/zone-mappings/{mappingId}";

/// Template of the profile deletion (`DELETE`).
pub const DELETE_PROFILE: &str = "/api/v1/applications/profiles/{profileId}";

/// Characters escaped inside one path segment: everything but RFC 3986 unreserved characters.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'!')
    .add(b'"')
    .add(b'#')
    .add(b'$')
    .add(b'%')
    .add(b'&')
    .add(b'\'')
    .add(b'(')
    .add(b')')
    .add(b'*')
    .add(b'+')
    .add(b',')
    .add(b'/')
    .add(b':')
    .add(b';')
    .add(b'<')
    .add(b'=')
    .add(b'>')
    .add(b'?')
    .add(b'@')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

fn encode(segment: &str) -> impl std::fmt::Display + '_ {
    utf8_percent_encode(segment, SEGMENT)
}

/// The concrete path listing the regions of `provider`.
///
/// ```
/// use appzone_contract::paths;
/// assert_eq!(paths::list_regions(&"aws".parse()?), "/api/v1/providers/aws/regions");
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn list_regions(provider: &ProviderId) -> String {
    format!(
        "{API_PREFIX}/providers/{}/regions",
        encode(provider.as_str())
    )
}

/// The concrete path listing the zones of `provider`/`region`.
///
/// ```
/// use appzone_contract::paths;
/// let p = paths::list_zones(&"gcp".parse()?, &"europe-west1".parse()?);
/// assert_eq!(p, "/api/v1/providers/gcp/regions/europe-west1/zones");
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn list_zones(provider: &ProviderId, region: &RegionId) -> String {
    format!(
        "{API_PREFIX}/providers/{}/regions/{}/zones",
        encode(provider.as_str()),
        encode(region.as_str())
    )
}

/// The concrete path listing the zone identities of `provider`/`region`, applying the zone
/// mapping `mapping` when given.
///
/// ```
/// use appzone_contract::paths;
/// let p = paths::list_zone_identities(&"aws".parse()?, &"us-east-1".parse()?, None);
/// assert_eq!(p, "/api/v1/providers/aws/regions/us-east-1/zone-identities");
/// let m = "prod".parse().unwrap();
/// let p = paths::list_zone_identities(&"aws".parse()?, &"us-east-1".parse()?, Some(&m));
/// assert_eq!(p, "/api/v1/providers/aws/regions/us-east-1/zone-identities?mapping=prod");
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn list_zone_identities(
    provider: &ProviderId,
    region: &RegionId,
    mapping: Option<&ZoneMappingId>,
) -> String {
    let query = ZoneIdentityQuery {
        mappings: mapping.into_iter().cloned().collect(),
        ..ZoneIdentityQuery::default()
    };
    list_zone_identities_with(provider, region, &query)
}

/// The concrete path listing the zone identities of `provider`/`region` as `query` asks:
/// `mapping` once per mapping, then `zone_type`, `zone_id` and `zone_name` as comma-separated
/// lists (each value escaped, the commas not), each left out when it asks for the default.
pub fn list_zone_identities_with(
    provider: &ProviderId,
    region: &RegionId,
    query: &ZoneIdentityQuery,
) -> String {
    let mut pairs: Vec<(&str, String)> = query
        .mappings
        .iter()
        .map(|id| (MAPPING_QUERY, encode(id.as_str()).to_string()))
        .collect();
    let list = |values: &mut dyn Iterator<Item = &str>| {
        values
            .map(|value| encode(value).to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match &query.zone_types {
        ZoneTypes::All => pairs.push((ZONE_TYPE_QUERY, ALL_ZONE_TYPES.to_owned())),
        ZoneTypes::Only(types) => {
            pairs.push((ZONE_TYPE_QUERY, list(&mut types.iter().map(|t| t.as_str()))))
        }
        ZoneTypes::AvailabilityZones => {}
    }
    for (name, values) in [
        (ZONE_ID_QUERY, &query.zone_ids),
        (ZONE_NAME_QUERY, &query.zone_names),
        (OFFERS_QUERY, &query.offers),
    ] {
        if !values.is_empty() {
            pairs.push((name, list(&mut values.iter().map(String::as_str))));
        }
    }
    let mut path = format!(
        "{API_PREFIX}/providers/{}/regions/{}/zone-identities",
        encode(provider.as_str()),
        encode(region.as_str())
    );
    for (i, (name, value)) in pairs.iter().enumerate() {
        path.push(if i == 0 { '?' } else { '&' });
        path.push_str(name);
        path.push('=');
        path.push_str(value);
    }
    path
}

/// The concrete path listing the instance types zone mapping `mapping` is offered in
/// `provider`/`region`, only those of zone `zone_id` when given.
///
/// ```
/// use appzone_contract::paths;
/// let m = "prod".parse().unwrap();
/// let p = paths::list_instance_types(&"aws".parse()?, &"us-east-1".parse()?, &m, Some("use1-az1"));
/// assert_eq!(
///     p,
///     "/api/v1/providers/aws/regions/us-east-1/instance-types?mapping=prod&zone_id=use1-az1"
/// );
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn list_instance_types(
    provider: &ProviderId,
    region: &RegionId,
    mapping: &ZoneMappingId,
    zone_id: Option<&str>,
) -> String {
    let mut path = format!(
        "{API_PREFIX}/providers/{}/regions/{}/instance-types?{MAPPING_QUERY}={}",
        encode(provider.as_str()),
        encode(region.as_str()),
        encode(mapping.as_str())
    );
    if let Some(zone_id) = zone_id {
        path.push_str(&format!("&{ZONE_ID_QUERY}={}", encode(zone_id)));
    }
    path
}

/// The concrete path of zone mapping `id`.
///
/// ```
/// use appzone_contract::paths;
/// assert_eq!(paths::zone_mapping(&"prod".parse().unwrap()), "/api/v1/zone-mappings/prod");
/// ```
pub fn zone_mapping(id: &ZoneMappingId) -> String {
    format!("{API_PREFIX}/zone-mappings/{}", encode(id.as_str()))
}

/// The concrete path deleting profile `id`.
///
/// ```
/// use appzone_contract::paths;
/// assert_eq!(
///     paths::delete_profile(&"prof_1".parse()?),
///     "/api/v1/applications/profiles/prof_1"
/// );
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
pub fn delete_profile(id: &ProfileId) -> String {
    format!("{API_PREFIX}/applications/profiles/{}", encode(id.as_str()))
}

/// Percent-decodes one raw path segment. `None` when the bytes are not valid UTF-8 (`%FF`), which
/// callers treat as a malformed identifier.
///
/// ```
/// use appzone_contract::paths::decode_segment;
/// assert_eq!(decode_segment("a%2Fb").as_deref(), Some("a/b"));
/// assert_eq!(decode_segment("%FF"), None);
/// ```
pub fn decode_segment(raw: &str) -> Option<Cow<'_, str>> {
    percent_decode_str(raw).decode_utf8().ok()
}

//! Path templates of the operations, and functions that build and parse concrete paths.
//!
//! Templates use the `{name}` syntax shared by OpenAPI and axum 0.8, so the server routes with the
//! same constants the document publishes.

use std::borrow::Cow;

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

use crate::{ProfileId, ProviderId, RegionId, ZoneMappingId};

/// Prefix of every versioned API path.
pub const API_PREFIX: &str = "/api/v1";

/// Path of the provider listing (`GET`); it has no parameters.
pub const LIST_PROVIDERS: &str = "/api/v1/providers";

/// Template of the region listing (`GET`).
pub const LIST_REGIONS: &str = "/api/v1/providers/{providerId}/regions";

/// Template of the zone listing (`GET`).
pub const LIST_ZONES: &str = "/api/v1/providers/{providerId}/regions/{regionId}/zones";

/// Template of the zone-identity listing (`GET`); takes the optional query parameter
/// [`MAPPING_QUERY`].
pub const LIST_ZONE_IDENTITIES: &str =
    "/api/v1/providers/{providerId}/regions/{regionId}/zone-identities";

/// The query parameter of the zone-identity listing naming a zone mapping to apply.
pub const MAPPING_QUERY: &str = "mapping";

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
    let path = format!(
        "{API_PREFIX}/providers/{}/regions/{}/zone-identities",
        encode(provider.as_str()),
        encode(region.as_str())
    );
    match mapping {
        // A mapping id's characters need no escaping in a query.
        Some(id) => format!("{path}?{MAPPING_QUERY}={}", encode(id.as_str())),
        None => path,
    }
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

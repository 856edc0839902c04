//! What the listings (and the other bodies a `GET` or `PUT` answers with) share: their bodies'
//! decoding ([`Listing`]), reading an answer ([`read_listing`], also used by the conditional
//! listings) and the listings' paths.

use appzone_contract::{
    paths, IdError, InstanceTypeList, ProviderId, ProviderList, RegionId, RegionList,
    ZoneIdentityList, ZoneIdentityQuery, ZoneList, ZoneMappingAnswer, ZoneMappingId,
    ZoneMappingList,
};

use super::call::{Answer, MAX_BODY_BYTES};
use crate::{Error, IntoId};
// Named only by doc links (of private items, shown with --document-private-items).
#[cfg(doc)]
use super::Client;

/// A body read by [`Client::get_listing`]: the provider, region and zone lists, which share one
/// envelope, the zone-identity, instance-type and zone-mapping lists, and one zone mapping (the
/// answer of its `GET` and its `PUT`).
pub(crate) trait Listing: Sized {
    /// What the body is, in a decode error's reason: `not a zone list: ...`.
    const NAME: &'static str;

    /// The `operationId` of the operation answering it.
    const OPERATION: &'static str;

    /// Decodes the body (tolerantly: the contract's types default the missing fields).
    fn decode(body: &[u8]) -> Result<Self, serde_json::Error>;
}

/// Implements [`Listing`] for contract types, each with its name for decode errors.
macro_rules! listing {
    ($($list:ty => $name:literal, $operation:literal);+ $(;)?) => {$(
        impl Listing for $list {
            const NAME: &'static str = $name;
            const OPERATION: &'static str = $operation;

            fn decode(body: &[u8]) -> Result<Self, serde_json::Error> {
                serde_json::from_slice(body)
            }
        }
    )+};
}

listing!(
    ProviderList => "provider list", "listProviders";
    RegionList => "region list", "listRegions";
    ZoneList => "zone list", "listZones";
    ZoneIdentityList => "zone identity list", "listZoneIdentities";
    InstanceTypeList => "instance type list", "listInstanceTypes";
    ZoneMappingList => "zone mapping list", "listZoneMappings";
    ZoneMappingAnswer => "zone mapping", "getZoneMapping";
);

fn invalid_id(error: IdError) -> Error {
    Error::invalid_id("argument", error.kind().error_code(), error)
}

/// The path of `provider`'s region listing; a malformed id is an [`Error::InvalidArgument`].
pub(crate) fn regions_path(provider: impl IntoId<ProviderId>) -> Result<String, Error> {
    let provider = provider.into_id().map_err(invalid_id)?;
    Ok(paths::list_regions(&provider))
}

/// The path of the zone listing of `region` of `provider`; a malformed id is an
/// [`Error::InvalidArgument`].
pub(crate) fn zones_path(
    provider: impl IntoId<ProviderId>,
    region: impl IntoId<RegionId>,
) -> Result<String, Error> {
    let provider = provider.into_id().map_err(invalid_id)?;
    let region = region.into_id().map_err(invalid_id)?;
    Ok(paths::list_zones(&provider, &region))
}

/// The path of the zone-identity listing of `region` of `provider`, applying zone mapping
/// `mapping` when given; a malformed id is an [`Error::InvalidArgument`].
pub(crate) fn zone_identities_path(
    provider: impl IntoId<ProviderId>,
    region: impl IntoId<RegionId>,
    mapping: Option<&ZoneMappingId>,
) -> Result<String, Error> {
    let mut query = ZoneIdentityQuery::default();
    query.mappings.extend(mapping.cloned());
    zone_identities_query_path(provider, region, &query)
}

/// The path of the zone-identity listing of `region` of `provider` as `query` asks; a
/// malformed id is an [`Error::InvalidArgument`].
pub(crate) fn zone_identities_query_path(
    provider: impl IntoId<ProviderId>,
    region: impl IntoId<RegionId>,
    query: &ZoneIdentityQuery,
) -> Result<String, Error> {
    let provider = provider.into_id().map_err(invalid_id)?;
    let region = region.into_id().map_err(invalid_id)?;
    Ok(paths::list_zone_identities_with(&provider, &region, query))
}

/// The path of the instance types zone mapping `mapping` is offered in `region` of `provider`,
/// only those of zone `zone_id` when given; a malformed provider or region id is an
/// [`Error::InvalidArgument`]. `zone_id` is sent as given (escaped): the server answers a
/// malformed or unknown one with 400 `invalid_query`.
pub(crate) fn instance_types_path(
    provider: impl IntoId<ProviderId>,
    region: impl IntoId<RegionId>,
    mapping: &ZoneMappingId,
    zone_id: Option<&str>,
) -> Result<String, Error> {
    let provider = provider.into_id().map_err(invalid_id)?;
    let region = region.into_id().map_err(invalid_id)?;
    Ok(paths::list_instance_types(
        &provider, &region, mapping, zone_id,
    ))
}

/// A listing's answer as the listing and its `ETag`: a non-2xx answer is an [`Error::Api`]; a
/// 2xx body longer than [`MAX_BODY_BYTES`] or not decodable as `T` is an [`Error::Decode`]
/// (reason `not a <T::NAME>: ...`).
pub(crate) fn read_listing<T: Listing>(answer: Answer) -> Result<(T, Option<String>), Error> {
    if !answer.status.is_success() {
        return Err(answer.into_api_error());
    }
    if answer.truncated {
        let reason = format!("the body is longer than {MAX_BODY_BYTES} bytes");
        return Err(answer.into_decode_error(reason));
    }
    match T::decode(&answer.body) {
        Ok(listing) => Ok((listing, answer.etag)),
        Err(e) => Err(answer.into_decode_error(format!("not a {}: {e}", T::NAME))),
    }
}

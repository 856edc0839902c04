//! What runs where: the instance types a zone mapping's account is offered, per zone identity.
//! A third `impl` block of [`Client`], beside the listings and the zone mappings.

use appzone_contract::{InstanceTypeList, ProviderId, RegionId, ZoneMappingId};

use super::{instance_types_path, Client};
use crate::{Error, IntoId};

impl Client {
    /// Lists the instance types zone mapping `mapping`'s account is offered in `region` of
    /// `provider`, each with the zone identities offering it, sorted by type (`GET
    /// /api/v1/providers/{providerId}/regions/{regionId}/instance-types?mapping=A[&zone_id=Z]`).
    /// With `zone_id` (such as `use1-az1`), only the types that zone offers. Any key of the
    /// organization may call it.
    ///
    /// The offerings are those stored with the mapping
    /// ([`ZoneMappingRequest::with_offerings`](crate::ZoneMappingRequest::with_offerings) in
    /// [`put_zone_mapping`](Client::put_zone_mapping)), placed on zone identities through the
    /// mapping's own zone names, so the zone ids compare across accounts.
    /// [`zone_identities_with`](Client::zone_identities_with) and
    /// [`ZoneIdentityQuery::offers`](crate::ZoneIdentityQuery::offers) ask the other way round:
    /// which zones offer a type.
    ///
    /// `provider` and `region` are ids or strings, checked as for
    /// [`list_zones`](Client::list_zones); `zone_id` is sent as given. Retried as the other
    /// listings are (connect failures, 429, 502, 503, 504), and read as tolerantly (`id`,
    /// `message`, `status` may be missing). The server answers with an `ETag`:
    /// [`instance_types_if_changed`](Client::instance_types_if_changed) sends it back.
    ///
    /// Typical errors: those of [`list_zones`](Client::list_zones) (400 `invalid_provider`, 404
    /// `region_not_found`); 404 `zone_mapping_not_found` (no such mapping in the caller's
    /// organization; [`Error::is_not_found`]); 422 `invalid_zone_mapping` (a mapping of another
    /// provider); 422 `offerings_not_stored`
    /// ([`ErrorCode::OFFERINGS_NOT_STORED`](crate::ErrorCode::OFFERINGS_NOT_STORED): the mapping
    /// holds no offerings for the region; the message names the command that prints them); 400
    /// `invalid_query` for a malformed `zone_id`. A `zone_id` the region does not have is no
    /// error: the list is empty and its message says the region has no such zone.
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client) -> Result<(), Box<dyn std::error::Error>> {
    /// use appzone_client::{ErrorCode, ProviderId, RegionId, ZoneMappingId};
    ///
    /// let (aws, us_east_1): (ProviderId, RegionId) = ("aws".parse()?, "us-east-1".parse()?);
    /// let prod: ZoneMappingId = "prod".parse()?;
    /// match client.instance_types(&aws, &us_east_1, &prod, None).await {
    ///     Ok(list) => {
    ///         for offered in &list.data {
    ///             // p5.48xlarge: use1-az2, use1-az4
    ///             println!("{}: {}", offered.instance_type, offered.zone_ids.join(", "));
    ///         }
    ///     }
    ///     Err(e) if e.error_code().map(ErrorCode::as_str) == Some(ErrorCode::OFFERINGS_NOT_STORED) => {
    ///         println!("store prod's offerings first: {e}")
    ///     }
    ///     Err(e) => return Err(e.into()),
    /// }
    /// // What use1-az1 offers prod's account.
    /// let in_az1 = client.instance_types("aws", "us-east-1", &prod, Some("use1-az1")).await?;
    /// println!("{}", in_az1.message);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn instance_types(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
        mapping: &ZoneMappingId,
        zone_id: Option<&str>,
    ) -> Result<InstanceTypeList, Error> {
        self.get_listing(&instance_types_path(provider, region, mapping, zone_id)?)
            .await
    }
}

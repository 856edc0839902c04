//! Conditional listings: `If-None-Match` with the `ETag` of an earlier answer, and `304 Not
//! Modified` as an answer rather than an error.
//!
//! The server answers the listings of the catalog (providers, regions, zones, zone identities)
//! with a weak `ETag` computed over what the listing holds (not over the per-request `id`), so the same tag comes back for as long as the listing
//! is unchanged; sent back in `If-None-Match`, it makes the server answer 304 with no body.

use appzone_contract::{
    paths, InstanceTypeList, ProviderId, ProviderList, RegionId, RegionList, ZoneIdentityList,
    ZoneList, ZoneMappingId,
};
use http::header::IF_NONE_MATCH;
use http::{HeaderValue, StatusCode};

// One way only: this module builds on the client's call machinery, which knows nothing of it.
use crate::client::{
    instance_types_path, read_listing, regions_path, zone_identities_path, zones_path, ExtraHeader,
    Listing,
};
use crate::{Client, Error, IntoId};

/// The answer of a conditional listing ([`Client::list_providers_if_changed`],
/// [`Client::list_regions_if_changed`], [`Client::list_zones_if_changed`],
/// [`Client::zone_identities_if_changed`], [`Client::instance_types_if_changed`]).
///
/// A `304 Not Modified` is not an error: it is [`Conditional::NotModified`], and the listing
/// the caller kept from the answer that gave the `ETag` is still current. Every other answer
/// reads as the plain listing does (a non-2xx answer is an [`Error::Api`]).
///
/// ```no_run
/// use appzone_client::{Client, Conditional, ZoneList};
///
/// # async fn run(client: Client) -> Result<(), appzone_client::Error> {
/// // Keep the listing and its ETag; ask again with the ETag.
/// let mut cached: Option<(ZoneList, Option<String>)> = None;
/// for _ in 0..3 {
///     let etag = cached.as_ref().and_then(|(_, etag)| etag.as_deref());
///     match client.list_zones_if_changed("aws", "us-east-1", etag).await? {
///         Conditional::Modified { listing, etag } => {
///             println!("zones: {}", listing.data.join(", "));
///             cached = Some((listing, etag));
///         }
///         Conditional::NotModified => println!("zones unchanged"),
///         // The enum is non-exhaustive: later versions may add variants.
///         _ => {}
///     }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Conditional<T> {
    /// The server sent the listing (200): the first call, or the listing changed since the
    /// `ETag` that was sent (or that tag was not the server's).
    Modified {
        /// The listing, read as the plain listing methods read it.
        listing: T,
        /// The answer's `ETag` as sent (the server's are weak, such as `W/"0a1b2c..."`): pass
        /// it unchanged to the next conditional call. `None` when the answer had none (another
        /// implementation of the interface), and then every call gets the whole listing.
        etag: Option<String>,
    },
    /// The server answered `304 Not Modified`: the `ETag` sent is still the listing's, and the
    /// listing it came with is still current. No body was sent.
    NotModified,
}

impl<T> Conditional<T> {
    /// The listing, when the server sent one.
    pub fn listing(&self) -> Option<&T> {
        match self {
            Conditional::Modified { listing, .. } => Some(listing),
            Conditional::NotModified => None,
        }
    }

    /// The new `ETag`, when the server sent a listing with one.
    pub fn etag(&self) -> Option<&str> {
        match self {
            Conditional::Modified { etag, .. } => etag.as_deref(),
            Conditional::NotModified => None,
        }
    }

    /// Whether the answer was `304 Not Modified`.
    pub fn is_not_modified(&self) -> bool {
        matches!(self, Conditional::NotModified)
    }
}

impl Client {
    /// Lists the providers (`GET /api/v1/providers`) unless they are unchanged since `etag`.
    ///
    /// With `etag` `Some`, it is sent unchanged in `If-None-Match`, and a `304 Not Modified`
    /// answer is [`Conditional::NotModified`]; with `None` this is
    /// [`list_providers`](Client::list_providers) that also returns the answer's `ETag`.
    ///
    /// Retries and errors are those of [`list_providers`](Client::list_providers); an `etag`
    /// that cannot be sent in an HTTP header is an [`Error::InvalidArgument`], refused before
    /// sending. See [`Conditional`] for an example.
    pub async fn list_providers_if_changed(
        &self,
        etag: Option<&str>,
    ) -> Result<Conditional<ProviderList>, Error> {
        self.get_listing_if_changed(paths::LIST_PROVIDERS, etag)
            .await
    }

    /// Lists the regions of `provider` unless they are unchanged since `etag`.
    ///
    /// As [`list_regions`](Client::list_regions), with `etag` sent in `If-None-Match` as
    /// [`list_providers_if_changed`](Client::list_providers_if_changed) describes. An unknown
    /// provider is still 400 `invalid_provider` ([`Error::Api`]), whatever the `etag`.
    pub async fn list_regions_if_changed(
        &self,
        provider: impl IntoId<ProviderId>,
        etag: Option<&str>,
    ) -> Result<Conditional<RegionList>, Error> {
        self.get_listing_if_changed(&regions_path(provider)?, etag)
            .await
    }

    /// Lists the zones of `region` of `provider` unless they are unchanged since `etag`.
    ///
    /// As [`list_zones`](Client::list_zones), with `etag` sent in `If-None-Match` as
    /// [`list_providers_if_changed`](Client::list_providers_if_changed) describes. An unknown
    /// region is still 404 `region_not_found` ([`Error::is_not_found`]), whatever the `etag`.
    pub async fn list_zones_if_changed(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
        etag: Option<&str>,
    ) -> Result<Conditional<ZoneList>, Error> {
        self.get_listing_if_changed(&zones_path(provider, region)?, etag)
            .await
    }

    /// Lists the zone identities of `region` of `provider`, with zone mapping `mapping` applied
    /// when given, unless they are unchanged since `etag`.
    ///
    /// As [`zone_identities`](Client::zone_identities), with `etag` sent in `If-None-Match` as
    /// [`list_providers_if_changed`](Client::list_providers_if_changed) describes. The server's
    /// tag covers the region's identities and the mapping applied, so a mapping stored again
    /// (or another `mapping`) gives the listing again, not 304.
    ///
    /// ```no_run
    /// # async fn run(client: appzone_client::Client, etag: Option<String>) -> Result<(), appzone_client::Error> {
    /// let answer = client
    ///     .zone_identities_if_changed("aws", "us-east-1", None, etag.as_deref())
    ///     .await?;
    /// if let Some(list) = answer.listing() {
    ///     println!("{} (new ETag {:?})", list.message, answer.etag());
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub async fn zone_identities_if_changed(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
        mapping: Option<&ZoneMappingId>,
        etag: Option<&str>,
    ) -> Result<Conditional<ZoneIdentityList>, Error> {
        self.get_listing_if_changed(&zone_identities_path(provider, region, mapping)?, etag)
            .await
    }

    /// Lists the instance types zone mapping `mapping` is offered in `region` of `provider`
    /// (only those of `zone_id` when given) unless they are unchanged since `etag`.
    ///
    /// As [`instance_types`](Client::instance_types), with `etag` sent in `If-None-Match` as
    /// [`list_providers_if_changed`](Client::list_providers_if_changed) describes. The server's
    /// tag is computed over what the listing holds: it changes when the mapping's offerings
    /// (or the catalog's zones) do, not when the same offerings are stored again.
    pub async fn instance_types_if_changed(
        &self,
        provider: impl IntoId<ProviderId>,
        region: impl IntoId<RegionId>,
        mapping: &ZoneMappingId,
        zone_id: Option<&str>,
        etag: Option<&str>,
    ) -> Result<Conditional<InstanceTypeList>, Error> {
        self.get_listing_if_changed(
            &instance_types_path(provider, region, mapping, zone_id)?,
            etag,
        )
        .await
    }

    /// `GET`s a listing at `path` with `If-None-Match: etag` when `etag` is `Some`: 304 is
    /// [`Conditional::NotModified`], 2xx is decoded as the plain listings are
    /// ([`read_listing`]), any other status is an [`Error::Api`].
    async fn get_listing_if_changed<T: Listing>(
        &self,
        path: &str,
        etag: Option<&str>,
    ) -> Result<Conditional<T>, Error> {
        let extra = etag.map(if_none_match).transpose()?;
        let answer = self.listing_answer::<T>(path, extra.as_ref()).await?;
        if answer.status == StatusCode::NOT_MODIFIED {
            return Ok(Conditional::NotModified);
        }
        read_listing(answer).map(|(listing, etag)| Conditional::Modified { listing, etag })
    }
}

/// The `If-None-Match` header carrying `etag` unchanged; an [`Error::InvalidArgument`] when it
/// cannot be sent in a header (a line break, say), before anything is sent.
fn if_none_match(etag: &str) -> Result<ExtraHeader, Error> {
    let value = HeaderValue::from_str(etag).map_err(|_| {
        Error::invalid(
            "ETag",
            "it contains characters that cannot be sent in an HTTP header",
        )
    })?;
    Ok((IF_NONE_MATCH, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_etag_is_sent_unchanged_or_refused_before_sending() {
        let (name, value) = if_none_match("W/\"0a1b\"").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(name, IF_NONE_MATCH);
        assert_eq!(value, "W/\"0a1b\"");
        let error = if_none_match("W/\"a\"\nX-Evil: 1").err();
        assert!(
            matches!(
                error,
                Some(Error::InvalidArgument {
                    argument: "ETag",
                    ..
                })
            ),
            "{error:?}"
        );
    }
}

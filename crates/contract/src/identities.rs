//! The body of the zone-identity listing: which place each zone of a region is, and what the
//! caller deploys it with.
//!
//! A zone name is not always a place. In the 8 oldest AWS regions `us-east-1a` is another
//! building in each account created before November 2025; the AZ ID (`use1-az1`) is the same
//! in every account. Azure deploys to logical zones `1`, `2`, `3`, shuffled per subscription;
//! the physical zone (`eastus-az1`) is the identity. A GCP zone name is the same in every
//! project. So each item pairs the identity (`zone_id`) with the name (`zone_name`), and the
//! name is `null` wherever the catalog cannot know it for this caller: a name is never
//! guessed.
//!
//! Every string set here (`name_scope`, `zone_type`, `visibility`) is open: a value this
//! version does not know deserializes to `Other`, so a client keeps working when the server
//! adds one. The document states them as strings with their known values described, not as
//! closed enums, for the same reason.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ProviderId, ZoneMappingId};

mod open_sets;

pub use open_sets::{NameScope, OptIn, Visibility, ZoneType};

/// One zone of a region: its identity, and its name where the name is known for the caller.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "One zone of a region: its account-independent identity (`zone_id`) and the \
name the caller deploys it with (`zone_name`), or `null` when that name cannot be known for \
this caller from the catalog alone.",
    example = json!({
        "zone_id": "use1-az1",
        "zone_name": null,
        "name_scope": "account",
        "zone_type": "availability-zone",
        "visibility": "all_accounts",
        "parent_zone_id": null,
        "network_border_group": null,
        "opt_in": "not_required",
        "note": "name mapped per account for accounts created before November 2025",
        "names": []
    })
)]
pub struct ZoneIdentity {
    /// The zone's identity, the same for every account: the AWS AZ ID (`use1-az1`), the Azure physical zone (`eastus-az1`), the GCP zone name (`us-central1-a`).
    #[schema(min_length = 1, max_length = 63, pattern = "^[a-z0-9][a-z0-9-]{0,62}$")]
    pub zone_id: String,
    /// What the caller deploys with: the AWS zone name (`us-east-2a`), the Azure logical zone (`1`), the GCP zone name. `null` when it is not known for this caller: in regions whose names are per account or per subscription, until a zone mapping of the caller's is applied (`?mapping=`), and wherever no source pairs the identity with a name.
    #[schema(
        required = true,
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9][a-z0-9-]{0,62}$"
    )]
    pub zone_name: Option<String>,
    /// For whom a name in this region holds.
    pub name_scope: NameScope,
    /// The kind of zone.
    pub zone_type: ZoneType,
    /// Which accounts can use the zone.
    pub visibility: Visibility,
    /// The zone this one is anchored to, by its identity: the parent availability zone of an AWS Local or Wavelength Zone (the AZ that handles some of its control-plane operations), the standard zone of a GCP AI zone. `null` for an availability zone, an Azure Extended Zone (its home region is the region listed), and wherever no source gives the parent (`aws ec2 describe-availability-zones --all-availability-zones` prints it as `ParentZoneId`).
    #[serde(default)]
    #[schema(
        required = true,
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9][a-z0-9-]{0,62}$"
    )]
    pub parent_zone_id: Option<String>,
    /// AWS: the network border group the zone advertises its addresses from (`us-east-1-bos-1` for a Local Zone; the region for most availability zones). `null` for other clouds and wherever no source gives it: `describe-availability-zones` prints it as `NetworkBorderGroup`.
    #[serde(default)]
    #[schema(
        required = true,
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9][a-z0-9-]{0,62}$"
    )]
    pub network_border_group: Option<String>,
    /// Whether an account must opt in before using the zone.
    #[serde(default = "OptIn::not_required")]
    pub opt_in: OptIn,
    /// What else is known, and how to learn the name when it is `null`. Absent when there is nothing to add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(max_length = 1024)]
    pub note: Option<String>,
    /// The zone's name in each zone mapping applied (`?mapping=`), in the order asked; empty without one. The first one's name is `zone_name`.
    #[serde(default)]
    #[schema(required = true, max_items = 10)]
    pub names: Vec<MappedName>,
}

impl ZoneIdentity {
    /// An identity item.
    pub fn new(
        zone_id: impl Into<String>,
        zone_name: Option<String>,
        name_scope: NameScope,
        zone_type: ZoneType,
        visibility: Visibility,
        note: Option<String>,
    ) -> Self {
        Self {
            zone_id: zone_id.into(),
            zone_name,
            name_scope,
            zone_type,
            visibility,
            parent_zone_id: None,
            network_border_group: None,
            opt_in: OptIn::NotRequired,
            note,
            names: Vec::new(),
        }
    }
}

impl OptIn {
    /// `not_required`: what a server before edge zones meant for every zone.
    fn not_required() -> Self {
        OptIn::NotRequired
    }
}

/// A zone's name in one of the zone mappings an identity listing applies: several accounts
/// side by side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "The zone's name in one zone mapping applied, and the account's state of the \
zone as that mapping records it.",
    example = json!({"mapping": "prod", "zone_name": "us-east-1d", "state": null, "opt_in_status": null})
)]
pub struct MappedName {
    /// The id of the zone mapping, as asked in `mapping`.
    #[schema(value_type = ZoneMappingId)]
    pub mapping: String,
    /// The name this mapping's account deploys the zone with; the catalog's name where the mapping does not pair the zone but the name is the same for every account; else `null`.
    #[schema(
        required = true,
        min_length = 1,
        max_length = 63,
        pattern = "^[a-z0-9][a-z0-9-]{0,62}$"
    )]
    pub zone_name: Option<String>,
    /// The zone's state in the mapping's account, as its output printed it (AWS `State`, such as `available`; `available` for each zone an Azure output maps); `null` where the mapping does not hold the zone.
    #[schema(required = true, max_length = 64, pattern = "^[a-z][a-z-]{0,63}$")]
    pub state: Option<String>,
    /// The account's opt-in status of the zone, as its output printed it (AWS `OptInStatus`: `opt-in-not-required`, `opted-in`, `not-opted-in`); `null` for Azure and where the mapping does not hold the zone.
    #[schema(required = true, max_length = 64, pattern = "^[a-z][a-z-]{0,63}$")]
    pub opt_in_status: Option<String>,
}

impl MappedName {
    /// A zone's name in `mapping`.
    pub fn new(
        mapping: String,
        zone_name: Option<String>,
        state: Option<String>,
        opt_in_status: Option<String>,
    ) -> Self {
        Self {
            mapping,
            zone_name,
            state,
            opt_in_status,
        }
    }
}

/// The zone mapping applied to a listing: which one, so the caller can tell it was used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(description = "The zone mapping whose names this answer shows.")]
pub struct AppliedMapping {
    /// The mapping's id in the caller's organization.
    #[schema(value_type = ZoneMappingId)]
    pub id: String,
    /// The provider the mapping was taken from.
    #[schema(value_type = ProviderId)]
    pub provider: ProviderId,
    /// The mapping's label.
    #[schema(max_length = 200)]
    pub label: String,
    /// When the mapping was stored (RFC 3339, UTC, to the second).
    #[schema(format = DateTime, max_length = 20)]
    pub imported_at: String,
}

impl AppliedMapping {
    /// The mapping's description.
    pub fn new(id: String, provider: ProviderId, label: String, imported_at: String) -> Self {
        Self {
            id,
            provider,
            label,
            imported_at,
        }
    }
}

/// One source the catalog's facts were taken from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(description = "A source of the catalog's facts about this region.")]
pub struct SourceReference {
    /// The reference's id within the catalog, such as `S1`.
    #[schema(max_length = 64, pattern = "^[A-Za-z0-9]{1,64}$")]
    pub id: String,
    /// What the source is and what was taken from it.
    #[schema(max_length = 2048)]
    pub what: String,
    /// Where it is: a URL, or a repository, path and commit.
    #[serde(rename = "where")]
    #[schema(max_length = 512)]
    pub location: String,
    /// The date of the source's content, or when it was read (`YYYY-MM-DD`).
    #[schema(max_length = 10, pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    pub date: String,
}

impl SourceReference {
    /// A reference.
    pub fn new(id: String, what: String, location: String, date: String) -> Self {
        Self {
            id,
            what,
            location,
            date,
        }
    }
}

/// Where an answer's facts come from, and how old the catalog is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(description = "How old the catalog is and what its facts about this region rest on.")]
pub struct CatalogSource {
    /// When the catalog was compiled (`YYYY-MM-DD`); `null` for a catalog imported without that date.
    #[schema(
        required = true,
        max_length = 10,
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    )]
    pub compiled_on: Option<String>,
    /// When this region was last refreshed from a cloud's own output with `catalog import --from` (`YYYY-MM-DD`); `null` when it has not been.
    #[serde(default)]
    #[schema(
        required = true,
        max_length = 10,
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    )]
    pub refreshed_on: Option<String>,
    /// The sources of this region's facts.
    #[schema(max_items = 64)]
    pub references: Vec<SourceReference>,
}

impl CatalogSource {
    /// A source block.
    pub fn new(compiled_on: Option<String>, references: Vec<SourceReference>) -> Self {
        Self {
            compiled_on,
            refreshed_on: None,
            references,
        }
    }

    /// The same block, with the date the region was last refreshed.
    pub fn refreshed_on(mut self, date: Option<String>) -> Self {
        self.refreshed_on = date;
        self
    }
}

envelope! {
    /// The zone identities of one region, in catalog order.
    ///
    /// Decoded as tolerantly as [`crate::ZoneList`]: `id`, `message` and `status` default to empty
    /// strings when absent, `mapping` to `null` and `source` to an empty block.
    ///
    /// ```
    /// use appzone_contract::{NameScope, ZoneIdentityList};
    /// let list: ZoneIdentityList = serde_json::from_str(
    ///     r#"{"data":[{"zone_id":"use1-az1","zone_name":null,"name_scope":"account",
    ///         "zone_type":"availability-zone","visibility":"all_accounts"}]}"#,
    /// ).unwrap();
    /// assert_eq!(list.data[0].name_scope, NameScope::Account);
    /// assert_eq!(list.data[0].zone_name, None);
    /// ```
    #[non_exhaustive]
    #[schema(
        description = "The zones of one region with their identities, in catalog order, with \
    the request id, the zone mapping applied (if any) and the catalog's sources."
    )]
    pub struct ZoneIdentityList {
        /// The region's zones in catalog order. Empty (still 200) for a region without zones.
        #[schema(max_items = 100)]
        pub data: Vec<ZoneIdentity>,
        message(512): "Human-readable summary, saying how to learn the names that are `null`. Do not parse it.",
        /// The zone mapping applied (`?mapping=`), or `null`; with several, the first.
        #[serde(default)]
        #[schema(required = true)]
        pub mapping: Option<AppliedMapping>,
        /// Every zone mapping applied, in the order asked; empty without `?mapping=`.
        #[serde(default)]
        #[schema(required = true, max_items = 10)]
        pub mappings: Vec<AppliedMapping>,
        /// How old the catalog is and what it rests on.
        #[serde(default)]
        #[schema(required = true)]
        pub source: CatalogSource,
    }
}

impl ZoneIdentityList {
    /// A listing body; `mapping` is the first of `mappings`.
    pub fn new(
        data: Vec<ZoneIdentity>,
        id: String,
        mappings: Vec<AppliedMapping>,
        message: String,
        source: CatalogSource,
    ) -> Self {
        Self {
            data,
            id,
            mapping: mappings.first().cloned(),
            mappings,
            message,
            source,
            status: crate::STATUS_SUCCESS.to_owned(),
        }
    }
}

/// Which zone types an identity listing shows (`zone_type`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ZoneTypes {
    /// Availability zones only: what the listing shows when `zone_type` is not given.
    #[default]
    AvailabilityZones,
    /// Every type (`zone_type=all`).
    All,
    /// These types (`zone_type=local-zone,wavelength-zone`).
    Only(Vec<ZoneType>),
}

impl ZoneTypes {
    /// Whether a zone of type `zone_type` is shown.
    pub fn admits(&self, zone_type: &ZoneType) -> bool {
        match self {
            ZoneTypes::AvailabilityZones => *zone_type == ZoneType::AvailabilityZone,
            ZoneTypes::All => true,
            ZoneTypes::Only(types) => types.contains(zone_type),
        }
    }
}

/// What a zone-identity listing asks for besides its region: the zone mappings to apply and
/// the filters. [`Default`] asks for the plain listing (availability zones, no mapping).
///
/// ```
/// use appzone_contract::{paths, ZoneIdentityQuery};
/// let query = ZoneIdentityQuery::default()
///     .mapping("a".parse().unwrap())
///     .mapping("b".parse().unwrap())
///     .zone_name("us-east-1a");
/// let path = paths::list_zone_identities_with(&"aws".parse()?, &"us-east-1".parse()?, &query);
/// assert_eq!(
///     path,
///     "/api/v1/providers/aws/regions/us-east-1/zone-identities?mapping=a&mapping=b&zone_name=us-east-1a"
/// );
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ZoneIdentityQuery {
    /// The zone mappings to apply, in order (`mapping`, repeated; at most
    /// [`MAX_MAPPINGS_PER_LISTING`]): the first one's names fill `zone_name`, each one's fill
    /// `names`.
    pub mappings: Vec<ZoneMappingId>,
    /// The zone types to show (`zone_type`).
    pub zone_types: ZoneTypes,
    /// Only these zone ids (`zone_id`, exact); empty: every id.
    pub zone_ids: Vec<String>,
    /// Only zones shown with these names (`zone_name`, exact, compared with the name the answer
    /// shows: the first mapping's); empty: every name.
    pub zone_names: Vec<String>,
    /// Only zones where every mapping asked offers each of these instance types (`offers`,
    /// at most [`crate::MAX_OFFERS_PER_QUERY`]); empty: every zone.
    pub offers: Vec<String>,
}

impl ZoneIdentityQuery {
    /// Applies zone mapping `id` too, after those already asked.
    pub fn mapping(mut self, id: ZoneMappingId) -> Self {
        self.mappings.push(id);
        self
    }

    /// Shows zones of type `zone_type` too (instead of availability zones only).
    pub fn zone_type(mut self, zone_type: ZoneType) -> Self {
        match &mut self.zone_types {
            ZoneTypes::Only(types) => types.push(zone_type),
            _ => self.zone_types = ZoneTypes::Only(vec![zone_type]),
        }
        self
    }

    /// Whether it asks for less than every availability zone: another zone type, or zone ids
    /// or names.
    pub fn filters(&self) -> bool {
        self.zone_types != ZoneTypes::AvailabilityZones
            || !self.zone_ids.is_empty()
            || !self.zone_names.is_empty()
            || !self.offers.is_empty()
    }

    /// Shows only zones offering `instance_type` too (in every mapping asked).
    pub fn offers(mut self, instance_type: impl Into<String>) -> Self {
        self.offers.push(instance_type.into());
        self
    }

    /// Shows zones of every type.
    pub fn all_zone_types(mut self) -> Self {
        self.zone_types = ZoneTypes::All;
        self
    }

    /// Shows the zone with identity `zone_id` too (instead of every zone).
    pub fn zone_id(mut self, zone_id: impl Into<String>) -> Self {
        self.zone_ids.push(zone_id.into());
        self
    }

    /// Shows the zone shown with name `zone_name` too (instead of every zone).
    pub fn zone_name(mut self, zone_name: impl Into<String>) -> Self {
        self.zone_names.push(zone_name.into());
        self
    }
}

/// The most zone mappings one identity listing applies (`mapping` repeated).
pub const MAX_MAPPINGS_PER_LISTING: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_of_open_sets_are_kept_not_refused() {
        let scope: NameScope = serde_json::from_str("\"organization\"").unwrap();
        assert_eq!(scope, NameScope::Other("organization".into()));
        assert_eq!(serde_json::to_string(&scope).unwrap(), "\"organization\"");
        let kind: ZoneType = serde_json::from_str("\"orbital-zone\"").unwrap();
        assert_eq!(kind, ZoneType::Other("orbital-zone".into()));
        assert_eq!(kind.as_str(), "orbital-zone");
        assert_eq!(
            serde_json::to_string(&ZoneType::AvailabilityZone).unwrap(),
            "\"availability-zone\""
        );
    }
}

//! The instance-type listing: one zone mapping's offerings of one region, by type, each with
//! the zones offering it in the catalog's order. Built per request from the mapping's compact
//! offerings and kept in the snapshot's answer cache (served again while the mapping is at the
//! version it was built from).

use appzone_contract::{InstanceTypeList, InstanceTypeZones, ZoneMapping};

use super::identities::RegionIdentities;
use super::{count, Answer};
use crate::model::offerings::RegionOffers;

/// The answer listing `offers` (zone mapping `mapping`'s offerings in `identities`' region),
/// only the types of zone `zone_id` when given.
pub fn instance_types(
    identities: &RegionIdentities,
    mapping: &ZoneMapping,
    offers: &RegionOffers,
    zone_id: Option<&str>,
) -> Answer {
    // `offers.zones` is in the catalog's order already (`Offerings::from_triples`).
    let data: Vec<InstanceTypeZones> = offers
        .types
        .iter()
        .enumerate()
        .filter_map(|(index, instance_type)| {
            let index = u32::try_from(index).ok()?;
            let zone_ids: Vec<String> = offers
                .zones
                .iter()
                .filter(|z| z.types.binary_search(&index).is_ok())
                .map(|z| z.zone_id.clone())
                .collect();
            let kept =
                !zone_ids.is_empty() && zone_id.is_none_or(|z| zone_ids.iter().any(|i| i == z));
            kept.then(|| InstanceTypeZones::new(instance_type.clone(), zone_ids))
        })
        .collect();
    let at = identities.at();
    let mut message = format!(
        "{} offered in {at} by zone mapping {}",
        count(data.len(), "instance type", "instance types"),
        mapping.id
    );
    if let Some(zone_id) = zone_id {
        message.push_str(&format!(" in zone {zone_id}"));
        // A filter that matches nothing is an empty answer, as on the zone-identity listing;
        // the message tells a mistyped id from a zone offering nothing.
        if identities.item(zone_id).is_none() {
            message.push_str(&format!(" ({at} has no zone {zone_id})"));
        }
    }
    let message = super::at_most(message, 512);
    Answer::over_body("instance-types", |id| {
        InstanceTypeList::new(data.clone(), id, message.clone())
    })
}

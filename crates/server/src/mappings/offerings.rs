//! A zone mapping's instance-type offerings (read by [`crate::model::offerings_output`])
//! placed on zone identities through the same mapping's zones.
//!
//! - AWS by zone id: on that zone, when the mapping holds it (the account's own output says
//!   the account sees it); by zone name: on the zone the mapping pairs with that name.
//! - Azure: each SKU's logical zones of a location through the mapping's zones of that
//!   location; a `Zone` restriction `NotAvailableForSubscription` removes its zones, a
//!   `Location` restriction the location (what the subscription may not launch is not
//!   offered).
//! - GCP: by zone name, which is the identity; a GCP mapping has no zones of its own.
//!
//! What cannot be placed (a zone or name the mapping or the catalog lacks, a region-level or
//! Outposts offering, a location the mapping does not map, a type offered in no zone) is kept
//! nowhere and named in `skipped`, one entry per region, zone and reason with the number of
//! offerings. A truncated AWS output (`NextToken`) is refused: the zones it leaves out would
//! read as zones without the type.

use std::collections::{BTreeMap, HashMap, HashSet};

use appzone_contract::{is_valid_instance_type, MappedRegion, RegionId, SkippedZone};

use super::outcome::{skip, MappingError};
use crate::catalog::Snapshot;
use crate::model::cloud_output::ShapeError;
use crate::model::offerings::Offerings;
use crate::model::offerings_output::{self, AzureSku, OfferingsOutput};

/// The offerings placed, and what was not.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placed {
    /// The offerings, per region.
    pub offerings: Offerings,
    /// What could not be placed, and why.
    pub skipped: Vec<SkippedZone>,
}

/// What could not be placed, counted per region, zone and reason.
#[derive(Default)]
struct Skips(BTreeMap<(String, Option<String>, Option<String>, String), usize>);

impl Skips {
    fn add(&mut self, region: &str, zone_id: Option<&str>, zone_name: Option<&str>, why: String) {
        *self
            .0
            .entry((
                region.to_owned(),
                zone_id.map(str::to_owned),
                zone_name.map(str::to_owned),
                why,
            ))
            .or_default() += 1;
    }

    fn into_skipped(self) -> Vec<SkippedZone> {
        self.0
            .into_iter()
            .map(|((region, zone_id, zone_name, why), n)| {
                let what = crate::catalog::count(n, "offering", "offerings");
                skip(
                    &region,
                    zone_id.as_deref(),
                    zone_name.as_deref(),
                    format!("{what} not kept: {why}"),
                )
            })
            .collect()
    }
}

/// Places `json` (the body's `offerings`) of `provider`, through `mapping_id`'s zones
/// `regions`, on the identities of `snapshot`.
pub fn place(
    provider: &str,
    json: &str,
    mapping_id: &str,
    regions: &[MappedRegion],
    snapshot: &Snapshot,
) -> Result<Placed, MappingError> {
    let output = offerings_output::read(provider, json)
        .map_err(|ShapeError(message)| MappingError::Shape(message))?;
    let catalog = snapshot.provider(provider);
    // Each zone identity of the provider: its region and place in the catalog's order.
    let mut zones: HashMap<&str, (&str, usize)> = HashMap::new();
    for (region, identities) in catalog.into_iter().flat_map(|p| p.identity_regions()) {
        for (i, item) in identities.items().iter().enumerate() {
            zones.insert(item.zone_id.as_str(), (region, i));
        }
    }
    let held: HashSet<(&str, &str)> = regions
        .iter()
        .flat_map(|r| {
            r.zones
                .iter()
                .map(move |z| (r.region.as_str(), z.zone_id.as_str()))
        })
        .collect();
    let mut placing = Placing::default();
    match &output {
        OfferingsOutput::Aws(outputs) => {
            if let Some(at) = outputs.iter().position(|o| o.next_token.is_some()) {
                return Err(MappingError::Catalog(format!(
                    "offerings[{at}] is truncated: it carries a NextToken, as aws ec2 \
                     describe-instance-type-offerings prints with --max-items; run it without \
                     --max-items so that every offering is there"
                )));
            }
            // The mapping's names: (name) -> (region, zone id).
            let names: HashMap<&str, (&str, &str)> = regions
                .iter()
                .flat_map(|r| {
                    r.zones.iter().map(move |z| {
                        (
                            z.zone_name.as_str(),
                            (r.region.as_str(), z.zone_id.as_str()),
                        )
                    })
                })
                .collect();
            for offering in outputs.iter().flat_map(|o| &o.offerings) {
                let location = offering.location.as_ref();
                let instance_type = offering.instance_type.as_ref();
                match offering.location_type.as_ref() {
                    "availability-zone-id" => match zones.get(location) {
                        Some((region, _)) if held.contains(&(*region, location)) => {
                            placing.keep(region, location, instance_type)
                        }
                        Some((region, _)) => placing.skips.add(
                            region,
                            Some(location),
                            None,
                            format!(
                                "zone mapping {mapping_id} holds no zone {location}: add \
                                 {region}'s aws ec2 describe-availability-zones output to it"
                            ),
                        ),
                        None => placing.skips.add(
                            region_of(location, &zones),
                            Some(location),
                            None,
                            format!("the catalog holds no zone {location} of aws"),
                        ),
                    },
                    "availability-zone" => match names.get(location) {
                        Some((region, zone_id)) => placing.keep(region, zone_id, instance_type),
                        None => placing.skips.add(
                            region_of(location, &zones),
                            None,
                            Some(location),
                            format!(
                                "zone mapping {mapping_id} names no zone {location}: add that \
                                 region's aws ec2 describe-availability-zones output to it, or \
                                 store offerings with --location-type availability-zone-id"
                            ),
                        ),
                    },
                    "region" => placing.skips.add(
                        location,
                        None,
                        None,
                        "a region-level offering says no zone: run aws ec2 \
                         describe-instance-type-offerings with --location-type \
                         availability-zone-id"
                            .to_owned(),
                    ),
                    other => placing.skips.add(
                        location,
                        None,
                        None,
                        format!(
                            "LocationType {other:?} places no zone of the catalog (zones are \
                             availability-zone-id or availability-zone)"
                        ),
                    ),
                }
            }
        }
        OfferingsOutput::Azure(skus) => {
            // The mapping's logical zones per location: (location, logical) -> physical.
            let logical: HashMap<(&str, &str), &str> = regions
                .iter()
                .flat_map(|r| {
                    r.zones.iter().map(move |z| {
                        (
                            (r.region.as_str(), z.zone_name.as_str()),
                            z.zone_id.as_str(),
                        )
                    })
                })
                .collect();
            for sku in skus {
                place_sku(sku, snapshot, mapping_id, regions, &logical, &mut placing);
            }
        }
        OfferingsOutput::Gcp(machine_types) => {
            for machine_type in machine_types {
                let zone = machine_type.zone.rsplit('/').next().unwrap_or_default();
                match zones.get(zone) {
                    Some((region, _)) => placing.keep(region, zone, &machine_type.name),
                    None => placing.skips.add(
                        region_of(zone, &zones),
                        Some(zone),
                        None,
                        format!("the catalog holds no zone {zone} of gcp"),
                    ),
                }
            }
        }
    }
    let order = |_: &str, zone_id: &str| zones.get(zone_id).map_or(usize::MAX, |(_, i)| *i);
    Ok(Placed {
        offerings: Offerings::from_triples(placing.triples, order),
        skipped: placing.skips.into_skipped(),
    })
}

/// The offerings placed so far, and what was not.
#[derive(Default)]
struct Placing<'t> {
    triples: Vec<(RegionId, &'t str, &'t str)>,
    skips: Skips,
}

impl<'t> Placing<'t> {
    /// Keeps `instance_type` in `zone_id` of `region`, a name the clouds could print.
    fn keep(&mut self, region: &str, zone_id: &'t str, instance_type: &'t str) {
        if !is_valid_instance_type(instance_type) {
            self.skips.add(
                region,
                Some(zone_id),
                None,
                format!(
                    "{:?} is not an instance type name (1 to 128 ASCII letters, digits, '.', \
                     '_' and '-')",
                    instance_type.chars().take(64).collect::<String>()
                ),
            );
        } else if let Ok(region) = region.parse() {
            self.triples.push((region, zone_id, instance_type));
        }
    }
}

/// Places one Azure SKU.
fn place_sku<'t>(
    sku: &'t AzureSku<'_>,
    snapshot: &Snapshot,
    mapping_id: &str,
    regions: &[MappedRegion],
    logical: &HashMap<(&str, &str), &'t str>,
    placing: &mut Placing<'t>,
) {
    if let Some(kind) = sku
        .resource_type
        .as_deref()
        .filter(|k| *k != "virtualMachines")
    {
        for info in sku.location_info.iter().flatten() {
            placing.skips.add(
                &info.location,
                None,
                None,
                format!(
                    "SKUs of resource type {kind} are not instance types: run az vm list-skus \
                     --resource-type virtualMachines"
                ),
            );
        }
        return;
    }
    let restrictions = sku.restrictions.as_deref().unwrap_or_default();
    let located = |restriction: &offerings_output::AzureRestriction, location: &str| {
        let mut named = restriction.locations().peekable();
        named.peek().is_none() || named.any(|l| l.eq_ignore_ascii_case(location))
    };
    for info in sku.location_info.iter().flatten() {
        let location = info.location.as_ref();
        // What the subscription may not launch there is not offered.
        if restrictions
            .iter()
            .any(|r| r.kind == "Location" && located(r, location))
        {
            continue;
        }
        let closed: HashSet<&str> = restrictions
            .iter()
            .filter(|r| {
                r.kind == "Zone"
                    && r.reason_code.as_deref() == Some("NotAvailableForSubscription")
                    && located(r, location)
            })
            .flat_map(|r| r.zones())
            .collect();
        let region = location.to_ascii_lowercase();
        let identities = snapshot
            .provider("azure")
            .and_then(|p| p.identities(&region));
        let Some(identities) = identities else {
            placing.skips.add(
                location,
                None,
                None,
                format!("the catalog has no region {location} of azure"),
            );
            continue;
        };
        let open: Vec<&str> = info
            .zones
            .iter()
            .flatten()
            .map(|z| z.as_ref())
            .filter(|z| !closed.contains(z))
            .collect();
        if info.zones.as_ref().is_none_or(|z| z.is_empty()) {
            let why = if identities.has_availability_zones() {
                format!("offered in {location} in no zone (regional deployments only)")
            } else {
                format!("azure/{region} has no availability zones; offerings are kept per zone")
            };
            placing.skips.add(location, None, None, why);
            continue;
        }
        let maps_region = regions.iter().any(|r| r.region.as_str() == region);
        for zone in open {
            match logical.get(&(region.as_str(), zone)) {
                Some(physical) => placing.keep(&region, physical, &sku.name),
                None if maps_region => placing.skips.add(
                    location,
                    None,
                    Some(zone),
                    format!("zone mapping {mapping_id} maps no logical zone {zone} in {region}"),
                ),
                None => placing.skips.add(
                    location,
                    None,
                    None,
                    format!(
                        "zone mapping {mapping_id} maps no zone of {region}: add the \
                         subscription's az account list-locations output to it"
                    ),
                ),
            }
        }
    }
}

/// The region a zone id or name of the output that could not be placed belongs to, for
/// `skipped` (the offerings outputs name no region): the catalog's region whose id the name
/// extends (`us-east-1g`, `us-central1-z`, `us-east-1-xyz-1a`), else the region of a zone id with
/// the same prefix (`use1-az9` beside `use1-az1`), else the text as the output gives it. Never a
/// region the catalog does not hold.
fn region_of<'z>(zone: &'z str, zones: &HashMap<&'z str, (&'z str, usize)>) -> &'z str {
    let regions = || zones.values().map(|(region, _)| *region);
    let by_name = regions()
        .filter(|region| {
            zone.strip_prefix(region).is_some_and(|rest| {
                (rest.len() == 1 && rest.bytes().all(|b| b.is_ascii_lowercase()))
                    || rest.starts_with('-')
            })
        })
        .max_by_key(|region| region.len());
    let by_id = || {
        // An AWS id's prefix names its region (`use1`); a name's first word (`us`) does not.
        let (prefix, _) = zone
            .split_once('-')
            .filter(|(p, _)| p.bytes().any(|b| b.is_ascii_digit()))?;
        zones
            .iter()
            .find(|(id, _)| id.split_once('-').is_some_and(|(p, _)| p == prefix))
            .map(|(_, (region, _))| *region)
    };
    by_name.or_else(by_id).unwrap_or(zone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skipped_zone_is_given_the_catalogs_region_its_name_or_id_names_never_a_made_up_one() {
        let zones: HashMap<&str, (&str, usize)> = [
            ("use1-az1", ("us-east-1", 0)),
            ("use1-bos1-az1", ("us-east-1", 6)),
            ("us-central1-a", ("us-central1", 0)),
            ("eastus-az1", ("eastus", 0)),
        ]
        .into_iter()
        .collect();
        for (zone, region) in [
            ("us-east-1g", "us-east-1"),
            ("us-east-1-xyz-1a", "us-east-1"),
            ("use1-az9", "us-east-1"),
            ("us-central1-z", "us-central1"),
            ("us-south9-a", "us-south9-a"),
            ("apne9-az1", "apne9-az1"),
        ] {
            assert_eq!(region_of(zone, &zones), region, "{zone}");
        }
    }
}

//! A zone mapping's instance-type offerings, placed on zone identities, in the compact form
//! they are stored and served from.
//!
//! Per region: the instance types once, sorted (byte order), and per zone identity the indexes
//! of the types it offers, sorted. A set the size of one AWS account's full us-east-1 (6,827
//! offerings of 1,354 types, 1.03 MB as the CLI prints it) is 48 KB stored this way
//! (BENCHMARKS.md), and "does zone Z offer type T" is two binary searches.

use appzone_contract::{RegionId, RegionOfferings};
use serde::{Deserialize, Serialize};

/// The offerings of one zone: indexes into its region's `types`, sorted, distinct.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZoneOffers {
    /// The zone identity.
    #[serde(rename = "z")]
    pub zone_id: String,
    /// The types it offers, as indexes into the region's types.
    #[serde(rename = "t")]
    pub types: Vec<u32>,
}

/// The offerings of one region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionOffers {
    /// The region.
    #[serde(rename = "r")]
    pub region: RegionId,
    /// Every type offered in at least one zone, sorted, distinct.
    #[serde(rename = "n")]
    pub types: Vec<String>,
    /// The zones offering any, in the catalog's order.
    #[serde(rename = "z")]
    pub zones: Vec<ZoneOffers>,
}

impl RegionOffers {
    /// The index of `instance_type` in [`Self::types`].
    pub fn type_index(&self, instance_type: &str) -> Option<u32> {
        self.types
            .binary_search_by(|t| t.as_str().cmp(instance_type))
            .ok()
            .and_then(|i| u32::try_from(i).ok())
    }

    /// Whether zone `zone_id` offers every type of `types` (indexes; `None` for a type the
    /// region lacks, which no zone offers).
    pub fn zone_offers_all(&self, zone_id: &str, types: &[Option<u32>]) -> bool {
        let Some(zone) = self.zones.iter().find(|z| z.zone_id == zone_id) else {
            return types.is_empty();
        };
        types
            .iter()
            .all(|t| t.is_some_and(|t| zone.types.binary_search(&t).is_ok()))
    }

    /// How many (type, zone) pairs are offered.
    pub fn offering_count(&self) -> usize {
        self.zones.iter().map(|z| z.types.len()).sum()
    }

    /// The counts the API shows.
    pub fn counts(&self) -> RegionOfferings {
        RegionOfferings::new(
            self.region.clone(),
            self.types.len() as u64,
            self.offering_count() as u64,
        )
    }
}

/// A mapping's offerings, per region, sorted by region.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Offerings {
    /// The regions.
    pub regions: Vec<RegionOffers>,
}

impl Offerings {
    /// The offerings of `region`, when the mapping holds some.
    pub fn region(&self, region: &str) -> Option<&RegionOffers> {
        self.regions
            .binary_search_by(|r| r.region.as_str().cmp(region))
            .ok()
            .map(|i| &self.regions[i])
    }

    /// The counts per region the API shows.
    pub fn counts(&self) -> Vec<RegionOfferings> {
        self.regions.iter().map(RegionOffers::counts).collect()
    }

    /// About how many bytes it takes in memory (names, indexes), for caches that weigh it.
    pub fn approximate_bytes(&self) -> usize {
        self.regions
            .iter()
            .map(|r| {
                r.types.iter().map(|t| t.len() + 24).sum::<usize>()
                    + r.zones
                        .iter()
                        .map(|z| z.zone_id.len() + 48 + 4 * z.types.len())
                        .sum::<usize>()
            })
            .sum()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.regions.is_empty()
    }

    /// Builds the compact form from (region, zone id, instance type) triples: `zone_order`
    /// gives each region's zones in the catalog's order (a zone it lacks goes last).
    pub fn from_triples<'a>(
        mut triples: Vec<(RegionId, &'a str, &'a str)>,
        zone_order: impl Fn(&str, &str) -> usize,
    ) -> Self {
        triples.sort_unstable_by(|a, b| (a.0.as_str(), a.2, a.1).cmp(&(b.0.as_str(), b.2, b.1)));
        triples.dedup();
        let mut regions: Vec<RegionOffers> = Vec::new();
        for (region, zone_id, instance_type) in triples {
            if regions.last().is_none_or(|r| r.region != region) {
                regions.push(RegionOffers {
                    region,
                    types: Vec::new(),
                    zones: Vec::new(),
                });
            }
            let Some(current) = regions.last_mut() else {
                continue;
            };
            if current.types.last().is_none_or(|t| t != instance_type) {
                current.types.push(instance_type.to_owned());
            }
            let index = u32::try_from(current.types.len() - 1).unwrap_or(u32::MAX);
            match current.zones.iter_mut().find(|z| z.zone_id == zone_id) {
                Some(zone) => zone.types.push(index),
                None => current.zones.push(ZoneOffers {
                    zone_id: zone_id.to_owned(),
                    types: vec![index],
                }),
            }
        }
        for region in &mut regions {
            let at = region.region.as_str().to_owned();
            region
                .zones
                .sort_by_key(|z| (zone_order(&at, &z.zone_id), z.zone_id.clone()));
        }
        Self { regions }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(id: &str) -> RegionId {
        id.parse().unwrap()
    }

    #[test]
    fn triples_become_sorted_types_and_zones_in_catalog_order() {
        let triples = vec![
            (region("us-east-1"), "use1-az2", "p5.48xlarge"),
            (region("us-east-1"), "use1-az1", "c5.xlarge"),
            (region("us-east-1"), "use1-az2", "c5.xlarge"),
            (region("us-east-1"), "use1-az2", "c5.xlarge"),
            (region("eu-west-1"), "euw1-az1", "c5.xlarge"),
        ];
        let order = |_: &str, zone: &str| if zone == "use1-az2" { 0 } else { 1 };
        let offerings = Offerings::from_triples(triples, order);
        assert_eq!(offerings.regions.len(), 2);
        let east = offerings.region("us-east-1").unwrap();
        assert_eq!(east.types, ["c5.xlarge", "p5.48xlarge"]);
        assert_eq!(east.zones[0].zone_id, "use1-az2");
        assert_eq!(east.zones[0].types, [0, 1]);
        assert_eq!(east.offering_count(), 3);
        let p5 = east.type_index("p5.48xlarge");
        assert!(east.zone_offers_all("use1-az2", &[p5]));
        assert!(!east.zone_offers_all("use1-az1", &[p5]));
        assert!(!east.zone_offers_all("use1-az2", &[east.type_index("m7i.large")]));
        let stored = serde_json::to_string(&offerings).unwrap();
        assert_eq!(
            serde_json::from_str::<Offerings>(&stored).unwrap(),
            offerings
        );
    }
}

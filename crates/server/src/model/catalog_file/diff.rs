//! What replacing one catalog file with another adds, changes and removes: what `catalog
//! import` reports, and what it refuses to remove without `--prune`.

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::{CatalogFile, ProviderEntry, RegionEntry};

/// The ids of `ids` that `other` also holds, in their order: two lists of children are in the
/// same order when these agree both ways.
fn kept_in_order<'a>(ids: impl Iterator<Item = &'a str>, other: &HashSet<&str>) -> Vec<&'a str> {
    ids.filter(|id| other.contains(id)).collect()
}

/// What replacing one catalog with another adds, changes and removes; see
/// [`CatalogFile::changes_to`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CatalogChanges {
    /// Providers, regions and zones whose id is new.
    pub added: Counts,
    /// Providers and regions kept under the same id with another name or order of children,
    /// and regions with other identities (zones have no name, so a zone is only ever added or
    /// removed).
    pub changed: Counts,
    /// Providers, regions and zones whose id is gone: a zone drops out of its region's
    /// listing, a region's listing answers 404, a provider's listings answer 400.
    pub removed: Counts,
    /// Whether the providers kept are listed in another order.
    pub providers_reordered: bool,
    /// Whether the catalog's `source` (compile date, references) changed.
    pub source_changed: bool,
}

/// Numbers of providers, regions and zones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Providers.
    pub providers: usize,
    /// Regions, counted per provider.
    pub regions: usize,
    /// Zones, counted per region.
    pub zones: usize,
}

impl Counts {
    fn is_zero(self) -> bool {
        self == Counts::default()
    }
}

impl Counts {
    /// The removed counts with what the removal does to the listings, such as `0 providers, 0
    /// regions, 1 zone (a removed zone is no longer listed in its region)`.
    pub fn consequences(self) -> String {
        let effect = if self.providers == 0 && self.regions == 0 {
            "a removed zone is no longer listed in its region"
        } else {
            "a removed zone is no longer listed, a removed region's zone listing answers 404 \
             and a removed provider's listings answer 400"
        };
        format!("{self} ({effect})")
    }
}

impl fmt::Display for Counts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural =
            |n: usize, one: &'static str, many: &'static str| if n == 1 { one } else { many };
        write!(
            f,
            "{} {}, {} {}, {} {}",
            self.providers,
            plural(self.providers, "provider", "providers"),
            self.regions,
            plural(self.regions, "region", "regions"),
            self.zones,
            plural(self.zones, "zone", "zones"),
        )
    }
}

impl CatalogChanges {
    /// Whether the two catalogs are the same.
    pub fn is_empty(&self) -> bool {
        self.added.is_zero()
            && self.changed.is_zero()
            && self.removed.is_zero()
            && !self.providers_reordered
            && !self.source_changed
    }

    /// Whether anything a client can list today would stop being listed.
    pub fn removes_anything(&self) -> bool {
        !self.removed.is_zero()
    }
}

impl fmt::Display for CatalogChanges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no change");
        }
        write!(
            f,
            "added {}; changed {}; removed {}",
            self.added, self.changed, self.removed
        )?;
        if self.providers_reordered {
            f.write_str("; providers in another order")?;
        }
        if self.source_changed {
            f.write_str("; source changed")?;
        }
        Ok(())
    }
}

impl CatalogFile {
    /// What replacing `self` with `new` adds, changes and removes. Linear in the size of both.
    pub fn changes_to(&self, new: &CatalogFile) -> CatalogChanges {
        let mut changes = CatalogChanges {
            source_changed: self.source != new.source,
            ..CatalogChanges::default()
        };
        let old_providers: HashMap<&str, &ProviderEntry> =
            self.providers.iter().map(|p| (p.id.as_str(), p)).collect();
        let new_ids: HashSet<&str> = new.providers.iter().map(|p| p.id.as_str()).collect();
        let old_ids: HashSet<&str> = old_providers.keys().copied().collect();
        changes.providers_reordered =
            kept_in_order(self.providers.iter().map(|p| p.id.as_str()), &new_ids)
                != kept_in_order(new.providers.iter().map(|p| p.id.as_str()), &old_ids);
        for old in &self.providers {
            if !new_ids.contains(old.id.as_str()) {
                changes.removed.providers += 1;
                changes.removed.regions += old.regions.len();
                changes.removed.zones += old.regions.iter().map(|r| r.zones.len()).sum::<usize>();
            }
        }
        for provider in &new.providers {
            let Some(old) = old_providers.get(provider.id.as_str()) else {
                changes.added.providers += 1;
                changes.added.regions += provider.regions.len();
                changes.added.zones += provider
                    .regions
                    .iter()
                    .map(|r| r.zones.len())
                    .sum::<usize>();
                continue;
            };
            let old_region_ids: HashSet<&str> = old.regions.iter().map(|r| r.id.as_str()).collect();
            let new_region_ids: HashSet<&str> =
                provider.regions.iter().map(|r| r.id.as_str()).collect();
            if old.name != provider.name
                || kept_in_order(old.regions.iter().map(|r| r.id.as_str()), &new_region_ids)
                    != kept_in_order(
                        provider.regions.iter().map(|r| r.id.as_str()),
                        &old_region_ids,
                    )
            {
                changes.changed.providers += 1;
            }
            let old_regions: HashMap<&str, &RegionEntry> =
                old.regions.iter().map(|r| (r.id.as_str(), r)).collect();
            for region in &old.regions {
                if !new_region_ids.contains(region.id.as_str()) {
                    changes.removed.regions += 1;
                    changes.removed.zones += region.zones.len();
                }
            }
            for region in &provider.regions {
                let Some(old_region) = old_regions.get(region.id.as_str()) else {
                    changes.added.regions += 1;
                    changes.added.zones += region.zones.len();
                    continue;
                };
                let old_zones: HashSet<&str> =
                    old_region.zones.iter().map(String::as_str).collect();
                let new_zones: HashSet<&str> = region.zones.iter().map(String::as_str).collect();
                changes.added.zones += new_zones.difference(&old_zones).count();
                changes.removed.zones += old_zones.difference(&new_zones).count();
                if old_region.name != region.name
                    || old_region.name_scope != region.name_scope
                    || old_region.identities != region.identities
                    || old_region.sources != region.sources
                    || old_region.note != region.note
                    || kept_in_order(old_region.zones.iter().map(String::as_str), &new_zones)
                        != kept_in_order(region.zones.iter().map(String::as_str), &old_zones)
                {
                    changes.changed.regions += 1;
                }
            }
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(json: &str) -> CatalogFile {
        CatalogFile::parse(json).unwrap()
    }

    #[test]
    fn changes_count_what_is_added_changed_and_removed() {
        let old = catalog(
            r#"{"providers":[
              {"id":"a","name":"A","regions":[
                {"id":"r1","name":"R1","zones":["z1","z2"]},
                {"id":"r2","name":"R2","zones":["z3"]}]},
              {"id":"b","name":"B","regions":[{"id":"r","name":"R","zones":["z"]}]}]}"#,
        );
        assert!(old.changes_to(&old).is_empty());
        assert_eq!(old.changes_to(&old).to_string(), "no change");

        let new = catalog(
            r#"{"providers":[
              {"id":"a","name":"A","regions":[
                {"id":"r2","name":"R2","zones":["z3","z4"]},
                {"id":"r1","name":"R1 renamed","zones":["z2","z1"]}]},
              {"id":"c","name":"C","regions":[{"id":"r","name":"R","zones":["y1","y2"]}]}]}"#,
        );
        let changes = old.changes_to(&new);
        assert_eq!(
            changes.to_string(),
            "added 1 provider, 1 region, 3 zones; changed 1 provider, 1 region, 0 zones; \
             removed 1 provider, 1 region, 1 zone"
        );
        assert!(changes.removes_anything());
        assert!(!CatalogFile {
            source: None,
            providers: vec![]
        }
        .changes_to(&old)
        .removes_anything());
        assert_eq!(
            old.changes_to(&CatalogFile {
                source: None,
                providers: vec![]
            })
            .removed,
            Counts {
                providers: 2,
                regions: 3,
                zones: 4
            }
        );
    }

    #[test]
    fn providers_listed_in_another_order_are_a_change() {
        let old = catalog(
            r#"{"providers":[
              {"id":"a","name":"A","regions":[]},
              {"id":"b","name":"B","regions":[]},
              {"id":"c","name":"C","regions":[]}]}"#,
        );
        let reordered = catalog(
            r#"{"providers":[
              {"id":"b","name":"B","regions":[]},
              {"id":"a","name":"A","regions":[]},
              {"id":"c","name":"C","regions":[]}]}"#,
        );
        let changes = old.changes_to(&reordered);
        assert!(!changes.is_empty());
        assert_eq!(
            changes.to_string(),
            "added 0 providers, 0 regions, 0 zones; changed 0 providers, 0 regions, 0 zones; \
             removed 0 providers, 0 regions, 0 zones; providers in another order"
        );
        // Removing one provider keeps the others' order: not a reordering.
        let removed = catalog(
            r#"{"providers":[{"id":"a","name":"A","regions":[]},{"id":"c","name":"C","regions":[]}]}"#,
        );
        assert!(!old.changes_to(&removed).providers_reordered);
    }
}

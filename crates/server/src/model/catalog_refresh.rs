//! `catalog import --from aws-describe FILE...` / `--from azure-locations FILE`: the regions a
//! cloud's own output shows, refreshed in the catalog.
//!
//! One account's (or subscription's) output is not the catalog's truth: it may not see every
//! zone (a constrained zone hidden from new accounts), and in a region whose names are per
//! account or per subscription its letters are its own. So a refresh only adds: zone ids and
//! zone names the output shows that the catalog lacks; it never removes one, and it takes a
//! name as a catalog fact only where the region's names are `uniform`. A uniform region whose
//! output pairs a zone with another name than the catalog's is refused: one of the two is
//! wrong, and a person has to say which.

use std::collections::HashSet;

use super::catalog_file::{CatalogFile, IdentityEntry, Reference, SourceBlock};
use super::cloud_output::{name_fits, Output};
use appzone_contract::RegionId;

/// What a refresh did: the new catalog, and one line per change or skip for the operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refresh {
    /// The catalog with the refreshed regions.
    pub catalog: CatalogFile,
    /// What changed or was skipped, one line each.
    pub report: Vec<String>,
}

impl CatalogFile {
    /// This catalog with `provider`'s regions refreshed from `output`, which `reference`
    /// describes (added to the catalog's references, under an id of its own, and to each
    /// region's sources the output shows).
    pub fn refreshed(
        &self,
        provider: &str,
        output: &Output,
        mut reference: Reference,
    ) -> Result<Refresh, String> {
        let mut catalog = self.clone();
        let mut report = Vec::new();
        reference.id = catalog.free_reference_id(&reference.id);
        let cite = format!("{} ({})", reference.id, reference.date);
        let entry = catalog
            .providers
            .iter_mut()
            .find(|p| p.id.as_str() == provider)
            .ok_or_else(|| format!("the catalog has no provider {provider:?}"))?;
        for from in &output.regions {
            let at = format!("{provider}/{}", from.region);
            if from.edge_zone {
                report.push(format!(
                    "skipped {at}: an Azure Extended Zone location, not a region (the catalog \
                     lists Extended Zones under their home region)"
                ));
                continue;
            }
            let Some(region) = entry
                .regions
                .iter_mut()
                .find(|r| r.id.as_str() == from.region)
            else {
                if provider == "azure" {
                    report.push(format!("skipped {at}: not a region of the catalog"));
                    continue;
                }
                return Err(format!(
                    "{at} is not a region of the catalog: add it with a catalog file first \
                     (the output does not give its display name)"
                ));
            };
            let Some(scope) = region.name_scope.clone() else {
                return Err(format!(
                    "the catalog holds no zone identities for {at}: import a catalog file with \
                     them first"
                ));
            };
            let mut ids = HashSet::new();
            let mut names = HashSet::new();
            for zone in &from.zones {
                let (zone_id, zone_name) = (&zone.zone_id, &zone.zone_name);
                if zone_id.parse::<RegionId>().is_err() {
                    return Err(format!("{at}: {zone_id:?} is not a zone id"));
                }
                if !name_fits(provider, &from.region, zone_name) {
                    return Err(format!(
                        "{at}: zone name {zone_name:?} of {zone_id} is outside its region"
                    ));
                }
                if !ids.insert(zone_id) || !names.insert(zone_name) {
                    return Err(format!(
                        "{at}: zone id {zone_id:?} or name {zone_name:?} appears twice"
                    ));
                }
                let is_az = zone.zone_type == "availability-zone";
                // For whom this zone's name holds: a Local Zone's is the same for every
                // account; AWS says Wavelength Zones may differ per account.
                let name_scope = match zone.zone_type.as_str() {
                    "availability-zone" => scope.clone(),
                    "local-zone" => "uniform".to_owned(),
                    _ => "account".to_owned(),
                };
                let uniform = name_scope == "uniform";
                let parent = zone
                    .parent_zone_id
                    .clone()
                    .filter(|p| p.parse::<RegionId>().is_ok());
                match region.identities.iter_mut().find(|i| &i.zone_id == zone_id) {
                    None => {
                        let mut added = IdentityEntry::availability_zone(
                            zone_id.clone(),
                            uniform.then(|| zone_name.clone()),
                            // One account's output cannot say every account sees the zone.
                            "unknown".to_owned(),
                            Some(format!("added from {cite}")),
                        );
                        if !is_az {
                            added.zone_type = zone.zone_type.clone();
                            added.name_scope = (name_scope != scope).then_some(name_scope);
                            added.parent_zone_id = parent;
                        }
                        region.identities.push(added);
                        report.push(format!("{at}: added zone id {zone_id}"));
                    }
                    Some(identity) => {
                        let mut learned = Vec::new();
                        if uniform {
                            match &identity.zone_name {
                                None => {
                                    identity.zone_name = Some(zone_name.clone());
                                    learned.push(format!("is named {zone_name}"));
                                }
                                Some(name) if name != zone_name => {
                                    return Err(format!(
                                        "{at}: the catalog names {zone_id} {name:?}, the output \
                                         {zone_name:?}, and the region's names are uniform: one \
                                         of them is wrong; check the output, or correct the \
                                         catalog file"
                                    ));
                                }
                                Some(_) => {}
                            }
                        }
                        // A parent zone id is the same for every account.
                        if let (None, Some(parent)) = (&identity.parent_zone_id, parent) {
                            learned.push(format!("is anchored to {parent}"));
                            identity.parent_zone_id = Some(parent);
                        }
                        if !learned.is_empty() {
                            // The old note said what was not known yet: this import says it.
                            identity.note = Some(format!("{} per {cite}", learned.join(" and ")));
                            report.push(format!("{at}: {zone_id} {}", learned.join(" and ")));
                        }
                    }
                }
                // The zone listing serves AWS names and Azure physical zones of availability
                // zones only.
                let listed = if provider == "azure" {
                    zone_id
                } else {
                    zone_name
                };
                if is_az && !region.zones.contains(listed) {
                    region.zones.push(listed.clone());
                    report.push(format!("{at}: now lists zone {listed}"));
                }
            }
            if !region.sources.contains(&reference.id) {
                region.sources.push(reference.id.clone());
            }
            region.refreshed_on = Some(reference.date.clone());
            report.push(format!("{at}: refreshed on {}", reference.date));
        }
        let source = catalog.source.get_or_insert_with(SourceBlock::default);
        source.references.push(reference);
        catalog
            .validate()
            .map_err(|err| format!("the refreshed catalog is not valid: {err}"))?;
        Ok(Refresh { catalog, report })
    }

    /// `id`, or `id` with `n2`, `n3`, ... when a reference already has it: each import is a
    /// reference of its own, several on one day included.
    fn free_reference_id(&self, id: &str) -> String {
        let taken = |candidate: &str| {
            self.source
                .iter()
                .flat_map(|s| &s.references)
                .any(|r| r.id == candidate)
        };
        if !taken(id) {
            return id.to_owned();
        }
        (2..)
            .map(|n| format!("{id}n{n}"))
            .find(|candidate| !taken(candidate))
            .unwrap_or_else(|| id.to_owned())
    }
}

impl CatalogFile {
    /// Whether this catalog is an earlier release's built-in catalog, untouched: no `source`
    /// (format 1.1), and the providers, regions (with their names) and zones of `builtin`, in
    /// its order, but for regions without zones (1.1 did not list them). Such a catalog is
    /// replaced by `builtin` when the server starts, which adds the identities and those
    /// regions and removes nothing; a catalog an operator changed is left as it is.
    pub fn is_earlier_builtin(&self, builtin: &CatalogFile) -> bool {
        if self.source.is_some() || self.providers.len() != builtin.providers.len() {
            return false;
        }
        self.providers
            .iter()
            .zip(&builtin.providers)
            .all(|(old, new)| {
                let new_regions: Vec<_> = new
                    .regions
                    .iter()
                    .filter(|r| !r.zones.is_empty() || old.regions.iter().any(|o| o.id == r.id))
                    .collect();
                old.id == new.id
                    && old.name == new.name
                    && old.regions.len() == new_regions.len()
                    && old.regions.iter().zip(new_regions).all(|(o, n)| {
                        o.id == n.id
                            && o.name == n.name
                            && o.zones == n.zones
                            && o.name_scope.is_none()
                    })
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cloud_output;
    use serde_json::json;

    fn reference() -> Reference {
        Reference {
            id: "I20261127".into(),
            what: "aws ec2 describe-availability-zones output".into(),
            location: "prod.json".into(),
            date: "2026-11-27".into(),
        }
    }

    fn zone(region: &str, name: &str, id: &str) -> serde_json::Value {
        json!({"RegionName": region, "ZoneName": name, "ZoneId": id, "ZoneType": "availability-zone"})
    }

    fn region<'c>(
        catalog: &'c CatalogFile,
        id: &str,
    ) -> &'c crate::model::catalog_file::RegionEntry {
        catalog.providers[0]
            .regions
            .iter()
            .find(|r| r.id.as_str() == id)
            .unwrap()
    }

    #[test]
    fn a_uniform_region_takes_the_outputs_names_and_a_per_account_region_never_does() {
        let builtin = CatalogFile::builtin();
        let output = cloud_output::aws(&json!([
            {"AvailabilityZones": [zone("eu-west-2", "eu-west-2d", "euw2-az4")]},
            {"AvailabilityZones": [zone("us-east-1", "us-east-1g", "use1-az7")]}
        ]))
        .unwrap();
        let refresh = builtin.refreshed("aws", &output, reference()).unwrap();
        let london = region(&refresh.catalog, "eu-west-2");
        let az4 = london
            .identities
            .iter()
            .find(|i| i.zone_id == "euw2-az4")
            .unwrap();
        assert_eq!(az4.zone_name.as_deref(), Some("eu-west-2d"));
        assert!(london.sources.contains(&"I20261127".to_owned()));
        let virginia = region(&refresh.catalog, "us-east-1");
        let az7 = virginia
            .identities
            .iter()
            .find(|i| i.zone_id == "use1-az7")
            .unwrap();
        assert_eq!(
            az7.zone_name, None,
            "one account's letters are not a catalog fact"
        );
        assert!(virginia.zones.contains(&"us-east-1g".to_owned()));
        // Nothing is removed: the output showed one zone of each region.
        assert_eq!(
            region(&builtin, "us-east-1").identities.len() + 1,
            virginia.identities.len()
        );
        assert!(builtin.changes_to(&refresh.catalog).removed.providers == 0);
        assert!(!builtin.changes_to(&refresh.catalog).removes_anything());
    }

    #[test]
    fn a_uniform_region_named_otherwise_by_the_output_is_refused() {
        let output = cloud_output::aws(
            &json!({"AvailabilityZones": [zone("eu-central-1", "eu-central-1b", "euc1-az2")]}),
        )
        .unwrap();
        let err = CatalogFile::builtin()
            .refreshed("aws", &output, reference())
            .unwrap_err();
        assert!(err.contains("one of them is wrong"), "{err}");
    }

    #[test]
    fn the_1_1_built_in_catalog_is_recognised_and_a_changed_one_is_not() {
        let builtin = CatalogFile::builtin();
        let mut old = builtin.clone();
        old.source = None;
        for provider in &mut old.providers {
            provider.regions.retain(|r| !r.zones.is_empty());
            for region in &mut provider.regions {
                *region = crate::model::catalog_file::RegionEntry::new(
                    region.id.clone(),
                    region.name.clone(),
                    region.zones.clone(),
                );
            }
        }
        assert!(old.is_earlier_builtin(&builtin));
        assert!(!builtin.is_earlier_builtin(&builtin), "already 1.2");
        let mut changed = old.clone();
        changed.providers[0].regions[0].zones.pop();
        assert!(!changed.is_earlier_builtin(&builtin));
        let mut fewer = old.clone();
        fewer.providers[0].regions.pop();
        assert!(!fewer.is_earlier_builtin(&builtin));
    }
}

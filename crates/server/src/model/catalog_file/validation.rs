//! The rules of a catalog file that serde cannot check: unique ids, the listings' limits,
//! sane names, zone names and identities, and the `source` block its regions cite.

use std::collections::HashSet;

use appzone_contract::RegionId;

use super::{CatalogFile, CatalogFileError, RegionEntry, SourceBlock};

impl CatalogFile {
    /// Checks the rules serde cannot: unique ids, sane names and zone names.
    pub fn validate(&self) -> Result<(), CatalogFileError> {
        let rule = |msg: String| Err(CatalogFileError::Rule(msg));
        if self.providers.len() > appzone_contract::MAX_PROVIDERS {
            return rule(format!(
                "the catalog has {} providers; a catalog has at most {}",
                self.providers.len(),
                appzone_contract::MAX_PROVIDERS
            ));
        }
        let references = check_source(self.source.as_ref())?;
        let mut providers = HashSet::new();
        for provider in &self.providers {
            if !providers.insert(provider.id.as_str()) {
                return rule(format!("provider {:?} appears twice", provider.id.as_str()));
            }
            crate::model::check_display_name(&provider.name)
                .or_else(|m| rule(format!("provider {}: {m}", provider.id)))?;
            if provider.regions.len() > appzone_contract::MAX_REGIONS_PER_PROVIDER {
                return rule(format!(
                    "provider {} has {} regions; a provider has at most {}",
                    provider.id,
                    provider.regions.len(),
                    appzone_contract::MAX_REGIONS_PER_PROVIDER
                ));
            }
            let mut regions = HashSet::new();
            for region in &provider.regions {
                let at = format!("{}/{}", provider.id, region.id);
                if !regions.insert(region.id.as_str()) {
                    return rule(format!("region {at} appears twice"));
                }
                crate::model::check_display_name(&region.name)
                    .or_else(|m| rule(format!("region {at}: {m}")))?;
                if region.zones.len() > appzone_contract::MAX_ZONES_PER_REGION {
                    return rule(format!(
                        "region {at} has {} zones; a region has at most {}",
                        region.zones.len(),
                        appzone_contract::MAX_ZONES_PER_REGION
                    ));
                }
                check_identities(region, &at, &references)?;
                let mut zones = HashSet::new();
                for zone in &region.zones {
                    if zone.parse::<RegionId>().is_err() {
                        return rule(format!(
                            "zone {zone:?} in {at}: zones are 1 to 63 lowercase letters, digits \
                             and '-'"
                        ));
                    }
                    if !zones.insert(zone.as_str()) {
                        return rule(format!("zone {zone:?} appears twice in {at}"));
                    }
                }
            }
        }
        Ok(())
    }
}

/// Checks the `source` block; returns its reference ids.
fn check_source(source: Option<&SourceBlock>) -> Result<HashSet<&str>, CatalogFileError> {
    let rule = |msg: String| Err(CatalogFileError::Rule(msg));
    let mut ids = HashSet::new();
    let Some(source) = source else {
        return Ok(ids);
    };
    if let Some(date) = &source.compiled_on {
        if !is_date(date) {
            return rule(format!(
                "source.compiled_on {date:?} is not a date of the form YYYY-MM-DD"
            ));
        }
    }
    for reference in &source.references {
        let id = reference.id.as_str();
        if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return rule(format!(
                "source reference id {id:?} must be 1 to 64 ASCII letters or digits"
            ));
        }
        if !ids.insert(id) {
            return rule(format!("source reference {id:?} appears twice"));
        }
        let texts = [
            ("what", reference.what.as_str(), 2048),
            ("where", reference.location.as_str(), 512),
        ];
        for (field, text, max) in texts {
            if text.trim().is_empty()
                || text.chars().count() > max
                || text.chars().any(char::is_control)
            {
                return rule(format!(
                    "source reference {id}: {field} must be 1 to {max} printable characters"
                ));
            }
        }
        if !is_date(&reference.date) {
            return rule(format!(
                "source reference {id}: date {:?} is not of the form YYYY-MM-DD",
                reference.date
            ));
        }
    }
    Ok(ids)
}

/// `YYYY-MM-DD`, digits in place (the calendar is not checked further).
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// A word of an open set (`name_scope`, `zone_type`, `visibility`): 1 to 64 lowercase letters,
/// `_` or `-`.
fn is_word(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'-')
}

/// Checks a region's identities, `name_scope`, `sources` and `note`.
fn check_identities(
    region: &RegionEntry,
    at: &str,
    references: &HashSet<&str>,
) -> Result<(), CatalogFileError> {
    let rule = |msg: String| Err(CatalogFileError::Rule(msg));
    match &region.name_scope {
        None if !region.identities.is_empty() => {
            return rule(format!("region {at} has identities but no name_scope"));
        }
        Some(scope) if !is_word(scope) => {
            return rule(format!(
                "region {at}: name_scope {scope:?} must be 1 to 64 lowercase letters, '_' or '-'"
            ));
        }
        _ => {}
    }
    if region.identities.len() > appzone_contract::MAX_ZONES_PER_REGION {
        return rule(format!(
            "region {at} has {} identities; a region has at most {}",
            region.identities.len(),
            appzone_contract::MAX_ZONES_PER_REGION
        ));
    }
    let mut ids = HashSet::new();
    let mut names = HashSet::new();
    for identity in &region.identities {
        let id = identity.zone_id.as_str();
        if id.parse::<RegionId>().is_err() {
            return rule(format!(
                "zone id {id:?} in {at}: zone ids are 1 to 63 lowercase letters, digits and '-'"
            ));
        }
        if !ids.insert(id) {
            return rule(format!("zone id {id:?} appears twice in {at}"));
        }
        if let Some(name) = &identity.zone_name {
            if name.parse::<RegionId>().is_err() {
                return rule(format!(
                    "zone name {name:?} of {id} in {at}: zone names are 1 to 63 lowercase \
                     letters, digits and '-'"
                ));
            }
            if !names.insert(name.as_str()) {
                return rule(format!(
                    "zone name {name:?} is given to two zone ids in {at}"
                ));
            }
        }
        let words = [
            ("zone_type", Some(&identity.zone_type)),
            ("visibility", Some(&identity.visibility)),
            ("name_scope", identity.name_scope.as_ref()),
            ("opt_in", identity.opt_in.as_ref()),
        ];
        for (field, value) in words {
            let Some(value) = value else { continue };
            if !is_word(value) {
                return rule(format!(
                    "zone {id} in {at}: {field} {value:?} must be 1 to 64 lowercase letters, '_' \
                     or '-'"
                ));
            }
        }
        if let Some(group) = &identity.network_border_group {
            if group.parse::<RegionId>().is_err() {
                return rule(format!(
                    "zone {id} in {at}: network_border_group {group:?} must be 1 to 63 \
                     lowercase letters, digits and '-'"
                ));
            }
        }
        check_note(identity.note.as_deref(), &format!("zone {id} in {at}"))?;
    }
    // A parent is an availability zone of the same region.
    for identity in &region.identities {
        if let Some(parent) = &identity.parent_zone_id {
            let is_zone = region
                .identities
                .iter()
                .any(|i| &i.zone_id == parent && i.zone_type == "availability-zone");
            if !is_zone {
                return rule(format!(
                    "zone {} in {at}: parent_zone_id {parent:?} is not an availability zone \
                     of the region",
                    identity.zone_id
                ));
            }
        }
    }
    check_note(region.note.as_deref(), &format!("region {at}"))?;
    if let Some(date) = &region.refreshed_on {
        if !is_date(date) {
            return rule(format!(
                "region {at}: refreshed_on {date:?} is not a date of the form YYYY-MM-DD"
            ));
        }
    }
    // The identity listing's `source.references` promises at most 64.
    if region.sources.len() > 64 {
        return rule(format!(
            "region {at} cites {} references; at most 64",
            region.sources.len()
        ));
    }
    for cited in &region.sources {
        if !references.contains(cited.as_str()) {
            return rule(format!(
                "region {at} cites {cited:?}, which is not a reference of the catalog's source"
            ));
        }
    }
    Ok(())
}

/// A note: 1 to 1024 printable characters.
fn check_note(note: Option<&str>, of: &str) -> Result<(), CatalogFileError> {
    match note {
        Some(note)
            if note.trim().is_empty()
                || note.chars().count() > 1024
                || note.chars().any(char::is_control) =>
        {
            Err(CatalogFileError::Rule(format!(
                "{of}: a note must be 1 to 1024 printable characters"
            )))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_duplicates_and_bad_ids() {
        let dup = r#"{"providers":[{"id":"a","name":"A","regions":[]},{"id":"a","name":"A","regions":[]}]}"#;
        assert!(CatalogFile::parse(dup)
            .unwrap_err()
            .to_string()
            .contains("twice"));
        let bad = r#"{"providers":[{"id":"A","name":"A","regions":[]}]}"#;
        assert!(CatalogFile::parse(bad).is_err());
        let zone = r#"{"providers":[{"id":"a","name":"A","regions":[{"id":"r","name":"R","zones":["Z 1"]}]}]}"#;
        assert!(CatalogFile::parse(zone).is_err());
        // The document promises at most MAX_ZONES_PER_REGION zones in a listing.
        let zones = |n: usize| {
            let list: Vec<String> = (0..n).map(|i| format!("\"z{i}\"")).collect();
            format!(
                r#"{{"providers":[{{"id":"a","name":"A","regions":[{{"id":"r","name":"R","zones":[{}]}}]}}]}}"#,
                list.join(",")
            )
        };
        let max = appzone_contract::MAX_ZONES_PER_REGION;
        assert!(CatalogFile::parse(&zones(max)).is_ok());
        assert!(CatalogFile::parse(&zones(max + 1))
            .unwrap_err()
            .to_string()
            .contains("at most"));
    }

    /// The document promises at most MAX_PROVIDERS providers and MAX_REGIONS_PER_PROVIDER
    /// regions in a listing.
    #[test]
    fn refuses_more_providers_or_regions_than_a_listing_may_hold() {
        let providers = |n: usize| {
            let list: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"id":"p{i}","name":"P","regions":[]}}"#))
                .collect();
            format!(r#"{{"providers":[{}]}}"#, list.join(","))
        };
        let regions = |n: usize| {
            let list: Vec<String> = (0..n)
                .map(|i| format!(r#"{{"id":"r{i}","name":"R","zones":[]}}"#))
                .collect();
            format!(
                r#"{{"providers":[{{"id":"a","name":"A","regions":[{}]}}]}}"#,
                list.join(",")
            )
        };
        let max = appzone_contract::MAX_PROVIDERS;
        assert!(CatalogFile::parse(&providers(max)).is_ok());
        let err = CatalogFile::parse(&providers(max + 1)).unwrap_err();
        assert!(err.to_string().contains("at most 1000"), "{err}");
        let max = appzone_contract::MAX_REGIONS_PER_PROVIDER;
        assert!(CatalogFile::parse(&regions(max)).is_ok());
        let err = CatalogFile::parse(&regions(max + 1)).unwrap_err();
        assert!(
            err.to_string().contains("provider a has 1001 regions"),
            "{err}"
        );
    }
}

//! The catalog's JSON form, used by `catalog import`/`export` and by the built-in catalog.
//!
//! ```json
//! {"source": {"compiled_on": "2026-11-27",
//!   "references": [{"id": "S1", "what": "...", "where": "https://...", "date": "2026-11-27"}]},
//!  "providers": [{"id": "aws", "name": "Amazon Web Services",
//!   "regions": [{"id": "us-east-1", "name": "US East (N. Virginia)",
//!     "zones": ["us-east-1a", "us-east-1b"],
//!     "name_scope": "account",
//!     "identities": [{"zone_id": "use1-az1", "zone_name": null,
//!       "zone_type": "availability-zone", "visibility": "all_accounts", "note": "..."}],
//!     "sources": ["S1", "S2"]}]}]}
//! ```
//!
//! Order is meaningful: zones are served in the order given. `zones` are the names the zone
//! listing serves; `identities` say which place each zone is (format 1.2). A 1.1 file, without
//! `source`, `name_scope`, `identities` and `sources`, is still a valid catalog: its regions
//! have no identities (the identity listing says so), and it exports as it was imported.
//! Unknown top-level fields (such as the 1.1 built-in file's `source_notes`) are ignored.

use std::collections::{HashMap, HashSet};
use std::fmt;

use appzone_contract::{ProviderId, RegionId};
use serde::{Deserialize, Serialize};

/// The built-in catalog of public AWS, GCP and Azure regions and zones with their identities,
/// loaded into an empty database. Sourced facts: each region names its references, listed in
/// the file's `source`; `compile.py` beside it builds it from the compiled facts.
const BUILTIN: &str = include_str!("../../catalog/builtin.json");

/// A whole catalog: providers, their regions and each region's zones, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogFile {
    /// When the catalog was compiled and what it rests on; absent in a 1.1 file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceBlock>,
    /// Providers in display order.
    pub providers: Vec<ProviderEntry>,
}

/// The catalog's `source`: its compile date and the references its regions cite.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SourceBlock {
    /// `YYYY-MM-DD`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled_on: Option<String>,
    /// The references, each with a unique id.
    #[serde(default)]
    pub references: Vec<Reference>,
}

/// One reference of [`SourceBlock`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// Unique within the catalog, such as `S1`.
    pub id: String,
    /// What the source is and what was taken from it.
    pub what: String,
    /// A URL, or a repository, path and commit.
    #[serde(rename = "where")]
    pub location: String,
    /// `YYYY-MM-DD`.
    pub date: String,
}

/// One zone identity of a region (format 1.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdentityEntry {
    /// The account-independent identity (`use1-az1`, `eastus-az1`, `us-central1-a`).
    pub zone_id: String,
    /// The name for every account, where a source pairs it; `null` otherwise.
    pub zone_name: Option<String>,
    /// `availability-zone`.
    #[serde(default = "availability_zone")]
    pub zone_type: String,
    /// `all_accounts` or `some_accounts`.
    #[serde(default = "all_accounts")]
    pub visibility: String,
    /// What else is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn availability_zone() -> String {
    "availability-zone".to_owned()
}

fn all_accounts() -> String {
    "all_accounts".to_owned()
}

/// One provider of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderEntry {
    /// Provider id, e.g. `aws`.
    pub id: ProviderId,
    /// Display name.
    pub name: String,
    /// Regions in display order.
    pub regions: Vec<RegionEntry>,
}

/// One region of a provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionEntry {
    /// Region id, unique within the provider.
    pub id: RegionId,
    /// Display name.
    pub name: String,
    /// Zones in the order they are served.
    pub zones: Vec<String>,
    /// For whom the region's zone names hold (`global`, `uniform`, `account`,
    /// `subscription`); absent when the catalog has no identities for the region (1.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_scope: Option<String>,
    /// The zones' identities, in catalog order (format 1.2; empty without `name_scope`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub identities: Vec<IdentityEntry>,
    /// The ids of the references (in the catalog's `source`) the region's facts rest on.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<String>,
    /// What is known of the region as a whole (access restricted, say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl RegionEntry {
    /// A region without identities (as a 1.1 catalog file gives it).
    pub fn new(id: RegionId, name: impl Into<String>, zones: Vec<String>) -> Self {
        Self {
            id,
            name: name.into(),
            zones,
            name_scope: None,
            identities: Vec::new(),
            sources: Vec::new(),
            note: None,
        }
    }
}

/// Why a catalog file was refused.
#[derive(Debug, thiserror::Error)]
pub enum CatalogFileError {
    /// Not JSON of the expected shape (includes invalid provider or region ids). The message
    /// carries serde's, so it is not also a `source` (a chain would print it twice).
    #[error("catalog is not valid: {0}")]
    Parse(serde_json::Error),
    /// Well-formed JSON that breaks a catalog rule.
    #[error("catalog is not valid: {0}")]
    Rule(String),
}

impl CatalogFile {
    /// Parses and validates a catalog document.
    pub fn parse(json: &str) -> Result<Self, CatalogFileError> {
        let file: CatalogFile = serde_json::from_str(json).map_err(CatalogFileError::Parse)?;
        file.validate()?;
        Ok(file)
    }

    /// The built-in catalog.
    pub fn builtin() -> Self {
        // The file is compiled in and covered by a test, so failing here is a build defect.
        Self::parse(BUILTIN).unwrap_or_else(|err| panic!("built-in catalog is invalid: {err}"))
    }

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

    /// Pretty JSON with a trailing newline, as `catalog export` prints it.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).unwrap_or_default();
        json.push('\n');
        json
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
        for (field, value) in [
            ("zone_type", &identity.zone_type),
            ("visibility", &identity.visibility),
        ] {
            if !is_word(value) {
                return rule(format!(
                    "zone {id} in {at}: {field} {value:?} must be 1 to 64 lowercase letters, '_' \
                     or '-'"
                ));
            }
        }
        check_note(identity.note.as_deref(), &format!("zone {id} in {at}"))?;
    }
    check_note(region.note.as_deref(), &format!("region {at}"))?;
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

    #[test]
    fn builtin_catalog_is_valid_and_has_the_three_clouds() {
        let catalog = CatalogFile::builtin();
        let ids: Vec<&str> = catalog.providers.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(ids, ["aws", "gcp", "azure"]);
        let aws = &catalog.providers[0];
        let use1 = aws.regions.iter().find(|r| r.id.as_str() == "us-east-1");
        assert!(use1.is_some_and(|r| r.zones.first().map(String::as_str) == Some("us-east-1a")));
    }

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

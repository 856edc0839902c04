//! The catalog's JSON form, used by `catalog import`/`export` and by the built-in catalog.
//!
//! ```json
//! {"providers": [{"id": "aws", "name": "Amazon Web Services",
//!   "regions": [{"id": "us-east-1", "name": "US East (N. Virginia)",
//!     "zones": ["us-east-1a", "us-east-1b"]}]}]}
//! ```
//!
//! Order is meaningful: zones are served in the order given. Unknown top-level fields (such as
//! the built-in file's `source_notes`) are ignored.

use std::collections::HashSet;

use appzone_contract::{ProviderId, RegionId};
use serde::{Deserialize, Serialize};

/// The built-in catalog of public AWS, GCP and Azure regions and zones, loaded into an empty
/// database. Sourced facts; see the file's `source_notes`.
const BUILTIN: &str = include_str!("../../catalog/builtin.json");

/// A whole catalog: providers, their regions and each region's zones, in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogFile {
    /// Providers in display order.
    pub providers: Vec<ProviderEntry>,
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
}

/// Why a catalog file was refused.
#[derive(Debug, thiserror::Error)]
pub enum CatalogFileError {
    /// Not JSON of the expected shape (includes invalid provider or region ids).
    #[error("catalog is not valid: {0}")]
    Parse(#[from] serde_json::Error),
    /// Well-formed JSON that breaks a catalog rule.
    #[error("catalog is not valid: {0}")]
    Rule(String),
}

impl CatalogFile {
    /// Parses and validates a catalog document.
    pub fn parse(json: &str) -> Result<Self, CatalogFileError> {
        let file: CatalogFile = serde_json::from_str(json)?;
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
        let mut providers = HashSet::new();
        for provider in &self.providers {
            if !providers.insert(provider.id.as_str()) {
                return rule(format!("provider {:?} appears twice", provider.id.as_str()));
            }
            check_name(&provider.name)
                .or_else(|m| rule(format!("provider {}: {m}", provider.id)))?;
            let mut regions = HashSet::new();
            for region in &provider.regions {
                let at = format!("{}/{}", provider.id, region.id);
                if !regions.insert(region.id.as_str()) {
                    return rule(format!("region {at} appears twice"));
                }
                check_name(&region.name).or_else(|m| rule(format!("region {at}: {m}")))?;
                if region.zones.len() > appzone_contract::MAX_ZONES_PER_REGION {
                    return rule(format!(
                        "region {at} has {} zones; a region has at most {}",
                        region.zones.len(),
                        appzone_contract::MAX_ZONES_PER_REGION
                    ));
                }
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

fn check_name(name: &str) -> Result<(), String> {
    if name.trim().is_empty() || name.len() > 200 || name.chars().any(char::is_control) {
        Err(format!(
            "name {name:?} must be 1 to 200 printable characters"
        ))
    } else {
        Ok(())
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
}

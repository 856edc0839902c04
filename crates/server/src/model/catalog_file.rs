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
//!
//! This file is the format: its types, reading and writing them. Its rules beyond serde's are
//! in `catalog_file/validation.rs`; what replacing one catalog with another changes, in
//! `catalog_file/diff.rs`.

mod diff;
mod validation;

pub use diff::{CatalogChanges, Counts};

use std::sync::LazyLock;

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
    /// `all_accounts`, `some_accounts` or `unknown`.
    #[serde(default = "all_accounts")]
    pub visibility: String,
    /// For whom the name holds, where it is not the region's `name_scope` (a Local Zone's
    /// name is the same for every account of a region whose zone names are per account).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name_scope: Option<String>,
    /// The availability zone (its `zone_id`, in the same region) this zone is anchored to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_zone_id: Option<String>,
    /// AWS: the zone's network border group, where a source gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network_border_group: Option<String>,
    /// `not_required` or `required`; absent means `not_required` for an availability zone
    /// and `required` for any other type (every edge zone needs an opt-in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opt_in: Option<String>,
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

impl IdentityEntry {
    /// An availability zone's identity with nothing beyond its name, visibility and note.
    pub fn availability_zone(
        zone_id: String,
        zone_name: Option<String>,
        visibility: String,
        note: Option<String>,
    ) -> Self {
        Self {
            zone_id,
            zone_name,
            zone_type: availability_zone(),
            visibility,
            name_scope: None,
            parent_zone_id: None,
            network_border_group: None,
            opt_in: None,
            note,
        }
    }

    /// `opt_in` as served: given, or what the zone type implies.
    pub fn opt_in(&self) -> &str {
        match &self.opt_in {
            Some(opt_in) => opt_in,
            None if self.zone_type == "availability-zone" => "not_required",
            None => "required",
        }
    }
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
    /// The date (`YYYY-MM-DD`) of the region's last `catalog import --from`; absent until
    /// one shows the region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refreshed_on: Option<String>,
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
            refreshed_on: None,
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

    /// The built-in catalog: parsed and validated once per process (each test of the suite
    /// starts a server on it), a copy for each caller.
    pub fn builtin() -> Self {
        // The file is compiled in and covered by a test, so failing here is a build defect.
        static PARSED: LazyLock<CatalogFile> = LazyLock::new(|| {
            CatalogFile::parse(BUILTIN)
                .unwrap_or_else(|err| panic!("built-in catalog is invalid: {err}"))
        });
        PARSED.clone()
    }

    /// Pretty JSON with a trailing newline, as `catalog export` prints it.
    pub fn to_json(&self) -> String {
        let mut json = serde_json::to_string_pretty(self).unwrap_or_default();
        json.push('\n');
        json
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
}

//! The clouds' own CLI output (read by [`crate::model::cloud_output`]) turned into a zone
//! mapping's pairs, checked against the catalog.
//!
//! - AWS: entries whose `ZoneType` is not `availability-zone` (local and wavelength zones)
//!   are skipped: the catalog holds availability zones only, and refusing them would refuse
//!   every real output of a region that has them.
//! - Azure: `az account list-locations` prints every location of the subscription, so those
//!   the catalog does not hold (logical locations such as `global`, canary regions) are
//!   skipped.
//!
//! What the catalog contradicts is refused, whole: a region (AWS) or zone id the catalog does
//! not know, a name outside its region, an id or a name twice in a region. The error names
//! the first offenders, with their region.

use std::collections::HashSet;

use appzone_contract::{MappedRegion, MappedZone, RegionId};
use serde_json::Value;

use crate::catalog::{RegionIdentities, Snapshot};
use crate::model::cloud_output::{self, name_fits, RegionPairs, ShapeError};

/// Most offenders an error names.
const OFFENDERS_NAMED: usize = 3;

/// Why an output was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MappingError {
    /// Not the shape of the cloud's output (400 `invalid_body`).
    Shape(String),
    /// The catalog contradicts it (422 `invalid_zone_mapping`).
    Catalog(String),
}

/// The pairs of an output, and what was skipped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The pairs, per region, in the output's order.
    pub regions: Vec<MappedRegion>,
    /// What was left out and why, for the answer's message.
    pub skipped: Vec<String>,
}

/// The pairs `output` of `provider` gives, checked against `snapshot`.
pub fn parse(provider: &str, output: &Value, snapshot: &Snapshot) -> Result<Parsed, MappingError> {
    let read = match provider {
        "aws" => cloud_output::aws(output),
        "azure" => cloud_output::azure(output),
        other => {
            return Err(MappingError::Shape(format!(
                "provider must be \"aws\" or \"azure\" (the clouds whose zone names depend on \
                 the account or subscription), not {other:?}"
            )))
        }
    };
    let output = read.map_err(|ShapeError(message)| MappingError::Shape(message))?;
    let mut parsed = check(provider, output.regions, snapshot)?;
    if output.other_zone_types > 0 {
        parsed.skipped.push(format!(
            "{} zones that are not availability zones (local or wavelength zones)",
            output.other_zone_types
        ));
    }
    Ok(parsed)
}

fn check(
    provider: &str,
    raw: Vec<RegionPairs>,
    snapshot: &Snapshot,
) -> Result<Parsed, MappingError> {
    let catalog = snapshot.provider(provider);
    let mut offenders = Vec::new();
    let mut skipped = Vec::new();
    let mut regions = Vec::new();
    let mut seen_regions = HashSet::new();
    for RegionPairs { region, pairs } in raw {
        let identities: Option<&RegionIdentities> = catalog.and_then(|p| p.identities(&region));
        let Some(identities) = identities.filter(|i| i.known()) else {
            if provider == "azure" {
                // list-locations prints every location, the catalog's or not.
                skipped.push(region);
                continue;
            }
            let why = if identities.is_some() {
                "the catalog holds no zone identities for it"
            } else {
                "it is not a region of the catalog"
            };
            offenders.push(format!("region {region:?}: {why}"));
            continue;
        };
        if !seen_regions.insert(region.clone()) {
            offenders.push(format!("region {region:?} appears twice"));
            continue;
        }
        let known: Vec<&str> = identities.zone_ids().collect();
        let mut ids = HashSet::new();
        let mut names = HashSet::new();
        let mut zones = Vec::new();
        for (zone_id, zone_name) in pairs {
            if !known.contains(&zone_id.as_str()) {
                let zones = if known.is_empty() {
                    "it has no availability zones".to_owned()
                } else {
                    format!("its zones are {}", known.join(", "))
                };
                offenders.push(format!(
                    "{region}: zone id {zone_id:?} is not a zone of {provider}/{region} ({zones})"
                ));
            } else if !name_fits(provider, &region, &zone_name) {
                let expected = match provider {
                    "aws" => format!("a name of {region} is {region} and a letter"),
                    _ => "a logical zone is a number such as 1".to_owned(),
                };
                offenders.push(format!(
                    "{region}: zone name {zone_name:?} of {zone_id} is outside its region \
                     ({expected})"
                ));
            } else if !ids.insert(zone_id.clone()) {
                offenders.push(format!("{region}: zone id {zone_id:?} appears twice"));
            } else if !names.insert(zone_name.clone()) {
                offenders.push(format!(
                    "{region}: zone name {zone_name:?} is given to two zone ids"
                ));
            } else {
                zones.push(MappedZone::new(zone_id, zone_name));
            }
        }
        // The catalog knew the region, so its id is valid.
        if let Ok(id) = region.parse::<RegionId>() {
            regions.push(MappedRegion::new(id, zones));
        }
    }
    if !offenders.is_empty() {
        let more = offenders.len().saturating_sub(OFFENDERS_NAMED);
        let mut message = offenders
            .into_iter()
            .take(OFFENDERS_NAMED)
            .collect::<Vec<_>>()
            .join("; ");
        if more > 0 {
            message.push_str(&format!("; and {more} more"));
        }
        return Err(MappingError::Catalog(message));
    }
    if regions.is_empty() {
        return Err(MappingError::Catalog(format!(
            "the output pairs no availability zone of a {provider} region of the catalog"
        )));
    }
    Ok(Parsed { regions, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::catalog_file::CatalogFile;
    use serde_json::json;

    fn snapshot() -> Snapshot {
        Snapshot::build(1, &CatalogFile::builtin())
    }

    fn aws_zone(region: &str, name: &str, id: &str) -> Value {
        json!({"RegionName": region, "ZoneName": name, "ZoneId": id,
               "ZoneType": "availability-zone", "State": "available"})
    }

    #[test]
    fn aws_output_of_one_or_several_regions_gives_its_pairs_and_skips_local_zones() {
        let one = json!({"AvailabilityZones": [
            aws_zone("us-east-1", "us-east-1a", "use1-az2"),
            {"RegionName": "us-east-1", "ZoneName": "us-east-1-bos-1a", "ZoneId": "use1-bos1-az1", "ZoneType": "local-zone"}
        ]});
        let parsed = parse("aws", &one, &snapshot()).unwrap();
        assert_eq!(parsed.regions.len(), 1);
        assert_eq!(parsed.regions[0].zones[0].zone_name, "us-east-1a");
        let two =
            json!([one, {"AvailabilityZones": [aws_zone("eu-west-1", "eu-west-1a", "euw1-az3")]}]);
        let parsed = parse("aws", &two, &snapshot()).unwrap();
        assert_eq!(parsed.regions.len(), 2);
    }

    #[test]
    fn what_the_catalog_contradicts_is_refused_naming_the_offender() {
        let refuse = |output: Value| match parse("aws", &output, &snapshot()) {
            Err(MappingError::Catalog(message)) => message,
            other => panic!("{other:?}"),
        };
        let unknown =
            refuse(json!({"AvailabilityZones": [aws_zone("us-east-1", "us-east-1a", "use1-az9")]}));
        assert!(
            unknown.contains("\"use1-az9\" is not a zone of aws/us-east-1"),
            "{unknown}"
        );
        let foreign =
            refuse(json!({"AvailabilityZones": [aws_zone("us-east-1", "us-west-2a", "use1-az1")]}));
        assert!(
            foreign.contains("\"us-west-2a\" of use1-az1 is outside its region"),
            "{foreign}"
        );
        let twice = refuse(json!({"AvailabilityZones": [
            aws_zone("us-east-1", "us-east-1a", "use1-az1"),
            aws_zone("us-east-1", "us-east-1b", "use1-az1")]}));
        assert!(twice.contains("\"use1-az1\" appears twice"), "{twice}");
        let name_twice = refuse(json!({"AvailabilityZones": [
            aws_zone("us-east-1", "us-east-1a", "use1-az1"),
            aws_zone("us-east-1", "us-east-1a", "use1-az2")]}));
        assert!(name_twice.contains("given to two zone ids"), "{name_twice}");
        let region = refuse(
            json!({"AvailabilityZones": [aws_zone("us-gov-west-1", "us-gov-west-1a", "usgw1-az1")]}),
        );
        assert!(region.contains("not a region of the catalog"), "{region}");
    }

    #[test]
    fn output_of_another_shape_is_a_bad_body() {
        for output in [
            json!({"zones": []}),
            json!("text"),
            json!({"AvailabilityZones": [{"ZoneName": "us-east-1a"}]}),
        ] {
            assert!(
                matches!(
                    parse("aws", &output, &snapshot()),
                    Err(MappingError::Shape(_))
                ),
                "{output}"
            );
        }
        assert!(matches!(
            parse("azure", &json!({}), &snapshot()),
            Err(MappingError::Shape(_))
        ));
        assert!(matches!(
            parse("gcp", &json!([]), &snapshot()),
            Err(MappingError::Shape(_))
        ));
    }

    #[test]
    fn azure_locations_give_logical_zones_and_locations_outside_the_catalog_are_skipped() {
        let output = json!([
            {"name": "eastus", "availabilityZoneMappings": [
                {"logicalZone": "1", "physicalZone": "eastus-az3"},
                {"logicalZone": "2", "physicalZone": "eastus-az1"}]},
            {"name": "global", "availabilityZoneMappings": null},
            {"name": "eastus2euap", "availabilityZoneMappings": [{"logicalZone": "1", "physicalZone": "eastus2euap-az1"}]}
        ]);
        let parsed = parse("azure", &output, &snapshot()).unwrap();
        assert_eq!(parsed.regions.len(), 1);
        assert_eq!(
            parsed.regions[0].zones[0],
            MappedZone::new("eastus-az3".into(), "1".into())
        );
        assert_eq!(parsed.skipped, ["eastus2euap"]);
    }
}

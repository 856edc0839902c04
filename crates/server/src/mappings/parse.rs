//! The clouds' own CLI output (read by [`crate::model::cloud_output`]) turned into a zone
//! mapping's zones, checked against the catalog.
//!
//! A mapping keeps what the output says: every zone of a region the catalog holds, of every
//! type, with the account's `State` and `OptInStatus`. What the catalog does not hold (a zone
//! id unknown for its region, a region unknown to the catalog or without zones, an Azure
//! Extended Zone or canary location) is kept nowhere and named in `skipped`; it is never a
//! reason to refuse the rest, since one account sees zones the catalog may not list yet.
//!
//! Refused, whole, is what contradicts: within the output (an id or a name twice in a region,
//! a name outside its region), or a sourced pair of the catalog where the names are the same
//! for every account (the rule `catalog import --from` applies). The error names the first
//! offenders, with their region. An output whose zones are all skipped is refused too: it
//! would store an empty mapping.

use std::collections::HashSet;

use appzone_contract::{MappedRegion, MappedZone, NameScope, RegionId, SkippedZone};
use serde_json::Value;

use crate::catalog::{RegionIdentities, Snapshot};
use crate::model::cloud_output::{self, name_fits, RegionZones, ShapeError};
use crate::model::offerings::Offerings;

use super::outcome::{skip, MappingError};

/// Most offenders an error names.
const OFFENDERS_NAMED: usize = 3;

/// The zones of an output, what was skipped, and the account it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The zones, per region, in the output's order.
    pub regions: Vec<MappedRegion>,
    /// What was left out and why.
    pub skipped: Vec<SkippedZone>,
    /// Azure: the subscription the output's location ids name, when they agree.
    pub subscription: Option<String>,
    /// The instance-type offerings placed on the zones (empty without `offerings`).
    pub offerings: Offerings,
}

/// A zone mapping's body as stored: the zones of `output` (`aws`, `azure`; none for `gcp`),
/// then `offerings` (unparsed JSON) placed through them, both checked against `snapshot`.
pub fn parse_mapping(
    provider: &str,
    output: Option<&Value>,
    offerings: Option<&str>,
    mapping_id: &str,
    snapshot: &Snapshot,
) -> Result<Parsed, MappingError> {
    let mut parsed = match (provider, output) {
        ("gcp", None) => Parsed {
            regions: Vec::new(),
            skipped: Vec::new(),
            subscription: None,
            offerings: Offerings::default(),
        },
        ("gcp", Some(_)) => {
            return Err(MappingError::Shape(
                "output: a gcp mapping has no output (GCP zone names are the same in every \
                 project); send its offerings alone"
                    .to_owned(),
            ))
        }
        (_, Some(output)) => parse(provider, output, snapshot)?,
        ("aws", None) => {
            return Err(MappingError::Shape(
                "output: missing; an aws mapping is taken from the output of aws ec2 \
                 describe-availability-zones --all-availability-zones --output json"
                    .to_owned(),
            ))
        }
        ("azure", None) => {
            return Err(MappingError::Shape(
                "output: missing; an azure mapping is taken from the output of az account \
                 list-locations -o json"
                    .to_owned(),
            ))
        }
        (other, None) => return Err(unknown_provider(other)),
    };
    let Some(offerings) = offerings else {
        if provider == "gcp" {
            return Err(MappingError::Shape(
                "offerings: missing; a gcp mapping carries the output of gcloud compute \
                 machine-types list --format=json"
                    .to_owned(),
            ));
        }
        return Ok(parsed);
    };
    let placed =
        super::offerings::place(provider, offerings, mapping_id, &parsed.regions, snapshot)?;
    if provider == "gcp" && placed.offerings.is_empty() {
        let reasons: Vec<String> = placed
            .skipped
            .iter()
            .map(|s| format!("{}: {}", s.region, s.reason))
            .collect();
        return Err(MappingError::Catalog(format!(
            "the offerings place no instance type in a zone the catalog holds for gcp ({})",
            if reasons.is_empty() {
                "the output lists none".to_owned()
            } else {
                named(reasons)
            }
        )));
    }
    parsed.offerings = placed.offerings;
    parsed.skipped.extend(placed.skipped);
    Ok(parsed)
}

fn unknown_provider(other: &str) -> MappingError {
    MappingError::Shape(format!(
        "provider must be \"aws\" or \"azure\" (the clouds whose zone names depend on the \
         account or subscription), or \"gcp\" with offerings alone; not {other:?}"
    ))
}

/// The zones `output` of `provider` gives, checked against `snapshot`.
pub fn parse(provider: &str, output: &Value, snapshot: &Snapshot) -> Result<Parsed, MappingError> {
    let read = match provider {
        "aws" => cloud_output::aws(output),
        "azure" => cloud_output::azure(output),
        other => return Err(unknown_provider(other)),
    };
    let output = read.map_err(|ShapeError(message)| MappingError::Shape(message))?;
    let (regions, skipped) = check(provider, output.regions, snapshot)?;
    Ok(Parsed {
        regions,
        skipped,
        subscription: output.subscription,
        offerings: Offerings::default(),
    })
}

/// The first offenders, joined, with how many more there are.
fn named(offenders: Vec<String>) -> String {
    let more = offenders.len().saturating_sub(OFFENDERS_NAMED);
    let mut message = offenders
        .into_iter()
        .take(OFFENDERS_NAMED)
        .collect::<Vec<_>>()
        .join("; ");
    if more > 0 {
        message.push_str(&format!("; and {more} more"));
    }
    message
}

fn check(
    provider: &str,
    raw: Vec<RegionZones>,
    snapshot: &Snapshot,
) -> Result<(Vec<MappedRegion>, Vec<SkippedZone>), MappingError> {
    let catalog = snapshot.provider(provider);
    let mut offenders = Vec::new();
    let mut skipped = Vec::new();
    let mut regions = Vec::new();
    let mut seen_regions = HashSet::new();
    for RegionZones {
        region,
        zones,
        edge_zone,
    } in raw
    {
        let skip_all = |skipped: &mut Vec<SkippedZone>, reason: String| {
            if zones.is_empty() {
                skipped.push(skip(&region, None, None, reason.clone()));
            }
            for zone in &zones {
                skipped.push(skip(
                    &region,
                    Some(&zone.zone_id),
                    Some(&zone.zone_name),
                    reason.clone(),
                ));
            }
        };
        if edge_zone {
            skip_all(
                &mut skipped,
                "an Azure Extended Zone location: the catalog lists Extended Zones under their \
                 home region, and their use needs no zone mapping"
                    .to_owned(),
            );
            continue;
        }
        let identities: Option<&RegionIdentities> = catalog.and_then(|p| p.identities(&region));
        let Some(identities) = identities.filter(|i| i.known()) else {
            let why = if identities.is_some() {
                format!("the catalog holds no zone identities for {provider}/{region}")
            } else {
                format!("the catalog has no region {region} of {provider}")
            };
            skip_all(&mut skipped, why);
            continue;
        };
        if !seen_regions.insert(region.clone()) {
            offenders.push(format!("region {region:?} appears twice"));
            continue;
        }
        let mut ids = HashSet::new();
        let mut names = HashSet::new();
        let mut kept = Vec::new();
        for zone in zones {
            let (zone_id, zone_name) = (&zone.zone_id, &zone.zone_name);
            if !name_fits(provider, &region, zone_name) {
                let expected = match provider {
                    "aws" => {
                        format!("a name of {region} is {region} and a letter, or {region}-...")
                    }
                    _ => "a logical zone is a number such as 1".to_owned(),
                };
                offenders.push(format!(
                    "{region}: zone name {zone_name:?} of {zone_id} is outside its region \
                     ({expected})"
                ));
                continue;
            }
            if !ids.insert(zone_id.clone()) {
                offenders.push(format!("{region}: zone id {zone_id:?} appears twice"));
                continue;
            }
            if !names.insert(zone_name.clone()) {
                offenders.push(format!(
                    "{region}: zone name {zone_name:?} is given to two zone ids"
                ));
                continue;
            }
            let Some(item) = identities.item(zone_id) else {
                let reason = if !identities.has_availability_zones() {
                    format!("{provider}/{region} has no availability zones in the catalog")
                } else {
                    format!("the catalog holds no zone {zone_id} in {provider}/{region}")
                };
                skipped.push(skip(&region, Some(zone_id), Some(zone_name), reason));
                continue;
            };
            match &item.zone_name {
                Some(sourced) if item.name_scope == NameScope::Uniform && sourced != zone_name => {
                    offenders.push(format!(
                        "{region}: the output names {zone_id} {zone_name:?}, but its name is \
                         {sourced:?} for every account (the catalog's sources pair them)"
                    ));
                }
                _ => kept.push(
                    MappedZone::new(zone.zone_id, zone.zone_name)
                        .with_state(zone.state, zone.opt_in_status),
                ),
            }
        }
        // The catalog knew the region, so its id is valid.
        if let (false, Ok(id)) = (kept.is_empty(), region.parse::<RegionId>()) {
            regions.push(MappedRegion::new(id, kept));
        }
    }
    if !offenders.is_empty() {
        return Err(MappingError::Catalog(named(offenders)));
    }
    if regions.is_empty() {
        let reasons: Vec<String> = skipped
            .iter()
            .map(|s| match &s.zone_id {
                Some(zone_id) => format!("{}: {zone_id}: {}", s.region, s.reason),
                None => format!("{}: {}", s.region, s.reason),
            })
            .collect();
        let why = if reasons.is_empty() {
            "the output lists no zone".to_owned()
        } else {
            format!("every zone of the output was skipped ({})", named(reasons))
        };
        return Err(MappingError::Catalog(format!(
            "the output pairs no zone the catalog holds for {provider}: {why}"
        )));
    }
    Ok((regions, skipped))
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
               "ZoneType": "availability-zone", "State": "available",
               "OptInStatus": "opt-in-not-required"})
    }

    fn refused(provider: &str, output: Value) -> String {
        match parse(provider, &output, &snapshot()) {
            Err(MappingError::Catalog(message)) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn aws_output_of_one_or_several_regions_keeps_every_zone_type_with_the_accounts_state() {
        let one = json!({"AvailabilityZones": [
            aws_zone("us-east-1", "us-east-1a", "use1-az2"),
            {"RegionName": "us-east-1", "ZoneName": "us-east-1-bos-1a", "ZoneId": "use1-bos1-az1",
             "ZoneType": "local-zone", "State": "available", "OptInStatus": "not-opted-in"}
        ]});
        let parsed = parse("aws", &one, &snapshot()).unwrap();
        assert_eq!(parsed.regions.len(), 1);
        let zones = &parsed.regions[0].zones;
        assert_eq!(zones[0].zone_name, "us-east-1a");
        assert_eq!(zones[0].state.as_deref(), Some("available"));
        assert_eq!(zones[1].zone_id, "use1-bos1-az1");
        assert_eq!(zones[1].opt_in_status.as_deref(), Some("not-opted-in"));
        assert!(parsed.skipped.is_empty());
        let two =
            json!([one, {"AvailabilityZones": [aws_zone("eu-west-1", "eu-west-1a", "euw1-az3")]}]);
        let parsed = parse("aws", &two, &snapshot()).unwrap();
        assert_eq!(parsed.regions.len(), 2);
    }

    #[test]
    fn what_the_catalog_does_not_hold_is_skipped_and_named_never_refusing_the_rest() {
        let output = json!([
            {"AvailabilityZones": [
                aws_zone("us-east-1", "us-east-1a", "use1-az2"),
                aws_zone("us-east-1", "us-east-1g", "use1-az9")]},
            {"AvailabilityZones": [aws_zone("us-gov-west-1", "us-gov-west-1a", "usgw1-az1")]}
        ]);
        let parsed = parse("aws", &output, &snapshot()).unwrap();
        assert_eq!(parsed.regions[0].zones.len(), 1);
        let skipped: Vec<(&str, Option<&str>, &str)> = parsed
            .skipped
            .iter()
            .map(|s| (s.region.as_str(), s.zone_id.as_deref(), s.reason.as_str()))
            .collect();
        assert_eq!(
            skipped,
            [
                (
                    "us-east-1",
                    Some("use1-az9"),
                    "the catalog holds no zone use1-az9 in aws/us-east-1"
                ),
                (
                    "us-gov-west-1",
                    Some("usgw1-az1"),
                    "the catalog has no region us-gov-west-1 of aws"
                )
            ]
        );
        // Nothing kept: refused, naming why each zone was skipped.
        let none = refused(
            "aws",
            json!({"AvailabilityZones": [aws_zone("us-east-1", "us-east-1g", "use1-az9")]}),
        );
        assert!(
            none.contains("every zone of the output was skipped"),
            "{none}"
        );
        assert!(none.contains("use1-az9"), "{none}");
    }

    #[test]
    fn a_contradiction_is_refused_naming_the_offender() {
        let foreign = refused(
            "aws",
            json!({"AvailabilityZones": [aws_zone("us-east-1", "us-west-2a", "use1-az1")]}),
        );
        assert!(
            foreign.contains("\"us-west-2a\" of use1-az1 is outside its region"),
            "{foreign}"
        );
        let twice = refused(
            "aws",
            json!({"AvailabilityZones": [
            aws_zone("us-east-1", "us-east-1a", "use1-az1"),
            aws_zone("us-east-1", "us-east-1b", "use1-az1")]}),
        );
        assert!(twice.contains("\"use1-az1\" appears twice"), "{twice}");
        let name_twice = refused(
            "aws",
            json!({"AvailabilityZones": [
            aws_zone("us-east-1", "us-east-1a", "use1-az1"),
            aws_zone("us-east-1", "us-east-1a", "use1-az2")]}),
        );
        assert!(name_twice.contains("given to two zone ids"), "{name_twice}");
        // eu-central-1's names are the same for every account: two ids swapped contradict
        // the sourced pairs (euc1-az2 is eu-central-1a, euc1-az3 eu-central-1b).
        let swapped = refused(
            "aws",
            json!({"AvailabilityZones": [
            aws_zone("eu-central-1", "eu-central-1b", "euc1-az2"),
            aws_zone("eu-central-1", "eu-central-1a", "euc1-az3")]}),
        );
        assert!(
            swapped.contains("names euc1-az2 \"eu-central-1b\", but its name is \"eu-central-1a\""),
            "{swapped}"
        );
    }

    /// `skipped` shows what the output said as the document promises: printable ASCII, at
    /// most 512 characters.
    #[test]
    fn skipped_texts_are_printable_ascii_and_bounded() {
        let output = json!([
            {"AvailabilityZones": [aws_zone("us-east-1", "us-east-1a", "use1-az2")]},
            {"AvailabilityZones": [aws_zone("régión\n", &"x".repeat(600), "id")]}
        ]);
        let parsed = parse("aws", &output, &snapshot()).unwrap();
        let skipped = &parsed.skipped[0];
        assert_eq!(skipped.region, "r?gi?n?");
        assert_eq!(skipped.zone_name.as_deref().map(str::len), Some(512));
        assert!(skipped
            .reason
            .chars()
            .all(|c| c == ' ' || c.is_ascii_graphic()));
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
    fn azure_locations_give_logical_zones_and_what_the_catalog_lacks_is_skipped() {
        let sub = "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/locations";
        let output = json!([
            {"name": "eastus", "id": format!("{sub}/eastus"), "availabilityZoneMappings": [
                {"logicalZone": "1", "physicalZone": "eastus-az3"},
                {"logicalZone": "2", "physicalZone": "eastus-az1"}]},
            {"name": "global", "id": format!("{sub}/global"), "availabilityZoneMappings": null},
            {"name": "eastus2euap", "id": format!("{sub}/eastus2euap"),
             "availabilityZoneMappings": [{"logicalZone": "1", "physicalZone": "eastus2euap-az1"}]},
            {"name": "westus", "id": format!("{sub}/westus"),
             "availabilityZoneMappings": [{"logicalZone": "1", "physicalZone": "westus-az1"}]},
            {"name": "losangeles", "id": format!("{sub}/losangeles"), "type": "EdgeZone"}
        ]);
        let parsed = parse("azure", &output, &snapshot()).unwrap();
        assert_eq!(parsed.regions.len(), 1);
        assert_eq!(
            parsed.regions[0].zones[0],
            MappedZone::new("eastus-az3".into(), "1".into())
                .with_state(Some("available".into()), None)
        );
        let skipped: Vec<(&str, Option<&str>)> = parsed
            .skipped
            .iter()
            .map(|s| (s.region.as_str(), s.zone_id.as_deref()))
            .collect();
        assert_eq!(
            skipped,
            [
                ("eastus2euap", Some("eastus2euap-az1")),
                ("westus", Some("westus-az1")),
                ("losangeles", None)
            ]
        );
        assert_eq!(
            parsed.skipped[1].reason,
            "azure/westus has no availability zones in the catalog"
        );
        assert_eq!(
            parsed.subscription.as_deref(),
            Some("0b1f6471-1bf0-4dda-aec3-111122223333")
        );
    }
}

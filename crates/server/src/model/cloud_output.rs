//! The clouds' CLI output read as zone pairs, before any check against the catalog: what a
//! zone mapping is taken from (`crate::mappings::parse`) and what `catalog import --from`
//! refreshes regions with (`catalog_refresh.rs`).
//!
//! - AWS: `aws ec2 describe-availability-zones --all-availability-zones --output json`, one
//!   region (`{"AvailabilityZones": [...]}`) or an array of such outputs. Entries whose
//!   `ZoneType` is not `availability-zone` (local and wavelength zones) are skipped.
//! - Azure: `az account list-locations -o json`; locations without
//!   `availabilityZoneMappings` are skipped.

use serde_json::Value;

/// Output that is not of the cloud's shape; the message says where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

/// One region's pairs as the output gives them: (zone id, zone name) in the output's order.
/// For Azure the id is the physical zone and the name the logical zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionPairs {
    /// The region (AWS `RegionName`, Azure location `name`).
    pub region: String,
    /// (zone id, name) pairs.
    pub pairs: Vec<(String, String)>,
}

/// What an output gives: its regions, and how many of its AWS zones were not availability
/// zones (skipped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The regions, in the output's order (a region given twice appears once, its pairs
    /// joined).
    pub regions: Vec<RegionPairs>,
    /// AWS entries of another `ZoneType`, skipped.
    pub other_zone_types: usize,
}

fn shape(message: impl Into<String>) -> ShapeError {
    ShapeError(message.into())
}

/// A string field of an output entry.
fn text<'v>(entry: &'v Value, field: &str, at: &str) -> Result<&'v str, ShapeError> {
    entry[field]
        .as_str()
        .ok_or_else(|| shape(format!("output{at}: {field} is missing or not a string")))
}

/// Reads `aws ec2 describe-availability-zones` output: one region's, or an array of them.
pub fn aws(output: &Value) -> Result<Output, ShapeError> {
    const EXPECTED: &str = "output: expected what aws ec2 describe-availability-zones prints \
                            (an object with AvailabilityZones), or an array of them";
    let outputs: Vec<(String, &Value)> = match output {
        Value::Array(outputs) => outputs
            .iter()
            .enumerate()
            .map(|(i, o)| (format!("[{i}]"), o))
            .collect(),
        single => vec![(String::new(), single)],
    };
    let mut regions: Vec<RegionPairs> = Vec::new();
    let mut other_zone_types = 0;
    for (at, one) in outputs {
        let zones = one["AvailabilityZones"]
            .as_array()
            .ok_or_else(|| shape(EXPECTED))?;
        for (i, zone) in zones.iter().enumerate() {
            let at = format!("{at}.AvailabilityZones[{i}]");
            if !zone.is_object() {
                return Err(shape(format!("output{at}: expected an object")));
            }
            match zone.get("ZoneType").map(Value::as_str) {
                None | Some(Some("availability-zone")) => {}
                Some(Some(_)) => {
                    other_zone_types += 1;
                    continue;
                }
                Some(None) => return Err(shape(format!("output{at}: ZoneType is not a string"))),
            }
            let region = text(zone, "RegionName", &at)?;
            let pair = (
                text(zone, "ZoneId", &at)?.to_owned(),
                text(zone, "ZoneName", &at)?.to_owned(),
            );
            match regions.iter_mut().find(|r| r.region == region) {
                Some(r) => r.pairs.push(pair),
                None => regions.push(RegionPairs {
                    region: region.to_owned(),
                    pairs: vec![pair],
                }),
            }
        }
    }
    Ok(Output {
        regions,
        other_zone_types,
    })
}

/// Reads `az account list-locations -o json` output.
pub fn azure(output: &Value) -> Result<Output, ShapeError> {
    let locations = output.as_array().ok_or_else(|| {
        shape(
            "output: expected what az account list-locations -o json prints (an array of \
             locations)",
        )
    })?;
    let mut regions = Vec::new();
    for (i, location) in locations.iter().enumerate() {
        let at = format!("[{i}]");
        if !location.is_object() {
            return Err(shape(format!("output{at}: expected a location object")));
        }
        let name = text(location, "name", &at)?;
        let mappings = match &location["availabilityZoneMappings"] {
            Value::Null => continue,
            Value::Array(mappings) if mappings.is_empty() => continue,
            Value::Array(mappings) => mappings,
            _ => {
                return Err(shape(format!(
                    "output{at}: availabilityZoneMappings is not an array"
                )))
            }
        };
        let mut pairs = Vec::new();
        for (j, mapping) in mappings.iter().enumerate() {
            let at = format!("{at}.availabilityZoneMappings[{j}]");
            pairs.push((
                text(mapping, "physicalZone", &at)?.to_owned(),
                text(mapping, "logicalZone", &at)?.to_owned(),
            ));
        }
        regions.push(RegionPairs {
            region: name.to_owned(),
            pairs,
        });
    }
    Ok(Output {
        regions,
        other_zone_types: 0,
    })
}

/// Whether `name` can be a name of a zone of `region` for `provider`: an AWS zone name is the
/// region's id and one or more letters (`us-east-1a`), an Azure logical zone a number.
pub fn name_fits(provider: &str, region: &str, name: &str) -> bool {
    match provider {
        "aws" => name.strip_prefix(region).is_some_and(|rest| {
            !rest.is_empty() && rest.len() <= 3 && rest.bytes().all(|b| b.is_ascii_lowercase())
        }),
        _ => !name.is_empty() && name.len() <= 3 && name.bytes().all(|b| b.is_ascii_digit()),
    }
}

//! The clouds' CLI output read as zones, before any check against the catalog: what a zone
//! mapping is taken from (`crate::mappings::parse`) and what `catalog import --from`
//! refreshes regions with (`catalog_refresh.rs`).
//!
//! - AWS: `aws ec2 describe-availability-zones --all-availability-zones --output json`, one
//!   region (`{"AvailabilityZones": [...]}`) or an array of such outputs. Every `ZoneType` is
//!   read (availability, Local and Wavelength Zones), with the account's `State`,
//!   `OptInStatus` and the zone's `ParentZoneId`.
//! - Azure: `az account list-locations -o json`; a location's `availabilityZoneMappings` pair
//!   physical with logical zones; Extended Zones (`type` `EdgeZone`) are read as locations
//!   without zones; locations with neither are left out (they hold nothing to keep).

use serde_json::Value;

/// Output that is not of the cloud's shape; the message says where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeError(pub String);

/// One zone as the output gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Zone {
    /// The identity: AWS `ZoneId`, Azure `physicalZone`.
    pub zone_id: String,
    /// The account's name: AWS `ZoneName`, Azure `logicalZone`.
    pub zone_name: String,
    /// AWS `ZoneType` (`availability-zone` when absent, as older outputs print no type);
    /// `availability-zone` for Azure.
    pub zone_type: String,
    /// AWS `State`; `available` for a zone Azure maps.
    pub state: Option<String>,
    /// AWS `OptInStatus`.
    pub opt_in_status: Option<String>,
    /// AWS `ParentZoneId` (Local and Wavelength Zones).
    pub parent_zone_id: Option<String>,
}

/// One region's zones as the output gives them, in its order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionZones {
    /// The region (AWS `RegionName`, Azure location `name`).
    pub region: String,
    /// Its zones.
    pub zones: Vec<Zone>,
    /// Azure: the location is an Extended Zone (`EdgeZone`), not a region.
    pub edge_zone: bool,
}

/// What an output gives: its regions, and the subscription its location ids name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// The regions, in the output's order (a region given twice appears once, its zones
    /// joined).
    pub regions: Vec<RegionZones>,
    /// Azure: the subscription every location `id` (`/subscriptions/S/locations/L`) names,
    /// when they all name the same one.
    pub subscription: Option<String>,
}

impl Output {
    /// Adds `other`'s regions (several files of one import); a subscription both name stays.
    pub fn extend(&mut self, other: Output) {
        self.subscription = match (self.regions.is_empty(), self.subscription.take()) {
            (true, _) => other.subscription,
            (false, mine) if mine == other.subscription => mine,
            _ => None,
        };
        self.regions.extend(other.regions);
    }
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

/// An optional string field of an output entry.
fn optional(entry: &Value, field: &str, at: &str) -> Result<Option<String>, ShapeError> {
    match &entry[field] {
        Value::Null => Ok(None),
        Value::String(value) => Ok(Some(value.clone())),
        _ => Err(shape(format!("output{at}: {field} is not a string"))),
    }
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
    let mut regions: Vec<RegionZones> = Vec::new();
    for (at, one) in outputs {
        let zones = one["AvailabilityZones"]
            .as_array()
            .ok_or_else(|| shape(EXPECTED))?;
        for (i, zone) in zones.iter().enumerate() {
            let at = format!("{at}.AvailabilityZones[{i}]");
            if !zone.is_object() {
                return Err(shape(format!("output{at}: expected an object")));
            }
            let region = text(zone, "RegionName", &at)?;
            let read = Zone {
                zone_id: text(zone, "ZoneId", &at)?.to_owned(),
                zone_name: text(zone, "ZoneName", &at)?.to_owned(),
                zone_type: optional(zone, "ZoneType", &at)?
                    .unwrap_or_else(|| "availability-zone".to_owned()),
                state: optional(zone, "State", &at)?,
                opt_in_status: optional(zone, "OptInStatus", &at)?,
                parent_zone_id: optional(zone, "ParentZoneId", &at)?,
            };
            match regions.iter_mut().find(|r| r.region == region) {
                Some(r) => r.zones.push(read),
                None => regions.push(RegionZones {
                    region: region.to_owned(),
                    zones: vec![read],
                    edge_zone: false,
                }),
            }
        }
    }
    Ok(Output {
        regions,
        subscription: None,
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
    let mut subscriptions = Vec::new();
    for (i, location) in locations.iter().enumerate() {
        let at = format!("[{i}]");
        if !location.is_object() {
            return Err(shape(format!("output{at}: expected a location object")));
        }
        let name = text(location, "name", &at)?;
        if let Some(id) = optional(location, "id", &at)? {
            subscriptions.push(subscription_of(&id));
        }
        let edge_zone = location["type"].as_str() == Some("EdgeZone");
        let mappings: &[Value] = match &location["availabilityZoneMappings"] {
            Value::Null => &[],
            Value::Array(mappings) => mappings,
            _ => {
                return Err(shape(format!(
                    "output{at}: availabilityZoneMappings is not an array"
                )))
            }
        };
        if mappings.is_empty() && !edge_zone {
            continue;
        }
        let mut zones = Vec::new();
        for (j, mapping) in mappings.iter().enumerate() {
            let at = format!("{at}.availabilityZoneMappings[{j}]");
            zones.push(Zone {
                zone_id: text(mapping, "physicalZone", &at)?.to_owned(),
                zone_name: text(mapping, "logicalZone", &at)?.to_owned(),
                zone_type: "availability-zone".to_owned(),
                // A zone the subscription is given a logical zone for is one it can use.
                state: Some("available".to_owned()),
                opt_in_status: None,
                parent_zone_id: None,
            });
        }
        regions.push(RegionZones {
            region: name.to_owned(),
            zones,
            edge_zone,
        });
    }
    let subscription = match subscriptions.split_first() {
        Some((first, rest)) if first.is_some() && rest.iter().all(|s| s == first) => first.clone(),
        _ => None,
    };
    Ok(Output {
        regions,
        subscription,
    })
}

/// The subscription of an Azure location id, `/subscriptions/S/locations/L`.
fn subscription_of(id: &str) -> Option<String> {
    let rest = id.strip_prefix("/subscriptions/")?;
    let (subscription, _) = rest.split_once('/')?;
    (!subscription.is_empty()).then(|| subscription.to_owned())
}

/// Whether `name` can be a name of a zone of `region` for `provider`: an AWS availability
/// zone's name is the region's id and one to three letters (`us-east-1a`), a Local or
/// Wavelength Zone's the region's id, `-` and more (`us-east-1-bos-1a`); an Azure logical zone
/// is a number.
pub fn name_fits(provider: &str, region: &str, name: &str) -> bool {
    match provider {
        "aws" => name.strip_prefix(region).is_some_and(|rest| {
            let letters =
                !rest.is_empty() && rest.len() <= 3 && rest.bytes().all(|b| b.is_ascii_lowercase());
            let edge = rest.len() > 1
                && rest.starts_with('-')
                && rest
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            letters || edge
        }),
        _ => !name.is_empty() && name.len() <= 3 && name.bytes().all(|b| b.is_ascii_digit()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn aws_reads_every_zone_type_with_the_accounts_state() {
        let output = aws(&json!({"AvailabilityZones": [
            {"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az2",
             "ZoneType": "availability-zone", "State": "available",
             "OptInStatus": "opt-in-not-required"},
            {"RegionName": "us-east-1", "ZoneName": "us-east-1-bos-1a", "ZoneId": "use1-bos1-az1",
             "ZoneType": "local-zone", "State": "available", "OptInStatus": "not-opted-in",
             "ParentZoneId": "use1-az4"}
        ]}))
        .unwrap();
        let zones = &output.regions[0].zones;
        assert_eq!(zones.len(), 2);
        assert_eq!(zones[1].zone_type, "local-zone");
        assert_eq!(zones[1].opt_in_status.as_deref(), Some("not-opted-in"));
        assert_eq!(zones[1].parent_zone_id.as_deref(), Some("use1-az4"));
    }

    #[test]
    fn azure_names_the_subscription_its_location_ids_agree_on() {
        let location = |sub: &str, name: &str| {
            json!({"name": name, "id": format!("/subscriptions/{sub}/locations/{name}"),
                   "availabilityZoneMappings": [{"logicalZone": "1", "physicalZone": format!("{name}-az1")}]})
        };
        let sub = "0b1f6471-1bf0-4dda-aec3-111122223333";
        let one = azure(&json!([
            location(sub, "eastus"),
            location(sub, "westeurope")
        ]))
        .unwrap();
        assert_eq!(one.subscription.as_deref(), Some(sub));
        let two = azure(&json!([
            location(sub, "eastus"),
            location("other", "westeurope")
        ]));
        assert_eq!(two.unwrap().subscription, None);
    }

    #[test]
    fn names_of_edge_zones_fit_their_region() {
        assert!(name_fits("aws", "us-east-1", "us-east-1a"));
        assert!(name_fits("aws", "us-east-1", "us-east-1-bos-1a"));
        assert!(name_fits("aws", "us-east-1", "us-east-1-wl1-bos-wlz-1"));
        assert!(!name_fits("aws", "us-east-1", "us-west-2a"));
        assert!(!name_fits("aws", "us-east-1", "us-east-1-"));
        assert!(!name_fits("aws", "us-east-1", "us-east-1abcd"));
    }
}

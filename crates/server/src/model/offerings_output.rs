//! The clouds' instance-type offerings, as their CLIs print them, read without holding the
//! output as a tree: only the fields used are read, their strings borrowed from the body
//! where they need no unescaping, so a 32 MiB output costs little beside the body itself.
//!
//! - AWS: `aws ec2 describe-instance-type-offerings --output json`, one region's
//!   (`{"InstanceTypeOfferings": [...]}`) or an array of them.
//! - Azure: `az vm list-skus --output json`, one location's (an array of SKUs) or an array of
//!   them.
//! - GCP: `gcloud compute machine-types list --format=json`, an array of machine types.

use std::borrow::Cow;

use serde::Deserialize;

use super::cloud_output::ShapeError;

/// One AWS offering.
#[derive(Debug, Deserialize)]
pub struct AwsOffering<'a> {
    /// `InstanceType`.
    #[serde(rename = "InstanceType", borrow)]
    pub instance_type: Cow<'a, str>,
    /// `LocationType`: `availability-zone-id`, `availability-zone`, `region` or `outpost`.
    #[serde(rename = "LocationType", borrow)]
    pub location_type: Cow<'a, str>,
    /// `Location`: a zone id, a zone name, a region or an Outpost, by `LocationType`.
    #[serde(rename = "Location", borrow)]
    pub location: Cow<'a, str>,
}

/// One region's AWS output.
#[derive(Debug, Deserialize)]
pub struct AwsOfferings<'a> {
    /// `InstanceTypeOfferings`.
    #[serde(rename = "InstanceTypeOfferings", borrow)]
    pub offerings: Vec<AwsOffering<'a>>,
    /// `NextToken`: only in a truncated output.
    #[serde(rename = "NextToken", default, borrow)]
    pub next_token: Option<Cow<'a, str>>,
}

/// One location of an Azure SKU.
#[derive(Debug, Deserialize)]
pub struct AzureLocationInfo<'a> {
    /// The location (`eastus`).
    #[serde(borrow)]
    pub location: Cow<'a, str>,
    /// The subscription's logical zones offering the SKU there.
    #[serde(default, borrow)]
    pub zones: Option<Vec<Cow<'a, str>>>,
}

/// Where an Azure restriction applies.
#[derive(Debug, Default, Deserialize)]
pub struct AzureRestrictionInfo<'a> {
    /// The locations.
    #[serde(default, borrow)]
    pub locations: Option<Vec<Cow<'a, str>>>,
    /// The logical zones.
    #[serde(default, borrow)]
    pub zones: Option<Vec<Cow<'a, str>>>,
}

/// One Azure restriction.
#[derive(Debug, Deserialize)]
pub struct AzureRestriction<'a> {
    /// `Zone` or `Location`.
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    /// `NotAvailableForSubscription` or `QuotaId`.
    #[serde(rename = "reasonCode", default, borrow)]
    pub reason_code: Option<Cow<'a, str>>,
    /// Where it applies.
    #[serde(rename = "restrictionInfo", default, borrow)]
    pub info: Option<AzureRestrictionInfo<'a>>,
    /// The locations it applies to (the same as `restrictionInfo.locations`).
    #[serde(default, borrow)]
    pub values: Option<Vec<Cow<'a, str>>>,
}

impl AzureRestriction<'_> {
    /// The locations it names.
    pub fn locations(&self) -> impl Iterator<Item = &str> {
        let info = self.info.as_ref().and_then(|i| i.locations.as_deref());
        info.into_iter()
            .flatten()
            .chain(self.values.iter().flatten())
            .map(|l| l.as_ref())
    }

    /// The logical zones it names.
    pub fn zones(&self) -> impl Iterator<Item = &str> {
        self.info
            .as_ref()
            .and_then(|i| i.zones.as_deref())
            .into_iter()
            .flatten()
            .map(|z| z.as_ref())
    }
}

/// One Azure SKU.
#[derive(Debug, Deserialize)]
pub struct AzureSku<'a> {
    /// The SKU (`Standard_D2s_v3`).
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// `virtualMachines` for the SKUs kept.
    #[serde(rename = "resourceType", default, borrow)]
    pub resource_type: Option<Cow<'a, str>>,
    /// Where it is offered.
    #[serde(rename = "locationInfo", default, borrow)]
    pub location_info: Option<Vec<AzureLocationInfo<'a>>>,
    /// What the subscription may not use.
    #[serde(default, borrow)]
    pub restrictions: Option<Vec<AzureRestriction<'a>>>,
}

/// One GCP machine type.
#[derive(Debug, Deserialize)]
pub struct GcpMachineType<'a> {
    /// The machine type (`n2-standard-4`).
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// The zone (`us-central1-a`; a URL's last segment is read the same).
    #[serde(borrow)]
    pub zone: Cow<'a, str>,
}

/// What an offerings output gives, by cloud.
#[derive(Debug)]
pub enum OfferingsOutput<'a> {
    /// AWS outputs, one per region.
    Aws(Vec<AwsOfferings<'a>>),
    /// Azure SKUs, of every location's output.
    Azure(Vec<AzureSku<'a>>),
    /// GCP machine types.
    Gcp(Vec<GcpMachineType<'a>>),
}

/// The first byte of `json` that is not white space, and what follows it.
fn opening(json: &str) -> (Option<u8>, &str) {
    let rest = json.trim_start();
    (rest.bytes().next(), rest.get(1..).unwrap_or_default())
}

fn shape(expected: &str, err: serde_json::Error) -> ShapeError {
    ShapeError(format!("offerings: expected {expected}: {err}"))
}

/// Reads `json` (the body's `offerings`, unparsed) as `provider`'s output.
pub fn read<'a>(provider: &str, json: &'a str) -> Result<OfferingsOutput<'a>, ShapeError> {
    const AWS: &str = "what aws ec2 describe-instance-type-offerings --output json prints (an \
                       object with InstanceTypeOfferings), or an array of them";
    const AZURE: &str = "what az vm list-skus --output json prints (an array of SKUs), or an \
                         array of them";
    const GCP: &str = "what gcloud compute machine-types list --format=json prints (an array of \
                       machine types)";
    let (first, rest) = opening(json);
    match (provider, first) {
        ("aws", Some(b'{')) => serde_json::from_str(json)
            .map(|one| OfferingsOutput::Aws(vec![one]))
            .map_err(|e| shape(AWS, e)),
        ("aws", Some(b'[')) => serde_json::from_str(json)
            .map(OfferingsOutput::Aws)
            .map_err(|e| shape(AWS, e)),
        ("azure", Some(b'[')) if opening(rest).0 == Some(b'[') => {
            serde_json::from_str::<Vec<Vec<AzureSku>>>(json)
                .map(|outputs| OfferingsOutput::Azure(outputs.into_iter().flatten().collect()))
                .map_err(|e| shape(AZURE, e))
        }
        ("azure", Some(b'[')) => serde_json::from_str(json)
            .map(OfferingsOutput::Azure)
            .map_err(|e| shape(AZURE, e)),
        ("gcp", Some(b'[')) => serde_json::from_str(json)
            .map(OfferingsOutput::Gcp)
            .map_err(|e| shape(GCP, e)),
        ("aws", _) => Err(ShapeError(format!("offerings: expected {AWS}"))),
        ("azure", _) => Err(ShapeError(format!("offerings: expected {AZURE}"))),
        ("gcp", _) => Err(ShapeError(format!("offerings: expected {GCP}"))),
        (other, _) => Err(ShapeError(format!(
            "offerings of provider {other:?} are not read; aws, azure and gcp are"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_clouds_output_is_read_with_its_strings_borrowed() {
        let aws = r#"{"InstanceTypeOfferings": [
            {"InstanceType": "p5.48xlarge", "LocationType": "availability-zone-id", "Location": "use1-az1"}]}"#;
        let OfferingsOutput::Aws(outputs) = read("aws", aws).unwrap() else {
            panic!()
        };
        assert!(matches!(
            outputs[0].offerings[0].instance_type,
            Cow::Borrowed("p5.48xlarge")
        ));
        let azure = r#"[[{"name": "Standard_D2s_v3", "locationInfo": [{"location": "eastus", "zones": ["1"]}],
            "restrictions": [], "capabilities": [{"name": "vCPUs", "value": "2"}]}]]"#;
        let OfferingsOutput::Azure(skus) = read("azure", azure).unwrap() else {
            panic!()
        };
        assert_eq!(skus[0].name, "Standard_D2s_v3");
        let gcp = r#"[{"name": "n2-standard-4", "zone": "us-central1-a", "guestCpus": 4}]"#;
        assert!(matches!(read("gcp", gcp), Ok(OfferingsOutput::Gcp(_))));
        for (provider, json) in [
            ("aws", "[]x"),
            ("aws", "\"text\""),
            ("azure", "{}"),
            ("gcp", "[{}]"),
        ] {
            assert!(read(provider, json).is_err(), "{provider} {json}");
        }
    }
}

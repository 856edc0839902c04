//! Cloud CLI output of made-up accounts, as a zone mapping is built from: the client's and the
//! `appzone` command's tests send them.

/// The AWS fixture: `aws ec2 describe-availability-zones` output of one (made-up) account.
pub const DESCRIBE_US_EAST_1: &str = include_str!("../fixtures/describe-us-east-1.json");

/// The Azure fixture: `az account list-locations -o json` of one (made-up) subscription.
pub const LIST_LOCATIONS: &str = include_str!("../fixtures/list-locations-sample.json");

/// Instance-type offerings as the clouds' CLIs print them (real recorded values; where each
/// comes from and what was constructed is in `fixtures/offerings/README.md`).
pub mod offerings {
    /// `aws ec2 describe-instance-type-offerings --region us-east-1 --location-type
    /// availability-zone-id --output json`: 227 offerings of 52 types over the 6 zone ids
    /// (moto's recorded AWS data).
    pub const AWS_BY_ZONE_ID: &str =
        include_str!("../fixtures/offerings/aws-offerings-az-id-us-east-1.json");
    /// The same offerings by the recording account's zone names (`--location-type
    /// availability-zone`).
    pub const AWS_BY_ZONE_NAME: &str =
        include_str!("../fixtures/offerings/aws-offerings-az-name-us-east-1.json");
    /// The same by region (`--location-type region`): places no zone.
    pub const AWS_BY_REGION: &str =
        include_str!("../fixtures/offerings/aws-offerings-region-us-east-1.json");
    /// The recording account's zone names of us-east-1, by zone id, as worked out by matching
    /// the two outputs above (a=use1-az2, b=use1-az4, ...).
    pub const AWS_RECORDING_ACCOUNT_NAMES: [(&str, &str); 6] = [
        ("us-east-1a", "use1-az2"),
        ("us-east-1b", "use1-az4"),
        ("us-east-1c", "use1-az6"),
        ("us-east-1d", "use1-az1"),
        ("us-east-1e", "use1-az3"),
        ("us-east-1f", "use1-az5"),
    ];
    /// `az vm list-skus --location eastus --resource-type virtualMachines --output json`: 17
    /// SKUs with real zones and restrictions.
    pub const AZURE_EASTUS: &str =
        include_str!("../fixtures/offerings/azure-list-skus-eastus.json");
    /// The same for westcentralus, a region without zones.
    pub const AZURE_WESTCENTRALUS: &str =
        include_str!("../fixtures/offerings/azure-list-skus-westcentralus.json");
    /// `gcloud compute machine-types list --format=json` of us-central1-a and -b (21 records).
    pub const GCP_US_CENTRAL1: &str =
        include_str!("../fixtures/offerings/gcp-machine-types-us-central1.json");
}

//! What runs where: the instance types an organization's accounts may launch, per zone
//! identity.
//!
//! The clouds answer "which zones offer this machine" per account and in the account's own
//! names (AWS `describe-instance-type-offerings`), per subscription in logical zones (Azure
//! `list-skus`), or per project (GCP `machine-types list`). A zone mapping may carry those
//! outputs beside its zones (`offerings` in its `PUT` body); the server places each offering on
//! a zone identity through the same mapping, so `?offers=` on the zone-identity listing and the
//! `instance-types` listing answer for every account side by side.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::RegionId;

mod cloud_output;

pub use cloud_output::{AwsOfferingsOutput, AzureSku, GcpMachineType, OfferingsOutput};
pub(crate) use cloud_output::{MAX_MACHINE_TYPES, MAX_SKUS};

/// Most instance types one `offers` filter names.
pub const MAX_OFFERS_PER_QUERY: usize = 20;

/// Longest instance type name the server keeps (the clouds' are under 64 characters).
pub const MAX_INSTANCE_TYPE_CHARS: usize = 128;

/// Whether `name` may be an instance type in a query: 1 to [`MAX_INSTANCE_TYPE_CHARS`] ASCII
/// letters, digits, `.`, `_` and `-` (AWS `p5.48xlarge`, Azure `Standard_NC24ads_A100_v4`, GCP
/// `a2-highgpu-1g`).
///
/// ```
/// use appzone_contract::is_valid_instance_type;
/// assert!(is_valid_instance_type("p5.48xlarge"));
/// assert!(is_valid_instance_type("Standard_D2s_v3"));
/// assert!(!is_valid_instance_type("p5 48xlarge"));
/// ```
pub fn is_valid_instance_type(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_INSTANCE_TYPE_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// Regular expression of an instance type, as published in the OpenAPI document.
pub(crate) const INSTANCE_TYPE_PATTERN: &str = "^[A-Za-z0-9._-]{1,128}$";

/// How many offerings a zone mapping holds for one region.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "How many instance-type offerings a zone mapping holds for one region: \
counts, not the offerings themselves (the `instance-types` listing gives those).",
    example = json!({"region": "us-east-1", "instance_types": 52, "offerings": 227})
)]
pub struct RegionOfferings {
    /// The region.
    #[schema(value_type = RegionId)]
    pub region: RegionId,
    /// How many instance types are offered in at least one zone of the region.
    #[schema(minimum = 0, maximum = 1_000_000)]
    pub instance_types: u64,
    /// How many (instance type, zone) pairs are offered.
    #[schema(minimum = 0, maximum = 100_000_000)]
    pub offerings: u64,
}

impl RegionOfferings {
    /// The counts of one region.
    pub fn new(region: RegionId, instance_types: u64, offerings: u64) -> Self {
        Self {
            region,
            instance_types,
            offerings,
        }
    }
}

/// One instance type and the zones that offer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "An instance type and the zone identities where the mapping's account may \
launch it.",
    example = json!({"instance_type": "p5.48xlarge", "zone_ids": ["use1-az2", "use1-az4", "use1-az6"]})
)]
pub struct InstanceTypeZones {
    /// The instance type as the cloud names it (`p5.48xlarge`, `Standard_D2s_v3`, `a2-highgpu-1g`).
    #[schema(min_length = 1, max_length = 128, pattern = "^[A-Za-z0-9._-]{1,128}$")]
    pub instance_type: String,
    /// The zone identities offering it, in the catalog's order (AWS zone ids, Azure physical zones, GCP zone names).
    #[schema(max_items = 100, value_type = Vec<crate::zones::ZoneId>)]
    pub zone_ids: Vec<String>,
}

impl InstanceTypeZones {
    /// A type and its zones.
    pub fn new(instance_type: String, zone_ids: Vec<String>) -> Self {
        Self {
            instance_type,
            zone_ids,
        }
    }
}

envelope! {
    /// The answer of `GET .../instance-types?mapping=A`: the instance types a zone mapping's
    /// account is offered in a region, sorted by type.
    #[non_exhaustive]
    #[schema(
        description = "The instance types a zone mapping's account may launch in one region, \
sorted by type, each with the zones offering it, with the request id.",
        example = json!({
            "data": [
                {"instance_type": "c5.xlarge", "zone_ids": ["use1-az1", "use1-az2", "use1-az4", "use1-az5", "use1-az6"]},
                {"instance_type": "p5.48xlarge", "zone_ids": ["use1-az1", "use1-az2", "use1-az3", "use1-az4", "use1-az5", "use1-az6"]}
            ],
            "id": "01JD8Y3ZQ4K5M6N7P8R9S0T1V2",
            "message": "2 instance types offered in aws/us-east-1 by zone mapping prod",
            "status": "success"
        })
    )]
    pub struct InstanceTypeList {
        /// The instance types, sorted by name (byte order).
        #[schema(max_items = 1_000_000)]
        pub data: Vec<InstanceTypeZones>,
        message(512): "Human-readable summary such as `52 instance types offered in aws/us-east-1 by zone mapping prod`. Do not parse it.",
    }
}

impl InstanceTypeList {
    /// A listing body.
    pub fn new(data: Vec<InstanceTypeZones>, id: String, message: String) -> Self {
        Self {
            data,
            id,
            message,
            status: crate::STATUS_SUCCESS.to_owned(),
        }
    }
}

//! Zone mappings: an organization's own zone names, taken from its cloud's CLI output.
//!
//! An AWS account created before November 2025 has its own letters for the zones of the 8
//! oldest regions, and an Azure subscription its own logical zones. The clouds print the
//! pairing (`aws ec2 describe-availability-zones`, `az account list-locations`); an admin
//! stores that output, unchanged, as a mapping, and the zone-identity listing shows the
//! organization's names with `?mapping=`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ProviderId, RegionId, RegionOfferings};

mod cloud_output;

pub(crate) use cloud_output::{array_of, output_text, MAX_OUTPUTS};
pub use cloud_output::{AwsDescribeOutput, AzureLocation, CloudOutput};

/// Largest zone-mapping request body the server accepts, in bytes, once decoded (413 beyond):
/// room for a region's full offerings (an Azure `list-skus` output is 2 to 4 MB).
pub const MAX_ZONE_MAPPING_BYTES: usize = 32 * 1024 * 1024;

/// Largest `output` (the zones) of a zone-mapping body, in bytes: a whole `list-locations` or
/// every region's `describe-availability-zones` is well under it.
pub const MAX_ZONE_MAPPING_OUTPUT_BYTES: usize = 1024 * 1024;

/// Longest label of a zone mapping, in characters.
pub const MAX_ZONE_MAPPING_LABEL_CHARS: usize = 200;

/// Whether `name` may be a display name of any kind: a zone mapping's label, and on the
/// server an organization's or profile's name and a catalog's provider and region names. 1 to
/// [`MAX_ZONE_MAPPING_LABEL_CHARS`] characters, not only white space, and no control character
/// (names are printed in tables and logs). The server refuses any other with 400
/// `invalid_body`; the OpenAPI document states the same rule as a label's `minLength`,
/// `maxLength` and `pattern` (a test of this crate compares them).
///
/// ```
/// use appzone_contract::is_valid_display_name;
/// assert!(is_valid_display_name("production account"));
/// assert!(!is_valid_display_name("   "));
/// assert!(!is_valid_display_name("two\nlines"));
/// ```
pub fn is_valid_display_name(name: &str) -> bool {
    !name.trim().is_empty()
        && name.chars().count() <= MAX_ZONE_MAPPING_LABEL_CHARS
        && !name.chars().any(char::is_control)
}

/// Most zone mappings one organization may keep.
pub const MAX_ZONE_MAPPINGS_PER_ORGANIZATION: usize = 100;

/// Regular expression of zone-mapping ids, as published in the OpenAPI document.
pub(crate) const ZONE_MAPPING_ID_PATTERN: &str = "^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$";

/// The id an organization gives one of its zone mappings, such as `prod`.
///
/// Rule: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`, case-sensitive. Ids are per organization: two
/// organizations may each have a `prod`.
///
/// ```
/// use appzone_contract::ZoneMappingId;
/// assert!("prod-2026".parse::<ZoneMappingId>().is_ok());
/// assert!("../prod".parse::<ZoneMappingId>().is_err());
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ZoneMappingId(String);

/// Why a string is not a valid [`ZoneMappingId`]; the text is safe to show to callers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "a zone mapping id is 1 to 64 ASCII letters, digits, '.', '_' or '-', starting with a \
     letter or digit"
)]
pub struct ZoneMappingIdError;

impl ZoneMappingId {
    /// Checks `value` against the rule.
    pub fn validate(value: &str) -> Result<(), ZoneMappingIdError> {
        let bytes = value.as_bytes();
        let ok = !bytes.is_empty()
            && bytes.len() <= 64
            && bytes[0].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(())
        } else {
            Err(ZoneMappingIdError)
        }
    }

    /// The id as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ZoneMappingId {
    type Err = ZoneMappingIdError;
    fn from_str(s: &str) -> Result<Self, ZoneMappingIdError> {
        Self::validate(s).map(|()| Self(s.to_owned()))
    }
}

impl TryFrom<String> for ZoneMappingId {
    type Error = ZoneMappingIdError;
    fn try_from(value: String) -> Result<Self, ZoneMappingIdError> {
        Self::validate(&value).map(|()| Self(value))
    }
}

impl From<ZoneMappingId> for String {
    fn from(id: ZoneMappingId) -> String {
        id.0
    }
}

impl AsRef<str> for ZoneMappingId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ZoneMappingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ZoneMappingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ZoneMappingId({:?})", self.0)
    }
}

/// The zone-mapping id the document's examples name; `serve --demo` keeps a mapping of the
/// demo organization with this id. Beside [`ZoneMappingId`], whose schema shows it, so the
/// openapi module imports it and nothing here imports the openapi module.
pub const EXAMPLE_ZONE_MAPPING_ID: &str = "prod";

impl utoipa::PartialSchema for ZoneMappingId {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
        ObjectBuilder::new()
            .schema_type(SchemaType::Type(Type::String))
            .pattern(Some(ZONE_MAPPING_ID_PATTERN))
            .min_length(Some(1))
            .max_length(Some(64))
            .description(Some(
                "A zone mapping's id, chosen by the organization that stores it (for example \
                 `prod`). Ids are per organization. Case-sensitive.",
            ))
            .examples([serde_json::json!(EXAMPLE_ZONE_MAPPING_ID)])
            .into()
    }
}

impl ToSchema for ZoneMappingId {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("ZoneMappingId")
    }
}

/// The body of `PUT /api/v1/zone-mappings/{mappingId}`.
///
/// ```
/// use appzone_contract::ZoneMappingRequest;
/// let body = ZoneMappingRequest::new(
///     "aws".parse()?,
///     Some("production account".into()),
///     serde_json::json!({"AvailabilityZones": []}),
/// );
/// assert_eq!(serde_json::to_value(&body).unwrap()["provider"], "aws");
/// # Ok::<(), appzone_contract::IdError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "A zone mapping to store: the provider, a label, and the cloud CLI's output \
exactly as it printed it, with the instance-type offerings of the same account when given.",
    example = json!({
        "provider": "aws",
        "label": "production account",
        "account": "111111111111",
        "output": {"AvailabilityZones": [
            {"RegionName": "us-east-1", "ZoneName": "us-east-1a", "ZoneId": "use1-az2", "ZoneType": "availability-zone", "State": "available"},
            {"RegionName": "us-east-1", "ZoneName": "us-east-1b", "ZoneId": "use1-az4", "ZoneType": "availability-zone", "State": "available"}
        ]},
        "offerings": {"InstanceTypeOfferings": [
            {"InstanceType": "p5.48xlarge", "LocationType": "availability-zone-id", "Location": "use1-az2"},
            {"InstanceType": "m7i.large", "LocationType": "availability-zone-id", "Location": "use1-az2"},
            {"InstanceType": "m7i.large", "LocationType": "availability-zone-id", "Location": "use1-az4"}
        ]}
    })
)]
pub struct ZoneMappingRequest {
    /// `aws` or `azure`: the clouds whose zone names depend on the account or subscription; or `gcp` for a mapping that carries `offerings` alone (GCP zone names are the same in every project).
    #[schema(value_type = ProviderId)]
    pub provider: ProviderId,
    /// A label of your own: 1 to 200 characters, not only white space, without control characters; the mapping's id when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    // The pattern: no control character (Unicode's Cc), and one character that is neither a
    // control character nor white space (what Rust's `trim` removes), in the regular expression
    // syntax that JavaScript, Python and Rust read alike.
    #[schema(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\x00-\x1f\x7f-\x9f]*[^\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000][^\x00-\x1f\x7f-\x9f]*$"
    )]
    pub label: Option<String>,
    /// The cloud CLI's JSON, unchanged, at most 1 MiB. For `aws`: the output of `aws ec2 describe-availability-zones --all-availability-zones --output json` for one region (an object with `AvailabilityZones`), or an array of such outputs for several regions. For `azure`: the output of `az account list-locations -o json` (an array of locations with `availabilityZoneMappings`). Required for `aws` and `azure`; absent for `gcp`.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    #[schema(value_type = CloudOutput)]
    pub output: serde_json::Value,
    /// The instance types the same account may launch, as the cloud CLI printed them: `aws ec2 describe-instance-type-offerings --location-type availability-zone-id --output json` (or `--location-type availability-zone`), `az vm list-skus --resource-type virtualMachines --location L --output json`, or `gcloud compute machine-types list --format=json`; one output or an array of them. Each offering is placed on a zone identity through this mapping's zones; what cannot be placed is named in `skipped`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::offerings::OfferingsOutput>)]
    pub offerings: Option<serde_json::Value>,
    /// The account the output was taken from: an AWS account id (12 digits) or an Azure subscription id (a GUID). For `azure`, when absent, the subscription the output's location `id` paths name, if they all name one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        min_length = 1,
        max_length = 64,
        pattern = "^(?:[0-9]{12}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$",
        example = "123456789012"
    )]
    pub account: Option<String>,
}

impl ZoneMappingRequest {
    /// A request body.
    pub fn new(provider: ProviderId, label: Option<String>, output: serde_json::Value) -> Self {
        Self {
            provider,
            label,
            output,
            offerings: None,
            account: None,
        }
    }

    /// The same body carrying the account's instance-type offerings (one cloud output, or an
    /// array of them).
    pub fn with_offerings(mut self, offerings: serde_json::Value) -> Self {
        self.offerings = Some(offerings);
        self
    }

    /// The same body naming the account (AWS account id, Azure subscription id) the output
    /// was taken from.
    pub fn with_account(mut self, account: impl Into<String>) -> Self {
        self.account = Some(account.into());
        self
    }
}

/// Whether `account` is an AWS account id (12 digits) or an Azure subscription id (a GUID,
/// `8-4-4-4-12` hexadecimal digits): what a zone mapping's `account` may be.
///
/// ```
/// use appzone_contract::is_valid_account;
/// assert!(is_valid_account("123456789012"));
/// assert!(is_valid_account("0b1f6471-1bf0-4dda-aec3-111122223333"));
/// assert!(!is_valid_account("prod"));
/// ```
pub fn is_valid_account(account: &str) -> bool {
    let aws = account.len() == 12 && account.bytes().all(|b| b.is_ascii_digit());
    let groups: Vec<&str> = account.split('-').collect();
    let azure = groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()));
    aws || azure
}

/// One zone of a stored mapping: an identity, the organization's name for it, and the
/// account's state of the zone as the output gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "A zone identity, the organization's own name for it, and the \
account's state of the zone as the cloud's output gave it."
)]
pub struct MappedZone {
    /// The identity: the AWS zone id (`use1-az1`, `use1-bos1-az1`) or the Azure physical zone.
    #[schema(max_length = 63, pattern = "^[a-z0-9][a-z0-9-]{0,62}$")]
    pub zone_id: String,
    /// The organization's name: the AWS zone name or the Azure logical zone.
    #[schema(max_length = 63, pattern = "^[a-z0-9][a-z0-9-]{0,62}$")]
    pub zone_name: String,
    /// The zone's state in the account: AWS `State` (such as `available`), as printed; `available` for each zone an Azure output maps; `null` where the output does not say.
    #[serde(default)]
    #[schema(required = true, max_length = 64, pattern = "^[a-z][a-z-]{0,63}$")]
    pub state: Option<String>,
    /// AWS `OptInStatus` as printed: `opt-in-not-required`, `opted-in` or `not-opted-in`; `null` for Azure and where the output does not say.
    #[serde(default)]
    #[schema(required = true, max_length = 64, pattern = "^[a-z][a-z-]{0,63}$")]
    pub opt_in_status: Option<String>,
}

impl MappedZone {
    /// A pair, without state.
    pub fn new(zone_id: String, zone_name: String) -> Self {
        Self {
            zone_id,
            zone_name,
            state: None,
            opt_in_status: None,
        }
    }

    /// The same pair with the account's `state` and `opt_in_status` of the zone.
    pub fn with_state(mut self, state: Option<String>, opt_in_status: Option<String>) -> Self {
        self.state = state;
        self.opt_in_status = opt_in_status;
        self
    }
}

/// Something of a cloud's output a zone mapping did not keep, and why: the catalog does not
/// hold it (an unknown zone id or region, a region without zones, an Azure Extended Zone or
/// canary location). Named in the answer of the `PUT` that stored the mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(
    description = "What of the output was not kept, and why: the catalog does not hold it.",
    example = json!({"region": "us-east-1", "zone_id": "use1-az9", "zone_name": "us-east-1g", "reason": "the catalog holds no zone use1-az9 in aws/us-east-1"})
)]
pub struct SkippedZone {
    /// The region or location as the output names it. An offering's output names no region: for one, the catalog's region its zone name or id belongs to (`us-east-1` for `us-east-1g` or `use1-az9`), else the zone as the output gives it.
    #[schema(min_length = 1, max_length = 512, pattern = "^[ -~]*$")]
    pub region: String,
    /// The zone id as the output gives it; `null` when a whole location was skipped.
    #[schema(required = true, max_length = 512, pattern = "^[ -~]*$")]
    pub zone_id: Option<String>,
    /// The zone name as the output gives it; `null` when a whole location was skipped.
    #[schema(required = true, max_length = 512, pattern = "^[ -~]*$")]
    pub zone_name: Option<String>,
    /// Why it was not kept.
    #[schema(min_length = 1, max_length = 1024, pattern = "^[ -~]*$")]
    pub reason: String,
}

impl SkippedZone {
    /// A skipped zone (or location, without `zone_id` and `zone_name`).
    pub fn new(
        region: impl Into<String>,
        zone_id: Option<String>,
        zone_name: Option<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            region: region.into(),
            zone_id,
            zone_name,
            reason: reason.into(),
        }
    }
}

/// The pairs of one region of a stored mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(description = "The pairs a mapping holds for one region.")]
pub struct MappedRegion {
    /// The region.
    #[schema(value_type = RegionId)]
    pub region: RegionId,
    /// Its zones, in the order of the cloud's output.
    #[schema(max_items = 100)]
    pub zones: Vec<MappedZone>,
}

impl MappedRegion {
    /// A region's pairs.
    pub fn new(region: RegionId, zones: Vec<MappedZone>) -> Self {
        Self { region, zones }
    }
}

/// A stored zone mapping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(description = "A stored zone mapping: the pairs taken from the cloud's output.")]
pub struct ZoneMapping {
    /// The mapping's id in the organization.
    #[schema(value_type = ZoneMappingId)]
    pub id: String,
    /// The provider.
    #[schema(value_type = ProviderId)]
    pub provider: ProviderId,
    /// The label.
    #[schema(max_length = 200)]
    pub label: String,
    /// When it was stored (RFC 3339, UTC).
    #[schema(format = DateTime, max_length = 20)]
    pub imported_at: String,
    /// The AWS account id or Azure subscription id the output was taken from; `null` when the `PUT` did not say (and, for Azure, the output did not either).
    #[serde(default)]
    #[schema(
        required = true,
        max_length = 64,
        pattern = "^(?:[0-9]{12}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
    )]
    pub account: Option<String>,
    /// The pairs, per region, in the order of the cloud's output.
    #[schema(max_items = 1000)]
    pub regions: Vec<MappedRegion>,
    /// How many instance-type offerings the mapping holds, per region, sorted by region; empty when it holds none.
    #[serde(default)]
    #[schema(required = true, max_items = 1000)]
    pub offerings: Vec<RegionOfferings>,
}

impl ZoneMapping {
    /// A mapping.
    pub fn new(
        id: String,
        provider: ProviderId,
        label: String,
        imported_at: String,
        regions: Vec<MappedRegion>,
    ) -> Self {
        Self {
            id,
            provider,
            label,
            imported_at,
            account: None,
            regions,
            offerings: Vec::new(),
        }
    }

    /// The same mapping, holding `offerings` (counts per region).
    pub fn with_offerings(mut self, offerings: Vec<RegionOfferings>) -> Self {
        self.offerings = offerings;
        self
    }

    /// The same mapping, of `account`.
    pub fn with_account(mut self, account: Option<String>) -> Self {
        self.account = account;
        self
    }

    /// The organization's name for `zone_id` in `region`, when the mapping pairs it.
    pub fn name_of(&self, region: &str, zone_id: &str) -> Option<&str> {
        self.zone_of(region, zone_id).map(|z| z.zone_name.as_str())
    }

    /// The mapping's zone `zone_id` in `region` (name and the account's state), when it has
    /// it.
    pub fn zone_of(&self, region: &str, zone_id: &str) -> Option<&MappedZone> {
        self.regions
            .iter()
            .find(|r| r.region.as_str() == region)?
            .zones
            .iter()
            .find(|z| z.zone_id == zone_id)
    }
}

/// A mapping in the organization's list: what it is, without its pairs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[non_exhaustive]
#[schema(description = "A stored zone mapping, without its pairs.")]
pub struct ZoneMappingSummary {
    /// The mapping's id in the organization.
    #[schema(value_type = ZoneMappingId)]
    pub id: String,
    /// The provider.
    #[schema(value_type = ProviderId)]
    pub provider: ProviderId,
    /// The label.
    #[schema(max_length = 200)]
    pub label: String,
    /// When it was stored (RFC 3339, UTC).
    #[schema(format = DateTime, max_length = 20)]
    pub imported_at: String,
    /// The AWS account id or Azure subscription id the output was taken from, or `null`.
    #[serde(default)]
    #[schema(
        required = true,
        max_length = 64,
        pattern = "^(?:[0-9]{12}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$"
    )]
    pub account: Option<String>,
    /// The regions it pairs zones for.
    #[schema(value_type = Vec<RegionId>, max_items = 1000)]
    pub regions: Vec<RegionId>,
    /// How many instance-type offerings it holds, per region; empty when it holds none.
    #[serde(default)]
    #[schema(required = true, max_items = 1000)]
    pub offerings: Vec<RegionOfferings>,
}

impl ZoneMappingSummary {
    /// The summary of `mapping`.
    pub fn of(mapping: &ZoneMapping) -> Self {
        Self {
            id: mapping.id.clone(),
            provider: mapping.provider.clone(),
            label: mapping.label.clone(),
            imported_at: mapping.imported_at.clone(),
            account: mapping.account.clone(),
            regions: mapping.regions.iter().map(|r| r.region.clone()).collect(),
            offerings: mapping.offerings.clone(),
        }
    }
}

envelope! {
    /// The answer of `PUT`/`GET /api/v1/zone-mappings/{mappingId}`.
    #[non_exhaustive]
    #[schema(description = "One zone mapping, with the request id.")]
    pub struct ZoneMappingAnswer {
        /// The mapping.
        pub data: ZoneMapping,
        message(1024): "Human-readable summary (what was stored, what was skipped). Do not parse it.",
        /// What of the output the `PUT` did not keep, and why; empty on a `GET` (skipped zones are stored nowhere).
        #[serde(default)]
        #[schema(required = true, max_items = 10000)]
        pub skipped: Vec<SkippedZone>,
        /// The regions the mapping held before this `PUT` replaced it and holds no longer; empty otherwise.
        #[serde(default)]
        #[schema(required = true, value_type = Vec<RegionId>, max_items = 1000)]
        pub removed_regions: Vec<RegionId>,
    }
}

impl ZoneMappingAnswer {
    /// An answer.
    pub fn new(data: ZoneMapping, id: String, message: String) -> Self {
        Self {
            data,
            id,
            message,
            skipped: Vec::new(),
            removed_regions: Vec::new(),
            status: crate::STATUS_SUCCESS.to_owned(),
        }
    }
}

envelope! {
    /// The answer of `GET /api/v1/zone-mappings`.
    #[non_exhaustive]
    #[schema(description = "The organization's zone mappings, by id, with the request id.")]
    pub struct ZoneMappingList {
        /// The mappings, ordered by id.
        #[schema(max_items = 100)]
        pub data: Vec<ZoneMappingSummary>,
        message(256): "Human-readable summary such as `2 zone mappings`. Do not parse it.",
    }
}

impl ZoneMappingList {
    /// A listing body.
    pub fn new(data: Vec<ZoneMappingSummary>, id: String, message: String) -> Self {
        Self {
            data,
            id,
            message,
            status: crate::STATUS_SUCCESS.to_owned(),
        }
    }
}

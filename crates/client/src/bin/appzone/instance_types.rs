//! `appzone instance-types`: what a zone mapping's account may launch where (API 1.3), as a
//! table of instance types and the zone identities offering each.

use appzone_client::{Client, InstanceTypeList, ProviderId, RegionId, ZoneMappingId};

use super::output::{message_line, print_output, table};
use super::{Call, Failure, Output};

/// List the instance types your account may launch in a region, with the zones offering each.
///
/// Reads the offerings stored with zone mapping ID (`appzone mappings put ID ... --offerings
/// FILE`, from `aws ec2 describe-instance-type-offerings`, `az vm list-skus` or `gcloud compute
/// machine-types list`), placed on zone identities through the mapping's own names, so the
/// zone ids compare across accounts. Prints a table, INSTANCE_TYPE and ZONE_IDS (the zone
/// identities offering it, comma-separated, in catalog order), sorted by type, then the
/// server's summary; with `--output json`, the API's body on one line. --zone-id keeps the
/// types that zone offers (each still with all its zones).
///
/// A mapping without offerings for the region exits 6 (`offerings_not_stored`, naming the
/// command that prints them); a mapping your organization does not have exits 5. To ask the
/// other way round (which zones offer a type, for several accounts at once), use `appzone zones
/// PROVIDER REGION --identities --mapping ID --offers TYPE`.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  aws ec2 describe-instance-type-offerings --location-type availability-zone-id \\
      --region us-east-1 --output json > prod-offers.json
  appzone mappings put prod --provider aws --file prod.json --offerings prod-offers.json
  appzone instance-types aws us-east-1 --mapping prod
  appzone instance-types aws us-east-1 --mapping prod --zone-id use1-az1
  appzone --output json instance-types azure eastus --mapping sub-a
  appzone instance-types gcp us-central1 --mapping my-project")]
pub struct Args {
    /// Provider id, such as `aws`, `gcp` or `azure`.
    provider: String,
    /// Region id, such as `us-east-1`.
    region: String,
    /// Your organization's zone mapping whose offerings to list, such as `prod` (`appzone
    /// mappings list` lists them).
    #[arg(long, value_name = "ID")]
    mapping: String,
    /// Only the instance types offered in this zone, by its id, such as `use1-az1` (`appzone
    /// zones PROVIDER REGION --identities` lists them).
    #[arg(long, value_name = "ZONE_ID")]
    zone_id: Option<String>,
}

impl Args {
    /// The listing; the ids checked first.
    pub fn call(self) -> Result<Call, Failure> {
        Ok(Call::InstanceTypes(
            self.provider.parse()?,
            self.region.parse()?,
            self.mapping.parse::<ZoneMappingId>()?,
            self.zone_id,
        ))
    }
}

/// `instance-types`: the table, or with `--output json` the API's body.
pub async fn print(
    client: &Client,
    provider: ProviderId,
    region: RegionId,
    mapping: &ZoneMappingId,
    zone_id: Option<&str>,
    output: Output,
) -> Result<(), Failure> {
    let list = client
        .instance_types(provider, region, mapping, zone_id)
        .await?;
    print_output(
        output,
        || instance_types_table(&list),
        || serde_json::to_string(&list),
    )
}

/// INSTANCE_TYPE, ZONE_IDS (comma-separated), then the message.
fn instance_types_table(list: &InstanceTypeList) -> String {
    let mut text = table(
        &["INSTANCE_TYPE", "ZONE_IDS"],
        list.data
            .iter()
            .map(|offered| vec![offered.instance_type.clone(), offered.zone_ids.join(",")]),
    );
    text.push_str(&message_line(&list.message));
    text
}

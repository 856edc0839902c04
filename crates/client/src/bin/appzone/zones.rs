//! `appzone zones`: its options, and with `--identities` the zone-identity listing (API 1.2)
//! as a table.

use appzone_client::{Client, ProviderId, RegionId, ZoneIdentityList, ZoneMappingId};

use super::output::{message_line, print_output, table};
use super::{Call, Failure, Output};

/// List the zones of a provider's region, in catalog order; with --identities, each zone's
/// identity too.
///
/// Prints one zone name per line; with `--output json`, the API's body on one line.
///
/// A zone name is not always a place: in 8 old AWS regions `us-east-1a` is another zone in
/// each account, and Azure shuffles its zones 1, 2, 3 per subscription. With --identities
/// it prints a table: ZONE_ID (the zone's identity, the same for every account, such as
/// `use1-az1`), ZONE_NAME (what you deploy with; `-` where it is not known for you: never
/// guessed), SCOPE (for whom names hold: global, uniform, account, subscription) and
/// VISIBILITY, then the server's summary. With --mapping ID, ZONE_NAME shows the names of
/// your zone mapping ID (see `appzone mappings put`).
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  appzone zones aws us-east-1
  appzone zones aws us-east-1 --identities
  appzone zones aws us-east-1 --identities --mapping prod
  appzone --output json zones azure eastus --identities")]
pub struct Args {
    /// Provider id, such as `aws`, `gcp` or `azure`.
    provider: String,
    /// Region id, such as `us-east-1`.
    region: String,
    /// Print each zone's identity, name, name scope and visibility as a table.
    #[arg(long)]
    identities: bool,
    /// With --identities: fill ZONE_NAME from your organization's zone mapping ID, such as
    /// `prod` (`appzone mappings list` lists them).
    #[arg(long, value_name = "ID", requires = "identities")]
    mapping: Option<String>,
}

impl Args {
    /// The zone listing, or with --identities the identity listing; the ids checked first.
    pub fn call(self) -> Result<Call, Failure> {
        let provider = self.provider.parse()?;
        let region = self.region.parse()?;
        if !self.identities {
            return Ok(Call::Zones(provider, region));
        }
        let mapping = self.mapping.as_deref().map(str::parse).transpose()?;
        Ok(Call::Identities(provider, region, mapping))
    }
}

/// `zones --identities`: the table, or with `--output json` the API's body.
pub async fn print_identities(
    client: &Client,
    provider: ProviderId,
    region: RegionId,
    mapping: Option<ZoneMappingId>,
    output: Output,
) -> Result<(), Failure> {
    let list = client
        .zone_identities(provider, region, mapping.as_ref())
        .await?;
    print_output(
        output,
        || identities_table(&list),
        || serde_json::to_string(&list),
    )
}

/// `zones --identities`: ZONE_ID, ZONE_NAME (`-` when not known), SCOPE, VISIBILITY, then the
/// message.
fn identities_table(list: &ZoneIdentityList) -> String {
    let mut text = table(
        &["ZONE_ID", "ZONE_NAME", "SCOPE", "VISIBILITY"],
        list.data.iter().map(|zone| {
            vec![
                zone.zone_id.clone(),
                zone.zone_name.clone().unwrap_or_else(|| "-".to_owned()),
                zone.name_scope.to_string(),
                zone.visibility.to_string(),
            ]
        }),
    );
    text.push_str(&message_line(&list.message));
    text
}

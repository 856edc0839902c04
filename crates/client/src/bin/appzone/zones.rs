//! `appzone zones`: its options, and with `--identities` the zone-identity listing (API 1.2)
//! as a table, filtered by the instance types offered with `--offers` (API 1.3).

use appzone_client::{
    Client, ProviderId, RegionId, ZoneIdentityList, ZoneIdentityQuery, ZoneMappingId, ZoneType,
};
use appzone_contract::paths::ALL_ZONE_TYPES;

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
/// VISIBILITY, then the server's summary; when zones other than availability zones are shown
/// (--zone-type), also TYPE and PARENT (the zone it is anchored to, `-` where unknown). With
/// --mapping ID, ZONE_NAME shows the names of
/// your zone mapping ID (see `appzone mappings put`); with --mapping repeated, a column per
/// mapping, ZONE_NAME(ID), shows each account's names side by side. --zone-name, --zone-id
/// and --zone-type keep only the zones asked (each repeatable or comma-separated). --offers
/// keeps the zones where every mapping asked offers every instance type listed, from the
/// offerings stored with the mappings (`appzone mappings put ... --offerings FILE`): where
/// can I run p5.48xlarge in prod and in staging, in one request.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  appzone zones aws us-east-1
  appzone zones aws us-east-1 --identities
  appzone zones aws us-east-1 --identities --mapping prod
  appzone zones aws us-east-1 --identities --mapping a --mapping b --zone-name us-east-1a
  appzone zones aws us-east-1 --identities --zone-type local-zone,wavelength-zone
  appzone zones aws us-east-1 --identities --mapping prod --mapping staging --offers p5.48xlarge
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
    /// Repeat it to see several accounts' names side by side (at most 10).
    #[arg(long, value_name = "ID", requires = "identities")]
    mapping: Vec<String>,
    /// With --identities: only the zones shown with these names (exact; with --mapping, the
    /// first mapping's names), such as `us-east-1a`.
    #[arg(
        long,
        value_name = "NAME",
        requires = "identities",
        value_delimiter = ','
    )]
    zone_name: Vec<String>,
    /// With --identities: only the zones with these ids (exact), such as `use1-az1`.
    #[arg(
        long,
        value_name = "ID",
        requires = "identities",
        value_delimiter = ','
    )]
    zone_id: Vec<String>,
    /// With --identities: the zone types to show, such as `local-zone`, or `all`
    /// (default: availability zones only).
    #[arg(
        long,
        value_name = "TYPE",
        requires = "identities",
        value_delimiter = ','
    )]
    zone_type: Vec<String>,
    /// With --identities and --mapping: only the zones where every mapping asked offers each
    /// of these instance types, such as `p5.48xlarge` (at most 20).
    #[arg(
        long,
        value_name = "TYPE",
        requires = "identities",
        value_delimiter = ','
    )]
    offers: Vec<String>,
}

impl Args {
    /// What the options allow but the command cannot do, as a usage error's message: clap
    /// checks the rest (each filter needs --identities).
    pub fn usage_error(&self) -> Option<String> {
        (!self.offers.is_empty() && self.mapping.is_empty()).then(|| {
            "--offers needs --mapping: offerings are stored with your zone mappings (appzone \
             mappings put ID ... --offerings FILE); name one or more with --mapping ID"
                .to_owned()
        })
    }

    /// The zone listing, or with --identities the identity listing; the ids checked first.
    pub fn call(self) -> Result<Call, Failure> {
        let provider = self.provider.parse()?;
        let region = self.region.parse()?;
        if !self.identities {
            return Ok(Call::Zones(provider, region));
        }
        let mut query = ZoneIdentityQuery::default();
        for mapping in &self.mapping {
            query = query.mapping(mapping.parse::<ZoneMappingId>()?);
        }
        for zone_type in &self.zone_type {
            query = match zone_type.as_str() {
                ALL_ZONE_TYPES => query.all_zone_types(),
                other => query.zone_type(ZoneType::from_wire(other)),
            };
        }
        query.zone_ids = self.zone_id;
        query.zone_names = self.zone_name;
        query.offers = self.offers;
        Ok(Call::Identities(provider, region, query))
    }
}

/// `zones --identities`: the table, or with `--output json` the API's body.
pub async fn print_identities(
    client: &Client,
    provider: ProviderId,
    region: RegionId,
    query: &ZoneIdentityQuery,
    output: Output,
) -> Result<(), Failure> {
    let list = client.zone_identities_with(provider, region, query).await?;
    print_output(
        output,
        || identities_table(&list),
        || serde_json::to_string(&list),
    )
}

/// `zones --identities`: ZONE_ID, ZONE_NAME (`-` when not known) or with several mappings
/// ZONE_NAME(ID) for each, SCOPE, VISIBILITY, with edge zones TYPE and PARENT, then the
/// message.
fn identities_table(list: &ZoneIdentityList) -> String {
    let side_by_side = list.mappings.len() > 1;
    let edge = list
        .data
        .iter()
        .any(|zone| zone.zone_type != ZoneType::AvailabilityZone);
    let name_columns: Vec<String> = if side_by_side {
        list.mappings
            .iter()
            .map(|m| format!("ZONE_NAME({})", m.id))
            .collect()
    } else {
        vec!["ZONE_NAME".to_owned()]
    };
    let header: Vec<&str> = std::iter::once("ZONE_ID")
        .chain(name_columns.iter().map(String::as_str))
        .chain(["SCOPE", "VISIBILITY"])
        .chain(if edge { vec!["TYPE", "PARENT"] } else { vec![] })
        .collect();
    let shown = |name: &Option<String>| name.clone().unwrap_or_else(|| "-".to_owned());
    let mut text = table(
        &header,
        list.data.iter().map(|zone| {
            let names: Vec<String> = if side_by_side {
                // One cell per mapping, in the answer's order, even if a server sent fewer.
                (0..list.mappings.len())
                    .map(|i| shown(&zone.names.get(i).and_then(|n| n.zone_name.clone())))
                    .collect()
            } else {
                vec![shown(&zone.zone_name)]
            };
            let kind = if edge {
                vec![zone.zone_type.to_string(), shown(&zone.parent_zone_id)]
            } else {
                vec![]
            };
            std::iter::once(zone.zone_id.clone())
                .chain(names)
                .chain([zone.name_scope.to_string(), zone.visibility.to_string()])
                .chain(kind)
                .collect()
        }),
    );
    text.push_str(&message_line(&list.message));
    text
}

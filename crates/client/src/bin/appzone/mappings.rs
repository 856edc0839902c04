//! `appzone mappings`: the organization's zone mappings (API 1.2), stored from its cloud's CLI
//! output, listed, shown and deleted; FILE read and checked before anything is sent.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use appzone_client::{
    is_valid_account, Client, ErrorCode, ZoneMappingAnswer, ZoneMappingId, ZoneMappingIdError,
    ZoneMappingList, ZoneMappingRequest, MAX_ZONE_MAPPING_BYTES,
};
use clap::Subcommand;

use super::output::{message_line, print_output, table};
use super::{one_line, Failure, Output};

/// Manage your organization's zone mappings: your own zone names, from your cloud's CLI.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  appzone mappings put prod --provider aws --label \"production account\" --file us-east-1.json
  appzone mappings list
  appzone mappings show prod
  appzone zones aws us-east-1 --identities --mapping prod
  appzone mappings delete prod")]
pub struct Args {
    #[command(subcommand)]
    command: MappingsCommand,
}

#[derive(Debug, Subcommand)]
enum MappingsCommand {
    /// Store a zone mapping, or replace it, from your cloud CLI's output (needs an admin key).
    ///
    /// FILE is the JSON your cloud's CLI printed, unchanged (`-` reads stdin). For aws: the
    /// output of `aws ec2 describe-availability-zones --region REGION --all-availability-zones
    /// --output json` (one region; a JSON array of such outputs for several). For azure: that
    /// of `az account list-locations -o json`.
    ///
    /// The server keeps every zone of the output the catalog holds (availability, Local and
    /// Wavelength Zones, with your account's state and opt-in status) and skips what it does
    /// not hold yet, printing one `skipped` line each. A contradiction (a name twice, a name
    /// outside its region, a pair the catalog's sources pair otherwise where names are the
    /// same for every account) stores nothing and exits 6 with the first offenders named, as
    /// does an output of which nothing could be kept. Prints whether the mapping was created or
    /// replaced, and the regions a replaced one no longer holds; with `--output json`, the
    /// API's body with `"created": true|false` added.
    #[command(after_help = "\
Examples:
  aws ec2 describe-availability-zones --region us-east-1 --all-availability-zones \\
      --output json > us-east-1.json
  appzone mappings put prod --provider aws --account 111111111111 --file us-east-1.json
  az account list-locations -o json | appzone mappings put sub-a --provider azure --file -
  appzone zones aws us-east-1 --identities --mapping prod")]
    Put {
        /// The mapping's id of your choice, such as `prod`: 1 to 64 ASCII letters, digits, `.`,
        /// `_` or `-`, starting with a letter or digit.
        id: String,
        /// The cloud whose output FILE is.
        #[arg(long, value_parser = ["aws", "azure"])]
        provider: String,
        /// A label of your own, at most 200 characters; the id when left out.
        #[arg(long)]
        label: Option<String>,
        /// The account the output was taken from: an AWS account id (12 digits) or an Azure
        /// subscription id. For azure, when left out, the subscription the output names.
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
        /// The cloud CLI's JSON output, as it printed it; `-` for stdin.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
    /// List your organization's zone mappings, by id.
    ///
    /// Prints a table: ID, PROVIDER, ACCOUNT, REGIONS, IMPORTED_AT and LABEL, then the server's
    /// summary;
    /// with `--output json`, the API's body on one line.
    List,
    /// Show one zone mapping with its pairs.
    ///
    /// Prints the mapping's id, provider, account, label and import time, then a table of
    /// REGION, ZONE_ID, ZONE_NAME, STATE and OPT_IN_STATUS (`-` where the output did not say);
    /// with `--output json`, the API's body on one line. A mapping your
    /// organization does not have exits 5.
    Show {
        /// The mapping's id, such as `prod`.
        id: String,
    },
    /// Delete a zone mapping (needs an admin key).
    ///
    /// Not retried once the request may have reached the server (the operation has no
    /// Idempotency-Key, so a retry after a lost answer would say "not found"): after a timeout
    /// or a 502/504, check with `appzone mappings show ID` before running it again.
    Delete {
        /// The mapping's id, such as `prod`.
        id: String,
    },
}

/// A `mappings` command whose id (and FILE) passed the checks made before sending.
pub enum Call {
    Put(ZoneMappingId, ZoneMappingRequest),
    List,
    Show(ZoneMappingId),
    Delete(ZoneMappingId),
}

impl Args {
    /// Checks the id and reads FILE, before anything is sent.
    pub fn call(self) -> Result<Call, Failure> {
        Ok(match self.command {
            MappingsCommand::Put {
                id,
                provider,
                label,
                account,
                file,
            } => {
                let id: ZoneMappingId = id.parse()?;
                if let Some(account) = account.as_deref().filter(|a| !is_valid_account(a)) {
                    return Err(Failure::Refused {
                        message: format!(
                            "invalid account {account:?}: an AWS account id is 12 digits, an \
                             Azure subscription id a GUID"
                        ),
                        code: ErrorCode::INVALID_BODY.into(),
                    });
                }
                let output = read_output(&file)?;
                let mut request = ZoneMappingRequest::new(provider.parse()?, label, output);
                if let Some(account) = account {
                    request = request.with_account(account);
                }
                Call::Put(id, request)
            }
            MappingsCommand::List => Call::List,
            MappingsCommand::Show { id } => Call::Show(id.parse()?),
            MappingsCommand::Delete { id } => Call::Delete(id.parse()?),
        })
    }
}

impl Call {
    /// Sends the request and prints the answer.
    pub async fn run(self, client: &Client, output: Output) -> Result<(), Failure> {
        match self {
            Call::Put(id, request) => {
                let outcome = client.put_zone_mapping(&id, &request).await?;
                print_output(
                    output,
                    || put_text(&id, outcome.created, &outcome.answer),
                    || put_json(outcome.created, &outcome.answer),
                )
            }
            Call::List => {
                let list = client.zone_mappings().await?;
                print_output(
                    output,
                    || mappings_table(&list),
                    || serde_json::to_string(&list),
                )
            }
            Call::Show(id) => {
                let answer = client.zone_mapping(&id).await?;
                print_output(
                    output,
                    || mapping_text(&answer),
                    || serde_json::to_string(&answer),
                )
            }
            Call::Delete(id) => {
                client.delete_zone_mapping(&id).await?;
                print_output(
                    output,
                    || format!("deleted zone mapping {id}\n"),
                    || serde_json::to_string(&serde_json::json!({ "deleted": id.as_str() })),
                )
            }
        }
    }
}

impl From<ZoneMappingIdError> for Failure {
    /// The server answers a malformed mapping id with 404 `zone_mapping_not_found` (no
    /// mapping can have it); the command line exits 6 for it, as for a malformed profile id.
    fn from(error: ZoneMappingIdError) -> Self {
        Failure::Refused {
            message: format!("invalid zone mapping id: {error}"),
            code: ErrorCode::ZONE_MAPPING_NOT_FOUND.into(),
        }
    }
}

/// The most bytes of FILE `mappings put` reads: the cloud CLIs indent their JSON, which the
/// request body does not keep, so a file may be larger than the 1 MiB body it makes (the client
/// refuses a body over 1 MiB before sending); beyond this it cannot fit.
const MAX_OUTPUT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The JSON of `file` (`-`: stdin), as the cloud's CLI printed it. An unreadable file fails the
/// command (exit 1); one that is not JSON, or far too large, is invalid input (exit 6), with the
/// code the server answers such a body with.
fn read_output(file: &Path) -> Result<serde_json::Value, Failure> {
    let shown = file.display();
    let mut bytes = Vec::new();
    let read = if file.as_os_str() == "-" {
        io::stdin()
            .lock()
            .take(MAX_OUTPUT_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file)
            .and_then(|f| f.take(MAX_OUTPUT_FILE_BYTES + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| Failure::Local(format!("cannot read {shown}: {e}")))?;
    if bytes.len() as u64 > MAX_OUTPUT_FILE_BYTES {
        return Err(Failure::Refused {
            message: format!(
                "{shown} is larger than {} MiB; a zone mapping is at most {} MiB of JSON: \
                 store fewer regions per mapping",
                MAX_OUTPUT_FILE_BYTES / (1024 * 1024),
                MAX_ZONE_MAPPING_BYTES / (1024 * 1024)
            ),
            code: ErrorCode::PayloadTooLarge,
        });
    }
    serde_json::from_slice(&bytes).map_err(|e| Failure::Refused {
        message: format!("{shown} is not JSON ({e}): pass the cloud CLI's output as it printed it"),
        code: ErrorCode::INVALID_BODY.into(),
    })
}

/// `mappings list`: ID, PROVIDER, ACCOUNT, REGIONS, IMPORTED_AT, LABEL, then the message.
fn mappings_table(list: &ZoneMappingList) -> String {
    let mut text = table(
        &[
            "ID",
            "PROVIDER",
            "ACCOUNT",
            "REGIONS",
            "IMPORTED_AT",
            "LABEL",
        ],
        list.data.iter().map(|mapping| {
            let regions: Vec<&str> = mapping.regions.iter().map(|r| r.as_str()).collect();
            vec![
                mapping.id.clone(),
                mapping.provider.to_string(),
                mapping.account.clone().unwrap_or_else(|| "-".to_owned()),
                regions.join(","),
                mapping.imported_at.clone(),
                mapping.label.clone(),
            ]
        }),
    );
    text.push_str(&message_line(&list.message));
    text
}

/// `mappings show`: the mapping's fields, then its pairs as a table.
fn mapping_text(answer: &ZoneMappingAnswer) -> String {
    let mapping = &answer.data;
    let mut text = format!(
        "id:          {}\nprovider:    {}\naccount:     {}\nlabel:       {}\nimported_at: {}\n\n",
        one_line(&mapping.id),
        mapping.provider,
        one_line(mapping.account.as_deref().unwrap_or("-")),
        one_line(&mapping.label),
        one_line(&mapping.imported_at)
    );
    let or_dash = |value: &Option<String>| one_line(value.as_deref().unwrap_or("-"));
    text.push_str(&table(
        &["REGION", "ZONE_ID", "ZONE_NAME", "STATE", "OPT_IN_STATUS"],
        mapping.regions.iter().flat_map(|region| {
            region.zones.iter().map(move |zone| {
                vec![
                    region.region.to_string(),
                    zone.zone_id.clone(),
                    zone.zone_name.clone(),
                    or_dash(&zone.state),
                    or_dash(&zone.opt_in_status),
                ]
            })
        }),
    ));
    text
}

/// `mappings put`: whether the mapping was created or replaced, what it holds, the regions a
/// replaced one dropped, and one line per zone or location skipped.
fn put_text(id: &ZoneMappingId, created: bool, answer: &ZoneMappingAnswer) -> String {
    let regions = &answer.data.regions;
    let zones: usize = regions.iter().map(|r| r.zones.len()).sum();
    let mut text = format!(
        "{} zone mapping {id}: {zones} {} in {} {}\n",
        if created { "created" } else { "replaced" },
        if zones == 1 { "zone" } else { "zones" },
        regions.len(),
        if regions.len() == 1 {
            "region"
        } else {
            "regions"
        },
    );
    for region in &answer.removed_regions {
        text.push_str(&format!(
            "removed region {region} (the new output lacks it)\n"
        ));
    }
    for skipped in &answer.skipped {
        let zone = match (&skipped.zone_id, &skipped.zone_name) {
            (Some(id), Some(name)) => format!(" {} ({})", one_line(id), one_line(name)),
            (Some(id), None) => format!(" {}", one_line(id)),
            _ => String::new(),
        };
        text.push_str(&format!(
            "skipped {}{zone}: {}\n",
            one_line(&skipped.region),
            one_line(&skipped.reason)
        ));
    }
    text
}

/// `mappings put --output json`: the API's body with `"created"` added, so a script can tell a
/// new mapping from a replaced one without reading the message.
fn put_json(created: bool, answer: &ZoneMappingAnswer) -> Result<String, serde_json::Error> {
    let mut body = serde_json::to_value(answer)?;
    if let Some(object) = body.as_object_mut() {
        object.insert("created".to_owned(), serde_json::Value::Bool(created));
    }
    serde_json::to_string(&body)
}

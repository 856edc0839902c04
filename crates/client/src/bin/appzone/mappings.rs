//! `appzone mappings`: the organization's zone mappings (API 1.2), stored from its cloud's CLI
//! output with the account's instance-type offerings (API 1.3), listed, shown and deleted; the
//! files read and checked before anything is sent.

use std::io::{self, Read};
use std::path::{Path, PathBuf};

use appzone_client::{
    is_valid_account, Client, ErrorCode, RegionOfferings, ZoneMappingAnswer, ZoneMappingId,
    ZoneMappingIdError, ZoneMappingList, ZoneMappingRequest, MAX_ZONE_MAPPING_BYTES,
};
use clap::Subcommand;

use super::output::{message_line, print_output, table};
use super::{one_line, Failure, Output};

/// Manage your organization's zone mappings: your own zone names, from your cloud's CLI, and
/// what each account may launch where.
#[derive(Debug, clap::Args)]
#[command(after_help = "\
Examples:
  appzone mappings put prod --provider aws --label \"production account\" --file us-east-1.json
  appzone mappings put prod --provider aws --file us-east-1.json --offerings offers.json
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
    /// of `az account list-locations -o json`. gcp takes no FILE: its zone names are the same
    /// in every project, so a gcp mapping holds offerings alone.
    ///
    /// --offerings adds what the account may launch where, one or more files, each as the
    /// cloud's CLI printed it: for aws `aws ec2 describe-instance-type-offerings --location-type
    /// availability-zone-id --region REGION --output json` (one per region), for azure `az vm
    /// list-skus --resource-type virtualMachines --location LOCATION --output json`, for gcp
    /// `gcloud compute machine-types list --format=json`. Several files go as one body (an
    /// array of the outputs; gcp's machine types as one list). The server places each offering
    /// on a zone identity through this mapping's names; `appzone zones ... --offers TYPE` and
    /// `appzone instance-types` then read them. A body over 1 MiB is sent gzip-compressed
    /// (automatically); the API takes up to 32 MiB of JSON, and 1 MiB of it for FILE.
    ///
    /// The server keeps every zone of the output the catalog holds (availability, Local and
    /// Wavelength Zones, with your account's state and opt-in status) and skips what it does
    /// not hold yet, printing one `skipped` line each (offerings it cannot place, too). A
    /// contradiction (a name twice, a name outside its region, a pair the catalog's sources
    /// pair otherwise where names are the same for every account) stores nothing and exits 6
    /// with the first offenders named, as does an output of which nothing could be kept. Prints
    /// whether the mapping was created or replaced, the regions a replaced one no longer holds,
    /// and the offerings kept per region; with `--output json`, the API's body with
    /// `"created": true|false` added.
    #[command(after_help = "\
Examples:
  aws ec2 describe-availability-zones --region us-east-1 --all-availability-zones \\
      --output json > us-east-1.json
  appzone mappings put prod --provider aws --account 111111111111 --file us-east-1.json
  az account list-locations -o json | appzone mappings put sub-a --provider azure --file -
  appzone zones aws us-east-1 --identities --mapping prod

  # What runs where: the same account's offerings, one file per region.
  aws ec2 describe-instance-type-offerings --location-type availability-zone-id \\
      --region us-east-1 --output json > offers-us-east-1.json
  appzone mappings put prod --provider aws --file us-east-1.json \\
      --offerings offers-us-east-1.json offers-us-west-2.json
  az vm list-skus --resource-type virtualMachines --location eastus --output json > skus.json
  appzone mappings put sub-a --provider azure --file locations.json --offerings skus.json
  gcloud compute machine-types list --format=json > machine-types.json
  appzone mappings put my-project --provider gcp --offerings machine-types.json")]
    Put {
        /// The mapping's id of your choice, such as `prod`: 1 to 64 ASCII letters, digits, `.`,
        /// `_` or `-`, starting with a letter or digit.
        id: String,
        /// The cloud whose output FILE (and the offerings) is.
        #[arg(long, value_parser = [AWS, AZURE, GCP])]
        provider: String,
        /// A label of your own, at most 200 characters; the id when left out.
        #[arg(long)]
        label: Option<String>,
        /// The account the output was taken from: an AWS account id (12 digits) or an Azure
        /// subscription id. For azure, when left out, the subscription the output names.
        #[arg(long, value_name = "ACCOUNT")]
        account: Option<String>,
        /// The cloud CLI's JSON output of the zones, as it printed it; `-` for stdin. Required
        /// for aws and azure; not for gcp.
        #[arg(
            long,
            value_name = "FILE",
            required_if_eq_any = [("provider", AWS), ("provider", AZURE)]
        )]
        file: Option<PathBuf>,
        /// The account's instance-type offerings: one or more files of the cloud CLI's JSON
        /// (see above), as it printed them; `-` for stdin. Required for gcp.
        #[arg(
            long,
            value_name = "FILE",
            num_args = 1..,
            required_if_eq("provider", GCP)
        )]
        offerings: Vec<PathBuf>,
    },
    /// List your organization's zone mappings, by id.
    ///
    /// Prints a table: ID, PROVIDER, ACCOUNT, REGIONS, OFFERINGS (how many instance-type
    /// offerings it holds, all regions together; `-` for none), IMPORTED_AT and LABEL, then the
    /// server's summary; with `--output json`, the API's body on one line.
    List,
    /// Show one zone mapping with its pairs and its offerings.
    ///
    /// Prints the mapping's id, provider, account, label and import time, then a table of
    /// REGION, ZONE_ID, ZONE_NAME, STATE and OPT_IN_STATUS (`-` where the output did not say),
    /// then a line per region with offerings (`offerings us-east-1: 52 instance types, 227
    /// offerings`; `appzone instance-types` lists them); with `--output json`, the API's body
    /// on one line. A mapping your organization does not have exits 5.
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

const AWS: &str = "aws";
const AZURE: &str = "azure";
const GCP: &str = "gcp";

/// A `mappings` command whose id (and files) passed the checks made before sending.
pub enum Call {
    /// The request is boxed: it holds the outputs, and is much larger than the other variants.
    Put(ZoneMappingId, Box<ZoneMappingRequest>),
    List,
    Show(ZoneMappingId),
    Delete(ZoneMappingId),
}

impl Args {
    /// What the options allow but the command cannot do, as a usage error's message: clap
    /// checks the rest (`--file` for aws and azure, `--offerings` for gcp).
    pub fn usage_error(&self) -> Option<String> {
        let MappingsCommand::Put {
            provider,
            file,
            offerings,
            ..
        } = &self.command
        else {
            return None;
        };
        if provider == GCP && file.is_some() {
            return Some(
                "--file is not for gcp: GCP zone names are the same in every project, so a gcp \
                 mapping holds its offerings alone; pass --offerings FILE..."
                    .to_owned(),
            );
        }
        let stdin = file
            .iter()
            .chain(offerings)
            .filter(|f| f.as_os_str() == "-")
            .count();
        (stdin > 1)
            .then(|| "stdin (`-`) can be read once: give the other outputs as files".to_owned())
    }

    /// Checks the id and reads the files, before anything is sent.
    pub fn call(self) -> Result<Call, Failure> {
        Ok(match self.command {
            MappingsCommand::Put {
                id,
                provider,
                label,
                account,
                file,
                offerings,
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
                let output = match &file {
                    Some(file) => read_json(file, MAX_OUTPUT_FILE_BYTES)?,
                    None => serde_json::Value::Null,
                };
                let mut request = ZoneMappingRequest::new(provider.parse()?, label, output);
                if !offerings.is_empty() {
                    request = request.with_offerings(read_offerings(&provider, &offerings)?);
                }
                if let Some(account) = account {
                    request = request.with_account(account);
                }
                Call::Put(id, Box::new(request))
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
/// request body does not keep, so a file may be larger than the 1 MiB of zones it makes (the
/// client refuses more before sending); beyond this it cannot fit.
const MAX_OUTPUT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The most bytes of one offerings file `mappings put` reads: four times the 32 MiB body, for
/// the indentation the CLIs print (`az` indents every level of its SKUs' capabilities); the
/// client refuses a body over 32 MiB of compact JSON before sending.
const MAX_OFFERINGS_FILE_BYTES: u64 = 4 * MAX_ZONE_MAPPING_BYTES as u64;

/// The JSON of `file` (`-`: stdin), as the cloud's CLI printed it, at most `max` bytes. An
/// unreadable file fails the command (exit 1); one that is not JSON, or far too large, is
/// invalid input (exit 6), with the code the server answers such a body with.
fn read_json(file: &Path, max: u64) -> Result<serde_json::Value, Failure> {
    let shown = file.display();
    let mut bytes = Vec::new();
    let read = if file.as_os_str() == "-" {
        io::stdin().lock().take(max + 1).read_to_end(&mut bytes)
    } else {
        std::fs::File::open(file).and_then(|f| f.take(max + 1).read_to_end(&mut bytes))
    };
    read.map_err(|e| Failure::Local(format!("cannot read {shown}: {e}")))?;
    if bytes.len() as u64 > max {
        return Err(Failure::Refused {
            message: format!(
                "{shown} is larger than {} MiB; a zone mapping is at most {} MiB of JSON (1 MiB \
                 of it for the zones): store fewer regions per mapping",
                max / (1024 * 1024),
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

/// The `offerings` of a `provider` mapping from `files`, each read as [`read_json`] does and
/// checked to be of the shape the provider's CLI prints: one file as it is, several as one
/// body the server reads (an array of the AWS outputs, an array of the Azure `list-skus`
/// arrays, the GCP machine types in one array). A file of another shape is invalid input (exit
/// 6) naming it, as the server would refuse the body (400 `invalid_body`).
fn read_offerings(provider: &str, files: &[PathBuf]) -> Result<serde_json::Value, Failure> {
    use serde_json::Value;

    let mut outputs = Vec::with_capacity(files.len());
    for file in files {
        let json = read_json(file, MAX_OFFERINGS_FILE_BYTES)?;
        let fits = match provider {
            AWS => {
                json.is_object()
                    || json
                        .as_array()
                        .is_some_and(|a| a.iter().all(Value::is_object))
            }
            _ => json.is_array(),
        };
        if !fits {
            let expected = match provider {
                AWS => {
                    "aws ec2 describe-instance-type-offerings --output json prints (an object \
                        with InstanceTypeOfferings)"
                }
                AZURE => "az vm list-skus --output json prints (an array of SKUs)",
                _ => {
                    "gcloud compute machine-types list --format=json prints (an array of \
                      machine types)"
                }
            };
            return Err(Failure::Refused {
                message: format!(
                    "{} is not what {expected}: pass the cloud CLI's output as it printed it",
                    file.display()
                ),
                code: ErrorCode::INVALID_BODY.into(),
            });
        }
        outputs.push(json);
    }
    if outputs.len() == 1 {
        return Ok(outputs.swap_remove(0));
    }
    // An array of outputs for aws and azure: a file that already holds several (an array of
    // AWS outputs, an array of `list-skus` arrays) gives each of them.
    let mut combined = Vec::new();
    for output in outputs {
        match (provider, output) {
            (AWS, Value::Array(several)) => combined.extend(several),
            (AZURE, Value::Array(skus)) if skus.first().is_some_and(Value::is_array) => {
                combined.extend(skus)
            }
            (GCP, Value::Array(machine_types)) => combined.extend(machine_types),
            (_, output) => combined.push(output),
        }
    }
    Ok(Value::Array(combined))
}

/// `mappings list`: ID, PROVIDER, ACCOUNT, REGIONS, OFFERINGS, IMPORTED_AT, LABEL, then the
/// message.
fn mappings_table(list: &ZoneMappingList) -> String {
    let mut text = table(
        &[
            "ID",
            "PROVIDER",
            "ACCOUNT",
            "REGIONS",
            "OFFERINGS",
            "IMPORTED_AT",
            "LABEL",
        ],
        list.data.iter().map(|mapping| {
            let regions: Vec<&str> = mapping.regions.iter().map(|r| r.as_str()).collect();
            let offerings: u64 = mapping.offerings.iter().map(|r| r.offerings).sum();
            vec![
                mapping.id.clone(),
                mapping.provider.to_string(),
                mapping.account.clone().unwrap_or_else(|| "-".to_owned()),
                if regions.is_empty() {
                    "-".to_owned()
                } else {
                    regions.join(",")
                },
                if mapping.offerings.is_empty() {
                    "-".to_owned()
                } else {
                    offerings.to_string()
                },
                mapping.imported_at.clone(),
                mapping.label.clone(),
            ]
        }),
    );
    text.push_str(&message_line(&list.message));
    text
}

/// One line per region of `offerings`: `offerings us-east-1: 52 instance types, 227 offerings`.
fn offerings_lines(offerings: &[RegionOfferings]) -> String {
    offerings
        .iter()
        .map(|region| {
            format!(
                "offerings {}: {}, {}\n",
                region.region,
                count(region.instance_types, "instance type", "instance types"),
                count(region.offerings, "offering", "offerings")
            )
        })
        .collect()
}

/// `n` and the noun, singular for 1.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `mappings show`: the mapping's fields, then its pairs as a table (when it holds zones: a gcp
/// mapping holds offerings alone), then its offerings per region.
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
    if !mapping.regions.is_empty() {
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
    }
    text.push_str(&offerings_lines(&mapping.offerings));
    text
}

/// `mappings put`: whether the mapping was created or replaced, what it holds, the regions a
/// replaced one dropped, the offerings per region, and one line per zone, location or offering
/// skipped.
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
    text.push_str(&offerings_lines(&answer.data.offerings));
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

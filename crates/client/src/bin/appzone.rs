//! `appzone`: the appzone API from a terminal. See `appzone --help`.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use appzone_client::{
    exit_code, Client, Error, ErrorCode, ProfileId, ProviderId, RegionId, ZoneIdentityList,
    ZoneMappingAnswer, ZoneMappingId, ZoneMappingIdError, ZoneMappingList, ZoneMappingRequest,
    MAX_ZONE_MAPPING_BYTES,
};
use appzone_contract::{paths, IdError};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

#[path = "appzone/conformance.rs"]
mod conformance;
#[path = "appzone/duration.rs"]
mod duration;

use duration::parse_duration;

const EXAMPLES: &str = "\
Examples:
  export APPZONE_URL=http://127.0.0.1:8080
  export APPZONE_API_KEY=apz_...            # safer than --api-key, which other users can see
  appzone providers                         # one provider id per line
  appzone regions aws                       # one region id per line
  appzone zones aws us-east-1               # one zone per line
  appzone --output json zones aws us-east-1 # the API's JSON body
  appzone zones aws us-east-1 --identities  # zone ids (use1-az1), names where known, scope
  appzone profiles delete prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2

  # Your AWS account's own zone names: store its output once, then list with it.
  aws ec2 describe-availability-zones --region us-east-1 --all-availability-zones \\
      --output json > us-east-1.json
  appzone mappings put prod --provider aws --label \"production account\" --file us-east-1.json
  appzone zones aws us-east-1 --identities --mapping prod
  appzone mappings list";

const ON_ERROR: &str = "\
On an error, stdout stays empty and stderr says what failed: a line with the error code and the
message, a line with the request id when a request was sent, the wait a 429 or 503 asked for, and
a hint when the cause is likely. With --output json, stderr has one JSON object instead:
{\"error\", \"error_code\", \"status\", \"request_id\", \"retry_after_seconds\", \"hint\", \"exit_code\"}.";

/// The text after the options in `--help`: examples, then the exit codes, printed from
/// [`exit_code::TABLE`] so that the help cannot drift from what the command does.
fn after_help() -> String {
    let mut text = format!("{EXAMPLES}\n\nExit codes:\n");
    text.push_str(&appzone_contract::exit_code::help_rows(false));
    text.push('\n');
    text.push_str(ON_ERROR);
    text
}

/// The appzone API from a terminal: list the cloud providers, their regions and the zones of a
/// region with their identities; store your organization's zone mappings; delete application
/// profiles.
#[derive(Debug, Parser)]
#[command(name = "appzone", version, after_help = after_help())]
struct Cli {
    /// Base URL of the appzone API.
    #[arg(
        long,
        env = "APPZONE_URL",
        default_value = "http://127.0.0.1:8080",
        global = true
    )]
    url: String,

    /// API key, sent in X-API-KEY. Prefer the environment variable.
    #[arg(long, env = "APPZONE_API_KEY", hide_env_values = true, global = true)]
    api_key: Option<String>,

    /// Output format: `text` for people, `json` for scripts.
    #[arg(long, value_enum, default_value_t = Output::Text, global = true)]
    output: Output,

    /// Timeout of each attempt, such as `30s`, `1.5s`, `500ms` or `2m` (a bare number is seconds).
    #[arg(long, default_value = "30s", value_parser = parse_duration, global = true)]
    timeout: Duration,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Output {
    /// Plain lines: one id per line (provider, region or zone), a table (zone identities, zone
    /// mappings), or a confirmation.
    Text,
    /// JSON on one line: the API's body, or `{"deleted": "<id>"}`; an error is one JSON object
    /// on stderr.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the providers of the catalog, in catalog order.
    ///
    /// Prints one provider id per line, such as `aws`; with `--output json`, the API's body on
    /// one line. Each id is what `appzone regions` and `appzone zones` take.
    Providers,
    /// List the regions of a provider, in catalog order.
    ///
    /// Prints one region id per line, such as `us-east-1`; with `--output json`, the API's body
    /// on one line. Each id is a REGION of `appzone zones PROVIDER REGION`. An unknown provider
    /// exits 6 (invalid input) with the server's message, which names the closest provider id
    /// when there is one.
    Regions {
        /// Provider id, such as `aws`, `gcp` or `azure` (`appzone providers` lists them).
        provider: String,
    },
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
    #[command(after_help = "\
Examples:
  appzone zones aws us-east-1
  appzone zones aws us-east-1 --identities
  appzone zones aws us-east-1 --identities --mapping prod
  appzone --output json zones azure eastus --identities")]
    Zones {
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
    },
    /// Manage your organization's zone mappings: your own zone names, from your cloud's CLI.
    #[command(after_help = "\
Examples:
  appzone mappings put prod --provider aws --label \"production account\" --file us-east-1.json
  appzone mappings list
  appzone mappings show prod
  appzone zones aws us-east-1 --identities --mapping prod
  appzone mappings delete prod")]
    Mappings {
        #[command(subcommand)]
        command: MappingsCommand,
    },
    /// Manage application profiles.
    Profiles {
        #[command(subcommand)]
        command: ProfilesCommand,
    },
    /// Check a server against the API's promises, one named check per promise; exit 1 on any
    /// failure. With --admin-key, --member-key, --profile and --foreign-profile it also checks
    /// deletions, and deletes --profile.
    Conformance(conformance::Args),
}

#[derive(Debug, Subcommand)]
enum ProfilesCommand {
    /// Delete an application profile (needs an admin key of the profile's organization).
    ///
    /// Sends an Idempotency-Key, the same on every retry, so a deletion whose answer was lost is
    /// retried safely. Pass your own with --idempotency-key to rerun the command after a crash
    /// and learn the first run's outcome.
    Delete {
        /// Profile id, such as `prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2`.
        id: String,

        /// Idempotency-Key to send (1 to 255 visible ASCII characters, such as a UUID); a fresh
        /// one by default. Reuse it only to repeat the same deletion, within 24 hours.
        #[arg(long, value_name = "KEY")]
        idempotency_key: Option<String>,
    },
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
    /// The server checks each pair against the catalog and stores all or nothing: a zone id it
    /// does not know, or a name twice, exits 6 with the first offenders named. Prints whether
    /// the mapping was created or replaced; with `--output json`, the API's body with
    /// `"created": true|false` added.
    #[command(after_help = "\
Examples:
  aws ec2 describe-availability-zones --region us-east-1 --all-availability-zones \\
      --output json > us-east-1.json
  appzone mappings put prod --provider aws --label \"production account\" --file us-east-1.json
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
        /// The cloud CLI's JSON output, as it printed it; `-` for stdin.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
    },
    /// List your organization's zone mappings, by id.
    ///
    /// Prints a table: ID, PROVIDER, REGIONS, IMPORTED_AT and LABEL, then the server's summary;
    /// with `--output json`, the API's body on one line.
    List,
    /// Show one zone mapping with its pairs.
    ///
    /// Prints the mapping's id, provider, label and import time, then a table of REGION,
    /// ZONE_ID and ZONE_NAME; with `--output json`, the API's body on one line. A mapping your
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

fn main() -> ExitCode {
    let cli = match parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed.
            let code = if e.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // As the user wrote it, for the messages: "could not connect to <base>", "try --url ...".
    let base = cli.url.trim().trim_end_matches('/').to_owned();
    let output = cli.output;
    match run(cli) {
        Ok(()) => ExitCode::from(exit_code::OK),
        Err(failure) => {
            let report = Report::of(&failure, &base);
            let text = match output {
                Output::Text => report.text(),
                Output::Json => report.json(failure.exit_code()),
            };
            eprint!("{text}");
            ExitCode::from(failure.exit_code())
        }
    }
}

/// Parses the command line, with every usage line fixed to the one `--help` shows.
///
/// Why: in an error, clap's usage line lists the options that were used, and it counts a value
/// read from the environment as used, printing it like a required option: with the key in
/// APPZONE_API_KEY, `appzone zones aws` answered `Usage: appzone zones --api-key <API_KEY>
/// <PROVIDER> <REGION>`. The help's usage line keeps every option under `[OPTIONS]`.
fn parse() -> Result<Cli, clap::Error> {
    let mut command = Cli::command();
    // Propagates the global options and names the subcommands ("appzone zones") first, so that
    // each usage line below is the complete one.
    command.build();
    let mut command = with_help_usage(command);
    let matches = command.try_get_matches_from_mut(std::env::args_os())?;
    Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))
}

/// `command` and its subcommands, each with its help's usage line as its usage everywhere.
fn with_help_usage(mut command: clap::Command) -> clap::Command {
    let rendered = command.render_usage().to_string();
    let usage = rendered
        .strip_prefix("Usage: ")
        .unwrap_or(&rendered)
        .to_owned();
    let names: Vec<String> = command
        .get_subcommands()
        .map(|sub| sub.get_name().to_owned())
        .collect();
    for name in names {
        command = command.mut_subcommand(name, with_help_usage);
    }
    command.override_usage(usage)
}

/// Why the command failed.
enum Failure {
    /// No API key was given; the server would answer 401 `missing_api_key`.
    NoApiKey,
    /// A malformed provider, region or profile id, refused before anything was sent.
    InvalidId(IdError),
    /// Input refused before anything was sent for another reason (a malformed zone-mapping
    /// id, a FILE that is not JSON), with the code the server answers the same mistake with.
    Refused { message: String, code: ErrorCode },
    /// An error of the client: its settings (such as `--url`), or the call.
    Client(Error),
    /// The command itself failed: the runtime could not start, or stdout could not be written.
    Local(String),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Client(error)
    }
}

impl From<IdError> for Failure {
    fn from(error: IdError) -> Self {
        Failure::InvalidId(error)
    }
}

impl From<ZoneMappingIdError> for Failure {
    /// The server answers a malformed mapping id with 404 `zone_mapping_not_found` (no
    /// mapping can have it); the command line exits 6 for it, as for a malformed profile id.
    fn from(error: ZoneMappingIdError) -> Self {
        Failure::Refused {
            message: format!("invalid zone mapping id: {error}"),
            code: ErrorCode::Other(ErrorCode::ZONE_MAPPING_NOT_FOUND.to_owned()),
        }
    }
}

impl Failure {
    /// The row of [`exit_code::TABLE`]: local findings get the code of the server's answer to
    /// the same mistake.
    fn exit_code(&self) -> u8 {
        match self {
            Failure::NoApiKey => exit_code::UNAUTHORIZED,
            // As the server's 400 invalid_provider / invalid_region (see `exit_code::for_error`).
            Failure::InvalidId(_) | Failure::Refused { .. } => exit_code::INVALID_INPUT,
            Failure::Client(error) => exit_code::for_error(error),
            Failure::Local(_) => exit_code::FAILURE,
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let Some(api_key) = cli.api_key.filter(|k| !k.trim().is_empty()) else {
        return Err(Failure::NoApiKey);
    };
    // Checked here rather than left to the client, so that the message is the typed IdError's
    // ("provider id must start with ...") rather than the client's generic "invalid argument".
    let command = match cli.command {
        Command::Conformance(args) => {
            let json = cli.output == Output::Json;
            return conformance::run(args, cli.url, api_key, json, cli.timeout);
        }
        Command::Providers => Call::Providers,
        Command::Regions { provider } => Call::Regions(provider.parse()?),
        Command::Zones {
            provider,
            region,
            identities: false,
            ..
        } => Call::Zones(provider.parse()?, region.parse()?),
        Command::Zones {
            provider,
            region,
            identities: true,
            mapping,
        } => Call::Identities(
            provider.parse()?,
            region.parse()?,
            mapping.as_deref().map(str::parse).transpose()?,
        ),
        Command::Mappings { command } => match command {
            MappingsCommand::Put {
                id,
                provider,
                label,
                file,
            } => {
                let id: ZoneMappingId = id.parse()?;
                let output = read_output(&file)?;
                let request = ZoneMappingRequest::new(provider.parse()?, label, output);
                Call::PutMapping(id, request)
            }
            MappingsCommand::List => Call::ListMappings,
            MappingsCommand::Show { id } => Call::ShowMapping(id.parse()?),
            MappingsCommand::Delete { id } => Call::DeleteMapping(id.parse()?),
        },
        Command::Profiles {
            command:
                ProfilesCommand::Delete {
                    id,
                    idempotency_key,
                },
        } => Call::Delete(id.parse()?, idempotency_key),
    };
    let client = Client::builder(cli.url, api_key)
        .timeout(cli.timeout)
        .build()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Local(format!("cannot start the async runtime: {e}")))?;
    let output = cli.output;
    runtime.block_on(async move {
        match command {
            Call::Providers => {
                let providers = client.list_providers().await?;
                print_list(
                    &providers.data,
                    || serde_json::to_string(&providers),
                    output,
                )
            }
            Call::Regions(provider) => {
                let regions = client.list_regions(provider).await?;
                print_list(&regions.data, || serde_json::to_string(&regions), output)
            }
            Call::Zones(provider, region) => {
                let zones = client.list_zones(provider, region).await?;
                print_list(&zones.data, || serde_json::to_string(&zones), output)
            }
            Call::Identities(provider, region, mapping) => {
                let list = client
                    .zone_identities(provider, region, mapping.as_ref())
                    .await?;
                print_output(
                    output,
                    || identities_table(&list),
                    || serde_json::to_string(&list),
                )
            }
            Call::PutMapping(id, request) => {
                let outcome = client.put_zone_mapping(&id, &request).await?;
                print_output(
                    output,
                    || put_text(&id, outcome.created, &outcome.answer),
                    || put_json(outcome.created, &outcome.answer),
                )
            }
            Call::ListMappings => {
                let list = client.zone_mappings().await?;
                print_output(
                    output,
                    || mappings_table(&list),
                    || serde_json::to_string(&list),
                )
            }
            Call::ShowMapping(id) => {
                let answer = client.zone_mapping(&id).await?;
                print_output(
                    output,
                    || mapping_text(&answer),
                    || serde_json::to_string(&answer),
                )
            }
            Call::DeleteMapping(id) => {
                client.delete_zone_mapping(&id).await?;
                print_output(
                    output,
                    || format!("deleted zone mapping {id}\n"),
                    || serde_json::to_string(&serde_json::json!({ "deleted": id.as_str() })),
                )
            }
            Call::Delete(id, key) => {
                // A key given on the command line is checked by the client (exit 6 when it is
                // not one), before anything is sent.
                let key = key.unwrap_or_else(appzone_client::new_idempotency_key);
                client.delete_profile_with_key(&id, &key).await?;
                print_deleted(id.as_str(), output)
            }
        }
    })
}

/// A command whose ids passed the contract's rules.
enum Call {
    Providers,
    Regions(ProviderId),
    Zones(ProviderId, RegionId),
    /// The profile, and the caller's `Idempotency-Key` if any.
    Delete(ProfileId, Option<String>),
    /// `zones --identities`, with the zone mapping to apply if any.
    Identities(ProviderId, RegionId, Option<ZoneMappingId>),
    PutMapping(ZoneMappingId, ZoneMappingRequest),
    ListMappings,
    ShowMapping(ZoneMappingId),
    DeleteMapping(ZoneMappingId),
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
        code: ErrorCode::Other(ErrorCode::INVALID_BODY.to_owned()),
    })
}

/// Prints `text()` or, with `--output json`, `json()` on one line.
fn print_output(
    output: Output,
    text: impl FnOnce() -> String,
    json: impl FnOnce() -> Result<String, serde_json::Error>,
) -> Result<(), Failure> {
    let text = match output {
        Output::Text => text(),
        Output::Json => json_line(json())?,
    };
    print(&text)
}

/// Left-aligned columns separated by two spaces, header first, each cell on one line (as the
/// operator's `appzone-server` prints its tables).
fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let rows: Vec<Vec<String>> = std::iter::once(header.iter().map(|h| (*h).to_owned()).collect())
        .chain(rows.map(|row| row.iter().map(|cell| one_line(cell)).collect()))
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            rows.iter()
                .map(|row| row.get(i).map_or(0, |cell| cell.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The server's summary on a line of its own, when it sent one.
fn message_line(message: &str) -> String {
    if message.trim().is_empty() {
        String::new()
    } else {
        format!("{}\n", one_line(message))
    }
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

/// `mappings list`: ID, PROVIDER, REGIONS, IMPORTED_AT, LABEL, then the message.
fn mappings_table(list: &ZoneMappingList) -> String {
    let mut text = table(
        &["ID", "PROVIDER", "REGIONS", "IMPORTED_AT", "LABEL"],
        list.data.iter().map(|mapping| {
            let regions: Vec<&str> = mapping.regions.iter().map(|r| r.as_str()).collect();
            vec![
                mapping.id.clone(),
                mapping.provider.to_string(),
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
        "id:          {}\nprovider:    {}\nlabel:       {}\nimported_at: {}\n\n",
        one_line(&mapping.id),
        mapping.provider,
        one_line(&mapping.label),
        one_line(&mapping.imported_at)
    );
    text.push_str(&table(
        &["REGION", "ZONE_ID", "ZONE_NAME"],
        mapping.regions.iter().flat_map(|region| {
            region.zones.iter().map(|zone| {
                vec![
                    region.region.to_string(),
                    zone.zone_id.clone(),
                    zone.zone_name.clone(),
                ]
            })
        }),
    ));
    text
}

/// `mappings put`: whether the mapping was created or replaced, and what it holds.
fn put_text(id: &ZoneMappingId, created: bool, answer: &ZoneMappingAnswer) -> String {
    let regions = &answer.data.regions;
    let zones: usize = regions.iter().map(|r| r.zones.len()).sum();
    format!(
        "{} zone mapping {id}: {zones} {} in {} {}\n",
        if created { "created" } else { "replaced" },
        if zones == 1 { "zone" } else { "zones" },
        regions.len(),
        if regions.len() == 1 {
            "region"
        } else {
            "regions"
        },
    )
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

/// Prints a listing: its ids one per line, or its whole body (`json`) on one line.
fn print_list(
    ids: &[String],
    json: impl FnOnce() -> Result<String, serde_json::Error>,
    output: Output,
) -> Result<(), Failure> {
    let text = match output {
        Output::Text => ids.iter().map(|id| format!("{id}\n")).collect(),
        Output::Json => json_line(json())?,
    };
    print(&text)
}

fn print_deleted(id: &str, output: Output) -> Result<(), Failure> {
    let text = match output {
        Output::Text => format!("deleted profile {id}\n"),
        Output::Json => json_line(serde_json::to_string(&serde_json::json!({ "deleted": id })))?,
    };
    print(&text)
}

fn json_line(json: Result<String, serde_json::Error>) -> Result<String, Failure> {
    let mut line = json.map_err(|e| Failure::Local(format!("cannot write JSON: {e}")))?;
    line.push('\n');
    Ok(line)
}

/// Writes to stdout; a closed pipe (`appzone zones aws us-east-1 | head -1`) is not an error.
fn print(text: &str) -> Result<(), Failure> {
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Local(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// What stderr shows for a failure.
struct Report<'a> {
    /// The error code and the message, or what failed.
    headline: String,
    /// The contract's code and the HTTP status, when there was an answer (or the local finding
    /// stands in for one).
    code: Option<&'a ErrorCode>,
    status: Option<u16>,
    /// When a request was sent.
    request_id: Option<&'a str>,
    /// The wait a 429 or 503 asked for.
    retry_after: Option<Duration>,
    /// The likely cause, when the client can tell.
    hint: Option<String>,
    /// The code of a malformed id the command line refused itself.
    local_code: Option<ErrorCode>,
}

impl<'a> Report<'a> {
    fn of(failure: &'a Failure, base: &str) -> Self {
        let mut report = Report {
            headline: String::new(),
            code: None,
            status: None,
            request_id: None,
            retry_after: None,
            hint: None,
            local_code: None,
        };
        match failure {
            Failure::NoApiKey => {
                report.headline = "no API key: set APPZONE_API_KEY or pass --api-key".to_owned();
            }
            Failure::InvalidId(error) => {
                // The code and status the server answers the same id with, as the library's
                // local errors carry them.
                report.headline = error.to_string();
                report.local_code = Some(error.kind().error_code());
            }
            Failure::Refused { message, code } => {
                report.headline = message.clone();
                report.local_code = Some(code.clone());
            }
            Failure::Local(message) => report.headline = message.clone(),
            Failure::Client(error) => {
                report.headline = headline(error, base);
                report.code = error.error_code();
                report.status = error.status().map(|status| status.as_u16());
                report.request_id = error.request_id();
                report.retry_after = error.as_api().and_then(|api| api.retry_after);
                report.hint = hint(error, base);
            }
        }
        report
    }

    /// In the shape of `gh`'s errors:
    ///
    /// ```text
    /// error: region_not_found: aws has no region "mars-1"
    /// request id: 01JD8Y3ZQ4K5M6N7P8R9S0T1V2
    /// hint: ...
    /// ```
    ///
    /// The request id line comes when a request was sent, the retry line when the answer asked
    /// for a wait, the hint when the cause is likely.
    fn text(&self) -> String {
        let mut text = format!("error: {}\n", one_line(&self.headline));
        if let Some(id) = self.request_id {
            text.push_str(&format!("request id: {}\n", one_line(id)));
        }
        if let Some(wait) = self.retry_after {
            text.push_str(&format!("retry after: {}s\n", wait.as_secs()));
        }
        if let Some(hint) = &self.hint {
            text.push_str(&format!("hint: {}\n", one_line(hint)));
        }
        text
    }

    /// One JSON object on one line, for scripts that asked for `--output json`: every field is
    /// present, `null` when it does not apply.
    fn json(&self, exit_code: u8) -> String {
        let code = self.code.or(self.local_code.as_ref());
        let value = serde_json::json!({
            "error": self.headline,
            "error_code": code.map(ErrorCode::as_str),
            "status": self.status.or(code.map(|code| code.status().as_u16())),
            "request_id": self.request_id,
            "retry_after_seconds": self.retry_after.map(|wait| wait.as_secs()),
            "hint": self.hint,
            "exit_code": exit_code,
        });
        format!("{value}\n")
    }
}

/// The first line of the report: the error code and the message, without repeating either.
fn headline(error: &Error, base: &str) -> String {
    match error {
        Error::Api(api) => {
            let mut line = match &api.code {
                Some(code) => format!("{code}: {}", without_code(&api.message, code)),
                // Not the contract's error body: the status is all there is to name it, and
                // the start of a page says more than the rest of it.
                None => format!(
                    "{} {}: {}",
                    api.status.as_u16(),
                    api.status.canonical_reason().unwrap_or("(unknown status)"),
                    shortened(&api.message, FOREIGN_MESSAGE_CHARS)
                ),
            };
            if api.attempts > 1 {
                line.push_str(&format!(" (after {} attempts)", api.attempts));
            }
            line
        }
        Error::Connect { source, .. } => {
            format!("could not connect to {base}: {}", innermost(source))
        }
        Error::Transport { source, .. } => {
            format!("the connection to {base} broke: {}", innermost(source))
        }
        Error::Timeout { timeout, .. } => {
            format!("no answer from {base}: timed out after {timeout:?}")
        }
        Error::Decode(decode) => format!(
            "the answer (HTTP {}) could not be decoded: {}; body: {:?}",
            decode.status.as_u16(),
            decode.reason,
            decode.body_excerpt
        ),
        // InvalidArgument ("invalid base URL: ...") and whatever a later version adds: their
        // `Display` is already one short line.
        _ => error.to_string(),
    }
}

/// The most characters of an answer that is not the API's quoted on the error line.
const FOREIGN_MESSAGE_CHARS: usize = 100;

/// `text` with its runs of whitespace (an HTML page's indentation) made one space, and cut to
/// `max` characters with `…`.
fn shortened(text: &str, max: usize) -> String {
    let mut words = text.split_whitespace();
    let mut out = words.next().unwrap_or_default().to_owned();
    for word in words {
        out.push(' ');
        out.push_str(word);
    }
    match out.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", out[..cut].trim_end_matches('…')),
        None => out,
    }
}

/// `message` without a leading `"<code in words>: "`, which the server's messages may start with
/// ("region not found: aws has no region ..."), since the code is already on the line.
fn without_code<'m>(message: &'m str, code: &ErrorCode) -> &'m str {
    let words = code.as_str().replace('_', " ");
    match message.split_at_checked(words.len()) {
        Some((head, rest)) if head.eq_ignore_ascii_case(&words) => rest
            .strip_prefix(": ")
            .filter(|rest| !rest.is_empty())
            .unwrap_or(message),
        _ => message,
    }
}

/// The likely cause of `error`, when the client's knowledge points at one: the URL, the shape
/// of the answer, the kind of the TLS failure.
fn hint(error: &Error, base: &str) -> Option<String> {
    if let Error::Connect { source, .. } = error {
        let rest = base.strip_prefix("https://")?;
        return answered_in_plain_http(source).then(|| {
            format!("the server speaks plain HTTP; use http://{rest} instead of https://")
        });
    }
    if exit_code::for_error(error) != exit_code::UNEXPECTED_ANSWER {
        return None;
    }
    // The contract's paths already start with /api/v1, so a base URL ending with it asks for
    // /api/v1/api/v1/...; the server answers 404 `not_found`, another one its own 404.
    if let Some(root) = base.strip_suffix(paths::API_PREFIX) {
        return Some(format!(
            "the base URL should not include {}: try --url {root}",
            paths::API_PREFIX
        ));
    }
    Some(match error {
        Error::Api(api) if api.code.is_none() => {
            format!("{base} did not answer like an appzone server (no JSON error body)")
        }
        Error::Api(_) => format!(
            "{base} answered like an appzone server that has no such route; \
             --url should be where it listens, such as http://host:8080"
        ),
        _ => format!("{base} did not answer like an appzone server (not the API's JSON)"),
    })
}

/// Whether the TLS handshake failed because the server answered in plain HTTP.
///
/// rustls reads the first bytes of "HTTP/1.1 400 ..." as a TLS record of an unknown content
/// type and fails with `InvalidMessage::InvalidContentType`; tokio-rustls hands that on as an
/// `io::Error` of kind `InvalidData`. The client does not depend on rustls, so its error type
/// cannot be named here: the `io::Error`'s kind is checked, then the name of the rustls error in
/// its text (a certificate error has the same kind, and must not get this hint).
fn answered_in_plain_http(source: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(source);
    while let Some(error) = cause {
        cause = error.source();
        if let Some(io) = error.downcast_ref::<io::Error>() {
            if io.kind() == io::ErrorKind::InvalidData
                && io.to_string().contains("InvalidContentType")
            {
                return true;
            }
            // An `io::Error`'s `source()` skips the error it wraps, and the connector wraps
            // tokio-rustls's `InvalidData` error in one of kind `Other`: look inside.
            if let Some(inner) = io.get_ref() {
                cause = Some(inner);
            }
        }
    }
    false
}

/// The innermost cause of a transport failure (such as "Connection refused (os error 111)"),
/// which says more than reqwest's own "error sending request".
fn innermost(source: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = source;
    while let Some(cause) = innermost.source() {
        innermost = cause;
    }
    innermost.to_string()
}

/// `text` on one line: a server's message or a request id could otherwise break the report's
/// shape, or send control sequences to the terminal.
fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

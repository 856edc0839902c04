//! `appzone`: the appzone API from a terminal. See `appzone --help`.

use std::process::ExitCode;
use std::time::Duration;

use appzone_client::{
    exit_code, Client, ProfileId, ProviderId, RegionId, ZoneIdentityQuery, ZoneMappingId,
};
use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

mod conformance;
mod duration;
mod failure;
mod instance_types;
mod mappings;
mod output;
mod zones;

use duration::parse_duration;
use failure::{Failure, Report};
use output::{one_line, print, print_deleted, print_list};

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
  appzone mappings list

  # What runs where: store each account's offerings with its mapping, then ask across accounts.
  aws ec2 describe-instance-type-offerings --location-type availability-zone-id \\
      --region us-east-1 --output json > prod-offers.json
  appzone mappings put prod --provider aws --file us-east-1.json --offerings prod-offers.json
  appzone zones aws us-east-1 --identities --mapping prod --mapping staging --offers p5.48xlarge
  appzone instance-types aws us-east-1 --mapping prod --zone-id use1-az1";

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
/// region with their identities; store your organization's zone mappings, with what each
/// account may launch where; delete application profiles.
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
    /// mappings, instance types), or a confirmation.
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
    // These take their help from their `Args`' doc comments.
    Zones(zones::Args),
    Mappings(mappings::Args),
    InstanceTypes(instance_types::Args),
    /// Manage application profiles.
    Profiles {
        #[command(subcommand)]
        command: ProfilesCommand,
    },
    /// Check a server against the API's promises, one named check per promise; exit 1 on any
    /// failure. With --admin-key, --member-key, --profile and --foreign-profile it also checks
    /// deletions, and deletes --profile; with --admin-key it stores and deletes a zone mapping
    /// of its own.
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
    let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut command))?;
    match cli.command.usage_error() {
        None => Ok(cli),
        // Reported as clap reports its own, with the subcommand's usage line.
        Some((path, message)) => {
            let mut sub = command;
            for name in path {
                match sub.find_subcommand(name) {
                    Some(found) => sub = found.clone(),
                    None => break,
                }
            }
            Err(sub.error(ErrorKind::ArgumentConflict, message))
        }
    }
}

impl Command {
    /// A combination of options clap lets through but the command refuses, before anything
    /// is read or sent: the subcommand's path (for its usage line) and the message.
    fn usage_error(&self) -> Option<(&'static [&'static str], String)> {
        match self {
            Command::Zones(args) => args.usage_error().map(|m| (&["zones"][..], m)),
            Command::Mappings(args) => args.usage_error().map(|m| (&["mappings", "put"][..], m)),
            _ => None,
        }
    }
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
        Command::Zones(args) => args.call()?,
        Command::Mappings(args) => Call::Mappings(args.call()?),
        Command::InstanceTypes(args) => args.call()?,
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
            Call::Identities(provider, region, query) => {
                zones::print_identities(&client, provider, region, &query, output).await
            }
            Call::Mappings(call) => call.run(&client, output).await,
            Call::InstanceTypes(provider, region, mapping, zone_id) => {
                instance_types::print(
                    &client,
                    provider,
                    region,
                    &mapping,
                    zone_id.as_deref(),
                    output,
                )
                .await
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
    /// `zones --identities`, with the zone mappings to apply and the filters.
    Identities(ProviderId, RegionId, ZoneIdentityQuery),
    Mappings(mappings::Call),
    /// `instance-types`: the mapping, and the zone asked if any.
    InstanceTypes(ProviderId, RegionId, ZoneMappingId, Option<String>),
}

//! `appzone`: the appzone API from a terminal. See `appzone --help`.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use appzone_client::{
    exit_code, Client, Error, ErrorCode, ProfileId, ProviderId, RegionId, ZoneIdentityQuery,
};
use appzone_contract::{paths, IdError};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

mod conformance;
mod duration;
mod mappings;
mod output;
mod zones;

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
    // These two take their help from their `Args`' doc comments.
    Zones(zones::Args),
    Mappings(mappings::Args),
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
        Command::Zones(args) => args.call()?,
        Command::Mappings(args) => Call::Mappings(args.call()?),
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

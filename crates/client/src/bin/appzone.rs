//! `appzone`: the appzone API from a terminal. See `appzone --help`.

use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use appzone_client::{exit_code, Client, Error, ZoneList};
use clap::{Parser, Subcommand, ValueEnum};

const AFTER_HELP: &str = "\
Examples:
  export APPZONE_URL=http://127.0.0.1:8080
  export APPZONE_API_KEY=apz_...            # safer than --api-key, which other users can see
  appzone zones aws us-east-1               # one zone per line
  appzone --output json zones aws us-east-1 # the API's JSON body
  appzone profiles delete prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2

Exit codes:
  0  success
  1  usage or local error; nothing was sent (bad option, invalid provider or region id,
     no API key, bad URL)
  2  could not connect, connection broken, or timed out
  3  unauthorized (401): the API key is missing, unknown or revoked
  4  forbidden (403): the key may not do this; ask your organization admin
  5  not found (404): no such profile or region (also a malformed profile id)
  6  any other API error (400, 429, 5xx, ...)
  7  the answer could not be decoded

On an error, one line goes to stderr with the message, the error code and the request id;
stdout stays empty.";

/// The appzone API from a terminal: list the zones of a cloud region, delete application
/// profiles.
#[derive(Debug, Parser)]
#[command(name = "appzone", version, after_help = AFTER_HELP)]
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
    /// Plain lines: one zone per line, or a confirmation.
    Text,
    /// JSON on one line: the zone list body, or `{"deleted": "<id>"}`.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the zones of a provider's region, in catalog order.
    Zones {
        /// Provider id, such as `aws`, `gcp` or `azure`.
        provider: String,
        /// Region id, such as `us-east-1`.
        region: String,
    },
    /// Manage application profiles.
    Profiles {
        #[command(subcommand)]
        command: ProfilesCommand,
    },
}

#[derive(Debug, Subcommand)]
enum ProfilesCommand {
    /// Delete an application profile (needs an admin key of the profile's organization).
    Delete {
        /// Profile id, such as `prof_01JD8Y3ZQ4K5M6N7P8R9S0T1V2`.
        id: String,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version print to stdout and succeed; usage errors use exit code 1.
            let code = if e.use_stderr() {
                exit_code::USAGE
            } else {
                exit_code::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match run(cli) {
        Ok(()) => ExitCode::from(exit_code::OK),
        Err(Failure::Local(message)) => {
            eprintln!("appzone: error: {message}");
            ExitCode::from(exit_code::USAGE)
        }
        Err(Failure::Api(error)) => {
            eprintln!("appzone: error: {}", describe(&error));
            ExitCode::from(exit_code::for_error(&error))
        }
    }
}

enum Failure {
    /// A problem of the command line itself, before a client existed.
    Local(String),
    /// An error of the client.
    Api(Error),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Api(error)
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    let Some(api_key) = cli.api_key.filter(|k| !k.trim().is_empty()) else {
        return Err(Failure::Local(
            "no API key: set APPZONE_API_KEY or pass --api-key".to_owned(),
        ));
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
        match cli.command {
            Command::Zones { provider, region } => {
                let zones = client.list_zones(provider, region).await?;
                print_zones(&zones, output)
            }
            Command::Profiles {
                command: ProfilesCommand::Delete { id },
            } => {
                client.delete_profile(&id).await?;
                print_deleted(&id, output)
            }
        }
    })
}

fn print_zones(zones: &ZoneList, output: Output) -> Result<(), Failure> {
    let text = match output {
        Output::Text => zones.data.iter().map(|zone| format!("{zone}\n")).collect(),
        Output::Json => json_line(serde_json::to_string(zones))?,
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

/// The error's one-line `Display`, plus the innermost cause of a transport failure (such as
/// "Connection refused (os error 111)"), which `Display` leaves to `source()`.
fn describe(error: &Error) -> String {
    let mut line = error.to_string();
    if !matches!(
        error,
        Error::Connect { .. } | Error::Transport { .. } | Error::Timeout { .. }
    ) {
        return line;
    }
    let mut cause: Option<&dyn std::error::Error> = std::error::Error::source(error);
    let mut innermost = None;
    while let Some(c) = cause {
        innermost = Some(c);
        cause = c.source();
    }
    if let Some(innermost) = innermost {
        line.push_str(": ");
        line.push_str(&innermost.to_string());
    }
    line
}

/// Parses `30`, `1.5`, `30s`, `500ms` or `2m`.
fn parse_duration(raw: &str) -> Result<Duration, String> {
    let raw = raw.trim();
    let (number, scale) = if let Some(n) = raw.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = raw.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = raw.strip_suffix('m') {
        (n, 60.0)
    } else {
        (raw, 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{raw}` is not a duration such as 30s, 1.5s or 500ms"))?;
    let seconds = value * scale;
    if !seconds.is_finite() || seconds <= 0.0 || seconds > 86_400.0 {
        return Err(format!("`{raw}` must be more than 0 and at most one day"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

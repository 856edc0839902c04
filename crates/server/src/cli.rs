//! The `appzone-server` command line: `serve` and the operator commands.
//!
//! Operator commands print only their result on stdout (an id, a key, a table, JSON) so scripts
//! can capture it; errors print one `error: ...` line on stderr and exit 1, having written
//! nothing (each command is one validated, transactional change).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use appzone_contract::ProfileId;
use clap::{Args, Parser, Subcommand};

use crate::catalog::file::CatalogFile;
use crate::http::HttpConfig;
pub use crate::logging::LogFormat;
use crate::model::{format_ms, OrgId, Role};
use crate::serve::{serve, shutdown_signal, ServeOptions};
use crate::storage::{PoolSettings, Store};
use crate::ServiceConfig;

const EXAMPLES: &str = "\
Examples:
  # First run: embedded SQLite (./appzone.db), built-in catalog, demo keys and curl lines
  appzone-server serve --demo

  # Set up a tenant and an admin key
  appzone-server org create acme --name 'Acme Corp'
  appzone-server key create --org acme --role admin --name ci
  appzone-server profile create --org acme --name checkout

  # Several replicas on one PostgreSQL
  APPZONE_DATABASE_URL=postgres://appzone@db/appzone appzone-server serve --listen 0.0.0.0:8080";

/// The appzone API server and its operator commands.
#[derive(Debug, Parser)]
#[command(name = "appzone-server", version, about, after_help = EXAMPLES)]
pub struct Cli {
    /// Database URL: `sqlite://FILE` (created if missing) or `postgres://USER@HOST/DB`.
    #[arg(
        long,
        global = true,
        env = "APPZONE_DATABASE_URL",
        default_value = "sqlite://appzone.db"
    )]
    pub database_url: String,

    /// Log format on stderr.
    #[arg(long, global = true, env = "APPZONE_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP server (logs go to stderr).
    Serve(ServeArgs),
    /// Apply database migrations and exit.
    Migrate,
    /// Manage organizations.
    #[command(subcommand)]
    Org(OrgCommand),
    /// Manage API keys.
    #[command(subcommand)]
    Key(KeyCommand),
    /// Manage application profiles.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Import or export the zone catalog.
    #[command(subcommand)]
    Catalog(CatalogCommand),
}

/// Options of `serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "APPZONE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Seed an organization `demo` with keys and profiles, and print curl lines to try.
    #[arg(long)]
    pub demo: bool,
    /// Requests per second allowed per API key; 0 disables the limit.
    #[arg(long, env = "APPZONE_RATE_LIMIT_PER_KEY", default_value_t = 1000)]
    pub rate_limit_per_key: u32,
    /// Failed authentications per minute allowed per client address (429 beyond); 0 disables.
    #[arg(long, env = "APPZONE_AUTH_FAILURES_PER_MINUTE", default_value_t = 600)]
    pub auth_failures_per_minute: u32,
    /// Seconds a request may take before it is answered 503 `unavailable`.
    #[arg(long, env = "APPZONE_REQUEST_TIMEOUT_SECS", default_value_t = 30)]
    pub request_timeout_secs: u64,
    /// Most requests in flight; beyond it requests are shed at once with 503.
    #[arg(long, env = "APPZONE_MAX_IN_FLIGHT", default_value_t = 1024)]
    pub max_in_flight: usize,
    /// Largest request body in bytes (413 `payload_too_large` beyond).
    #[arg(long, env = "APPZONE_MAX_BODY_BYTES", default_value_t = 65536)]
    pub max_body_bytes: usize,
    /// Largest request head (request line and headers) in bytes, at least 8192 (431 beyond).
    #[arg(long, env = "APPZONE_MAX_HEADER_BYTES", default_value_t = 32768)]
    pub max_header_bytes: usize,
    /// Origin allowed to call the API from a browser (CORS), e.g. an API portal; repeat or
    /// separate with commas. CORS is off when none is given.
    #[arg(
        long = "cors-allow-origin",
        env = "APPZONE_CORS_ALLOW_ORIGINS",
        value_delimiter = ','
    )]
    pub cors_allow_origins: Vec<String>,
    /// Seconds an API-key lookup is cached; a revoked key stops working within this time.
    #[arg(long, env = "APPZONE_KEY_CACHE_TTL_SECS", default_value_t = 10)]
    pub key_cache_ttl_secs: u64,
    /// Seconds between checks for catalog changes made by other replicas or the CLI.
    #[arg(long, env = "APPZONE_CATALOG_REFRESH_SECS", default_value_t = 2)]
    pub catalog_refresh_secs: u64,
    /// Days a deleted profile stays restorable before it is purged.
    #[arg(long, env = "APPZONE_TOMBSTONE_RETENTION_DAYS", default_value_t = 30)]
    pub tombstone_retention_days: u64,
    /// Seconds a client may take to send its request head.
    #[arg(long, env = "APPZONE_HEADER_READ_TIMEOUT_SECS", default_value_t = 10)]
    pub header_read_timeout_secs: u64,
    /// Seconds in-flight requests get to finish after SIGTERM or Ctrl-C.
    #[arg(long, env = "APPZONE_DRAIN_TIMEOUT_SECS", default_value_t = 20)]
    pub drain_timeout_secs: u64,
    /// Most database connections.
    #[arg(long, env = "APPZONE_DB_MAX_CONNECTIONS", default_value_t = 8)]
    pub db_max_connections: u32,
    /// Milliseconds a request waits for a database connection before answering 503.
    #[arg(long, env = "APPZONE_DB_ACQUIRE_TIMEOUT_MS", default_value_t = 3000)]
    pub db_acquire_timeout_ms: u64,
}

/// `org` subcommands.
#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organization; prints its id.
    Create {
        /// Organization id: letters, digits, '.', '_', '-'.
        org_id: String,
        /// Display name (defaults to the id).
        #[arg(long)]
        name: Option<String>,
    },
}

/// `key` subcommands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key; prints the key, alone on one line. It is shown only this once.
    Create {
        /// Organization the key belongs to.
        #[arg(long)]
        org: String,
        /// What the key may do.
        #[arg(long, value_parser = ["admin", "member"])]
        role: String,
        /// A name to recognize the key by.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// List an organization's keys as a table (never the keys themselves).
    List {
        /// Organization whose keys to list.
        #[arg(long)]
        org: String,
    },
    /// Revoke a key by its key id; effective on every replica within the key cache TTL.
    Revoke {
        /// The 12-character key id (the part after `apz_`).
        key_id: String,
    },
}

/// `profile` subcommands.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Create a profile; prints its id.
    Create {
        /// Organization the profile belongs to.
        #[arg(long)]
        org: String,
        /// Profile name.
        #[arg(long)]
        name: String,
        /// Profile id (default: `prof_` + a new ULID).
        #[arg(long)]
        id: Option<String>,
    },
    /// List an organization's profiles as a table.
    List {
        /// Organization whose profiles to list.
        #[arg(long)]
        org: String,
        /// List deleted profiles (restorable tombstones) instead of live ones.
        #[arg(long)]
        deleted: bool,
    },
    /// Restore a deleted profile.
    Restore {
        /// The profile id.
        id: String,
    },
}

/// `catalog` subcommands.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Replace the whole catalog with FILE (JSON, as `catalog export` prints it).
    Import {
        /// Catalog JSON file; `-` reads stdin.
        file: PathBuf,
    },
    /// Print the catalog as JSON.
    Export,
}

/// Parses the command line, runs it, and maps failure to one `error:` line and exit code 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // The server logs its work; an operator command's stderr is for its one `error:` line.
    let default_filter = match cli.command {
        Command::Serve(_) => "info,sqlx=warn",
        _ => "error,sqlx=off",
    };
    let _flush_logs_on_exit = crate::logging::init(cli.log_format, default_filter);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => return fail(&anyhow::anyhow!("cannot start the async runtime: {err}")),
    };
    match runtime.block_on(run(cli)) {
        Ok(output) => {
            print!("{output}");
            ExitCode::SUCCESS
        }
        Err(err) => fail(&err),
    }
}

fn fail(err: &anyhow::Error) -> ExitCode {
    crate::logging::flush();
    eprintln!("error: {err:#}");
    ExitCode::FAILURE
}

/// Runs a parsed command; returns what to print on stdout.
pub async fn run(cli: Cli) -> anyhow::Result<String> {
    let pool = match &cli.command {
        Command::Serve(args) => PoolSettings {
            max_connections: args.db_max_connections,
            acquire_timeout: Duration::from_millis(args.db_acquire_timeout_ms),
        },
        _ => PoolSettings::default(),
    };
    let store = Store::connect(&cli.database_url, &pool).await?;
    crate::prepare(&store).await?;
    let output = match cli.command {
        Command::Serve(args) => {
            run_serve(store.clone(), args).await?;
            String::new()
        }
        Command::Migrate => String::new(),
        Command::Org(OrgCommand::Create { org_id, name }) => {
            let org = parse_org(&org_id)?;
            store
                .create_org(&org, name.as_deref().unwrap_or(&org_id))
                .await?;
            format!("{org}\n")
        }
        Command::Key(command) => key_command(&store, command).await?,
        Command::Profile(command) => profile_command(&store, command).await?,
        Command::Catalog(CatalogCommand::Import { file }) => {
            let text = if file.as_os_str() == "-" {
                std::io::read_to_string(std::io::stdin())?
            } else {
                std::fs::read_to_string(&file)
                    .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", file.display()))?
            };
            let catalog = CatalogFile::parse(&text)?;
            store.replace_catalog(&catalog).await?;
            String::new()
        }
        Command::Catalog(CatalogCommand::Export) => store.load_catalog().await?.1.to_json(),
    };
    store.close().await;
    Ok(output)
}

async fn key_command(store: &Store, command: KeyCommand) -> anyhow::Result<String> {
    Ok(match command {
        KeyCommand::Create { org, role, name } => {
            let role: Role = role.parse().map_err(anyhow::Error::msg)?;
            let key = store.create_key(&parse_org(&org)?, role, &name).await?;
            format!("{}\n", key.expose_secret())
        }
        KeyCommand::List { org } => {
            let rows = store.list_keys(&parse_org(&org)?).await?;
            table(
                &["KEY_ID", "ROLE", "NAME", "CREATED", "REVOKED"],
                rows.into_iter().map(|k| {
                    vec![
                        k.key_id,
                        k.role.to_string(),
                        k.name,
                        format_ms(k.created_at),
                        k.revoked_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                    ]
                }),
            )
        }
        KeyCommand::Revoke { key_id } => {
            store.revoke_key(&key_id).await?;
            String::new()
        }
    })
}

async fn profile_command(store: &Store, command: ProfileCommand) -> anyhow::Result<String> {
    Ok(match command {
        ProfileCommand::Create { org, name, id } => {
            let id = id.map(|id| id.parse::<ProfileId>()).transpose()?;
            let id = store.create_profile(&parse_org(&org)?, &name, id).await?;
            format!("{id}\n")
        }
        ProfileCommand::List { org, deleted } => {
            let rows = store.list_profiles(&parse_org(&org)?, deleted).await?;
            table(
                &["ID", "NAME", "CREATED", "DELETED"],
                rows.into_iter().map(|p| {
                    vec![
                        p.id,
                        p.name,
                        format_ms(p.created_at),
                        p.deleted_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                    ]
                }),
            )
        }
        ProfileCommand::Restore { id } => {
            store.restore_profile(&id.parse::<ProfileId>()?).await?;
            String::new()
        }
    })
}

fn parse_org(id: &str) -> anyhow::Result<OrgId> {
    id.parse().map_err(anyhow::Error::msg)
}

/// Left-aligned columns separated by two spaces, header first.
fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let rows: Vec<Vec<String>> = std::iter::once(header.iter().map(|h| (*h).to_owned()).collect())
        .chain(rows)
        .collect();
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

async fn run_serve(store: Store, args: ServeArgs) -> anyhow::Result<()> {
    let cors_origins = args
        .cors_allow_origins
        .iter()
        .map(|origin| {
            http::HeaderValue::from_str(origin)
                .map_err(|_| anyhow::anyhow!("invalid CORS origin {origin:?}"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let config = ServiceConfig {
        rate_limit_per_key: args.rate_limit_per_key,
        auth_failures_per_minute: args.auth_failures_per_minute,
        http: HttpConfig {
            request_timeout: Duration::from_secs(args.request_timeout_secs.max(1)),
            max_in_flight: args.max_in_flight.max(1),
            max_body_bytes: args.max_body_bytes,
            cors_origins,
        },
        key_cache_ttl: Duration::from_secs(args.key_cache_ttl_secs),
        catalog_refresh: Duration::from_secs(args.catalog_refresh_secs.max(1)),
        tombstone_retention: Duration::from_secs(args.tombstone_retention_days * 24 * 3600),
        ..ServiceConfig::default()
    };
    let demo = if args.demo {
        Some(crate::demo::seed(&store).await?)
    } else {
        None
    };
    let service = crate::service(store, &config).await?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {}: {e}", args.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(%addr, "appzone-server listening");
    if let Some(demo) = demo {
        eprintln!("\n{}", demo.curl_lines(&format!("http://{addr}")));
    }
    let options = ServeOptions {
        header_read_timeout: Duration::from_secs(args.header_read_timeout_secs.max(1)),
        drain_timeout: Duration::from_secs(args.drain_timeout_secs),
        max_header_bytes: args.max_header_bytes,
    };
    serve(listener, service.router.clone(), shutdown_signal(), options).await;
    Ok(())
}

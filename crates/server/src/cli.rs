//! The `appzone-server` command line: `serve` and the operator commands.
//!
//! Operator commands print only their result on stdout (an id, a key, a table, JSON) so scripts
//! can capture it. A command changes nothing unless it succeeds: arguments and input files are
//! checked before the database is opened, only `serve` and `migrate` create or migrate a
//! database, and each change is one transaction. Errors print one `error: ...` line on stderr
//! that names the argument, file or database (password hidden) at fault.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail};
use clap::{Parser, Subcommand};

pub use crate::logging::LogFormat;
use crate::storage::{
    explain_open_error, redact_url, sqlite_file, PoolSettings, Store, StoreError,
};

mod catalog;
mod healthcheck;
mod serve;
mod tenants;
pub use catalog::{CatalogCommand, CloudOutputKind};
pub use healthcheck::HealthcheckArgs;
use serve::run_serve;
pub use serve::ServeArgs;
pub use tenants::{KeyCommand, OrgCommand, ProfileCommand};

/// How long closing the database may take at exit.
const CLOSE_TIMEOUT: Duration = Duration::from_millis(50);

const EXAMPLES: &str = "\
Examples:
  # First run: embedded SQLite (./appzone.db), built-in catalog, demo keys and curl lines
  appzone-server serve --demo

  # Set up a tenant and an admin key (`migrate` or `serve` creates the database first)
  appzone-server migrate
  appzone-server org create acme --name 'Acme Corp'
  appzone-server org list
  appzone-server key create --org acme --role admin --name ci
  appzone-server profile create --org acme --name checkout

  # A consistent copy of the SQLite database, while the server runs
  appzone-server backup appzone-backup.db

  # Change the catalog (`--prune` allows removing providers, regions or zones)
  appzone-server catalog export > catalog.json
  appzone-server catalog import catalog.json
  # Refresh regions from the clouds' own output (adds, never removes)
  appzone-server catalog import --from aws-describe eu-west-2.json

  # Several replicas on one PostgreSQL
  APPZONE_DATABASE_URL=postgres://appzone@db/appzone appzone-server serve --listen 0.0.0.0:8080

  # Health check of the server on this host (a container's HEALTHCHECK)
  appzone-server healthcheck";

/// The text after the options in `--help`: examples, then the exit codes, printed from the
/// table `appzone` shares, so that the help cannot drift from what the command does.
fn after_help() -> String {
    format!(
        "{EXAMPLES}\n\nExit status (the scheme of `appzone` too):\n{}",
        appzone_contract::exit_code::help_rows(true)
    )
}

/// The appzone API server and its operator commands.
#[derive(Debug, Parser)]
#[command(name = "appzone-server", version, about, after_help = after_help())]
pub struct Cli {
    /// Database URL: `sqlite://FILE` or `postgres://USER:PASSWORD@HOST/DB` (`postgresql://`
    /// too); anything else exits 2. Only `serve` and `migrate` create a missing SQLite file.
    // The environment's value is never shown: it may hold a password.
    #[arg(
        long,
        global = true,
        env = "APPZONE_DATABASE_URL",
        hide_env_values = true,
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
    /// Run the HTTP server (logs go to stderr); creates and migrates the database if needed.
    Serve(ServeArgs),
    /// Create the database if missing, apply its migrations, and exit.
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
    /// Copy the SQLite database into FILE (mode 0600), consistent even while the server serves;
    /// refuses an existing FILE. For PostgreSQL, use pg_dump.
    Backup {
        /// The copy to create; it must not exist.
        file: PathBuf,
    },
    /// Ask the server listening on this host for /healthz (or /readyz) and exit 0 on a 200,
    /// 1 otherwise: a container health check that needs no shell or curl. Opens no database.
    Healthcheck(HealthcheckArgs),
}

/// Parses the command line, runs it, and maps failure to one `error:` line and exit code 1.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // A usage error like clap's own (exit 2), but never echoing a value that may hold a password.
    let redis_url = match &cli.command {
        Command::Serve(args) => args.redis_url.as_deref(),
        _ => None,
    };
    if let Err(message) =
        check_database_url(&cli.database_url).and_then(|()| check_redis_url(redis_url))
    {
        eprintln!("error: {message}\n\nFor more information, try '--help'.");
        return ExitCode::from(appzone_contract::exit_code::USAGE);
    }
    // The server logs its work; an operator command's stderr is for its one `error:` line.
    let default_filter = match cli.command {
        Command::Serve(_) => "info,sqlx=warn",
        _ => "error,sqlx=off",
    };
    crate::logging::init(cli.log_format, default_filter);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => return fail(&anyhow!("cannot start the async runtime: {err}")),
    };
    match runtime.block_on(run(cli)) {
        Ok(output) => {
            print!("{output}");
            ExitCode::SUCCESS
        }
        Err(err) => fail(&err),
    }
}

/// Whether `url`, when given, is a Redis URL the client accepts; the message never shows it.
fn check_redis_url(url: Option<&str>) -> Result<(), String> {
    match url.map(redis::Client::open) {
        Some(Err(err)) => Err(format!(
            "invalid value for '--redis-url' (APPZONE_REDIS_URL): expected \
             redis://[:PASSWORD@]HOST[:PORT][/DB] ({:?})",
            err.kind()
        )),
        _ => Ok(()),
    }
}

/// Whether `url` names a backend: `sqlite:` or `postgres://` / `postgresql://`. The message
/// shows the value only up to where a password could start.
fn check_database_url(url: &str) -> Result<(), String> {
    if crate::storage::Backend::of_url(url).is_some() {
        return Ok(());
    }
    let shown = match url.rsplit_once('@') {
        Some((_, host)) => format!("***@{host}"),
        None => url.to_owned(),
    };
    let mut message = format!(
        "--database-url (or APPZONE_DATABASE_URL) must start with sqlite://, postgres:// or \
         postgresql://, got `{shown}`"
    );
    if !url.contains("://") && !url.contains('@') && !url.trim().is_empty() {
        message.push_str(&format!(
            "; for a SQLite file, write sqlite://{}",
            url.trim()
        ));
    }
    Err(message)
}

fn fail(err: &anyhow::Error) -> ExitCode {
    eprintln!("error: {err:#}");
    ExitCode::FAILURE
}

/// Runs a parsed command; returns what to print on stdout.
pub async fn run(cli: Cli) -> anyhow::Result<String> {
    // Input read from outside the database is read and checked first: a command with bad
    // input must not touch (or create) a database.
    let import = match &cli.command {
        Command::Catalog(CatalogCommand::Import { files, from, .. }) => {
            Some(catalog::read_import(files, *from)?)
        }
        _ => None,
    };
    if let Command::Key(KeyCommand::Revoke { key }) = &cli.command {
        tenants::key_id_of(key)?;
    }
    if let Command::Backup { file } = &cli.command {
        check_backup_target(&cli.database_url, file)?;
    }
    if let Command::Healthcheck(args) = &cli.command {
        healthcheck::run(args).await?;
        return Ok(String::new());
    }
    let store = open_store(&cli).await?;
    let serving = matches!(cli.command, Command::Serve(_));
    let output = match cli.command {
        Command::Serve(args) => {
            run_serve(store.clone(), args).await?;
            String::new()
        }
        Command::Migrate => String::new(),
        Command::Org(command) => tenants::org_command(&store, command).await?,
        Command::Key(command) => tenants::key_command(&store, command).await?,
        Command::Profile(command) => tenants::profile_command(&store, command).await?,
        Command::Catalog(CatalogCommand::Import { prune, .. }) => {
            let input = import.ok_or_else(|| anyhow!("catalog import without input"))?;
            catalog::import(&store, input, prune).await?;
            String::new()
        }
        Command::Catalog(CatalogCommand::Export) => store.load_catalog().await?.1.to_json(),
        Command::Backup { file } => {
            store.backup_into(&file).await?;
            String::new()
        }
        Command::Healthcheck(_) => String::new(),
    };
    if serving {
        // A request the drain deadline cut short may still hold a database connection (a write
        // waiting on a lock, say); exiting does not wait for it: the database rolls back what
        // was not committed, and nothing was answered for it.
        if tokio::time::timeout(CLOSE_TIMEOUT, store.close())
            .await
            .is_err()
        {
            tracing::warn!("database connections still busy at exit; not waiting for them");
        }
    } else {
        store.close().await;
    }
    Ok(output)
}

/// Opens the database the command line names. `serve` and `migrate` create and migrate it;
/// every other command needs an existing, migrated database and changes no schema.
async fn open_store(cli: &Cli) -> anyhow::Result<Store> {
    let url = &cli.database_url;
    let shown = redact_url(url);
    let creates = matches!(cli.command, Command::Serve(_) | Command::Migrate);
    // What else keeps a SQLite file from opening (its directory, modes, a full disk) is named
    // by the store itself.
    if let Some(file) = sqlite_file(url) {
        if !creates && !file.exists() {
            bail!(
                "the database file {} does not exist (check --database-url or \
                 APPZONE_DATABASE_URL; `appzone-server migrate` creates it)",
                file.display()
            );
        }
    }
    let pool = match &cli.command {
        Command::Serve(args) => PoolSettings {
            max_connections: args.db_max_connections,
            acquire_timeout: Duration::from_millis(args.db_acquire_timeout_ms),
            // A statement ends, rolled back, before the request that started it times out.
            statement_timeout: Some(crate::http::write_deadline(Duration::from_secs(
                args.request_timeout_secs.max(1),
            ))),
        },
        _ => PoolSettings::default(),
    };
    let store = if creates {
        Store::connect(url, &pool).await
    } else {
        Store::connect_existing(url, &pool).await
    }
    .map_err(|err| match err {
        StoreError::NotMigrated => anyhow!(
            "the database {shown} is not set up, or needs migrations: run \
             `appzone-server migrate` first"
        ),
        err => anyhow!("cannot open the database {shown}: {err}"),
    })?;
    if creates {
        crate::prepare(&store)
            .await
            .map_err(|err| anyhow!("database {shown}: {}", explain_open_error(url, err)))?;
    }
    Ok(store)
}

/// Refuses, before the database is opened, a backup `backup` cannot make: of a PostgreSQL
/// database (pg_dump's job), or into a file that exists (never overwritten). The file is
/// created without overwriting later too, so a file appearing meanwhile is refused as well.
fn check_backup_target(url: &str, file: &Path) -> anyhow::Result<()> {
    if sqlite_file(url).is_none() {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            bail!(
                "backup copies SQLite databases; for PostgreSQL use pg_dump (for example: \
                 pg_dump --format=custom --file=FILE DATABASE_URL)"
            );
        }
        bail!(
            "backup copies SQLite database files, and {} names none",
            redact_url(url)
        );
    }
    if file.symlink_metadata().is_ok() {
        bail!(
            "{} exists; backup never overwrites a file: remove it or choose another name",
            file.display()
        );
    }
    Ok(())
}

//! The `appzone-server` command line: `serve` and the operator commands.
//!
//! Operator commands print only their result on stdout (an id, a key, a table, JSON) so scripts
//! can capture it. A command changes nothing unless it succeeds: arguments and input files are
//! checked before the database is opened, only `serve` and `migrate` create or migrate a
//! database, and each change is one transaction. Errors print one `error: ...` line on stderr
//! that names the argument, file or database (password hidden) at fault.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use appzone_contract::{ApiKey, KeyId, ProfileId};
use clap::{Args, Parser, Subcommand};
use tabwriter::TabWriter;

use crate::catalog::file::{CatalogFile, Reference};
pub use crate::logging::LogFormat;
use crate::model::{cloud_output, format_ms, now_ms, OrgId, Role};
use crate::storage::{
    explain_open_error, redact_url, sqlite_file, PoolSettings, Store, StoreError,
};

mod serve;
pub use serve::ServeArgs;
use serve::{parse_listen, run_serve, DEFAULT_LISTEN};

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

/// Options of `healthcheck`.
#[derive(Debug, Args)]
pub struct HealthcheckArgs {
    /// The address the server listens on, as given to `serve`; a wildcard host (`0.0.0.0`,
    /// `[::]`) is probed on loopback.
    #[arg(long, env = "APPZONE_LISTEN", default_value = DEFAULT_LISTEN, value_parser = parse_listen)]
    pub listen: String,
    /// Probe /readyz (the database answers) instead of /healthz (the process serves).
    #[arg(long)]
    pub ready: bool,
    /// Seconds to wait for the answer.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_secs: u64,
}

/// `org` subcommands.
#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organization; prints its id.
    Create {
        /// Organization id: letters, digits, '.', '_', '-'.
        #[arg(value_parser = parse_org)]
        org_id: OrgId,
        /// Display name (defaults to the id).
        #[arg(long, value_parser = parse_name)]
        name: Option<String>,
    },
    /// List the organizations as a table, with their active keys and live profiles counted.
    List,
}

/// `key` subcommands.
#[derive(Debug, Subcommand)]
pub enum KeyCommand {
    /// Create a key; prints the key, alone on one line. It is shown only this once.
    Create {
        /// Organization the key belongs to.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
        /// What the key may do.
        #[arg(long, value_parser = ["admin", "member"])]
        role: String,
        /// A name to recognize the key by.
        #[arg(long, default_value = "")]
        name: String,
    },
    /// List an organization's keys as a table (never the keys themselves). LAST_USED is when
    /// the key last authenticated a request, to within a minute (`-`: never).
    List {
        /// Organization whose keys to list.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
    },
    /// Revoke a key; every replica refuses it within a second (within the key cache TTL, on a
    /// replica that has lost its change notifications). Confirms on stderr;
    /// a key already revoked is left as it was and is not an error, so re-running is safe.
    Revoke {
        /// The 12-character KEY_ID shown by `key list` (the part after `apz_`), or the whole
        /// key. Never echoed, in case it is a secret.
        key: String,
    },
}

/// `profile` subcommands.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Create a profile; prints its id.
    Create {
        /// Organization the profile belongs to.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
        /// Profile name: 1 to 200 printable characters, not only spaces.
        #[arg(long, value_parser = parse_name)]
        name: String,
        /// Profile id (default: `prof_` + a new ULID).
        #[arg(long)]
        id: Option<ProfileId>,
    },
    /// List an organization's profiles as a table.
    List {
        /// Organization whose profiles to list.
        #[arg(long, value_parser = parse_org)]
        org: OrgId,
        /// List deleted profiles (restorable tombstones) instead of live ones.
        #[arg(long)]
        deleted: bool,
    },
    /// Restore a deleted profile.
    Restore {
        /// The profile id.
        id: ProfileId,
    },
}

/// `catalog` subcommands.
#[derive(Debug, Subcommand)]
pub enum CatalogCommand {
    /// Replace the whole catalog with FILE (JSON, as `catalog export` prints it); prints what
    /// it added, changed and removed on stderr.
    ///
    /// With `--from`, FILE... is a cloud's own output instead, and only the regions it shows
    /// are refreshed: zone ids and names it shows that the catalog lacks are added (nothing is
    /// removed: one account may not see every zone), and a name becomes a catalog fact only
    /// in a region whose names are uniform (never one account's letters in the 8 old AWS
    /// regions, nor an Azure subscription's logical zones). Prints each change on stderr.
    #[command(
        after_help = "Examples:\n  appzone-server catalog import catalog.json\n  \
        aws ec2 describe-availability-zones --region eu-west-2 --all-availability-zones \
        --output json > eu-west-2.json\n  \
        appzone-server catalog import --from aws-describe eu-west-2.json us-east-1.json\n  \
        az account list-locations -o json > locations.json\n  \
        appzone-server catalog import --from azure-locations locations.json"
    )]
    Import {
        /// Catalog JSON file (`-` reads stdin); with `--from`, one or more output files.
        #[arg(required = true, num_args = 1..)]
        files: Vec<PathBuf>,
        /// Read the files as a cloud's CLI output: `aws-describe` (`aws ec2
        /// describe-availability-zones --all-availability-zones --output json`, one region
        /// each or an array of them) or `azure-locations` (`az account list-locations -o
        /// json`).
        #[arg(long, value_enum)]
        from: Option<CloudOutputKind>,
        /// Allow the import to remove providers, regions or zones (refused otherwise: a removed
        /// zone drops out of its region's listing, a removed region's listing answers 404 and a
        /// removed provider's listings answer 400).
        #[arg(long)]
        prune: bool,
    },
    /// Print the catalog as JSON.
    Export,
}

/// The cloud output `catalog import --from` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CloudOutputKind {
    /// `aws ec2 describe-availability-zones --output json`.
    AwsDescribe,
    /// `az account list-locations -o json`.
    AzureLocations,
}

impl CloudOutputKind {
    fn provider(self) -> &'static str {
        match self {
            CloudOutputKind::AwsDescribe => "aws",
            CloudOutputKind::AzureLocations => "azure",
        }
    }

    fn command(self) -> &'static str {
        match self {
            CloudOutputKind::AwsDescribe => "aws ec2 describe-availability-zones",
            CloudOutputKind::AzureLocations => "az account list-locations",
        }
    }
}

/// What `catalog import` was given, read and checked before any database is opened.
enum ImportInput {
    Catalog(CatalogFile),
    Cloud(CloudOutputKind, cloud_output::Output, Reference),
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
            Some(read_import(files, *from)?)
        }
        _ => None,
    };
    if let Command::Key(KeyCommand::Revoke { key }) = &cli.command {
        key_id_of(key)?;
    }
    if let Command::Backup { file } = &cli.command {
        check_backup_target(&cli.database_url, file)?;
    }
    if let Command::Healthcheck(args) = &cli.command {
        let path = if args.ready { "/readyz" } else { "/healthz" };
        let address = crate::healthcheck::probe_address(&args.listen);
        let timeout = Duration::from_secs(args.timeout_secs);
        crate::healthcheck::probe(&address, path, timeout).await?;
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
        Command::Org(OrgCommand::Create { org_id, name }) => {
            let name = name.unwrap_or_else(|| org_id.as_str().to_owned());
            store.create_org(&org_id, &name).await?;
            format!("{org_id}\n")
        }
        Command::Org(OrgCommand::List) => {
            let rows = store.list_orgs().await?;
            table(
                &["ORG_ID", "NAME", "CREATED", "KEYS", "PROFILES"],
                rows.into_iter().map(|o| {
                    vec![
                        o.id,
                        o.name,
                        format_ms(o.created_at),
                        o.active_keys.to_string(),
                        o.live_profiles.to_string(),
                    ]
                }),
            )
        }
        Command::Key(command) => key_command(&store, command).await?,
        Command::Profile(command) => profile_command(&store, command).await?,
        Command::Catalog(CatalogCommand::Import { prune, .. }) => {
            let catalog = match import.ok_or_else(|| anyhow!("catalog import without input"))? {
                ImportInput::Catalog(catalog) => catalog,
                ImportInput::Cloud(kind, output, reference) => {
                    let (_, current) = store.load_catalog().await?;
                    let refresh = current
                        .refreshed(kind.provider(), &output, reference)
                        .map_err(|err| anyhow!("{err}; nothing was changed"))?;
                    for line in &refresh.report {
                        eprintln!("catalog import: {line}");
                    }
                    refresh.catalog
                }
            };
            let import = store.import_catalog(&catalog, prune).await?;
            // stdout stays empty, as documented; the summary is for the operator.
            eprintln!(
                "catalog import: {} (catalog version {})",
                import.changes, import.version
            );
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

/// Reads and validates a catalog file (`-` is stdin); errors name the file.
/// `catalog import`'s input: one catalog file, or with `--from` the cloud output files, each
/// read and checked for its shape.
fn read_import(files: &[PathBuf], from: Option<CloudOutputKind>) -> anyhow::Result<ImportInput> {
    let Some(kind) = from else {
        let [file] = files else {
            bail!("catalog import takes one catalog file (several files need --from)");
        };
        return Ok(ImportInput::Catalog(read_catalog(file)?));
    };
    let mut output = cloud_output::Output {
        regions: Vec::new(),
        other_zone_types: 0,
    };
    for file in files {
        let (text, name) = read_input(file)?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|err| anyhow!("{name}: not JSON: {err}"))?;
        let read = match kind {
            CloudOutputKind::AwsDescribe => cloud_output::aws(&json),
            CloudOutputKind::AzureLocations => cloud_output::azure(&json),
        };
        let read = read.map_err(|cloud_output::ShapeError(err)| anyhow!("{name}: {err}"))?;
        output.regions.extend(read.regions);
        output.other_zone_types += read.other_zone_types;
    }
    let today = &format_ms(now_ms())[..10];
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let reference = Reference {
        id: format!("I{}", today.replace('-', "")),
        what: format!(
            "{} output imported with catalog import --from {}",
            kind.command(),
            clap::ValueEnum::to_possible_value(&kind)
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default()
        ),
        location: names.join(", "),
        date: today.to_owned(),
    };
    Ok(ImportInput::Cloud(kind, output, reference))
}

/// A file's text and how to name it in errors; `-` is stdin.
fn read_input(file: &Path) -> anyhow::Result<(String, String)> {
    if file.as_os_str() == "-" {
        let text = std::io::read_to_string(std::io::stdin()).context("cannot read stdin")?;
        return Ok((text, "stdin".to_owned()));
    }
    let text =
        std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
    Ok((text, file.display().to_string()))
}

fn read_catalog(file: &Path) -> anyhow::Result<CatalogFile> {
    let (text, name) = read_input(file)?;
    CatalogFile::parse(&text).map_err(|err| anyhow!("{name}: {err}"))
}

/// The key id of a `key revoke` argument: a key id, or a whole key (whose id is revoked).
/// The argument is never repeated in an error: it may be a secret.
fn key_id_of(arg: &str) -> anyhow::Result<KeyId> {
    if let Ok(key_id) = arg.parse::<KeyId>() {
        return Ok(key_id);
    }
    if let Ok(key) = arg.parse::<ApiKey>() {
        return Ok(key.key_id().clone());
    }
    bail!(
        "the argument of `key revoke` is neither a key id nor a key: give the 12-character \
         KEY_ID that `key list` shows (the argument is not repeated here, as it may be secret)"
    )
}

async fn key_command(store: &Store, command: KeyCommand) -> anyhow::Result<String> {
    Ok(match command {
        KeyCommand::Create { org, role, name } => {
            let role: Role = role.parse().map_err(anyhow::Error::msg)?;
            let key = store.create_key(&org, role, &name).await?;
            format!("{}\n", key.expose_secret())
        }
        KeyCommand::List { org } => {
            let rows = store.list_keys(&org).await?;
            table(
                &["KEY_ID", "ROLE", "NAME", "CREATED", "REVOKED", "LAST_USED"],
                rows.into_iter().map(|k| {
                    vec![
                        k.key_id,
                        k.role.to_string(),
                        k.name,
                        format_ms(k.created_at),
                        k.revoked_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                        k.last_used_at
                            .map(format_ms)
                            .unwrap_or_else(|| "-".to_owned()),
                    ]
                }),
            )
        }
        KeyCommand::Revoke { key } => {
            let key_id = key_id_of(&key)?;
            let revocation = store.revoke_key(key_id.as_str()).await?;
            // On stderr: stdout stays empty, as for every command that only changes state.
            if revocation.already {
                eprintln!("key {key_id} was already revoked");
            } else {
                eprintln!("revoked key {key_id} (organization {})", revocation.org_id);
            }
            String::new()
        }
    })
}

async fn profile_command(store: &Store, command: ProfileCommand) -> anyhow::Result<String> {
    Ok(match command {
        ProfileCommand::Create { org, name, id } => {
            let id = store.create_profile(&org, &name, id).await?;
            format!("{id}\n")
        }
        ProfileCommand::List { org, deleted } => {
            let rows = store.list_profiles(&org, deleted).await?;
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
            store.restore_profile(&id).await?;
            String::new()
        }
    })
}

fn parse_org(id: &str) -> Result<OrgId, String> {
    id.parse()
}

/// A display name: not blank, at most 200 printable characters.
fn parse_name(name: &str) -> Result<String, String> {
    crate::model::check_display_name(name).map(|()| name.to_owned())
}

/// Left-aligned columns at least two spaces apart, header first.
fn table(header: &[&str], rows: impl Iterator<Item = Vec<String>>) -> String {
    let mut out = TabWriter::new(Vec::new()).minwidth(0);
    for line in std::iter::once(header.join("\t")).chain(rows.map(|row| row.join("\t"))) {
        // Into a Vec: writing cannot fail.
        let _ = writeln!(out, "{line}");
    }
    out.into_inner()
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_default()
}

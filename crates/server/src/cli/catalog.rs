//! `appzone-server catalog`: its options, reading and checking `catalog import`'s input before
//! any database is opened, and the import itself.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context};
use clap::Subcommand;

use crate::model::catalog_file::{CatalogFile, Reference};
use crate::model::{cloud_output, format_ms, now_ms};
use crate::storage::Store;

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
pub(super) enum ImportInput {
    Catalog(CatalogFile),
    Cloud(CloudOutputKind, cloud_output::Output, Reference),
}

/// Replaces the catalog with `input` (a cloud's output refreshes the current catalog first);
/// what changed goes to stderr (stdout stays empty, as documented).
pub(super) async fn import(store: &Store, input: ImportInput, prune: bool) -> anyhow::Result<()> {
    let catalog = match input {
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
    eprintln!(
        "catalog import: {} (catalog version {})",
        import.changes, import.version
    );
    Ok(())
}

/// Reads and validates a catalog file (`-` is stdin); errors name the file.
/// `catalog import`'s input: one catalog file, or with `--from` the cloud output files, each
/// read and checked for its shape.
pub(super) fn read_import(
    files: &[PathBuf],
    from: Option<CloudOutputKind>,
) -> anyhow::Result<ImportInput> {
    let Some(kind) = from else {
        let [file] = files else {
            bail!("catalog import takes one catalog file (several files need --from)");
        };
        return Ok(ImportInput::Catalog(read_catalog(file)?));
    };
    let mut output = cloud_output::Output::default();
    for file in files {
        let (text, name) = read_input(file)?;
        let json: serde_json::Value =
            serde_json::from_str(&text).map_err(|err| anyhow!("{name}: not JSON: {err}"))?;
        let read = match kind {
            CloudOutputKind::AwsDescribe => cloud_output::aws(&json),
            CloudOutputKind::AzureLocations => cloud_output::azure(&json),
        };
        let read = read.map_err(|cloud_output::ShapeError(err)| anyhow!("{name}: {err}"))?;
        output.extend(read);
    }
    let today = &format_ms(now_ms())[..10];
    // What the reference says is served to every tenant: the command and the regions, never
    // a path of the operator's machine. The id is made unique within the catalog on import.
    let regions: Vec<&str> = output.regions.iter().map(|r| r.region.as_str()).collect();
    let shown = match regions.len() {
        0..=12 => regions.join(", "),
        n => format!("{} and {} more", regions[..12].join(", "), n - 12),
    };
    let reference = Reference {
        id: format!("I{}", today.replace('-', "")),
        what: format!(
            "The output of {} for {}, imported with catalog import --from {}",
            kind.command(),
            if shown.is_empty() {
                "no region".to_owned()
            } else {
                shown
            },
            clap::ValueEnum::to_possible_value(&kind)
                .map(|v| v.get_name().to_owned())
                .unwrap_or_default()
        ),
        location: format!("the operator's {} output", kind.command()),
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

//! `cargo xtask bench --scale`: how appzone's costs grow with what it holds. Every part measures
//! a small and a large case in the same run, on the same build and machine, and reports their
//! ratio (large / small), which stays comparable where absolute figures move with the machine:
//!
//! 1. the catalog at 1×, 10× and 100× the built-in one (its providers copied under suffixed ids
//!    such as `aws-x7`): `catalog import` into an empty catalog, start-up to 200 on `/healthz`,
//!    `catalog export`, instructions per zone listing under callgrind (1× and 10×, when valgrind
//!    is installed), and zone listing throughput while one 100× import runs against without;
//! 2. 10 against 1,000,000 API keys: the first request with a key not yet cached, which looks
//!    the key id up in the database, timed and counted under callgrind;
//! 3. 1,000 against 10,000,000 profiles: deletes, each of a distinct profile, timed under load
//!    and counted one at a time under callgrind;
//! 4. 0 against 5,000 idle keep-alive connections: the server's RSS, and after they close;
//! 5. a flood of about 600,000 requests with wrong keys of random key ids: the server's RSS
//!    before, right after, and 5 s later (a negative cache entry lives at most 2 s).
//!
//! It takes minutes (about six on two cores after the release build), every child process is
//! bounded in time, and everything talks to 127.0.0.1 only. `cargo xtask ci` does not run it.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context, Result};
use serde_json::Value;

use super::load::{self, Load, RunResult, Wrk};
use super::options::Options;
use super::procfs::RssSampler;
use super::report::{load_average, machine_line, median, min_max};
use super::servers::Server;
use super::{http, instructions, seed, Binaries, WorkDir, ZONES_PATH};
use crate::process::{output, show, stdout_of, PROBE_TIMEOUT};

/// Sizes of the catalog, in copies of the built-in one; the first is the small case.
const CATALOG_COPIES: [usize; 3] = [1, 10, 100];
/// Start-ups and exports timed per catalog size.
const STARTUP_RUNS: usize = 3;
const EXPORT_RUNS: usize = 3;
/// Any one operator CLI command; the 100× import takes seconds.
const CLI_TIMEOUT: Duration = Duration::from_secs(300);
/// Listing throughput around an import: connections, window length, pairs of windows (one
/// without an import, one with), and when in its window the import starts.
const LISTING_CONNECTIONS: usize = 64;
const WINDOW_SECS: u64 = 8;
const WINDOW_PAIRS: usize = 4;
const IMPORT_DELAY: Duration = Duration::from_secs(1);
/// How often the server's counters are read during a window.
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// Longest wait for the server to serve an imported catalog (it looks every 2 s by default).
const REFRESH_TIMEOUT: Duration = Duration::from_secs(30);

/// API keys: the small and large table, and the keys whose first request is timed.
const SMALL_KEYS: u64 = 10;
const LARGE_KEYS: u64 = 1_000_000;
const MEASURED_KEYS: usize = 200;
/// Keys measured on one server before the other takes its turn.
const KEY_BATCH: usize = 20;

/// Profiles: the small and large table, and the delete bursts run on each. A burst stops after
/// `DELETES_PER_BURST` answers, fewer than the small table holds with the connections' last
/// requests in flight, so the small table never runs out.
const SMALL_PROFILES: u64 = 1_000;
const LARGE_PROFILES: u64 = 10_000_000;
const DELETE_CONNECTIONS: usize = 32;
const DELETES_PER_BURST: u64 = 900;
const DELETE_BURSTS: u64 = 10;
/// wrk's `-d` for a burst: an upper bound, since wrk waits it out even after its thread stops.
const BURST_SECS: u64 = 1;
/// Deletes counted under callgrind per table, one at a time.
const COUNTED_DELETES: u64 = 200;

/// Idle connections, and the file descriptors left to everything else when the limit is low.
const IDLE_CONNECTIONS: usize = 5_000;
const FD_HEADROOM: usize = 256;
/// Long enough for the server to have settled after connections open or requests stop.
const SETTLE: Duration = Duration::from_secs(1);

/// The wrong-key flood: about this many requests, sized from a short first run's rate.
const FLOOD_REQUESTS: u64 = 600_000;
const FLOOD_PROBE_SECS: u64 = 3;
const FLOOD_MAX_SECS: f64 = 180.0;
const FLOOD_MAX_RUNS: usize = 5;
/// Past the negative cache's 2 s lifetime and its 2 s sweep.
const AFTER_FLOOD: Duration = Duration::from_secs(5);

/// Runs the scale measurements and writes their report to `opts.output`.
pub(super) fn run(opts: &Options) -> Result<()> {
    let wrk_version = load::wrk_version()?;
    seed::require_sqlite3()?;
    let build_started = Instant::now();
    let bins = Binaries::build()?;
    let build = build_started.elapsed();
    let work = WorkDir::create(opts.keep)?;
    eprintln!("bench: scale run, working in {}", work.path.display());
    // One wrk thread leaves the machine's other core to the server, as in the load benchmarks.
    let wrk = Wrk::new(&work.path, 1, WINDOW_SECS);
    let mut report = ScaleReport::new(wrk_version);
    let started = Instant::now();

    report.part("catalog", |r| catalog(&bins, &work, &wrk, r));
    report.part("API keys", |r| keys(&bins, &work, r));
    report.part("profiles", |r| profiles(&bins, &work, &wrk, r));
    report.part("idle connections", |r| idle_connections(&bins, &work, r));
    report.part("wrong-key flood", |r| {
        wrong_key_flood(&bins, &work, &wrk, r)
    });

    let text = report.render(build, started.elapsed());
    super::write_report(&opts.output, &text)?;
    if report.failed > 0 {
        bail!(
            "{} part(s) of the scale run failed (the report says which)",
            report.failed
        );
    }
    Ok(())
}

/// The report: one table of small against large cases, then the method and the notes.
struct ScaleReport {
    rows: Vec<Row>,
    notes: Vec<String>,
    failed: usize,
    wrk_version: String,
    load_before: String,
}

struct Row {
    what: String,
    small: String,
    large: String,
    ratio: String,
}

impl ScaleReport {
    fn new(wrk_version: String) -> Self {
        Self {
            rows: Vec::new(),
            notes: Vec::new(),
            failed: 0,
            wrk_version,
            load_before: load_average(),
        }
    }

    /// Runs one part; a part that fails is reported as such and the run goes on with the next,
    /// so one failure does not cost the other parts' figures.
    fn part(&mut self, name: &str, run: impl FnOnce(&mut Self) -> Result<()>) {
        eprintln!("bench: scale: {name}");
        let started = Instant::now();
        if let Err(err) = run(self) {
            eprintln!("bench: scale: {name} FAILED: {err:#}");
            self.rows.push(Row {
                what: format!("{name}: the rest of this part"),
                small: "—".to_owned(),
                large: "—".to_owned(),
                ratio: "failed (see notes)".to_owned(),
            });
            self.notes
                .push(format!("**{name} failed:** {}", format!("{err:#}").trim()));
            self.failed += 1;
        }
        eprintln!(
            "bench: scale: {name} took {:.0} s",
            started.elapsed().as_secs_f64()
        );
    }

    /// A row of two values shown by `show`, and their ratio.
    fn row(&mut self, what: String, (small, large): (f64, f64), show: fn(f64) -> String) {
        self.row_text(what, show(small), show(large), ratio(small, large));
    }

    /// A row whose cells are already text (ranges), with the ratio of the values they stand for.
    fn row_text(&mut self, what: String, small: String, large: String, ratio: Option<f64>) {
        let ratio = ratio.map_or_else(|| "—".to_owned(), |r| format!("{r:.2}×"));
        eprintln!("bench: scale:   {what}: {small} | {large} | {ratio}");
        self.rows.push(Row {
            what,
            small,
            large,
            ratio,
        });
    }

    /// A row that could not be measured here, and why.
    fn skipped(&mut self, what: String, why: &str) {
        eprintln!("bench: scale:   SKIPPED {what}: {why}");
        self.notes.push(format!("Skipped: {what}: {why}."));
        self.rows.push(Row {
            what,
            small: "—".to_owned(),
            large: "—".to_owned(),
            ratio: "skipped (see notes)".to_owned(),
        });
    }

    fn note(&mut self, note: String) {
        eprintln!("bench: scale:   {note}");
        self.notes.push(note);
    }

    fn render(&self, build: Duration, elapsed: Duration) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "## appzone scale run (`cargo xtask bench --scale`)\n");
        let _ = writeln!(out, "{}\n", machine_line());
        let _ = writeln!(
            out,
            "Release build, SQLite, over 127.0.0.1; wrk ({}) with 1 thread. Each row's small and \
             large case ran in this run; ratio = large / small. Measurements {:.0} s (build {:.0} \
             s before them); load average before {}, after {}.\n",
            self.wrk_version,
            elapsed.as_secs_f64(),
            build.as_secs_f64(),
            self.load_before,
            load_average()
        );
        let _ = writeln!(out, "| what | small | large | ratio |");
        let _ = writeln!(out, "|---|---|---|---|");
        for row in &self.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                row.what, row.small, row.large, row.ratio
            );
        }
        let _ = writeln!(out, "\n### Method\n\n{}", method());
        if !self.notes.is_empty() {
            let _ = writeln!(out, "### Notes\n");
            for note in &self.notes {
                let _ = writeln!(out, "- {note}");
            }
        }
        out
    }
}

/// How each part measured, for the report.
fn method() -> String {
    let delete_places = DELETE_BURSTS + 1;
    format!(
        "\
- **Catalog**: the built-in catalog as `catalog export` prints it, its providers copied under \
  ids ending in `-x<n>` (`aws-x7`) for the larger sizes, so the listed `aws/us-east-1` stays \
  the same. Each size: a database made by `migrate`, its catalog emptied by an untimed import \
  of `{{\"providers\": []}}`, then the timed `catalog import --prune` (so every size writes its \
  whole catalog); start-up is spawning `serve` until `/healthz` answers 200 (polled every \
  5 ms); `catalog export` is the CLI's wall time. Instructions per zone listing: callgrind, 8 \
  connections, a warm-up, counters zeroed, a counted run (as `cargo xtask instructions`). \
  Listing throughput: wrk, {LISTING_CONNECTIONS} connections, windows of {WINDOW_SECS} s on the \
  100× database, in turn without an import, with one `catalog import --prune` of the 100× \
  catalog plus one new zone (so it writes, and the server refreshes) started {import_delay} s \
  in, and with the same import run under `nice -n 19`; the server's own request counter (`/metrics`, read every {sample_ms} ms) \
  gives the listings answered while the import ran. The same kind of import, timed once with \
  the server idle before the windows, is what the imports under load are compared with.
- **API keys**: {SMALL_KEYS} keys (the admin key of `org create`/`key create`, the others \
  inserted with the sqlite3 CLI) against a copy of the same database with {large_keys} (random \
  key ids and digests; no one holds their secrets, they only make the table and its index big), \
  both also holding the {MEASURED_KEYS} measured keys made with `key create`. Each measured \
  key's first request (a new connection, a cache miss, one lookup by key id) and then its \
  second (cached) are timed client-side, the two servers taking turns by batches of \
  {KEY_BATCH} keys (A B A B). Instructions: each table's server started again under callgrind, \
  20 requests with the cached admin key to warm it up, then the counters zeroed around the \
  measured keys' first requests, and again around their second ones.
- **Profiles**: profiles `bench-1` up inserted with the sqlite3 CLI. wrk deletes, \
  {DELETE_CONNECTIONS} connections, each request a distinct profile, in bursts that stop after \
  {DELETES_PER_BURST} answers (1 warm-up burst, {DELETE_BURSTS} counted; medians over the \
  bursts); the small table is restored with SQL after each burst so it never runs out, the \
  large one is deleted from at {delete_places} places spread over it. wrk waits out its whole \
  `-d` ({BURST_SECS} s) even after its thread stops, so throughput is derived from the closed \
  loop: connections / mean latency. Instructions: each table's server started again under \
  callgrind, {warm_deletes} deletes to warm it up, then {COUNTED_DELETES} counted, one \
  connection each, one at a time, of profiles not deleted before.
- **Idle connections**: a server with `--header-read-timeout-secs 600`; each connection sends \
  one `GET /healthz` with keep-alive, reads the answer, and stays open and silent. RSS is \
  `VmRSS` {settle} s after the connections opened (and 2 s and 10 s after they all closed).
- **Wrong-key flood**: after a 2 s warm-up with the valid key, wrk ({LISTING_CONNECTIONS} \
  connections) sends keys of the right shape, `apz_<random key id>_<secret>`: every one is \
  looked up and missed. The server keeps its default limit of 600 failed authentications per \
  minute per address, which answers 429 after verification, so every request still reaches \
  the key cache.
",
        import_delay = IMPORT_DELAY.as_secs(),
        sample_ms = SAMPLE_EVERY.as_millis(),
        large_keys = thousands(LARGE_KEYS),
        settle = SETTLE.as_secs(),
        warm_deletes = COUNTED_DELETES / 10,
    )
}

/// large / small, when small is a value to divide by.
fn ratio(small: f64, large: f64) -> Option<f64> {
    (small > 0.0).then(|| large / small)
}

// ---------------------------------------------------------------------------------------------
// 1. The catalog

/// One catalog size: its file, its database and what was measured on them.
struct CatalogSize {
    copies: usize,
    zones: usize,
    url: String,
    import_secs: f64,
    startups: Vec<f64>,
    exports: Vec<f64>,
}

impl CatalogSize {
    fn label(&self) -> String {
        format!("{}× ({} zones)", self.copies, thousands(self.zones as u64))
    }
}

fn catalog(bins: &Binaries, work: &WorkDir, wrk: &Wrk<'_>, report: &mut ScaleReport) -> Result<()> {
    // The built-in catalog, as `catalog export` prints it from a database `migrate` made.
    let builtin_url = sqlite_url(&work.path.join("catalog-builtin.db"));
    cli(bins, &builtin_url, &["migrate"])?;
    let builtin: Value = serde_json::from_str(&cli(bins, &builtin_url, &["catalog", "export"])?)
        .context("`catalog export` printed no JSON")?;
    let empty = work.path.join("catalog-empty.json");
    write(&empty, "{\"providers\": []}\n")?;

    let mut sizes = Vec::new();
    let mut largest = None;
    for copies in CATALOG_COPIES {
        let catalog = scaled(&builtin, copies)?;
        let file = work.path.join(format!("catalog-{copies}x.json"));
        write(&file, &catalog.to_string())?;
        let url = sqlite_url(&work.path.join(format!("catalog-{copies}x.db")));
        // `migrate` loads the built-in catalog into the new database. Emptied first, every size
        // writes its whole catalog: a 1× import onto the built-in one would change nothing.
        cli(bins, &url, &["migrate"])?;
        cli(bins, &url, &["catalog", "import", "--prune", &arg(&empty)])?;
        let (import_secs, _) =
            timed(|| cli(bins, &url, &["catalog", "import", "--prune", &arg(&file)]))?;
        eprintln!("bench: scale: {copies}× catalog imported in {import_secs:.2} s");

        let startups = (0..STARTUP_RUNS)
            .map(|run| {
                let name = format!("startup-{copies}x-{run}");
                let (secs, server) =
                    timed(|| Server::appzone_with(bins, work, &name, &url, &[], "/healthz"))?;
                drop(server);
                Ok(secs)
            })
            .collect::<Result<Vec<_>>>()?;
        let mut exports = Vec::new();
        for run in 0..EXPORT_RUNS {
            let (secs, json) = timed(|| cli(bins, &url, &["catalog", "export"]))?;
            if run == 0 {
                // The export must be the whole catalog, or its time says nothing.
                let exported: Value =
                    serde_json::from_str(&json).context("`catalog export` printed no JSON")?;
                ensure!(
                    zone_count(&exported) == zone_count(&catalog),
                    "the {copies}× export has {} zones, the import {}",
                    zone_count(&exported),
                    zone_count(&catalog)
                );
            }
            exports.push(secs);
        }
        sizes.push(CatalogSize {
            copies,
            zones: zone_count(&catalog),
            url,
            import_secs,
            startups,
            exports,
        });
        largest = Some(catalog);
    }

    let (small, larger) = sizes.split_first().context("no catalog sizes")?;
    for large in larger {
        let compared = format!("{} vs {}", small.label(), large.label());
        report.row(
            format!("`catalog import --prune` into an empty catalog, {compared}"),
            (small.import_secs, large.import_secs),
            seconds,
        );
        report.row_text(
            format!("start-up until `/healthz` answers 200, {compared}, min–max of {STARTUP_RUNS}"),
            range(&small.startups),
            range(&large.startups),
            ratio(middle(&small.startups), middle(&large.startups)),
        );
        report.row_text(
            format!("`catalog export`, {compared}, min–max of {EXPORT_RUNS}"),
            range(&small.exports),
            range(&large.exports),
            ratio(middle(&small.exports), middle(&large.exports)),
        );
    }
    report.note(format!(
        "Catalog ratios of ranges are of the medians. Catalog sizes: {}.",
        sizes
            .iter()
            .map(CatalogSize::label)
            .collect::<Vec<_>>()
            .join(", ")
    ));

    match larger {
        [ten, ..] => listing_instructions(bins, work, wrk, small, ten, report)?,
        [] => bail!("no 10× catalog"),
    }
    let (Some(hundred), Some(catalog)) = (sizes.last(), largest) else {
        bail!("no 100× catalog");
    };
    listing_during_import(bins, work, wrk, hundred, &catalog, report)
}

/// `builtin` with its providers `copies` times: the originals, then copies whose provider ids
/// end in `-x<n>` (`aws-x7`: still a valid id), so the originals' listings stay the same.
fn scaled(builtin: &Value, copies: usize) -> Result<Value> {
    let providers = builtin
        .get("providers")
        .and_then(Value::as_array)
        .context("the exported catalog has no providers array")?;
    let mut all = providers.clone();
    for copy in 1..copies {
        for provider in providers {
            let mut provider = provider.clone();
            let object = provider
                .as_object_mut()
                .context("a provider that is not an object")?;
            let id = object
                .get("id")
                .and_then(Value::as_str)
                .context("a provider without an id")?;
            let id = format!("{id}-x{copy}");
            object.insert("id".to_owned(), Value::String(id));
            all.push(provider);
        }
    }
    Ok(serde_json::json!({ "providers": all }))
}

/// `catalog` with one more zone, `scale-extra-<n>`, in the first region of its last provider (a
/// copy, not the listed `aws`): a different catalog for every `n`, so each import writes.
fn with_extra_zone(catalog: &Value, n: usize) -> Result<Value> {
    let mut catalog = catalog.clone();
    let zones = catalog
        .get_mut("providers")
        .and_then(Value::as_array_mut)
        .and_then(|providers| providers.last_mut())
        .and_then(|provider| provider.get_mut("regions"))
        .and_then(Value::as_array_mut)
        .and_then(|regions| regions.first_mut())
        .and_then(|region| region.get_mut("zones"))
        .and_then(Value::as_array_mut)
        .context("the catalog has no region to add a zone to")?;
    zones.push(Value::String(format!("scale-extra-{n}")));
    Ok(catalog)
}

/// Zones of a catalog, all regions of all providers.
fn zone_count(catalog: &Value) -> usize {
    let items = |value: &Value, key: &str| -> Vec<Value> {
        value
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    items(catalog, "providers")
        .iter()
        .flat_map(|provider| items(provider, "regions"))
        .map(|region| items(&region, "zones").len())
        .sum()
}

/// Instructions per zone listing under callgrind on the small and the 10× catalog.
fn listing_instructions(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    small: &CatalogSize,
    large: &CatalogSize,
    report: &mut ScaleReport,
) -> Result<()> {
    let what = format!(
        "instructions per zone listing (callgrind, user space), {} vs {}",
        small.label(),
        large.label()
    );
    if skipped_without_valgrind(&what, report) {
        return Ok(());
    }
    let mut counts = Vec::new();
    for size in [small, large] {
        let key = seed::org_and_key(bins, &size.url)?;
        let load = Load::get(8, ZONES_PATH, &[&format!("X-API-KEY: {key}")]);
        let name = format!("callgrind-{}x", size.copies);
        counts.push(instructions::callgrind_per_request(
            bins,
            work,
            wrk,
            &name,
            &load,
            |bins| Server::appzone(bins, work, &name, &size.url, None),
        )?);
    }
    match counts[..] {
        [one, ten] => report.row(what, (one, ten), |n| thousands(n.round() as u64)),
        _ => bail!("callgrind counted {} servers, not 2", counts.len()),
    }
    Ok(())
}

/// Whether valgrind is missing, in which case the row `what` is reported skipped. Whether it
/// starts at all, as the CI guard asks (instructions.rs).
fn skipped_without_valgrind(what: &str, report: &mut ScaleReport) -> bool {
    let missing = output(Command::new("valgrind").arg("--version"), PROBE_TIMEOUT).is_err();
    if missing {
        report.skipped(
            what.to_owned(),
            "valgrind is not installed (Debian: `apt-get install valgrind`)",
        );
    }
    missing
}

/// A reading of the server's counters during a window, `at` seconds into it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Sample {
    at: f64,
    /// Zone listings answered 200 so far.
    listings: u64,
    catalog_version: i64,
}

/// One window of listing load, and the import that ran in it, if any.
struct Window {
    run: RunResult,
    samples: Vec<Sample>,
    /// When the import started and ended, seconds into the window.
    import: Option<(f64, f64)>,
}

impl Window {
    /// Listings per second the server counted from the last sample at or before `from` to the
    /// first at or after `to` (so over a little more than the interval, by up to a sample).
    fn counted_rate(&self, from: f64, to: f64) -> Option<f64> {
        let first = self.samples.iter().rev().find(|s| s.at <= from)?;
        let last = self.samples.iter().find(|s| s.at >= to)?;
        let seconds = last.at - first.at;
        (seconds > 0.0).then(|| last.listings.saturating_sub(first.listings) as f64 / seconds)
    }

    /// Seconds into the window when the server first served a newer catalog than at its start,
    /// when it did within the samples.
    fn refreshed_at(&self) -> Option<f64> {
        let before = self.samples.first()?.catalog_version;
        let refreshed = self.samples.iter().find(|s| s.catalog_version > before)?;
        Some(refreshed.at)
    }

    /// Seconds from the end of the import until the server served a newer catalog, when it did
    /// within the samples.
    fn refreshed_after_import(&self) -> Option<f64> {
        let (_, ended) = self.import?;
        Some(self.refreshed_at()? - ended)
    }
}

/// Zone listing throughput on the 100× catalog: windows without an import and with one
/// `catalog import` of the 100× catalog (a zone added, so it writes and the server refreshes).
fn listing_during_import(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    size: &CatalogSize,
    catalog: &Value,
    report: &mut ScaleReport,
) -> Result<()> {
    let key = seed::org_and_key(bins, &size.url)?;
    let server = Server::appzone(bins, work, "appzone-catalog-100x", &size.url, None)?;
    let load = Load::get(
        LISTING_CONNECTIONS,
        ZONES_PATH,
        &[&format!("X-API-KEY: {key}")],
    );
    let window = wrk.lasting(WINDOW_SECS);
    // Each import is of the 100× catalog with another extra zone, so each one writes.
    // Under `nice -n 19` when `niced`: as an operator would run a batch job beside a server.
    let import = |n: usize, niced: bool| -> Result<Command> {
        let file = work.path.join(format!("catalog-100x-extra-{n}.json"));
        write(&file, &with_extra_zone(catalog, n)?.to_string())?;
        let nice = ["nice", "-n", "19"].map(str::to_owned);
        let wrapper = if niced { nice.to_vec() } else { Vec::new() };
        let mut command = bins.under(wrapper).server_cli(&size.url);
        command.args(["catalog", "import", "--prune", &arg(&file)]);
        Ok(command)
    };
    // The same import with the server idle: what the imports under load are compared with (the
    // import into an empty catalog above writes the same rows but deletes none).
    let version = scrape(server.addr, Instant::now())?.catalog_version;
    let (idle_import, _) = timed(|| stdout_of(&mut import(0, false)?, CLI_TIMEOUT))?;
    wait_for_catalog_version(server.addr, version + 1)?;
    // Warm-up: connections, caches, allocator arenas.
    wrk.lasting(2).run(&server, &load)?;
    let (mut quiet, mut busy, mut niced) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 1..=WINDOW_PAIRS {
        eprintln!("bench: scale: listing window {pair}/{WINDOW_PAIRS} without an import");
        quiet.push(listing_window(&server, &window, &load, None)?);
        for (nice, windows) in [(false, &mut busy), (true, &mut niced)] {
            eprintln!(
                "bench: scale: listing window {pair}/{WINDOW_PAIRS} with a 100× import{}",
                if nice { " under nice -n 19" } else { "" }
            );
            let n = 2 * pair + usize::from(nice);
            let measured = listing_window(&server, &window, &load, Some(import(n, nice)?))?;
            // The next window must not catch this import's refresh.
            let before = measured.samples.first().map_or(0, |s| s.catalog_version);
            wait_for_catalog_version(server.addr, before + 1)?;
            windows.push(measured);
        }
    }

    let rps = |windows: &[Window]| -> Vec<f64> { windows.iter().map(|w| w.run.rps()).collect() };
    let (quiet_rps, busy_rps) = (rps(&quiet), rps(&busy));
    let imports: Vec<(f64, f64)> = busy.iter().filter_map(|w| w.import).collect();
    let durations: Vec<f64> = imports.iter().map(|(start, end)| end - start).collect();
    let window_secs = WINDOW_SECS as f64;
    // Without an import, the counter's rate over the same part of the window an import would
    // take (from its start to a second before the end).
    let quiet_counted: Vec<f64> = quiet
        .iter()
        .filter_map(|w| w.counted_rate(IMPORT_DELAY.as_secs_f64(), window_secs - 1.0))
        .collect();
    let ImportRates {
        counted: busy_counted,
        course: busy_course,
        courses,
    } = ImportRates::of(&busy);
    let niced_rates = ImportRates::of(&niced);
    // Windows without an import, over the same span from the moment an import would start.
    let quiet_course: Vec<f64> = quiet
        .iter()
        .filter_map(|w| {
            let from = IMPORT_DELAY.as_secs_f64();
            w.counted_rate(from, from + middle(&courses))
        })
        .collect();
    let conns = format!("wrk, {LISTING_CONNECTIONS} connections");
    report.row(
        format!(
            "zone listing req/s ({conns}, {WINDOW_SECS} s windows), without vs with one 100× \
             import in the window, median of {WINDOW_PAIRS}"
        ),
        (middle(&quiet_rps), middle(&busy_rps)),
        per_second,
    );
    report.row(
        "zone listing req/s while the 100× import itself ran (server's request counter), \
         without vs with"
            .to_owned(),
        (middle(&quiet_counted), middle(&busy_counted)),
        per_second,
    );
    report.row(
        format!(
            "zone listing req/s from the 100× import's start until the server served its catalog \
             ({} s; server's request counter), without vs with",
            join(&courses, |secs| format!("{secs:.1}"))
        ),
        (middle(&quiet_course), middle(&busy_course)),
        per_second,
    );
    report.row(
        "zone listing req/s while the 100× import itself ran under `nice -n 19` (server's \
         request counter), without vs with"
            .to_owned(),
        (middle(&quiet_counted), middle(&niced_rates.counted)),
        per_second,
    );
    report.row(
        format!(
            "zone listing req/s from the start of the 100× import under `nice -n 19` until the \
             server served its catalog ({} s), without vs with",
            join(&niced_rates.courses, |secs| format!("{secs:.1}"))
        ),
        (middle(&quiet_course), middle(&niced_rates.course)),
        per_second,
    );
    report.row(
        "`catalog import --prune` of the 100× catalog with one more zone: server idle vs under \
         the listing load"
            .to_owned(),
        (idle_import, middle(&durations)),
        seconds,
    );
    let refreshes: Vec<String> = busy
        .iter()
        .map(|w| {
            w.refreshed_after_import()
                .map_or("after the window".to_owned(), |s| format!("{s:.1} s"))
        })
        .collect();
    report.note(format!(
        "Listing windows without an import: {} req/s (wrk), {} req/s by the server's counter \
         over {:.0}–{:.0} s; with one: {} req/s (wrk), {} req/s by the counter while the import \
         ran; the imports started {:.1} s into their windows and took {}; the server served the \
         new catalog {} after each import ended.{}",
        join(&quiet_rps, per_second),
        join(&quiet_counted, per_second),
        IMPORT_DELAY.as_secs_f64(),
        window_secs - 1.0,
        join(&busy_rps, per_second),
        join(&busy_counted, per_second),
        IMPORT_DELAY.as_secs_f64(),
        join(&durations, seconds),
        refreshes.join(" and "),
        if imports.iter().any(|(_, end)| *end > window_secs) {
            " An import outlasted its window: the window's wrk rate covers only part of it."
        } else {
            ""
        }
    ));
    let errors: u64 = quiet.iter().chain(&busy).map(|w| w.run.errors).sum();
    if errors > 0 {
        report.note(format!(
            "The listing windows counted {errors} errors (non-2xx answers, timeouts)."
        ));
    }
    Ok(())
}

/// Listing rates of windows with an import, by the server's request counter.
struct ImportRates {
    /// While the import process ran.
    counted: Vec<f64>,
    /// From the import's start until the server served the new catalog: the import's whole
    /// course as the listings see it, the replica's reload included.
    course: Vec<f64>,
    /// How long each of those courses took, in seconds.
    courses: Vec<f64>,
}

impl ImportRates {
    fn of(windows: &[Window]) -> Self {
        let counted = windows
            .iter()
            .filter_map(|w| {
                let (start, end) = w.import?;
                w.counted_rate(start, end)
            })
            .collect();
        let course = windows
            .iter()
            .filter_map(|w| w.counted_rate(w.import?.0, w.refreshed_at()?))
            .collect();
        let courses = windows
            .iter()
            .filter_map(|w| Some(w.refreshed_at()? - w.import?.0))
            .collect();
        Self {
            counted,
            course,
            courses,
        }
    }
}

/// One window of `load`, the server's counters read every [`SAMPLE_EVERY`] meanwhile, with
/// `import` started [`IMPORT_DELAY`] into it when given (and waited for, even past the window).
fn listing_window(
    server: &Server,
    wrk: &Wrk<'_>,
    load: &Load<'_>,
    import: Option<Command>,
) -> Result<Window> {
    let addr = server.addr;
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                // A reading that fails (a slow answer under load) is only a gap in the samples.
                if let Ok(sample) = scrape(addr, start) {
                    samples.push(sample);
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
            samples
        });
        let importer = import.map(|mut command| {
            scope.spawn(move || -> Result<(f64, f64)> {
                std::thread::sleep(IMPORT_DELAY);
                let started = start.elapsed().as_secs_f64();
                let shown = show(&command);
                output(&mut command, CLI_TIMEOUT)?.stdout_if_success(&shown)?;
                Ok((started, start.elapsed().as_secs_f64()))
            })
        });
        let run = wrk.run(server, load);
        let import = importer
            .map(|thread| {
                thread
                    .join()
                    .map_err(|_| anyhow!("the import's thread panicked"))?
            })
            .transpose();
        stop.store(true, Ordering::Relaxed);
        let samples = sampler
            .join()
            .map_err(|_| anyhow!("the sampling thread panicked"))?;
        Ok(Window {
            run: run?,
            samples,
            import: import?,
        })
    })
}

/// The server's counters now, `at` seconds after `start`.
fn scrape(addr: SocketAddr, start: Instant) -> Result<Sample> {
    let answer = http::get(addr, "/metrics", &[])?;
    ensure!(answer.status == 200, "/metrics answered {}", answer.status);
    let (listings, catalog_version) = parse_metrics(&String::from_utf8_lossy(&answer.body));
    Ok(Sample {
        at: start.elapsed().as_secs_f64(),
        listings,
        catalog_version: catalog_version.context("no appzone_catalog_version in /metrics")?,
    })
}

/// Zone listings answered 200 and the catalog version, from the Prometheus text of `/metrics`.
fn parse_metrics(text: &str) -> (u64, Option<i64>) {
    let mut listings = 0;
    let mut version = None;
    for line in text.lines() {
        if let Some(series) = line.strip_prefix("appzone_http_requests_total{") {
            if series.contains("/zones\"") && series.contains("status=\"200\"") {
                listings += series
                    .rsplit(' ')
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .map_or(0, |v| v as u64);
            }
        } else if let Some(value) = line.strip_prefix("appzone_catalog_version ") {
            version = value.trim().parse().ok();
        }
    }
    (listings, version)
}

/// Waits until the server serves catalog `version` or a newer one.
fn wait_for_catalog_version(addr: SocketAddr, version: i64) -> Result<()> {
    let start = Instant::now();
    while start.elapsed() < REFRESH_TIMEOUT {
        if scrape(addr, start).is_ok_and(|s| s.catalog_version >= version) {
            return Ok(());
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    bail!(
        "the server did not serve catalog version {version} within {} s",
        REFRESH_TIMEOUT.as_secs()
    )
}

// ---------------------------------------------------------------------------------------------
// 2. API keys

fn keys(bins: &Binaries, work: &WorkDir, report: &mut ScaleReport) -> Result<()> {
    let small_db = work.path.join("keys-small.db");
    let small_url = sqlite_url(&small_db);
    let admin = seed::org_and_key(bins, &small_url)?;
    bulk_keys(&small_db, SMALL_KEYS - 1)?;
    eprintln!("bench: scale: creating {MEASURED_KEYS} keys with the operator CLI");
    let keys = (0..MEASURED_KEYS)
        .map(|i| {
            let name = format!("scale-{i}");
            let args = [
                "key", "create", "--org", "bench", "--role", "member", "--name", &name,
            ];
            cli(bins, &small_url, &args).map(|key| key.trim().to_owned())
        })
        .collect::<Result<Vec<_>>>()?;
    // The large database is a copy of the small one, so both hold the same measured keys.
    let large_db = work.path.join("keys-large.db");
    let quoted = large_db.display().to_string().replace('\'', "''");
    seed::sqlite(&small_db, &format!("VACUUM INTO '{quoted}';"))?;
    let (bulk_secs, ()) = timed(|| bulk_keys(&large_db, LARGE_KEYS - SMALL_KEYS))?;
    eprintln!("bench: scale: inserted the bulk keys in {bulk_secs:.1} s");
    let count = |db: &Path| -> Result<u64> {
        let rows = seed::sqlite(db, "SELECT count(*) FROM api_keys;")?;
        rows.trim()
            .parse()
            .with_context(|| format!("sqlite3 counted {rows:?} keys"))
    };
    let measured = MEASURED_KEYS as u64;
    let small_keys = count(&small_db)?.saturating_sub(measured);
    let large_keys = count(&large_db)?.saturating_sub(measured);

    let small_server = Server::appzone(bins, work, "appzone-keys-small", &small_url, None)?;
    let large_url = sqlite_url(&large_db);
    let large_server = Server::appzone(bins, work, "appzone-keys-large", &large_url, None)?;
    let [small, large] = key_requests([&small_server, &large_server], &admin, &keys)?;
    let sizes = format!(
        "{} vs {} keys",
        thousands(small_keys),
        thousands(large_keys)
    );
    report.row(
        format!(
            "first request with a new key (cache miss: one lookup by key id), median of \
             {MEASURED_KEYS}, {sizes}"
        ),
        (small.first(), large.first()),
        micros,
    );
    report.row(
        format!("the same key's second request (cached), median of {MEASURED_KEYS}, {sizes}"),
        (small.second(), large.second()),
        micros,
    );
    report.row(
        format!("what the lookup adds: median of each key's first − second request, {sizes}"),
        (small.lookup(), large.lookup()),
        micros,
    );
    report.note(format!(
        "Keys: both tables also hold the {MEASURED_KEYS} measured keys; each request is a new \
         connection (`Connection: close`), timed from connect to the end of the answer; the \
         bulk keys went in with one sqlite3 statement in {bulk_secs:.1} s."
    ));
    drop((small_server, large_server));

    let what = |request: &str| {
        format!("instructions per {request} (callgrind, user space, whole process), {sizes}")
    };
    let first = what("first request with a new key (cache miss)");
    if skipped_without_valgrind(&first, report) {
        return Ok(());
    }
    let mut counts = Vec::new();
    for (label, url) in [("small", &small_url), ("large", &large_url)] {
        let name = format!("callgrind-keys-{label}");
        let warm_up = |server: &Server| {
            (0..20).try_for_each(|_| timed_listing(server.addr, &admin).map(drop))
        };
        // Each key's first request, then each key's second: two counted steps.
        let requests = |server: &Server| -> Result<u64> {
            for key in &keys {
                timed_listing(server.addr, key)?;
            }
            Ok(keys.len() as u64)
        };
        counts.push(instructions::callgrind_steps(
            bins,
            work,
            &name,
            |bins| Server::appzone(bins, work, &name, url, None),
            warm_up,
            vec![Box::new(requests), Box::new(requests)],
        )?);
    }
    let [small, large] = &counts[..] else {
        bail!("callgrind counted {} key tables, not 2", counts.len());
    };
    let (&[small_first, small_second], &[large_first, large_second]) = (&small[..], &large[..])
    else {
        bail!("callgrind counted other than 2 steps per key table");
    };
    let count = |n: f64| thousands(n.round() as u64);
    report.row(first, (small_first, large_first), count);
    report.row(
        what("second request with the same key (cached)"),
        (small_second, large_second),
        count,
    );
    report.row(
        what("lookup: first − second request"),
        (small_first - small_second, large_first - large_second),
        count,
    );
    Ok(())
}

/// Inserts about `count` keys of organization `bench` with random key ids (12 hexadecimal
/// digits: valid base62) and digests. No one holds their secrets: they make the table and its
/// index as big as that many keys would. A key id drawn twice is skipped; callers count rows.
fn bulk_keys(db: &Path, count: u64) -> Result<()> {
    seed::sqlite(
        db,
        &format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) \
             INSERT OR IGNORE INTO api_keys (key_id, org_id, role, name, digest, created_at) \
             SELECT substr(hex(randomblob(9)), 1, 12), 'bench', 'member', 'bulk', \
             lower(hex(randomblob(32))), 0 FROM n;"
        ),
    )
    .map(drop)
}

/// What the measured keys' requests took on one server, in seconds.
#[derive(Default)]
struct KeyTimes {
    /// Each key's first request: a cache miss.
    first: Vec<f64>,
    /// The same key's next request: a cache hit.
    second: Vec<f64>,
}

impl KeyTimes {
    fn first(&self) -> f64 {
        middle(&self.first)
    }

    fn second(&self) -> f64 {
        middle(&self.second)
    }

    /// The median of each key's first request less its second: what the lookup adds.
    fn lookup(&self) -> f64 {
        let extra: Vec<f64> = self
            .first
            .iter()
            .zip(&self.second)
            .map(|(first, second)| first - second)
            .collect();
        middle(&extra)
    }
}

/// Each of `keys`' first and second request on each server. The servers take turns by batches
/// (A B A B), so that drift in the machine's speed hits both alike while a server answers a
/// batch warm (a server woken for every request would time its wake-ups more than its lookups).
fn key_requests(servers: [&Server; 2], admin: &str, keys: &[String]) -> Result<[KeyTimes; 2]> {
    // Warm-up with a key that is then cached: the database pool, the listing's path.
    for server in servers {
        for _ in 0..20 {
            timed_listing(server.addr, admin)?;
        }
    }
    let mut times = [KeyTimes::default(), KeyTimes::default()];
    for batch in keys.chunks(KEY_BATCH) {
        for (server, times) in servers.iter().zip(&mut times) {
            for key in batch {
                times.first.push(timed_listing(server.addr, key)?);
                times.second.push(timed_listing(server.addr, key)?);
            }
        }
    }
    Ok(times)
}

/// Seconds one zone listing with `key` takes, on a new connection; Err unless it answers 200.
fn timed_listing(addr: SocketAddr, key: &str) -> Result<f64> {
    let (secs, answer) = timed(|| http::get(addr, ZONES_PATH, &[("X-API-KEY", key)]))?;
    ensure!(
        answer.status == 200,
        "the zone listing answered {} with a measured key",
        answer.status
    );
    Ok(secs)
}

// ---------------------------------------------------------------------------------------------
// 3. Profiles

/// The counted delete bursts on one table, and the table's database.
struct Deletes {
    profiles: u64,
    runs: Vec<RunResult>,
    url: String,
    key: String,
}

impl Deletes {
    fn p50(&self) -> f64 {
        median(&mut self.runs.iter().map(|r| r.p50_us / 1e6).collect::<Vec<_>>())
    }

    fn p99(&self) -> f64 {
        median(&mut self.runs.iter().map(|r| r.p99_us / 1e6).collect::<Vec<_>>())
    }

    /// Deletes per second of the closed loop: connections / mean latency (Little's law; wrk
    /// sends a connection's next request as soon as its answer is in).
    fn rate(&self) -> f64 {
        let mut rates: Vec<f64> = self
            .runs
            .iter()
            .filter(|r| r.mean_us > 0.0)
            .map(|r| DELETE_CONNECTIONS as f64 / (r.mean_us / 1e6))
            .collect();
        median(&mut rates)
    }
}

fn profiles(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    report: &mut ScaleReport,
) -> Result<()> {
    let mut tables = Vec::new();
    for profiles in [SMALL_PROFILES, LARGE_PROFILES] {
        let db = work.path.join(format!("profiles-{profiles}.db"));
        let url = sqlite_url(&db);
        let key = seed::org_and_key(bins, &url)?;
        let (seed_secs, ()) = timed(|| seed::sqlite_profiles(&db, profiles))?;
        let name = format!("appzone-profiles-{profiles}");
        let server = Server::appzone(bins, work, &name, &url, None)?;
        // The small table is deleted from its start every burst and restored after it; the large
        // one from places spread over it, never the same profile twice.
        let restore = profiles < DELETES_PER_BURST * (DELETE_BURSTS + 1);
        let mut runs = Vec::new();
        for burst in 0..=DELETE_BURSTS {
            let first = if restore {
                1
            } else {
                1 + burst * (profiles / (DELETE_BURSTS + 1))
            };
            let load = Load::counted_deletes(DELETE_CONNECTIONS, &key, first, DELETES_PER_BURST);
            let run = wrk.lasting(BURST_SECS).run(&server, &load)?;
            if restore {
                // The server is idle between bursts; the timeout covers a last commit of its.
                seed::sqlite(
                    &db,
                    "PRAGMA busy_timeout = 5000; \
                     UPDATE profiles SET deleted_at = NULL WHERE deleted_at IS NOT NULL;",
                )?;
            }
            // Burst 0 warms the server up (its pool, the pages it reads) and is not counted.
            if burst > 0 {
                runs.push(run);
            }
        }
        let errors: u64 = runs.iter().map(|r| r.errors).sum();
        let short = runs
            .iter()
            .filter(|r| r.requests < DELETES_PER_BURST)
            .count();
        report.note(format!(
            "Profiles: {} seeded in {seed_secs:.1} s; {DELETE_BURSTS} counted bursts answered {} \
             deletes ({errors} errors){}.",
            thousands(profiles),
            thousands(runs.iter().map(|r| r.requests).sum()),
            if short > 0 {
                format!(", {short} burst(s) cut short by wrk's {BURST_SECS} s")
            } else {
                String::new()
            }
        ));
        tables.push(Deletes {
            profiles,
            runs,
            url,
            key,
        });
    }
    let [small, large] = &tables[..] else {
        bail!("measured {} profile tables, not 2", tables.len());
    };
    let sizes = format!(
        "{} vs {} profiles",
        thousands(small.profiles),
        thousands(large.profiles)
    );
    let conns = format!("{DELETE_CONNECTIONS} connections");
    report.row(
        format!("delete p50 latency ({conns}), {sizes}"),
        (small.p50(), large.p50()),
        millis,
    );
    report.row(
        format!("delete p99 latency ({conns}), {sizes}"),
        (small.p99(), large.p99()),
        millis,
    );
    report.row(
        format!("deletes/s ≈ {conns} / mean latency, {sizes}"),
        (small.rate(), large.rate()),
        per_second,
    );

    let what = format!(
        "instructions per delete (callgrind, user space, whole process; one connection per \
         delete, one at a time), {sizes}"
    );
    if skipped_without_valgrind(&what, report) {
        return Ok(());
    }
    let counts = [small, large]
        .into_iter()
        .map(|table| delete_instructions(bins, work, table))
        .collect::<Result<Vec<_>>>()?;
    match counts[..] {
        [small, large] => report.row(what, (small, large), |n| thousands(n.round() as u64)),
        _ => bail!("callgrind counted {} profile tables, not 2", counts.len()),
    }
    Ok(())
}

/// Instructions per delete of a profile on `table`'s database under callgrind: a warm-up of
/// [`COUNTED_DELETES`] / 10 deletes, then [`COUNTED_DELETES`] counted, each of a profile not
/// deleted before (the small table was restored after its last burst; the large one is
/// deleted from halfway between two of its bursts' places).
fn delete_instructions(bins: &Binaries, work: &WorkDir, table: &Deletes) -> Result<f64> {
    let restored = table.profiles < DELETES_PER_BURST * (DELETE_BURSTS + 1);
    let first = if restored {
        1
    } else {
        table.profiles / (DELETE_BURSTS + 1) / 2
    };
    let warm_up = COUNTED_DELETES / 10;
    let delete = |server: &Server, ids: std::ops::Range<u64>| -> Result<u64> {
        for n in ids.clone() {
            let path = format!("/api/v1/applications/profiles/bench-{n}");
            let answer = http::request(server.addr, "DELETE", &path, &[("X-API-KEY", &table.key)])?;
            ensure!(
                answer.status == 204,
                "deleting bench-{n} answered {}, not 204",
                answer.status
            );
        }
        Ok(ids.end - ids.start)
    };
    let name = format!("callgrind-deletes-{}", table.profiles);
    let counted = instructions::callgrind_steps(
        bins,
        work,
        &name,
        |bins| Server::appzone(bins, work, &name, &table.url, None),
        |server| delete(server, first..first + warm_up).map(drop),
        vec![Box::new(|server: &Server| {
            delete(server, first + warm_up..first + warm_up + COUNTED_DELETES)
        })],
    )?;
    match counted[..] {
        [per_delete] => Ok(per_delete),
        _ => bail!("callgrind counted {name} more than once"),
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Idle connections

fn idle_connections(bins: &Binaries, work: &WorkDir, report: &mut ScaleReport) -> Result<()> {
    // Both ends of every connection are in this machine: this process and the server (which
    // inherits its limit) each hold one descriptor per connection.
    let limit = open_files_limit().unwrap_or(1024);
    let count = IDLE_CONNECTIONS.min(limit.saturating_sub(FD_HEADROOM));
    let what = |count: usize| {
        format!(
            "server RSS, 0 vs {} idle keep-alive connections",
            thousands(count as u64)
        )
    };
    if count < IDLE_CONNECTIONS / 10 {
        report.skipped(
            what(IDLE_CONNECTIONS),
            &format!(
                "the open-files limit is {limit}; raise it (`ulimit -n {}`) and run again",
                IDLE_CONNECTIONS + FD_HEADROOM
            ),
        );
        return Ok(());
    }
    if count < IDLE_CONNECTIONS {
        report.note(format!(
            "Idle connections: {count} instead of {IDLE_CONNECTIONS}: the open-files limit is \
             {limit} (`ulimit -n {}` for all of them).",
            IDLE_CONNECTIONS + FD_HEADROOM
        ));
    }
    let url = sqlite_url(&work.path.join("idle.db"));
    // The header-read timeout also closes a kept-alive connection quiet for that long: far
    // above the measurement, so the server holds every connection while it is measured.
    let server = Server::appzone_with(
        bins,
        work,
        "appzone-idle",
        &url,
        &["--header-read-timeout-secs", "600"],
        "/readyz",
    )?;
    // The same requests first on short connections, so what any request makes the server
    // allocate once is in the baseline, not counted as the idle connections'.
    for _ in 0..100 {
        http::get(server.addr, "/healthz", &[])?;
    }
    std::thread::sleep(SETTLE);
    let (rss_0, fds_0) = (server.rss_kb(), open_fds(server.pid()));
    let connections = open_idle_connections(server.addr, count)?;
    std::thread::sleep(SETTLE);
    let (rss_n, fds_n) = (server.rss_kb(), open_fds(server.pid()));
    drop(connections);
    std::thread::sleep(Duration::from_secs(2));
    let rss_2 = server.rss_kb();
    std::thread::sleep(Duration::from_secs(8));
    let (rss_10, fds_10) = (server.rss_kb(), open_fds(server.pid()));
    let kb = |kb: u64| kb as f64;
    report.row(what(count), (kb(rss_0), kb(rss_n)), mebibytes);
    report.row_text(
        "server RSS per idle connection: (RSS with them − RSS without) / connections".to_owned(),
        "—".to_owned(),
        format!("{:.1} KiB", (kb(rss_n) - kb(rss_0)) / count.max(1) as f64),
        None,
    );
    report.row(
        format!(
            "server RSS, 0 connections vs 2 s after the {} closed",
            thousands(count as u64)
        ),
        (kb(rss_0), kb(rss_2)),
        mebibytes,
    );
    report.row(
        format!(
            "server RSS, 0 connections vs 10 s after the {} closed",
            thousands(count as u64)
        ),
        (kb(rss_0), kb(rss_10)),
        mebibytes,
    );
    let fds = |fds: Option<usize>| fds.map_or("?".to_owned(), |n| thousands(n as u64));
    report.note(format!(
        "Idle connections: the server held {} file descriptors without them, {} with them and \
         {} 10 s after they closed (open-files limit {limit}).",
        fds(fds_0),
        fds(fds_n),
        fds(fds_10),
    ));
    Ok(())
}

/// `count` connections to `addr`, each of which sent one keep-alive `GET /healthz` and read its
/// answer, left open and silent. Opened one after another, so the server's accept backlog never
/// overflows.
fn open_idle_connections(addr: SocketAddr, count: usize) -> Result<Vec<TcpStream>> {
    let request = format!("GET /healthz HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let mut connections = Vec::with_capacity(count);
    for i in 0..count {
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .with_context(|| format!("idle connection {i}: connect {addr}"))?;
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .context("set a read timeout")?;
        stream
            .write_all(request.as_bytes())
            .with_context(|| format!("idle connection {i}: send"))?;
        read_one_answer(&mut stream).with_context(|| format!("idle connection {i}"))?;
        connections.push(stream);
    }
    Ok(connections)
}

/// Reads one HTTP/1.1 answer with a `Content-Length` body, and no more: the connection stays
/// usable (and open).
fn read_one_answer(stream: &mut TcpStream) -> Result<()> {
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = stream.read(&mut buf).context("read the answer")?;
        ensure!(n > 0, "the server closed the connection before answering");
        raw.extend_from_slice(&buf[..n]);
        let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&raw[..end]);
        ensure!(
            head.starts_with("HTTP/1.1 200"),
            "the server answered {:?}",
            head.lines().next().unwrap_or_default()
        );
        let length = head
            .lines()
            .filter_map(|line| line.split_once(':'))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
            .and_then(|(_, value)| value.trim().parse::<usize>().ok())
            .unwrap_or(0);
        if raw.len() >= end + 4 + length {
            return Ok(());
        }
    }
}

/// This process's soft limit of open files (`/proc/self/limits`), which the server inherits.
fn open_files_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    match line.split_whitespace().nth(3)? {
        "unlimited" => Some(usize::MAX),
        soft => soft.parse().ok(),
    }
}

/// File descriptors process `pid` holds.
fn open_fds(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(Iterator::count)
}

// ---------------------------------------------------------------------------------------------
// 5. Wrong-key flood

fn wrong_key_flood(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    report: &mut ScaleReport,
) -> Result<()> {
    let url = sqlite_url(&work.path.join("flood.db"));
    let key = seed::org_and_key(bins, &url)?;
    let server = Server::appzone(bins, work, "appzone-flood", &url, None)?;
    // What any load makes the server allocate belongs to the baseline, not to the flood.
    let valid = Load::get(
        LISTING_CONNECTIONS,
        ZONES_PATH,
        &[&format!("X-API-KEY: {key}")],
    );
    wrk.lasting(2).run(&server, &valid)?;
    std::thread::sleep(SETTLE);
    let before = server.rss_kb();

    let flood = Load::wrong_keys(LISTING_CONNECTIONS, ZONES_PATH);
    let sampler = RssSampler::start(server.pid());
    let runs = flood_runs(wrk, &server, &flood);
    // Stopped whatever happened, so its thread ends.
    let peak = sampler.stop().into_iter().max().unwrap_or(0);
    let runs = runs?;
    let after = server.rss_kb();
    std::thread::sleep(AFTER_FLOOD);
    let later = server.rss_kb();

    let requests: u64 = runs.iter().map(|r| r.requests).sum();
    let flood_secs: f64 = runs.iter().map(|r| r.seconds).sum();
    let kb = |kb: u64| kb as f64;
    report.row(
        format!(
            "server RSS before vs right after {} wrong-key requests",
            thousands(requests)
        ),
        (kb(before), kb(after)),
        mebibytes,
    );
    report.row(
        format!(
            "server RSS before vs {} s after the flood",
            AFTER_FLOOD.as_secs()
        ),
        (kb(before), kb(later)),
        mebibytes,
    );
    report.note(format!(
        "Wrong-key flood: {} requests in {:.0} s ({} req/s), RSS peak {} during it (sampled \
         every 250 ms). All answers are refusals (401, then 429 from the per-address limit), \
         so wrk counts every one as a status error.",
        thousands(requests),
        flood_secs,
        per_second(requests as f64 / flood_secs.max(1e-9)),
        mebibytes(kb(peak)),
    ));
    Ok(())
}

/// wrk runs of `flood` until about [`FLOOD_REQUESTS`] were answered. wrk runs for a time, not a
/// count: a short run gives the rate, and each next one is sized from the rate so far, within
/// [`FLOOD_MAX_SECS`] and [`FLOOD_MAX_RUNS`] in all.
fn flood_runs(wrk: &Wrk<'_>, server: &Server, flood: &Load<'_>) -> Result<Vec<RunResult>> {
    let mut runs = vec![wrk.lasting(FLOOD_PROBE_SECS).run(server, flood)?];
    loop {
        let sent: u64 = runs.iter().map(|r| r.requests).sum();
        let secs: f64 = runs.iter().map(|r| r.seconds).sum();
        let budget = FLOOD_MAX_SECS - secs;
        if sent >= FLOOD_REQUESTS || budget < 1.0 || runs.len() >= FLOOD_MAX_RUNS {
            return Ok(runs);
        }
        let rate = sent as f64 / secs.max(1e-3);
        let next = ((FLOOD_REQUESTS - sent) as f64 / rate.max(1.0))
            .ceil()
            .clamp(1.0, budget) as u64;
        runs.push(wrk.lasting(next).run(server, flood)?);
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// What an operator CLI command on `url` prints; Err when it fails or outlives [`CLI_TIMEOUT`].
fn cli(bins: &Binaries, url: &str, args: &[&str]) -> Result<String> {
    stdout_of(bins.server_cli(url).args(args), CLI_TIMEOUT)
}

fn sqlite_url(db: &Path) -> String {
    format!("sqlite://{}", db.display())
}

/// A path of the work directory as a command-line argument (the work directory's paths are
/// ours, so nothing is lost by showing them).
fn arg(path: &Path) -> String {
    path.display().to_string()
}

fn write(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Seconds `f` took, and what it returned.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let started = Instant::now();
    let value = f()?;
    Ok((started.elapsed().as_secs_f64(), value))
}

/// The median of a few values.
fn middle(values: &[f64]) -> f64 {
    median(&mut values.to_vec())
}

fn range(values: &[f64]) -> String {
    let (lo, hi) = min_max(values);
    if values.is_empty() {
        "—".to_owned()
    } else {
        format!("{}–{}", seconds(lo), seconds(hi))
    }
}

fn join(values: &[f64], show: fn(f64) -> String) -> String {
    if values.is_empty() {
        return "none".to_owned();
    }
    values
        .iter()
        .map(|v| show(*v))
        .collect::<Vec<_>>()
        .join(" and ")
}

fn seconds(secs: f64) -> String {
    if secs < 1.0 {
        format!("{:.1} ms", secs * 1e3)
    } else {
        format!("{secs:.2} s")
    }
}

fn millis(secs: f64) -> String {
    format!("{:.2} ms", secs * 1e3)
}

fn micros(secs: f64) -> String {
    format!("{:.0} µs", secs * 1e6)
}

fn per_second(rate: f64) -> String {
    thousands(rate.round() as u64)
}

fn mebibytes(kb: f64) -> String {
    format!("{:.1} MiB", kb / 1024.0)
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn builtin() -> Value {
        serde_json::json!({"providers": [
            {"id": "aws", "name": "AWS", "regions": [
                {"id": "us-east-1", "name": "N. Virginia", "zones": ["us-east-1a", "us-east-1b"]}
            ]},
            {"id": "gcp", "name": "GCP", "regions": [
                {"id": "europe-west1", "name": "Belgium", "zones": ["europe-west1-b"]}
            ]}
        ]})
    }

    #[test]
    fn scaled_catalogs_keep_the_originals_and_copy_them_under_suffixed_ids() {
        let ten = scaled(&builtin(), 10).unwrap();
        let ids: Vec<&str> = ten["providers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids.len(), 20);
        assert_eq!(&ids[..4], ["aws", "gcp", "aws-x1", "gcp-x1"]);
        assert_eq!(ids[19], "gcp-x9");
        assert_eq!(zone_count(&ten), 30);
        assert_eq!(scaled(&builtin(), 1).unwrap(), builtin());
        assert!(scaled(&serde_json::json!({}), 2).is_err());
    }

    #[test]
    fn an_extra_zone_goes_to_the_last_provider_only() {
        let one = with_extra_zone(&builtin(), 3).unwrap();
        assert_eq!(zone_count(&one), 4);
        assert_eq!(
            one["providers"][1]["regions"][0]["zones"][1],
            "scale-extra-3"
        );
        assert_eq!(one["providers"][0], builtin()["providers"][0]);
    }

    #[test]
    fn reads_listings_and_the_catalog_version_from_metrics() {
        let text = "# TYPE appzone_http_requests_total counter\n\
            appzone_http_requests_total{method=\"GET\",route=\"/api/v1/providers/{providerId}/regions/{regionId}/zones\",status=\"200\"} 1200\n\
            appzone_http_requests_total{method=\"GET\",route=\"/api/v1/providers/{providerId}/regions/{regionId}/zones\",status=\"401\"} 7\n\
            appzone_http_requests_total{method=\"GET\",route=\"/metrics\",status=\"200\"} 30\n\
            appzone_catalog_version 4\n";
        assert_eq!(parse_metrics(text), (1200, Some(4)));
        assert_eq!(parse_metrics(""), (0, None));
    }

    #[test]
    fn counted_rates_span_the_samples_around_an_interval() {
        let sample = |at: f64, listings: u64, catalog_version: i64| Sample {
            at,
            listings,
            catalog_version,
        };
        let window = Window {
            run: RunResult::default(),
            samples: vec![
                sample(0.9, 100, 1),
                sample(1.1, 300, 1),
                sample(2.0, 1000, 1),
                sample(3.1, 2000, 2),
            ],
            import: Some((1.0, 2.5)),
        };
        // From the sample at 0.9 s to the one at 3.1 s.
        let rate = window.counted_rate(1.0, 2.5).unwrap();
        assert!((rate - 1900.0 / 2.2).abs() < 1e-6, "{rate}");
        assert!(window.counted_rate(0.5, 2.0).is_none());
        assert!(window.counted_rate(1.0, 4.0).is_none());
        let refreshed = window.refreshed_after_import().unwrap();
        assert!((refreshed - 0.6).abs() < 1e-9);
    }

    #[test]
    fn formats_for_the_table() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(10_000_000), "10,000,000");
        assert_eq!(seconds(0.0213), "21.3 ms");
        assert_eq!(seconds(3.856), "3.86 s");
        assert_eq!(range(&[0.03, 0.021, 0.025]), "21.0 ms–30.0 ms");
        assert_eq!(ratio(2.0, 5.0), Some(2.5));
        assert_eq!(ratio(0.0, 5.0), None);
    }

    #[test]
    fn the_method_names_the_settings_it_ran_with() {
        let text = method();
        assert!(text.contains("`{\"providers\": []}`"), "{text}");
        assert!(text.contains(&format!("{DELETE_BURSTS} counted")), "{text}");
        assert!(text.contains("1,000,000"), "{text}");
    }

    #[test]
    fn reads_one_answer_and_keeps_the_connection() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut buf = [0u8; 1024];
            let _ = stream.read(&mut buf).unwrap();
            // The head and the body in two writes: the reader must wait for the body.
            stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
                .unwrap();
            std::thread::sleep(Duration::from_millis(20));
            stream.write_all(b"ok").unwrap();
            // Open until the client closes.
            stream.read(&mut buf).unwrap()
        });
        let connections = open_idle_connections(addr, 1).unwrap();
        assert_eq!(connections.len(), 1);
        drop(connections);
        assert_eq!(
            server.join().unwrap(),
            0,
            "the client sent more than one request"
        );
    }

    #[test]
    fn reads_the_open_files_limit() {
        assert!(open_files_limit().is_some_and(|n| n > 0));
    }
}

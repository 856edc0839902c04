//! The load benchmarks: appzone (production defaults but the per-key rate limit, and again with
//! `APPZONE_LOG=warn`) against bare axum routes answering appzone's bytes, A B A B over the
//! rounds: the zone listing at 16, 64 and 256 connections and conditional (304), the discovery
//! listings, the zone identities; with `--callgrind` the instruction counts; then appzone
//! alone: deletes, a mixed load, a long run for memory and the client, on SQLite, and the
//! deletes again on PostgreSQL when it answers. Prints a table of every scenario and server
//! (medians over the rounds, with their range) and the appzone/baseline ratios.

use anyhow::{ensure, Result};

use super::offerings;
use super::servers::{capture, Server};
use super::wrk::{median, spread, Load, Run, Wrk};
use super::{insert_profiles, instructions, sqlite, BenchArgs, Binaries, WorkDir, ZONES};
use crate::http;

const APPZONE: &str = "appzone";
const QUIET: &str = "appzone, APPZONE_LOG=warn";
const BASELINE: &str = "bare axum baseline";
/// Delete ids reserved per run per second of run time: far above any delete rate seen, so that
/// a run never runs out of distinct profiles (running out would show as 404 errors).
const DELETE_IDS_PER_SECOND: u64 = 20_000;
/// us-east-1's zone identities: plain, with the zone mapping `IDENTITY_MAPPING_SQL` adds,
/// filtered (every type, two ids), with two mappings side by side asking one name (the
/// cross-account question) and asking where both offer a type; and the instance types of one
/// mapping (the offerings `offerings::store_bench_offerings` stores: recorded AWS data, 52
/// types).
const IDENTITIES: [(&str, &str); 6] = [
    ("list zone identities", "zone-identities"),
    (
        "list zone identities, with a mapping",
        "zone-identities?mapping=bench",
    ),
    (
        "list zone identities, filtered",
        "zone-identities?zone_type=all&zone_id=use1-az1,use1-bos1-az1",
    ),
    (
        "list zone identities, two mappings side by side",
        "zone-identities?mapping=bench&mapping=bench2&zone_name=us-east-1a",
    ),
    (
        "list zone identities, offers across two mappings",
        "zone-identities?mapping=bench&mapping=bench2&offers=p5.48xlarge",
    ),
    ("list instance types", "instance-types?mapping=bench"),
];
/// The pairs of the mappings: us-east-1's six AZ IDs paired with letters.
const BENCH_PAIRS: &str = "[{\"region\":\"us-east-1\",\"zones\":[\
    {\"zone_id\":\"use1-az1\",\"zone_name\":\"us-east-1a\"},\
    {\"zone_id\":\"use1-az2\",\"zone_name\":\"us-east-1b\"},\
    {\"zone_id\":\"use1-az3\",\"zone_name\":\"us-east-1c\"},\
    {\"zone_id\":\"use1-az4\",\"zone_name\":\"us-east-1d\"},\
    {\"zone_id\":\"use1-az5\",\"zone_name\":\"us-east-1e\"},\
    {\"zone_id\":\"use1-az6\",\"zone_name\":\"us-east-1f\"}]}]";

/// The SQL that stores the mappings `bench` and `bench2` of the bench organization.
fn identity_mapping_sql() -> String {
    ["bench", "bench2"]
        .map(|id| {
            format!(
                "INSERT INTO zone_mappings (org_id, id, provider, label, pairs, imported_at) \
                 VALUES ('bench', '{id}', 'aws', '{id}', '{BENCH_PAIRS}', 0);"
            )
        })
        .join("\n")
}

/// A scenario: its name, its load and the servers it runs against in turn, with their labels.
type Scenario<'a> = (&'a str, Load, Vec<(&'a Server, &'static str)>);

/// A scenario's runs on one server at a number of connections, in round order.
type Row = (String, &'static str, usize, Vec<Run>);

/// The runs by scenario, server and connections, in the order first measured; and notes.
#[derive(Default)]
struct Results {
    rows: Vec<Row>,
    notes: Vec<String>,
}

impl Results {
    fn add(&mut self, scenario: &str, server: &'static str, conns: usize, run: Run) {
        let (rps, p99, cpu) = (run.rps(), run.p99_us / 1e3, run.cpu_us_per_request);
        eprintln!("bench:   {server:<26} {rps:>8.0}/s  p99 {p99:.2} ms  cpu {cpu:.1} µs/req");
        match self.find(scenario, server, conns) {
            Some(row) => self.rows[row].3.push(run),
            None => self
                .rows
                .push((scenario.to_owned(), server, conns, vec![run])),
        }
    }

    fn find(&self, scenario: &str, server: &str, conns: usize) -> Option<usize> {
        let key = (scenario, server, conns);
        self.rows
            .iter()
            .position(|r| (r.0.as_str(), r.1, r.2) == key)
    }

    fn runs(&self, scenario: &str, server: &str, conns: usize) -> &[Run] {
        let row = self.find(scenario, server, conns);
        row.map_or(&[], |row| &self.rows[row].3)
    }

    /// Rounds of `server` alone under `load(first)`, each on profiles no earlier run touched,
    /// from `first` up; returns where the next run may start.
    fn fresh_rounds(
        &mut self,
        wrk: &Wrk<'_>,
        (rounds, server, scenario): (usize, &Server, &str),
        mut first: u64,
        load: impl Fn(u64) -> Load,
    ) -> Result<u64> {
        for round in 1..=rounds {
            eprintln!("bench: round {round}/{rounds}: {scenario}");
            let run = wrk.run(server, &load(first))?;
            self.add(scenario, APPZONE, load(first).connections, run);
            first += DELETE_IDS_PER_SECOND * wrk.seconds;
        }
        Ok(first)
    }

    fn median_rps(&self, scenario: &str) -> f64 {
        median(self.runs(scenario, APPZONE, 64).iter().map(Run::rps))
    }

    fn print(&self) {
        println!(
            "\n| scenario | server | conns | req/s median [min–max] | p50 ms | p99 ms | p99.9 ms \
             | errors | RSS MB | server CPU µs/req |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|"
        );
        for (scenario, server, conns, runs) in &self.rows {
            let med = |figure: fn(&Run) -> f64| median(runs.iter().map(figure));
            let (rps, lo, hi) = spread(runs.iter().map(Run::rps));
            let errors: u64 = runs.iter().map(|r| r.errors).sum();
            let rss = runs.iter().map(|r| r.rss_kb).max().unwrap_or(0) as f64 / 1024.0;
            let (p50, p99, p999) = (med(|r| r.p50_us), med(|r| r.p99_us), med(|r| r.p999_us));
            println!(
                "| {scenario} | {server} | {conns} | {rps:.0} [{lo:.0}–{hi:.0}] | {:.2} | {:.2} \
                 | {:.2} | {errors} | {rss:.1} | {:.1} |",
                p50 / 1e3,
                p99 / 1e3,
                p999 / 1e3,
                med(|r| r.cpu_us_per_request)
            );
        }
        println!(
            "\nappzone / baseline, ratio of medians [per-round range]:\n\n| scenario | conns | \
             throughput | p99 | server CPU per request |\n|---|--:|--:|--:|--:|"
        );
        for (scenario, _, conns, appzone) in self.rows.iter().filter(|r| r.1 == APPZONE) {
            let baseline = self.runs(scenario, BASELINE, *conns);
            let ratio = |figure: fn(&Run) -> f64| {
                let of = |runs: &[Run]| median(runs.iter().map(figure));
                let rounds = appzone.iter().zip(baseline);
                let (_, lo, hi) = spread(rounds.map(|(a, b)| figure(a) / figure(b)));
                format!("{:.2}× [{lo:.2}–{hi:.2}]", of(appzone) / of(baseline))
            };
            if !baseline.is_empty() {
                let cells = [
                    ratio(Run::rps),
                    ratio(|r| r.p99_us),
                    ratio(|r| r.cpu_us_per_request),
                ];
                println!("| {scenario} | {conns} | {} |", cells.join(" | "));
            }
        }
        for note in &self.notes {
            println!("\n{note}");
        }
    }
}

pub(super) fn run(args: &BenchArgs, bins: &Binaries, work: &WorkDir) -> Result<()> {
    let mut results = Results::default();
    let mut measured = on_sqlite(args, bins, work, &mut results);
    if measured.is_ok() && !args.no_postgres && !args.listing_only {
        if super::postgres_reachable(&args.postgres) {
            measured = super::in_fresh_schema(&args.postgres, |url, schema| {
                postgres_deletes(args, bins, work, (url, schema), &mut results)
            });
        } else {
            let note = format!(
                "PostgreSQL deletes skipped: {} does not answer.",
                args.postgres
            );
            results.notes.push(note);
        }
    }
    // What was measured is shown even when a later part failed.
    results.print();
    measured
}

fn on_sqlite(
    args: &BenchArgs,
    bins: &Binaries,
    work: &WorkDir,
    results: &mut Results,
) -> Result<()> {
    let url = work.sqlite_url("appzone.db");
    let key = bins.org_and_key(&url)?;
    // Profiles for the delete runs and the mixed runs (a tenth of their requests delete).
    let per_run = DELETE_IDS_PER_SECOND * args.duration();
    insert_profiles(&url, None, per_run * (2 * args.rounds() as u64 + 1))?;
    sqlite(&url, &identity_mapping_sql())?;
    let appzone = Server::appzone(bins, work, "appzone", &url, &[])?;
    let log_warn = bins.under(&["env", "APPZONE_LOG=warn"]);
    let quiet = Server::appzone(&log_warn, work, "appzone-log-warn", &url, &[])?;
    offerings::store_bench_offerings(&appzone, &key)?;
    let zones = capture(&appzone, ZONES.1, &key, work)?;
    let baseline = Server::baseline(bins, work, "baseline", ZONES, &zones)?;

    let wrk = Wrk {
        dir: &work.path,
        seconds: args.duration(),
    };
    let list = |connections| Load::new(connections, ZONES.1, &["list", &key]);
    let warm_up = |server: &Server, load: &Load| wrk.lasting(args.warmup()).run(server, load);
    for server in [&appzone, &quiet, &baseline] {
        warm_up(server, &list(64))?;
    }
    let rss_after_warmup = appzone.rss_kb();

    // The discovery listings, each against a baseline of its own; the zone identities alone.
    let mut discovery = Vec::new();
    for (name, path) in [
        ("list providers", "/api/v1/providers"),
        ("list regions", "/api/v1/providers/aws/regions"),
    ] {
        if !args.listing_only {
            let captured = capture(&appzone, path, &key, work)?;
            let server = Server::baseline(bins, work, name, (path, path), &captured)?;
            warm_up(&server, &list(64).on(path))?;
            discovery.push((name, path, server));
        }
    }
    let mut scenarios: Vec<Scenario<'_>> = Vec::new();
    for (name, path, server) in &discovery {
        scenarios.push((
            name,
            list(64).on(path),
            vec![(&appzone, APPZONE), (server, BASELINE)],
        ));
    }
    for (name, path) in IDENTITIES.map(|(name, leaf)| (name, ZONES.1.replace("zones", leaf))) {
        let status = http::get(appzone.addr, &path, &[("X-API-KEY", &key)])?.status;
        ensure!(status == 200, "appzone answered {status} to {path}");
        scenarios.push((name, list(64).on(&path), vec![(&appzone, APPZONE)]));
    }
    let all = vec![(&appzone, APPZONE), (&quiet, QUIET), (&baseline, BASELINE)];
    let connections: &[usize] = [&[16, 64, 256][..], &[64]][usize::from(args.listing_only)];
    for &conns in connections {
        // Only at 64 connections appzone without its request log too, to show what it costs.
        let servers = all.iter().filter(|s| conns == 64 || s.1 != QUIET);
        scenarios.push(("list zones", list(conns), servers.copied().collect()));
    }
    if !args.listing_only {
        let conditional = Load::new(64, ZONES.1, &["list", &key, &zones.etag]);
        scenarios.push(("list zones, If-None-Match (304)", conditional, all.clone()));
    }
    for round in 1..=args.rounds() {
        for (name, load, servers) in &scenarios {
            let conns = load.connections;
            eprintln!(
                "bench: round {round}/{}: {name} at {conns} conns",
                args.rounds()
            );
            for (server, label) in servers {
                results.add(name, label, conns, wrk.run(server, load)?);
            }
        }
    }
    for (name, _) in IDENTITIES {
        let (rps, zones_rps) = (results.median_rps(name), results.median_rps("list zones"));
        // Each round's ratio too: the machine's speed drifts between rounds (BENCHMARKS.md),
        // and a ratio of medians alone hides how far.
        let zones = results.runs("list zones", APPZONE, 64);
        let rounds = results.runs(name, APPZONE, 64).iter().zip(zones);
        let (_, lo, hi) = spread(rounds.map(|(run, zones)| run.rps() / zones.rps()));
        results.notes.push(format!(
            "{name}: {:.3}× the zone listing's throughput at 64 connections ({rps:.0} against \
             {zones_rps:.0} requests/s, medians of the same run; {lo:.3}× to {hi:.3}× round by \
             round).",
            rps / zones_rps
        ));
    }
    if args.callgrind {
        let (a, b) = instructions::listing_counts(bins, work, &url, &key, &zones)?;
        results.notes.push(format!(
            "User-space instructions per zone listing (callgrind, 8 connections): appzone \
             {a:.0}, baseline {b:.0}: {:.3}×.",
            a / b
        ));
    }
    if args.listing_only {
        return Ok(());
    }

    let sqlite_deletes = (args.rounds(), &appzone, "delete (SQLite)");
    let next = results.fresh_rounds(&wrk, sqlite_deletes, 1, deletes(&key))?;
    let tombstones = "SELECT count(*) FROM profiles WHERE deleted_at IS NOT NULL;";
    let tombstones = sqlite(&url, tombstones)?;
    let deletes = results.runs("delete (SQLite)", APPZONE, 32).iter();
    let counted: u64 = deletes.map(|r| r.requests - r.errors).sum();
    results.notes.push(format!(
        "SQLite delete check: {} tombstones in the database; wrk counted {counted} successful \
         deletes (requests in flight when a run stops commit without being counted).",
        tombstones.trim()
    ));
    let mixed = |first: u64| {
        Load::new(
            64,
            ZONES.1,
            &["mixed", &key, &first.to_string(), &zones.etag],
        )
    };
    let name = "mixed 80% list / 10% 304 / 10% delete (SQLite)";
    results.fresh_rounds(&wrk, (args.rounds(), &appzone, name), next, mixed)?;
    if args.long_requests() > 0 {
        let note = long_run(args, &wrk, &appzone, &list(64), rss_after_warmup, results)?;
        results.notes.push(note);
    }
    if !args.no_client {
        // The client against a raw reqwest GET, calls alternating on one warm connection each;
        // it prints its own summary.
        let mut client = bins.command("appzone-bench-client");
        client.args([
            "--url",
            &format!("http://{}", appzone.addr),
            "--api-key",
            &key,
        ]);
        if args.quick {
            client.args(["--requests", "300", "--rounds", "2"]);
        }
        crate::process::run(&mut client)?;
    }
    // The stores with bounds, on a server and database of their own (its peak memory is theirs).
    let stores_url = work.sqlite_url("stores.db");
    let stores_key = bins.org_and_key(&stores_url)?;
    let stores = Server::appzone(bins, work, "appzone-stores", &stores_url, &[])?;
    results
        .notes
        .extend(offerings::store_times(&stores, &stores_key)?);
    let peaks = [&appzone, &quiet, &baseline]
        .map(|s| format!("{} {:.1} MB", s.name, s.status_kb("VmHWM:") as f64 / 1024.0));
    let peaks = format!("Peak RSS (VmHWM): {}.", peaks.join(", "));
    results.notes.push(peaks);
    Ok(())
}

/// About `args.long_requests()` listings in two halves, appzone's RSS sampled throughout.
fn long_run(
    args: &BenchArgs,
    wrk: &Wrk<'_>,
    appzone: &Server,
    load: &Load,
    rss_after_warmup: u64,
    results: &Results,
) -> Result<String> {
    // Its length from the rate the rounds measured, bounded both ways.
    let rps = results.median_rps("list zones").max(1_000.0);
    let half = (args.long_requests() as f64 / rps * 1.05 / 2.0)
        .ceil()
        .clamp(3.0, 300.0) as u64;
    eprintln!("bench: long run: 2 × {half} s at 64 connections");
    let rss_before = appzone.rss_kb();
    let (first, a) = appzone.peak_rss_during(|| wrk.lasting(half).run(appzone, load));
    let (second, b) = appzone.peak_rss_during(|| wrk.lasting(half).run(appzone, load));
    let (a, b, mb) = (a?, b?, |kb: u64| kb as f64 / 1024.0);
    Ok(format!(
        "Memory through {} listings at 64 connections ({:.0} req/s, {} errors): RSS after the \
         warm-up {:.1} MB, before the run {:.1} MB, peak of the first half {:.1} MB, of the \
         second {:.1} MB, after {:.1} MB (target: below 40 MB, no growth).",
        a.requests + b.requests,
        (a.rps() + b.rps()) / 2.0,
        a.errors + b.errors,
        mb(rss_after_warmup),
        mb(rss_before),
        mb(first),
        mb(second),
        mb(appzone.rss_kb())
    ))
}

/// Deletes on PostgreSQL, in `schema`, which `url` has as its search_path.
fn postgres_deletes(
    args: &BenchArgs,
    bins: &Binaries,
    work: &WorkDir,
    (url, schema): (&str, &str),
    results: &mut Results,
) -> Result<()> {
    let key = bins.org_and_key(url)?;
    let per_run = DELETE_IDS_PER_SECOND * args.duration();
    insert_profiles(
        &args.postgres,
        Some(schema),
        per_run * (args.rounds() as u64 + 1),
    )?;
    let server = Server::appzone(bins, work, "appzone-postgres", url, &[])?;
    let wrk = Wrk {
        dir: &work.path,
        seconds: args.duration(),
    };
    wrk.lasting(args.warmup()).run(&server, &deletes(&key)(1))?;
    let scenario = (args.rounds(), &server, "delete (PostgreSQL)");
    results
        .fresh_rounds(&wrk, scenario, 1 + per_run, deletes(&key))
        .map(drop)
}

/// Deletes of profiles `bench-<first>` up, each once, on 32 connections.
fn deletes(key: &str) -> impl Fn(u64) -> Load + '_ {
    move |first| Load::new(32, "/", &["delete", key, &first.to_string()])
}

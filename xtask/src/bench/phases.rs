//! The phases of a run: everything measured on SQLite, then the delete scenario again on
//! PostgreSQL.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};

use super::load::{key_values, Load, Wrk};
use super::options::Options;
use super::procfs::RssSampler;
use super::report::{LongRun, Report, Target};
use super::seed::{self, DELETE_IDS_PER_SECOND};
use super::servers::{capture, replaying_baseline, Server};
use super::{instructions, Binaries, WorkDir};
use super::{PROVIDERS_PATH, REGIONS_PATH, ZONES, ZONES_PATH};
use crate::http;
use crate::process::{output, show};

/// The client benchmark's sequential calls, all rounds.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(600);

/// One SQLite database: the listing A/B (zones at three connection counts and conditional,
/// the discovery listings), the profilers asked for, then appzone alone: deletes, the mixed
/// load, the long run for memory, and the client benchmark.
pub(super) fn sqlite(
    opts: &Options,
    bins: &Binaries,
    work: &WorkDir,
    report: &mut Report,
) -> Result<()> {
    let db = work.path.join("appzone.db");
    let url = format!("sqlite://{}", db.display());
    let key = seed::org_and_key(bins, &url)?;
    // Profiles for the delete runs and the mixed runs (a tenth of their requests delete).
    let per_run = DELETE_IDS_PER_SECOND * opts.duration;
    seed::sqlite_profiles(&db, per_run * (2 * opts.rounds as u64 + 1))?;

    let appzone = Server::appzone(bins, work, "appzone", &url)?;
    let quiet = Server::appzone_with(
        bins,
        work,
        "appzone-log-warn",
        &url,
        &[],
        &[("APPZONE_LOG", "warn")],
        "/readyz",
    )?;
    let zones = capture(&appzone, ZONES_PATH, "zones", &key, work)?;
    let baseline = replaying_baseline(bins, work, "baseline", ZONES, &zones)?;
    report.body_bytes = zones.bytes.len();

    let wrk = Wrk {
        dir: &work.path,
        duration: opts.duration,
    };
    let key_header = format!("X-API-KEY: {key}");
    let inm_header = format!("If-None-Match: {}", zones.etag);
    let list = |connections| Load::get(connections, ZONES_PATH, &[&key_header]);

    // Warm-up: connections, caches, allocator arenas.
    for server in [&appzone, &quiet, &baseline] {
        wrk.lasting(opts.warmup).run(server, &list(64))?;
    }
    let rss_after_warmup = appzone.rss_kb();

    // The A/B scenarios: per round, per scenario, appzone then the baseline; at 64 connections
    // also appzone without its request log, to show what the log costs.
    let zones_ab = |quiet_too: bool| {
        let mut targets = vec![(&appzone, Target::Appzone)];
        if quiet_too {
            targets.push((&quiet, Target::AppzoneLogWarn));
        }
        targets.push((&baseline, Target::Baseline));
        targets
    };
    let discovery = if opts.listing_only {
        Vec::new()
    } else {
        discovery_baselines(bins, work, &appzone, &key)?
    };
    let mut scenarios = Vec::new();
    for (name, path, server) in &discovery {
        wrk.lasting(opts.warmup).run(server, &list(64).on(path))?;
        let targets = vec![(&appzone, Target::Appzone), (server, Target::Baseline)];
        scenarios.push((*name, list(64).on(path), targets));
    }
    // The identity listing, from memory like the zone listing, and with a zone mapping of the
    // organization applied (read through the mapping cache, the body built per request).
    seed::sqlite(&db, IDENTITY_MAPPING_SQL)?;
    for path in [IDENTITIES_PATH, IDENTITIES_MAPPING_PATH] {
        let answer = http::get(appzone.addr, path, &[("X-API-KEY", &key)])?;
        anyhow::ensure!(
            answer.status == 200,
            "appzone answered {} to {path}",
            answer.status
        );
        scenarios.push((
            identity_scenario(path),
            list(64).on(path),
            vec![(&appzone, Target::Appzone)],
        ));
    }
    let zone_loads = if opts.listing_only {
        vec![(list(64), true)]
    } else {
        vec![(list(16), false), (list(64), true), (list(256), false)]
    };
    for (load, quiet_too) in zone_loads {
        scenarios.push(("list zones", load, zones_ab(quiet_too)));
    }
    if !opts.listing_only {
        let conditional = Load::get(64, ZONES_PATH, &[&key_header, &inm_header]);
        scenarios.push((
            "list zones, If-None-Match (304)",
            conditional,
            zones_ab(true),
        ));
    }
    for round in 1..=opts.rounds {
        for (name, load, targets) in &scenarios {
            eprintln!(
                "bench: round {round}/{}: {name} at {} connections",
                opts.rounds, load.connections
            );
            for (server, target) in targets {
                report.add(name, *target, load.connections, wrk.run(server, load)?);
            }
        }
    }

    let zones_rps = report.median_rps("list zones", Target::Appzone, 64);
    for path in [IDENTITIES_PATH, IDENTITIES_MAPPING_PATH] {
        let name = identity_scenario(path);
        let rps = report.median_rps(name, Target::Appzone, 64);
        if let (Some(rps), Some(zones)) = (rps, zones_rps) {
            report.notes.push(format!(
                "{name}: {:.2}x the zone listing's throughput at 64 connections (medians \
                 {rps:.0} and {zones:.0} requests/s, same run).",
                rps / zones
            ));
        }
    }

    if opts.callgrind {
        let counts = instructions::callgrind_counts(bins, work, &wrk, &url, &zones, &list(8))?;
        report.instructions = Some(counts);
    }
    if opts.listing_only {
        return Ok(());
    }

    let mut next_profile = 1;
    fresh_profile_rounds(
        opts,
        &wrk,
        &appzone,
        "delete (SQLite)",
        &mut next_profile,
        report,
        |first| Load::deletes(32, &key, first),
    )?;
    let tombstones = seed::sqlite(
        &db,
        "SELECT count(*) FROM profiles WHERE deleted_at IS NOT NULL;",
    )?;
    report.notes.push(format!(
        "SQLite delete check: {} tombstones in the database after the delete runs; wrk counted \
         {} successful deletes (requests in flight when a run stops commit without being \
         counted).",
        tombstones.trim(),
        report.successes("delete (SQLite)")
    ));
    fresh_profile_rounds(
        opts,
        &wrk,
        &appzone,
        "mixed 80% list / 10% 304 / 10% delete (SQLite)",
        &mut next_profile,
        report,
        |first| Load::mixed(ZONES_PATH, &key, first, &zones.etag),
    )?;

    if opts.long_requests > 0 {
        let long = long_run(opts, &wrk, &appzone, &list(64), rss_after_warmup, report)?;
        report.long = Some(long);
    }
    if let Some((requests, rounds)) = opts.client {
        report.client = Some(client_benchmark(bins, &appzone, &key, requests, rounds)?);
    }
    for server in [&appzone, &quiet, &baseline] {
        report
            .peak_rss
            .insert(server.name.clone(), server.peak_rss_kb());
    }
    Ok(())
}

/// us-east-1's zone identities, without and with a zone mapping of the bench organization.
const IDENTITIES_PATH: &str = "/api/v1/providers/aws/regions/us-east-1/zone-identities";
const IDENTITIES_MAPPING_PATH: &str =
    "/api/v1/providers/aws/regions/us-east-1/zone-identities?mapping=bench";
/// The mapping `?mapping=bench` applies: us-east-1's six AZ IDs paired with letters.
const IDENTITY_MAPPING_SQL: &str = "INSERT INTO zone_mappings \
    (org_id, id, provider, label, pairs, imported_at) VALUES ('bench', 'bench', 'aws', 'bench', \
    '[{\"region\":\"us-east-1\",\"zones\":[{\"zone_id\":\"use1-az1\",\"zone_name\":\"us-east-1a\"},\
    {\"zone_id\":\"use1-az2\",\"zone_name\":\"us-east-1b\"},{\"zone_id\":\"use1-az3\",\
    \"zone_name\":\"us-east-1c\"},{\"zone_id\":\"use1-az4\",\"zone_name\":\"us-east-1d\"},\
    {\"zone_id\":\"use1-az5\",\"zone_name\":\"us-east-1e\"},{\"zone_id\":\"use1-az6\",\
    \"zone_name\":\"us-east-1f\"}]}]', 0);";

fn identity_scenario(path: &str) -> &'static str {
    if path.contains("?mapping=") {
        "list zone identities, with a mapping"
    } else {
        "list zone identities"
    }
}

/// The discovery listings (scenario, path), each with a baseline replaying appzone's answer.
fn discovery_baselines(
    bins: &Binaries,
    work: &WorkDir,
    appzone: &Server,
    key: &str,
) -> Result<Vec<(&'static str, &'static str, Server)>> {
    [
        ("list providers", PROVIDERS_PATH, "providers"),
        ("list regions", REGIONS_PATH, "regions"),
    ]
    .into_iter()
    .map(|(scenario, path, name)| {
        let captured = capture(appzone, path, name, key, work)?;
        let baseline = format!("baseline-{name}");
        let server = replaying_baseline(bins, work, &baseline, (path, path), &captured)?;
        Ok((scenario, path, server))
    })
    .collect()
}

/// `opts.rounds` runs of `server` alone under `load(first)`, each on profiles no earlier run
/// touched: from `*next` up, which moves past what a run can delete.
fn fresh_profile_rounds(
    opts: &Options,
    wrk: &Wrk<'_>,
    server: &Server,
    scenario: &str,
    next: &mut u64,
    report: &mut Report,
    load: impl Fn(u64) -> Load,
) -> Result<()> {
    for round in 1..=opts.rounds {
        eprintln!("bench: round {round}/{}: {scenario}", opts.rounds);
        let load = load(*next);
        *next += DELETE_IDS_PER_SECOND * wrk.duration;
        let run = wrk.run(server, &load)?;
        report.add(scenario, Target::Appzone, load.connections, run);
    }
    Ok(())
}

/// About `opts.long_requests` listings in one run, sampling appzone's RSS throughout.
fn long_run(
    opts: &Options,
    wrk: &Wrk<'_>,
    appzone: &Server,
    load: &Load,
    rss_after_warmup_kb: u64,
    report: &Report,
) -> Result<LongRun> {
    // The run's length from the rate the rounds measured, bounded both ways.
    let rps = report
        .median_rps("list zones", Target::Appzone, load.connections)
        .unwrap_or(10_000.0)
        .max(1_000.0);
    let secs = ((opts.long_requests as f64 / rps) * 1.05)
        .ceil()
        .clamp(5.0, 600.0) as u64;
    eprintln!(
        "bench: long run: about {} requests, {secs} s at {} connections",
        opts.long_requests, load.connections
    );
    let rss_before_kb = appzone.rss_kb();
    let sampler = RssSampler::start(appzone.pid());
    let run = wrk.lasting(secs).run(appzone, load);
    let samples = sampler.stop();
    Ok(LongRun {
        rss_after_warmup_kb,
        rss_before_kb,
        rss_after_kb: appzone.rss_kb(),
        samples,
        run: run?,
    })
}

/// The client against a raw reqwest GET, sequential calls on one warm connection each; the
/// values of its `APPZONE_CLIENT` line.
fn client_benchmark(
    bins: &Binaries,
    appzone: &Server,
    key: &str,
    requests: usize,
    rounds: usize,
) -> Result<BTreeMap<String, String>> {
    eprintln!("bench: client benchmark");
    let mut command = Command::new(&bins.client);
    command
        .args(["--url", &format!("http://{}", appzone.addr)])
        .args(["--api-key", key])
        .args(["--requests", &requests.to_string()])
        .args(["--rounds", &rounds.to_string()]);
    let shown = show(&command);
    let stdout = output(&mut command, CLIENT_TIMEOUT)?.stdout_if_success(&shown)?;
    stdout
        .lines()
        .find(|l| l.starts_with("APPZONE_CLIENT "))
        .map(key_values)
        .with_context(|| format!("the client benchmark printed no APPZONE_CLIENT line: {stdout}"))
}

/// Deletes on PostgreSQL, in a fresh schema of the database at `admin_url`, dropped afterwards
/// whatever happened.
pub(super) fn postgres(
    opts: &Options,
    bins: &Binaries,
    work: &WorkDir,
    admin_url: &str,
    report: &mut Report,
) -> Result<()> {
    seed::in_fresh_schema(admin_url, "bench", |url, schema| {
        postgres_deletes(opts, bins, work, admin_url, url, schema, report)
    })
}

fn postgres_deletes(
    opts: &Options,
    bins: &Binaries,
    work: &WorkDir,
    admin_url: &str,
    url: &str,
    schema: &str,
    report: &mut Report,
) -> Result<()> {
    let key = seed::org_and_key(bins, url)?;
    let per_run = DELETE_IDS_PER_SECOND * opts.duration;
    seed::postgres_profiles(admin_url, schema, per_run * (opts.rounds as u64 + 1))?;
    let server = Server::appzone(bins, work, "appzone-postgres", url)?;
    let wrk = Wrk {
        dir: &work.path,
        duration: opts.duration,
    };
    let deletes = |first| Load::deletes(32, &key, first);
    let mut next_profile = 1;
    wrk.lasting(opts.warmup)
        .run(&server, &deletes(next_profile))?;
    next_profile += per_run;
    fresh_profile_rounds(
        opts,
        &wrk,
        &server,
        "delete (PostgreSQL)",
        &mut next_profile,
        report,
        deletes,
    )?;
    report
        .peak_rss
        .insert(server.name.clone(), server.peak_rss_kb());
    Ok(())
}

//! `cargo xtask bench --scale`: how appzone's costs grow with what it holds. Every part measures
//! a small and a large case in the same run, on the same build and machine, and reports their
//! ratio (large / small), which stays comparable where absolute figures move with the machine.
//! The load is wrk's (Lua scripts in `wrk/` where requests vary), the data the operator CLI's
//! and the sqlite3 CLI's:
//!
//! 1. the catalog at 1×, 10× and 100× the built-in one ([`catalog`]);
//! 2. 10 against 1,000,000 API keys: a new key's first request (a new connection, a cache miss,
//!    one lookup by key id) and its second (cached), timed by wrk and counted under callgrind;
//! 3. 1,000 against 10,000,000 profiles: deletes at 32 connections, each of a distinct profile,
//!    and instructions per delete, one connection per delete, one at a time;
//! 4. 0 against 5,000 idle keep-alive connections (wrk's `idle.lua`): the server's RSS, and
//!    10 s after they close;
//! 5. a flood of wrong keys with random key ids: the server's RSS before, right after, and 5 s
//!    later (a negative cache entry lives at most 2 s).
//!
//! About six minutes on two cores after the release build; `cargo xtask ci` does not run it.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::catalog;
use super::instructions::{callgrind_steps, Step};
use super::load::{self, Load, RunResult, Wrk};
use super::options::Options;
use super::procfs::{self, RssSampler};
use super::report::{
    count, load_average, machine_line, mebibytes, median, micros, millis, per_second, ratio,
    thousands,
};
use super::servers::Server;
use super::{seed, Binaries, WorkDir, ZONES_PATH};
use crate::process::{output, stdout_of, PROBE_TIMEOUT};

/// Any one operator CLI command; the 100× import takes seconds.
pub(super) const CLI_TIMEOUT: Duration = Duration::from_secs(300);
/// API keys: the small and large table, and the keys whose first request is measured.
const SMALL_KEYS: u64 = 10;
const LARGE_KEYS: u64 = 1_000_000;
const MEASURED_KEYS: u64 = 200;
/// Profiles: the small and large table, and the delete bursts run on each. A burst stops after
/// `DELETES_PER_BURST` answers, fewer than the small table holds, so it never runs out.
const SMALL_PROFILES: u64 = 1_000;
const LARGE_PROFILES: u64 = 10_000_000;
const DELETES_PER_BURST: u64 = 900;
const DELETE_BURSTS: u64 = 10;
/// Deletes counted under callgrind per table, one at a time.
const COUNTED_DELETES: u64 = 200;
/// wrk's `-d` for runs that stop at a count: wrk waits it out even after its thread stopped.
const COUNTED_SECS: u64 = 1;
/// Under callgrind: deletes get time to finish; a key's two runs must both end within the key
/// cache's 10 s, or its second request would miss again (wrk counts what was answered).
const CALLGRIND_DELETE_SECS: u64 = 10;
const CALLGRIND_KEY_SECS: u64 = 3;
/// Idle connections; the wrk run holding them; time for the server to settle.
const IDLE_CONNECTIONS: usize = 5_000;
/// The seconds in which they connect and send (`idle.lua`), and the wrk run holding them.
const IDLE_WINDOW_SECS: u64 = 10;
const IDLE_SECS: u64 = 30;
const SETTLE: Duration = Duration::from_secs(1);
/// The wrong-key flood at 64 connections, and how long after it the RSS is read again (past
/// the negative cache's 2 s lifetime and its 2 s sweep).
const FLOOD_SECS: u64 = 10;
const AFTER_FLOOD: Duration = Duration::from_secs(5);

/// Runs the scale measurements and writes their report to `opts.output`.
pub(super) fn run(opts: &Options) -> Result<()> {
    let wrk_version = load::wrk_version()?;
    seed::require_sqlite3()?;
    let bins = Binaries::build()?;
    let work = WorkDir::create(opts.keep)?;
    eprintln!("bench: scale run, working in {}", work.path.display());
    let wrk = Wrk {
        dir: &work.path,
        duration: COUNTED_SECS,
    };
    let mut report = ScaleReport::default();
    let (load_before, started) = (load_average(), Instant::now());
    report.part("catalog", |r| catalog::run(&bins, &work, &wrk, r));
    report.part("API keys", |r| keys(&bins, &work, &wrk, r));
    report.part("profiles", |r| profiles(&bins, &work, &wrk, r));
    report.part("idle connections", |r| {
        idle_connections(&bins, &work, &wrk, r)
    });
    report.part("wrong-key flood", |r| {
        wrong_key_flood(&bins, &work, &wrk, r)
    });

    let mut text = format!(
        "## appzone scale run (`cargo xtask bench --scale`)\n\n{}\n\nRelease build, SQLite, over \
         127.0.0.1; {wrk_version} with 1 thread. Each row's small and large case ran in this \
         run; ratio = large / small. {:.0} s; load average before {load_before}, after {}. The \
         method is in xtask/src/bench/scale.rs and catalog.rs.\n\n| what | small | large | ratio \
         |\n|---|---|---|---|\n",
        machine_line(),
        started.elapsed().as_secs_f64(),
        load_average()
    );
    for [what, small, large, ratio] in &report.rows {
        let _ = writeln!(text, "| {what} | {small} | {large} | {ratio} |");
    }
    for note in &report.notes {
        let _ = write!(text, "\n- {note}");
    }
    super::write_report(&opts.output, &text)?;
    if report.failed > 0 {
        bail!(
            "{} part(s) of the scale run failed (see the report)",
            report.failed
        );
    }
    Ok(())
}

/// The report: one table of small against large cases, and notes.
#[derive(Default)]
pub(super) struct ScaleReport {
    rows: Vec<[String; 4]>,
    notes: Vec<String>,
    failed: usize,
}

impl ScaleReport {
    /// Runs one part; a part that fails is reported as such and the run goes on with the next,
    /// so one failure does not cost the other parts' figures.
    fn part(&mut self, name: &str, run: impl FnOnce(&mut Self) -> Result<()>) {
        eprintln!("bench: scale: {name}");
        if let Err(err) = run(self) {
            eprintln!("bench: scale: {name} FAILED: {err:#}");
            self.note(format!("**{name} failed:** {err:#}"));
            self.failed += 1;
        }
    }

    /// A row of two values shown by `show`, and their ratio.
    pub(super) fn row(
        &mut self,
        what: String,
        (small, large): (f64, f64),
        show: fn(f64) -> String,
    ) {
        self.text_row(what, show(small), show(large), ratio(small, large));
    }

    /// A row whose cells are already text (ranges), with the ratio of the values they stand for.
    pub(super) fn text_row(
        &mut self,
        what: String,
        small: String,
        large: String,
        ratio: Option<f64>,
    ) {
        let ratio = ratio.map_or_else(|| "—".to_owned(), |r| format!("{r:.2}×"));
        eprintln!("bench: scale:   {what}: {small} | {large} | {ratio}");
        self.rows.push([what, small, large, ratio]);
    }

    pub(super) fn note(&mut self, note: String) {
        eprintln!("bench: scale:   {note}");
        self.notes.push(note);
    }

    /// Whether valgrind runs here; if not, notes that `what` was skipped.
    pub(super) fn valgrind(&mut self, what: &str) -> bool {
        let found = output(Command::new("valgrind").arg("--version"), PROBE_TIMEOUT).is_ok();
        if !found {
            self.note(format!("Skipped: {what}: valgrind is not installed."));
        }
        found
    }
}

// ---------------------------------------------------------------------------------------------
// 2. API keys

fn keys(bins: &Binaries, work: &WorkDir, wrk: &Wrk<'_>, report: &mut ScaleReport) -> Result<()> {
    let small_db = work.path.join("keys-small.db");
    let admin = seed::org_and_key(bins, &sqlite_url(&small_db))?;
    bulk_keys(&small_db, SMALL_KEYS - 1)?;
    let mut measured = String::new();
    for i in 0..MEASURED_KEYS {
        let name = format!("scale-{i}");
        let args = [
            "key", "create", "--org", "bench", "--role", "member", "--name", &name,
        ];
        measured += cli(bins, &sqlite_url(&small_db), &args)?.trim();
        measured.push('\n');
    }
    let keys_file = work.path.join("measured-keys.txt");
    std::fs::write(&keys_file, measured).context("cannot write the measured keys")?;
    // The large database is a copy of the small one, so both hold the same measured keys.
    let large_db = work.path.join("keys-large.db");
    let quoted = large_db.display().to_string().replace('\'', "''");
    seed::sqlite(&small_db, &format!("VACUUM INTO '{quoted}';"))?;
    bulk_keys(&large_db, LARGE_KEYS - SMALL_KEYS)?;
    let keys_in = |db: &Path| -> Result<u64> {
        let rows = seed::sqlite(db, "SELECT count(*) FROM api_keys;")?;
        let rows: u64 = rows.trim().parse().context("sqlite3 counted no keys")?;
        Ok(rows.saturating_sub(MEASURED_KEYS))
    };
    let sizes = format!(
        "{} vs {} keys",
        thousands(keys_in(&small_db)?),
        thousands(keys_in(&large_db)?)
    );

    // Each key's first request on both servers, then its second on both (within the key
    // cache's 10 s), one connection per request: a connection remembers the key it verified.
    let file = keys_file.display().to_string();
    let limit = MEASURED_KEYS.to_string();
    let requests = Load::script(1, ZONES_PATH, "counted.lua", &["keys", &file, "1", &limit]);
    let warm_up = Load::get(1, ZONES_PATH, &[&format!("X-API-KEY: {admin}")]);
    let small = Server::appzone(bins, work, "appzone-keys-small", &sqlite_url(&small_db))?;
    let large = Server::appzone(bins, work, "appzone-keys-large", &sqlite_url(&large_db))?;
    for server in [&small, &large] {
        wrk.run(server, &warm_up)?;
    }
    let mut p50 = Vec::new();
    for _ in 0..2 {
        for server in [&small, &large] {
            p50.push(wrk.run(server, &requests)?.p50_us / 1e6);
        }
    }
    let &[small_first, large_first, small_second, large_second] = &p50[..] else {
        bail!("measured {} key runs, not 4", p50.len());
    };
    let median_of = format!("wrk's median of {MEASURED_KEYS}, {sizes}");
    report.row(
        format!("first request with a new key (cache miss: one lookup by key id), {median_of}"),
        (small_first, large_first),
        micros,
    );
    report.row(
        format!("the same key's second request (cached), {median_of}"),
        (small_second, large_second),
        micros,
    );
    drop((small, large));

    let what = format!("instructions per first request of a new key (callgrind), {sizes}");
    if !report.valgrind(&what) {
        return Ok(());
    }
    let counted = wrk.lasting(CALLGRIND_KEY_SECS);
    let mut counts = Vec::new();
    for db in [&small_db, &large_db] {
        let name = format!("callgrind-{}", counts.len());
        // The second run asks only for the keys the first one got answered: those are cached.
        let answered = std::cell::Cell::new(MEASURED_KEYS);
        let step = |second: bool| -> Step<'_> {
            let (answered, file) = (&answered, &file);
            Box::new(move |server: &Server| {
                let limit = answered.get().to_string();
                let keys = Load::script(1, ZONES_PATH, "counted.lua", &["keys", file, "1", &limit]);
                let requests = counted.run(server, &keys)?.requests;
                if !second {
                    answered.set(requests);
                }
                Ok(requests)
            })
        };
        counts.push(callgrind_steps(
            bins,
            work,
            &name,
            |bins| Server::appzone(bins, work, &name, &sqlite_url(db)),
            |server| wrk.run(server, &warm_up).map(drop),
            vec![step(false), step(true)],
        )?);
    }
    let [small, large] = &counts[..] else {
        bail!("callgrind counted {} key tables, not 2", counts.len());
    };
    let (&[small_first, small_second], &[large_first, large_second]) = (&small[..], &large[..])
    else {
        bail!("callgrind counted other than 2 steps per key table");
    };
    report.row(what, (small_first, large_first), count);
    report.row(
        format!("instructions per key lookup (first − second request of a key), {sizes}"),
        (small_first - small_second, large_first - large_second),
        count,
    );
    Ok(())
}

/// Inserts about `count` keys of organization `bench` with random key ids (12 hexadecimal
/// digits: valid base62) and digests. No one holds their secrets: they make the table and its
/// index as big as that many keys would. A key id drawn twice is skipped; callers count rows.
fn bulk_keys(db: &Path, count: u64) -> Result<()> {
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) \
         INSERT OR IGNORE INTO api_keys (key_id, org_id, role, name, digest, created_at) \
         SELECT substr(hex(randomblob(9)), 1, 12), 'bench', 'member', 'bulk', \
         lower(hex(randomblob(32))), 0 FROM n;"
    );
    seed::sqlite(db, &sql).map(drop)
}

// ---------------------------------------------------------------------------------------------
// 3. Profiles

fn profiles(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    report: &mut ScaleReport,
) -> Result<()> {
    let mut tables = Vec::new();
    for profiles in [SMALL_PROFILES, LARGE_PROFILES] {
        let db = work.path.join(format!("profiles-{profiles}.db"));
        let key = seed::org_and_key(bins, &sqlite_url(&db))?;
        seed::sqlite_profiles(&db, profiles)?;
        let server = Server::appzone(
            bins,
            work,
            &format!("appzone-profiles-{profiles}"),
            &sqlite_url(&db),
        )?;
        // The small table is deleted from its start every burst and restored after it; the
        // large one from places spread over it, never the same profile twice.
        let restore = profiles < DELETES_PER_BURST * (DELETE_BURSTS + 1);
        let mut runs = Vec::new();
        for burst in 0..=DELETE_BURSTS {
            let first = if restore {
                1
            } else {
                1 + burst * (profiles / (DELETE_BURSTS + 1))
            };
            let args = [
                "delete",
                &key,
                &first.to_string(),
                &DELETES_PER_BURST.to_string(),
            ];
            runs.push(wrk.run(&server, &Load::script(32, "/", "counted.lua", &args))?);
            if restore {
                // The server is idle between bursts; the timeout covers a last commit of its.
                let sql = "PRAGMA busy_timeout = 5000; \
                           UPDATE profiles SET deleted_at = NULL WHERE deleted_at IS NOT NULL;";
                seed::sqlite(&db, sql)?;
            }
        }
        // Burst 0 warmed the server up (its pool, the pages it reads).
        runs.remove(0);
        let errors: u64 = runs.iter().map(|r| r.errors).sum();
        report.note(format!(
            "Profiles: {} in the table; {DELETE_BURSTS} counted bursts answered {} deletes \
             ({errors} errors).",
            thousands(profiles),
            thousands(runs.iter().map(|r| r.requests).sum())
        ));
        tables.push((db, key, runs));
    }
    let sizes = format!(
        "{} vs {} profiles",
        thousands(SMALL_PROFILES),
        thousands(LARGE_PROFILES)
    );
    let [(small_db, small_key, small), (large_db, large_key, large)] = &tables[..] else {
        bail!("measured {} profile tables, not 2", tables.len());
    };
    let p50 = |runs: &[RunResult]| median(runs.iter().map(|r| r.p50_us / 1e6));
    // wrk waits out its -d after a burst stopped, so the rate is the closed loop's: connections
    // / mean latency (wrk sends a connection's next request as soon as its answer is in).
    let rate = |runs: &[RunResult]| {
        median(
            runs.iter()
                .filter(|r| r.mean_us > 0.0)
                .map(|r| 32e6 / r.mean_us),
        )
    };
    report.row(
        format!("delete p50 (32 connections), {sizes}"),
        (p50(small), p50(large)),
        millis,
    );
    report.row(
        format!("deletes/s ≈ 32 connections / mean latency, {sizes}"),
        (rate(small), rate(large)),
        per_second,
    );

    let what = format!(
        "instructions per delete (callgrind; one connection per delete, one at a time), {sizes}"
    );
    if !report.valgrind(&what) {
        return Ok(());
    }
    let mut counts = Vec::new();
    for (db, key, first) in [
        (small_db, small_key, 1),
        (
            large_db,
            large_key,
            LARGE_PROFILES / (DELETE_BURSTS + 1) / 2,
        ),
    ] {
        // Profiles no burst deleted: the small table was restored, and the large one is deleted
        // from halfway between two bursts' places. A tenth as many warm the server up first.
        let deletes = |first: u64, limit: u64| {
            let args = [
                "delete",
                key,
                &first.to_string(),
                &limit.to_string(),
                "close",
            ];
            Load::script(1, "/", "counted.lua", &args)
        };
        let warm_up = deletes(first, COUNTED_DELETES / 10);
        let counted = deletes(first + COUNTED_DELETES / 10, COUNTED_DELETES);
        let long = wrk.lasting(CALLGRIND_DELETE_SECS);
        let name = format!("callgrind-deletes-{}", counts.len());
        let per_delete = callgrind_steps(
            bins,
            work,
            &name,
            |bins| Server::appzone(bins, work, &name, &sqlite_url(db)),
            |server| long.run(server, &warm_up).map(drop),
            vec![Box::new(|server: &Server| {
                Ok(long.run(server, &counted)?.requests)
            })],
        )?;
        counts.extend(per_delete);
    }
    match counts[..] {
        [small, large] => report.row(what, (small, large), count),
        _ => bail!("callgrind counted {} profile tables, not 2", counts.len()),
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// 4. Idle connections

fn idle_connections(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    report: &mut ScaleReport,
) -> Result<()> {
    let url = sqlite_url(&work.path.join("idle.db"));
    // The header-read timeout also closes a kept-alive connection quiet for that long: far
    // above the measurement, so the server holds every connection while it is measured.
    let extra = ["--header-read-timeout-secs", "600"];
    let server = Server::appzone_with(bins, work, "appzone-idle", &url, &extra, &[], "/readyz")?;
    // The same request first on a few busy connections, so what any request makes the server
    // allocate once is in the baseline, not counted as the idle connections'.
    wrk.run(&server, &Load::get(8, "/healthz", &[]))?;
    std::thread::sleep(SETTLE);
    let (rss_0, fds_0) = (server.rss_kb(), procfs::open_fds(server.pid()));
    let window = IDLE_WINDOW_SECS.to_string();
    let idle = Load::script(IDLE_CONNECTIONS, "/healthz", "idle.lua", &[&window]);
    let (held, run) = std::thread::scope(|scope| {
        let run = scope.spawn(|| wrk.lasting(IDLE_SECS).run(&server, &idle));
        // Past the window, in which every connection that could connect sent its requests
        // (wrk opens them all at once; the accept backlog makes some retry), then a settle.
        std::thread::sleep(Duration::from_secs(IDLE_WINDOW_SECS + 2) + SETTLE);
        let held = (server.rss_kb(), procfs::open_fds(server.pid()));
        (held, run.join())
    });
    let run = run.map_err(|_| anyhow::anyhow!("the wrk thread panicked"))??;
    let (rss_n, fds_n) = held;
    std::thread::sleep(Duration::from_secs(10));
    let rss_10 = server.rss_kb();
    let connections = fds_n.saturating_sub(fds_0);
    let kb = |kb: u64| kb as f64;
    report.row(
        format!(
            "server RSS, 0 vs {} idle keep-alive connections",
            thousands(connections as u64)
        ),
        (kb(rss_0), kb(rss_n)),
        mebibytes,
    );
    report.text_row(
        "server RSS per idle connection".to_owned(),
        "—".to_owned(),
        format!(
            "{:.1} KiB",
            (kb(rss_n) - kb(rss_0)) / connections.max(1) as f64
        ),
        None,
    );
    report.row(
        "server RSS, 0 connections vs 10 s after they closed".to_owned(),
        (kb(rss_0), kb(rss_10)),
        mebibytes,
    );
    report.note(format!(
        "Idle connections: the server held {connections} more file descriptors with them; wrk \
         counted {} answers ({} errors) on {IDLE_CONNECTIONS} connections, which sent in their \
         first {IDLE_WINDOW_SECS} s.",
        run.requests, run.errors
    ));
    Ok(())
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
    let server = Server::appzone(bins, work, "appzone-flood", &url)?;
    // What any load makes the server allocate belongs to the baseline, not to the flood.
    let valid = Load::get(64, ZONES_PATH, &[&format!("X-API-KEY: {key}")]);
    wrk.lasting(2).run(&server, &valid)?;
    std::thread::sleep(SETTLE);
    let before = server.rss_kb();
    let sampler = RssSampler::start(server.pid());
    let flood = Load::script(64, ZONES_PATH, "wrong_keys.lua", &[]);
    let flood = wrk.lasting(FLOOD_SECS).run(&server, &flood);
    let peak = sampler.stop().into_iter().max().unwrap_or(0);
    let flood = flood?;
    let after = server.rss_kb();
    std::thread::sleep(AFTER_FLOOD);
    let later = server.rss_kb();
    let kb = |kb: u64| kb as f64;
    let requests = thousands(flood.requests);
    report.row(
        format!("server RSS before vs right after {requests} wrong-key requests"),
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
        "Wrong-key flood: {requests} requests in {FLOOD_SECS} s, RSS peak {} during it. Every \
         answer is a refusal (401, then 429 from the per-address limit after verification).",
        mebibytes(kb(peak))
    ));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Helpers

/// What an operator CLI command on `url` prints; Err when it fails or outlives [`CLI_TIMEOUT`].
pub(super) fn cli(bins: &Binaries, url: &str, args: &[&str]) -> Result<String> {
    stdout_of(bins.server_cli(url).args(args), CLI_TIMEOUT)
}

pub(super) fn sqlite_url(db: &Path) -> String {
    format!("sqlite://{}", db.display())
}

//! The scale run's catalog part: the built-in catalog as `catalog export` prints it, its
//! providers copied under ids ending in `-x<n>` (`aws-x7`) for 10× and 100×, so the listed
//! `aws/us-east-1` stays the same. For each size, on a database whose catalog was emptied
//! first (so every size writes its whole catalog): the timed `catalog import --prune`,
//! start-up until `/healthz` answers 200 (polled every 5 ms) and `catalog export`, 3 each.
//! Then instructions per zone listing on 1× and 10× (callgrind, as `cargo xtask
//! instructions`), and zone listing throughput on the 100× database (wrk, 64 connections) in
//! windows without an import, with one `catalog import --prune` of the 100× catalog plus one
//! new zone (so it writes, and the server reloads), and with the same under `nice -n 19`; the
//! server's own counters (`/metrics`, read every 100 ms) give the listings answered while the
//! import ran and until the server served the new catalog.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context, Result};
use serde_json::Value;

use super::instructions::callgrind_per_request;
use super::load::{Load, Wrk};
use super::report::{count, median, min_max, per_second, ratio, seconds, thousands};
use super::scale::{cli, sqlite_url, ScaleReport};
use super::servers::Server;
use super::{seed, Binaries, WorkDir, ZONES_PATH};
use crate::http;
use crate::process::stdout_of;

/// Sizes of the catalog, in copies of the built-in one; the first is the small case.
const COPIES: [usize; 3] = [1, 10, 100];
const TIMED_RUNS: usize = 3;
/// Listing windows around an import: their length, how many of each kind, when in its window
/// the import starts, how often the counters are read.
const WINDOW_SECS: u64 = 8;
const WINDOWS: usize = 4;
const IMPORT_DELAY: f64 = 1.0;
const SAMPLE_EVERY: Duration = Duration::from_millis(100);
/// Longest wait for the server to serve an imported catalog (it looks every 2 s by default).
const REFRESH_TIMEOUT: Duration = Duration::from_secs(30);

pub(super) fn run(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    report: &mut ScaleReport,
) -> Result<()> {
    let builtin_url = sqlite_url(&work.path.join("catalog-builtin.db"));
    cli(bins, &builtin_url, &["migrate"])?;
    let builtin: Value = serde_json::from_str(&cli(bins, &builtin_url, &["catalog", "export"])?)
        .context("`catalog export` printed no JSON")?;
    let empty = write(work, "catalog-empty.json", &scaled(&builtin, 0)?)?;
    let mut sizes = Vec::new();
    for copies in COPIES {
        let catalog = scaled(&builtin, copies)?;
        let file = write(work, &format!("catalog-{copies}x.json"), &catalog)?;
        let url = sqlite_url(&work.path.join(format!("catalog-{copies}x.db")));
        // `migrate` loads the built-in catalog; emptied, every size writes its whole catalog.
        cli(bins, &url, &["migrate"])?;
        cli(bins, &url, &["catalog", "import", "--prune", &empty])?;
        let (import, _) = timed(|| cli(bins, &url, &["catalog", "import", "--prune", &file]))?;
        let mut startups = Vec::new();
        let mut exports = Vec::new();
        for run in 0..TIMED_RUNS {
            let name = format!("startup-{copies}x-{run}");
            let start = || Server::appzone_with(bins, work, &name, &url, &[], &[], "/healthz");
            startups.push(timed(start)?.0);
            let (secs, json) = timed(|| cli(bins, &url, &["catalog", "export"]))?;
            // The export must be the whole catalog, or its time says nothing.
            let exported: Value =
                serde_json::from_str(&json).context("`catalog export` printed no JSON")?;
            ensure!(
                zones(&exported) == zones(&catalog),
                "the {copies}× export lacks zones"
            );
            exports.push(secs);
        }
        let label = format!("{copies}× ({} zones)", thousands(zones(&catalog) as u64));
        sizes.push((label, url, import, startups, exports, catalog));
    }
    let [small, ten, hundred] = &sizes[..] else {
        bail!("not 3 catalog sizes");
    };
    let middle = |values: &[f64]| median(values.iter().copied());
    let range = |values: &[f64]| {
        let (lo, hi) = min_max(values);
        format!("{}–{}", seconds(lo), seconds(hi))
    };
    for large in [ten, hundred] {
        let compared = format!("{} vs {}", small.0, large.0);
        let what = format!("`catalog import --prune` into an empty catalog, {compared}");
        report.row(what, (small.2, large.2), seconds);
        for (what, index) in [
            ("start-up until `/healthz` answers 200", 3),
            ("`catalog export`", 4),
        ] {
            let [s, l] = [small, large].map(|size| if index == 3 { &size.3 } else { &size.4 });
            let what = format!("{what}, {compared}, min–max of {TIMED_RUNS}");
            report.text_row(what, range(s), range(l), ratio(middle(s), middle(l)));
        }
    }

    let what = format!(
        "instructions per zone listing (callgrind), {} vs {}",
        small.0, ten.0
    );
    if report.valgrind(&what) {
        let mut counts = Vec::new();
        for (_, url, ..) in [small, ten] {
            let key = seed::org_and_key(bins, url)?;
            let load = Load::get(8, ZONES_PATH, &[&format!("X-API-KEY: {key}")]);
            let name = format!("callgrind-catalog-{}", counts.len());
            let start = |bins: &Binaries| Server::appzone(bins, work, &name, url);
            counts.push(callgrind_per_request(bins, work, wrk, &name, &load, start)?);
        }
        if let [one, ten] = counts[..] {
            report.row(what, (one, ten), count);
        }
    }
    listing_during_import(bins, work, wrk, &hundred.1, &hundred.5, report)
}

/// `builtin` with its providers `copies` times: the originals, then copies whose provider ids
/// end in `-x<n>` (still valid ids), so the originals' listings stay the same.
fn scaled(builtin: &Value, copies: usize) -> Result<Value> {
    let providers = builtin["providers"]
        .as_array()
        .context("the exported catalog has no providers")?;
    let mut all = Vec::new();
    for copy in 0..copies {
        for provider in providers {
            let mut provider = provider.clone();
            if copy > 0 {
                let id = provider["id"]
                    .as_str()
                    .context("a provider without an id")?;
                provider["id"] = Value::from(format!("{id}-x{copy}"));
            }
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
        .pointer_mut("/providers")
        .and_then(Value::as_array_mut)
        .and_then(|providers| providers.last_mut())
        .and_then(|provider| provider.pointer_mut("/regions/0/zones"))
        .and_then(Value::as_array_mut)
        .context("the catalog has no region to add a zone to")?;
    zones.push(Value::from(format!("scale-extra-{n}")));
    Ok(catalog)
}

/// Zones of a catalog, all regions of all providers.
fn zones(catalog: &Value) -> usize {
    let items = |value: &Value, key: &str| value[key].as_array().cloned().unwrap_or_default();
    items(catalog, "providers")
        .iter()
        .flat_map(|provider| items(provider, "regions"))
        .map(|region| items(&region, "zones").len())
        .sum()
}

/// One window of listing load: wrk's rate, the server's counters read during it (seconds into
/// the window, zone listings answered 200, catalog version), and when the import in it, if
/// any, started and ended.
struct Window {
    rps: f64,
    samples: Vec<(f64, u64, i64)>,
    import: Option<(f64, f64)>,
}

impl Window {
    /// Listings per second the server counted from the last sample at or before `from` to the
    /// first at or after `to` (so over a little more than the interval, by up to a sample).
    fn counted_rate(&self, from: f64, to: f64) -> Option<f64> {
        let first = self.samples.iter().rev().find(|s| s.0 <= from)?;
        let last = self.samples.iter().find(|s| s.0 >= to)?;
        let secs = last.0 - first.0;
        (secs > 0.0).then(|| last.1.saturating_sub(first.1) as f64 / secs)
    }

    /// Seconds into the window when the server first served a newer catalog than at its start.
    fn refreshed_at(&self) -> Option<f64> {
        let before = self.samples.first()?.2;
        Some(self.samples.iter().find(|s| s.2 > before)?.0)
    }

    /// The rate while the import process ran, and from its start until the server served the
    /// new catalog (the import's whole course as the listings see it, the reload included).
    fn import_rates(&self) -> Option<(f64, f64, f64)> {
        let (start, end) = self.import?;
        let refreshed = self.refreshed_at()?;
        let course = self.counted_rate(start, refreshed)?;
        Some((self.counted_rate(start, end)?, course, refreshed - start))
    }
}

/// Zone listing throughput on the 100× catalog: windows without an import, with one, and with
/// one under `nice -n 19` (as an operator would run a batch job beside a server).
fn listing_during_import(
    bins: &Binaries,
    work: &WorkDir,
    wrk: &Wrk<'_>,
    url: &str,
    catalog: &Value,
    report: &mut ScaleReport,
) -> Result<()> {
    let key = seed::org_and_key(bins, url)?;
    let server = Server::appzone(bins, work, "appzone-catalog-100x", url)?;
    let load = Load::get(64, ZONES_PATH, &[&format!("X-API-KEY: {key}")]);
    let window = wrk.lasting(WINDOW_SECS);
    let import = |n: usize, nice: bool| -> Result<Command> {
        let file = write(
            work,
            &format!("catalog-100x-extra-{n}.json"),
            &with_extra_zone(catalog, n)?,
        )?;
        let wrapper = if nice {
            vec!["nice".into(), "-n".into(), "19".into()]
        } else {
            Vec::new()
        };
        let mut command = bins.under(wrapper).server_cli(url);
        command.args(["catalog", "import", "--prune", &file]);
        Ok(command)
    };
    // The same import with the server idle, for the imports under load to be compared with.
    let version = scrape(&server)?.1;
    let (idle_import, _) = timed(|| stdout_of(&mut import(0, false)?, super::scale::CLI_TIMEOUT))?;
    wait_for_version(&server, version + 1)?;
    window.lasting(2).run(&server, &load)?;
    let (mut quiet, mut busy, mut niced) = (Vec::new(), Vec::new(), Vec::new());
    for n in 1..=WINDOWS {
        eprintln!("bench: scale: listing windows {n}/{WINDOWS}: without an import, with, niced");
        quiet.push(listing_window(&server, &window, &load, None)?);
        for (nice, windows) in [(false, &mut busy), (true, &mut niced)] {
            let measured = listing_window(
                &server,
                &window,
                &load,
                Some(import(2 * n + usize::from(nice), nice)?),
            )?;
            // The next window must not catch this import's reload.
            wait_for_version(&server, measured.samples.first().map_or(0, |s| s.2) + 1)?;
            windows.push(measured);
        }
    }
    let quiet_rps = median(quiet.iter().map(|w| w.rps));
    let busy_rps = median(busy.iter().map(|w| w.rps));
    report.row(
        format!("listing req/s, {WINDOW_SECS} s windows without vs with one 100× import (median of {WINDOWS})"),
        (quiet_rps, busy_rps),
        per_second,
    );
    let rates = |windows: &[Window]| {
        let rates: Vec<_> = windows.iter().filter_map(Window::import_rates).collect();
        let secs: Vec<String> = rates.iter().map(|r| format!("{:.1}", r.2)).collect();
        (
            median(rates.iter().map(|r| r.0)),
            median(rates.iter().map(|r| r.1)),
            secs.join(", "),
        )
    };
    // Windows without an import, over the same spans from where an import would start.
    let quiet_counted = median(
        quiet
            .iter()
            .filter_map(|w| w.counted_rate(IMPORT_DELAY, WINDOW_SECS as f64 - 1.0)),
    );
    for (windows, how) in [(&busy, ""), (&niced, " under `nice -n 19`")] {
        let (counted, course, courses) = rates(windows);
        let what =
            format!("listing req/s while the 100× import{how} itself runs (server's counter)");
        report.row(what, (quiet_counted, counted), per_second);
        let what = format!(
            "listing req/s from the start of the 100× import{how} until the server serves its \
             catalog ({courses} s; server's counter)"
        );
        report.row(what, (quiet_counted, course), per_second);
    }
    let durations = busy.iter().filter_map(|w| w.import.map(|(s, e)| e - s));
    let what =
        "the 100× import with one more zone: server idle vs under the listing load".to_owned();
    report.row(what, (idle_import, median(durations)), seconds);
    Ok(())
}

/// One window of `load`, the server's counters read every [`SAMPLE_EVERY`] meanwhile, with
/// `import` started [`IMPORT_DELAY`] s into it when given (and waited for, even past the window).
fn listing_window(
    server: &Server,
    wrk: &Wrk<'_>,
    load: &Load,
    import: Option<Command>,
) -> Result<Window> {
    let start = Instant::now();
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let sampler = scope.spawn(|| {
            let mut samples = Vec::new();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                // A reading that fails (a slow answer under load) is only a gap in the samples.
                if let Ok((listings, version)) = scrape(server) {
                    samples.push((start.elapsed().as_secs_f64(), listings, version));
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
            samples
        });
        let importer = import.map(|mut command| {
            scope.spawn(move || -> Result<(f64, f64)> {
                std::thread::sleep(Duration::from_secs_f64(IMPORT_DELAY));
                let started = start.elapsed().as_secs_f64();
                stdout_of(&mut command, super::scale::CLI_TIMEOUT)?;
                Ok((started, start.elapsed().as_secs_f64()))
            })
        });
        let run = wrk.run(server, load);
        let import = importer
            .map(|t| t.join().map_err(|_| anyhow!("the import panicked"))?)
            .transpose();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let samples = sampler
            .join()
            .map_err(|_| anyhow!("the sampler panicked"))?;
        Ok(Window {
            rps: run?.rps(),
            samples,
            import: import?,
        })
    })
}

/// The server's counters now: zone listings answered 200, and the catalog version.
fn scrape(server: &Server) -> Result<(u64, i64)> {
    let answer = http::get(server.addr, "/metrics", &[])?;
    ensure!(answer.status == 200, "/metrics answered {}", answer.status);
    let (listings, version) = parse_metrics(&String::from_utf8_lossy(&answer.body));
    Ok((
        listings,
        version.context("no appzone_catalog_version in /metrics")?,
    ))
}

/// Zone listings answered 200 and the catalog version, from the Prometheus text of `/metrics`.
fn parse_metrics(text: &str) -> (u64, Option<i64>) {
    let mut listings = 0;
    let mut version = None;
    for line in text.lines() {
        if let Some(series) = line.strip_prefix("appzone_http_requests_total{") {
            if series.contains("/zones\"") && series.contains("status=\"200\"") {
                let value = series
                    .rsplit(' ')
                    .next()
                    .and_then(|v| v.parse::<f64>().ok());
                listings += value.map_or(0, |v| v as u64);
            }
        } else if let Some(value) = line.strip_prefix("appzone_catalog_version ") {
            version = value.trim().parse().ok();
        }
    }
    (listings, version)
}

/// Waits until the server serves catalog `version` or a newer one.
fn wait_for_version(server: &Server, version: i64) -> Result<()> {
    let start = Instant::now();
    while start.elapsed() < REFRESH_TIMEOUT {
        if scrape(server).is_ok_and(|s| s.1 >= version) {
            return Ok(());
        }
        std::thread::sleep(SAMPLE_EVERY);
    }
    bail!("the server did not serve catalog version {version} within {REFRESH_TIMEOUT:?}")
}

/// Writes `value` to `name` in the work directory; its path as an argument.
fn write(work: &WorkDir, name: &str, value: &Value) -> Result<String> {
    let path = work.path.join(name);
    std::fs::write(&path, value.to_string())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path.display().to_string())
}

/// Seconds `f` took, and what it returned.
fn timed<T>(f: impl FnOnce() -> Result<T>) -> Result<(f64, T)> {
    let started = Instant::now();
    let value = f()?;
    Ok((started.elapsed().as_secs_f64(), value))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn builtin() -> Value {
        serde_json::json!({"providers": [
            {"id": "aws", "regions": [{"id": "us-east-1", "zones": ["us-east-1a", "us-east-1b"]}]},
            {"id": "gcp", "regions": [{"id": "europe-west1", "zones": ["europe-west1-b"]}]}
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
        assert_eq!(
            (ids.len(), &ids[..4], ids[19]),
            (20, &["aws", "gcp", "aws-x1", "gcp-x1"][..], "gcp-x9")
        );
        assert_eq!(zones(&ten), 30);
        assert_eq!(scaled(&builtin(), 1).unwrap(), builtin());
        assert_eq!(zones(&scaled(&builtin(), 0).unwrap()), 0);
        let one = with_extra_zone(&builtin(), 3).unwrap();
        assert_eq!(
            one["providers"][1]["regions"][0]["zones"][1],
            "scale-extra-3"
        );
        assert_eq!(one["providers"][0], builtin()["providers"][0]);
    }

    #[test]
    fn reads_listings_and_the_catalog_version_and_rates_between_samples() {
        let text = "appzone_http_requests_total{method=\"GET\",route=\"/api/v1/providers/{providerId}/regions/{regionId}/zones\",status=\"200\"} 1200\n\
            appzone_http_requests_total{method=\"GET\",route=\"/api/v1/providers/{providerId}/regions/{regionId}/zones\",status=\"401\"} 7\n\
            appzone_catalog_version 4\n";
        assert_eq!(parse_metrics(text), (1200, Some(4)));
        assert_eq!(parse_metrics(""), (0, None));
        let samples = vec![(0.9, 100, 1), (1.1, 300, 1), (2.0, 1000, 1), (3.1, 2000, 2)];
        let window = Window {
            rps: 0.0,
            samples,
            import: Some((1.0, 2.5)),
        };
        // From the sample at 0.9 s to the one at 3.1 s.
        let rate = window.counted_rate(1.0, 2.5).unwrap();
        assert!((rate - 1900.0 / 2.2).abs() < 1e-6, "{rate}");
        assert!(window.counted_rate(0.5, 2.0).is_none());
        assert!((window.refreshed_at().unwrap() - 3.1).abs() < 1e-9);
    }
}

//! `appzone-bench-client`: the client's overhead over a raw reqwest GET of the same URL.
//!
//! Both sides send sequential requests over one warm keep-alive connection to the same server:
//! `appzone_client::Client::list_zones` (URL building, request id, retry bookkeeping, status
//! check, JSON decoding into `ZoneList`) against `reqwest::Client::get(url)` with the key header,
//! reading the body as bytes. Calls alternate A B B A A B ... so drift on a shared machine hits
//! both alike; each side's per-call latencies are pooled and summarized.
//!
//! Prints a human summary and one machine-readable line starting with `APPZONE_CLIENT`.
//!
//! ```text
//! appzone-bench-client --url http://127.0.0.1:8080 --api-key apz_... [--provider aws]
//!     [--region us-east-1] [--requests 2000] [--rounds 5]
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use appzone_client::Client;
use appzone_contract::headers::API_KEY;
use appzone_contract::{paths, ProviderId, RegionId};
use clap::builder::RangedU64ValueParser;
use clap::Parser;

/// The client's overhead over a raw reqwest GET of the same URL, call by call on one warm
/// connection each.
#[derive(Debug, Parser)]
#[command(name = "appzone-bench-client")]
struct Args {
    /// Base URL of the appzone server
    #[arg(long, value_name = "BASE_URL")]
    url: String,

    /// API key both sides send
    #[arg(
        long,
        value_name = "KEY",
        env = "APPZONE_API_KEY",
        hide_env_values = true
    )]
    api_key: String,

    /// Provider of the zone listing
    #[arg(long, value_name = "ID", default_value = "aws")]
    provider: ProviderId,

    /// Region of the zone listing
    #[arg(long, value_name = "ID", default_value = "us-east-1")]
    region: RegionId,

    /// Calls of each side per round
    #[arg(long, value_name = "N", default_value_t = 2000, value_parser = positive())]
    requests: usize,

    /// Rounds
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = positive())]
    rounds: usize,
}

/// A count of at least one: the summaries need a sample.
fn positive() -> RangedU64ValueParser<usize> {
    RangedU64ValueParser::new().range(1..)
}

/// Summary of one side's pooled per-call latencies, in microseconds.
struct Summary {
    p50: f64,
    p99: f64,
    mean: f64,
}

fn summarize(samples: &mut [Duration]) -> Summary {
    samples.sort_unstable();
    let at = |q: f64| {
        let index = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[index.min(samples.len() - 1)].as_secs_f64() * 1e6
    };
    let total: Duration = samples.iter().sum();
    Summary {
        p50: at(0.50),
        p99: at(0.99),
        mean: total.as_secs_f64() * 1e6 / samples.len() as f64,
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    let client = Client::new(args.url.as_str(), args.api_key.as_str()).context("client")?;
    let raw = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .context("reqwest")?;
    let url = format!(
        "{}{}",
        args.url.trim_end_matches('/'),
        paths::list_zones(&args.provider, &args.region)
    );

    let via_client = || async {
        let started = Instant::now();
        let zones = client
            .list_zones(args.provider.clone(), args.region.clone())
            .await
            .context("list_zones")?;
        std::hint::black_box(zones);
        anyhow::Ok(started.elapsed())
    };
    let via_raw = || async {
        let started = Instant::now();
        let response = raw
            .get(&url)
            .header(API_KEY, args.api_key.as_str())
            .send()
            .await
            .with_context(|| format!("GET {url}"))?;
        if !response.status().is_success() {
            bail!("GET {url}: status {}", response.status());
        }
        let body = response.bytes().await.context("body")?;
        std::hint::black_box(body);
        anyhow::Ok(started.elapsed())
    };

    // Warm both connections (and the server's key cache) before measuring.
    for _ in 0..200 {
        via_client().await?;
        via_raw().await?;
    }
    let mut client_samples = Vec::with_capacity(args.requests * args.rounds);
    let mut raw_samples = Vec::with_capacity(args.requests * args.rounds);
    // Call by call, alternating which goes first: the loopback round trip changes with the
    // state of the machine, and blocks of one kind then the other let the two kinds see
    // different states (blocks once showed the raw GET several times faster than the client,
    // where interleaved calls show them alike).
    for round in 0..args.rounds {
        for i in 0..args.requests {
            if (round + i) % 2 == 0 {
                client_samples.push(via_client().await?);
                raw_samples.push(via_raw().await?);
            } else {
                raw_samples.push(via_raw().await?);
                client_samples.push(via_client().await?);
            }
        }
    }
    let c = summarize(&mut client_samples);
    let r = summarize(&mut raw_samples);
    println!(
        "appzone-client list_zones: p50 {:.1} µs, p99 {:.1} µs, mean {:.1} µs",
        c.p50, c.p99, c.mean
    );
    println!(
        "raw reqwest GET:           p50 {:.1} µs, p99 {:.1} µs, mean {:.1} µs",
        r.p50, r.p99, r.mean
    );
    println!(
        "ratio client/raw: p50 {:.3}, mean {:.3} (target ≤ 1.10)",
        c.p50 / r.p50,
        c.mean / r.mean
    );
    println!(
        "APPZONE_CLIENT samples={} client_p50_us={:.1} client_p99_us={:.1} client_mean_us={:.1} \
         raw_p50_us={:.1} raw_p99_us={:.1} raw_mean_us={:.1} ratio_p50={:.4} ratio_mean={:.4}",
        client_samples.len(),
        c.p50,
        c.p99,
        c.mean,
        r.p50,
        r.p99,
        r.mean,
        c.p50 / r.p50,
        c.mean / r.mean
    );
    Ok(())
}

fn main() -> ExitCode {
    // The calls are sequential: worker threads would only add cross-thread wake-ups to them.
    appzone_bench::run_to_exit(
        &mut tokio::runtime::Builder::new_current_thread(),
        run(Args::parse()),
    )
}

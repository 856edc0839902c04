//! The command line of `cargo xtask bench`, and the run it asks for.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

/// The flags of `cargo xtask bench`. The presets (`--quick`, `--listing-only`) give the
/// defaults of the values they change; a value given explicitly wins over a preset.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BenchArgs {
    /// Smoke test: 1 round of 2 s, no long run, short client benchmark
    #[arg(long)]
    quick: bool,
    /// Only the 64-connection zone listing A/B (appzone, log=warn, baseline): the quick loop
    /// while working on the hot path
    #[arg(long)]
    listing_only: bool,
    /// Rounds of every A/B scenario [default: 5; 1 with --quick]
    #[arg(long, value_name = "N", value_parser = RangedU64ValueParser::<usize>::new().range(1..))]
    rounds: Option<usize>,
    /// Length of each wrk run, in seconds [default: 5; 2 with --quick]
    #[arg(long, value_name = "SECS", value_parser = RangedU64ValueParser::<u64>::new().range(1..))]
    duration: Option<u64>,
    /// Requests of the long memory run at 64 connections, 0 to skip it [default: 1000000; 0
    /// with --quick or --listing-only]
    #[arg(long, value_name = "N")]
    long_requests: Option<u64>,
    /// PostgreSQL for the delete scenario, run when it answers psql
    #[arg(
        long,
        value_name = "URL",
        env = "APPZONE_BENCH_POSTGRES_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/test"
    )]
    postgres: String,
    /// Skip the PostgreSQL delete scenario
    #[arg(long)]
    no_postgres: bool,
    /// Skip the client benchmark
    #[arg(long)]
    no_client: bool,
    /// Where to write the report [default: target/bench/report.md, or scale.md]
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Keep the temporary directory (databases, server logs, wrk scripts)
    #[arg(long)]
    keep: bool,
    /// Also count user-space instructions per listing of appzone and the baseline under
    /// callgrind (needs valgrind)
    #[arg(long)]
    callgrind: bool,
    /// Instead of the load benchmarks, the scale run (about 6 minutes): catalog 1x/10x/100x,
    /// 10 vs 1,000,000 API keys, 1,000 vs 10,000,000 profiles, 0 vs 5,000 idle connections and
    /// a wrong-key flood (of the other flags only --output and --keep apply)
    #[arg(long)]
    scale: bool,
    /// Instead of the load benchmarks, three replicas on PostgreSQL: listing throughput and
    /// p99 with per-replica limits and with limits in Redis, and how long a revoked key keeps
    /// working on the slowest replica (of the other flags --rounds, --duration, --postgres,
    /// --redis-url, --no-redis, --output and --keep apply)
    #[arg(long)]
    replicas: bool,
    /// Redis for `--replicas`' Redis-backed limits, used when it answers
    #[arg(
        long,
        value_name = "URL",
        env = "APPZONE_BENCH_REDIS_URL",
        default_value = "redis://127.0.0.1:6379"
    )]
    redis_url: String,
    /// Skip `--replicas`' Redis-backed limits
    #[arg(long)]
    no_redis: bool,
}

/// What one run does, the presets applied.
#[derive(Debug, Clone)]
pub(super) struct Options {
    pub(super) rounds: usize,
    pub(super) duration: u64,
    /// Seconds of warm-up per server before the measured runs.
    pub(super) warmup: u64,
    pub(super) long_requests: u64,
    /// PostgreSQL for the delete scenario; `None` skips it.
    pub(super) postgres: Option<String>,
    /// Calls per round and rounds of the client benchmark; `None` skips it.
    pub(super) client: Option<(usize, usize)>,
    pub(super) output: PathBuf,
    pub(super) keep: bool,
    pub(super) callgrind: bool,
    pub(super) listing_only: bool,
    pub(super) scale: bool,
    pub(super) replicas: bool,
    /// Redis for `--replicas`; `None` skips the Redis-backed limits.
    pub(super) redis: Option<String>,
}

impl BenchArgs {
    pub(super) fn resolve(self) -> Options {
        let (quick, only) = (self.quick, self.listing_only);
        let long_default = if quick || only { 0 } else { 1_000_000 };
        let name = if self.scale {
            "scale.md"
        } else if self.replicas {
            "replicas.md"
        } else {
            "report.md"
        };
        Options {
            rounds: self.rounds.unwrap_or(if quick { 1 } else { 5 }),
            duration: self.duration.unwrap_or(if quick { 2 } else { 5 }),
            warmup: if quick { 1 } else { 2 },
            // `--listing-only` runs none of the phases these switch off.
            long_requests: if only {
                0
            } else {
                self.long_requests.unwrap_or(long_default)
            },
            postgres: (!self.no_postgres && (!only || self.replicas)).then_some(self.postgres),
            client: (!self.no_client && !only).then_some(if quick { (300, 2) } else { (2000, 5) }),
            output: (self.output).unwrap_or_else(|| crate::target_dir().join("bench").join(name)),
            keep: self.keep,
            callgrind: self.callgrind,
            listing_only: only,
            scale: self.scale,
            replicas: self.replicas,
            redis: (!self.no_redis).then_some(self.redis_url),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Bench {
        #[command(flatten)]
        args: BenchArgs,
    }

    fn parse(args: &[&str]) -> Result<Options, clap::Error> {
        Bench::try_parse_from(std::iter::once("bench").chain(args.iter().copied()))
            .map(|b| b.args.resolve())
    }

    #[test]
    fn presets_and_explicit_values() {
        let full = parse(&[]).unwrap();
        assert_eq!(
            (full.rounds, full.duration, full.long_requests),
            (5, 5, 1_000_000)
        );
        assert_eq!(full.client, Some((2000, 5)));
        assert!(full.output.ends_with("bench/report.md"));
        let quick = parse(&["--quick", "--no-postgres"]).unwrap();
        assert_eq!(
            (quick.rounds, quick.duration, quick.long_requests),
            (1, 2, 0)
        );
        assert_eq!((quick.postgres, quick.client), (None, Some((300, 2))));
        let explicit = parse(&["--rounds", "3", "--quick", "--long-requests", "10"]).unwrap();
        assert_eq!((explicit.rounds, explicit.long_requests), (3, 10));
        let listing = parse(&["--listing-only", "--long-requests", "10"]).unwrap();
        assert_eq!(
            (listing.long_requests, listing.client, listing.postgres),
            (0, None, None)
        );
        let given = parse(&["--postgres", "postgres://x/y", "--no-client"]).unwrap();
        assert_eq!(
            (given.postgres.as_deref(), given.client),
            (Some("postgres://x/y"), None)
        );
        assert!(parse(&["--scale"])
            .unwrap()
            .output
            .ends_with("bench/scale.md"));
        let scale = parse(&["--scale", "--output", "s.md", "--keep"]).unwrap();
        assert_eq!((scale.output, scale.keep), (PathBuf::from("s.md"), true));
        for bad in [
            &["--rounds", "0"][..],
            &["--duration", "0"],
            &["--threads", "2"],
            &["--perf"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}

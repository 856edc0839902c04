//! The command line of `cargo xtask bench`, and the run it asks for.

use std::path::PathBuf;

use clap::builder::RangedU64ValueParser;

/// PostgreSQL for the delete scenario when neither `--postgres` nor the environment names one.
const DEFAULT_POSTGRES: &str = "postgres://postgres@127.0.0.1:5432/test";

/// The flags of `cargo xtask bench`. The presets (`--quick`, `--listing-only`) give the
/// defaults of the values they change; a value given explicitly wins over a preset.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct BenchArgs {
    /// Smoke test: 1 round of 2 s, no long run, short client benchmark
    #[arg(long)]
    quick: bool,

    /// Only the 64-connection zone listing A/B (appzone, log=warn, baseline): the quick loop
    /// while working on the hot path; no discovery listings, deletes, mixed, long run, client or
    /// PostgreSQL
    #[arg(long)]
    listing_only: bool,

    /// Rounds of every A/B scenario [default: 5; 1 with --quick]
    #[arg(long, value_name = "N", value_parser = at_least_one::<usize>())]
    rounds: Option<usize>,

    /// Length of each wrk run, in seconds [default: 5; 2 with --quick]
    #[arg(long, value_name = "SECS", value_parser = at_least_one::<u64>())]
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
        default_value = DEFAULT_POSTGRES
    )]
    postgres: String,

    /// Skip the PostgreSQL delete scenario
    #[arg(long)]
    no_postgres: bool,

    /// Skip the client benchmark
    #[arg(long)]
    no_client: bool,

    /// Where to write the report [default: target/bench/report.md; target/bench/scale.md with
    /// --scale]
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,

    /// Keep the temporary directory (databases, server logs, wrk scripts)
    #[arg(long)]
    keep: bool,

    /// Also count the user-space instructions per listing of appzone and the baseline under
    /// valgrind's callgrind (8 connections; deterministic, whatever else the machine does);
    /// needs valgrind
    #[arg(long)]
    callgrind: bool,

    /// Also profile appzone under the 64-connection listing with `perf record` (cpu-clock,
    /// DWARF call graphs; target/bench/perf.data) and add the top symbols to the report
    #[arg(long)]
    perf: bool,

    /// Instead of the load benchmarks, the scale run (about 6 minutes after the build): catalog
    /// 1x/10x/100x, 10 vs 1,000,000 API keys, 1,000 vs 10,000,000 profiles, 0 vs 5,000 idle
    /// connections and a wrong-key flood (the other flags but --output and --keep do not apply)
    #[arg(long)]
    scale: bool,
}

/// A positive count: zero rounds or seconds would measure nothing.
fn at_least_one<T: TryFrom<u64> + Clone + Send + Sync + 'static>() -> RangedU64ValueParser<T> {
    RangedU64ValueParser::new().range(1..)
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
    pub(super) perf: bool,
    pub(super) callgrind: bool,
    pub(super) listing_only: bool,
    /// The scale run instead of the load benchmarks.
    pub(super) scale: bool,
}

impl BenchArgs {
    pub(super) fn resolve(self) -> Options {
        let quick = self.quick;
        // `--listing-only` runs none of the phases these switch off.
        let only = self.listing_only;
        Options {
            rounds: self.rounds.unwrap_or(if quick { 1 } else { 5 }),
            duration: self.duration.unwrap_or(if quick { 2 } else { 5 }),
            warmup: if quick { 1 } else { 2 },
            long_requests: match self.long_requests {
                _ if only => 0,
                Some(n) => n,
                None if quick => 0,
                None => 1_000_000,
            },
            postgres: (!self.no_postgres && !only).then_some(self.postgres),
            client: (!self.no_client && !only).then_some(if quick { (300, 2) } else { (2000, 5) }),
            output: self.output.unwrap_or_else(|| {
                let name = if self.scale { "scale.md" } else { "report.md" };
                crate::target_dir().join("bench").join(name)
            }),
            keep: self.keep,
            perf: self.perf,
            callgrind: self.callgrind,
            listing_only: only,
            scale: self.scale,
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
        assert_eq!((full.rounds, full.duration), (5, 5));
        assert_eq!(full.long_requests, 1_000_000);
        assert_eq!(full.client, Some((2000, 5)));

        let quick = parse(&["--quick", "--no-postgres"]).unwrap();
        assert_eq!((quick.rounds, quick.duration, quick.warmup), (1, 2, 1));
        assert_eq!(quick.long_requests, 0);
        assert_eq!(quick.postgres, None);
        assert_eq!(quick.client, Some((300, 2)));
        let explicit = parse(&["--rounds", "3", "--quick", "--long-requests", "10"]).unwrap();
        assert_eq!((explicit.rounds, explicit.long_requests), (3, 10));

        let listing = parse(&["--listing-only", "--long-requests", "10"]).unwrap();
        assert!(listing.listing_only);
        assert_eq!((listing.long_requests, listing.client), (0, None));
        assert_eq!(listing.postgres, None);

        let given = parse(&["--postgres", "postgres://x/y", "--no-client"]).unwrap();
        assert_eq!(given.postgres.as_deref(), Some("postgres://x/y"));
        assert_eq!(given.client, None);
        assert!(parse(&["--callgrind"]).unwrap().callgrind);
        assert_eq!(
            parse(&["--output", "r.md"]).unwrap().output,
            PathBuf::from("r.md")
        );
        assert!(!full.scale);
        assert!(full.output.ends_with("bench/report.md"));

        let scale = parse(&["--scale"]).unwrap();
        assert!(scale.scale);
        assert!(scale.output.ends_with("bench/scale.md"));
        let scale = parse(&["--scale", "--output", "s.md", "--keep"]).unwrap();
        assert_eq!((scale.output, scale.keep), (PathBuf::from("s.md"), true));
    }

    #[test]
    fn rejects_what_would_measure_nothing_or_is_unknown() {
        for bad in [
            &["--rounds"][..],
            &["--rounds", "0"],
            &["--duration", "0"],
            &["--threads", "2"],
            &["--bogus"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}

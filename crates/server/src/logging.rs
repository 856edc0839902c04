//! Log output: `tracing` to stderr, as text lines or one JSON object per line.
//!
//! Request lines are `INFO` events with target `appzone::request` ([`crate::http::observe`]);
//! `APPZONE_LOG` (or `RUST_LOG`) filters them like every other line.

use tracing_subscriber::EnvFilter;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber: `APPZONE_LOG` (or `RUST_LOG`) else `default_filter`. Does
/// nothing when one is installed already (tests).
pub fn init(format: LogFormat, default_filter: &str) {
    let filter = EnvFilter::try_from_env("APPZONE_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new(default_filter));
    // Colours only for a person at a terminal, never in files or pipes.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

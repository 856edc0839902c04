//! `cargo xtask bench`: load benchmarks. Placeholder until the performance work lands.

/// Runs the benchmarks.
pub fn run(_args: &[&str]) -> Result<(), String> {
    Err("bench: not implemented yet".to_owned())
}

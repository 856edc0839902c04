//! `cargo xtask deny`: supply-chain checks. Placeholder until the reliability work lands.

/// Runs cargo-deny.
pub fn run() -> Result<(), String> {
    eprintln!("deny: not configured yet");
    Ok(())
}

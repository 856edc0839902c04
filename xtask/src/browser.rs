//! `cargo xtask browser`: the /docs page driven in headless Chromium.

pub fn run() -> Result<(), String> {
    eprintln!("browser: not implemented yet");
    Ok(())
}

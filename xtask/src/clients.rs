//! `cargo xtask clients`: Python and TypeScript clients generated from openapi.json, run against the real server.

use crate::demo_server::{build_server, DemoServer, ScratchPostgres};

pub fn run() -> Result<(), String> {
    let binary = build_server()?;
    let dir = std::env::temp_dir().join(format!("appzone-clients-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let sqlite = format!("sqlite://{}/demo.db", dir.display());
    let server = DemoServer::start(&binary, &sqlite)?;
    eprintln!("clients: sqlite demo server {server:?}");
    drop(server);
    if let Ok(url) = std::env::var("APPZONE_TEST_POSTGRES_URL") {
        let pg = ScratchPostgres::create(&url, "clients")?;
        let server = DemoServer::start(&binary, &pg.url)?;
        eprintln!("clients: postgres demo server {server:?}");
    }
    eprintln!("clients: not implemented yet");
    Ok(())
}

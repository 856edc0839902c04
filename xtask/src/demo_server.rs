//! A real `appzone-server serve --demo` on a random port, for the tasks that test the server
//! from outside (generated clients, the browser): what a stranger would run.
//!
//! [`DemoServer::start`] builds nothing: call [`build_server`] first (a debug build, shared
//! with `cargo test`). The server is killed when the value is dropped, whatever happened.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use crate::process::{cargo, psql};

/// How long the server may take to print its demo lines.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Builds the server binary (debug profile, locked) and returns its path.
pub fn build_server() -> Result<PathBuf> {
    crate::process::run(cargo().args(["build", "--locked", "-p", "appzone-server"]))?;
    Ok(crate::target_dir().join("debug").join("appzone-server"))
}

/// A running demo server and what its demo run seeded.
#[derive(Debug)]
pub struct DemoServer {
    child: Child,
    /// `http://127.0.0.1:<port>`, no trailing slash.
    pub base_url: String,
    /// An admin key of the demo organization.
    pub admin_key: String,
    /// A member key of the demo organization.
    pub member_key: String,
    /// A live profile of the demo organization (the one the demo's 204 line deletes).
    pub deletable_profile: String,
    /// Another live profile (the one the demo's 403 line tries to delete).
    pub kept_profile: String,
}

impl DemoServer {
    /// Starts `serve --demo` on `127.0.0.1:0` over `database_url` (a fresh SQLite file or
    /// PostgreSQL database) and waits for its demo lines.
    pub fn start(binary: &std::path::Path, database_url: &str) -> Result<Self> {
        let mut child = Command::new(binary)
            .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
            .env("APPZONE_DATABASE_URL", database_url)
            .env("APPZONE_LOG", "warn")
            .stdout(Stdio::null())
            // `serve --demo` prints its keys and curl lines on stderr, with the log.
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let rx = crate::process::stderr_lines(&mut child).context("no stderr from the server")?;
        let mut server = DemoServer {
            child,
            base_url: String::new(),
            admin_key: String::new(),
            member_key: String::new(),
            deletable_profile: String::new(),
            kept_profile: String::new(),
        };
        let deadline = Instant::now() + START_TIMEOUT;
        let mut label = String::new();
        while server.deletable_profile.is_empty() || server.kept_profile.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx.recv_timeout(left).map_err(|_| {
                anyhow!(
                    "the server printed no demo lines within {} s",
                    START_TIMEOUT.as_secs()
                )
            })?;
            if let Some(key) = line.strip_prefix("admin key:") {
                server.admin_key = key.trim().to_owned();
            } else if let Some(key) = line.strip_prefix("member key:") {
                server.member_key = key.trim().to_owned();
            } else if line.starts_with('#') {
                label = line;
            } else if let Some(url) = line
                .split_whitespace()
                .last()
                .filter(|_| line.starts_with("curl"))
            {
                let (base, path) = url
                    .find("/api/")
                    .map(|at| url.split_at(at))
                    .with_context(|| format!("unexpected demo line: {line}"))?;
                server.base_url = base.to_owned();
                let profile = path.rsplit('/').next().unwrap_or_default().to_owned();
                if label.starts_with("# 204") {
                    server.deletable_profile = profile;
                } else if label.starts_with("# 403") {
                    server.kept_profile = profile;
                }
            }
        }
        // Pass the rest of the log on (the thread ends with the process).
        std::thread::spawn(move || {
            while let Ok(line) = rx.recv() {
                eprintln!("appzone-server: {line}");
            }
        });
        Ok(server)
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A fresh PostgreSQL database next to the one `APPZONE_TEST_POSTGRES_URL` names, dropped on
/// drop. Needs `psql`.
#[derive(Debug)]
pub struct ScratchPostgres {
    admin_url: String,
    name: String,
    /// URL of the fresh database.
    pub url: String,
}

impl ScratchPostgres {
    /// Creates `appzone_<purpose>_<pid>` on the server of `admin_url`.
    pub fn create(admin_url: &str, purpose: &str) -> Result<Self> {
        let name = format!("appzone_{purpose}_{}", std::process::id());
        let (server, _) = admin_url
            .rsplit_once('/')
            .with_context(|| format!("not a database URL: {admin_url}"))?;
        let scratch = ScratchPostgres {
            admin_url: admin_url.to_owned(),
            url: format!("{server}/{name}"),
            name,
        };
        scratch.psql(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            scratch.name
        ))?;
        scratch.psql(&format!("CREATE DATABASE {}", scratch.name))?;
        Ok(scratch)
    }

    fn psql(&self, sql: &str) -> Result<()> {
        psql(&self.admin_url, sql).map(drop)
    }
}

impl Drop for ScratchPostgres {
    fn drop(&mut self) {
        let _ = self.psql(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

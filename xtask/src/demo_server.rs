//! A real `appzone-server serve --demo` on a random port, for the tasks that test the server
//! from outside (generated clients, the browser): what a stranger would run.
//!
//! [`DemoServer::start`] builds nothing: it runs the binary it is given (the shared release
//! build, build.rs). The server is killed when the value is dropped, whatever happened.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use crate::process::{output_with, psql, show};

/// How long the server may take to print its demo lines.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// One scenario run (each scenario program also gives up by itself after 60 s).
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(120);

/// A running demo server and what its demo run seeded.
#[derive(Debug)]
pub struct DemoServer {
    child: Child,
    /// A scratch directory of its SQLite database, removed after the server is killed.
    dir: Option<PathBuf>,
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
    /// Starts `serve --demo` on a fresh SQLite file in a scratch directory of its own
    /// (`appzone-<name>-<pid>` in the temporary directory), removed on drop.
    pub fn sqlite(binary: &Path, name: &str) -> Result<Self> {
        let dir = std::env::temp_dir().join(format!("appzone-{name}-{}", std::process::id()));
        // Emptied: a leftover of a killed run with the same pid would not be fresh.
        crate::fresh_dir(&dir)?;
        let mut server = Self::start(binary, &format!("sqlite://{}/demo.db", dir.display()))
            .inspect_err(|_| drop(std::fs::remove_dir_all(&dir)))?;
        server.dir = Some(dir);
        Ok(server)
    }

    /// Starts `serve --demo` on `127.0.0.1:0` over `database_url` (a fresh SQLite file or
    /// PostgreSQL database) and waits for its demo lines.
    pub fn start(binary: &Path, database_url: &str) -> Result<Self> {
        let mut child = Command::new(binary)
            .args(["serve", "--demo", "--listen", "127.0.0.1:0"])
            .env("APPZONE_DATABASE_URL", database_url)
            .env("APPZONE_LOG", "warn")
            // `serve --demo` prints its keys and curl lines on stdout; its log (stderr, warnings
            // only) goes to ours.
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let rx = crate::process::stdout_lines(&mut child).context("no stdout from the server")?;
        let mut server = DemoServer {
            child,
            dir: None,
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
        // Pass anything else it prints on (the thread ends with the process).
        std::thread::spawn(move || {
            while let Ok(line) = rx.recv() {
                eprintln!("appzone-server: {line}");
            }
        });
        Ok(server)
    }

    /// `command` with the server and what the demo seeded in the variables the scenarios read:
    /// `APPZONE_BASE_URL`, `APPZONE_ADMIN_KEY`, `APPZONE_MEMBER_KEY`,
    /// `APPZONE_DELETABLE_PROFILE` and `APPZONE_KEPT_PROFILE`.
    pub fn env<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .env("APPZONE_BASE_URL", &self.base_url)
            .env("APPZONE_ADMIN_KEY", &self.admin_key)
            .env("APPZONE_MEMBER_KEY", &self.member_key)
            .env("APPZONE_DELETABLE_PROFILE", &self.deletable_profile)
            .env("APPZONE_KEPT_PROFILE", &self.kept_profile)
    }

    /// Runs a scenario program against this server (see [`Self::env`]), its lines passed on
    /// under `tag`; Err with its first `FAILED` line when it prints one, or when it fails.
    pub fn run_scenario(&self, command: &mut Command, tag: &str) -> Result<()> {
        let shown = show(self.env(command));
        eprintln!("$ {shown}");
        let prefix = tag.to_owned();
        let out = output_with(command, SCENARIO_TIMEOUT, move |line| {
            println!("  [{prefix}] {line}");
        })?;
        for line in out.stderr.lines() {
            eprintln!("  [{tag} stderr] {line}");
        }
        match (out.stdout.lines().chain(out.stderr.lines())).find(|line| line.contains("FAILED")) {
            Some(line) => bail!("{line}"),
            None if out.status.success() => Ok(()),
            None => bail!("`{shown}` failed ({}): {}", out.status, out.stderr.trim()),
        }
    }
}

impl Drop for DemoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
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

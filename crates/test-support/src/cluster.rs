//! A throwaway PostgreSQL cluster that a test can stop and start: `initdb` into a temporary
//! directory and `pg_ctl` on a free port, run as the `postgres` user, never the machine's own
//! server.

use std::path::PathBuf;
use std::process::Command;

/// A running throwaway cluster; stopped (immediately) and removed when dropped.
#[derive(Debug)]
pub struct ThrowawayPostgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
}

impl ThrowawayPostgres {
    /// Makes and starts a cluster, or `None` with a printed notice where PostgreSQL's server
    /// binaries or the `postgres` user are missing (which CI does not accept).
    pub fn start() -> Option<Self> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|versions| {
                versions
                    .filter_map(Result::ok)
                    .map(|version| version.path().join("bin"))
                    .find(|bin| bin.join("initdb").exists())
            });
        let runuser = Command::new("runuser")
            .args(["-u", "postgres", "--", "true"])
            .status()
            .is_ok_and(|status| status.success());
        let found = bin.is_some() && runuser;
        if !crate::found_or_skipped(
            found,
            "no PostgreSQL server binaries (/usr/lib/postgresql/*/bin/initdb) or no way to run \
             them as the postgres user; the test that stops a database did not run",
        ) {
            return None;
        }
        let bin = bin?;
        let dir = tempfile::Builder::new()
            .prefix("appzone-pg-")
            .tempdir()
            .unwrap();
        let owned = Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(owned.success());
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Self { dir, bin, port };
        let data = cluster.data();
        cluster.as_postgres(
            "initdb",
            &["-A", "trust", "-U", "postgres", "--no-sync", "-D", &data],
        );
        cluster.restart();
        Some(cluster)
    }

    /// The cluster's URL (database `postgres`).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server (`pg_ctl -m fast stop`: connections are cut, nothing is lost).
    pub fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "-w", "stop"]);
    }

    /// Starts it again and waits until it accepts connections.
    pub fn restart(&self) {
        let data = self.data();
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=on",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("server.log");
        self.as_postgres(
            "pg_ctl",
            &[
                "-D",
                &data,
                "-o",
                &options,
                "-l",
                &log.display().to_string(),
                "-w",
                "start",
            ],
        );
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.data();
        let mut all = vec!["-D", data.as_str()];
        all.extend_from_slice(args);
        self.as_postgres("pg_ctl", &all);
    }

    fn as_postgres(&self, tool: &str, args: &[&str]) {
        let out = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join(tool))
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{tool} {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for ThrowawayPostgres {
    fn drop(&mut self) {
        let data = self.data();
        let _ = Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(self.bin.join("pg_ctl"))
            .args(["-D", &data, "-m", "immediate", "stop"])
            .output();
    }
}

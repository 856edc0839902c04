//! Start-up and operator errors about the SQLite files themselves (modes, directory, full
//! disk), and the modes of the files a new database gets: the real binary, as an operator runs
//! it.
//!
//! Root may write any file whatever its mode, so when these tests run as root the binary runs
//! as `nobody` (uid 65534, through `setpriv`) in a directory given to that user: the errors
//! under test are the ones an unprivileged service user meets.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::server_process::{wrapped_command, ServerProcess, BIN};

const NOBODY: u32 = 65534;

/// How long a failing start may take (a debug build on a loaded two-core machine, plus the
/// pool's 3 s acquire timeout in the almost-full-disk case).
const FAIL_TIMEOUT: Duration = Duration::from_secs(60);

fn is_root() -> bool {
    // `/proc/self` belongs to the process's effective user.
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// Whether a test that needs root may run: under `CI=true` a missing root fails the test
/// instead of skipping it, so CI never counts it as passed without running it.
fn root_or_skip(test: &str) -> bool {
    if is_root() {
        return true;
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test} needs root (it mounts a file system), and CI=true does not allow skipping it"
    );
    eprintln!("NOTICE: {test} skipped: it needs root (it mounts a file system)");
    false
}

/// The file's permission bits in octal, as `ls` and `chmod` spell them (`0600`).
fn mode(path: &Path) -> String {
    format!(
        "{:04o}",
        std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
    )
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A directory for databases, and the user the binary runs as there.
struct Place {
    dir: tempfile::TempDir,
    /// The program and arguments that run the binary as an unprivileged user when the test
    /// runs as root; empty otherwise.
    wrapper: Vec<String>,
}

impl Place {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let wrapper = if is_root() {
            std::os::unix::fs::chown(dir.path(), Some(NOBODY), Some(NOBODY)).unwrap();
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
            ]
            .map(str::to_owned)
            .to_vec()
        } else {
            Vec::new()
        };
        Self { dir, wrapper }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn url(&self, name: &str) -> String {
        format!("sqlite://{}", self.path(name).display())
    }

    fn command(&self, url: &str, args: &[&str]) -> Command {
        let mut command = wrapped_command(&self.wrapper, url);
        command
            .env_remove("APPZONE_LOG")
            .args(args)
            .stdin(Stdio::null());
        command
    }

    /// Runs `args` on `url` and expects success.
    #[track_caller]
    fn ok(&self, url: &str, args: &[&str]) {
        let out = bounded(self.command(url, args));
        assert!(
            out.status.success(),
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Runs `args` (`serve` included: it must fail before it listens) on `url` and expects
    /// exit 1 with one `error: ` line on stderr, free of SQL and SQLite's own wording; returns
    /// that line.
    #[track_caller]
    fn fails(&self, url: &str, args: &[&str]) -> String {
        let mut args = args.to_vec();
        if args == ["serve"] {
            args.extend(["--listen", "127.0.0.1:0"]);
        }
        let out = bounded(self.command(url, &args));
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?} printed on stdout");
        assert!(stderr.starts_with("error: "), "{args:?}: {stderr:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr:?}");
        for internal in [
            "SQLite code",
            "readonly database",
            "unable to open",
            "SELECT",
            "PRAGMA",
        ] {
            assert!(!stderr.contains(internal), "{args:?}: {stderr:?}");
        }
        stderr
    }

    /// `serve` on `url` reaches "listening", then stops on SIGTERM.
    async fn serves(&self, url: &str) {
        let mut server = ServerProcess::start_wrapped(&self.wrapper, url, &[], "info").await;
        assert!(server.terminate().await.success());
    }
}

/// Runs `command` to its end, killing it after [`FAIL_TIMEOUT`] (a `serve` that should have
/// failed but started).
fn bounded(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + FAIL_TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn companions(db: &Path) -> Vec<PathBuf> {
    ["-wal", "-shm", "-journal"]
        .iter()
        .map(|suffix| {
            let mut name = db.as_os_str().to_owned();
            name.push(suffix);
            PathBuf::from(name)
        })
        .collect()
}

/// A read-only database file is named with what to do, by `serve` and by an operator command;
/// the failed start leaves no `-wal`/`-shm` behind, so once the mode is fixed the next start
/// works.
#[tokio::test]
async fn a_read_only_database_file_is_named_and_the_next_start_works_once_it_is_fixed() {
    let place = Place::new();
    let (db, url) = (place.path("a.db"), place.url("a.db"));
    place.ok(&url, &["migrate"]);
    chmod(&db, 0o444);
    for command in [&["serve"][..], &["migrate"], &["org", "create", "acme"]] {
        let err = place.fails(&url, command);
        assert!(
            err.contains(&format!(
                "the database file {} is not writable by this user",
                db.display()
            )) && err.contains(&format!("chmod 600 {}", db.display())),
            "{command:?}: {err}"
        );
    }
    for left in companions(&db) {
        assert!(!left.exists(), "the failed start left {}", left.display());
    }
    chmod(&db, 0o600);
    place.serves(&url).await;
    place.ok(&url, &["org", "create", "acme"]);
}

/// A directory the user cannot write (where SQLite must create `-wal`, `-shm` and its
/// journal) is named, for an existing database and for a new one.
#[test]
fn a_directory_the_user_cannot_write_is_named() {
    let place = Place::new();
    let data = place.path("data");
    std::fs::create_dir(&data).unwrap();
    if is_root() {
        std::os::unix::fs::chown(&data, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    let url = place.url("data/a.db");
    place.ok(&url, &["migrate"]);
    chmod(&data, 0o555);
    let expected = format!(
        "the directory {} is not writable by this user",
        data.display()
    );
    for (url, command) in [
        (&url, &["serve"][..]),
        (&url, &["org", "create", "acme"]),
        (&place.url("data/new.db"), &["migrate"]),
    ] {
        let err = place.fails(url, command);
        assert!(
            err.contains(&expected) && (err.contains("a.db-wal") || err.contains("new.db-wal")),
            "{command:?}: {err}"
        );
    }
    // The temporary directory must be removable.
    chmod(&data, 0o755);
    place.ok(&url, &["org", "create", "acme"]);
}

/// A database in a directory that does not exist is named by `serve` as by `migrate`.
#[test]
fn a_missing_directory_is_named() {
    let place = Place::new();
    let url = place.url("no/such/a.db");
    for command in [&["serve"][..], &["migrate"]] {
        let err = place.fails(&url, command);
        let missing = place.path("no/such");
        assert!(
            err.contains(&format!(
                "the directory {} does not exist",
                missing.display()
            )),
            "{command:?}: {err}"
        );
    }
}

/// A `-wal` or `-shm` this user cannot read and write (left by an earlier start as another
/// user, or by an older version's failed start on a read-only database) is named; once it is
/// given back, the database opens.
#[test]
fn a_wal_or_shm_this_user_cannot_use_is_named() {
    let place = Place::new();
    let (db, url) = (place.path("a.db"), place.url("a.db"));
    place.ok(&url, &["migrate"]);
    for suffix in ["-wal", "-shm"] {
        let stale = PathBuf::from(format!("{}{suffix}", db.display()));
        std::fs::write(&stale, b"").unwrap();
        chmod(&stale, 0o444);
        for command in [&["serve"][..], &["org", "create", "acme"]] {
            let err = place.fails(&url, command);
            assert!(
                err.contains(&format!(
                    "{} (mode 0444, owner uid {}) is not readable and writable by this user",
                    stale.display(),
                    std::fs::metadata(&stale).unwrap().uid()
                )),
                "{command:?}: {err}"
            );
        }
        std::fs::remove_file(&stale).unwrap();
    }
    place.ok(&url, &["org", "create", "acme"]);
}

/// Under umask 022 a new database and the `-wal` and `-shm` SQLite makes beside it are 0600:
/// they hold organization and profile names, audit records and key digests.
#[tokio::test]
async fn new_database_files_are_private_under_umask_022() {
    let place = Place::new();
    let (db, url) = (place.path("a.db"), place.url("a.db"));
    let umask_022: Vec<String> = ["sh", "-c", "umask 022 && exec \"$0\" \"$@\""]
        .iter()
        .map(|s| (*s).to_owned())
        .chain(place.wrapper.iter().cloned())
        .collect();
    // `sh -c SCRIPT BIN ARGS...`: the script runs the binary with its arguments.
    let mut migrate = Command::new(&umask_022[0]);
    migrate
        .args(&umask_022[1..])
        .arg(BIN)
        .args(["--database-url", &url, "migrate"]);
    assert!(bounded(migrate).status.success());
    assert_eq!(mode(&db), "0600", "{}", db.display());
    // The `-wal` and `-shm` exist while the server runs.
    let mut server = ServerProcess::start_wrapped(&umask_022, &url, &[], "info").await;
    let made: Vec<PathBuf> = companions(&db).into_iter().filter(|p| p.exists()).collect();
    assert!(made.len() >= 2, "{made:?}");
    for file in made.iter().chain([&db]) {
        assert_eq!(mode(file), "0600", "{}", file.display());
    }
    assert!(server.terminate().await.success());
}

/// An existing database file keeps the mode its operator gave it.
#[test]
fn an_existing_database_file_keeps_its_mode() {
    let place = Place::new();
    let (db, url) = (place.path("a.db"), place.url("a.db"));
    place.ok(&url, &["migrate"]);
    chmod(&db, 0o640);
    place.ok(&url, &["migrate"]);
    place.ok(&url, &["org", "create", "acme"]);
    assert_eq!(mode(&db), "0640");
}

/// A small tmpfs mounted for one test, unmounted (lazily, so a process still in it cannot stop
/// it) however the test ends.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0777"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success(), "mount tmpfs on {}", dir.path().display());
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the file system with one file until a write fails for lack of space, then frees
    /// `leave` bytes of it.
    fn fill(&self, leave: u64) {
        use std::io::Write;
        let fill = self.path().join("fill");
        let mut file = std::fs::File::create(&fill).unwrap();
        let block = [0u8; 4096];
        loop {
            match file.write_all(&block) {
                Ok(()) => {}
                Err(err) if err.kind() == std::io::ErrorKind::StorageFull => break,
                Err(err) => panic!("filling {}: {err}", fill.display()),
            }
        }
        let len = file.metadata().unwrap().len();
        file.set_len(len.saturating_sub(leave)).unwrap();
    }

    fn unfill(&self) {
        std::fs::remove_file(self.path().join("fill")).unwrap();
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let status = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
        if !matches!(status, Ok(status) if status.success()) {
            eprintln!(
                "could not unmount {}: {status:?}",
                self.dir.path().display()
            );
        }
    }
}

/// A new database on a full disk (nothing left, or less than SQLite needs to start) is named,
/// with the cause, by `migrate` and by `serve`; once there is space, the next start works.
#[tokio::test]
async fn a_full_disk_is_named_and_the_next_start_works_once_there_is_space() {
    if !root_or_skip("a_full_disk_is_named_and_the_next_start_works_once_there_is_space") {
        return;
    }
    // Room for two databases with the built-in catalog (its identities) and their WAL.
    let tmpfs = Tmpfs::mount("4m");
    let place = Place {
        dir: tempfile::tempdir_in(tmpfs.path()).unwrap(),
        wrapper: Vec::new(),
    };
    for (leave, name) in [(0, "empty.db"), (16 * 1024, "almost.db")] {
        tmpfs.fill(leave);
        let (db, url) = (place.path(name), place.url(name));
        for command in [&["migrate"][..], &["serve"]] {
            let err = place.fails(&url, command);
            assert!(
                err.contains(&format!(
                    "the disk holding {} is full; free space and start again",
                    db.display()
                )),
                "{leave} bytes left, {command:?}: {err}"
            );
        }
        tmpfs.unfill();
        place.serves(&url).await;
        place.ok(&url, &["org", "create", "acme"]);
    }
}

//! The SQLite database's files on disk: checked before SQLite opens them, created private, and
//! the errors SQLite reports while opening or migrating translated into their cause.
//!
//! SQLite's own errors name neither the file nor the cause ("unable to open database file",
//! "attempt to write a readonly database"), and a database file this user cannot write is
//! not refused by SQLite: it opens it read-only, creates its `-wal` and `-shm` with the same
//! (read-only) mode, and only then fails to write. Those files outlive the failed start and
//! make the next one fail even after the operator has fixed the database file. So the files
//! are checked here first, with the operations SQLite will need (open for reading and writing,
//! create beside the database), and a failure names the path and what to do; SQLite never
//! sees a file it could only open read-only.
//!
//! A new database file is created here with mode 0600 before SQLite opens it: it holds
//! organization and profile names, audit records and key digests, and SQLite gives the
//! `-wal`, `-shm` and journal files it creates the database file's mode. An existing file's
//! mode is left as it is: the operator may have chosen it.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::StoreError;

/// The files SQLite keeps beside the database: the write-ahead log, its shared-memory index,
/// and the rollback journal (used before the database is switched to WAL).
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Less free space than this beside the database, after SQLite failed to open or migrate it,
/// counts as a full disk: more than SQLite's first `-shm` region (32 KiB) and a few pages of
/// `-wal`.
const ROOM_TO_START: usize = 64 * 1024;

/// A SQLite database file, named by its URL.
#[derive(Debug, Clone)]
pub(super) struct SqliteFile {
    path: PathBuf,
}

impl SqliteFile {
    /// The file a `sqlite:` URL names; `None` for PostgreSQL and in-memory databases.
    pub(super) fn of(url: &str) -> Option<Self> {
        // A database opened read-only on purpose needs none of this.
        if url.contains("mode=ro") || url.contains("immutable=") {
            return None;
        }
        super::sqlite_file(url).map(|path| Self { path })
    }

    /// Refuses, naming the path and what to do, a database SQLite could not open for writing
    /// or could not keep its `-wal` and `-shm` beside; when `create` is set and the file is
    /// missing, creates it with mode 0600.
    pub(super) fn check(&self, create: bool) -> Result<(), StoreError> {
        let dir = self.dir();
        match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(fault(format!("{} is not a directory", dir.display()))),
            Err(err) if err.kind() == ErrorKind::NotFound => {
                return Err(fault(format!(
                    "the directory {} does not exist; create it, or correct the database URL",
                    dir.display()
                )));
            }
            Err(err) => return Err(self.io_fault(&dir, &err)),
        }
        if self.path.exists() {
            self.open_read_write(&self.path)?;
        } else if create {
            self.create_private()?;
        } else {
            return Err(fault(format!(
                "the database file {} does not exist",
                self.path.display()
            )));
        }
        let mut missing = false;
        for companion in COMPANIONS {
            let path = self.companion(companion);
            if path.exists() {
                self.open_read_write(&path)?;
            } else if companion != "-journal" {
                missing = true;
            }
        }
        // SQLite creates the `-wal` and `-shm` when it opens the database (and a journal
        // while it changes the schema); a directory it cannot create them in fails the open
        // with only "unable to open database file".
        if missing {
            self.check_dir_writable(&dir)?;
        }
        Ok(())
    }

    /// `err`, from opening, migrating or preparing this database, with its cause named when
    /// it is one of the file's (full disk, permissions); other errors are returned unchanged.
    pub(super) fn explain(&self, err: StoreError) -> StoreError {
        let Some(code) = sqlite_code(&err) else {
            // The pool retries a connection whose set-up fails until its acquire timeout and
            // then says only that; at start, on a disk with a little space left (less than
            // the `-shm`'s first 32 KiB), that is how a full disk shows.
            if matches!(err, StoreError::Unavailable(sqlx::Error::PoolTimedOut))
                && self.dir_is_full()
            {
                return self.disk_full();
            }
            return err;
        };
        match code & 0xff {
            // SQLITE_FULL: SQLite's word for ENOSPC on a write.
            13 => self.disk_full(),
            // SQLITE_IOERR: a failed write or `-shm` resize; a full disk is its usual cause
            // at start, which one small write shows.
            10 if self.dir_is_full() => self.disk_full(),
            // SQLITE_READONLY, SQLITE_CANTOPEN: what `check` looks for, should the files have
            // changed since it ran.
            8 | 14 => match self.check(false) {
                Err(cause) => cause,
                Ok(()) => err,
            },
            _ => err,
        }
    }

    fn dir(&self) -> PathBuf {
        match self.path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }

    fn companion(&self, suffix: &str) -> PathBuf {
        let mut name = self.path.clone().into_os_string();
        name.push(suffix);
        PathBuf::from(name)
    }

    /// Opens `path` as SQLite will (read and write, never created or truncated): the only
    /// check that answers as the kernel will, whatever the user, mode, ACL or mount.
    fn open_read_write(&self, path: &Path) -> Result<(), StoreError> {
        match OpenOptions::new().read(true).write(true).open(path) {
            Ok(_) => Ok(()),
            Err(err) if err.kind() == ErrorKind::PermissionDenied => {
                Err(fault(self.not_writable(path)))
            }
            Err(err) => Err(self.io_fault(path, &err)),
        }
    }

    fn not_writable(&self, path: &Path) -> String {
        let shown = path.display();
        let mode = std::fs::metadata(path).map_or_else(
            |_| String::new(),
            |meta| {
                format!(
                    " (mode {:04o}, owner uid {})",
                    meta.permissions().mode() & 0o7777,
                    meta.uid()
                )
            },
        );
        if path == self.path {
            format!(
                "the database file {shown} is not writable by this user{mode}; make it \
                 readable and writable by the user that runs appzone-server (chmod 600 \
                 {shown}, and chown if another user owns it)"
            )
        } else {
            // Left by an earlier run as another user, or by a start that failed on a
            // read-only database. A `-wal` may hold committed changes: it is given back to
            // this user, never deleted.
            format!(
                "{shown}{mode} is not readable and writable by this user, and SQLite needs it \
                 to open the database; give it the owner and mode of {} (do not delete a -wal \
                 file: it may hold committed changes)",
                self.path.display()
            )
        }
    }

    /// Creates the missing database file, empty (SQLite takes an empty file for a new
    /// database), with mode 0600 whatever the umask.
    fn create_private(&self) -> Result<(), StoreError> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&self.path);
        match file {
            // The umask may have taken bits away (never added any); 0600 exactly, so SQLite
            // can write it and its companions are 0600 too.
            Ok(file) => file
                .set_permissions(Permissions::from_mode(0o600))
                .map_err(|err| self.io_fault(&self.path, &err)),
            // Another process created it meanwhile: it is an existing file now.
            Err(err) if err.kind() == ErrorKind::AlreadyExists => self.open_read_write(&self.path),
            Err(err) if err.kind() == ErrorKind::PermissionDenied => {
                Err(fault(self.dir_not_writable(&self.dir())))
            }
            Err(err) => Err(self.io_fault(&self.path, &err)),
        }
    }

    /// Creates and removes an empty file beside the database, as SQLite will create its
    /// `-wal`, `-shm` and journal there.
    fn check_dir_writable(&self, dir: &Path) -> Result<(), StoreError> {
        let probe = self.probe_path();
        let created = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&probe);
        match created {
            Ok(_) => {
                // Nothing depends on the probe being gone but tidiness.
                let _ = std::fs::remove_file(&probe);
                Ok(())
            }
            Err(err) if err.kind() == ErrorKind::PermissionDenied => {
                Err(fault(self.dir_not_writable(dir)))
            }
            Err(err) => Err(self.io_fault(dir, &err)),
        }
    }

    /// Whether a write of [`ROOM_TO_START`] beside the database fails for lack of space.
    fn dir_is_full(&self) -> bool {
        let probe = self.probe_path();
        let Ok(mut file) = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&probe)
        else {
            return false;
        };
        let written = file
            .write_all(&[0; ROOM_TO_START])
            .and_then(|()| file.sync_all());
        drop::<File>(file);
        let _ = std::fs::remove_file(&probe);
        matches!(written, Err(err) if err.kind() == ErrorKind::StorageFull)
    }

    /// A name beside the database no other process uses (the process id is in it).
    fn probe_path(&self) -> PathBuf {
        let name = self
            .path
            .file_name()
            .map_or_else(|| "appzone".into(), |name| name.to_string_lossy());
        self.dir()
            .join(format!(".{name}.write-check-{}", std::process::id()))
    }

    fn dir_not_writable(&self, dir: &Path) -> String {
        let name = self.path.file_name().map_or_else(
            || self.path.display().to_string(),
            |name| name.to_string_lossy().into_owned(),
        );
        format!(
            "the directory {} is not writable by this user, and SQLite creates {name}-wal, \
             {name}-shm and a journal beside the database; make the directory writable by the \
             user that runs appzone-server",
            dir.display()
        )
    }

    fn disk_full(&self) -> StoreError {
        fault(format!(
            "the disk holding {} is full; free space and start again",
            self.path.display()
        ))
    }

    fn io_fault(&self, path: &Path, err: &std::io::Error) -> StoreError {
        match err.kind() {
            ErrorKind::ReadOnlyFilesystem => fault(format!(
                "{} is on a read-only file system; SQLite must write the database and create \
                 files beside it: mount it read-write, or move the database",
                path.display()
            )),
            ErrorKind::StorageFull => self.disk_full(),
            _ => fault(format!("cannot use {}: {err}", path.display())),
        }
    }
}

/// `err`, from opening or preparing (migrating, seeding) the database at `url`, with its cause
/// named when it is one of a SQLite file's (a full disk, permissions); other errors, and all of
/// PostgreSQL's, are returned unchanged.
pub fn explain_open_error(url: &str, err: StoreError) -> StoreError {
    match SqliteFile::of(url) {
        Some(file) => file.explain(err),
        None => err,
    }
}

fn fault(message: String) -> StoreError {
    StoreError::File(message)
}

/// The SQLite result code (extended) behind `err`, if it is a database error.
fn sqlite_code(err: &StoreError) -> Option<i32> {
    use sqlx::migrate::MigrateError;
    let sqlx_err = match err {
        StoreError::Unavailable(e) | StoreError::Database(e) => e,
        StoreError::Migrate(MigrateError::Execute(e) | MigrateError::ExecuteMigration(e, _)) => e,
        StoreError::Batch(inner) => return sqlite_code(inner),
        _ => return None,
    };
    match sqlx_err {
        sqlx::Error::Database(db) => db.code()?.parse().ok(),
        _ => None,
    }
}

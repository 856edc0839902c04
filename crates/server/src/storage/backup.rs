//! `backup`: a consistent copy of a SQLite database, taken while the server serves.
//!
//! `VACUUM INTO` writes the copy from one read transaction, so it is one moment of the
//! database (WAL content included) and does not stop writers in WAL mode. The target path is a
//! bound parameter: `VACUUM INTO` takes an expression, so no value enters the SQL text. It is
//! made absolute first, so SQLite can never take it for a `file:` URI. The file is created
//! here, empty and with mode 0600 (as the database: it holds the same names, audit records and
//! key digests) before SQLite writes into it, which `VACUUM INTO` allows; a copy that fails is
//! removed, so nothing half-written is left.

use std::fs::{File, OpenOptions, Permissions};
use std::io::ErrorKind;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::errors::ResultExt;
use super::{Backend, Store, StoreError};

impl Store {
    /// Copies this SQLite database into `target`, which must not exist. Refused on PostgreSQL
    /// ([`StoreError::Invalid`]); a file error is [`StoreError::File`], naming the path.
    pub async fn backup_into(&self, target: &Path) -> Result<(), StoreError> {
        if self.backend != Backend::Sqlite {
            return Err(StoreError::Invalid(
                "backup copies SQLite databases; for PostgreSQL use pg_dump".to_owned(),
            ));
        }
        let target = absolute(target)?;
        let shown = target.display().to_string();
        let Some(sql_path) = target.to_str().map(str::to_owned) else {
            return Err(StoreError::File(format!(
                "{shown}: the backup path must be valid UTF-8"
            )));
        };
        let file = create_private(&target)?;
        let copied = sqlx::query("VACUUM INTO $1")
            .bind(sql_path)
            .execute(&self.pool)
            .await
            .classify()
            .and_then(|_| {
                // VACUUM INTO does not sync what it wrote; a backup is meant to outlive a crash.
                file.sync_all()
                    .map_err(|err| StoreError::File(format!("cannot sync {shown}: {err}")))
            });
        if let Err(err) = copied {
            // Never leave a partial copy that could be mistaken for a backup.
            let _ = std::fs::remove_file(&target);
            return Err(err);
        }
        Ok(())
    }
}

/// `path` made absolute against the working directory (its file itself need not exist).
fn absolute(path: &Path) -> Result<PathBuf, StoreError> {
    std::path::absolute(path)
        .map_err(|err| StoreError::File(format!("cannot use {}: {err}", path.display())))
}

/// Creates `path`, empty, with mode 0600 whatever the umask; refuses an existing file.
fn create_private(path: &Path) -> Result<File, StoreError> {
    let shown = path.display();
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|err| match err.kind() {
            ErrorKind::AlreadyExists => StoreError::File(format!(
                "{shown} exists; backup never overwrites a file: remove it or choose another name"
            )),
            _ => StoreError::File(format!("cannot create {shown}: {err}")),
        })?;
    if let Err(err) = file.set_permissions(Permissions::from_mode(0o600)) {
        let _ = std::fs::remove_file(path);
        return Err(StoreError::File(format!(
            "cannot set the mode of {shown}: {err}"
        )));
    }
    Ok(file)
}

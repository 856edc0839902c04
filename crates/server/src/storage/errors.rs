//! Classification of database errors, done where each error happens.

use sqlx::error::DatabaseError;

/// A storage failure, classified for the caller.
///
/// Variants that wrap an error print it in their message and do not also return it as
/// `source()`: printing the chain (`{:#}`) would otherwise say the same cause twice or more.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database cannot be reached or is too busy right now; retrying later may work.
    #[error("database unavailable: {}", describe(.0))]
    Unavailable(sqlx::Error),
    /// The operation conflicts with existing data (an id already taken).
    #[error("{0}")]
    Conflict(String),
    /// A named thing the operation needs does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The input is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// Stored data breaks an invariant of this program.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    /// The database's schema is missing or older than this program's (migrations pending).
    #[error("the database is not set up, or needs migrations")]
    NotMigrated,
    /// The SQLite database's files cannot be used as they are (permissions, a missing
    /// directory, a full disk); the message names the path and what to do.
    #[error("{0}")]
    File(String),
    /// Migrations failed.
    #[error("database migration failed: {0}")]
    Migrate(sqlx::migrate::MigrateError),
    /// Any other database error: a bug or a schema mismatch, not a transient condition.
    #[error("database error: {}", describe(.0))]
    Database(sqlx::Error),
    /// A group commit this operation was part of failed.
    #[error("group commit failed: {0}")]
    Batch(std::sync::Arc<StoreError>),
    /// The group-commit writer task is gone (the store is shutting down).
    #[error("delete writer stopped")]
    WriterGone,
    /// The database did not answer its last background check; it was not asked again.
    #[error("the database did not answer its last check")]
    Down,
    /// The write's deadline passed before it started; nothing was changed.
    #[error("the write's deadline passed before it started; nothing was changed")]
    DeadlinePassed,
    /// The outcome of an attempt this operation shared with concurrent ones (the look-ups of
    /// one key share one query).
    #[error(transparent)]
    Shared(std::sync::Arc<StoreError>),
}

/// An error of the database itself as its message and code (`file is not a database (SQLite
/// code 26)`), without sqlx's "error returned from database" preamble or PostgreSQL's "at line
/// N", which is a line of the server's own source code.
fn describe(err: &sqlx::Error) -> String {
    match err {
        sqlx::Error::Database(db) => match db.code() {
            Some(code) if sqlite_code(&code).is_some() => {
                format!("{} (SQLite code {code})", db.message())
            }
            Some(code) => format!("{} (SQLSTATE {code})", db.message()),
            None => db.message().to_owned(),
        },
        other => other.to_string(),
    }
}

impl StoreError {
    pub(super) fn connect(err: sqlx::Error) -> Self {
        match err {
            sqlx::Error::Configuration(_) => {
                StoreError::Invalid(format!("bad database URL: {err}"))
            }
            other => classify(other),
        }
    }

    pub(super) fn migrate(err: sqlx::migrate::MigrateError) -> Self {
        match err {
            sqlx::migrate::MigrateError::Execute(inner) if is_transient(&inner) => {
                StoreError::Unavailable(inner)
            }
            other => StoreError::Migrate(other),
        }
    }

    /// Whether the failure is transient (the HTTP layer answers 503 and clients may retry).
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Unavailable(_)
            | StoreError::WriterGone
            | StoreError::DeadlinePassed
            | StoreError::Down => true,
            StoreError::Batch(inner) | StoreError::Shared(inner) => inner.is_unavailable(),
            _ => false,
        }
    }

    /// Whether the database could not be reached at all: a refused, dropped or broken
    /// connection, or PostgreSQL shutting down or starting up. Narrower than
    /// [`Self::is_unavailable`]: a lock wait, a statement timeout, a full disk or a pool whose
    /// connections are all busy say the database is there (a busy pool times out the same way
    /// as a refused connection, so it is left to the probe to tell them apart).
    pub fn is_unreachable(&self) -> bool {
        match self {
            StoreError::Unavailable(err) => match err {
                sqlx::Error::Io(_) | sqlx::Error::Tls(_) => true,
                sqlx::Error::Database(db) => db.code().is_some_and(|code| {
                    // SQLSTATE connection exceptions (08), and admin shutdown, crash
                    // shutdown, cannot connect now (57P01-57P03).
                    code.starts_with("08") || matches!(code.as_ref(), "57P01" | "57P02" | "57P03")
                }),
                _ => false,
            },
            StoreError::Batch(inner) | StoreError::Shared(inner) => inner.is_unreachable(),
            _ => false,
        }
    }
}

/// Whether an error means "the database is unreachable or busy", not "the query is wrong".
fn is_transient(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => true,
        sqlx::Error::Database(db) => is_transient_db(db.as_ref()),
        _ => false,
    }
}

fn is_transient_db(db: &dyn DatabaseError) -> bool {
    let Some(code) = db.code() else { return false };
    // SQLite: SQLITE_BUSY (5), SQLITE_LOCKED (6) and their extended codes, SQLITE_IOERR (10),
    // SQLITE_FULL (13), SQLITE_CANTOPEN (14).
    if let Some(n) = sqlite_code(&code) {
        return matches!(n & 0xff, 5 | 6 | 10 | 13 | 14);
    }
    // PostgreSQL SQLSTATE: connection exceptions (08), insufficient resources (53), operator
    // intervention such as shutdown (57P) and a statement cancelled by `statement_timeout`
    // (57014, rolled back), a lock not available (55P03), serialization failure and
    // deadlock (40).
    code.starts_with("08")
        || code.starts_with("53")
        || code.starts_with("57")
        || code == "55P03"
        || code.starts_with("40")
}

/// The SQLite result code `code` is, or `None` for a PostgreSQL SQLSTATE. A SQLSTATE is always
/// five characters and many are all digits (`57014`, `08006`, `40001`); SQLite's codes,
/// extended ones included, have at most four digits.
fn sqlite_code(code: &str) -> Option<i32> {
    if code.len() >= 5 {
        return None;
    }
    code.parse().ok()
}

fn classify(err: sqlx::Error) -> StoreError {
    if is_transient(&err) {
        StoreError::Unavailable(err)
    } else {
        StoreError::Database(err)
    }
}

/// Error mapping at the call site.
pub(super) trait ResultExt<T> {
    /// Transient errors become `Unavailable`, everything else `Database`.
    fn classify(self) -> Result<T, StoreError>;
    /// A unique-constraint violation becomes `Conflict` with the given message.
    fn on_unique(self, message: impl FnOnce() -> String) -> Result<T, StoreError>;
    /// A foreign-key violation becomes `NotFound` with the given message.
    fn on_foreign_key(self, message: impl FnOnce() -> String) -> Result<T, StoreError>;
}

impl<T> ResultExt<T> for Result<T, sqlx::Error> {
    fn classify(self) -> Result<T, StoreError> {
        self.map_err(classify)
    }

    fn on_unique(self, message: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(|err| match &err {
            sqlx::Error::Database(db) if db.is_unique_violation() => {
                StoreError::Conflict(message())
            }
            _ => classify(err),
        })
    }

    fn on_foreign_key(self, message: impl FnOnce() -> String) -> Result<T, StoreError> {
        self.map_err(|err| match &err {
            sqlx::Error::Database(db) if db.is_foreign_key_violation() => {
                StoreError::NotFound(message())
            }
            _ => classify(err),
        })
    }
}

/// `Ok` when what was looked for is `present`, else [`StoreError::NotFound`] with the
/// `missing` message.
pub(crate) fn found(present: bool, missing: impl FnOnce() -> String) -> Result<(), StoreError> {
    if present {
        Ok(())
    } else {
        Err(StoreError::NotFound(missing()))
    }
}

#[cfg(test)]
mod tests {
    use super::sqlite_code;

    #[test]
    fn all_digit_sqlstates_are_not_taken_for_sqlite_codes() {
        // statement timeout, connection failure, serialization failure, too many connections
        for sqlstate in ["57014", "08006", "40001", "53300"] {
            assert_eq!(sqlite_code(sqlstate), None, "{sqlstate}");
        }
        assert_eq!(sqlite_code("5"), Some(5));
        assert_eq!(sqlite_code("1544"), Some(1544));
        assert_eq!(sqlite_code("8458"), Some(8458));
    }
}

//! The settings every SQLite connection starts with: the pool's (`connection.rs`) and the
//! group-commit writer's own (`group_commit.rs`). A leaf, so that both take them from here and
//! neither imports the other.

/// Set on every SQLite connection. `journal_mode=WAL` is persistent but cheap to restate;
/// `synchronous=FULL` makes every commit durable before we answer 204.
pub(super) const SQLITE_PRAGMAS: &str = "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                              PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;";

/// The busy timeout [`SQLITE_PRAGMAS`] sets, in milliseconds: the group-commit writer starts
/// from it and changes it only when a batch's deadline asks for another.
pub(super) const SQLITE_PRAGMAS_BUSY_MS: u128 = 5000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_busy_timeout_constant_is_the_one_the_pragmas_set() {
        assert!(
            SQLITE_PRAGMAS.contains(&format!("PRAGMA busy_timeout = {SQLITE_PRAGMAS_BUSY_MS};"))
        );
    }
}

//! Storage: one interface over SQLite (embedded default) and PostgreSQL (several replicas).
//!
//! Both backends go through sqlx's `Any` driver with runtime-checked queries, so every query is
//! written once and the build needs no live database. SQL uses `$n` placeholders, which both
//! SQLite and PostgreSQL understand (but for the catalog's multi-row inserts, which give SQLite
//! `?`: see `catalog.rs`); each backend has its own migration directory because a few column
//! types differ. Errors are classified where they happen: "the database is unreachable or
//! busy" becomes [`StoreError::Unavailable`] (the HTTP layer answers 503), a broken invariant
//! stays [`StoreError::Database`] (500), and the conflicts an operator can cause are named.
//!
//! Architecture invariant: this module knows nothing about HTTP, and imports nothing of this
//! crate but [`crate::model`] (the catalog file format included): it is the bottom layer the
//! other modules build on.
//!
//! Rows are read with `fetch_all` (or the statement run with `execute`), never `fetch_one` or
//! `fetch_optional`: SQLite keeps a statement that was stepped only to its first row active
//! until it is reset, and an active `UPDATE ... RETURNING` keeps its write transaction (and
//! the database's write lock) open with it. Reading to the end leaves nothing to depend on
//! when sqlx resets it.
//!
//! One [`Store`] handle; its methods live with the aggregate they touch:
//! - `connection.rs`: URLs, the pool, migrations, the durability check ([`Backend`],
//!   [`PoolSettings`], [`redact_url`], [`sqlite_file()`]);
//! - `sqlite_file.rs`: the SQLite file's checks before opening, and errors naming their cause;
//! - `backup.rs`: a consistent copy of a SQLite database while it serves (`VACUUM INTO`);
//! - `errors.rs`: [`StoreError`] and the classification of database errors;
//! - `availability.rs`: whether the database can be reached ([`Availability`]), the probe
//!   that says so, and the guard that keeps requests from waiting on a database known down;
//! - `organizations.rs`: tenants;
//! - `api_keys.rs`: keys and the digest stored for each ([`digest_hex`]);
//! - `profiles.rs`: create, list, restore, purge, and the audit record of each change;
//! - `sqlite_pragmas.rs`: the settings every SQLite connection starts with;
//! - `deletes.rs`: profile deletes and their `Idempotency-Key` outcomes; `group_commit.rs`:
//!   SQLite's one writer that applies them in shared transactions; `delete_one.rs`, below
//!   both: one delete's request, answer, kept outcome and statements;
//! - `catalog.rs`: the zone catalog's tables, read, imported and seeded;
//! - `zone_mappings.rs`: organizations' zone mappings and the audit record of each change;
//! - `changes.rs`: the change log other server processes follow (keys, the catalog, zone
//!   mappings), and
//!   PostgreSQL's `LISTEN`/`NOTIFY` that wakes them ([`ChangeListener`]).

mod api_keys;
mod availability;
mod backup;
mod catalog;
mod changes;
mod connection;
mod delete_one;
mod deletes;
mod errors;
mod group_commit;
mod organizations;
mod profiles;
mod sqlite_file;
mod sqlite_pragmas;
mod zone_mappings;

use sqlx::AnyPool;

pub use api_keys::{digest_hex, Revocation};
pub use availability::{Availability, DatabaseState, PROBE_PERIOD, PROBE_TIMEOUT};
pub use catalog::{CatalogImport, REGIONS_PER_PAUSE};
pub use changes::{Change, ChangeListener, Wake, CHANNEL};
pub use connection::{redact_url, sqlite_file, Backend, PoolSettings};
pub use delete_one::{DeleteAnswer, DeleteOutcome, DeleteRequest, IDEMPOTENCY_TTL};
pub use errors::StoreError;
pub use sqlite_file::explain_open_error;
pub use zone_mappings::{change_subject, Actor, MappingWrite, PutMapping, StoredMapping};

/// Handle on the database. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: AnyPool,
    backend: Backend,
    /// SQLite only: the group-commit writer for deletes.
    deletes: Option<tokio::sync::mpsc::Sender<group_commit::PendingDelete>>,
    /// The idempotency keys of the deletes running in this process.
    keys_in_flight: deletes::KeysInFlight,
    /// Whether the database can be reached, shared by every request (`availability.rs`).
    availability: Availability,
}

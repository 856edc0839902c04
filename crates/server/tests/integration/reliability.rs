//! Reliability, one module per concern: acknowledged deletes surviving SIGKILL (`durability`),
//! answers that tell the truth under a full disk, a held lock and a database outage (`faults`),
//! exactly one `204` under concurrent deletes (`concurrent_deletes`), generated hostile requests
//! and identifiers (`hostile_input`), clients that hog streams or connections
//! (`hostile_clients`), idle and stalled connections (`idle_connections`), SIGTERM under load
//! (`shutdown`), and sustained load (`soak`).
//!
//! Each test prints its figures on stderr (`cargo test -p appzone-server --test integration
//! reliability -- --nocapture` shows them). Everything is bounded in time and request count and
//! talks to 127.0.0.1 only.

mod concurrent_deletes;
mod durability;
mod faults;
mod hostile_clients;
mod hostile_input;
mod idle_connections;
pub(crate) mod shutdown;
mod soak;

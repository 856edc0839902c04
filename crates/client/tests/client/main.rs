//! The client's test suite, one binary: calls and errors (`api`), the retry matrix and timeouts
//! (`retries`), key redaction (`secrets`) and the `appzone` command line (`cli`, run as a child
//! process by `run`), all against a scripted server on 127.0.0.1 (`support`); and end to end
//! against the real `appzone-server` started in-process over a fresh SQLite database by the
//! server's own test harness, `appzone-test-support` (`real_server`, and the conditional
//! listings in `conditional`, which also checks the wire against the scripted server). The zone
//! identities and zone mappings of API 1.2 have their own three: `mappings` (the scripted
//! server), `mappings_real` (the real one) and `mappings_cli` (the `appzone` commands).

// Tests may panic on anything unexpected; that is how they fail.
#![allow(clippy::unwrap_used)]

mod api;
mod cli;
mod conditional;
mod conformance;
mod deprecation;
mod mappings;
mod mappings_cli;
mod mappings_real;
mod proxy;
mod real_server;
mod retries;
mod run;
mod secrets;
mod support;

//! The client's test suite, one binary: calls and errors (`api`), the retry matrix and timeouts
//! (`retries`) and key redaction (`secrets`), all against the scripted server on 127.0.0.1 of
//! `appzone-test-support` (with this suite's helpers in `support`); and end to end against the
//! real `appzone-server` started in-process over a fresh SQLite database by the server's own
//! test harness, `appzone-test-support` (`real_server`, and the conditional listings in
//! `conditional`, which also checks the wire against the scripted server). The zone identities
//! and zone mappings of API 1.2 have their own two: `mappings` (the scripted server) and
//! `mappings_real` (the real one), and so do the offerings of API 1.3 (`offerings`,
//! `offerings_real`). The `appzone` command's tests are the `cli` binary
//! (tests/cli), the conformance kit's appzone-conformance's.

// Tests may panic on anything unexpected; that is how they fail.
#![allow(clippy::unwrap_used)]

mod api;
mod conditional;
mod deprecation;
mod identity_query;
mod mappings;
mod mappings_real;
mod offerings;
mod offerings_real;
mod real_server;
mod retries;
mod secrets;
mod support;

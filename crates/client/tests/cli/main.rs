//! The `appzone` command's test suite, one binary; each test runs the binary as a child process
//! (`run`): the commands against the scripted server of `appzone-test-support` (`cli`, and the
//! zone identities and zone mappings of API 1.2 in `mappings_cli`), end to end against the real
//! `appzone-server` started in-process (`real_server`), and `appzone conformance` with its
//! report and JUnit XML (`conformance`).

// Tests may panic on anything unexpected; that is how they fail.
#![allow(clippy::unwrap_used)]

mod cli;
mod conformance;
mod identities_cli;
mod mappings_cli;
mod real_server;
mod run;

//! The conformance kit's test suite, one binary: the kit as a library (`kit`) against the real
//! `appzone-server` started in-process by `appzone-test-support`, against its mutating proxy
//! (each broken promise must fail the check named after it) and against a scripted server that
//! is not appzone at all.

// Tests may panic on anything unexpected; that is how they fail.
#![allow(clippy::unwrap_used)]

mod kit;

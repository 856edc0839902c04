//! End-to-end tests of appzone-server through HTTP, the operator CLI and the database.
//!
//! One binary (faster linking); each module is one area. Tests that take a [`TestApp`] run once
//! per backend through [`both_backends!`]: SQLite always, PostgreSQL when
//! `APPZONE_TEST_POSTGRES_URL` is set (each test in its own schema, so tests run in parallel).

#![allow(clippy::unwrap_used)] // Test code: a panic is the failure report.

mod support;

mod api;
mod cli;
mod ops;
mod reliability;
mod security;
mod server_process;
mod spec;
mod storage;

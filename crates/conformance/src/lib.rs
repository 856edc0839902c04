//! The API's promises as an executable kit: [`run`] checks a deployment (or another
//! implementation) of the appzone API against docs/API.md, one named check per promise. The
//! `appzone conformance` command (appzone-client's binary, feature `cli`) runs it from a terminal or CI, and writes
//! its report as text, JSON or JUnit XML.
//!
//! It sends raw requests with [`reqwest`] rather than the typed client of appzone-client, so
//! that it sees every header and byte of each answer, and it reads the server's own
//! `/openapi.json` to learn the operations and the statuses each one may answer: an operation
//! added to the document is walked without editing the kit.
//!
//! ```no_run
//! use appzone_conformance::{self as conformance, Config};
//!
//! # async fn check() {
//! let report = conformance::run(Config::new("http://127.0.0.1:8080", "apz_...")).await;
//! for check in report.checks() {
//!     println!("{}", check.line());
//! }
//! println!("{}", report.summary());
//! assert!(report.is_success());
//! # }
//! ```
//!
//! With only an API key every read-only check runs; [`Config::admin_key`],
//! [`Config::member_key`], [`Config::profile`] and [`Config::foreign_profile`] add the
//! deletion matrix (which deletes `profile`), and [`Config::admin_key`] (with
//! [`Config::member_key`]) the zone-mapping writes, on a mapping of the kit's own
//! (`conformance-<uuid>`) that it deletes again; [`Config::read_only`] forbids any `PUT` or
//! `DELETE`.

#![warn(missing_docs)]

// `checks` orders the run and imports the check modules (`listings`, `refusals`,
// `identities`, `mappings`, `delete`, `aggregate`); they share only `support` and `wire`,
// which import none of them.
mod aggregate;
mod checks;
mod delete;
mod identities;
mod listings;
mod mappings;
mod offerings;
mod refusals;
mod render;
mod support;
mod wire;

use std::fmt;
use std::time::{Duration, Instant};

/// What to check and with which credentials. Build it with [`Config::new`] and its setters.
#[derive(Clone)]
#[non_exhaustive]
pub struct Config {
    pub(crate) url: String,
    pub(crate) api_key: String,
    pub(crate) admin_key: Option<String>,
    pub(crate) member_key: Option<String>,
    pub(crate) profile: Option<String>,
    pub(crate) foreign_profile: Option<String>,
    pub(crate) read_only: bool,
    pub(crate) timeout: Duration,
}

impl fmt::Debug for Config {
    // The keys stay out of it, as everywhere in appzone-client.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("url", &self.url)
            .field("admin_key", &self.admin_key.as_ref().map(|_| "<redacted>"))
            .field(
                "member_key",
                &self.member_key.as_ref().map(|_| "<redacted>"),
            )
            .field("profile", &self.profile)
            .field("foreign_profile", &self.foreign_profile)
            .field("read_only", &self.read_only)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Config {
    /// Checks the API at `url` (such as `http://127.0.0.1:8080`) with `api_key`, any valid key.
    pub fn new(url: impl Into<String>, api_key: impl Into<String>) -> Self {
        Config {
            url: url.into().trim().trim_end_matches('/').to_owned(),
            api_key: api_key.into(),
            admin_key: None,
            member_key: None,
            profile: None,
            foreign_profile: None,
            read_only: false,
            timeout: Duration::from_secs(30),
        }
    }

    /// An admin key of the organization owning [`Config::profile`]. With it the kit also
    /// stores, replaces and deletes a zone mapping of its own (`conformance-<uuid>`).
    pub fn admin_key(mut self, key: impl Into<String>) -> Self {
        self.admin_key = Some(key.into());
        self
    }

    /// A member key of the organization owning [`Config::profile`].
    pub fn member_key(mut self, key: impl Into<String>) -> Self {
        self.member_key = Some(key.into());
        self
    }

    /// A live profile of the admin's organization: the kit deletes it.
    pub fn profile(mut self, id: impl Into<String>) -> Self {
        self.profile = Some(id.into());
        self
    }

    /// A live profile of another organization: the admin must get 404 for it.
    pub fn foreign_profile(mut self, id: impl Into<String>) -> Self {
        self.foreign_profile = Some(id.into());
        self
    }

    /// Never send a `PUT` or a `DELETE`: the checks that need one are skipped.
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Timeout of each request (30 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

/// How one check ended.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The server kept the promise.
    Pass,
    /// It did not: the request that showed it, what the document promises, what came.
    Fail {
        /// Such as `GET /api/v1/providers`.
        request: String,
        /// What the document promises.
        expected: String,
        /// What the server answered.
        received: String,
    },
    /// The check could not run, and why (no admin key given, `--read-only`, nothing to see).
    Skip {
        /// Why it did not run.
        why: String,
    },
}

/// One check: its name, the sentence of docs/API.md it tests, and its outcome.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CheckResult {
    /// Named after the promise, such as `listing_envelope_has_data_id_message_status`.
    pub name: &'static str,
    /// The sentence of docs/API.md the check tests.
    pub promise: &'static str,
    /// Pass, fail or skip.
    pub outcome: Outcome,
}

impl CheckResult {
    /// The report's line: `PASS name`, `FAIL name: METHOD PATH expected ..., received ...` or
    /// `SKIP name: why`.
    pub fn line(&self) -> String {
        match &self.outcome {
            Outcome::Pass => format!("PASS {}", self.name),
            Outcome::Fail {
                request,
                expected,
                received,
            } => format!(
                "FAIL {}: {request} expected {expected}, received {received}",
                self.name
            ),
            Outcome::Skip { why } => format!("SKIP {}: {why}", self.name),
        }
    }
}

/// The counts of a report; displayed as `N passed, N failed, N skipped`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Checks that passed.
    pub passed: usize,
    /// Checks that failed.
    pub failed: usize,
    /// Checks that were skipped.
    pub skipped: usize,
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} skipped",
            self.passed, self.failed, self.skipped
        )
    }
}

/// The results of a run, in the order the checks ran.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Report {
    checks: Vec<CheckResult>,
    elapsed: Duration,
}

impl Report {
    /// A report of `checks` (for tests of tools that read reports).
    pub fn new(checks: Vec<CheckResult>, elapsed: Duration) -> Self {
        Report { checks, elapsed }
    }

    /// Every check, in the order it ran.
    pub fn checks(&self) -> &[CheckResult] {
        &self.checks
    }

    /// The check named `name`, if it ran.
    pub fn check(&self, name: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|check| check.name == name)
    }

    /// How long the run took.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The counts.
    pub fn summary(&self) -> Summary {
        let count = |f: fn(&Outcome) -> bool| self.checks.iter().filter(|c| f(&c.outcome)).count();
        Summary {
            passed: count(|o| matches!(o, Outcome::Pass)),
            failed: count(|o| matches!(o, Outcome::Fail { .. })),
            skipped: count(|o| matches!(o, Outcome::Skip { .. })),
        }
    }

    /// Whether no check failed.
    pub fn is_success(&self) -> bool {
        self.summary().failed == 0
    }
}

/// Runs every check against `config.url` and reports each one. Never panics on an answer: a
/// server that does not answer, or answers nonsense, fails the checks that needed it.
pub async fn run(config: Config) -> Report {
    let started = Instant::now();
    let mut kit = wire::Kit::new(config);
    checks::run_all(&mut kit).await;
    Report::new(kit.into_results(), started.elapsed())
}

impl CheckResult {
    pub(crate) fn new(name: &'static str, promise: &'static str, outcome: Outcome) -> Self {
        CheckResult {
            name,
            promise,
            outcome,
        }
    }
}

/// The README's example, compiled as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

//! What the layers and handlers know of a request, and of the connection it came on.
//!
//! The outermost service ([`super::stack::App`]) creates one [`RequestContext`] per request and
//! shares it through the request's extensions as `Arc<RequestContext>` (one allocation for all
//! of it); authentication fills in the caller, the handler that matched records its route.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use http::HeaderValue;

use super::routes::RouteLabel;
use crate::keys::{Caller, KeyMemo};

/// One client connection, shared by the requests that come over it.
#[derive(Debug)]
pub struct Connection {
    peer: IpAddr,
    keys: KeyMemo,
    activity: Activity,
}

impl Connection {
    /// A connection from `peer`.
    pub fn new(peer: IpAddr) -> Self {
        Self {
            peer,
            keys: KeyMemo::default(),
            activity: Activity::default(),
        }
    }

    /// What moves on the connection, for its header-read timeout (`serve/watchdog.rs`).
    pub fn activity(&self) -> &Activity {
        &self.activity
    }
}

/// What moves on one connection: requests begun and ended, and writes to its socket. The
/// connection's watchdog closes it when none of it moved for a header-read timeout while no
/// request was in flight (`serve/watchdog.rs`); nothing here is timed.
///
/// ```
/// use appzone_server::http::context::Activity;
/// let activity = Activity::default();
/// let before = activity.snapshot();
/// let request = activity.begin();
/// assert!(activity.snapshot().in_flight());
/// drop(request);
/// assert!(!activity.snapshot().in_flight());
/// assert_ne!(activity.snapshot(), before);
/// ```
#[derive(Debug, Default)]
pub struct Activity {
    begun: AtomicU64,
    ended: AtomicU64,
    /// Writes that made progress. Only the connection's own task writes to its socket.
    writes: AtomicU64,
}

/// One request in flight on its connection; counted out when dropped (answered or abandoned).
#[derive(Debug)]
pub struct Busy<'a>(&'a Activity);

/// What an [`Activity`] looked like at one moment; equal snapshots mean nothing moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivitySnapshot {
    begun: u64,
    ended: u64,
    writes: u64,
}

impl ActivitySnapshot {
    /// Whether a request had begun and not ended.
    pub fn in_flight(self) -> bool {
        self.begun != self.ended
    }
}

impl Activity {
    /// Counts a request in; it is counted out when the guard is dropped.
    pub fn begin(&self) -> Busy<'_> {
        self.begun.fetch_add(1, Ordering::AcqRel);
        Busy(self)
    }

    /// Counts a write to the socket that made progress. Called by the connection's own task
    /// only (a load and a store, not a read-modify-write).
    pub fn wrote(&self) {
        let writes = self.writes.load(Ordering::Relaxed);
        self.writes.store(writes.wrapping_add(1), Ordering::Release);
    }

    /// The counts now. `begun` is read before `ended`, so a request that begins and ends
    /// between the two reads shows as in flight, never the other way round.
    pub fn snapshot(&self) -> ActivitySnapshot {
        let begun = self.begun.load(Ordering::Acquire);
        let ended = self.ended.load(Ordering::Acquire);
        ActivitySnapshot {
            begun,
            ended,
            writes: self.writes.load(Ordering::Acquire),
        }
    }
}

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        self.0.ended.fetch_add(1, Ordering::AcqRel);
    }
}

/// What the outermost service knows of a request.
#[derive(Debug)]
pub struct RequestContext {
    id: HeaderValue,
    started: Instant,
    /// Past this instant a write the request asks for is not started, and a lock wait gives
    /// up: the request timeout's share for writes (`super::write_deadline`).
    write_deadline: Instant,
    /// `None` for requests handed to the service in-process rather than over a socket.
    connection: Option<Arc<Connection>>,
    caller: OnceLock<Caller>,
    /// The index of the [`RouteLabel`] a handler recorded, or `NO_ROUTE`.
    route: AtomicUsize,
    /// Whether a write was handed to storage and its outcome is not known yet.
    writing: AtomicBool,
}

/// A write handed to storage; while it lives, the request timeout waits for the write's real
/// outcome instead of answering 503 (see `stack.rs`).
#[derive(Debug)]
pub struct Writing<'a>(&'a AtomicBool);

impl Drop for Writing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

const NO_ROUTE: usize = usize::MAX;

impl RequestContext {
    pub(super) fn new(
        id: HeaderValue,
        started: Instant,
        write_deadline: Instant,
        connection: Option<Arc<Connection>>,
    ) -> Self {
        Self {
            id,
            started,
            write_deadline,
            connection,
            caller: OnceLock::new(),
            route: AtomicUsize::new(NO_ROUTE),
            writing: AtomicBool::new(false),
        }
    }

    /// The request id: the caller's `X-Request-Id` when valid, else a fresh ULID. ASCII.
    pub fn request_id(&self) -> &str {
        // ASCII by construction; `from_utf8` checks it a word at a time, `to_str` byte by byte.
        std::str::from_utf8(self.id.as_bytes()).unwrap_or_default()
    }

    pub(super) fn request_id_header(&self) -> &HeaderValue {
        &self.id
    }

    /// When the request reached the service.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The deadline of the writes this request asks for.
    pub fn write_deadline(&self) -> Instant {
        self.write_deadline
    }

    /// The client's address, when the request came over a socket.
    pub fn peer(&self) -> Option<IpAddr> {
        self.connection.as_ref().map(|c| c.peer)
    }

    /// The connection's memory of the last key it verified, when the request came over a
    /// socket.
    pub(super) fn key_memo(&self) -> Option<&KeyMemo> {
        self.connection.as_ref().map(|c| &c.keys)
    }

    /// The authenticated caller; set by [`super::auth::Auth`] on API paths.
    pub fn caller(&self) -> Option<&Caller> {
        self.caller.get()
    }

    pub(super) fn authenticated(&self, caller: Caller) {
        // Set once per request, by the one authentication; a second value is ignored.
        let _ = self.caller.set(caller);
    }

    /// Records the route of the handler serving the request, so the outermost service need
    /// not derive it from the path.
    pub(super) fn matched(&self, route: RouteLabel) {
        self.route.store(route.index(), Ordering::Relaxed);
    }

    /// Marks a write as handed to storage until the guard is dropped: a request timeout then
    /// waits for its outcome, so an error answer never hides a write that committed. The
    /// write's own deadline (lock wait, statement timeout) bounds that wait.
    pub fn writing(&self) -> Writing<'_> {
        self.writing.store(true, Ordering::Release);
        Writing(&self.writing)
    }

    /// Whether a write's outcome is awaited.
    pub(super) fn is_writing(&self) -> bool {
        self.writing.load(Ordering::Acquire)
    }

    /// The route a handler recorded, if one did.
    pub(super) fn route(&self) -> Option<RouteLabel> {
        RouteLabel::from_index(self.route.load(Ordering::Relaxed))
    }
}

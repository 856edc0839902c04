//! What the layers and handlers know of a request, and of the connection it came on.
//!
//! The outermost service ([`super::stack::App`]) creates one [`RequestContext`] per request and
//! shares it through the request's extensions as `Arc<RequestContext>` (one allocation for all
//! of it); authentication fills in the caller, the handler that matched records its route.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use http::HeaderValue;

use super::metrics::RouteLabel;
use crate::keys::{Caller, KeyMemo};

/// One client connection, shared by the requests that come over it.
#[derive(Debug)]
pub struct Connection {
    peer: IpAddr,
    keys: KeyMemo,
}

impl Connection {
    /// A connection from `peer`.
    pub fn new(peer: IpAddr) -> Self {
        Self {
            peer,
            keys: KeyMemo::default(),
        }
    }
}

/// What the outermost service knows of a request.
#[derive(Debug)]
pub struct RequestContext {
    id: HeaderValue,
    started: Instant,
    /// `None` for requests handed to the service in-process rather than over a socket.
    connection: Option<Arc<Connection>>,
    caller: OnceLock<Caller>,
    /// The index of the [`RouteLabel`] a handler recorded, or `NO_ROUTE`.
    route: AtomicUsize,
}

const NO_ROUTE: usize = usize::MAX;

impl RequestContext {
    pub(super) fn new(
        id: HeaderValue,
        started: Instant,
        connection: Option<Arc<Connection>>,
    ) -> Self {
        Self {
            id,
            started,
            connection,
            caller: OnceLock::new(),
            route: AtomicUsize::new(NO_ROUTE),
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

    /// The route a handler recorded, if one did.
    pub(super) fn route(&self) -> Option<RouteLabel> {
        RouteLabel::from_index(self.route.load(Ordering::Relaxed))
    }
}

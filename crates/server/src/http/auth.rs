//! Authentication of every `/api/v1/...` request, before any handler reads a path parameter,
//! and the per-key rate limit.
//!
//! A layer on the whole router rather than a per-handler extractor, so unknown routes and
//! wrong methods under `/api/v1` are refused without a key too, and no handler can forget the
//! check. A verified caller reaches the handler as an `Extension<Caller>`, and the answer
//! carries it as an extension for the request log.
//!
//! Every write (the profile delete, a zone mapping's `PUT` and `DELETE`) takes one [`Write`]
//! instead: the caller as storage records it ([`Actor`], built once per request and moved
//! with the write), the key's role, the write's budget and log line, and the
//! `Idempotency-Key` of the operation that honours one, read and checked here only.

use std::net::SocketAddr;

use appzone_contract::headers::{idempotency_key, API_KEY, IDEMPOTENCY_KEY};
use appzone_contract::paths::API_PREFIX;
use appzone_contract::ErrorCode;
use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http::request::Parts;
use http::HeaderMap;
use tower_http::request_id::RequestId;

use super::error::ApiError;
use super::observe::RequestRecord;
use super::timeout::WriteBudget;
use super::AppState;
use crate::keys::{AuthError, Caller};
use crate::model::Role;
use crate::storage::Actor;

/// The middleware: on API paths, 401 without a valid key (counted against the client's
/// address: past its limit, 429), 503 when the key cannot be checked, 429 past the key's rate
/// limit; else the request goes on with its [`Caller`].
pub async fn authenticate(
    State(state): State<AppState>,
    mut request: Request,
    next: Next,
) -> Response {
    if !is_api_path(request.uri().path()) {
        return next.run(request).await;
    }
    let refusal = match presented(request.headers()) {
        Presented::Missing => ApiError::new(
            ErrorCode::MissingApiKey,
            "missing API key: send it in the X-API-KEY header",
        ),
        Presented::Unreadable => invalid_key(),
        Presented::Key(key) => match state.keys.verify(key).await {
            Ok(caller) => {
                // Returns at once: the write, when one is due, runs on its own task.
                state.last_used.record(&caller.key.key_id);
                let verdict = state.limits.check_key(&caller.key.key_id).await;
                let mut response = match verdict.retry_after {
                    Some(secs) => rate_limited(secs).into_response(),
                    None => {
                        request.extensions_mut().insert(caller.clone());
                        next.run(request).await
                    }
                };
                if let Some(headers) = verdict.headers {
                    headers.add_to(response.headers_mut());
                }
                response.extensions_mut().insert(caller);
                return response;
            }
            Err(AuthError::Invalid) => invalid_key(),
            Err(AuthError::Store(err)) => return ApiError::storage(err).into_response(),
        },
    };
    // Failed attempts count against the client's address; past the limit, 429.
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    let Some(ip) = peer else {
        return refusal.into_response();
    };
    let verdict = state.limits.auth_failed(ip).await;
    let refusal = verdict.retry_after.map_or(refusal, rate_limited);
    let mut response = refusal.into_response();
    if let Some(headers) = verdict.headers {
        headers.add_to(response.headers_mut());
    }
    response
}

/// What a write reads from its request, once: who asks, the deadline and log line of the
/// write, and the operation's `Idempotency-Key` (`K`: `()` for an operation that takes none,
/// whose header is then not read; `Option<String>` for the profile delete).
#[derive(Debug)]
pub struct Write<K = ()> {
    /// The caller's organization and key id and the request id, for the audit record.
    pub actor: Actor,
    /// The caller's key's role.
    pub role: Role,
    /// The `Idempotency-Key`, checked against the contract's rules.
    pub idempotency_key: K,
    /// The write's deadline, and the mark that makes the request timeout wait for it.
    pub budget: WriteBudget,
    /// The request's log line, which a write that outlives the request reports its outcome
    /// to; absent when the router is served without `serve` (tests calling it directly).
    pub record: Option<RequestRecord>,
}

/// The `Idempotency-Key` an operation reads (see [`Write`]).
pub trait IdempotencyKey: Sized {
    /// The header's value, or the 400 a malformed one gets.
    fn read(headers: &HeaderMap) -> Result<Self, ApiError>;
}

impl IdempotencyKey for () {
    fn read(_: &HeaderMap) -> Result<Self, ApiError> {
        Ok(())
    }
}

impl IdempotencyKey for Option<String> {
    /// `None` without one, 400 for a malformed one.
    fn read(headers: &HeaderMap) -> Result<Self, ApiError> {
        let Some(value) = headers.get(IDEMPOTENCY_KEY) else {
            return Ok(None);
        };
        value
            .to_str()
            .ok()
            .and_then(idempotency_key)
            .map(|key| Some(key.to_owned()))
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::INVALID_IDEMPOTENCY_KEY,
                    "invalid Idempotency-Key: use 1 to 255 visible ASCII characters, for example \
                     a UUID",
                )
            })
    }
}

impl<S: Send + Sync, K: IdempotencyKey> FromRequestParts<S> for Write<K> {
    /// 400 for a malformed `Idempotency-Key`; 500 without the extensions the layers in front of
    /// every write route insert.
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let missing = |what: &str| ApiError::internal(format!("a write's request has no {what}"));
        let Caller { key } = parts
            .extensions
            .get::<Caller>()
            .ok_or_else(|| missing("caller"))?;
        let request_id = parts
            .extensions
            .get::<RequestId>()
            .ok_or_else(|| missing("request id"))?;
        let actor = Actor {
            org: key.org_id.as_str().into(),
            key_id: key.key_id.as_str().into(),
            // Request ids are visible ASCII (a caller's is validated, ours is a ULID).
            request_id: request_id
                .header_value()
                .to_str()
                .unwrap_or_default()
                .into(),
        };
        Ok(Self {
            actor,
            role: key.role,
            idempotency_key: K::read(&parts.headers)?,
            budget: parts
                .extensions
                .get::<WriteBudget>()
                .cloned()
                .ok_or_else(|| missing("write budget"))?,
            record: parts.extensions.get::<RequestRecord>().cloned(),
        })
    }
}

/// The 429 of a limit that refused the request for `retry_after` seconds.
fn rate_limited(retry_after: u32) -> ApiError {
    ApiError::new(ErrorCode::RateLimited, "rate limit exceeded, retry later")
        .with_retry_after(retry_after)
}

fn invalid_key() -> ApiError {
    ApiError::new(ErrorCode::InvalidApiKey, "invalid API key")
}

fn is_api_path(path: &str) -> bool {
    path.strip_prefix(API_PREFIX)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// What the request presents in `X-API-KEY`.
enum Presented<'a> {
    /// No header, or an empty or blank one.
    Missing,
    /// Not readable as one key: not UTF-8, or the header sent twice.
    Unreadable,
    /// One value, trimmed.
    Key(&'a str),
}

fn presented(headers: &http::HeaderMap) -> Presented<'_> {
    let mut values = headers.get_all(&API_KEY).iter();
    match (values.next(), values.next()) {
        (None, _) => Presented::Missing,
        (Some(_), Some(_)) => Presented::Unreadable,
        // UTF-8 rather than `to_str`'s visible ASCII, checked a word at a time: anything outside
        // the key format fails verification with the same 401.
        (Some(value), None) => match std::str::from_utf8(value.as_bytes()).map(str::trim) {
            Ok("") => Presented::Missing,
            Ok(key) => Presented::Key(key),
            Err(_) => Presented::Unreadable,
        },
    }
}

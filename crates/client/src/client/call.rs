//! One call of the API on [`Client`]: its attempts, retried as the policy allows within the
//! operation timeout, and one attempt's complete [`Answer`].

use std::time::{Duration, Instant};

use appzone_contract::headers::{is_valid_request_id, API_KEY, IDEMPOTENT_REPLAYED, REQUEST_ID};
use appzone_contract::{ErrorBody, ErrorCode};
use http::header::{ACCEPT, CONTENT_TYPE, ETAG, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use super::Client;
use crate::deprecation;
use crate::error::{ApiError, DecodeError};
use crate::retry::{is_retryable_status, retry_after};
use crate::{request_id, Error};

/// The most body bytes the client reads from one answer (4 MiB). A longer success body is a
/// [`Error::Decode`]; a longer error body is cut (its excerpt is all the client keeps anyway).
pub(super) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The most characters of a body quoted in an error.
const EXCERPT_CHARS: usize = 200;

/// One extra request header of a call (the `If-None-Match` of a conditional listing, the
/// `Idempotency-Key` of a delete, the `Content-Encoding: gzip` of a compressed zone mapping).
pub(crate) type ExtraHeader = (HeaderName, HeaderValue);

/// What a call may be sent again after, besides a connect failure (the request was not sent, so
/// every call is retried after one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resend {
    /// `GET`, and the `PUT` of a zone mapping (the same body stores the same mapping): the
    /// answers that say "not now", 429, 502, 503 and 504 (and 409 `idempotency_key_in_use`,
    /// which these operations are never answered). Not a timeout or a broken connection.
    OnRetryableStatus,
    /// A `DELETE` with an `Idempotency-Key`: as [`Resend::OnRetryableStatus`], and also after a
    /// timeout or a broken connection, since the server replays the first attempt's outcome.
    EvenIfReceived,
    /// A `DELETE` without an `Idempotency-Key` (a zone mapping's): only the server's answers
    /// that say nothing was changed, 429 and 503. Not 502 or 504 (a gateway answered; the
    /// server may have deleted behind it), not a timeout or a broken connection: a retry after
    /// any of those could get 404 for a deletion that succeeded.
    OnlyIfUnchanged,
}

/// The extra header of a call as a map to add to the request; empty for a plain call (an empty
/// `HeaderMap` does not allocate).
fn extra_headers(extra: Option<&ExtraHeader>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    if let Some((name, value)) = extra {
        headers.insert(name.clone(), value.clone());
    }
    headers
}

/// The `ETag` of an answer, when it has one that is text.
fn etag_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(ETAG)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

impl Client {
    /// Sends one call with one extra request header (a conditional listing's `If-None-Match`, a
    /// delete's `Idempotency-Key`, a compressed body's `Content-Encoding`) and a JSON `body` (a
    /// `PUT`'s) on every attempt, retrying as
    /// the policy allows within the operation timeout, and reads the final answer.
    ///
    /// Connect failures are retried for any call; answers ([`Answer::may_retry`]), timeouts and
    /// broken connections as `resend` says.
    pub(super) async fn call_with(
        &self,
        method: Method,
        path: &str,
        extra: Option<&ExtraHeader>,
        body: Option<&[u8]>,
        resend: Resend,
    ) -> Result<Answer, Error> {
        let request_id = request_id::generate();
        let outgoing = Outgoing {
            request_id_value: HeaderValue::from_str(&request_id)
                .map_err(|e| Error::invalid("request id", e))?,
            url: format!("{}{}", self.inner.base_url, path),
            method,
            request_id,
            extra,
            body,
        };
        let policy = &self.inner.retry;
        // `None` when the bound is too far away to represent: no deadline then.
        let deadline = Instant::now().checked_add(self.inner.operation_timeout);
        let mut attempt = 1;
        loop {
            let remaining = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let limit = match remaining {
                Some(remaining) if remaining < self.inner.timeout => AttemptLimit {
                    timeout: remaining,
                    reported: self.inner.operation_timeout,
                },
                _ => AttemptLimit {
                    timeout: self.inner.timeout,
                    reported: self.inner.timeout,
                },
            };
            let result = self.attempt(&outgoing, limit).await;
            let may_retry = match &result {
                Err(Error::Connect { .. }) => true,
                Err(Error::Timeout { .. } | Error::Transport { .. }) => {
                    resend == Resend::EvenIfReceived
                }
                Ok(answer) => answer.may_retry(resend),
                Err(_) => false,
            };
            let delay = match &result {
                _ if !may_retry || attempt >= policy.max_attempts() => None,
                Ok(answer) => policy.delay(attempt, answer.retry_after),
                Err(_) => policy.delay(attempt, None),
            };
            // A wait that would end at or after the deadline leaves no time for the attempt
            // after it: return what there is now rather than sleep for nothing.
            let delay = delay.filter(|delay| match deadline {
                Some(deadline) => Instant::now()
                    .checked_add(*delay)
                    .is_some_and(|wake| wake < deadline),
                None => true,
            });
            match delay {
                Some(delay) => {
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => {
                    let mut result = result;
                    match &mut result {
                        Ok(answer) => answer.attempts = attempt,
                        Err(
                            Error::Connect { attempts, .. }
                            | Error::Timeout { attempts, .. }
                            | Error::Transport { attempts, .. },
                        ) => *attempts = attempt,
                        Err(_) => {}
                    }
                    return result;
                }
            }
        }
    }

    /// One attempt: send the request and read the answer's body.
    async fn attempt(&self, outgoing: &Outgoing<'_>, limit: AttemptLimit) -> Result<Answer, Error> {
        let inner = &self.inner;
        let (method, url, request_id) = (
            &outgoing.method,
            outgoing.url.as_str(),
            outgoing.request_id.as_str(),
        );
        let failed = |source: reqwest::Error| {
            let (method, url, request_id) = (method.clone(), url.to_owned(), request_id.to_owned());
            if source.is_builder() {
                Error::invalid("request", source)
            } else if source.is_connect() {
                Error::Connect {
                    method,
                    url,
                    request_id,
                    attempts: 1,
                    source,
                }
            } else if source.is_timeout() {
                Error::Timeout {
                    method,
                    url,
                    timeout: limit.reported,
                    request_id,
                    attempts: 1,
                    source,
                }
            } else {
                Error::Transport {
                    method,
                    url,
                    request_id,
                    attempts: 1,
                    source,
                }
            }
        };
        let mut request = inner
            .http
            .request(method.clone(), url)
            .header(API_KEY, inner.api_key.clone())
            .header(REQUEST_ID, outgoing.request_id_value.clone())
            .header(USER_AGENT, inner.user_agent.clone())
            .header(ACCEPT, HeaderValue::from_static("application/json"))
            .headers(extra_headers(outgoing.extra))
            .timeout(limit.timeout);
        if let Some(body) = outgoing.body {
            request = request
                .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
                .body(body.to_vec());
        }
        let mut response = request.send().await.map_err(failed)?;
        let status = response.status();
        let headers = std::mem::take(response.headers_mut());
        let mut body = Vec::new();
        let mut truncated = false;
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            let room = MAX_BODY_BYTES - body.len();
            if chunk.len() > room {
                body.extend_from_slice(&chunk[..room]);
                truncated = true;
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let answered_id = headers
            .get(REQUEST_ID)
            .and_then(|v| v.to_str().ok())
            .filter(|v| is_valid_request_id(v))
            .unwrap_or(request_id)
            .to_owned();
        Ok(Answer {
            method: method.clone(),
            url: url.to_owned(),
            status,
            retry_after: retry_after(&headers),
            deprecation: deprecation::read(&headers),
            etag: etag_of(&headers),
            replayed: headers
                .get(IDEMPOTENT_REPLAYED)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
            request_id: answered_id,
            body,
            truncated,
            attempts: 1,
        })
    }
}

/// What every attempt of one call sends.
struct Outgoing<'a> {
    method: Method,
    url: String,
    /// The same on every attempt of the call.
    request_id: String,
    request_id_value: HeaderValue,
    extra: Option<&'a ExtraHeader>,
    /// A JSON body, sent with `Content-Type: application/json` (gzip-compressed when the extra
    /// header says `Content-Encoding: gzip`).
    body: Option<&'a [u8]>,
}

/// How long one attempt may take, and the timeout an [`Error::Timeout`] names when it elapses:
/// the per-attempt timeout, or what is left of the operation timeout when that is shorter (the
/// error then names the operation timeout, the bound that ended the call).
#[derive(Debug, Clone, Copy)]
struct AttemptLimit {
    timeout: Duration,
    reported: Duration,
}

/// A complete answer: status, the parts of the headers the client uses, and the body.
pub(crate) struct Answer {
    pub(super) method: Method,
    pub(super) url: String,
    pub(crate) status: StatusCode,
    pub(super) retry_after: Option<Duration>,
    /// The `Deprecation` and `Sunset` headers, when the operation is deprecated.
    pub(super) deprecation: Option<(String, Option<String>)>,
    /// The `ETag`, for a conditional listing.
    pub(super) etag: Option<String>,
    /// `Idempotent-Replayed: true`: the server repeated an earlier outcome for the same key.
    pub(super) replayed: bool,
    pub(super) request_id: String,
    pub(super) body: Vec<u8>,
    pub(super) truncated: bool,
    pub(super) attempts: u32,
}

impl Answer {
    /// Whether the same request may be sent again for another answer: 429, 502, 503 and 504,
    /// and 409 `idempotency_key_in_use` (an earlier request with the key is still running; its
    /// outcome will be replayed once it ends); any other 409 is not retried. Only 429 and 503
    /// when the request must not be resent once the server may have acted on it
    /// ([`Resend::OnlyIfUnchanged`]): the server answers those without changing anything.
    fn may_retry(&self, resend: Resend) -> bool {
        match resend {
            Resend::OnlyIfUnchanged => {
                self.status == StatusCode::TOO_MANY_REQUESTS
                    || self.status == StatusCode::SERVICE_UNAVAILABLE
            }
            Resend::OnRetryableStatus | Resend::EvenIfReceived => {
                is_retryable_status(self.status)
                    || (self.status == StatusCode::CONFLICT
                        && serde_json::from_slice::<ErrorBody>(&self.body).is_ok_and(|body| {
                            body.error_code.as_str() == ErrorCode::IDEMPOTENCY_KEY_IN_USE
                        }))
            }
        }
    }

    pub(super) fn into_api_error(self) -> Error {
        let (code, message) = match serde_json::from_slice::<ErrorBody>(&self.body) {
            Ok(body) => (Some(body.error_code), body.error),
            Err(_) if self.body.iter().all(u8::is_ascii_whitespace) => {
                (None, "the answer has no error body".to_owned())
            }
            Err(_) => (
                None,
                format!("not an appzone error body: {:?}", excerpt(&self.body)),
            ),
        };
        Error::from(ApiError {
            method: self.method,
            url: self.url,
            status: self.status,
            code,
            message,
            request_id: self.request_id,
            retry_after: self.retry_after,
            attempts: self.attempts,
        })
    }

    pub(super) fn into_decode_error(self, reason: String) -> Error {
        Error::Decode(Box::new(DecodeError {
            body_excerpt: excerpt(&self.body),
            method: self.method,
            url: self.url,
            status: self.status,
            reason,
            request_id: self.request_id,
        }))
    }
}

/// The start of a body on one line: at most [`EXCERPT_CHARS`] characters, control characters
/// replaced by spaces, `…` when cut.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut chars = text.trim().chars();
    let mut out: String = chars
        .by_ref()
        .take(EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if chars.next().is_some() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use http::header::IF_NONE_MATCH;

    use super::*;

    #[test]
    fn excerpts_are_short_single_lines() {
        assert_eq!(
            excerpt(b"  <h1>Bad\nGateway</h1>\r\n"),
            "<h1>Bad Gateway</h1>"
        );
        let long = "x".repeat(500);
        let cut = excerpt(long.as_bytes());
        assert_eq!(cut.chars().count(), EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(excerpt(&[0xff, b'a']), "\u{fffd}a");
    }

    /// An answer with `status` and `body`, as an attempt reads it.
    fn answer(status: u16, body: &str) -> Answer {
        Answer {
            method: Method::DELETE,
            url: "http://127.0.0.1/api/v1/zone-mappings/prod".to_owned(),
            status: StatusCode::from_u16(status).unwrap_or_else(|e| panic!("{e}")),
            retry_after: None,
            deprecation: None,
            etag: None,
            replayed: false,
            request_id: "req-1".to_owned(),
            body: body.as_bytes().to_vec(),
            truncated: false,
            attempts: 1,
        }
    }

    #[test]
    fn a_delete_without_a_key_is_retried_only_on_answers_that_changed_nothing() {
        let in_use = r#"{"error":"busy","error_code":"idempotency_key_in_use"}"#;
        for (status, body, get_or_put, keyed_delete, unkeyed_delete) in [
            (429, "", true, true, true),
            (503, "", true, true, true),
            // A gateway answered: the server may have acted behind it.
            (502, "", true, true, false),
            (504, "", true, true, false),
            (409, in_use, true, true, false),
            (409, "", false, false, false),
            (404, "", false, false, false),
            (500, "", false, false, false),
            (204, "", false, false, false),
        ] {
            let answer = answer(status, body);
            assert_eq!(
                (
                    answer.may_retry(Resend::OnRetryableStatus),
                    answer.may_retry(Resend::EvenIfReceived),
                    answer.may_retry(Resend::OnlyIfUnchanged)
                ),
                (get_or_put, keyed_delete, unkeyed_delete),
                "{status} {body}"
            );
        }
    }

    #[test]
    fn the_extra_header_is_added_as_given_or_not_at_all() {
        assert!(extra_headers(None).is_empty());
        let extra = (IF_NONE_MATCH, HeaderValue::from_static("*"));
        assert_eq!(
            extra_headers(Some(&extra))
                .get(IF_NONE_MATCH)
                .map(|v| v.as_bytes()),
            Some(&b"*"[..])
        );
    }
}

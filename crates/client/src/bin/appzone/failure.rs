//! Why a command failed, and what stderr says about it: the error code and message, the
//! request id, the wait asked for, and the likely cause; or one JSON object with `--output json`.

use std::io;
use std::time::Duration;

use appzone_client::{exit_code, Error, ErrorCode};
use appzone_contract::{paths, IdError};

use super::output::one_line;

/// Why the command failed.
pub enum Failure {
    /// No API key was given; the server would answer 401 `missing_api_key`.
    NoApiKey,
    /// A malformed provider, region or profile id, refused before anything was sent.
    InvalidId(IdError),
    /// Input refused before anything was sent for another reason (a malformed zone-mapping
    /// id, a FILE that is not JSON), with the code the server answers the same mistake with.
    Refused { message: String, code: ErrorCode },
    /// An error of the client: its settings (such as `--url`), or the call.
    Client(Error),
    /// The command itself failed: the runtime could not start, or stdout could not be written.
    Local(String),
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure::Client(error)
    }
}

impl From<IdError> for Failure {
    fn from(error: IdError) -> Self {
        Failure::InvalidId(error)
    }
}

impl Failure {
    /// The row of [`exit_code::TABLE`]: local findings get the code of the server's answer to
    /// the same mistake.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::NoApiKey => exit_code::UNAUTHORIZED,
            // As the server's 400 invalid_provider / invalid_region (see `exit_code::for_error`).
            Failure::InvalidId(_) | Failure::Refused { .. } => exit_code::INVALID_INPUT,
            Failure::Client(error) => exit_code::for_error(error),
            Failure::Local(_) => exit_code::FAILURE,
        }
    }
}

/// What stderr shows for a failure.
pub struct Report<'a> {
    /// The error code and the message, or what failed.
    headline: String,
    /// The contract's code and the HTTP status, when there was an answer (or the local finding
    /// stands in for one).
    code: Option<&'a ErrorCode>,
    status: Option<u16>,
    /// When a request was sent.
    request_id: Option<&'a str>,
    /// The wait a 429 or 503 asked for.
    retry_after: Option<Duration>,
    /// The likely cause, when the client can tell.
    hint: Option<String>,
    /// The code of a malformed id the command line refused itself.
    local_code: Option<ErrorCode>,
}

impl<'a> Report<'a> {
    pub fn of(failure: &'a Failure, base: &str) -> Self {
        let mut report = Report {
            headline: String::new(),
            code: None,
            status: None,
            request_id: None,
            retry_after: None,
            hint: None,
            local_code: None,
        };
        match failure {
            Failure::NoApiKey => {
                report.headline = "no API key: set APPZONE_API_KEY or pass --api-key".to_owned();
            }
            Failure::InvalidId(error) => {
                // The code and status the server answers the same id with, as the library's
                // local errors carry them.
                report.headline = error.to_string();
                report.local_code = Some(error.kind().error_code());
            }
            Failure::Refused { message, code } => {
                report.headline = message.clone();
                report.local_code = Some(code.clone());
            }
            Failure::Local(message) => report.headline = message.clone(),
            Failure::Client(error) => {
                report.headline = headline(error, base);
                report.code = error.error_code();
                report.status = error.status().map(|status| status.as_u16());
                report.request_id = error.request_id();
                report.retry_after = error.as_api().and_then(|api| api.retry_after);
                report.hint = hint(error, base);
            }
        }
        report
    }

    /// In the shape of `gh`'s errors:
    ///
    /// ```text
    /// error: region_not_found: aws has no region "mars-1"
    /// request id: 01JD8Y3ZQ4K5M6N7P8R9S0T1V2
    /// hint: ...
    /// ```
    ///
    /// The request id line comes when a request was sent, the retry line when the answer asked
    /// for a wait, the hint when the cause is likely.
    pub fn text(&self) -> String {
        let mut text = format!("error: {}\n", one_line(&self.headline));
        if let Some(id) = self.request_id {
            text.push_str(&format!("request id: {}\n", one_line(id)));
        }
        if let Some(wait) = self.retry_after {
            text.push_str(&format!("retry after: {}s\n", wait.as_secs()));
        }
        if let Some(hint) = &self.hint {
            text.push_str(&format!("hint: {}\n", one_line(hint)));
        }
        text
    }

    /// One JSON object on one line, for scripts that asked for `--output json`: every field is
    /// present, `null` when it does not apply.
    pub fn json(&self, exit_code: u8) -> String {
        let code = self.code.or(self.local_code.as_ref());
        let value = serde_json::json!({
            "error": self.headline,
            "error_code": code.map(ErrorCode::as_str),
            "status": self.status.or(code.map(|code| code.status().as_u16())),
            "request_id": self.request_id,
            "retry_after_seconds": self.retry_after.map(|wait| wait.as_secs()),
            "hint": self.hint,
            "exit_code": exit_code,
        });
        format!("{value}\n")
    }
}

/// The first line of the report: the error code and the message, without repeating either.
fn headline(error: &Error, base: &str) -> String {
    match error {
        Error::Api(api) => {
            let mut line = match &api.code {
                Some(code) => format!("{code}: {}", without_code(&api.message, code)),
                // Not the contract's error body: the status is all there is to name it, and
                // the start of a page says more than the rest of it.
                None => format!(
                    "{} {}: {}",
                    api.status.as_u16(),
                    api.status.canonical_reason().unwrap_or("(unknown status)"),
                    shortened(&api.message, FOREIGN_MESSAGE_CHARS)
                ),
            };
            if api.attempts > 1 {
                line.push_str(&format!(" (after {} attempts)", api.attempts));
            }
            line
        }
        Error::Connect { source, .. } => {
            format!("could not connect to {base}: {}", innermost(source))
        }
        Error::Transport { source, .. } => {
            format!("the connection to {base} broke: {}", innermost(source))
        }
        Error::Timeout { timeout, .. } => {
            format!("no answer from {base}: timed out after {timeout:?}")
        }
        Error::Decode(decode) => format!(
            "the answer (HTTP {}) could not be decoded: {}; body: {:?}",
            decode.status.as_u16(),
            decode.reason,
            decode.body_excerpt
        ),
        // InvalidArgument ("invalid base URL: ...") and whatever a later version adds: their
        // `Display` is already one short line.
        _ => error.to_string(),
    }
}

/// The most characters of an answer that is not the API's quoted on the error line.
const FOREIGN_MESSAGE_CHARS: usize = 100;

/// `text` with its runs of whitespace (an HTML page's indentation) made one space, and cut to
/// `max` characters with `…`.
fn shortened(text: &str, max: usize) -> String {
    let mut words = text.split_whitespace();
    let mut out = words.next().unwrap_or_default().to_owned();
    for word in words {
        out.push(' ');
        out.push_str(word);
    }
    match out.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", out[..cut].trim_end_matches('…')),
        None => out,
    }
}

/// `message` without a leading `"<code in words>: "`, which the server's messages may start with
/// ("region not found: aws has no region ..."), since the code is already on the line.
fn without_code<'m>(message: &'m str, code: &ErrorCode) -> &'m str {
    let words = code.as_str().replace('_', " ");
    match message.split_at_checked(words.len()) {
        Some((head, rest)) if head.eq_ignore_ascii_case(&words) => rest
            .strip_prefix(": ")
            .filter(|rest| !rest.is_empty())
            .unwrap_or(message),
        _ => message,
    }
}

/// The likely cause of `error`, when the client's knowledge points at one: the URL, the shape
/// of the answer, the kind of the TLS failure.
fn hint(error: &Error, base: &str) -> Option<String> {
    if let Error::Connect { source, .. } = error {
        let rest = base.strip_prefix("https://")?;
        return answered_in_plain_http(source).then(|| {
            format!("the server speaks plain HTTP; use http://{rest} instead of https://")
        });
    }
    if exit_code::for_error(error) != exit_code::UNEXPECTED_ANSWER {
        return None;
    }
    // The contract's paths already start with /api/v1, so a base URL ending with it asks for
    // /api/v1/api/v1/...; the server answers 404 `not_found`, another one its own 404.
    if let Some(root) = base.strip_suffix(paths::API_PREFIX) {
        return Some(format!(
            "the base URL should not include {}: try --url {root}",
            paths::API_PREFIX
        ));
    }
    Some(match error {
        Error::Api(api) if api.code.is_none() => {
            format!("{base} did not answer like an appzone server (no JSON error body)")
        }
        Error::Api(_) => format!(
            "{base} answered like an appzone server that has no such route; \
             --url should be where it listens, such as http://host:8080"
        ),
        _ => format!("{base} did not answer like an appzone server (not the API's JSON)"),
    })
}

/// Whether the TLS handshake failed because the server answered in plain HTTP.
///
/// rustls reads the first bytes of "HTTP/1.1 400 ..." as a TLS record of an unknown content
/// type and fails with `InvalidMessage::InvalidContentType`; tokio-rustls hands that on as an
/// `io::Error` of kind `InvalidData`. The client does not depend on rustls, so its error type
/// cannot be named here: the `io::Error`'s kind is checked, then the name of the rustls error in
/// its text (a certificate error has the same kind, and must not get this hint).
fn answered_in_plain_http(source: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(source);
    while let Some(error) = cause {
        cause = error.source();
        if let Some(io) = error.downcast_ref::<io::Error>() {
            if io.kind() == io::ErrorKind::InvalidData
                && io.to_string().contains("InvalidContentType")
            {
                return true;
            }
            // An `io::Error`'s `source()` skips the error it wraps, and the connector wraps
            // tokio-rustls's `InvalidData` error in one of kind `Other`: look inside.
            if let Some(inner) = io.get_ref() {
                cause = Some(inner);
            }
        }
    }
    false
}

/// The innermost cause of a transport failure (such as "Connection refused (os error 111)"),
/// which says more than reqwest's own "error sending request".
fn innermost(source: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = source;
    while let Some(cause) = innermost.source() {
        innermost = cause;
    }
    innermost.to_string()
}

//! What the server says about deprecated operations: the `Deprecation` (RFC 9745) and `Sunset`
//! (RFC 8594) headers of their answers, kept per operation and logged once.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use appzone_contract::deprecation::{DEPRECATION, SUNSET};
use http::HeaderMap;

/// A deprecated operation this client called: it still works, and will stop working on
/// [`sunset`](Self::sunset) when the server names a date. See [`Client::deprecations`].
///
/// [`Client::deprecations`]: crate::Client::deprecations
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeprecationNotice {
    /// The operation's `operationId` in the API document, such as `listZones`.
    pub operation: &'static str,
    /// The `Deprecation` header as sent: `@` and seconds since the Unix epoch.
    pub deprecation: String,
    /// When the operation was deprecated, when the header could be read.
    pub since: Option<SystemTime>,
    /// The `Sunset` header as sent (an HTTP-date), when the server set a removal date.
    pub sunset: Option<String>,
}

/// The deprecation headers of one answer, if it has them.
pub(crate) fn read(headers: &HeaderMap) -> Option<(String, Option<String>)> {
    let text = |name: http::HeaderName| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    Some((text(DEPRECATION)?, text(SUNSET)))
}

/// The notices a client has seen, one per operation, in the order first seen.
#[derive(Debug, Default)]
pub(crate) struct Seen(Mutex<Vec<DeprecationNotice>>);

impl Seen {
    /// Records what an answer of `operation` said; logs a warning the first time an operation
    /// is seen deprecated (or its dates change), not on every call.
    pub(crate) fn note(&self, operation: &'static str, headers: Option<&(String, Option<String>)>) {
        let Some((deprecation, sunset)) = headers else {
            return;
        };
        let notice = DeprecationNotice {
            operation,
            since: parse_since(deprecation),
            deprecation: deprecation.clone(),
            sunset: sunset.clone(),
        };
        // A panic elsewhere while holding the lock leaves a list that is still valid.
        let mut seen = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match seen.iter_mut().find(|n| n.operation == operation) {
            Some(known) if *known == notice => return,
            Some(known) => *known = notice.clone(),
            None => seen.push(notice.clone()),
        }
        drop(seen);
        tracing::warn!(
            operation,
            deprecation = %notice.deprecation,
            sunset = notice.sunset.as_deref().unwrap_or("not set"),
            "the appzone API operation {operation} is deprecated; see the API's changelog for \
             what replaces it"
        );
    }

    pub(crate) fn all(&self) -> Vec<DeprecationNotice> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// `@<seconds>` as a time.
fn parse_since(value: &str) -> Option<SystemTime> {
    let seconds = value.trim().strip_prefix('@')?.parse::<u64>().ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deprecation_date_is_read_from_its_structured_field() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_600);
        assert_eq!(parse_since("@1798761600"), Some(at));
        for bad in [
            "1798761600",
            "@",
            "@x",
            "@-1",
            "Fri, 01 Jan 2027 00:00:00 GMT",
        ] {
            assert_eq!(parse_since(bad), None, "{bad}");
        }
    }
}

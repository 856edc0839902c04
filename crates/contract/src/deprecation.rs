//! Operations on their way out, and how the wire says so.
//!
//! An operation listed in [`DEPRECATIONS`] keeps working exactly as before; the server adds
//! `Deprecation` (RFC 9745) to each of its answers and, once a removal date is set, `Sunset`
//! (RFC 8594), and the document marks it `deprecated` with both dates. The rules for what may
//! be deprecated and how long it keeps working are in the API page (`docs/API.md`, "Compatibility").

use std::time::{Duration, SystemTime};

use http::HeaderValue;

/// One deprecated operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deprecation {
    /// The operation's `operationId`, for example `listZones`.
    pub operation_id: &'static str,
    /// When it was deprecated, in seconds since the Unix epoch.
    pub since: u64,
    /// When it stops answering, in seconds since the Unix epoch, once decided. At least six
    /// months after `since` (see the API page).
    pub sunset: Option<u64>,
}

/// The deprecated operations of this version of the interface: none.
pub const DEPRECATIONS: &[Deprecation] = &[];

/// The `Deprecation` response header (RFC 9745).
pub const DEPRECATION: http::HeaderName = http::HeaderName::from_static("deprecation");
/// The `Sunset` response header (RFC 8594).
pub const SUNSET: http::HeaderName = http::HeaderName::from_static("sunset");

impl Deprecation {
    /// The `Deprecation` header's value: a structured-field date, `@` and the seconds.
    ///
    /// ```
    /// let d = appzone_contract::Deprecation { operation_id: "listZones", since: 1_798_761_600, sunset: None };
    /// assert_eq!(d.deprecation_header(), "@1798761600");
    /// ```
    pub fn deprecation_header(&self) -> HeaderValue {
        // `@` and ASCII digits: always a valid header value.
        HeaderValue::from_str(&format!("@{}", self.since)).unwrap_or(HeaderValue::from_static("@0"))
    }

    /// The `Sunset` header's value, an HTTP-date, when a removal date is set.
    ///
    /// ```
    /// let d = appzone_contract::Deprecation { operation_id: "listZones", since: 0, sunset: Some(1_814_400_000) };
    /// assert_eq!(d.sunset_header().unwrap(), "Thu, 01 Jul 2027 00:00:00 GMT");
    /// ```
    pub fn sunset_header(&self) -> Option<HeaderValue> {
        self.sunset.map(|at| {
            // An HTTP-date is ASCII letters, digits, spaces, commas and colons.
            HeaderValue::from_str(&http_date(at))
                .unwrap_or(HeaderValue::from_static("Thu, 01 Jan 1970 00:00:00 GMT"))
        })
    }

    /// What the document says about it, after the operation's own description.
    pub fn description(&self) -> String {
        let mut text = format!(
            "**Deprecated** since {}: it keeps working unchanged, and its answers carry \
             `Deprecation: @{}`.",
            http_date(self.since),
            self.since
        );
        match self.sunset {
            Some(at) => text.push_str(&format!(
                " It stops answering on {} (`Sunset` header).",
                http_date(at)
            )),
            None => text.push_str(" No removal date is set yet."),
        }
        text
    }
}

/// `seconds` since the epoch as an HTTP-date (`Thu, 01 Jan 2027 00:00:00 GMT`).
pub fn http_date(seconds: u64) -> String {
    httpdate::fmt_http_date(SystemTime::UNIX_EPOCH + Duration::from_secs(seconds))
}

//! The request line, written without a `tracing` event.
//!
//! tracing-subscriber's default text format is the costliest part of a listing's log line
//! (BENCHMARKS.md): a calendar conversion per timestamp, ANSI style wrappers around every field
//! name even with colours off, and `Debug` formatting of every string. The line of a request answered without error is formatted here instead, byte for
//! byte as the default format writes the same event (a test compares the two); every other
//! event, error lines included, goes through the default format.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

/// The target of the one-line-per-request events (see `http::observe`).
pub const REQUEST_TARGET: &str = "appzone::request";

/// The line of a request answered without error (the most frequent line by far).
#[derive(Debug)]
pub struct RequestLine<'a> {
    /// The request method.
    pub method: &'a http::Method,
    /// The route template, or `unmatched`.
    pub route: &'a str,
    /// The response status.
    pub status: u16,
    /// Time to answer.
    pub latency_us: u64,
    /// The request id.
    pub request_id: &'a str,
    /// The key id, or `-`.
    pub key_id: &'a str,
}

impl RequestLine<'_> {
    /// Whether every string prints verbatim between quotes, so [`Self::write`] needs no escaping.
    /// Always true for the lines the server writes: request ids pass `is_valid_request_id` or
    /// are ULIDs, key ids are base62, and route labels are a fixed set of templates (checked by
    /// a test in `http::metrics`); checked in debug builds only.
    pub fn is_plain(&self) -> bool {
        quotes_verbatim(self.request_id) && quotes_verbatim(self.key_id)
    }

    /// Appends the line as the text format writes the INFO event `request` with these fields
    /// (`crate::logging::request` emits that event when the line is not written here).
    pub fn write(&self, out: &mut String, now: SystemTime) -> fmt::Result {
        write_timestamp(out, now)?;
        let mut number = itoa::Buffer::new();
        out.push_str("  INFO appzone::request: request method=");
        out.push_str(self.method.as_str());
        out.push_str(" route=\"");
        out.push_str(self.route);
        out.push_str("\" status=");
        out.push_str(number.format(self.status));
        out.push_str(" latency_us=");
        out.push_str(number.format(self.latency_us));
        out.push_str(" request_id=\"");
        out.push_str(self.request_id);
        out.push_str("\" key_id=\"");
        out.push_str(self.key_id);
        out.push_str("\"\n");
        Ok(())
    }
}

/// Writes `2026-11-23T15:17:40.340781Z`, as tracing-subscriber's `SystemTime` timer does. The
/// date and time up to the second are formatted once per second per thread.
fn write_timestamp(writer: &mut impl fmt::Write, now: SystemTime) -> fmt::Result {
    thread_local! {
        static SECOND: RefCell<(u64, String)> = const { RefCell::new((u64::MAX, String::new())) };
    }
    let Ok(since_epoch) = now.duration_since(UNIX_EPOCH) else {
        return writer.write_str("<unknown time>");
    };
    let secs = since_epoch.as_secs();
    SECOND.with_borrow_mut(|(cached, prefix)| {
        if *cached != secs {
            prefix.clear();
            // `2026-11-23T15:17:40Z` without its `Z`.
            write!(prefix, "{}", humantime::format_rfc3339_seconds(now))?;
            prefix.pop();
            *cached = secs;
        }
        // Six digits with leading zeros: those of 1,000,000 + micros after its `1`.
        let mut number = itoa::Buffer::new();
        let digits = number.format(1_000_000 + since_epoch.subsec_micros());
        writer.write_str(prefix)?;
        writer.write_char('.')?;
        writer.write_str(digits.get(1..).unwrap_or_default())?;
        writer.write_char('Z')
    })
}

/// Whether `Debug` would print `s` unchanged between quotes.
fn quotes_verbatim(s: &str) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Capture {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    #[test]
    fn direct_request_lines_match_the_default_format_byte_for_byte() {
        let theirs = Capture::default();
        let line = RequestLine {
            method: &http::Method::DELETE,
            route: "/api/v1/applications/profiles/{profileId}",
            status: 204,
            latency_us: 1234,
            request_id: "01JBENCH000000000000000000",
            key_id: "3s8eYW4YBO3P",
        };
        assert!(line.is_plain());
        tracing::subscriber::with_default(text_subscriber(&theirs), || {
            tracing::info!(
                target: "appzone::request", method = %line.method, route = line.route,
                status = line.status, latency_us = line.latency_us,
                request_id = line.request_id, key_id = line.key_id, "request"
            );
        });
        let mut ours = String::new();
        line.write(&mut ours, SystemTime::now()).unwrap();
        assert_eq!(
            without_timestamps(&ours),
            without_timestamps(&theirs.text())
        );
        assert!(ours.ends_with('\n'));

        let quoted = RequestLine {
            request_id: "a\"b",
            ..line
        };
        assert!(!quoted.is_plain());
    }

    #[test]
    fn request_ids_and_key_ids_always_print_verbatim() {
        use appzone_contract::headers::is_valid_request_id;
        // Every byte a valid request id may hold, and every byte of a key id (base62).
        let allowed: Vec<u8> = (0..=255u8)
            .filter(|&b| is_valid_request_id(std::str::from_utf8(&[b]).unwrap_or("")))
            .collect();
        assert!(!allowed.is_empty());
        assert!(quotes_verbatim(std::str::from_utf8(&allowed).unwrap()));
        let key = appzone_contract::ApiKey::generate();
        assert!(quotes_verbatim(key.key_id().as_str()));
        assert!(quotes_verbatim(&ulid::Ulid::generate().to_string()));
    }

    /// tracing-subscriber's default text format without colours, writing into `capture`.
    fn text_subscriber(capture: &Capture) -> impl tracing::Subscriber + Send + Sync {
        let capture = capture.clone();
        tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || capture.clone())
            .finish()
    }

    /// The text after the timestamp, line by line.
    fn without_timestamps(text: &str) -> Vec<String> {
        text.lines()
            .map(|line| line.split_once(' ').unwrap().1.to_owned())
            .collect()
    }

    #[test]
    fn timestamps_match_the_default_timer() {
        use tracing_subscriber::fmt::format::Writer;
        use tracing_subscriber::fmt::time::{FormatTime, SystemTime as DefaultTimer};
        let moments = [
            UNIX_EPOCH,
            UNIX_EPOCH + std::time::Duration::from_micros(1_795_447_059_000_001),
            UNIX_EPOCH + std::time::Duration::from_micros(951_782_399_999_999), // 2000-02-29
            UNIX_EPOCH + std::time::Duration::from_micros(4_102_444_800_123_456), // 2100-01-01
        ];
        for moment in moments {
            let mut ours = String::new();
            write_timestamp(&mut ours, moment).unwrap();
            // The default timer reads the clock itself; compare with humantime's rendering,
            // which has the same shape, and check the shape against the default timer's.
            let expected = humantime::format_rfc3339_micros(moment).to_string();
            assert_eq!(ours, expected);
            let mut now = String::new();
            DefaultTimer
                .format_time(&mut Writer::new(&mut now))
                .unwrap();
            assert_eq!(now.len(), ours.len());
            assert_eq!(now.as_bytes()[10], b'T');
            assert!(now.ends_with('Z'));
        }
    }
}

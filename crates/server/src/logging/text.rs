//! The text log format, with a fast path for the request line.
//!
//! tracing-subscriber's default text format spent about 12,000 instructions per request line
//! (callgrind), a fifth of the whole listing: a calendar conversion per timestamp, ANSI style
//! wrappers around every field name even with colours off, and `Debug` formatting of every
//! string. The request line (`target: appzone::request`, no span, no colours) is written here
//! instead, byte for byte as the default format writes it (a test compares the two); every other
//! event goes through the default format unchanged.

use std::cell::RefCell;
use std::fmt::{self, Write as _};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::{Format, Full, Writer};
use tracing_subscriber::fmt::time::SystemTime as DefaultTimer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The target of the one-line-per-request events (see `http::observe`).
pub const REQUEST_TARGET: &str = "appzone::request";

/// tracing-subscriber's `Full` text format, with the request line on a fast path.
#[derive(Debug, Default)]
pub struct TextFormat {
    default: Format<Full, DefaultTimer>,
}

impl<S, N> FormatEvent<S, N> for TextFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        if meta.target() != REQUEST_TARGET
            || writer.has_ansi_escapes()
            || ctx.lookup_current().is_some()
        {
            return self.default.format_event(ctx, writer, event);
        }
        write_timestamp(&mut writer, SystemTime::now())?;
        // The default format pads the level to five columns.
        writer.write_str(match *meta.level() {
            tracing::Level::ERROR => " ERROR ",
            tracing::Level::WARN => "  WARN ",
            tracing::Level::INFO => "  INFO ",
            tracing::Level::DEBUG => " DEBUG ",
            tracing::Level::TRACE => " TRACE ",
        })?;
        writer.write_str(meta.target())?;
        writer.write_str(": ")?;
        let mut visitor = Fields {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        event.record(&mut visitor);
        visitor.result?;
        writer.write_char('\n')
    }
}

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
    pub fn is_plain(&self) -> bool {
        // Route labels are a fixed set of templates, checked once by a test in `http::metrics`:
        // only the two strings that come from outside are scanned per request.
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
        let micros = since_epoch.subsec_micros();
        let mut digits = *b".000000Z";
        let mut rest = micros;
        for digit in digits[1..7].iter_mut().rev() {
            // `rest % 10` is below 10: the cast cannot truncate.
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        writer.write_str(prefix)?;
        writer.write_str(std::str::from_utf8(&digits).map_err(|_| fmt::Error)?)
    })
}

/// Writes fields as tracing-subscriber's default visitor does: the message bare, the others
/// `name=value` with strings in `Debug` quotes, separated by spaces.
struct Fields<'a, 'w> {
    writer: &'a mut Writer<'w>,
    first: bool,
    result: fmt::Result,
}

impl Fields<'_, '_> {
    fn separator(&mut self) -> fmt::Result {
        if std::mem::take(&mut self.first) {
            Ok(())
        } else {
            self.writer.write_char(' ')
        }
    }
}

/// Whether `Debug` would print `s` unchanged between quotes.
fn quotes_verbatim(s: &str) -> bool {
    s.bytes()
        .all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

impl Visit for Fields<'_, '_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" || !quotes_verbatim(value) {
            // The default format writes the message with `Display` and escapes ANSI sequences
            // in it; leave both to the general path.
            return self.record_debug(field, &value);
        }
        if self.result.is_ok() {
            self.result = self.separator().and_then(|()| {
                let w = &mut *self.writer;
                w.write_str(field.name())?;
                w.write_str("=\"")?;
                w.write_str(value)?;
                w.write_char('"')
            });
        }
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        if self.result.is_ok() {
            self.result = self.separator().and_then(|()| {
                let w = &mut *self.writer;
                w.write_str(field.name())?;
                w.write_char('=')?;
                w.write_str(itoa::Buffer::new().format(value))
            });
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_ok() {
            self.result = self.separator().and_then(|()| match field.name() {
                "message" => write!(self.writer, "{value:?}"),
                name => write!(self.writer, "{name}={value:?}"),
            });
        }
    }
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

    fn emit_request_lines() {
        let method = http::Method::GET;
        let route = "/api/v1/providers/{providerId}/regions/{regionId}/zones";
        tracing::info!(
            target: "appzone::request", %method, route, status = 200u16, latency_us = 17u64,
            request_id = "01JBENCH000000000000000000", key_id = "3s8eYW4YBO3P", "request"
        );
        tracing::warn!(
            target: "appzone::request", %method, route = "unmatched", status = 404u16,
            latency_us = 0u64, request_id = "a\"b\\c\u{1b}[31m\u{e9}", key_id = "-",
            detail = "no such \"route\"", "request refused"
        );
        tracing::error!(target: "appzone::request", status = 500u16, "request failed");
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
        tracing::subscriber::with_default(text_subscriber(&theirs, false), || {
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

    /// A text-format subscriber without colours writing into `capture`: with [`TextFormat`]
    /// when `ours`, else with tracing-subscriber's default format.
    fn text_subscriber(capture: &Capture, ours: bool) -> Box<dyn Subscriber + Send + Sync> {
        let capture = capture.clone();
        let builder = tracing_subscriber::fmt()
            .with_ansi(false)
            .with_writer(move || capture.clone());
        if ours {
            Box::new(builder.event_format(TextFormat::default()).finish())
        } else {
            Box::new(builder.finish())
        }
    }

    /// The text after the timestamp, line by line.
    fn without_timestamps(text: &str) -> Vec<String> {
        text.lines()
            .map(|line| line.split_once(' ').unwrap().1.to_owned())
            .collect()
    }

    #[test]
    fn request_lines_match_the_default_format_byte_for_byte() {
        let ours = Capture::default();
        let theirs = Capture::default();
        tracing::subscriber::with_default(text_subscriber(&ours, true), emit_request_lines);
        tracing::subscriber::with_default(text_subscriber(&theirs, false), emit_request_lines);

        let (ours, theirs) = (ours.text(), theirs.text());
        assert_eq!(ours.lines().count(), 3, "{ours}");
        assert_eq!(without_timestamps(&ours), without_timestamps(&theirs));
        for line in ours.lines() {
            let stamp = line.split_once(' ').unwrap().0;
            assert_eq!(stamp.len(), "2026-11-23T15:17:40.340781Z".len(), "{line}");
        }
    }

    #[test]
    fn timestamps_match_the_default_timer() {
        use tracing_subscriber::fmt::time::FormatTime;
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

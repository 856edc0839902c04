//! Log output: tracing to stderr through small per-thread buffers.
//!
//! One `write(2)` per request line is a system call per request; a background writer thread
//! (tracing-appender) costs a cross-core wake-up per line; one buffer shared by all threads
//! moves its lock and its bytes between the cores' caches with every line (BENCHMARKS.md has
//! the measurements). Here each thread appends its
//! formatted lines to a buffer of its own, and a buffer reaches stderr when it holds 32 KiB,
//! every 50 ms from a flusher thread, before an operator error is printed, and when the process
//! ends normally ([`LogGuard`]). The lines of one thread keep their order (its buffer is written
//! while its lock is held); lines of different threads may interleave up to 50 ms out of order,
//! and each carries its timestamp. A crash can lose the last 50 ms of lines; nothing else
//! depends on them.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, PoisonError};
use std::time::{Duration, SystemTime};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::EnvFilter;

mod text;

pub use text::RequestLine;

/// How request lines are written: set once by [`init`].
static REQUEST_LINES: AtomicU8 = AtomicU8::new(THROUGH_TRACING);
/// As `tracing` events (the JSON format, a test's subscriber, no subscriber yet).
const THROUGH_TRACING: u8 = 0;
/// Written by [`request`] itself (the text format, with the filter letting them through):
/// cheaper than an event (BENCHMARKS.md).
const DIRECT: u8 = 1;
/// Not written (the text format, with the filter refusing them).
const FILTERED_OUT: u8 = 2;

/// Logs the line of a request answered without error, at INFO with target `appzone::request`.
///
/// With the text format installed by [`init`], the line is formatted here and appended to the
/// log buffer, byte for byte as the `tracing` event would have been written (a test compares
/// them), if the log filter lets such lines through: the filter is fixed for the life of the
/// process, so [`init`] asks it once. Otherwise (the JSON format, a test's subscriber) it is a
/// `tracing` event like every other line.
pub fn request(line: &RequestLine<'_>) {
    match REQUEST_LINES.load(Ordering::Relaxed) {
        DIRECT => {
            // Request ids pass `is_valid_request_id` (or are ULIDs) and key ids are base62: both
            // print verbatim, so the line needs no escaping (`text` tests both validators).
            debug_assert!(line.is_plain(), "{line:?}");
            thread_local! {
                static LINE: RefCell<String> = const { RefCell::new(String::new()) };
            }
            LINE.with_borrow_mut(|buffer| {
                buffer.clear();
                if line.write(buffer, SystemTime::now()).is_ok() {
                    append(buffer.as_bytes());
                }
            });
        }
        FILTERED_OUT => {}
        _ => tracing::info!(
            target: "appzone::request", method = %line.method, route = line.route,
            status = line.status, latency_us = line.latency_us, request_id = line.request_id,
            key_id = line.key_id, "request"
        ),
    }
}

/// Buffer size that triggers a write from the logging thread itself.
const FLUSH_AT: usize = 32 * 1024;
/// Longest time a line waits in the buffer.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// One thread's buffer.
type Buffer = Arc<Mutex<Vec<u8>>>;

/// Every thread's buffer, for the flusher.
static BUFFERS: Mutex<Vec<Buffer>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's buffer, registered in `BUFFERS` on its first line.
    static MINE: Buffer = {
        let buffer = Buffer::default();
        lock(&BUFFERS).push(Arc::clone(&buffer));
        buffer
    };
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock leaves bytes, not broken state: keep going.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Appends a formatted line to this thread's buffer.
fn append(line: &[u8]) {
    let appended = MINE.try_with(|mine| {
        let mut buffer = lock(mine);
        buffer.extend_from_slice(line);
        if buffer.len() >= FLUSH_AT {
            write_out(&mut buffer);
        }
    });
    if appended.is_err() {
        // The thread is ending and its buffer is gone: write the line straight away.
        let _ = std::io::stderr().write_all(line);
    }
}

fn write_out(buffer: &mut Vec<u8>) {
    if !buffer.is_empty() {
        let _ = std::io::stderr().write_all(buffer);
        buffer.clear();
    }
}

/// Writes everything buffered, by every thread, to stderr now.
pub fn flush() {
    let mut buffers = lock(&BUFFERS);
    for buffer in buffers.iter() {
        write_out(&mut lock(buffer));
    }
    // The buffer of a thread that ended is held here alone: written above, dropped now.
    buffers.retain(|buffer| Arc::strong_count(buffer) > 1);
}

/// Flushes the log buffer when dropped; keep it alive for the life of `main`.
#[derive(Debug)]
pub struct LogGuard(());

impl Drop for LogGuard {
    fn drop(&mut self) {
        flush();
    }
}

/// The `tracing` writer: appends each formatted event to the thread's buffer.
#[derive(Debug, Clone, Copy)]
struct BufferedStderr;

impl Write for BufferedStderr {
    fn write(&mut self, line: &[u8]) -> std::io::Result<usize> {
        append(line);
        Ok(line.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BufferedStderr {
    type Writer = BufferedStderr;
    fn make_writer(&'a self) -> Self::Writer {
        *self
    }
}

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Installs the global subscriber: `APPZONE_LOG` (or `RUST_LOG`) else `default_filter`.
pub fn init(format: LogFormat, default_filter: &str) -> LogGuard {
    static FLUSHER: Once = Once::new();
    FLUSHER.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("log-flush".into())
            .spawn(|| loop {
                std::thread::sleep(FLUSH_EVERY);
                flush();
            });
    });
    let filter = EnvFilter::try_from_env("APPZONE_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new(default_filter));
    // Colours only for a person at a terminal, never in files or pipes.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(ansi)
        .with_writer(BufferedStderr);
    match format {
        LogFormat::Text => {
            if builder.try_init().is_ok() {
                let on = tracing::enabled!(target: text::REQUEST_TARGET, tracing::Level::INFO);
                let how = if on { DIRECT } else { FILTERED_OUT };
                REQUEST_LINES.store(how, Ordering::Relaxed);
            }
        }
        LogFormat::Json => {
            let _ = builder.json().try_init();
        }
    }
    LogGuard(())
}

//! The header-read timeout, kept by the connection instead of by hyper.
//!
//! hyper's own (`http1().header_read_timeout`) arms a timer for every request head and, when
//! it is set, makes one more read attempt after every response (BENCHMARKS.md measures it
//! against this watchdog). Here nothing is timed per request. A connection's requests count themselves in and out
//! ([`Activity::begin`], in `http/stack.rs`), its socket counts the writes that made progress
//! ([`Watched`]), and one timer per connection looks every half timeout
//! ([`cut_off_when_quiet`]): a connection on which nothing moved for a whole timeout while no
//! request was in flight is closed. That is a client that does not finish its request head,
//! one that sends no next head on a kept-alive connection, or one that stopped reading its
//! answer (which hyper's timeout never caught). An answer read slowly but steadily is not cut.
//!
//! Such a connection is closed between one and one and a half timeouts after it went quiet
//! (hyper's timeout: exactly one). The same applies to HTTP/2 connections without a stream
//! in flight.

use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::http::context::{Activity, Connection};

/// Runs `connection` until it ends (`Some` of its output), or drops it, closing its socket
/// (`None`), once nothing moved on it for `timeout` while no request was in flight. Looks
/// every half `timeout`.
pub(super) async fn cut_off_when_quiet<F: Future>(
    connection: F,
    activity: &Activity,
    timeout: Duration,
) -> Option<F::Output> {
    // Never zero: a timer that is always due would keep the loop below turning.
    let period = (timeout / 2).max(Duration::from_millis(1));
    let mut connection = pin!(connection);
    let mut timer = pin!(tokio::time::sleep(period));
    let mut armed = false;
    let mut last = activity.snapshot();
    let mut quiet_periods = 0u32;
    poll_fn(|cx| {
        if let Poll::Ready(output) = connection.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        // The connection is polled for every read and write; the timer only when it may have
        // fired (it wakes the task when it does), so no request's path touches it.
        while !armed || timer.is_elapsed() {
            if timer.as_mut().poll(cx).is_pending() {
                armed = true;
                break;
            }
            let now = activity.snapshot();
            if now == last && !now.in_flight() {
                quiet_periods += 1;
            } else {
                quiet_periods = 0;
            }
            last = now;
            if quiet_periods >= 2 {
                return Poll::Ready(None);
            }
            timer.as_mut().reset(tokio::time::Instant::now() + period);
            armed = false;
        }
        Poll::Pending
    })
    .await
}

/// The fewest bytes a write must get out to count as progress. An HTTP/2 server answers a
/// client's PING (17 bytes) and SETTINGS (9 bytes) frames itself: counted, they would let a
/// client that only pings keep an idle connection forever. Every answer written while a
/// client reads it is bigger (a socket reports itself writable again only with a third of its
/// buffer free), so nothing else is lost.
const PROGRESS_BYTES: usize = 64;

/// A socket that counts the writes that made progress in its connection's [`Activity`].
#[derive(Debug)]
pub(super) struct Watched<T> {
    io: T,
    connection: Arc<Connection>,
}

impl<T> Watched<T> {
    pub(super) fn new(io: T, connection: Arc<Connection>) -> Self {
        Self { io, connection }
    }

    fn progressed(&self, written: &Poll<io::Result<usize>>) {
        if matches!(written, Poll::Ready(Ok(n)) if *n >= PROGRESS_BYTES) {
            self.connection.activity().wrote();
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        // Reads are not progress: a head sent a byte at a time must still be cut off.
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        self.progressed(&written);
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.progressed(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    //! On tokio's paused clock: time advances only when every task waits, so each bound below
    //! is checked exactly, whatever the machine's load.

    use super::*;
    use std::net::{IpAddr, Ipv4Addr};
    use tokio::time::Instant;

    fn connection() -> Arc<Connection> {
        Arc::new(Connection::new(IpAddr::V4(Ipv4Addr::LOCALHOST)))
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_connection_is_cut_off_between_one_and_one_and_a_half_timeouts() {
        let connection = connection();
        let timeout = Duration::from_millis(200);
        let started = Instant::now();
        let cut =
            cut_off_when_quiet(std::future::pending::<()>(), connection.activity(), timeout).await;
        let took = started.elapsed();
        assert!(cut.is_none());
        assert!(took >= timeout, "cut off after {took:?}");
        assert!(took <= timeout * 3 / 2, "cut off after {took:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_went_quiet_just_after_a_look_lasts_one_and_a_half_timeouts() {
        // The worst case: the last activity just after the watchdog looked.
        let connection = connection();
        let timeout = Duration::from_millis(200);
        let started = Instant::now();
        let work = async {
            tokio::time::sleep(timeout / 2 + Duration::from_millis(1)).await;
            drop(connection.activity().begin());
            std::future::pending::<()>().await
        };
        let cut = cut_off_when_quiet(work, connection.activity(), timeout).await;
        let took = started.elapsed();
        assert!(cut.is_none());
        let quiet_for = took - (timeout / 2 + Duration::from_millis(1));
        assert!(quiet_for >= timeout, "quiet for {quiet_for:?}");
        assert!(quiet_for <= timeout * 3 / 2, "quiet for {quiet_for:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_flight_keeps_its_connection_however_long_it_takes() {
        let connection = connection();
        let timeout = Duration::from_millis(100);
        let work = async {
            let _busy = connection.activity().begin();
            tokio::time::sleep(timeout * 50).await;
            "answered"
        };
        let ended = cut_off_when_quiet(work, connection.activity(), timeout).await;
        assert_eq!(ended, Some("answered"));
    }

    #[tokio::test(start_paused = true)]
    async fn writes_that_progress_keep_a_connection_and_stalled_ones_do_not() {
        let connection = connection();
        let timeout = Duration::from_millis(100);
        // A client reading its answer slowly: a write gets through every 40 ms, 12 times.
        let (client, server) = tokio::io::duplex(PROGRESS_BYTES);
        let mut socket = Watched::new(server, Arc::clone(&connection));
        let reader = tokio::spawn(async move {
            let mut client = client;
            let mut chunk = [0u8; PROGRESS_BYTES];
            for _ in 0..12 {
                tokio::time::sleep(Duration::from_millis(40)).await;
                tokio::io::AsyncReadExt::read_exact(&mut client, &mut chunk)
                    .await
                    .expect("the server writes");
            }
            client // kept open, never read again: the writer stalls
        });
        let writing = async {
            let data = [7u8; PROGRESS_BYTES * 16];
            tokio::io::AsyncWriteExt::write_all(&mut socket, &data).await
        };
        let started = Instant::now();
        let cut = cut_off_when_quiet(writing, connection.activity(), timeout).await;
        let took = started.elapsed();
        assert!(cut.is_none(), "the stalled write ended: {cut:?}");
        // Not while the reader took a byte every 40 ms (the last at 480 ms); within one and a
        // half timeouts of that.
        let last_read = Duration::from_millis(480);
        assert!(took >= last_read + timeout, "cut off after {took:?}");
        assert!(
            took <= last_read + timeout * 3 / 2,
            "cut off after {took:?}"
        );
        drop(reader);
    }

    #[tokio::test(start_paused = true)]
    async fn control_frame_sized_writes_do_not_keep_a_connection() {
        // An idle HTTP/2 connection whose client pings every 40 ms: the server's 17-byte PING
        // acknowledgements get out, and the connection is cut off all the same.
        let connection = connection();
        let timeout = Duration::from_millis(100);
        let (client, server) = tokio::io::duplex(1024);
        let mut socket = Watched::new(server, Arc::clone(&connection));
        let pinger = tokio::spawn(async move {
            let mut client = client;
            let mut ack = [0u8; 17];
            loop {
                tokio::time::sleep(Duration::from_millis(40)).await;
                if tokio::io::AsyncReadExt::read_exact(&mut client, &mut ack)
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        let acknowledging = async {
            loop {
                tokio::io::AsyncWriteExt::write_all(&mut socket, &[0u8; 17]).await?;
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
            #[allow(unreachable_code)]
            Ok::<(), io::Error>(())
        };
        let started = Instant::now();
        // Bounded: a watchdog that counted the acknowledgements would never cut.
        let cut = tokio::time::timeout(
            timeout * 10,
            cut_off_when_quiet(acknowledging, connection.activity(), timeout),
        )
        .await;
        assert!(
            matches!(cut, Ok(None)),
            "not cut off within ten timeouts: {cut:?}"
        );
        assert!(
            started.elapsed() <= timeout * 3 / 2,
            "{:?}",
            started.elapsed()
        );
        pinger.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn reads_alone_do_not_keep_a_connection() {
        // A head sent a byte at a time: the server reads, answers nothing, and cuts it off.
        let connection = connection();
        let timeout = Duration::from_millis(100);
        let (client, server) = tokio::io::duplex(64);
        let mut socket = Watched::new(server, Arc::clone(&connection));
        let dripper = tokio::spawn(async move {
            let mut client = client;
            for byte in b"GET / HTTP/1.1\r\nHost: x\r\n".iter().cycle().take(1000) {
                tokio::time::sleep(Duration::from_millis(10)).await;
                if tokio::io::AsyncWriteExt::write_all(&mut client, &[*byte])
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        let reading = async {
            let mut head = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut socket, &mut head).await
        };
        let started = Instant::now();
        let cut = cut_off_when_quiet(reading, connection.activity(), timeout).await;
        assert!(cut.is_none(), "the drip ended first: {cut:?}");
        assert!(
            started.elapsed() <= timeout * 3 / 2,
            "{:?}",
            started.elapsed()
        );
        dripper.abort();
    }
}

//! hyper's header-read timer, one tokio timer per connection.
//!
//! hyper asks its timer for a new sleep every time it starts reading a request head. With
//! hyper-util's `TokioTimer` each one is a new tokio timer: an allocation, a registration in
//! tokio's timer wheel while the connection waits for its next request, and a removal when the
//! head arrives; about 1,500 instructions per keep-alive request (callgrind), a sixth of all
//! the work this service adds to a listing. [`ConnectionTimer`] keeps one tokio timer per
//! connection and moves its deadline instead: moving a registered deadline later is one atomic
//! operation in tokio, and the timer stays in the wheel. The price is one spurious wake-up of an
//! idle connection per timeout period, when the stale deadline passes.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper::rt::{Sleep, Timer};

type Shared = Arc<Mutex<Option<Pin<Box<tokio::time::Sleep>>>>>;

/// A [`Timer`] for one connection (give each connection its own). Needs a tokio runtime.
#[derive(Debug, Clone, Default)]
pub(crate) struct ConnectionTimer(Shared);

impl Timer for ConnectionTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn Sleep>> {
        self.sleep_until(Instant::now() + duration)
    }

    fn sleep_until(&self, deadline: Instant) -> Pin<Box<dyn Sleep>> {
        Box::pin(ConnectionSleep {
            timer: Arc::clone(&self.0),
            deadline: tokio::time::Instant::from_std(deadline),
        })
    }
}

/// One deadline on the connection's timer. hyper holds at most one at a time.
struct ConnectionSleep {
    timer: Shared,
    deadline: tokio::time::Instant,
}

impl Future for ConnectionSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let deadline = self.deadline;
        let mut timer = self.timer.lock().unwrap_or_else(PoisonError::into_inner);
        let sleep = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if sleep.deadline() != deadline {
            sleep.as_mut().reset(deadline);
        }
        sleep.as_mut().poll(cx)
    }
}

impl Sleep for ConnectionSleep {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sleeps on `timer` and checks it ends at its deadline, not before and not much after.
    async fn sleeps_for(timer: &ConnectionTimer, millis: u64) {
        let wanted = Duration::from_millis(millis);
        let begun = Instant::now();
        timer.sleep(wanted).await;
        let took = begun.elapsed();
        assert!(took >= wanted, "{millis} ms sleep ended after {took:?}");
        assert!(
            took < wanted + Duration::from_millis(500),
            "{millis} ms sleep took {took:?}"
        );
    }

    #[tokio::test]
    async fn each_sleep_ends_at_its_own_deadline_on_the_shared_timer() {
        let timer = ConnectionTimer::default();
        // A later deadline moves the registered timer; an earlier one after it fired re-arms it.
        for millis in [20, 60, 10] {
            sleeps_for(&timer, millis).await;
        }
        // A sleep dropped while pending leaves no later deadline behind for the next one.
        let mut abandoned = timer.sleep(Duration::from_secs(100));
        assert!(futures_util::poll!(abandoned.as_mut()).is_pending());
        drop(abandoned);
        sleeps_for(&timer, 10).await;
    }
}

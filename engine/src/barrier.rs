//! A sense-reversing barrier that spins briefly, then yields, then blocks.
//!
//! Windows can be one cycle long (lookahead 1), so a run may cross tens of thousands of
//! barriers per second; `std::sync::Barrier` parks threads on a futex at once, which costs
//! tens of microseconds per crossing. Spinning first keeps a crossing near a microsecond
//! when every thread has a core. A thread still waiting after the spinning and yielding of
//! [`Backoff`] (2 milliseconds) blocks on a condition variable until the last
//! thread wakes it, so that a run with more threads than free cores does not burn the core
//! a late thread needs.

use crate::comm::Backoff;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

pub(crate) struct SpinBarrier {
    count: AtomicUsize,
    sense: AtomicBool,
    aborted: AtomicBool,
    total: usize,
    /// Threads blocked (or about to block) on `wake`; the last thread to arrive wakes
    /// them only if there are any, so a crossing without sleepers costs one load.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl SpinBarrier {
    pub(crate) fn new(total: usize) -> Self {
        Self {
            count: AtomicUsize::new(0),
            sense: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            total,
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    /// Waits until all `total` threads have called `wait`. `local_sense` is the caller's
    /// own flag, flipped on every crossing. Returns false if the barrier was aborted
    /// (another thread failed), in which case the caller must stop.
    pub(crate) fn wait(&self, local_sense: &mut bool) -> bool {
        *local_sense = !*local_sense;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.total {
            self.count.store(0, Ordering::Relaxed);
            self.sense.store(*local_sense, Ordering::SeqCst);
            self.wake_sleepers();
        } else {
            let mut backoff = Backoff::new();
            while !self.released(*local_sense) {
                if backoff.is_long() {
                    self.block(*local_sense);
                } else {
                    backoff.snooze();
                }
            }
        }
        !self.aborted.load(Ordering::Acquire)
    }

    fn released(&self, local_sense: bool) -> bool {
        self.sense.load(Ordering::SeqCst) == local_sense || self.aborted.load(Ordering::Acquire)
    }

    /// Blocks until the barrier is released or aborted. A sleeper counts itself under the
    /// lock before its last look at `sense`, and the releaser sets `sense` before it looks
    /// at `sleepers` (both sequentially consistent): either the sleeper sees the release,
    /// or the releaser sees the sleeper and notifies under the lock, which it can take
    /// only once the sleeper waits on the condition variable. The timeout is a safety net.
    fn block(&self, local_sense: bool) {
        let mut guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while !self.released(local_sense) {
            guard = match self.wake.wait_timeout(guard, Duration::from_millis(10)) {
                Ok((g, _)) => g,
                Err(e) => e.into_inner().0,
            };
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    fn wake_sleepers(&self) {
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.wake.notify_all();
        }
    }

    /// Releases every waiting thread for good; used when a thread fails.
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.wake_sleepers();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_that_block_are_woken_at_every_crossing() {
        let barrier = SpinBarrier::new(3);
        let crossings = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let (barrier, crossings) = (&barrier, &crossings);
                s.spawn(move || {
                    let mut sense = false;
                    for i in 0..40u64 {
                        // Now one thread, now another is late by more than the spinning
                        // and yielding, so the others block.
                        if i % 3 == t {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        assert!(barrier.wait(&mut sense));
                        crossings.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        });
        assert_eq!(crossings.load(Ordering::Relaxed), 120);
        assert_eq!(barrier.sleepers.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_long_wait_blocks_instead_of_spinning() {
        let barrier = SpinBarrier::new(2);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| barrier.wait(&mut false));
            // The waiter spins and yields for 2 ms, then blocks: it counts itself a sleeper.
            let mut waited = Duration::ZERO;
            while barrier.sleepers.load(Ordering::SeqCst) == 0 && waited < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(1));
                waited += Duration::from_millis(1);
            }
            assert_eq!(barrier.sleepers.load(Ordering::SeqCst), 1, "the waiter never blocked");
            assert!(barrier.wait(&mut false));
            assert!(waiter.join().unwrap());
        });
        assert_eq!(barrier.sleepers.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn an_abort_releases_a_blocked_thread() {
        let barrier = SpinBarrier::new(2);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| barrier.wait(&mut false));
            std::thread::sleep(Duration::from_millis(20));
            barrier.abort();
            assert!(!waiter.join().unwrap());
        });
    }
}

//! A sense-reversing barrier that spins briefly and then yields.
//!
//! Windows can be one cycle long (lookahead 1), so a run may cross tens of thousands of
//! barriers per second; `std::sync::Barrier` parks threads on a futex, which costs tens
//! of microseconds per crossing. Spinning first keeps a crossing near a microsecond when
//! every thread has a core, and yielding keeps oversubscribed runs from burning a core.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub(crate) struct SpinBarrier {
    count: AtomicUsize,
    sense: AtomicBool,
    aborted: AtomicBool,
    total: usize,
}

impl SpinBarrier {
    pub(crate) fn new(total: usize) -> Self {
        Self {
            count: AtomicUsize::new(0),
            sense: AtomicBool::new(false),
            aborted: AtomicBool::new(false),
            total,
        }
    }

    /// Waits until all `total` threads have called `wait`. `local_sense` is the caller's
    /// own flag, flipped on every crossing. Returns false if the barrier was aborted
    /// (another thread failed), in which case the caller must stop.
    pub(crate) fn wait(&self, local_sense: &mut bool) -> bool {
        *local_sense = !*local_sense;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.total {
            self.count.store(0, Ordering::Relaxed);
            self.sense.store(*local_sense, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.sense.load(Ordering::Acquire) != *local_sense {
                if self.aborted.load(Ordering::Acquire) {
                    return false;
                }
                if spins < 2000 {
                    std::hint::spin_loop();
                    spins += 1;
                } else {
                    std::thread::yield_now();
                }
            }
        }
        !self.aborted.load(Ordering::Acquire)
    }

    /// Releases every waiting thread for good; used when a thread fails.
    pub(crate) fn abort(&self) {
        self.aborted.store(true, Ordering::Release);
    }
}

//! Communication between the ranks (processes) of a distributed run.
//!
//! The engine stays free of MPI: a distributed run gets a [`RankComm`], which the binary
//! implements with MPI. Only one thread per rank (the one that called the engine) uses it,
//! always in the same order on every rank, so a funnelled MPI library suffices.

use std::time::{Duration, Instant};

/// Collective operations among the ranks of one run. Every rank calls the same operations
/// in the same order.
pub trait RankComm {
    /// This rank's number, `0..size`.
    fn rank(&self) -> usize;
    /// Number of ranks.
    fn size(&self) -> usize;
    /// Set-up, once: given the ranks this rank will send to at every window, returns the
    /// ranks that will send to it, in increasing order.
    fn senders(&mut self, receivers: &[usize]) -> Vec<usize>;
    /// The per-window step, between neighbours only: sends `send[k].1` to rank `send[k].0`
    /// (one message to each receiver named at set-up, empty ones included, so that
    /// receivers know what to wait for) and returns one message from each rank of `from`,
    /// in that order. Fused with one reduction: `min` becomes its element-wise minimum
    /// over all ranks.
    fn exchange(&mut self, send: Vec<(usize, Vec<u8>)>, from: &[usize], min: &mut [u64]) -> Vec<Vec<u8>>;
    /// Element-wise minimum of `values` over all ranks, in place.
    fn min_all(&mut self, values: &mut [u64]);
    /// Gathers `data` at rank 0: `Some(per-rank data)` there, `None` elsewhere.
    fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>>;
    /// Rank 0's `data`, on every rank (other ranks' argument is ignored).
    fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8>;
    /// Ends every rank of the run now with exit code `code` (a failure on one rank that
    /// the others cannot know of: they would wait for it forever). Not collective.
    fn abort(&self, code: i32) -> !;
}

/// How a rank or thread waits for the others: spin for 20 microseconds (a window's
/// exchange is often that short, and waking up costs more), then yield the core until 2
/// milliseconds have passed, then sleep for an eighth of the time waited so far (at most
/// 1 ms at a time).
///
/// When every rank and thread has its own core the waits end while spinning, at full
/// speed; when there are more of them than free cores (more ranks than cores, another
/// program on the node), spinning would hold the core the late rank needs until the
/// scheduler took it away, every window (a run hundreds of times slower). Yielding hands
/// the core over at once and, unlike sleeping, costs no wake-up latency when the machine
/// is busy; sleeping stops a long wait from costing CPU time at all, and an eighth of the
/// wait bounds the time lost to oversleeping.
///
/// ```
/// # let done = || true;
/// let mut wait = xnet_engine::comm::Backoff::new();
/// while !done() {
///     wait.snooze();
/// }
/// ```
#[derive(Debug)]
pub struct Backoff {
    started: Instant,
    checks: u32,
    phase: Phase,
}

#[derive(Debug, PartialEq, Eq)]
enum Phase {
    Spin,
    Yield,
    Sleep,
}

/// Spin while waiting this long...
const SPIN_FOR: Duration = Duration::from_micros(20);
/// ... then yield the core until this long ...
const YIELD_UNTIL: Duration = Duration::from_millis(2);
/// ... then sleep, at least and at most this long at a time.
const SHORTEST_SLEEP: Duration = Duration::from_micros(50);
const LONGEST_SLEEP: Duration = Duration::from_millis(1);

impl Backoff {
    /// A wait starting now.
    pub fn new() -> Self {
        Backoff { started: Instant::now(), checks: 0, phase: Phase::Spin }
    }

    /// Waits a little before the next check of what is waited for (see [`Backoff`]).
    pub fn snooze(&mut self) {
        self.checks = self.checks.wrapping_add(1);
        match self.phase {
            Phase::Spin => {
                std::hint::spin_loop();
                // The clock is read every 16 checks.
                if self.checks.is_multiple_of(16) && self.started.elapsed() >= SPIN_FOR {
                    self.phase = Phase::Yield;
                }
            }
            Phase::Yield => {
                std::thread::yield_now();
                if self.started.elapsed() >= YIELD_UNTIL {
                    self.phase = Phase::Sleep;
                }
            }
            Phase::Sleep => {
                std::thread::sleep((self.started.elapsed() / 8).clamp(SHORTEST_SLEEP, LONGEST_SLEEP));
            }
        }
    }

    /// Whether the wait has gone past spinning and yielding: a waiter that can be woken
    /// (a thread at a barrier) may block from now on instead of sleeping.
    pub fn is_long(&self) -> bool {
        self.phase == Phase::Sleep
    }
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

/// The communicator of a run in a single process.
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleRank;

impl RankComm for SingleRank {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn senders(&mut self, _receivers: &[usize]) -> Vec<usize> {
        Vec::new()
    }
    fn exchange(&mut self, _send: Vec<(usize, Vec<u8>)>, from: &[usize], _min: &mut [u64]) -> Vec<Vec<u8>> {
        vec![Vec::new(); from.len()]
    }
    fn min_all(&mut self, _values: &mut [u64]) {}
    fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
        Some(vec![data])
    }
    fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8> {
        data
    }
    fn abort(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

/// Serialises with the project's wire format (bincode 2, standard configuration).
pub fn encode<T: serde::Serialize>(value: &T) -> Vec<u8> {
    bincode::serde::encode_to_vec(value, bincode::config::standard()).expect("in-memory encoding cannot fail")
}

/// The length of [`encode`]'s bytes for `value`, without making them.
pub fn encoded_len<T: serde::Serialize>(value: &T) -> u64 {
    let mut size = bincode::enc::write::SizeWriter::default();
    bincode::serde::encode_into_writer(value, &mut size, bincode::config::standard())
        .expect("in-memory encoding cannot fail");
    size.bytes_written as u64
}

/// Reverses [`encode`]. A failure means the ranks run different builds or configurations.
pub fn decode<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    bincode::serde::decode_from_slice(bytes, bincode::config::standard())
        .map(|(v, _)| v)
        .map_err(|e| format!("cannot decode a message from another rank: {e}"))
}

//! # xnet-engine: the conservative parallel discrete-event core
//!
//! The engine knows *logical processes* (LPs), *timestamped messages*, *links* with
//! latencies, *partitions*, *windows* and the exchange of messages between partitions. It
//! knows nothing about routers or packets: a model implements [`LogicalProcess`] and the
//! engine runs it.
//!
//! ## Model of time
//! Time is an integer cycle count ([`Time`]). An LP interacts with other LPs only by
//! sending messages over [`LinkSpec`]s, each with a latency of at least one cycle. An LP
//! may also schedule events to itself with any delay, zero included.
//!
//! ## Parallel execution
//! LPs are split into partitions. Every partition advances in *windows* `[T, T + W)`
//! where `W` (the lookahead) is the minimum latency of the links that cross partitions:
//! nothing another partition sends during the window can arrive before `T + W`. At the end
//! of a window partitions hand over their boundary messages and agree on the next window
//! start, the earliest pending event anywhere, so idle stretches are skipped. One thread
//! or many, the algorithm is the same: a serial run is a run with one partition.
//!
//! ## Determinism
//! Events at the same time for the same LP are processed in a total order that does not
//! depend on the partitioning: messages arriving over links first (ordered by the link's
//! [`tie`](LinkSpec::tie), then by the sender's sequence number), then self-scheduled events (ordered by the
//! priority the model gave, then by the LP's own sequence number). Different LPs never
//! interact within a cycle, so the interleaving between LPs cannot leak into results.
//!
//! ```
//! use xnet_engine::{Ctx, LinkSpec, LogicalProcess, RunConfig, Checkpoint, Control, run_partitions};
//! use serde::{Deserialize, Serialize};
//!
//! /// Two LPs playing ping-pong over a pair of links.
//! struct Player { out_link: u32, count: u32 }
//! #[derive(Clone, Serialize, Deserialize)]
//! struct Ball;
//! impl LogicalProcess for Player {
//!     type Msg = Ball;
//!     type Local = ();
//!     fn start(&mut self, ctx: &mut Ctx<'_, Ball>, _: &mut ()) {
//!         if ctx.lp() == 0 { ctx.send(self.out_link, Ball); }
//!     }
//!     fn handle(&mut self, _msg: Ball, ctx: &mut Ctx<'_, Ball>, _: &mut ()) {
//!         self.count += 1;
//!         ctx.send(self.out_link, Ball);
//!     }
//! }
//! let links = vec![
//!     LinkSpec { src: 0, dst: 1, latency: 5, tie: 0 },
//!     LinkSpec { src: 1, dst: 0, latency: 5, tie: 1 },
//! ];
//! let lps = vec![Player { out_link: 0, count: 0 }, Player { out_link: 1, count: 0 }];
//! let cfg = RunConfig { end_time: 100, checkpoint_period: 50, stop: None, census: None };
//! // Both LPs in their own partition: two threads, lookahead 5.
//! let out = run_partitions(lps, &links, &[0, 1], &cfg, |lps: &mut [Player], _: &mut (), _t| {
//!     lps.iter().map(|p| p.count).sum::<u32>()
//! }, |cp: Checkpoint<u32>| { assert!(cp.time <= 100); Control::Continue }).unwrap();
//! // The ball is hit at t = 5, 10, ..., 95: 19 times.
//! assert_eq!(out.lps.iter().map(|(_, p)| p.count).sum::<u32>(), 19);
//! ```
#![warn(missing_docs, unreachable_pub)]

mod barrier;
mod census;
pub mod comm;
mod error;
mod partition;
mod queue;
mod run;

pub use census::{CensusCounts, CensusLayout};
pub use comm::{RankComm, SingleRank};
pub use error::EngineError;
pub use partition::{link_routes, Ctx, LinkRoute};
pub use queue::Event;
pub use run::{
    run_distributed, run_partitions, Checkpoint, Control, Layout, RunConfig, RunOutcome, RunStats,
};

use serde::{de::DeserializeOwned, Serialize};

/// Simulated time in cycles.
pub type Time = u64;
/// Global identifier of a logical process.
pub type LpId = u32;
/// Global identifier of a link (its index in the link list given to the engine).
pub type LinkId = u32;

/// A directed link between two logical processes. Messages sent over it arrive
/// `latency` cycles later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// Sending LP.
    pub src: LpId,
    /// Receiving LP.
    pub dst: LpId,
    /// Delay in cycles, at least 1.
    pub latency: Time,
    /// Orders messages that reach the same LP at the same time over different links
    /// (smaller first): distinct among the links into one LP and independent of the
    /// partitioning, e.g. a global link number.
    pub tie: u32,
}

/// A simulated component. The engine calls [`start`](LogicalProcess::start) once at
/// time 0 and [`handle`](LogicalProcess::handle) for every event addressed to it.
pub trait LogicalProcess: Send {
    /// Message type carried by links and self-scheduled events. It crosses threads and
    /// processes, so it is `Send` and serialisable.
    type Msg: Send + Serialize + DeserializeOwned;

    /// State shared by the LPs of one partition: scratch space and accumulators (for
    /// example statistics that merge by addition), so that every LP need not carry its
    /// own. Each partition has one, created with `Default`; the LPs of a partition run one
    /// at a time, so they take turns with it. It must not carry information from one LP to
    /// another (which LPs share a partition depends on the partitioning, and results must
    /// not): use it for scratch that is cleared after use and for order-independent sums.
    type Local: Default + Send;

    /// Schedules the LP's initial events.
    fn start(&mut self, ctx: &mut Ctx<'_, Self::Msg>, local: &mut Self::Local);

    /// Handles one event at time `ctx.now()`.
    fn handle(&mut self, msg: Self::Msg, ctx: &mut Ctx<'_, Self::Msg>, local: &mut Self::Local);

    /// A hint that `msg` will be handled soon: the LP may ask the CPU to fetch the memory
    /// it will touch (see [`prefetch`]). The engine calls it a few events ahead of
    /// [`handle`](LogicalProcess::handle); it must not change anything. Default: nothing.
    #[inline]
    fn prefetch(&self, _msg: &Self::Msg) {}
}

/// Asks the CPU to bring the cache line holding `value` closer (a hint, no effect on
/// results; a no-op on CPUs without a prefetch instruction). For
/// [`LogicalProcess::prefetch`].
#[inline(always)]
pub fn prefetch<T>(value: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint: it never faults and has no effect on memory, whatever
    // the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(value as *const i8, std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Prefetches every cache line of `values` (see [`prefetch`]).
#[inline(always)]
pub fn prefetch_all<T>(values: &[T]) {
    prefetch_bytes(values.as_ptr() as *const u8, std::mem::size_of_val(values));
}

/// Prefetches every cache line of the `len` bytes from `start` (a hint: any address is
/// fine, nothing is read).
#[inline(always)]
pub fn prefetch_bytes(start: *const u8, len: usize) {
    let offset = start as usize & 63;
    let mut k = 0;
    while k < offset + len {
        prefetch(start.wrapping_sub(offset).wrapping_add(k));
        k += 64;
    }
}

/// Partitions of a partition map: its largest partition number plus one (0 for no LPs).
pub(crate) fn partition_count(partition_of: &[u32]) -> usize {
    partition_of.iter().map(|&p| p as usize + 1).max().unwrap_or(0)
}

/// Minimum latency of the links (of those given) whose ends lie in different partitions, or
/// `None` when none crosses. A distributed run reduces this over the ranks' links.
pub fn lookahead(links: &[LinkSpec], partition_of: &[u32]) -> Option<Time> {
    links
        .iter()
        .filter(|l| partition_of[l.src as usize] != partition_of[l.dst as usize])
        .map(|l| l.latency)
        .min()
}

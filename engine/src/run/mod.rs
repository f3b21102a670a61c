//! The window loop, run by one thread per partition, on one or several ranks.
//!
//! Every partition runs the same loop; with one partition on one rank it is the serial
//! simulator. Per window `k`:
//! 1. process local events with time `< window_end` (a panic in the model marks the
//!    partition failed; it stops simulating but keeps taking part in the protocol, so
//!    nobody waits for it forever);
//! 2. append boundary messages to the receiving partitions' mailboxes (double-buffered by
//!    `k % 2`), or to the outbox of the receiving rank, and `fetch_min` the earliest local
//!    event or sent message into slot `k % 3`;
//! 3. cross the barrier. With several ranks, the rank's coordinator thread now exchanges
//!    the rank outboxes (all-to-all), reduces the slot's minimum and the failure flag over
//!    all ranks, delivers what arrived to the local mailboxes, and the threads cross a
//!    second barrier;
//! 4. drain the own mailbox and read the minimum: the next window starts there, so idle
//!    time is skipped. Slot `(k + 2) % 3` is reset: every thread read it before this
//!    window's barrier and nobody writes it before the next one.
//!
//! Windows also stop at checkpoints (every `checkpoint_period` cycles and at the end),
//! where every partition reports; rank 0's coordinator sees all reports, decides whether
//! to go on, and the decision is broadcast.
//!
//! `window` holds the loop of steps 1, 2 and 4 that every partition thread runs;
//! `coordinator` the rank's exchange and reductions of step 3 and the checkpoint decision.

mod coordinator;
mod window;

use crate::barrier::SpinBarrier;
use crate::census::{Census, CensusCounts, CensusLayout, CensusPlan};
use crate::comm::{decode, encode, RankComm, SingleRank};
use crate::partition::{link_routes, Partition};
use crate::queue::Event;
use crate::{EngineError, LinkSpec, LogicalProcess, LpId, Time};
use coordinator::Coordinator;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use window::{guarded, window_loop};

/// How long to run and how often to stop for a checkpoint.
#[derive(Clone, Debug)]
pub struct RunConfig<'a> {
    /// The run ends when every event before this time has been processed.
    pub end_time: Time,
    /// Partitions synchronise and report every this many cycles (and at `end_time`).
    pub checkpoint_period: Time,
    /// A stop request (a signal handler sets it). Read once per window by each rank's
    /// coordinator thread, and the ranks agree on it in the window's reduction: once it is
    /// set on any rank, the run ends at the end of the current window with a checkpoint
    /// there (off the period; [`Control`] is not asked whether to go on). Without one
    /// the run stops only where the coordinator says so, at checkpoints.
    pub stop: Option<&'a AtomicBool>,
    /// Partitionings to count the run for (see [`CensusLayout`]): every event and every
    /// message between two of their partitions, window by window. Slower; on one rank
    /// only (a distributed run fails with [`EngineError::CensusOnRanks`]). The counts are
    /// in [`RunStats::census`].
    pub census: Option<&'a [CensusLayout]>,
}

/// What the coordinator sees at a checkpoint.
#[derive(Debug)]
pub struct Checkpoint<R> {
    /// Every event before this time has been processed, none at or after it.
    pub time: Time,
    /// One report per partition, in partition order (all ranks).
    pub reports: Vec<R>,
    /// True at the last checkpoint of the run (`time == end_time`).
    pub last: bool,
}

/// The coordinator's answer at a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Keep running.
    Continue,
    /// Stop now; the outcome keeps the state reached so far.
    Stop,
}

/// Where the partitions live: the partition of every LP and the rank of every partition.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    /// Partition of every LP of the model (the same on every rank).
    pub partition_of: &'a [u32],
    /// Rank hosting every partition.
    pub partition_rank: &'a [u32],
}

/// Engine counters of a run, for this rank's partitions.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunStats {
    /// Lookahead used (`None`: no link crosses partitions).
    pub lookahead: Option<Time>,
    /// Windows executed.
    pub windows: u64,
    /// Global ids of this rank's partitions; the vectors below follow this order.
    pub partitions: Vec<u32>,
    /// Events processed, per partition.
    pub events: Vec<u64>,
    /// Seconds spent processing events, per partition.
    pub compute_seconds: Vec<f64>,
    /// Seconds spent at barriers and exchanging messages, per partition.
    pub sync_seconds: Vec<f64>,
    /// Messages sent to other partitions, per partition.
    pub boundary_messages: Vec<u64>,
    /// Events still pending at the end, per partition.
    pub pending_at_end: Vec<u64>,
    /// This rank's coordinator: seconds in inter-rank exchange and reductions.
    pub exchange_seconds: f64,
    /// Messages this rank sent to other ranks.
    pub rank_messages_sent: u64,
    /// Bytes this rank sent to other ranks.
    pub rank_bytes_sent: u64,
    /// The census's counts, one per layout of [`RunConfig::census`] (empty without one).
    pub census: Vec<CensusCounts>,
}

/// The result of a run: this rank's LPs in their final state, with the time reached.
pub struct RunOutcome<L: LogicalProcess> {
    /// This rank's logical processes with their global ids, in id order.
    pub lps: Vec<(LpId, L)>,
    /// The per-partition model state ([`LogicalProcess::Local`]) of this rank's
    /// partitions, in the order of [`RunStats::partitions`].
    pub locals: Vec<L::Local>,
    /// Time reached: `end_time`, or the checkpoint where the coordinator stopped the run.
    pub time: Time,
    /// True when the coordinator stopped the run before `end_time`.
    pub stopped_early: bool,
    /// Engine counters.
    pub stats: RunStats,
}

const CONTINUE: u8 = 0;
const STOP: u8 = 1;
const FAILED: u8 = 2;

/// Events for one partition on another rank: `(receiving partition, events)`.
type Batch<M> = (u32, Vec<Event<M>>);

struct Shared<M, R> {
    barrier: SpinBarrier,
    multi_rank: bool,
    /// Ranks this rank's links lead to, and ranks whose links lead here.
    receivers: Vec<usize>,
    senders: Vec<usize>,
    /// Local index of every global partition (`u32::MAX`: on another rank).
    local_index: Vec<u32>,
    partition_rank: Vec<u32>,
    mail: Vec<[Mutex<Vec<Event<M>>>; 2]>,
    /// Messages for other ranks, per rank: `(receiving partition, events)`.
    remote: Vec<Mutex<Vec<Batch<M>>>>,
    next: [AtomicU64; 3],
    /// The window (`k`) after which every partition stops, once a stop was asked for
    /// (`u64::MAX`: none). Written by the coordinator before the barrier that ends window
    /// `k`, so a thread that reads it after an earlier barrier sees a later window.
    halt: AtomicU64,
    reports: Vec<Mutex<Option<R>>>,
    verdict: AtomicU8,
    failed: AtomicBool,
    failure: Mutex<Option<(u32, String)>>,
}

impl<M, R> Shared<M, R> {
    fn fail(&self, partition: u32, message: String) {
        let mut f = self.failure.lock().expect("failure slot");
        if f.as_ref().is_none_or(|(p, _)| partition < *p) {
            *f = Some((partition, message));
        }
        self.failed.store(true, Ordering::Release);
    }
}

struct PartitionResult<L: LogicalProcess> {
    lps: Vec<L>,
    local: L::Local,
    global_ids: Vec<u32>,
    partition: u32,
    events: u64,
    compute: f64,
    sync: f64,
    boundary: u64,
    windows: u64,
    pending: u64,
    time: Time,
    stopped: bool,
    census: Option<Census>,
}

/// Runs `lps` split by `partition_of` (one partition per distinct value, numbered from 0),
/// each partition on its own thread of this process. `observe` builds a partition's
/// report at every checkpoint; `on_checkpoint` receives all reports, on the calling
/// thread, and decides whether to go on. Returns the LPs in global id order.
pub fn run_partitions<L, R, O, C>(
    lps: Vec<L>,
    links: &[LinkSpec],
    partition_of: &[u32],
    cfg: &RunConfig,
    observe: O,
    on_checkpoint: C,
) -> Result<RunOutcome<L>, EngineError>
where
    L: LogicalProcess,
    R: Send + Serialize + DeserializeOwned,
    O: Fn(&mut [L], &mut L::Local, Time) -> R + Sync,
    C: FnMut(Checkpoint<R>) -> Control,
{
    if partition_of.len() != lps.len() {
        return Err(EngineError::PartitionMapLength { got: partition_of.len(), num_lps: lps.len() });
    }
    let partitions = crate::partition_count(partition_of).max(1);
    let ranks = vec![0; partitions];
    let layout = Layout { partition_of, partition_rank: &ranks };
    let lps = lps.into_iter().enumerate().map(|(i, l)| (i as LpId, l)).collect();
    run_distributed(lps, links, &layout, &mut SingleRank, cfg, observe, on_checkpoint)
}

/// Runs this rank's share of a distributed model. `lps` are exactly the LPs of the
/// partitions that `layout` puts on `comm.rank()`, with their global ids; `links` are the
/// links that leave those LPs (a rank holds nothing of the rest of the model but the
/// partition map), and an LP sends over link `i` of this list with
/// [`Ctx::send`](crate::Ctx::send)`(i, ..)`. Every rank calls this with the same `layout`
/// and `cfg`. Partitions exchange messages only with the ranks their links reach, and
/// agree on the next window in one reduction. `on_checkpoint` is called on rank 0 only,
/// with the reports of all partitions of all ranks.
#[allow(clippy::too_many_arguments)]
pub fn run_distributed<L, R, O, C>(
    lps: Vec<(LpId, L)>,
    links: &[LinkSpec],
    layout: &Layout<'_>,
    comm: &mut dyn RankComm,
    cfg: &RunConfig,
    observe: O,
    on_checkpoint: C,
) -> Result<RunOutcome<L>, EngineError>
where
    L: LogicalProcess,
    R: Send + Serialize + DeserializeOwned,
    O: Fn(&mut [L], &mut L::Local, Time) -> R + Sync,
    C: FnMut(Checkpoint<R>) -> Control,
{
    let me = comm.rank();
    // A rank that cannot set up still takes part in the first reduction, so that the
    // others learn of it instead of waiting for it.
    let (mine, early) = match LocalPartitions::of(layout, me) {
        Ok(mine) => (Some(mine), None),
        Err(e) => (None, Some(e)),
    };
    let Wiring { routes, lookahead, shortest, receivers, senders } =
        agree_on_links(links, layout, me, comm, early)?;
    let mine = mine.ok_or(EngineError::NoLocalPartition { rank: me })?;
    // Windows are never longer than the lookahead (so that messages between partitions
    // arrive in a later window) nor, where no link is cut, than the shortest link (a span:
    // at most 64 cycles), so that a stop request is seen within one window.
    let window = lookahead.unwrap_or(shortest.clamp(1, crate::partition::MAX_SPAN));
    let mut parts = mine.partitions(lps, links, layout)?;
    if let Some(layouts) = cfg.census {
        if comm.size() > 1 {
            return Err(EngineError::CensusOnRanks { ranks: comm.size() });
        }
        if let Some(bad) = layouts.iter().position(|l| l.partition_of.len() != layout.partition_of.len()) {
            let got = layouts[bad].partition_of.len();
            return Err(EngineError::PartitionMapLength { got, num_lps: layout.partition_of.len() });
        }
        let plan = CensusPlan::new(layouts, layout.partition_of);
        for part in &mut parts {
            part.census = Some(Census::new(plan.clone()));
        }
    }
    let LocalPartitions { local, local_index, .. } = mine;

    let ranks = comm.size();
    let shared: Shared<L::Msg, R> = Shared {
        barrier: SpinBarrier::new(local.len()),
        multi_rank: ranks > 1,
        receivers,
        senders,
        local_index,
        partition_rank: layout.partition_rank.to_vec(),
        mail: (0..local.len()).map(|_| [Mutex::new(Vec::new()), Mutex::new(Vec::new())]).collect(),
        remote: (0..ranks).map(|_| Mutex::new(Vec::new())).collect(),
        next: [AtomicU64::new(Time::MAX), AtomicU64::new(Time::MAX), AtomicU64::new(Time::MAX)],
        halt: AtomicU64::new(u64::MAX),
        reports: (0..local.len()).map(|_| Mutex::new(None)).collect(),
        verdict: AtomicU8::new(CONTINUE),
        failed: AtomicBool::new(false),
        failure: Mutex::new(None),
    };

    let mut coordinator =
        Coordinator { comm, on_checkpoint, exchange_seconds: 0.0, messages_sent: 0, bytes_sent: 0 };
    let first = parts.remove(0);
    let results: Vec<Result<PartitionResult<L>, EngineError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                let (shared, routes, observe) = (&shared, &routes, &observe);
                let id = part.id;
                std::thread::Builder::new()
                    .name(format!("xnet-partition-{id}"))
                    .spawn_scoped(scope, move || {
                        guarded(id, shared, || {
                            window_loop::<L, R, O, C>(part, shared, routes, window, cfg, observe, None)
                        })
                    })
                    .expect("spawning a partition thread")
            })
            .collect();
        let first_id = first.id;
        let mut results = vec![guarded(first_id, &shared, || {
            window_loop(first, &shared, &routes, window, cfg, &observe, Some(&mut coordinator))
        })];
        for (i, h) in handles.into_iter().enumerate() {
            results.push(h.join().unwrap_or_else(|_| {
                Err(EngineError::WorkerPanic { partition: local[i + 1], message: "thread died".into() })
            }));
        }
        results
    });

    let mut ok = Vec::with_capacity(results.len());
    for r in results {
        ok.push(r?);
    }
    let censuses: Vec<Census> = ok.iter_mut().filter_map(|r| r.census.take()).collect();
    if shared.verdict.load(Ordering::Acquire) == FAILED {
        return Err(first_failure(&shared, coordinator.comm, me));
    }
    let mut outcome = outcome(ok, lookahead, &coordinator);
    outcome.stats.census = crate::census::merge(censuses, links);
    Ok(outcome)
}

/// This rank's partitions: how many LPs each partition of the layout has, which of them run
/// here (in global order), and each partition's index among them (`u32::MAX`: another
/// rank's).
struct LocalPartitions {
    me: usize,
    sizes: Vec<usize>,
    local: Vec<u32>,
    local_index: Vec<u32>,
}

impl LocalPartitions {
    /// Checks `layout` (every partition exists and has an LP, this rank has one) and finds
    /// rank `me`'s partitions.
    fn of(layout: &Layout<'_>, me: usize) -> Result<Self, EngineError> {
        let partitions = layout.partition_rank.len();
        if let Some(p) = layout.partition_of.iter().find(|&&p| p as usize >= partitions) {
            return Err(EngineError::PartitionMapLength { got: *p as usize + 1, num_lps: partitions });
        }
        let mut sizes = vec![0usize; partitions];
        for &p in layout.partition_of {
            sizes[p as usize] += 1;
        }
        if let Some(p) = sizes.iter().position(|&n| n == 0) {
            return Err(EngineError::EmptyPartition(p as u32));
        }
        let local: Vec<u32> =
            (0..partitions as u32).filter(|&p| layout.partition_rank[p as usize] as usize == me).collect();
        if local.is_empty() {
            return Err(EngineError::NoLocalPartition { rank: me });
        }
        let mut local_index = vec![u32::MAX; partitions];
        for (i, &p) in local.iter().enumerate() {
            local_index[p as usize] = i as u32;
        }
        Ok(LocalPartitions { me, sizes, local, local_index })
    }

    /// Distributes this rank's `lps` over its partitions (each must get exactly its LPs),
    /// each partition running a span at a time, the span being its shortest outgoing link.
    fn partitions<L: LogicalProcess>(
        &self,
        lps: Vec<(LpId, L)>,
        links: &[LinkSpec],
        layout: &Layout<'_>,
    ) -> Result<Vec<Partition<L>>, EngineError> {
        let partition_of = layout.partition_of;
        let me = self.me;
        let mut members: Vec<Vec<(LpId, L)>> = (0..self.local.len()).map(|_| Vec::new()).collect();
        for (id, lp) in lps {
            let p = *partition_of.get(id as usize).ok_or(EngineError::UnknownLp {
                link: u32::MAX,
                lp: id,
                num_lps: partition_of.len(),
            })?;
            let li = self.local_index[p as usize];
            if li == u32::MAX {
                return Err(EngineError::ForeignLp { lp: id, partition: p, rank: me });
            }
            members[li as usize].push((id, lp));
        }
        let mut spans = vec![Time::MAX; self.local.len()];
        for l in links {
            let li = self.local_index[partition_of[l.src as usize] as usize] as usize;
            spans[li] = spans[li].min(l.latency);
        }
        let partitions = layout.partition_rank.len();
        let mut parts: Vec<Partition<L>> = Vec::with_capacity(self.local.len());
        for (li, mut m) in members.into_iter().enumerate() {
            let p = self.local[li];
            m.sort_by_key(|(id, _)| *id);
            if m.len() != self.sizes[p as usize] {
                return Err(EngineError::MissingLps {
                    partition: p,
                    got: m.len(),
                    expected: self.sizes[p as usize],
                });
            }
            let (ids, lps): (Vec<u32>, Vec<L>) = m.into_iter().unzip();
            parts.push(Partition::new(p, lps, ids, partitions, spans[li]));
        }
        Ok(parts)
    }
}

/// What the ranks agreed on about this rank's outgoing links.
struct Wiring {
    /// Where each link delivers.
    routes: Vec<crate::LinkRoute>,
    /// The smallest latency of any link that crosses partitions, on any rank (`None`:
    /// nothing is cut).
    lookahead: Option<Time>,
    /// The smallest latency of any link, on any rank (`Time::MAX`: no links).
    shortest: Time,
    /// The ranks this rank's links reach.
    receivers: Vec<usize>,
    /// The ranks whose links reach this one.
    senders: Vec<usize>,
}

/// Checks this rank's `links` (each leaves one of its LPs) and agrees with the other ranks,
/// in one reduction, on the lookahead, on whether every rank could set up (`early`: this
/// rank's error so far) and on the layout (a hash of it, whose minimum and maximum over the
/// ranks must be equal); then on who sends to whom.
fn agree_on_links(
    links: &[LinkSpec],
    layout: &Layout<'_>,
    me: usize,
    comm: &mut dyn RankComm,
    early: Option<EngineError>,
) -> Result<Wiring, EngineError> {
    let partition_of = layout.partition_of;
    let (routes, mut setup_error) = match link_routes(links, partition_of) {
        Ok(routes) => (routes, early),
        Err(e) => (Vec::new(), Some(early.unwrap_or(e))),
    };
    let mut cut_min = Time::MAX;
    let shortest = links.iter().map(|l| l.latency).min().unwrap_or(Time::MAX);
    let mut receivers = std::collections::BTreeSet::new();
    let checked = if setup_error.is_none() { links } else { &[] };
    for (i, l) in checked.iter().enumerate() {
        let (sp, dp) = (partition_of[l.src as usize], partition_of[l.dst as usize]);
        if layout.partition_rank[sp as usize] as usize != me {
            setup_error.get_or_insert(EngineError::ForeignLink { link: i as u32, src: l.src, rank: me });
            continue;
        }
        if sp != dp {
            cut_min = cut_min.min(l.latency);
        }
        let dst_rank = layout.partition_rank[dp as usize] as usize;
        if dst_rank != me {
            receivers.insert(dst_rank);
        }
    }
    let h = layout_hash(layout);
    let mut agreed = [cut_min, u64::MAX - u64::from(setup_error.is_some()), shortest, h, u64::MAX - h];
    comm.min_all(&mut agreed);
    if let Some(e) = setup_error {
        return Err(e);
    }
    if agreed[3] != h || u64::MAX - agreed[4] != h {
        return Err(EngineError::LayoutMismatch);
    }
    if agreed[1] != u64::MAX {
        return Err(EngineError::PartitionFailed {
            rank: usize::MAX,
            partition: u32::MAX,
            message: "another rank could not set up its share of the model".into(),
        });
    }
    let receivers: Vec<usize> = receivers.into_iter().collect();
    let senders = comm.senders(&receivers);
    Ok(Wiring {
        routes,
        lookahead: (agreed[0] != Time::MAX).then_some(agreed[0]),
        shortest: agreed[2],
        receivers,
        senders,
    })
}

/// FNV-1a over the layout's partition map and partition ranks.
fn layout_hash(layout: &Layout<'_>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let lengths = [layout.partition_of.len() as u32, layout.partition_rank.len() as u32];
    for &v in lengths.iter().chain(layout.partition_of).chain(layout.partition_rank) {
        for b in v.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The error of a run in which a partition failed: rank 0 learns from every rank which
/// partition failed first.
fn first_failure<M, R>(shared: &Shared<M, R>, comm: &mut dyn RankComm, me: usize) -> EngineError {
    let mine = shared.failure.lock().expect("failure slot").take();
    let all = comm.gather(encode(&(me, mine)));
    let failures: Vec<(usize, Option<(u32, String)>)> =
        all.unwrap_or_default().iter().filter_map(|b| decode(b).ok()).collect();
    match failures.into_iter().find_map(|(rank, f)| f.map(|f| (rank, f))) {
        Some((rank, (partition, message))) => EngineError::PartitionFailed { rank, partition, message },
        None => EngineError::PartitionFailed {
            rank: usize::MAX,
            partition: u32::MAX,
            message: "another rank failed (rank 0 reports which)".into(),
        },
    }
}

/// The rank's outcome from its partitions' results (in local order): the LPs by global id,
/// the partitions' model state and the engine's figures.
fn outcome<L: LogicalProcess, C>(
    mut ok: Vec<PartitionResult<L>>,
    look: Option<Time>,
    coordinator: &Coordinator<'_, C>,
) -> RunOutcome<L> {
    let mut stats = RunStats {
        lookahead: look,
        windows: ok[0].windows,
        exchange_seconds: coordinator.exchange_seconds,
        rank_messages_sent: coordinator.messages_sent,
        rank_bytes_sent: coordinator.bytes_sent,
        ..Default::default()
    };
    let time = ok[0].time;
    let stopped_early = ok[0].stopped;
    let mut out_lps = Vec::new();
    let mut locals = Vec::with_capacity(ok.len());
    for r in ok.iter_mut() {
        locals.push(std::mem::take(&mut r.local));
        stats.partitions.push(r.partition);
        stats.events.push(r.events);
        stats.compute_seconds.push(r.compute);
        stats.sync_seconds.push(r.sync);
        stats.boundary_messages.push(r.boundary);
        stats.pending_at_end.push(r.pending);
        out_lps.extend(r.global_ids.iter().copied().zip(std::mem::take(&mut r.lps)));
    }
    out_lps.sort_by_key(|(id, _)| *id);
    RunOutcome { lps: out_lps, locals, time, stopped_early, stats }
}

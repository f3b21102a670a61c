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

use crate::barrier::SpinBarrier;
use crate::comm::{decode, encode, RankComm, SingleRank};
use crate::partition::{link_routes, LinkRoute, Partition};
use crate::queue::Event;
use crate::{EngineError, LinkSpec, LogicalProcess, LpId, Time};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// How long to run and how often to stop for a checkpoint.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The run ends when every event before this time has been processed.
    pub end_time: Time,
    /// Partitions synchronise and report every this many cycles (and at `end_time`).
    pub checkpoint_period: Time,
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
}

/// What the coordinator thread owns besides its partition.
struct Coordinator<'c, C> {
    comm: &'c mut dyn RankComm,
    on_checkpoint: C,
    exchange_seconds: f64,
    messages_sent: u64,
    bytes_sent: u64,
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
    let partitions = partition_of.iter().map(|&p| p as usize + 1).max().unwrap_or(1);
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
    let partition_of = layout.partition_of;
    let num_lps = partition_of.len();
    let partitions = layout.partition_rank.len();
    let me = comm.rank();
    if let Some(p) = partition_of.iter().find(|&&p| p as usize >= partitions) {
        return Err(EngineError::PartitionMapLength { got: *p as usize + 1, num_lps: partitions });
    }
    // Local partitions in global order; every partition needs an LP.
    let mut sizes = vec![0usize; partitions];
    for &p in partition_of {
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
    // This rank's outgoing links: where each delivers, the smallest latency of those that
    // cross partitions, and the ranks they reach.
    let (routes, mut setup_error) = match link_routes(links, partition_of) {
        Ok(routes) => (routes, None),
        Err(e) => (Vec::new(), Some(e)),
    };
    let mut cut_min = Time::MAX;
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
    // The ranks agree on the lookahead (the smallest latency of any cut link) and on
    // whether every rank could set up, in one reduction; then on who sends to whom.
    let mut agreed = [cut_min, u64::MAX - u64::from(setup_error.is_some())];
    comm.min_all(&mut agreed);
    if let Some(e) = setup_error {
        return Err(e);
    }
    if agreed[1] != u64::MAX {
        return Err(EngineError::PartitionFailed {
            rank: usize::MAX,
            partition: u32::MAX,
            message: "another rank could not set up its share of the model".into(),
        });
    }
    let look = (agreed[0] != Time::MAX).then_some(agreed[0]);
    let receivers: Vec<usize> = receivers.into_iter().collect();
    let senders = comm.senders(&receivers);

    // Distribute the local LPs.
    let mut members: Vec<Vec<(LpId, L)>> = (0..local.len()).map(|_| Vec::new()).collect();
    for (id, lp) in lps {
        let p = *partition_of.get(id as usize).ok_or(EngineError::UnknownLp {
            link: u32::MAX,
            lp: id,
            num_lps,
        })?;
        let li = local_index[p as usize];
        if li == u32::MAX {
            return Err(EngineError::ForeignLp { lp: id, partition: p, rank: me });
        }
        members[li as usize].push((id, lp));
    }
    // A partition's LPs run a span at a time, the span being its shortest outgoing link.
    let mut spans = vec![Time::MAX; local.len()];
    for l in links {
        let li = local_index[partition_of[l.src as usize] as usize] as usize;
        spans[li] = spans[li].min(l.latency);
    }
    let mut parts: Vec<Partition<L>> = Vec::with_capacity(local.len());
    for (li, mut m) in members.into_iter().enumerate() {
        let p = local[li];
        m.sort_by_key(|(id, _)| *id);
        if m.len() != sizes[p as usize] {
            return Err(EngineError::MissingLps { partition: p, got: m.len(), expected: sizes[p as usize] });
        }
        let (ids, lps): (Vec<u32>, Vec<L>) = m.into_iter().unzip();
        parts.push(Partition::new(p, lps, ids, partitions, spans[li]));
    }

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
                            window_loop::<L, R, O, C>(part, shared, routes, look, cfg, observe, None)
                        })
                    })
                    .expect("spawning a partition thread")
            })
            .collect();
        let first_id = first.id;
        let mut results = vec![guarded(first_id, &shared, || {
            window_loop(first, &shared, &routes, look, cfg, &observe, Some(&mut coordinator))
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
    if shared.verdict.load(Ordering::Acquire) == FAILED {
        // Rank 0 learns which partition failed first, from every rank.
        let mine = shared.failure.lock().expect("failure slot").take();
        let all = coordinator.comm.gather(encode(&(me, mine)));
        let failures: Vec<(usize, Option<(u32, String)>)> =
            all.unwrap_or_default().iter().filter_map(|b| decode(b).ok()).collect();
        return Err(match failures.into_iter().find_map(|(rank, f)| f.map(|f| (rank, f))) {
            Some((rank, (partition, message))) => EngineError::PartitionFailed { rank, partition, message },
            None => EngineError::PartitionFailed {
                rank: usize::MAX,
                partition: u32::MAX,
                message: "another rank failed (rank 0 reports which)".into(),
            },
        });
    }

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
    Ok(RunOutcome { lps: out_lps, locals, time, stopped_early, stats })
}

/// Runs a partition's loop; a panic outside the model's code (an engine bug) becomes an
/// error and releases the other partitions from the barrier.
fn guarded<M, R, T>(
    partition: u32,
    shared: &Shared<M, R>,
    f: impl FnOnce() -> Option<T>,
) -> Result<T, EngineError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => {
            Err(EngineError::WorkerPanic { partition, message: "stopped by a failed partition".into() })
        }
        Err(payload) => {
            shared.barrier.abort();
            Err(EngineError::WorkerPanic { partition, message: panic_message(&payload) })
        }
    }
}

fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

#[allow(clippy::too_many_arguments)]
fn window_loop<L, R, O, C>(
    mut part: Partition<L>,
    shared: &Shared<L::Msg, R>,
    routes: &[LinkRoute],
    look: Option<Time>,
    cfg: &RunConfig,
    observe: &O,
    mut coordinator: Option<&mut Coordinator<'_, C>>,
) -> Option<PartitionResult<L>>
where
    L: LogicalProcess,
    R: Send + Serialize + DeserializeOwned,
    O: Fn(&mut [L], &mut L::Local, Time) -> R + Sync,
    C: FnMut(Checkpoint<R>) -> Control,
{
    let me = shared.local_index[part.id as usize] as usize;
    let mut sense = false;
    let period = cfg.checkpoint_period.max(1);
    let end = cfg.end_time;
    let (mut compute, mut sync, mut boundary, mut windows) = (0.0, 0.0, 0u64, 0u64);
    let mut alive = true;

    if let Err(p) = catch_unwind(AssertUnwindSafe(|| part.start(routes))) {
        shared.fail(part.id, panic_message(&p));
        alive = false;
    }
    // Window -1 agrees on the first event time in slot 2 (= -1 mod 3).
    shared.next[2].fetch_min(part.next_time(), Ordering::AcqRel);
    part.sent_min = Time::MAX;
    route_outboxes(&mut part, shared, 1);
    if !shared.barrier.wait(&mut sense) {
        return None;
    }
    if !synchronise(shared, &mut coordinator, 2, 1, &mut sense)? {
        return None;
    }
    // Messages sent by `start` arrive no earlier than the first window's end.
    for ev in std::mem::take(&mut *shared.mail[me][1].lock().expect("mailbox")) {
        part.queue.push(ev);
    }
    let mut start = shared.next[2].load(Ordering::Acquire);
    let mut next_checkpoint = period.min(end);
    let mut k: usize = 0;
    let mut stopped = false;
    loop {
        if shared.verdict.load(Ordering::Acquire) == FAILED {
            break;
        }
        let window_start = start.min(next_checkpoint);
        let window_end = match look {
            Some(w) => window_start.saturating_add(w).min(next_checkpoint),
            None => next_checkpoint,
        };
        let t0 = Instant::now();
        if alive {
            if let Err(p) = catch_unwind(AssertUnwindSafe(|| part.run_window(window_end, routes))) {
                shared.fail(part.id, panic_message(&p));
                alive = false;
            }
        }
        let t1 = Instant::now();
        compute += (t1 - t0).as_secs_f64();

        boundary += route_outboxes(&mut part, shared, k % 2);
        shared.next[k % 3].fetch_min(part.next_time(), Ordering::AcqRel);
        part.sent_min = Time::MAX;
        if !shared.barrier.wait(&mut sense) {
            return None;
        }
        if coordinator.is_some() {
            shared.next[(k + 2) % 3].store(Time::MAX, Ordering::Release);
        }
        if !synchronise(shared, &mut coordinator, k % 3, k % 2, &mut sense)? {
            return None;
        }
        let incoming = std::mem::take(&mut *shared.mail[me][k % 2].lock().expect("mailbox"));
        for ev in incoming {
            part.queue.push(ev);
        }
        start = shared.next[k % 3].load(Ordering::Acquire);
        windows += 1;
        k += 1;
        if shared.verdict.load(Ordering::Acquire) == FAILED {
            break;
        }

        if window_end == next_checkpoint {
            let report = if alive {
                match catch_unwind(AssertUnwindSafe(|| observe(&mut part.lps, &mut part.local, window_end))) {
                    Ok(r) => Some(r),
                    Err(p) => {
                        shared.fail(part.id, panic_message(&p));
                        alive = false;
                        None
                    }
                }
            } else {
                None
            };
            *shared.reports[me].lock().expect("report slot") = report;
            if !shared.barrier.wait(&mut sense) {
                return None;
            }
            let last = window_end >= end;
            if let Some(c) = coordinator.as_deref_mut() {
                let verdict = checkpoint(shared, c, window_end, last);
                shared.verdict.store(verdict, Ordering::Release);
            }
            if !shared.barrier.wait(&mut sense) {
                return None;
            }
            let verdict = shared.verdict.load(Ordering::Acquire);
            if last || verdict != CONTINUE {
                stopped = !last && verdict == STOP;
                break;
            }
            next_checkpoint = (window_end / period + 1).saturating_mul(period).min(end);
        }
        sync += t1.elapsed().as_secs_f64();
    }
    Some(PartitionResult {
        pending: part.pending() as u64,
        events: part.events_processed,
        partition: part.id,
        global_ids: std::mem::take(&mut part.global_ids),
        lps: std::mem::take(&mut part.lps),
        local: std::mem::take(&mut part.local),
        compute,
        sync,
        boundary,
        windows,
        time: next_checkpoint,
        stopped,
    })
}

/// Hands a partition's outgoing boundary messages to local mailboxes (buffer `parity`) or
/// to the outbox of their rank. Returns how many were sent.
fn route_outboxes<L: LogicalProcess, R>(
    part: &mut Partition<L>,
    shared: &Shared<L::Msg, R>,
    parity: usize,
) -> u64 {
    let mut sent = 0;
    for (q, out) in part.outboxes.iter_mut().enumerate() {
        if out.is_empty() {
            continue;
        }
        sent += out.len() as u64;
        let li = shared.local_index[q];
        if li != u32::MAX {
            shared.mail[li as usize][parity].lock().expect("mailbox").append(out);
        } else {
            let rank = shared.partition_rank[q] as usize;
            shared.remote[rank].lock().expect("rank outbox").push((q as u32, std::mem::take(out)));
        }
    }
    sent
}

/// After a window's barrier: with several ranks, the coordinator exchanges the rank
/// outboxes and reduces the next-time slot and the failure flag over all ranks, then the
/// threads cross a second barrier. With one rank the failure flag is read directly. Returns
/// `Some(false)` if the barrier was aborted.
fn synchronise<M, R, C>(
    shared: &Shared<M, R>,
    coordinator: &mut Option<&mut Coordinator<'_, C>>,
    slot: usize,
    parity: usize,
    sense: &mut bool,
) -> Option<bool>
where
    M: Serialize + DeserializeOwned,
{
    if !shared.multi_rank {
        if shared.failed.load(Ordering::Acquire) {
            shared.verdict.store(FAILED, Ordering::Release);
        }
        return Some(true);
    }
    if let Some(c) = coordinator.as_deref_mut() {
        let t0 = Instant::now();
        let mut send = Vec::with_capacity(shared.receivers.len());
        for &rank in &shared.receivers {
            let batches = std::mem::take(&mut *shared.remote[rank].lock().expect("rank outbox"));
            let bytes = if batches.is_empty() {
                Vec::new()
            } else {
                c.messages_sent += batches.iter().map(|(_, e)| e.len() as u64).sum::<u64>();
                encode(&batches)
            };
            c.bytes_sent += bytes.len() as u64;
            send.push((rank, bytes));
        }
        // One reduction: the next window's start, and whether any partition failed.
        let failed = u64::from(shared.failed.load(Ordering::Acquire));
        let mut min = [shared.next[slot].load(Ordering::Acquire), u64::MAX - failed];
        let received = c.comm.exchange(send, &shared.senders, &mut min);
        for bytes in received.iter().filter(|b| !b.is_empty()) {
            match decode::<Vec<Batch<M>>>(bytes) {
                Ok(batches) => {
                    for (q, mut events) in batches {
                        let li = shared.local_index[q as usize] as usize;
                        shared.mail[li][parity].lock().expect("mailbox").append(&mut events);
                    }
                }
                Err(e) => shared.fail(u32::MAX, e),
            }
        }
        let (min, failed) = (min[0], u64::MAX - min[1]);
        shared.next[slot].store(min, Ordering::Release);
        if failed != 0 {
            shared.verdict.store(FAILED, Ordering::Release);
        }
        c.exchange_seconds += t0.elapsed().as_secs_f64();
    }
    Some(shared.barrier.wait(sense))
}

/// The coordinator's work at a checkpoint: gather every partition's report at rank 0,
/// let `on_checkpoint` decide, and share the decision.
fn checkpoint<M, R, C>(shared: &Shared<M, R>, c: &mut Coordinator<'_, C>, time: Time, last: bool) -> u8
where
    R: Serialize + DeserializeOwned,
    C: FnMut(Checkpoint<R>) -> Control,
{
    let local: Vec<Option<R>> =
        shared.reports.iter().map(|r| r.lock().expect("report slot").take()).collect();
    let mut verdict = CONTINUE;
    let reports: Option<Vec<R>> = if shared.multi_rank {
        // Reports travel as one blob per rank, in rank order; partitions are numbered so
        // that rank order is partition order within each rank; sort to be safe.
        let mine: Vec<(u32, Option<R>)> = shared
            .local_index
            .iter()
            .enumerate()
            .filter(|(_, &li)| li != u32::MAX)
            .map(|(p, _)| p as u32)
            .zip(local)
            .collect();
        match c.comm.gather(encode(&mine)) {
            Some(blobs) => {
                let mut all: Vec<(u32, Option<R>)> = Vec::new();
                for b in &blobs {
                    match decode::<Vec<(u32, Option<R>)>>(b) {
                        Ok(v) => all.extend(v),
                        Err(e) => {
                            shared.fail(u32::MAX, e);
                            verdict = FAILED;
                        }
                    }
                }
                all.sort_by_key(|(p, _)| *p);
                all.into_iter().map(|(_, r)| r).collect()
            }
            None => None,
        }
    } else {
        local.into_iter().collect()
    };
    if c.comm.rank() == 0 {
        verdict = match reports {
            Some(reports) if verdict == CONTINUE => {
                match (c.on_checkpoint)(Checkpoint { time, reports, last }) {
                    Control::Continue => CONTINUE,
                    Control::Stop => STOP,
                }
            }
            _ => FAILED,
        };
    }
    if shared.multi_rank {
        let shared_verdict = c.comm.broadcast(vec![verdict]);
        verdict = shared_verdict.first().copied().unwrap_or(FAILED);
    }
    verdict
}

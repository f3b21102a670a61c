//! The window loop, run by one thread per partition.
//!
//! Every partition runs the same loop; with one partition it is the serial simulator.
//! Per window `k`:
//! 1. process local events with time `< window_end`;
//! 2. append boundary messages to the receivers' mailboxes (double-buffered by `k % 2`)
//!    and `fetch_min` the earliest local event or sent message into slot `k % 3`;
//! 3. cross the barrier; drain the own mailbox; read the global minimum, which is the
//!    next window start (idle time is skipped). Slot `(k + 2) % 3` is reset for window
//!    `k + 2`: every thread finished reading it before this barrier and nobody writes it
//!    before the next one, so one barrier per window suffices.
//!
//! Windows also stop at checkpoints (every `checkpoint_period` cycles and at the end),
//! where each partition reports to the coordinator (partition 0, the calling thread),
//! which may stop the run.

use crate::barrier::SpinBarrier;
use crate::partition::{LinkRoute, Partition};
use crate::queue::Event;
use crate::{lookahead, EngineError, LinkSpec, LogicalProcess, Time};
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
    /// One report per partition, in partition order.
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

/// Engine-level counters of a run, per partition.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Lookahead used (`None`: no link crosses partitions).
    pub lookahead: Option<Time>,
    /// Windows executed.
    pub windows: u64,
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
}

/// The result of a run: the LPs in global order, with the time reached.
pub struct RunOutcome<L> {
    /// The logical processes, in global id order, in their final state.
    pub lps: Vec<L>,
    /// Time reached: `end_time`, or the checkpoint where the coordinator stopped the run.
    pub time: Time,
    /// True when the coordinator stopped the run before `end_time`.
    pub stopped_early: bool,
    /// Engine counters.
    pub stats: RunStats,
}

struct Shared<M, R> {
    barrier: SpinBarrier,
    mail: Vec<[Mutex<Vec<Event<M>>>; 2]>,
    next: [AtomicU64; 3],
    reports: Vec<Mutex<Option<R>>>,
    stop: AtomicU8,
    failed: AtomicBool,
}

struct PartitionResult<L> {
    lps: Vec<L>,
    global_ids: Vec<u32>,
    events: u64,
    compute: f64,
    sync: f64,
    boundary: u64,
    windows: u64,
    pending: u64,
    time: Time,
    stopped: bool,
}

/// Runs `lps` split by `partition_of` (one partition per distinct value, numbered from
/// 0), each partition on its own thread. `observe` builds a partition's report at every
/// checkpoint; `on_checkpoint` receives all reports, on the calling thread, and decides
/// whether to go on.
pub fn run_partitions<L, R, O, C>(
    lps: Vec<L>,
    links: &[LinkSpec],
    partition_of: &[u32],
    cfg: &RunConfig,
    observe: O,
    mut on_checkpoint: C,
) -> Result<RunOutcome<L>, EngineError>
where
    L: LogicalProcess,
    R: Send,
    O: Fn(&mut [L], crate::Time) -> R + Sync,
    C: FnMut(Checkpoint<R>) -> Control,
{
    let num_lps = lps.len();
    if partition_of.len() != num_lps {
        return Err(EngineError::PartitionMapLength { got: partition_of.len(), num_lps });
    }
    let partitions = partition_of.iter().map(|&p| p as usize + 1).max().unwrap_or(1);
    let mut local_index = vec![0u32; num_lps];
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); partitions];
    for (lp, &p) in partition_of.iter().enumerate() {
        local_index[lp] = members[p as usize].len() as u32;
        members[p as usize].push(lp as u32);
    }
    if let Some(p) = members.iter().position(Vec::is_empty) {
        return Err(EngineError::EmptyPartition(p as u32));
    }
    let mut routes = Vec::with_capacity(links.len());
    for (i, l) in links.iter().enumerate() {
        for lp in [l.src, l.dst] {
            if lp as usize >= num_lps {
                return Err(EngineError::UnknownLp { link: i as u32, lp, num_lps });
            }
        }
        if l.latency == 0 {
            return Err(EngineError::ZeroLatency { link: i as u32, src: l.src, dst: l.dst });
        }
        routes.push(LinkRoute {
            dst_partition: partition_of[l.dst as usize],
            dst_local: local_index[l.dst as usize],
            latency: l.latency,
        });
    }
    let look = lookahead(links, partition_of);

    // Distribute the LPs.
    let mut slots: Vec<Option<L>> = lps.into_iter().map(Some).collect();
    let mut parts: Vec<Partition<L>> = members
        .iter()
        .enumerate()
        .map(|(p, ids)| {
            let own = ids.iter().map(|&g| slots[g as usize].take().expect("each LP once")).collect();
            Partition::new(p as u32, own, ids.clone(), partitions)
        })
        .collect();

    let shared: Shared<L::Msg, R> = Shared {
        barrier: SpinBarrier::new(partitions),
        mail: (0..partitions).map(|_| [Mutex::new(Vec::new()), Mutex::new(Vec::new())]).collect(),
        next: [AtomicU64::new(Time::MAX), AtomicU64::new(Time::MAX), AtomicU64::new(Time::MAX)],
        reports: (0..partitions).map(|_| Mutex::new(None)).collect(),
        stop: AtomicU8::new(0),
        failed: AtomicBool::new(false),
    };

    let first = parts.remove(0);
    let results: Vec<Result<PartitionResult<L>, EngineError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                let shared = &shared;
                let routes = &routes;
                let observe = &observe;
                std::thread::Builder::new()
                    .name(format!("xnet-partition-{}", part.id))
                    .spawn_scoped(scope, move || {
                        guarded(part.id, shared, || {
                            window_loop(part, shared, routes, look, cfg, observe, &mut |_| Control::Continue)
                        })
                    })
                    .expect("spawning a partition thread")
            })
            .collect();
        let mut results = vec![guarded(0, &shared, || {
            window_loop(first, &shared, &routes, look, cfg, &observe, &mut on_checkpoint)
        })];
        for (i, h) in handles.into_iter().enumerate() {
            results.push(h.join().unwrap_or_else(|_| {
                Err(EngineError::WorkerPanic { partition: i as u32 + 1, message: "thread died".into() })
            }));
        }
        results
    });

    // Report the partition that failed, not the ones its failure stopped.
    let aborted =
        |e: &EngineError| matches!(e, EngineError::WorkerPanic { message, .. } if message == ABORTED);
    let mut ok = Vec::with_capacity(results.len());
    let mut first_error: Option<EngineError> = None;
    for r in results {
        match r {
            Ok(r) => ok.push(r),
            Err(e) if first_error.as_ref().is_none_or(aborted) && !aborted(&e) => first_error = Some(e),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let mut results = ok;

    let mut stats = RunStats { lookahead: look, windows: results[0].windows, ..Default::default() };
    let time = results[0].time;
    let stopped_early = results[0].stopped;
    let mut slots: Vec<Option<L>> = (0..num_lps).map(|_| None).collect();
    for r in results.iter_mut() {
        stats.events.push(r.events);
        stats.compute_seconds.push(r.compute);
        stats.sync_seconds.push(r.sync);
        stats.boundary_messages.push(r.boundary);
        stats.pending_at_end.push(r.pending);
        for (lp, g) in std::mem::take(&mut r.lps).into_iter().zip(&r.global_ids) {
            slots[*g as usize] = Some(lp);
        }
    }
    let lps = slots.into_iter().map(|s| s.expect("every LP returned")).collect();
    Ok(RunOutcome { lps, time, stopped_early, stats })
}

const ABORTED: &str = "stopped because another partition failed";

/// Runs a partition's loop, turning a panic into an error and releasing the other
/// partitions from the barrier.
fn guarded<M, R, T>(
    partition: u32,
    shared: &Shared<M, R>,
    f: impl FnOnce() -> Option<T>,
) -> Result<T, EngineError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(Some(r)) => Ok(r),
        Ok(None) => Err(EngineError::WorkerPanic { partition, message: ABORTED.into() }),
        Err(payload) => {
            shared.failed.store(true, Ordering::Release);
            shared.barrier.abort();
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(EngineError::WorkerPanic { partition, message })
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn window_loop<L, R, O, C>(
    mut part: Partition<L>,
    shared: &Shared<L::Msg, R>,
    routes: &[LinkRoute],
    look: Option<Time>,
    cfg: &RunConfig,
    observe: &O,
    on_checkpoint: &mut C,
) -> Option<PartitionResult<L>>
where
    L: LogicalProcess,
    R: Send,
    O: Fn(&mut [L], Time) -> R + Sync,
    C: FnMut(Checkpoint<R>) -> Control,
{
    let me = part.id as usize;
    let mut sense = false;
    let period = cfg.checkpoint_period.max(1);
    let end = cfg.end_time;
    let mut compute = 0.0;
    let mut sync = 0.0;
    let mut boundary = 0u64;
    let mut windows = 0u64;
    let stopped;

    part.start(routes);
    // Window -1 agrees on the first event time in slot 2 (= -1 mod 3); window 0 resets
    // that slot after its barrier, like every other window.
    shared.next[2].fetch_min(part.next_time(), Ordering::AcqRel);
    part.sent_min = Time::MAX;
    if !shared.barrier.wait(&mut sense) {
        return None;
    }
    let mut start = shared.next[2].load(Ordering::Acquire);
    let mut next_checkpoint = period.min(end);
    let mut k: usize = 0;
    loop {
        let window_start = start.min(next_checkpoint);
        let window_end = match look {
            Some(w) => window_start.saturating_add(w).min(next_checkpoint),
            None => next_checkpoint,
        };
        let t0 = Instant::now();
        part.run_window(window_end, routes);
        let t1 = Instant::now();
        compute += (t1 - t0).as_secs_f64();

        for (q, out) in part.outboxes.iter_mut().enumerate() {
            if !out.is_empty() {
                boundary += out.len() as u64;
                shared.mail[q][k % 2].lock().expect("mailbox").append(out);
            }
        }
        shared.next[k % 3].fetch_min(part.next_time(), Ordering::AcqRel);
        part.sent_min = Time::MAX;
        if !shared.barrier.wait(&mut sense) {
            return None;
        }
        if me == 0 {
            shared.next[(k + 2) % 3].store(Time::MAX, Ordering::Release);
        }
        let incoming = std::mem::take(&mut *shared.mail[me][k % 2].lock().expect("mailbox"));
        for ev in incoming {
            part.queue.push(ev);
        }
        start = shared.next[k % 3].load(Ordering::Acquire);
        windows += 1;
        k += 1;

        if window_end == next_checkpoint {
            let report = observe(&mut part.lps, window_end);
            *shared.reports[me].lock().expect("report slot") = Some(report);
            if !shared.barrier.wait(&mut sense) {
                return None;
            }
            let last = window_end >= end;
            if me == 0 {
                let reports = shared
                    .reports
                    .iter()
                    .map(|r| r.lock().expect("report slot").take().expect("report"))
                    .collect();
                let control = on_checkpoint(Checkpoint { time: window_end, reports, last });
                shared.stop.store((control == Control::Stop) as u8, Ordering::Release);
            }
            if !shared.barrier.wait(&mut sense) {
                return None;
            }
            if last || shared.stop.load(Ordering::Acquire) == 1 {
                stopped = !last;
                break;
            }
            next_checkpoint = (window_end / period + 1).saturating_mul(period).min(end);
        }
        sync += t1.elapsed().as_secs_f64();
    }
    Some(PartitionResult {
        pending: part.pending() as u64,
        events: part.events_processed,
        global_ids: std::mem::take(&mut part.global_ids),
        lps: std::mem::take(&mut part.lps),
        compute,
        sync,
        boundary,
        windows,
        time: next_checkpoint,
        stopped,
    })
}

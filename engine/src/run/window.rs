//! The loop every partition thread runs (steps 1, 2 and 4 of the window protocol in the
//! parent module), and the guard that turns a panic into an error.

use super::coordinator::{checkpoint, synchronise, Coordinator};
use super::{Checkpoint, Control, PartitionResult, RunConfig, Shared, CONTINUE, FAILED, STOP};
use crate::partition::{LinkRoute, Partition};
use crate::{EngineError, LogicalProcess, Time};
use serde::{de::DeserializeOwned, Serialize};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// Runs a partition's loop; a panic outside the model's code (an engine bug) becomes an
/// error and releases the other partitions from the barrier.
pub(super) fn guarded<M, R, T>(
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
pub(super) fn window_loop<L, R, O, C>(
    mut part: Partition<L>,
    shared: &Shared<L::Msg, R>,
    routes: &[LinkRoute],
    window: Time,
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
    let mut sense = false;
    let period = cfg.checkpoint_period.max(1);
    let end = cfg.end_time;
    let (mut compute, mut sync, mut boundary, mut windows) = (0.0, 0.0, 0u64, 0u64);
    let mut alive = true;

    if !first_window(&mut part, shared, routes, &mut coordinator, &mut sense, &mut alive)? {
        return None;
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
        let window_end = window_start.saturating_add(window).min(next_checkpoint);
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
        note_stop_request(shared, cfg, coordinator.is_some(), k);
        if !shared.barrier.wait(&mut sense) {
            return None;
        }
        if coordinator.is_some() {
            shared.next[(k + 2) % 3].store(Time::MAX, Ordering::Release);
        }
        let stop = cfg.stop.filter(|_| shared.multi_rank).map(|f| (f, k as u64));
        if !synchronise(shared, &mut coordinator, k % 3, k % 2, stop, &mut sense)? {
            return None;
        }
        take_mail(&mut part, shared, k % 2);
        start = shared.next[k % 3].load(Ordering::Acquire);
        windows += 1;
        k += 1;
        if shared.verdict.load(Ordering::Acquire) == FAILED {
            break;
        }

        // A stop asked for: this window's end is the run's last checkpoint.
        let halting = shared.halt.load(Ordering::Acquire) < k as u64;
        next_checkpoint = if halting { window_end } else { next_checkpoint };
        if window_end == next_checkpoint {
            let last = window_end >= end;
            let mut verdict = report_checkpoint(
                &mut part,
                shared,
                observe,
                &mut coordinator,
                window_end,
                last,
                &mut sense,
                &mut alive,
            )?;
            verdict = if halting && verdict == CONTINUE { STOP } else { verdict };
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
        census: part.census.take(),
    })
}

/// Starts the partition's LPs and runs window -1, which agrees on the first event time (in
/// slot 2, = -1 mod 3) and delivers what `start` sent (it arrives no earlier than the first
/// window's end). `Some(false)` or `None` when the run is aborted; `alive` turns false if
/// the model panicked.
fn first_window<L, R, C>(
    part: &mut Partition<L>,
    shared: &Shared<L::Msg, R>,
    routes: &[LinkRoute],
    coordinator: &mut Option<&mut Coordinator<'_, C>>,
    sense: &mut bool,
    alive: &mut bool,
) -> Option<bool>
where
    L: LogicalProcess,
    R: Send + Serialize + DeserializeOwned,
    C: FnMut(Checkpoint<R>) -> Control,
{
    if let Err(p) = catch_unwind(AssertUnwindSafe(|| part.start(routes))) {
        shared.fail(part.id, panic_message(&p));
        *alive = false;
    }
    shared.next[2].fetch_min(part.next_time(), Ordering::AcqRel);
    part.sent_min = Time::MAX;
    route_outboxes(part, shared, 1);
    if !shared.barrier.wait(sense) {
        return Some(false);
    }
    if !synchronise(shared, coordinator, 2, 1, None, sense)? {
        return Some(false);
    }
    take_mail(part, shared, 1);
    Some(true)
}

/// Moves what arrived in the partition's mailbox (buffer `parity`) into its queue.
fn take_mail<L: LogicalProcess, R>(part: &mut Partition<L>, shared: &Shared<L::Msg, R>, parity: usize) {
    let me = shared.local_index[part.id as usize] as usize;
    for ev in std::mem::take(&mut *shared.mail[me][parity].lock().expect("mailbox")) {
        part.queue.push(ev);
    }
}

/// On one rank, the coordinator reads the stop request before window `k`'s barrier, so
/// that every thread, reading [`Shared::halt`] after it, agrees (with several ranks the
/// window's reduction does this, in `synchronise`).
fn note_stop_request<M, R>(shared: &Shared<M, R>, cfg: &RunConfig, coordinator: bool, k: usize) {
    if coordinator && !shared.multi_rank && cfg.stop.is_some_and(|f| f.load(Ordering::Relaxed)) {
        shared.halt.fetch_min(k as u64, Ordering::AcqRel);
    }
}

/// At a checkpoint: the partition reports what `observe` says of it, the coordinator
/// (partition 0) hands every report to the model and sets the verdict, and every partition
/// reads it. `None` when the run is aborted; `alive` turns false if `observe` panicked.
#[allow(clippy::too_many_arguments)]
fn report_checkpoint<L, R, O, C>(
    part: &mut Partition<L>,
    shared: &Shared<L::Msg, R>,
    observe: &O,
    coordinator: &mut Option<&mut Coordinator<'_, C>>,
    time: Time,
    last: bool,
    sense: &mut bool,
    alive: &mut bool,
) -> Option<u8>
where
    L: LogicalProcess,
    R: Send + Serialize + DeserializeOwned,
    O: Fn(&mut [L], &mut L::Local, Time) -> R + Sync,
    C: FnMut(Checkpoint<R>) -> Control,
{
    let me = shared.local_index[part.id as usize] as usize;
    let report = if *alive {
        match catch_unwind(AssertUnwindSafe(|| observe(&mut part.lps, &mut part.local, time))) {
            Ok(r) => Some(r),
            Err(p) => {
                shared.fail(part.id, panic_message(&p));
                *alive = false;
                None
            }
        }
    } else {
        None
    };
    *shared.reports[me].lock().expect("report slot") = report;
    if !shared.barrier.wait(sense) {
        return None;
    }
    if let Some(c) = coordinator.as_deref_mut() {
        let verdict = checkpoint(shared, c, time, last);
        shared.verdict.store(verdict, Ordering::Release);
    }
    if !shared.barrier.wait(sense) {
        return None;
    }
    Some(shared.verdict.load(Ordering::Acquire))
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

//! The coordinator thread's share of a window (step 3 of the window protocol in the parent
//! module: the exchange between ranks and the reductions) and of a checkpoint (gather the
//! reports, let the model decide, share the decision).

use super::{Batch, Checkpoint, Control, Shared, CONTINUE, FAILED, STOP};
use crate::comm::{decode, encode, RankComm};
use crate::Time;
use serde::{de::DeserializeOwned, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What the coordinator thread owns besides its partition.
pub(super) struct Coordinator<'c, C> {
    pub(super) comm: &'c mut dyn RankComm,
    pub(super) on_checkpoint: C,
    pub(super) exchange_seconds: f64,
    pub(super) messages_sent: u64,
    pub(super) bytes_sent: u64,
}

/// After a window's barrier: with several ranks, the coordinator exchanges the rank
/// outboxes and reduces the next-time slot and the failure flag over all ranks, then the
/// threads cross a second barrier. With one rank the failure flag is read directly. With
/// `stop = Some((flag, k))`, the reduction also says whether `flag` is set on any rank,
/// and if so window `k` is the last ([`Shared::halt`]). Returns `Some(false)` if the
/// barrier was aborted.
pub(super) fn synchronise<M, R, C>(
    shared: &Shared<M, R>,
    coordinator: &mut Option<&mut Coordinator<'_, C>>,
    slot: usize,
    parity: usize,
    stop: Option<(&AtomicBool, u64)>,
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
        let stopping = u64::from(stop.is_some_and(|(f, _)| f.load(Ordering::Relaxed)));
        let mut min = [shared.next[slot].load(Ordering::Acquire), u64::MAX - failed, u64::MAX - stopping];
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
        let (min, failed, stopping) = (min[0], u64::MAX - min[1], u64::MAX - min[2]);
        shared.next[slot].store(min, Ordering::Release);
        if let (Some((_, k)), 1) = (stop, stopping) {
            shared.halt.fetch_min(k, Ordering::AcqRel);
        }
        if failed != 0 {
            shared.verdict.store(FAILED, Ordering::Release);
        }
        c.exchange_seconds += t0.elapsed().as_secs_f64();
    }
    Some(shared.barrier.wait(sense))
}

/// The coordinator's work at a checkpoint: gather every partition's report at rank 0,
/// let `on_checkpoint` decide, and share the decision.
pub(super) fn checkpoint<M, R, C>(
    shared: &Shared<M, R>,
    c: &mut Coordinator<'_, C>,
    time: Time,
    last: bool,
) -> u8
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

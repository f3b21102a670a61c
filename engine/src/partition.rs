//! One partition: a set of LPs, their pending events and their outgoing boundary messages.

use crate::queue::{Event, EventQueue};
use crate::{LinkId, LogicalProcess, LpId, Time};

/// Where a link delivers: the receiving partition, the receiver's index there, and the
/// latency.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkRoute {
    pub(crate) dst_partition: u32,
    pub(crate) dst_local: u32,
    pub(crate) latency: Time,
    pub(crate) tie: u32,
}

/// Events ahead of the one being handled whose LPs are asked to prefetch.
const PREFETCH_DISTANCE: usize = 8;

/// Prefetches the first cache lines (up to 256 bytes) of an LP's struct.
#[inline(always)]
fn prefetch_lp<L>(lp: &L) {
    let base = lp as *const L as *const u8;
    let lines = std::mem::size_of::<L>().div_ceil(64).min(4);
    for k in 0..lines {
        crate::prefetch(base.wrapping_add(64 * k));
    }
}

/// Tie-breakers: link arrivals sort before self events at the same time.
const SELF_EVENT_BIT: u64 = 1 << 63;

/// What an LP sees while it handles an event: the clock, and the means to schedule events
/// for itself and to send messages over its links.
pub struct Ctx<'a, M> {
    now: Time,
    lp_global: LpId,
    lp_local: u32,
    partition: u32,
    seq: &'a mut u32,
    queue: &'a mut EventQueue<M>,
    outboxes: &'a mut [Vec<Event<M>>],
    links: &'a [LinkRoute],
    sent_min: &'a mut Time,
}

impl<M> Ctx<'_, M> {
    /// Current simulated time.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Global id of the LP being run.
    #[inline]
    pub fn lp(&self) -> LpId {
        self.lp_global
    }

    #[inline]
    fn next_seq(&mut self) -> u64 {
        let s = *self.seq;
        *self.seq = s.wrapping_add(1);
        s as u64
    }

    /// Schedules `msg` for this LP `delay` cycles from now (0 allowed). Among self events
    /// of the same cycle, lower `priority` runs first; equal priorities run in the order
    /// they were scheduled.
    #[inline]
    pub fn schedule(&mut self, delay: Time, priority: u16, msg: M) {
        let seq = self.next_seq();
        self.queue.push(Event {
            time: self.now + delay,
            lp: self.lp_local,
            tie: SELF_EVENT_BIT | (priority as u64) << 32 | seq,
            msg,
        });
    }

    /// Sends `msg` over `link`; it arrives after the link's latency. The link must start
    /// at this LP (the model's responsibility; checked in debug builds only).
    #[inline]
    pub fn send(&mut self, link: LinkId, msg: M) {
        let route = self.links[link as usize];
        let seq = self.next_seq();
        let ev = Event {
            time: self.now + route.latency,
            lp: route.dst_local,
            tie: (route.tie as u64) << 32 | seq,
            msg,
        };
        if route.dst_partition == self.partition {
            self.queue.push(ev);
        } else {
            *self.sent_min = (*self.sent_min).min(ev.time);
            self.outboxes[route.dst_partition as usize].push(ev);
        }
    }
}

pub(crate) struct Partition<L: LogicalProcess> {
    pub(crate) id: u32,
    pub(crate) lps: Vec<L>,
    pub(crate) global_ids: Vec<LpId>,
    seqs: Vec<u32>,
    pub(crate) queue: EventQueue<L::Msg>,
    /// Outgoing boundary messages, one buffer per partition (own entry unused).
    pub(crate) outboxes: Vec<Vec<Event<L::Msg>>>,
    /// Earliest arrival time among the messages sent since the last exchange.
    pub(crate) sent_min: Time,
    pub(crate) events_processed: u64,
    /// The model's per-partition state.
    pub(crate) local: L::Local,
}

impl<L: LogicalProcess> Partition<L> {
    pub(crate) fn new(id: u32, lps: Vec<L>, global_ids: Vec<LpId>, partitions: usize) -> Self {
        let n = lps.len();
        Self {
            id,
            lps,
            global_ids,
            seqs: vec![0; n],
            queue: EventQueue::new(n),
            outboxes: (0..partitions).map(|_| Vec::new()).collect(),
            sent_min: Time::MAX,
            events_processed: 0,
            local: L::Local::default(),
        }
    }

    fn ctx_parts<'a>(
        &'a mut self,
        local: u32,
        now: Time,
        links: &'a [LinkRoute],
    ) -> (&'a mut L, Ctx<'a, L::Msg>, &'a mut L::Local) {
        let lp = &mut self.lps[local as usize];
        let ctx = Ctx {
            now,
            lp_global: self.global_ids[local as usize],
            lp_local: local,
            partition: self.id,
            seq: &mut self.seqs[local as usize],
            queue: &mut self.queue,
            outboxes: &mut self.outboxes,
            links,
            sent_min: &mut self.sent_min,
        };
        (lp, ctx, &mut self.local)
    }

    pub(crate) fn start(&mut self, links: &[LinkRoute]) {
        for local in 0..self.lps.len() as u32 {
            let (lp, mut ctx, state) = self.ctx_parts(local, 0, links);
            lp.start(&mut ctx, state);
        }
    }

    /// Processes every event with time `< until`.
    pub(crate) fn run_window(&mut self, until: Time, links: &[LinkRoute]) {
        while let Some(t) = self.queue.next_time() {
            if t >= until {
                break;
            }
            // Zero-delay events scheduled while a batch runs land in the same cycle's
            // bucket and form the next batch.
            loop {
                let mut batch = self.queue.take_batch(t);
                if batch.is_empty() {
                    self.queue.recycle(batch);
                    break;
                }
                self.events_processed += batch.len() as u64;
                // Prefetching: at scale an event's cost is its cache misses, and the sorted
                // batch says which LPs come next. Two steps ahead, the LP's own struct is
                // fetched; one step ahead, the LP asks for what the event will touch
                // (which needs the pointers in its struct, fetched by then).
                for (k, ev) in batch.iter().take(2 * PREFETCH_DISTANCE).enumerate() {
                    prefetch_lp(&self.lps[ev.lp as usize]);
                    if k < PREFETCH_DISTANCE {
                        self.lps[ev.lp as usize].prefetch(&ev.msg);
                    }
                }
                let mut events = batch.drain(..);
                while let Some(ev) = events.next() {
                    let rest = events.as_slice();
                    if let Some(far) = rest.get(2 * PREFETCH_DISTANCE - 1) {
                        prefetch_lp(&self.lps[far.lp as usize]);
                    }
                    if let Some(near) = rest.get(PREFETCH_DISTANCE - 1) {
                        self.lps[near.lp as usize].prefetch(&near.msg);
                    }
                    let (lp, mut ctx, state) = self.ctx_parts(ev.lp, t, links);
                    lp.handle(ev.msg, &mut ctx, state);
                }
                drop(events);
                self.queue.recycle(batch);
            }
        }
    }

    /// Earliest pending local event or boundary message sent this window.
    pub(crate) fn next_time(&self) -> Time {
        self.queue.next_time().unwrap_or(Time::MAX).min(self.sent_min)
    }

    pub(crate) fn pending(&self) -> usize {
        self.queue.len()
    }
}

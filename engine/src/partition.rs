//! One partition: a set of LPs, their pending events and their outgoing boundary messages.

use crate::census::Census;
use crate::queue::{Event, EventQueue};
use crate::{EngineError, LinkId, LinkSpec, LogicalProcess, LpId, Time};

/// Where a link delivers under a partitioning: the receiving partition, the receiver's
/// index there, the latency and the tie. [`link_routes`] resolves them; an LP that sends
/// often may keep its links' routes and send with [`Ctx::send_on`], which saves looking
/// the link up (often a cache miss) on every message.
///
/// `LinkRoute::default()` leads nowhere useful (partition 0, its first LP): a placeholder
/// for a model's ports without a link, never to be sent on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkRoute {
    dst_partition: u32,
    dst_local: u32,
    latency: u32,
    tie: u32,
}

impl LinkRoute {
    /// A placeholder (as `LinkRoute::default()`, never to be sent on) that records a
    /// latency: for a model's links that stay inside an LP (e.g. to its own endpoints), so
    /// that the model keeps every link's latency in one place.
    pub fn placeholder(latency: u32) -> Self {
        LinkRoute { latency, ..Self::default() }
    }

    /// The link's latency in cycles.
    pub fn latency(&self) -> Time {
        self.latency as Time
    }
}

/// The routes of `links` when LP `i` runs in partition `partition_of[i]` (the LPs of a
/// partition are numbered within it in id order). Fails on a link that names an unknown
/// LP or has a latency of 0 or of 2^32 cycles or more.
pub fn link_routes(links: &[LinkSpec], partition_of: &[u32]) -> Result<Vec<LinkRoute>, EngineError> {
    let num_lps = partition_of.len();
    let partitions = crate::partition_count(partition_of);
    let mut within = vec![0u32; num_lps];
    let mut counters = vec![0u32; partitions];
    for (lp, &p) in partition_of.iter().enumerate() {
        within[lp] = counters[p as usize];
        counters[p as usize] += 1;
    }
    links
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let link = i as u32;
            if let Some(&lp) = [l.src, l.dst].iter().find(|&&lp| lp as usize >= num_lps) {
                return Err(EngineError::UnknownLp { link, lp, num_lps });
            }
            if l.latency == 0 || l.latency > u32::MAX as Time {
                return Err(EngineError::BadLatency { link, src: l.src, dst: l.dst, latency: l.latency });
            }
            Ok(LinkRoute {
                dst_partition: partition_of[l.dst as usize],
                dst_local: within[l.dst as usize],
                latency: l.latency as u32,
                tie: l.tie,
            })
        })
        .collect()
}

/// Events ahead of the one being handled whose LP is asked to prefetch.
const PREFETCH_DISTANCE: usize = 4;

/// Longest span (cycles processed LP by LP at once).
pub(crate) const MAX_SPAN: Time = 64;

/// Prefetches the cache lines of an LP's struct (the first 512 bytes of it): its fields
/// locate the rest of its state, and a field on a line left out costs a miss on every
/// span of every LP.
#[inline(always)]
fn prefetch_lp<L>(lp: &L) {
    crate::prefetch_bytes(lp as *const L as *const u8, std::mem::size_of::<L>().min(512));
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
    /// End of the span being processed: self events before it stay with the LP.
    horizon: Time,
    /// Generation of the event being handled (see [`Pending`]).
    generation: u32,
    /// Self events scheduled before `horizon`, for the LP's pending list.
    diverted: &'a mut Vec<Pending<M>>,
    /// The partition's census, when the run takes one.
    census: Option<&'a mut Census>,
}

/// An event of the LP being processed, within the current span. Events of one LP run in
/// `(time, generation, tie)` order: an event scheduled with zero delay while generation
/// `g` runs belongs to generation `g + 1` of the same cycle, every other one to generation
/// 0. That is the order of a cycle-by-cycle simulation, where zero-delay events form the
/// next batch of the cycle.
pub(crate) struct Pending<M> {
    time: Time,
    generation: u32,
    tie: u64,
    msg: M,
}

impl<M> Pending<M> {
    fn key(&self) -> (Time, u32, u64) {
        (self.time, self.generation, self.tie)
    }
}

impl<M: serde::Serialize> Ctx<'_, M> {
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
        let time = self.now + delay;
        let tie = SELF_EVENT_BIT | (priority as u64) << 32 | seq;
        if time < self.horizon {
            let generation = if delay == 0 { self.generation + 1 } else { 0 };
            self.diverted.push(Pending { time, generation, tie, msg });
        } else {
            self.queue.push(Event { time, lp: self.lp_local, tie, msg });
        }
    }

    /// Sends `msg` over `link`; it arrives after the link's latency. The link must start
    /// at this LP (the model's responsibility; checked in debug builds only).
    #[inline]
    pub fn send(&mut self, link: LinkId, msg: M) {
        let route = self.links[link as usize];
        self.send_on(route, msg);
    }

    /// Sends `msg` over the link whose route (from [`link_routes`] for this run's
    /// partitioning) is `route`: the same as [`send`](Self::send) without the lookup.
    #[inline]
    pub fn send_on(&mut self, route: LinkRoute, msg: M) {
        self.send_on_after(route, 0, msg);
    }

    /// Sends `msg` over the link whose route is `route`, `delay` cycles from now: it
    /// arrives `delay` cycles later than with [`send_on`](Self::send_on) (a message that
    /// waits for the link, then crosses it). Messages on one link arrive in the order of
    /// their arrival times, those of one time in the order they were sent.
    #[inline]
    pub fn send_on_after(&mut self, route: LinkRoute, delay: Time, msg: M) {
        let seq = self.next_seq();
        let ev = Event {
            time: self.now + delay + route.latency as Time,
            lp: route.dst_local,
            tie: (route.tie as u64) << 32 | seq,
            msg,
        };
        debug_assert!(ev.time >= self.horizon, "a link shorter than the span");
        if let Some(census) = self.census.as_deref_mut() {
            census.message(self.lp_global, route.dst_partition, route.dst_local, self.now, &ev);
        }
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
    /// Length of a span: the smallest latency of the links leaving this partition's LPs
    /// (at most `MAX_SPAN`). No message sent within a span can arrive within it.
    span: Time,
    /// The LP being processed: its pending events, and those it schedules.
    pending: Vec<Pending<L::Msg>>,
    diverted: Vec<Pending<L::Msg>>,
    /// Counts for other partitionings, when the run takes a census.
    pub(crate) census: Option<Census>,
}

impl<L: LogicalProcess> Partition<L> {
    /// A partition of `lps`; `span` is the smallest latency of the links leaving them.
    pub(crate) fn new(id: u32, lps: Vec<L>, global_ids: Vec<LpId>, partitions: usize, span: Time) -> Self {
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
            span: span.clamp(1, MAX_SPAN),
            pending: Vec::new(),
            diverted: Vec::new(),
            census: None,
        }
    }

    pub(crate) fn start(&mut self, links: &[LinkRoute]) {
        for local in 0..self.lps.len() {
            let ctx = Ctx {
                now: 0,
                lp_global: self.global_ids[local],
                lp_local: local as u32,
                partition: self.id,
                seq: &mut self.seqs[local],
                queue: &mut self.queue,
                outboxes: &mut self.outboxes,
                links,
                sent_min: &mut self.sent_min,
                horizon: 0,
                generation: 0,
                diverted: &mut self.diverted,
                census: self.census.as_mut(),
            };
            let mut ctx = ctx;
            self.lps[local].start(&mut ctx, &mut self.local);
        }
    }

    /// Processes every event with time `< until`, a span at a time.
    ///
    /// Within a span `[t, t + span)` the LPs cannot affect each other (every link is at
    /// least `span` long), so each LP runs all its events of the span at once, in its own
    /// order, before the next LP: its state is fetched into the cache once per span rather
    /// than once per cycle. The result is the same as processing cycle by cycle.
    pub(crate) fn run_window(&mut self, until: Time, links: &[LinkRoute]) {
        while let Some(t) = self.queue.next_time() {
            if t >= until {
                break;
            }
            let end = until.min(t + self.span);
            let mut buckets = self.queue.take_span(t, end);
            self.run_span(&mut buckets, t, end, links);
            for b in buckets {
                self.queue.recycle(b);
            }
        }
    }

    /// Runs the events of `buckets` (cycle `from + k` in bucket `k`, each sorted by LP and
    /// tie) LP by LP, with the self events they schedule before `end`.
    fn run_span(&mut self, buckets: &mut [Vec<Event<L::Msg>>], from: Time, end: Time, links: &[LinkRoute]) {
        let mut cycles: Vec<_> = buckets.iter_mut().map(|b| b.drain(..)).collect();
        let next_lp = |cycles: &[std::vec::Drain<'_, Event<L::Msg>>]| {
            cycles.iter().filter_map(|c| c.as_slice().first().map(|e| e.lp)).min()
        };
        let mut current = next_lp(&cycles);
        while let Some(lp) = current {
            // Gather the LP's events of the span, in time order (cycle by cycle).
            let mut pending = std::mem::take(&mut self.pending);
            for (k, cycle) in cycles.iter_mut().enumerate() {
                while cycle.as_slice().first().is_some_and(|e| e.lp == lp) {
                    let e = cycle.next().expect("peeked");
                    debug_assert_eq!(e.time, from + k as Time);
                    pending.push(Pending { time: e.time, generation: 0, tie: e.tie, msg: e.msg });
                }
            }
            // While this LP runs, the next ones' state travels into the cache: the struct of
            // the LP after next (its fields locate the rest), and what the next LP's first
            // event touches (its struct was fetched one LP earlier).
            current = next_lp(&cycles);
            if let Some(next) = current {
                let after = cycles
                    .iter()
                    .filter_map(|c| c.as_slice().iter().find(|e| e.lp != next).map(|e| e.lp))
                    .min();
                if let Some(after) = after {
                    prefetch_lp(&self.lps[after as usize]);
                }
                for cycle in &cycles {
                    for e in cycle.as_slice().iter().take_while(|e| e.lp == next) {
                        self.lps[next as usize].prefetch(&e.msg);
                    }
                }
            }
            self.run_lp(lp, &mut pending, end, links);
            self.pending = pending;
        }
    }

    /// Runs LP `lp`'s `pending` events (in time order) and those they schedule before
    /// `end`.
    fn run_lp(&mut self, lp: u32, pending: &mut Vec<Pending<L::Msg>>, end: Time, links: &[LinkRoute]) {
        let local = lp as usize;
        // Latest first, so that the next event is popped from the end.
        pending.reverse();
        // The first event was prefetched while the previous LP ran; the loop below asks
        // `PREFETCH_DISTANCE` ahead, so the ones in between are asked for here.
        for ahead in pending.iter().rev().skip(1).take(PREFETCH_DISTANCE - 1) {
            self.lps[local].prefetch(&ahead.msg);
        }
        while let Some(ev) = pending.pop() {
            if let Some(ahead) = pending.len().checked_sub(PREFETCH_DISTANCE).map(|k| &pending[k]) {
                self.lps[local].prefetch(&ahead.msg);
            }
            let mut ctx = Ctx {
                now: ev.time,
                lp_global: self.global_ids[local],
                lp_local: lp,
                partition: self.id,
                seq: &mut self.seqs[local],
                queue: &mut self.queue,
                outboxes: &mut self.outboxes,
                links,
                sent_min: &mut self.sent_min,
                horizon: end,
                generation: ev.generation,
                diverted: &mut self.diverted,
                census: self.census.as_mut(),
            };
            self.lps[local].handle(ev.msg, &mut ctx, &mut self.local);
            self.events_processed += 1;
            if let Some(census) = self.census.as_mut() {
                census.event(self.global_ids[local], ev.time);
            }
            for d in self.diverted.drain(..) {
                // New events never precede the one just run; most run soon, near the end.
                let at = pending.partition_point(|p| p.key() > d.key());
                pending.insert(at, d);
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

//! Application ranks at the endpoints: the executor of a job's operation graph (see
//! `crate::workload` and the `schedule` crate).
//!
//! A rank starts the ops whose dependencies are met: a `calc` ends after its duration (a
//! `ComputeDone` event), a send ends once its last data packet has left the endpoint, a
//! receive once it has matched a message (MPI's order: [`Matcher`]) and the message's last
//! packet is in. Messages up to the eager limit go at once; larger ones by rendezvous: a
//! request (one packet), a clear-to-send from the receiver once a receive matches it (one
//! packet), then the data. Ops that end at once (zero-time `calc`s, matched receives)
//! release their dependents in the same event, through a work list, in a fixed order.
//!
//! A packet names its message by the sender's op (the low 31 bits of its id; bit 31 marks
//! a clear-to-send, which names the send it clears) and its sender by its source endpoint:
//! every process holds every job's graph, so the receiver reads the message's envelope and
//! size from the sender's op. Packets may overtake each other in the network (adaptive
//! routings); MPI matches a sender's messages in the order they were sent, so each message
//! carries a sequence number per sender and receiver (15 bits: a window far beyond what a
//! network holds in flight) and a receiver matches a message only after the ones sent
//! before it, as MPI libraries do over unordered networks.
//!
//! A graph cut into iterations is held one iteration at a time: a rank keeps a counter and
//! a phase per op of its current iteration.
//!
//! One file: starting an op posts messages, a packet's arrival matches receives and posts
//! clears-to-send, and both end ops through the one work list; split, the halves would
//! call each other.

use super::buffers::{store_in, Held, NIL};
use super::messages::{Post, SelfEvent};
use super::stats::{JobStats, PartitionStats, PhaseSpan, RankEnd, SendRecord, StalledRank};
use super::transport::RankTransport;
use super::{RouterCtx, RouterState, Shared};
use crate::transport::SentMessage;
use crate::workload::{
    Job, MessagePackets, Workload, CLEAR_TO_SEND, PHASE_END, PHASE_START, WORKLOAD_PACKET,
};
use routing::packet::Packet;
use rustc_hash::FxHashMap;
use schedule::{Envelope, Matcher, Op, OpId, Pattern, Source, TagMatch};
use std::collections::VecDeque;
use topology::EndpointId;

/// An op's phase, with what it is while it runs (so that its end needs no graph lookup).
const WAITING: u8 = 0;
const STARTED: u8 = 1;
const ENDED: u8 = 2;
const PHASE: u8 = 3;
const CALC: u8 = 4;
const SEND: u8 = 8;

/// No receive matched yet.
const UNMATCHED: OpId = OpId::MAX;

/// Sequence numbers per sender and receiver wrap at 2^15 (what a packet holds).
const SEQ_MASK: u16 = 0x7fff;

/// A message leaving a rank: in its outbox until its packets enter the source queue.
struct Outgoing {
    dst: EndpointId,
    /// Packets in all.
    total: u32,
    /// Packets not yet in the source queue.
    packets: u32,
    /// Phits of the last packet.
    last: u16,
    /// Phits of the others: `router.packet_size`, or within a scale-up domain its own
    /// (`Workload::message_packets`).
    full: u16,
    /// The low 32 bits of its packets' ids: the send's op, with [`CLEAR_TO_SEND`] for a
    /// clear-to-send.
    low: u32,
    seq: u16,
    created: u64,
    /// The send that ends when the last packet has left (`None`: a control message).
    ends: Option<OpId>,
}

impl Outgoing {
    /// The data of the send `op` to `dst`: `m`'s packets, ending the send when the last
    /// has left (or, with a transport, is acknowledged).
    fn data(dst: EndpointId, m: MessagePackets, op: OpId, seq: u16, created: u64) -> Self {
        let MessagePackets { packets, last, full } = m;
        Outgoing { dst, total: packets, packets, last, full, low: op, seq, created, ends: Some(op) }
    }

    /// A control message of one packet of `phits` (a rendezvous request or clear-to-send),
    /// ending no send.
    fn control(dst: EndpointId, phits: u16, low: u32, seq: u16, created: u64) -> Self {
        Outgoing { dst, total: 1, packets: 1, last: phits, full: phits, low, seq, created, ends: None }
    }
}

/// A message arriving at a rank, from its first packet on.
struct Inbound {
    /// The receive it matched, or [`UNMATCHED`].
    recv: OpId,
    /// Data packets in.
    got: u32,
    /// Data packets in all.
    need: u32,
    /// When its send started (its first packet's creation time).
    posted: u64,
    /// Its data waits for a clear-to-send.
    rendezvous: bool,
    /// Its sequence number from its sender to this rank (the clear-to-send and the data
    /// of a rendezvous carry it too: ECMP's flow of the message, `routing.ecmp_flows`).
    seq: u16,
    /// What receives match it on.
    env: Envelope,
}

/// One rank of a job, running at one of the router's endpoints.
pub(super) struct AppRank {
    /// Its job (index in the workload).
    job: u32,
    /// Its rank in the job.
    rank: u32,
    /// Local index of its endpoint.
    nic: u16,
    /// The iteration it runs, and that iteration's first op.
    iteration: u32,
    base: OpId,
    /// Per op of the iteration: dependencies not yet met, and its phase (`WAITING`,
    /// `STARTED`, `ENDED`; while it runs, with `CALC` or `SEND`).
    unmet: Vec<u32>,
    phase: Vec<u8>,
    /// Ops of the iteration not yet ended.
    left: u32,
    /// Every op of every iteration has ended.
    done: bool,
    outbox: VecDeque<Outgoing>,
    /// Per packet of the rank in its endpoint's source queue, in order: the send its
    /// departure ends, if it is that send's last.
    queued: VecDeque<Option<OpId>>,
    /// `calc`s and sends running; since when the counts last changed; the time spent with
    /// a `calc` running, and with a send but no `calc` running.
    calcs: u32,
    sends: u32,
    since: u64,
    computing: u64,
    sending: u64,
}

/// The messages of a router's ranks, in one place for all of them (per-rank maps would
/// each hold their own spare capacity; a rank is its index among the router's ranks, `a`).
/// Looked up only, never iterated (but for counts in a diagnosis), so their order cannot
/// matter.
pub(super) struct Mailroom {
    /// Posted receives (their op) and unexpected messages (sender, sender's op), per rank.
    matcher: Matcher<OpId, (u32, OpId)>,
    /// Messages partly in: (rank, sender, sender's op).
    inbound: FxHashMap<(u32, u32, OpId), Inbound>,
    /// Messages whose first packet came before an earlier message of the same sender:
    /// (rank, sender, sequence number) to the sender's op.
    held: FxHashMap<(u32, u32, u16), OpId>,
    /// (rank, sender): the sequence number of the next message to match.
    next_in: FxHashMap<(u32, u32), u16>,
    /// (rank, receiver): the sequence number of the next message sent to it.
    next_out: FxHashMap<(u32, u32), u16>,
    /// With a transport (`transport.kind = "rc"`): each rank's connections
    /// (`transport.rs`); empty otherwise.
    pub(super) transports: Vec<RankTransport>,
    /// With `workload.record_sends`: the sends running, (rank, op) to (receiver, bytes,
    /// start); empty otherwise.
    sends_running: FxHashMap<(u32, OpId), (u32, u64, u64)>,
}

impl Mailroom {
    /// For `ranks` ranks.
    pub(super) fn new(ranks: u32) -> Mailroom {
        Mailroom {
            matcher: Matcher::new(ranks),
            inbound: FxHashMap::default(),
            held: FxHashMap::default(),
            next_in: FxHashMap::default(),
            next_out: FxHashMap::default(),
            transports: Vec::new(),
            sends_running: FxHashMap::default(),
        }
    }
}

/// The mailroom of a router with ranks (routers without have none).
fn mail(room: &mut Option<Box<Mailroom>>) -> &mut Mailroom {
    room.as_deref_mut().expect("a router with ranks has a mailroom")
}

/// Packets a rank keeps in its endpoint's source queue; the rest wait in its outbox.
const QUEUED: u32 = 2;

impl AppRank {
    /// Packets posted that have not reached the source queue.
    fn unsent(&self) -> u32 {
        self.outbox.iter().map(|m| m.packets).sum()
    }

    /// Adds the time since the last change to computing or sending, before a change.
    fn account(&mut self, t: u64) {
        let spent = t - self.since;
        if self.calcs > 0 {
            self.computing += spent;
        } else if self.sends > 0 {
            self.sending += spent;
        }
        self.since = t;
    }
}

fn job_stats(st: &mut PartitionStats, job: u32) -> &mut JobStats {
    if st.jobs.len() <= job as usize {
        st.jobs.resize_with(job as usize + 1, JobStats::default);
    }
    &mut st.jobs[job as usize]
}

/// A message of `job` is wholly in, `latency` cycles after its send started.
fn message_in(st: &mut PartitionStats, job: u32, latency: u64) {
    let stats = job_stats(st, job);
    stats.messages += 1;
    stats.message_latency.record(latency);
}

/// The span of the timed collective whose start or end (`how`: [`PHASE_START`],
/// [`PHASE_END`]) op `k` of `app`'s current iteration is, if it is one.
#[inline]
fn timed_phase<'a>(
    job: &Job,
    app: &AppRank,
    k: usize,
    how: u8,
    st: &'a mut PartitionStats,
) -> Option<&'a mut PhaseSpan> {
    let phases = job.ops.phases.as_deref()?;
    let (phase, marks) = phases.mark(app.rank, k as OpId)?;
    if marks & how == 0 {
        return None;
    }
    let index = app.iteration as usize * phases.list.len() + phase as usize;
    Some(job_stats(st, app.job).phase(index))
}

fn workload(sh: &Shared) -> &Workload {
    sh.workload.as_deref().expect("ranks run only with a workload")
}

impl RouterState {
    /// The ranks of the router's endpoints, from the workload's mapping: one per endpoint
    /// that runs a rank.
    pub(super) fn place_ranks(&mut self, sh: &Shared) {
        let Some(w) = &sh.workload else { return };
        for (i, nic) in self.ends.nics.iter_mut().enumerate() {
            if let Some((job, rank)) = w.rank_at(nic.endpoint) {
                nic.app = self.ends.apps.len() as u32;
                self.ends.apps.push(AppRank {
                    job,
                    rank,
                    nic: i as u16,
                    iteration: 0,
                    base: 0,
                    unmet: Vec::new(),
                    phase: Vec::new(),
                    left: 0,
                    done: false,
                    outbox: VecDeque::new(),
                    queued: VecDeque::new(),
                    calcs: 0,
                    sends: 0,
                    since: 0,
                    computing: 0,
                    sending: 0,
                });
            }
        }
        if !self.ends.apps.is_empty() {
            let mut room = Mailroom::new(self.ends.apps.len() as u32);
            if sh.transport.is_some() {
                room.transports.resize_with(self.ends.apps.len(), Default::default);
            }
            self.ends.mail = Some(Box::new(room));
        }
    }

    /// Every rank of the router starts the ops of its first iteration that wait for nothing.
    pub(super) fn start_ranks(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        for a in 0..self.ends.apps.len() {
            self.enter_iteration(sh, a, 0, ctx, st);
            let unmet = &self.ends.apps[a].unmet;
            let ready = (0..unmet.len() as OpId).filter(|&op| unmet[op as usize] == 0);
            self.ends.app_work.extend(ready.map(|op| (a as u32, op, false)));
        }
        self.run_ranks(sh, ctx, st);
    }

    /// Rank `a` enters iteration `i`: its ops' counters come from the graph. A rank with no
    /// ops left has finished.
    fn enter_iteration(
        &mut self,
        sh: &Shared,
        a: usize,
        i: u32,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let w = workload(sh);
        let app = &mut self.ends.apps[a];
        let g = &*w.jobs[app.job as usize].ops.graph;
        let n = g.ops_per_iteration(app.rank);
        app.iteration = i;
        app.base = i * n;
        app.unmet.clear();
        app.unmet.extend((0..n).map(|k| g.unmet(app.rank, app.base + k)));
        app.phase.clear();
        app.phase.resize(n as usize, WAITING);
        app.left = n;
        if n == 0 {
            self.finish_rank(a, ctx.now(), st);
        }
    }

    /// Runs the work list: ops to start or end, in the order they were queued, each
    /// queuing what it releases. Re-entrant calls (an injection while a rank posts) leave
    /// their work to the running loop.
    pub(super) fn run_ranks(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        if self.ends.app_running {
            return;
        }
        self.ends.app_running = true;
        while let Some((a, op, end)) = self.ends.app_work.pop_front() {
            if end {
                self.end_op(sh, a as usize, op, ctx, st);
            } else {
                self.start_op(sh, a as usize, op, ctx, st);
            }
        }
        self.ends.app_running = false;
    }

    /// Queues the dependents of op `op` of rank `a` (of its start, or of its end): those
    /// with no dependency left start.
    fn release_dependents(&mut self, sh: &Shared, a: usize, op: OpId, end: bool) {
        let w = workload(sh);
        let app = &mut self.ends.apps[a];
        let g = &*w.jobs[app.job as usize].ops.graph;
        let (rank, base, unmet, work) = (app.rank, app.base, &mut app.unmet, &mut self.ends.app_work);
        let mut each = |d: OpId| {
            let k = (d - base) as usize;
            unmet[k] -= 1;
            if unmet[k] == 0 {
                work.push_back((a as u32, d, false));
            }
        };
        if end {
            g.each_after_end(rank, op, &mut each);
        } else {
            g.each_after_start(rank, op, &mut each);
        }
    }

    /// Op `op` of rank `a` starts.
    fn start_op(
        &mut self,
        sh: &Shared,
        a: usize,
        op: OpId,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let w = workload(sh);
        let t = ctx.now();
        let app = &mut self.ends.apps[a];
        let job = &w.jobs[app.job as usize];
        let (rank, k) = (app.rank, (op - app.base) as usize);
        let what = job.ops.graph.op(rank, op);
        if let Some(span) = timed_phase(job, app, k, PHASE_START, st) {
            span.start = span.start.min(t);
        }
        app.phase[k] = STARTED
            | match what {
                Op::Calc { .. } => CALC,
                Op::Send { .. } => SEND,
                Op::Recv { .. } => 0,
            };
        self.release_dependents(sh, a, op, false);
        let app = &mut self.ends.apps[a];
        match what {
            Op::Calc { time } => {
                app.account(t);
                app.calcs += 1;
                match w.cycles(time, job.ops.unit) {
                    0 => self.ends.app_work.push_back((a as u32, op, true)),
                    c => ctx.schedule_self(c, SelfEvent::ComputeDone { nic: app.nic, op }),
                }
            }
            Op::Send { to, bytes, tag, comm } => {
                app.account(t);
                app.sends += 1;
                if w.record_sends {
                    mail(&mut self.ends.mail).sends_running.insert((a as u32, op), (to, bytes, t));
                }
                if to == rank {
                    // To itself: the message is there at once, whatever its size.
                    let env = Envelope { comm, src: rank, tag };
                    let m = Inbound {
                        recv: UNMATCHED,
                        got: 0,
                        need: 0,
                        posted: t,
                        rendezvous: false,
                        seq: 0,
                        env,
                    };
                    mail(&mut self.ends.mail).inbound.insert((a as u32, rank, op), m);
                    message_in(st, app.job, 0);
                    self.ends.app_work.push_back((a as u32, op, true));
                    self.deliver_header(sh, a, rank, op, env, ctx, st);
                    return;
                }
                let next = mail(&mut self.ends.mail).next_out.entry((a as u32, to)).or_insert(0);
                let seq = *next;
                *next = next.wrapping_add(1) & SEQ_MASK;
                let (src, dst) = (job.endpoints[rank as usize], job.endpoints[to as usize]);
                let out = if w.eager(bytes, comm) {
                    Outgoing::data(dst, w.message_packets(bytes, src, dst), op, seq, t)
                } else {
                    // A rendezvous request: a control packet.
                    Outgoing::control(dst, w.control_phits(), op, seq, t)
                };
                self.post(sh, a, out, ctx, st);
            }
            Op::Recv { from, tag, comm, .. } => {
                if let Some((_, (src, sop))) =
                    mail(&mut self.ends.mail).matcher.post(a as u32, Pattern { comm, src: from, tag }, op)
                {
                    self.matched(sh, a, op, src, sop, ctx, st);
                }
            }
        }
    }

    /// Op `op` of rank `a` ends: its dependents may start; the last op of an iteration
    /// moves the rank to the next one, or finishes it.
    fn end_op(&mut self, sh: &Shared, a: usize, op: OpId, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        let w = workload(sh);
        let t = ctx.now();
        let app = &mut self.ends.apps[a];
        let job = &w.jobs[app.job as usize];
        let k = (op - app.base) as usize;
        let was = std::mem::replace(&mut app.phase[k], ENDED);
        if let Some(span) = timed_phase(job, app, k, PHASE_END, st) {
            span.end = span.end.max(t);
            span.parts += 1;
        }
        app.left -= 1;
        st.period.ended_ops += 1;
        if was & (CALC | SEND) != 0 {
            app.account(t);
            if was & CALC != 0 {
                app.calcs -= 1;
            } else {
                app.sends -= 1;
                if w.record_sends {
                    let (rank, iteration, job) = (app.rank, app.iteration, app.job);
                    if let Some((to, bytes, start)) =
                        mail(&mut self.ends.mail).sends_running.remove(&(a as u32, op))
                    {
                        let send = SendRecord { rank, to, bytes, iteration, start, end: t };
                        job_stats(st, job).sends.push(send);
                    }
                }
            }
        }
        if app.left == 0 {
            let (i, iterations) = (app.iteration, job.iterations);
            self.end_iteration(a, i, iterations, t, st);
            if i + 1 < iterations {
                self.enter_iteration(sh, a, i + 1, ctx, st);
            } else {
                self.finish_rank(a, t, st);
            }
        }
        self.release_dependents(sh, a, op, true);
    }

    /// Rank `a` ended iteration `i` of `iterations` at `t`.
    fn end_iteration(&mut self, a: usize, i: u32, iterations: u32, t: u64, st: &mut PartitionStats) {
        let s = job_stats(st, self.ends.apps[a].job);
        let n = iterations as usize;
        if s.iteration_end_max.len() < n {
            s.iteration_end_max.resize(n, 0);
            s.iteration_end_sum.resize(n, 0);
            s.iteration_ranks.resize(n, 0);
        }
        s.iteration_ranks[i as usize] += 1;
        s.iteration_end_max[i as usize] = s.iteration_end_max[i as usize].max(t);
        s.iteration_end_sum[i as usize] += t;
    }

    /// Rank `a` ran its last op at `t`.
    fn finish_rank(&mut self, a: usize, t: u64, st: &mut PartitionStats) {
        let app = &mut self.ends.apps[a];
        app.account(t);
        app.done = true;
        let end = RankEnd { rank: app.rank, finish: t, computing: app.computing, sending: app.sending };
        job_stats(st, app.job).finished.push(end);
        st.period.finished_ranks += 1;
    }

    /// Rank `a` posts message `out`: it waits in the outbox, from which the endpoint's
    /// source queue takes packets as it sends them ([`Self::feed_rank`]).
    fn post(
        &mut self,
        sh: &Shared,
        a: usize,
        out: Outgoing,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let packets = out.packets as u64;
        let phits = (packets - 1) * out.full as u64 + out.last as u64;
        let app = &mut self.ends.apps[a];
        let (job, nic, dst) = (app.job, app.nic, out.dst);
        app.outbox.push_back(out);
        st.generated_total += packets;
        st.period.generated_packets += packets;
        st.period.generated_phits += phits;
        if Self::in_measurement(sh, t) {
            self.ends.nics[nic as usize].generated_phits += phits;
            st.measured.generated_packets += packets;
            st.measured.generated_phits += phits;
        }
        if sh.is_aggressor(dst) {
            st.count_aggressor_offered(phits, Self::in_measurement(sh, t));
        }
        job_stats(st, job).packets_sent += packets;
        let was_idle = self.ends.nics[nic as usize].source_queue.is_empty();
        self.feed_rank(sh, nic, t, st);
        if was_idle {
            self.try_inject(sh, nic, ctx, st);
        }
    }

    /// Moves the next packets of the rank at endpoint `nic` from its outbox into the
    /// source queue, keeping [`QUEUED`] there: a rank that posts a large message holds one
    /// record per message, not one per packet, until its endpoint sends them. With a
    /// transport, packets to send again go first, and a new packet takes its connection's
    /// next PSN (in the bits of the message's sequence number) if the connection's window
    /// lets it; its send then ends at its acknowledgement (`transport.rs`), not here.
    pub(super) fn feed_rank(&mut self, sh: &Shared, nic: u16, t: u64, st: &mut PartitionStats) {
        let a = self.ends.nics[nic as usize].app;
        if a == NIL {
            return;
        }
        let app = &mut self.ends.apps[a as usize];
        let src = self.ends.nics[nic as usize].endpoint;
        let measured = Self::in_measurement(sh, t);
        while self.ends.nics[nic as usize].source_queue.len < QUEUED {
            let mut transport = sh
                .transport
                .as_ref()
                .map(|kind| (kind, &mut mail(&mut self.ends.mail).transports[a as usize]));
            let resend = transport.as_mut().and_then(|(_, tr)| tr.next_resend(src, measured, st));
            let packet = if let Some(packet) = resend {
                app.queued.push_back(None);
                packet
            } else {
                let Some(front) = app.outbox.front_mut() else { break };
                let size = if front.packets == 1 { front.last } else { front.full };
                let mut packet = Packet::new(src, front.low, front.dst, size, front.created);
                packet.id |= WORKLOAD_PACKET;
                let ends = match transport {
                    None => {
                        packet.set_app_seq(front.seq);
                        front.ends
                    }
                    Some((kind, tr)) => {
                        if !tr.may_send_new(front.dst, kind.window(), size) {
                            break;
                        }
                        let message = (front.packets == front.total).then_some(SentMessage {
                            first: 0,
                            packets: front.total,
                            full: front.full,
                            last: front.last,
                            low: front.low,
                            created: front.created,
                            ends: front.ends,
                        });
                        let nscc = sh.nscc.as_ref();
                        packet.set_app_seq(tr.send_new(front.dst, message, size, kind.selective(), nscc));
                        None
                    }
                };
                front.packets -= 1;
                if front.packets == 0 {
                    app.queued.push_back(ends);
                    app.outbox.pop_front();
                } else {
                    app.queued.push_back(None);
                }
                packet
            };
            let slot =
                store_in(&mut self.slab, &mut self.free_slots, Held { packet, ready: 0, next: NIL, tail: 0 });
            self.ends.nics[nic as usize].source_queue.push_back(slot, &mut self.slab);
        }
    }

    /// A packet of the rank at endpoint `nic` left the endpoint: the send whose last packet
    /// it was ends.
    pub(super) fn on_rank_injected(
        &mut self,
        sh: &Shared,
        nic: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let a = self.ends.nics[nic as usize].app;
        if let Some(Some(op)) = self.ends.apps[a as usize].queued.pop_front() {
            self.ends.app_work.push_back((a, op, true));
            self.run_ranks(sh, ctx, st);
        }
    }

    /// The computation `op` of the rank at endpoint `nic` ends.
    pub(super) fn on_compute_done(
        &mut self,
        sh: &Shared,
        nic: u16,
        op: OpId,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let a = self.ends.nics[nic as usize].app;
        self.ends.app_work.push_back((a, op, true));
        self.run_ranks(sh, ctx, st);
    }

    /// The rank at endpoint `nic` receives workload packet `packet`. Returns whether it
    /// was the last packet of the message its sender posted (a transport acknowledges it
    /// at once).
    ///
    /// With a transport a connection delivers its packets in the order they were sent, and
    /// their sequence bits carry PSNs: a message's sequence number is then the receiver's
    /// own count of its sender's messages.
    pub(super) fn on_rank_receive(
        &mut self,
        sh: &Shared,
        nic: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) -> bool {
        let w = workload(sh);
        let t = ctx.now();
        let a = self.ends.nics[nic as usize].app as usize;
        let app = &mut self.ends.apps[a];
        let job = &w.jobs[app.job as usize];
        job_stats(st, app.job).packets_received += 1;
        let low = packet.id as u32;
        if low & CLEAR_TO_SEND != 0 {
            // The receiver of our send `op` is ready: the data goes.
            let op = low & !CLEAR_TO_SEND;
            let Op::Send { to, bytes, .. } = job.ops.graph.op(app.rank, op) else {
                unreachable!("a clear-to-send names a send")
            };
            let (src, dst) = (job.endpoints[app.rank as usize], job.endpoints[to as usize]);
            let data = Outgoing::data(dst, w.message_packets(bytes, src, dst), op, packet.app_seq(), t);
            self.post(sh, a, data, ctx, st);
            self.run_ranks(sh, ctx, st);
            return true;
        }
        let (src_job, src) = w.rank_at(packet.src()).expect("an application packet comes from a rank");
        debug_assert_eq!(src_job, app.job, "application packets stay within their job");
        let sop = low;
        let me = a as u32;
        let ends_message;
        if let Some(m) = mail(&mut self.ends.mail).inbound.get_mut(&(me, src, sop)) {
            m.got += 1;
            ends_message = m.got == m.need;
            if m.got == m.need {
                message_in(st, app.job, t - m.posted);
                if m.recv != UNMATCHED {
                    self.complete(a, src, sop);
                }
            }
        } else {
            // A message's first packet: its envelope and size are the sender's op's.
            let Op::Send { bytes, tag, comm, .. } = job.ops.graph.op(src, sop) else {
                unreachable!("an application packet names a send")
            };
            let rendezvous = !w.eager(bytes, comm);
            let env = Envelope { comm, src, tag };
            let posted = packet.created as u64;
            let seq = if sh.transport.is_some() {
                mail(&mut self.ends.mail).next_in.get(&(me, src)).copied().unwrap_or(0)
            } else {
                packet.app_seq()
            };
            let m = Inbound {
                recv: UNMATCHED,
                got: u32::from(!rendezvous),
                need: w
                    .message_packets(bytes, job.endpoints[src as usize], job.endpoints[app.rank as usize])
                    .packets,
                posted,
                rendezvous,
                seq,
                env,
            };
            // A rendezvous request is a message of one packet.
            ends_message = rendezvous || m.got == m.need;
            if m.got == m.need {
                message_in(st, app.job, t - posted);
            }
            mail(&mut self.ends.mail).inbound.insert((me, src, sop), m);
            let next = mail(&mut self.ends.mail).next_in.entry((me, src)).or_insert(0);
            if seq == *next {
                *next = next.wrapping_add(1) & SEQ_MASK;
                self.deliver_header(sh, a, src, sop, env, ctx, st);
                // The messages of this sender held behind it may now match, in order.
                loop {
                    let room = mail(&mut self.ends.mail);
                    let next = room.next_in.get_mut(&(me, src)).expect("set above");
                    let Some(held) = room.held.remove(&(me, src, *next)) else { break };
                    *next = next.wrapping_add(1) & SEQ_MASK;
                    let env = room.inbound[&(me, src, held)].env;
                    self.deliver_header(sh, a, src, held, env, ctx, st);
                }
            } else {
                mail(&mut self.ends.mail).held.insert((me, src, seq), sop);
            }
        }
        self.run_ranks(sh, ctx, st);
        ends_message
    }

    /// The message of `src`'s send `sop`, of envelope `env`, is matchable at rank `a`: it
    /// matches the earliest posted receive it satisfies, or waits as unexpected.
    #[allow(clippy::too_many_arguments)]
    fn deliver_header(
        &mut self,
        sh: &Shared,
        a: usize,
        src: u32,
        sop: OpId,
        env: Envelope,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        if let Some((_, recv)) = mail(&mut self.ends.mail).matcher.arrive(a as u32, env, (src, sop)) {
            self.matched(sh, a, recv, src, sop, ctx, st);
        }
    }

    /// Receive `recv` of rank `a` matched the message of `src`'s send `sop`: a rendezvous
    /// clears its sender to send; a message whose packets are all in completes.
    #[allow(clippy::too_many_arguments)]
    fn matched(
        &mut self,
        sh: &Shared,
        a: usize,
        recv: OpId,
        src: u32,
        sop: OpId,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let w = workload(sh);
        let t = ctx.now();
        let app = &mut self.ends.apps[a];
        let m = mail(&mut self.ends.mail)
            .inbound
            .get_mut(&(a as u32, src, sop))
            .expect("a matched message has arrived");
        m.recv = recv;
        if m.rendezvous {
            let dst = w.jobs[app.job as usize].endpoints[src as usize];
            let cts = Outgoing::control(dst, w.control_phits(), sop | CLEAR_TO_SEND, m.seq, t);
            self.post(sh, a, cts, ctx, st);
        } else if m.got == m.need {
            self.complete(a, src, sop);
        }
    }

    /// The message of `src`'s send `sop` is wholly in and matched: its receive ends.
    fn complete(&mut self, a: usize, src: u32, sop: OpId) {
        let m = mail(&mut self.ends.mail)
            .inbound
            .remove(&(a as u32, src, sop))
            .expect("a complete message was inbound");
        self.ends.app_work.push_back((a as u32, m.recv, true));
    }

    /// Packets the ranks posted that have not reached their source queues.
    pub(super) fn outbox_packets(&self) -> u64 {
        self.ends.apps.iter().map(|a| a.unsent() as u64).sum()
    }

    /// Unfinished ranks that are computing or sending (a `calc` or a send running).
    pub(super) fn busy_ranks(&self) -> u64 {
        self.ends.apps.iter().filter(|a| !a.done && (a.calcs > 0 || a.sends > 0)).count() as u64
    }

    /// The ranks that have not finished at `now`, with what they wait for.
    pub(super) fn stalled_ranks(&self, sh: &Shared, now: u64) -> Vec<StalledRank> {
        let Some(w) = &sh.workload else { return Vec::new() };
        // Per rank, the messages that arrived and that no receive has taken.
        let mut unexpected = vec![0u32; self.ends.apps.len()];
        for (&(a, _, _), m) in self.ends.mail.iter().flat_map(|room| room.inbound.iter()) {
            if m.recv == UNMATCHED {
                unexpected[a as usize] += 1;
            }
        }
        self.ends
            .apps
            .iter()
            .enumerate()
            .filter(|(_, app)| !app.done)
            .map(|(a, app)| {
                let g = &*w.jobs[app.job as usize].ops.graph;
                let mut waits = Vec::new();
                let mut receives = 0;
                for (k, &phase) in app.phase.iter().enumerate() {
                    if phase & PHASE != STARTED {
                        continue;
                    }
                    let op = app.base + k as OpId;
                    let name = g.op_name(app.rank, op);
                    let what = match g.op(app.rank, op) {
                        Op::Recv { from, tag, comm, .. } => {
                            receives += 1;
                            format!(
                                "{name} waits for a message from {}, {}, comm {comm}",
                                source(from),
                                tag_text(tag)
                            )
                        }
                        Op::Send { to, .. } if sh.transport.is_some() => {
                            let dst = w.jobs[app.job as usize].endpoints[to as usize];
                            let failure = self.ends.mail.as_ref().and_then(|m| m.transports[a].failure(dst));
                            match failure {
                                Some(why) => {
                                    format!("{name} (send to rank {to}) will never be acknowledged: {why}")
                                }
                                None => format!("{name} (send to rank {to}) waits for its acknowledgement"),
                            }
                        }
                        Op::Send { to, bytes, comm, .. } if !w.eager(bytes, comm) => {
                            format!(
                                "{name} (send to rank {to}) waits for its clear-to-send or its data to leave"
                            )
                        }
                        Op::Send { to, .. } => {
                            format!("{name} (send to rank {to}) waits for its packets to leave")
                        }
                        Op::Calc { .. } => format!("{name} computes"),
                    };
                    waits.push(what);
                }
                StalledRank {
                    job: app.job,
                    rank: app.rank,
                    iteration: app.iteration,
                    ops_left: app.left,
                    receives_posted: receives,
                    unexpected: unexpected[a],
                    unsent: self.ends.nics[app.nic as usize].source_queue.len + app.unsent(),
                    computing: app.calcs > 0,
                    computing_cycles: app.computing + if app.calcs > 0 { now - app.since } else { 0 },
                    sending_cycles: app.sending
                        + if app.calcs == 0 && app.sends > 0 { now - app.since } else { 0 },
                    waits: waits.into_iter().take(4).collect::<Vec<_>>().join("; "),
                }
            })
            .collect()
    }
}

fn source(s: Source) -> String {
    match s {
        Source::Rank(r) => format!("rank {r}"),
        Source::Any => "any rank".into(),
    }
}

fn tag_text(t: TagMatch) -> String {
    match t {
        TagMatch::Tag(t) => format!("tag {t}"),
        TagMatch::Any => "any tag".into(),
    }
}

//! Congestion control in the router (the rules are in `crate::congestion`). InfiniBand's:
//! a switch output marks the packets granted to it while congested (FECN), and an endpoint
//! that receives a marked packet sends a notification (CNP) to its source. Per
//! destination: an endpoint whose link is saturated counts its senders and tells each the
//! count (and acknowledges every packet with a window of packets in flight). Either way
//! the source's endpoint spaces the packets of a notified flow, sending the packets of
//! other flows meanwhile.
//!
//! This file is the endpoints' part; the switch's (the marking at the grant, notices
//! forwarded hop by hop) is `cc_switch.rs`.

use super::buffers::{Held, Queue, SourceQueue, NIL};
use super::messages::{Post, SelfEvent};
use super::stats::PartitionStats;
use super::{RouterCtx, RouterState, Shared};
use crate::congestion::{Flow, Notification, PerDestinationCc, Scheme};
use routing::packet::Packet;
use std::collections::{HashMap, VecDeque};
use topology::EndpointId;

/// A notice's `seq` when it acknowledges a packet (per-destination `max_outstanding`)
/// rather than reporting a count.
pub(super) const ACK: u8 = 1;

/// What an endpoint injects next ([`RouterState::cc_pick`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum Pick {
    /// Its oldest pending congestion notification.
    Cnp,
    /// The head of its source queue.
    Head,
    /// Its oldest pending transport acknowledgement (`transport.rs`).
    Control,
    /// The oldest packet held for the notified flow to `dst`.
    Held {
        /// The flow's destination.
        dst: EndpointId,
    },
}

/// An endpoint's congestion control state.
#[derive(Debug, Default)]
pub(super) struct NicCc {
    /// The flows whose state matters, by destination: those notified lately or holding
    /// packets (a flow is forgotten once its state no longer matters).
    flows: HashMap<EndpointId, SourceFlow>,
    /// The data packets sent within the scheme's memory horizon, oldest first: their
    /// destination and when they left (runs end before 2^31 cycles). A notification for a
    /// flow not in `flows` finds its last packet here; eight bytes a packet instead of a
    /// flow record per destination sent to.
    recent: VecDeque<(EndpointId, u32)>,
    /// The flows with packets held, in no order (the few a pick looks through).
    holding: Vec<EndpointId>,
    /// Packets held, over all flows.
    held: u64,
    /// Notifications waiting to be sent, oldest first: they go before data.
    cnps: VecDeque<Packet>,
    /// Flows above which the next notification or hold forgets those whose state no
    /// longer matters (twice those kept at the last pruning, at least 8).
    prune_at: usize,
    /// As a destination, under per-destination throttling: the endpoints sending to it,
    /// counted while it is congested.
    senders: Option<Box<Senders>>,
    /// When the earliest `Wake` pending for a held flow is due (past: none pending).
    wake_at: u64,
    /// As a destination (per destination): phits its link delivered in the current
    /// interval.
    busy_phits: u32,
    /// When that interval ends.
    interval_end: u64,
    /// As a destination under DCQCN: when it last sent each source a CNP.
    last_cnp: HashMap<EndpointId, u64>,
}

impl NicCc {
    /// The state an endpoint's `cc` holds ([`super::Nic::cc_state`]; this form borrows the
    /// field alone, beside the endpoint's queue).
    pub(super) fn of(cc: &mut Option<Box<NicCc>>) -> &mut NicCc {
        cc.as_deref_mut().expect("endpoints have congestion state with congestion control")
    }

    /// Notifications and held packets waiting.
    pub(super) fn waiting_packets(&self) -> u64 {
        self.cnps.len() as u64 + self.held
    }

    /// The flow to `dst`, created if it is not kept, its last packet then taken from the
    /// packets sent lately; flows whose state no longer matters at `t` are forgotten
    /// first whenever their number has doubled.
    fn flow(&mut self, scheme: &Scheme, dst: EndpointId, t: u64, size: u16) -> &mut SourceFlow {
        if self.flows.len() > self.prune_at {
            self.flows.retain(|_, f| !f.queue.is_empty() || !f.flow.idle(scheme, t, size));
            self.prune_at = (2 * self.flows.len()).max(8);
        }
        let recent = &self.recent;
        self.flows.entry(dst).or_insert_with(|| {
            let mut flow = Flow::default();
            if let Some(&(_, at)) = recent.iter().rev().find(|r| r.0 == dst) {
                flow.sent(scheme, at as u64, size);
            }
            SourceFlow { flow, queue: Queue::EMPTY }
        })
    }

    /// Holds the packet in `slot` for the flow to `dst`, behind its older ones.
    fn hold(&mut self, scheme: &Scheme, dst: EndpointId, slot: u32, t: u64, size: u16, slab: &mut [Held]) {
        let f = self.flow(scheme, dst, t, size);
        let first = f.queue.is_empty();
        f.queue.push_back(slot, slab);
        if first {
            self.holding.push(dst);
        }
        self.held += 1;
    }

    /// Releases the oldest packet held for the flow to `dst`.
    fn release(&mut self, dst: EndpointId, slab: &[Held]) -> Option<u32> {
        let f = self.flows.get_mut(&dst)?;
        let slot = f.queue.pop_front(slab)?;
        self.held -= 1;
        if f.queue.is_empty() {
            let i = self.holding.iter().position(|&d| d == dst).expect("a holding flow is listed");
            self.holding.swap_remove(i);
        }
        Some(slot)
    }

    /// The endpoint sent a data packet of `size` phits to `dst` at `t`: a kept flow
    /// remembers it, and so do the packets sent lately for as long as a notification
    /// could still space the flow's next packet from it.
    pub(super) fn sent(&mut self, scheme: &Scheme, dst: EndpointId, t: u64, size: u16) {
        if scheme.tracks_every_flow() {
            self.flow(scheme, dst, t, size).flow.sent(scheme, t, size);
        } else if let Some(f) = self.flows.get_mut(&dst) {
            f.flow.sent(scheme, t, size);
        }
        let horizon = scheme.memory_horizon(size);
        if horizon == 0 {
            return;
        }
        while self.recent.front().is_some_and(|r| r.1 as u64 + horizon < t) {
            self.recent.pop_front();
        }
        self.recent.push_back((dst, t as u32));
    }

    /// Whether notifications or held packets wait.
    pub(super) fn has_waiting(&self) -> bool {
        !self.cnps.is_empty() || self.held > 0
    }
}

/// A flow at its source: its state and its packets that wait for its delay, in order.
#[derive(Clone, Copy)]
struct SourceFlow {
    flow: Flow,
    queue: SourceQueue,
}

impl std::fmt::Debug for SourceFlow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.queue.len;
        f.debug_struct("SourceFlow").field("flow", &self.flow).field("held", &held).finish()
    }
}

/// A destination's count of the endpoints sending to it (per-destination throttling),
/// kept from the interval that finds it congested until one whose link keeps up with no
/// sender throttled.
#[derive(Debug, Default)]
pub(super) struct Senders {
    /// The senders whose last packet arrived within the window as of the last sweep, and
    /// those that came since: the count.
    by_source: HashMap<EndpointId, Sender>,
    /// When the next sweep forgets the senders that fell out of the window.
    next_sweep: u64,
}

/// One sender to a congested destination: when its last packet arrived, and the count
/// it was last told (0: not throttled) and when.
#[derive(Clone, Copy, Debug)]
struct Sender {
    last_seen: u64,
    told: u32,
    told_at: u64,
}

impl RouterState {
    /// Congestion control at the endpoint `nic_index` a packet reached: a notification
    /// slows its flow (the flow to the notification's sender). InfiniBand: a marked packet
    /// is answered with a notification to its source, as a packet or outside the buffers.
    /// Per destination: the sender is counted while the endpoint is congested, and told
    /// how many send.
    pub(super) fn cc_on_delivery(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let Some(scheme) = &sh.cc else { return };
        if packet.is_cnp() {
            self.cc_notify(sh, nic_index, packet.src(), 0, false, ctx, st);
            return;
        }
        let cc = match scheme {
            Scheme::InfiniBand(cc) => cc,
            Scheme::PerDestination(cc) => return self.count_sender(sh, cc, nic_index, packet, ctx),
            Scheme::Dcqcn(cc) => {
                // The notification point: at most one CNP per flow per `cnp_interval`, sent
                // outside the buffers (a priority of its own, as RoCE fabrics give CNPs).
                if !packet.fecn() {
                    return;
                }
                let t = ctx.now();
                let nic = &mut self.ends.nics[nic_index as usize];
                let endpoint = nic.endpoint;
                let last = nic.cc_state().last_cnp.entry(packet.src()).or_insert(u64::MAX);
                if *last != u64::MAX && t < *last + cc.cnp_interval {
                    return;
                }
                *last = t;
                return self.send_notice(sh, nic_index, Packet::cnp(endpoint, packet.src(), 1, t), ctx);
            }
        };
        if !packet.fecn() {
            return;
        }
        let t = ctx.now();
        let nic = &mut self.ends.nics[nic_index as usize];
        let cnp = Packet::cnp(nic.endpoint, packet.src(), cc.cnp_size, t);
        match cc.notification {
            Notification::Packet => {
                nic.cc_state().cnps.push_back(cnp);
                st.generated_total += 1;
                st.period.control_packets += 1;
                self.try_inject(sh, nic_index, ctx, st);
            }
            Notification::Direct => self.send_notice(sh, nic_index, cnp, ctx),
        }
    }

    /// Sends `notice` from endpoint `nic_index` outside the buffers, along the routing's
    /// route.
    fn send_notice(&mut self, sh: &Shared, nic_index: u16, mut notice: Packet, ctx: &mut RouterCtx<'_>) {
        let port = self.ends.nics[nic_index as usize].port;
        let (src_switch, dst_switch) = (self.id, sh.endpoints.locate(notice.dst).0);
        sh.routes.routing.init(src_switch, dst_switch, &mut notice.route, &mut self.rng);
        self.forward_notice(sh, port, notice, ctx);
    }

    /// Per-destination throttling at endpoint `nic_index`, which `packet` reached: the
    /// endpoint is congested while its link carried at least `busy` of the last
    /// `interval`, and counts the endpoints that sent to it within the window until no
    /// sender is throttled and its link keeps up. It tells a sender the count whenever what
    /// it reports differs from what it told that sender last (from `min_senders` on, 0
    /// below), and again once a window; a sender that falls out of the window is told 0. A
    /// notice travels outside the buffers and carries the count in its length field (it
    /// takes no room, so the field is free).
    fn count_sender(
        &mut self,
        sh: &Shared,
        cc: &PerDestinationCc,
        nic_index: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
    ) {
        let t = ctx.now();
        let size = sh.params.packet_size;
        let endpoint = self.ends.nics[nic_index as usize].endpoint;
        let mut notices = std::mem::take(&mut self.ends.notice_scratch);
        if cc.max_outstanding > 0 {
            // Acknowledge the packet (first: a notice that follows may release the flow).
            let mut ack = Packet::cnp(endpoint, packet.src(), 0, t);
            ack.seq = ACK;
            self.send_notice(sh, nic_index, ack, ctx);
        }
        let state = self.ends.nics[nic_index as usize].cc_state();
        if t >= state.interval_end {
            // An interval ended: the endpoint is congested while its link was busy enough
            // in the last one (an interval without packets is not).
            let interval = cc.interval as u64;
            let congested = t < state.interval_end + interval && cc.congested(state.busy_phits);
            if congested && state.senders.is_none() {
                state.senders = Some(Box::default());
            } else if !congested
                && state.senders.as_ref().is_some_and(|s| s.by_source.values().all(|s| s.told == 0))
            {
                // The link keeps up and no sender is throttled: stop counting. (Throttled
                // senders are counted on until they fall out of the window or their count
                // below `min_senders`: releasing them all at once would send what they
                // hold in one burst.)
                state.senders = None;
            }
            state.interval_end = (t / interval + 1) * interval;
            state.busy_phits = 0;
        }
        state.busy_phits += packet.size as u32;
        if let Some(senders) = state.senders.as_mut() {
            let count = senders.by_source.len() as u32;
            let window = cc.window_cycles(count.max(cc.min_senders as u32), size);
            let from = packet.src();
            if t >= senders.next_sweep {
                // Forget the senders that fell out of the window (releasing those that were
                // throttled, in the order of their endpoints: the map's is arbitrary), but
                // not this packet's: it is here.
                let first = notices.len();
                senders.by_source.retain(|&sender, s| {
                    let keep = s.last_seen + window >= t || sender == from;
                    if !keep && s.told != 0 {
                        notices.push((sender, 0));
                    }
                    keep
                });
                notices[first..].sort_unstable();
                senders.next_sweep = t + (window / 2).max(1);
            }
            let count = senders.by_source.len() as u32 + !senders.by_source.contains_key(&from) as u32;
            let fresh = Sender { last_seen: t, told: 0, told_at: 0 };
            let sender = senders.by_source.entry(from).or_insert(fresh);
            sender.last_seen = t;
            let reported = cc.reported(count);
            // Told again once a window: a source's throttle lapses when it falls silent for
            // a window, which the destination may not see in time (its packets' latencies
            // differ), and a notice may overtake an older one on another path.
            if reported != sender.told || (reported != 0 && sender.told_at + window <= t) {
                sender.told = reported;
                sender.told_at = t;
                notices.push((from, reported));
            }
        }
        for &(to, count) in &notices {
            let notice = Packet::cnp(endpoint, to, count.min(u16::MAX as u32) as u16, t);
            self.send_notice(sh, nic_index, notice, ctx);
        }
        notices.clear();
        self.ends.notice_scratch = notices;
    }

    /// A notification from endpoint `from` reaches endpoint `nic_index`, reporting
    /// `senders` (per destination), or an acknowledgement (`ack`): the flow to `from` slows
    /// (or is released, or has one packet fewer in flight). Per destination the endpoint
    /// then tries to send: the flow may go sooner.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cc_notify(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        from: EndpointId,
        senders: u16,
        ack: bool,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let Some(scheme) = &sh.cc else { return };
        let (t, size) = (ctx.now(), sh.params.packet_size);
        let state = self.ends.nics[nic_index as usize].cc_state();
        let flow = &mut state.flow(scheme, from, t, size).flow;
        if ack {
            flow.acknowledged();
        } else {
            flow.notify(scheme, senders, t, size);
            st.period.notifications += 1;
        }
        if let Scheme::PerDestination(_) = scheme {
            self.try_inject(sh, nic_index, ctx, st);
        }
    }

    /// Endpoint `nic_index` holds a flow that may send at `wake` (`u64::MAX`: only an
    /// acknowledgement opens its window, and that tries again): a `Wake` then, unless one
    /// is due by then already.
    pub(super) fn cc_wake_at(&mut self, nic_index: u16, wake: u64, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        let state = self.ends.nics[nic_index as usize].cc_state();
        if wake == u64::MAX || (state.wake_at > t && state.wake_at <= wake) {
            return;
        }
        state.wake_at = wake;
        ctx.schedule_self(wake - t, SelfEvent::Wake { nic: nic_index });
    }

    /// What endpoint `nic_index` injects next at `t`: a notification; else the oldest
    /// packet of a notified flow whose delay has passed (earliest ready first, then the
    /// lowest destination); else the head of its source queue, once the packets of
    /// notified flows that must still wait are moved from the head to their flow's own
    /// queue (an HCA's queue pair per destination: a slowed flow does not hold up the
    /// others). `Err(when)` if nothing may go before `when`. An endpoint that runs an
    /// application rank sends in order (its rank counts its packets out in that order):
    /// its head waits for its flow.
    pub(super) fn cc_pick(&mut self, cc: &Scheme, size: u16, nic_index: u16, t: u64) -> Result<Pick, u64> {
        let nic = &mut self.ends.nics[nic_index as usize];
        let in_order = nic.app != NIL;
        let state = NicCc::of(&mut nic.cc);
        if !state.cnps.is_empty() {
            return Ok(Pick::Cnp);
        }
        let mut wake = u64::MAX;
        let mut best: Option<(u64, EndpointId)> = None;
        for &dst in &state.holding {
            let f = &state.flows[&dst];
            if !f.flow.window_open(cc) {
                // Until an acknowledgement comes (it tries again then).
                continue;
            }
            let ready = f.flow.next_send(cc, t, size);
            if ready <= t {
                if best.is_none_or(|b| (ready, dst) < b) {
                    best = Some((ready, dst));
                }
            } else {
                // Until then, or until the timer shortens the delay.
                wake = wake.min(ready).min(f.flow.next_step(cc, t));
            }
        }
        if let Some((_, dst)) = best {
            return Ok(Pick::Held { dst });
        }
        while let Some(slot) = nic.source_queue.front() {
            let dst = self.slab[slot as usize].packet.dst;
            let Some(f) = state.flows.get(&dst) else { return Ok(Pick::Head) };
            let ready = f.flow.next_send(cc, t, size);
            let open = f.flow.window_open(cc);
            if ready <= t && f.queue.is_empty() && open {
                return Ok(Pick::Head);
            }
            // Until then, or the timer's next step; a full window waits for an
            // acknowledgement, which tries again.
            let until = if open { ready.min(f.flow.next_step(cc, t)).max(t + 1) } else { u64::MAX };
            if in_order {
                return Err(until);
            }
            // The flow must wait (or has older packets waiting): the packet joins them.
            nic.source_queue.pop_front(&self.slab);
            state.hold(cc, dst, slot, t, size, &mut self.slab);
            wake = wake.min(until);
        }
        Err(wake)
    }

    /// The length of what `pick` names at endpoint `nic_index`.
    pub(super) fn picked_size(&self, nic_index: u16, pick: Pick) -> u16 {
        let nic = &self.ends.nics[nic_index as usize];
        let state = || nic.cc.as_ref().expect("a pick other than the head comes from congestion control");
        let slot = match pick {
            Pick::Cnp => return state().cnps.front().expect("a notification waits").size,
            Pick::Control => return self.transport_control_size(nic_index),
            Pick::Head => nic.source_queue.front(),
            Pick::Held { dst } => state().flows.get(&dst).and_then(|f| f.queue.front()),
        };
        self.slab[slot.expect("a packet waits") as usize].packet.size
    }

    /// Takes what `pick` names out of endpoint `nic_index`'s queues.
    pub(super) fn take_picked(&mut self, nic_index: u16, pick: Pick) -> Packet {
        if let Pick::Control = pick {
            return self.transport_take_control(nic_index);
        }
        let nic = &mut self.ends.nics[nic_index as usize];
        let slot = match pick {
            Pick::Head => nic.source_queue.pop_front(&self.slab),
            Pick::Control => unreachable!("an acknowledgement is taken above"),
            Pick::Cnp | Pick::Held { .. } => {
                let state =
                    nic.cc.as_mut().expect("a pick other than the head comes from congestion control");
                match pick {
                    Pick::Held { dst } => state.release(dst, &self.slab),
                    _ => return state.cnps.pop_front().expect("a notification waits"),
                }
            }
        };
        let slot = slot.expect("a packet waits");
        self.free_slots.push(slot);
        self.slab[slot as usize].packet
    }
}

//! InfiniBand congestion control in the router (the rules are in `crate::congestion`): a
//! switch output marks the packets granted to it while congested (FECN), an endpoint that
//! receives a marked packet sends a notification (CNP) to its source, and the source's
//! endpoint spaces the packets of a notified flow by the table's delay, sending the
//! packets of other flows meanwhile.

use super::buffers::{NIL, STALLED};
use super::messages::{LinkMsg, Post, SelfEvent};
use super::stats::PartitionStats;
use super::{RouterCtx, RouterState, Shared};
use crate::congestion::{Flow, InfiniBandCc, Notification};
use routing::packet::Packet;
use std::collections::{HashMap, VecDeque};
use topology::{EndpointId, PortId};

/// What an endpoint injects next ([`RouterState::cc_pick`]).
#[derive(Clone, Copy, Debug)]
pub(super) enum Pick {
    /// Its oldest pending congestion notification.
    Cnp,
    /// The packet of its source queue after slot `prev` (`NIL`: the head).
    Data {
        /// The slot before it in the queue.
        prev: u32,
    },
    /// The oldest packet held for the notified flow to `dst`.
    Held {
        /// The flow's destination.
        dst: EndpointId,
    },
}

/// An endpoint's congestion control state.
#[derive(Debug, Default)]
pub(super) struct NicCc {
    /// The flows it was notified about, by destination (dropped when their delay is
    /// back to 0 and nothing of theirs waits).
    pub(super) flows: HashMap<EndpointId, NotifiedFlow>,
    /// Notifications waiting to be sent, oldest first: they go before data.
    pub(super) cnps: VecDeque<Packet>,
    /// Flows above which the next send forgets those whose state no longer matters.
    prune_at: usize,
}

impl NicCc {
    /// Notifications and held packets waiting.
    pub(super) fn waiting_packets(&self) -> u64 {
        self.cnps.len() as u64 + self.flows.values().map(|f| f.queue.len() as u64).sum::<u64>()
    }

    /// The endpoint sent a data packet of `size` phits to `dst` at `t`: the flow remembers
    /// it (a notification that comes later spaces the next packet from this one). Flows
    /// whose state no longer matters are forgotten whenever the map has doubled.
    pub(super) fn sent(&mut self, cc: &InfiniBandCc, dst: EndpointId, t: u64, size: u16) {
        self.flows.entry(dst).or_default().flow.sent(t);
        if self.flows.len() > self.prune_at {
            self.flows.retain(|_, f| !f.queue.is_empty() || !f.flow.idle(cc, t, size));
            self.prune_at = (2 * self.flows.len()).max(64);
        }
    }

    /// Whether notifications or held packets wait.
    pub(super) fn has_waiting(&self) -> bool {
        !self.cnps.is_empty() || self.flows.values().any(|f| !f.queue.is_empty())
    }
}

/// A notified flow at its source: its state and its packets that wait for its delay, in
/// order (slab slots).
#[derive(Debug, Default)]
pub(super) struct NotifiedFlow {
    pub(super) flow: Flow,
    pub(super) queue: VecDeque<u32>,
}

impl RouterState {
    /// The packet in `slot` was granted to output `o`, its VC's buffer at `out_vc` now
    /// holding it: mark it if the output is congested (a notification is never marked).
    pub(super) fn mark_if_congested(
        &mut self,
        sh: &Shared,
        o: PortId,
        out_vc: usize,
        slot: u32,
        st: &mut PartitionStats,
    ) {
        let Some(cc) = &sh.cc else { return };
        let packet = &mut self.slab[slot as usize].packet;
        if packet.is_cnp() {
            return;
        }
        if self.cc_countdown.is_empty() {
            self.cc_countdown = vec![0; self.ports.len()];
        }
        let port = &self.ports[o as usize];
        // An output waiting for downstream credits is a victim, not the root.
        let waits = !port.leads_to_nic() && port.flags & STALLED != 0;
        if cc.marks(self.channels[out_vc].used as u32, waits, &mut self.cc_countdown[o as usize])
            && !packet.fecn()
        {
            packet.set_fecn();
            st.period.marked_packets += 1;
        }
    }

    /// Congestion control at the endpoint `nic_index` a packet reached: a notification
    /// slows its flow (the flow to the notification's sender); a marked packet is answered
    /// with a notification to its source, as a packet or outside the buffers.
    pub(super) fn cc_on_delivery(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        packet: &Packet,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let Some(cc) = &sh.cc else { return };
        if packet.is_cnp() {
            self.cc_notify(sh, nic_index, packet.src(), ctx.now(), st);
            return;
        }
        if !packet.fecn() {
            return;
        }
        let t = ctx.now();
        let nic = &mut self.nics[nic_index as usize];
        let cnp = Packet::cnp(nic.endpoint, packet.src(), cc.cnp_size, t);
        match cc.notification {
            Notification::Packet => {
                nic.cc
                    .as_mut()
                    .expect("endpoints have congestion state with congestion control")
                    .cnps
                    .push_back(cnp);
                st.generated_total += 1;
                self.try_inject(sh, nic_index, ctx, st);
            }
            Notification::Direct => {
                let port = nic.port;
                let mut notice = cnp;
                let (src_switch, dst_switch) = (self.id, sh.endpoints.locate(notice.dst).0);
                sh.routes.routing.init(src_switch, dst_switch, &mut notice.route, &mut self.rng);
                self.forward_notice(sh, port, notice, ctx);
            }
        }
    }

    /// A notification from endpoint `from` reaches endpoint `nic_index` at `t`: the flow
    /// to `from` slows.
    pub(super) fn cc_notify(
        &mut self,
        sh: &Shared,
        nic_index: u16,
        from: EndpointId,
        t: u64,
        st: &mut PartitionStats,
    ) {
        let Some(cc) = &sh.cc else { return };
        let state = self.nics[nic_index as usize]
            .cc
            .as_mut()
            .expect("endpoints have congestion state with congestion control");
        state.flows.entry(from).or_default().flow.notify(cc, t);
        st.period.notifications += 1;
    }

    /// A notification travelling outside the buffers (`notification = "direct"`) is at
    /// this switch, having come in by `in_port`: on to the next switch over the link the
    /// routing picks (its latency later), or, at the source's switch, to the source after
    /// the two terminal links (the one it left its destination by and this one).
    pub(super) fn forward_notice(
        &mut self,
        sh: &Shared,
        in_port: PortId,
        mut notice: Packet,
        ctx: &mut RouterCtx<'_>,
    ) {
        let (dst_switch, dst_port) = sh.endpoints.locate(notice.dst);
        if dst_switch == self.id {
            let port = &self.ports[dst_port as usize];
            let terminal = port.route.latency();
            ctx.schedule_self(2 * terminal, SelfEvent::Notify { nic: port.nic, from: notice.src() });
            return;
        }
        let Some(next) = self.route_notice(sh, in_port, dst_switch, &mut notice, ctx.now()) else { return };
        let port = &self.ports[next.port as usize];
        ctx.send_link(port.route, LinkMsg::Notice { port: port.peer_port, packet: notice });
    }

    /// What endpoint `nic_index` injects next at `t`: a notification; else the oldest
    /// packet of a notified flow whose delay has passed (earliest ready first, then the
    /// lowest destination); else the head of its source queue, once the packets of
    /// notified flows that must still wait are moved from the head to their flow's own
    /// queue (an HCA's queue pair per destination: a slowed flow does not hold up the
    /// others). `Err(when)` if nothing may go before `when`. An endpoint that runs an
    /// application rank sends in order (its rank counts its packets out in that order):
    /// its head waits for its flow.
    pub(super) fn cc_pick(&mut self, sh: &Shared, nic_index: u16, t: u64) -> Result<Pick, u64> {
        let cc = sh.cc.as_ref().expect("congestion control is on");
        let size = sh.params.packet_size;
        let nic = &mut self.nics[nic_index as usize];
        let in_order = nic.app != NIL;
        let state = nic.cc.as_mut().expect("endpoints have congestion state with congestion control");
        if !state.cnps.is_empty() {
            return Ok(Pick::Cnp);
        }
        let mut wake = u64::MAX;
        let mut best: Option<(u64, EndpointId)> = None;
        for (&dst, f) in &state.flows {
            if f.queue.is_empty() {
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
            let Some(f) = state.flows.get_mut(&dst) else { return Ok(Pick::Data { prev: NIL }) };
            let ready = f.flow.next_send(cc, t, size);
            if ready <= t && f.queue.is_empty() {
                return Ok(Pick::Data { prev: NIL });
            }
            let until = ready.min(f.flow.next_step(cc, t)).max(t + 1);
            if in_order {
                return Err(until);
            }
            // The flow must wait (or has older packets waiting): the packet joins them.
            nic.source_queue.pop_front(&self.slab);
            f.queue.push_back(slot);
            wake = wake.min(until);
        }
        Err(wake)
    }
}

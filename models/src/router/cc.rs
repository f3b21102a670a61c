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
    /// The head of its source queue.
    Head,
    /// The oldest packet held for the notified flow to `dst`.
    Held {
        /// The flow's destination.
        dst: EndpointId,
    },
}

/// An endpoint's congestion control state.
#[derive(Debug, Default)]
pub(super) struct NicCc {
    /// Its flows, by destination: those it sent to lately or was notified about (a flow
    /// is forgotten once neither its delay nor its last packet matters and nothing of it
    /// waits).
    flows: HashMap<EndpointId, SourceFlow>,
    /// The flows with packets held, in no order (the few a pick looks through).
    holding: Vec<EndpointId>,
    /// Packets held, over all flows.
    held: u64,
    /// Notifications waiting to be sent, oldest first: they go before data.
    cnps: VecDeque<Packet>,
    /// Flows above which the next send forgets those whose state no longer matters.
    prune_at: usize,
}

impl NicCc {
    /// Notifications and held packets waiting.
    pub(super) fn waiting_packets(&self) -> u64 {
        self.cnps.len() as u64 + self.held
    }

    /// Holds the packet in `slot` for the flow to `dst`, behind its older ones.
    fn hold(&mut self, dst: EndpointId, slot: u32) {
        let f = self.flows.entry(dst).or_default();
        if f.queue.is_empty() {
            self.holding.push(dst);
        }
        f.queue.push_back(slot);
        self.held += 1;
    }

    /// Releases the oldest packet held for the flow to `dst`.
    fn release(&mut self, dst: EndpointId) -> Option<u32> {
        let f = self.flows.get_mut(&dst)?;
        let slot = f.queue.pop_front()?;
        self.held -= 1;
        if f.queue.is_empty() {
            let i = self.holding.iter().position(|&d| d == dst).expect("a holding flow is listed");
            self.holding.swap_remove(i);
        }
        Some(slot)
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
        !self.cnps.is_empty() || self.held > 0
    }
}

/// A flow at its source: its state and its packets that wait for its delay, in order
/// (slab slots).
#[derive(Debug, Default)]
struct SourceFlow {
    flow: Flow,
    queue: VecDeque<u32>,
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
        for &dst in &state.holding {
            let f = &state.flows[&dst];
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
            if ready <= t && f.queue.is_empty() {
                return Ok(Pick::Head);
            }
            let until = ready.min(f.flow.next_step(cc, t)).max(t + 1);
            if in_order {
                return Err(until);
            }
            // The flow must wait (or has older packets waiting): the packet joins them.
            nic.source_queue.pop_front(&self.slab);
            state.hold(dst, slot);
            wake = wake.min(until);
        }
        Err(wake)
    }

    /// The length of what `pick` names at endpoint `nic_index`.
    pub(super) fn picked_size(&self, nic_index: u16, pick: Pick) -> u16 {
        let nic = &self.nics[nic_index as usize];
        let state = || nic.cc.as_ref().expect("a pick other than the head comes from congestion control");
        let slot = match pick {
            Pick::Cnp => return state().cnps.front().expect("a notification waits").size,
            Pick::Head => nic.source_queue.front(),
            Pick::Held { dst } => state().flows.get(&dst).and_then(|f| f.queue.front().copied()),
        };
        self.slab[slot.expect("a packet waits") as usize].packet.size
    }

    /// Takes what `pick` names out of endpoint `nic_index`'s queues.
    pub(super) fn take_picked(&mut self, nic_index: u16, pick: Pick) -> Packet {
        let nic = &mut self.nics[nic_index as usize];
        let slot = match pick {
            Pick::Head => nic.source_queue.pop_front(&self.slab),
            Pick::Cnp | Pick::Held { .. } => {
                let state =
                    nic.cc.as_mut().expect("a pick other than the head comes from congestion control");
                match pick {
                    Pick::Held { dst } => state.release(dst),
                    _ => return state.cnps.pop_front().expect("a notification waits"),
                }
            }
        };
        let slot = slot.expect("a packet waits");
        self.free_slots.push(slot);
        self.slab[slot as usize].packet
    }
}

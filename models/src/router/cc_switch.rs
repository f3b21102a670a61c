//! Congestion control at the switch (the endpoints' part is `cc.rs`): an output marks the
//! packets granted to it while congested (InfiniBand's FECN), and notifications that
//! travel outside the buffers are forwarded hop by hop.

use super::buffers::STALLED;
use super::cc::ACK;
use super::messages::{LinkMsg, Post, SelfEvent};
use super::stats::PartitionStats;
use super::{RouterCtx, RouterState, Shared};
use crate::congestion::Scheme;
use routing::packet::Packet;
use topology::PortId;

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
        if self.id < sh.first_fabric_switch {
            // A GPU or its scale-up switch: a node's insides mark nothing.
            return;
        }
        if let Some(nscc) = sh.nscc.as_ref() {
            // ECN for NSCC: the same RED, up to every packet at kmax.
            // Marked by the queue ahead of the packet, as a queue that marks on dequeue.
            return self.mark_red(|used, size| nscc.mark_probability(used - size), out_vc, slot, st);
        }
        if let Some(cc) = sh.cc.as_ref().and_then(Scheme::dcqcn) {
            return self.mark_red(|used, _| cc.mark_probability(used), out_vc, slot, st);
        }
        let Some(cc) = sh.cc.as_ref().and_then(Scheme::infiniband) else { return };
        let packet = &mut self.slab[slot as usize].packet;
        if packet.is_cnp() || packet.is_transport_ack() {
            return;
        }
        if self.sw.cc_countdown.is_empty() {
            self.sw.cc_countdown = vec![0; self.sw.ports.len()];
        }
        let port = &self.sw.ports[o as usize];
        // An output waiting for downstream credits is a victim, not the root.
        let waits = !port.leads_to_nic() && port.flags & STALLED != 0;
        if cc.marks(self.sw.channels[out_vc].used as u32, waits, &mut self.sw.cc_countdown[o as usize])
            && !packet.fecn()
        {
            packet.set_fecn();
            st.period.marked_packets += 1;
        }
    }

    /// DCQCN's congestion point, and ECN for NSCC: the packet in `slot`, granted to output
    /// VC `out_vc`, is marked with RED's `probability` given what that VC then holds and
    /// the packet's size (drawn from the router's stream, so the same on any partitioning).
    fn mark_red(
        &mut self,
        probability: impl Fn(u32, u32) -> f64,
        out_vc: usize,
        slot: u32,
        st: &mut PartitionStats,
    ) {
        let packet = &self.slab[slot as usize].packet;
        if packet.is_cnp() || packet.is_transport_ack() || packet.fecn() {
            return;
        }
        let p = probability(self.sw.channels[out_vc].used as u32, packet.size as u32);
        if p > 0.0 && (p >= 1.0 || base::rng::unit(&mut self.rng) < p) {
            self.slab[slot as usize].packet.set_fecn();
            st.period.marked_packets += 1;
        }
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
            let port = &self.sw.ports[dst_port as usize];
            let terminal = port.route.latency();
            let (senders, ack) = (notice.size, notice.seq == ACK);
            ctx.schedule_self(
                2 * terminal,
                SelfEvent::Notify { nic: port.nic, from: notice.src(), senders, ack },
            );
            return;
        }
        let Some(next) = self.route_notice(sh, in_port, dst_switch, &mut notice, ctx.now()) else { return };
        let port = &self.sw.ports[next.port as usize];
        ctx.send_link(port.route, LinkMsg::Notice { port: port.peer_port, packet: notice });
    }
}

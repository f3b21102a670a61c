//! Output links: credits arriving from downstream, the link freeing, and sending a packet
//! from an output buffer when the link is free and the downstream input buffer has
//! credits for all of it (to an own endpoint: queueing its delivery).

use super::buffers::{out_vc_bit, STALLED, UNCONNECTED, WAKE_SCHEDULED};
use super::messages::{LinkMsg, Post, SelfEvent};
use super::stats::PartitionStats;
use super::{RouterCtx, RouterState, Shared};
use topology::PortId;

impl RouterState {
    /// Credits for downstream VC `vc` arrive at output `port` ([`LinkMsg::Credit`]).
    #[inline]
    pub(super) fn on_credit(
        &mut self,
        sh: &Shared,
        port: PortId,
        vc: u8,
        phits: u16,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let c = &mut self.sw.channels[port as usize * self.vcs + vc as usize];
        c.credits += phits;
        // A head refused for want of these credits (`credit_check = "crossbar"`).
        let waiter = self.sw.credits_at_crossbar && std::mem::take(&mut c.space_waiter);
        self.sw.ports[port as usize].occupancy -= phits as u32;
        if waiter {
            self.request_allocation(ctx.now(), ctx);
        }
        self.try_transmit(sh, port, ctx, st);
    }

    /// The link of output `port` is free again ([`SelfEvent::LinkFree`]).
    #[inline]
    pub(super) fn on_link_free(
        &mut self,
        sh: &Shared,
        port: PortId,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        self.sw.ports[port as usize].flags &= !WAKE_SCHEDULED;
        if self.settle(port as usize, ctx.now()) {
            self.request_allocation(ctx.now(), ctx);
        }
        self.try_transmit(sh, port, ctx, st);
    }

    /// Sends the next packet of output `o` (link arbitration: round-robin over the VCs
    /// that have a packet and, towards a switch, credits for all of it, unless they were
    /// taken at the crossbar) if the link is free; otherwise makes sure a `LinkFree` event
    /// will come back when it frees.
    pub(super) fn try_transmit(
        &mut self,
        sh: &Shared,
        o: PortId,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let vcs = self.vcs;
        let port = &mut self.sw.ports[o as usize];
        if port.nic == UNCONNECTED {
            return;
        }
        if port.link_busy_until as u64 > t {
            // Come back when the link frees (once).
            if port.flags & WAKE_SCHEDULED == 0 {
                port.flags |= WAKE_SCHEDULED;
                ctx.schedule_self(port.link_busy_until as u64 - t, SelfEvent::LinkFree { port: o });
            }
            return;
        }
        if self.settle(o as usize, t) {
            self.request_allocation(t, ctx);
        }
        let port = &self.sw.ports[o as usize];
        let to_nic = port.leads_to_nic();
        // Towards a switch, the packet needs its credits here unless it took them at the
        // crossbar; it spends them unless the link runs without credits (PFC's gate, or
        // none: `flow.rs`).
        let checks_credits = !to_nic && !port.holds_credits(self.sw.credits_at_crossbar);
        let takes_credits = checks_credits && sh.flow.is_none();
        let start = port.vc_rr as usize;
        let queued = port.out_queued;
        let first = o as usize * vcs;
        let mut chosen = None;
        let mut waiting = false;
        for k in 0..vcs {
            let v = (start + k) % vcs;
            if queued & out_vc_bit(v) == 0 {
                continue;
            }
            let c = &self.sw.channels[first + v];
            if let Some(slot) = c.output.front() {
                if !checks_credits || c.credits >= self.slab[slot as usize].packet.size {
                    chosen = Some(v);
                    break;
                }
                waiting = true;
            }
        }
        let Some(v) = chosen else {
            if waiting {
                self.start_stall(o, t);
            }
            return;
        };
        if self.sw.ports[o as usize].flags & STALLED != 0 {
            self.end_stall(sh, o, t);
        }
        if sh.speeds.is_some() && self.hold_for_tail(sh, o, first + v, ctx) {
            return;
        }
        let slot = self.sw.channels[first + v].output.pop_front(&self.slab).expect("chosen VC has a packet");
        if v < 31 && self.sw.channels[first + v].output.is_empty() {
            self.sw.ports[o as usize].out_queued &= !out_vc_bit(v);
        }
        let packet = self.slab[slot as usize].packet;
        self.release(slot);
        let size = packet.size;
        let serialization = self.serialization(sh, o, size);
        // Replays of copies that went bad hold the link first; under end-to-end recovery a
        // bad packet crosses the link and is dropped there, holding no credits (`errors.rs`).
        let (replay, bad) = match &sh.link_errors {
            Some(errors) if !to_nic && errors.drops() => (0, self.arrives_bad(sh, o, size, t, st)),
            Some(_) if !to_nic => (self.replay_delay(sh, o, size, serialization, t, st), false),
            _ => (0, false),
        };
        let bad = bad || (!to_nic && sh.flaps.is_some() && self.lost_on_down_link(sh, o, size, t, st));
        let takes_credits = takes_credits && !bad;
        let c = &mut self.sw.channels[first + v];
        if takes_credits {
            c.credits -= size;
        }
        let wake = c.space_waiter;
        if takes_credits {
            self.sw.ports[o as usize].occupancy += size as u32;
        }
        let queued = match self.sw.ports[o as usize].out_queued {
            0 => false,
            bits if bits < 1 << 31 => true,
            _ => (first..first + vcs).any(|q| !self.sw.channels[q].output.is_empty()),
        };
        let measured = Self::in_measurement(sh, t);
        if measured && sh.speeds.is_some() && self.sw.ports[o as usize].phits > u32::MAX - size as u32 {
            self.carry_phits(o, st);
        }
        let port = &mut self.sw.ports[o as usize];
        port.vc_rr = ((v + 1) % vcs) as u8;
        port.link_busy_until = (t + replay + serialization) as u32;
        port.pending_vc = v as u8;
        port.pending_phits = size;
        if (wake || queued) && port.flags & WAKE_SCHEDULED == 0 {
            port.flags |= WAKE_SCHEDULED;
            ctx.schedule_self(replay + serialization, SelfEvent::LinkFree { port: o });
        }
        st.departures += 1;
        st.period.link_transmissions += 1;
        if measured {
            port.phits += size as u32;
            if !to_nic {
                if st.vc_phits.len() < vcs {
                    st.vc_phits.resize(vcs, 0);
                }
                st.vc_phits[v] += size as u64;
            }
        }
        let (nic, latency, route, peer_port) = (port.nic, port.route.latency(), port.route, port.peer_port);
        if to_nic {
            // The tail reaches the endpoint `latency + serialization - 1` cycles from now. Nothing
            // can change that, so the delivery is queued here and accounted when its time
            // has passed, without an event, unless packets of different sizes would break
            // the queue's time order.
            let at = t + latency + serialization - 1;
            self.flush_deliveries(sh, t, st);
            // A router running application ranks delivers by events: a rank reacts to a
            // packet when it arrives. So does one with congestion control: an endpoint
            // answers a marked packet.
            if let Err(packet) = self.ends.eject(at, nic, packet, sh.cc.is_some()) {
                ctx.schedule_self(at - t, SelfEvent::Deliver { nic, packet });
            }
        } else if !bad {
            // After the replays, if any (`send_link_after` with 0 is `send_link`).
            ctx.send_link_after(route, replay, LinkMsg::Head { port: peer_port, packet });
        }
    }

    /// Output `o`'s link is free with packets waiting, none with credits: a stall starts
    /// (if none is under way).
    #[cold]
    fn start_stall(&mut self, o: PortId, t: u64) {
        let port = &mut self.sw.ports[o as usize];
        if port.flags & STALLED != 0 {
            return;
        }
        port.flags |= STALLED;
        if self.sw.stalls.is_empty() {
            self.sw.stalls = vec![LinkStall::default(); self.sw.ports.len()];
        }
        self.sw.stalls[o as usize].since = t as u32;
    }

    /// Output `o`'s stall ends at `t` (it sends): its cycles in the measurement window
    /// are counted.
    #[cold]
    fn end_stall(&mut self, sh: &Shared, o: PortId, t: u64) {
        self.sw.ports[o as usize].flags &= !STALLED;
        let stall = &mut self.sw.stalls[o as usize];
        stall.cycles += stall.measured_part(sh, t);
    }
}

/// A link's stalls: cycles it was free with packets waiting and no credits for any of
/// them (InfiniBand's XmitWait counter).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LinkStall {
    /// When the stall under way began.
    pub(super) since: u32,
    /// Stalled cycles in the measurement window, stalls that ended.
    pub(super) cycles: u32,
}

impl LinkStall {
    /// The cycles of the stall under way, from `since` to `t`, inside the measurement
    /// window.
    pub(super) fn measured_part(&self, sh: &Shared, t: u64) -> u32 {
        RouterState::measured_cycles(sh, self.since as u64, t) as u32
    }
}

//! Heads at the router's inputs: their arrival in an input buffer and their routing: the
//! candidates of the routing in force (`Routes::next_hops`) under the router's
//! [`LoadView`], the selection's pick, and the ejection VC of a packet for an own endpoint.

use super::buffers::{Held, PortState, VcState, NETWORK, NIL};
use super::messages::{LinkMsg, Post};
use super::stats::PartitionStats;
use super::{EjectionVc, RouterCtx, RouterState, Shared, Switching};
use routing::packet::Packet;
use routing::{Candidate, Hop, LoadView, Report, REPORT_BYTES};
use topology::{EndpointId, PortId};

/// The occupancy of a router's outputs as the routing and the selection see it
/// ([`LoadView`]), pending buffer releases included.
struct Load<'a> {
    channels: &'a [VcState],
    /// What the neighbours reported over each port (empty if the routing shares nothing).
    reported: &'a [Report],
    /// What the router learned (empty if the routing learns nothing).
    learned: &'a [f32],
    ports: &'a [PortState],
    vcs: usize,
    /// What the routers share: the input buffer phits downstream of each port (by its
    /// link class with links of several speeds, `speeds.rs`).
    sh: &'a Shared,
    /// The switch's index among the rank's.
    local: u32,
    now: u64,
    /// `credit_check = "crossbar"`: output-buffered packets hold downstream credits.
    credits_at_crossbar: bool,
}

impl Load<'_> {
    /// Phits in the output buffer of `vc` at `port`.
    fn buffered(&self, port: PortId, vc: u8) -> u32 {
        let c = &self.channels[port as usize * self.vcs + vc as usize];
        let p = &self.ports[port as usize];
        let released =
            if p.link_busy_until as u64 <= self.now && p.pending_vc == vc { p.pending_phits } else { 0 };
        (c.used - released) as u32
    }

    /// Whether output buffer room and, with credits taken at the crossbar, downstream
    /// credits let a packet of `size` phits be granted to `vc` at `port`.
    fn has_room(&self, port: PortId, vc: u8, size: u32, output_buffer: u32) -> bool {
        self.buffered(port, vc) + size <= output_buffer
            && (!self.holds_credits(port)
                || self.channels[port as usize * self.vcs + vc as usize].credits as u32 >= size)
    }

    /// Whether packets in the output buffers of `port` hold their downstream credits.
    fn holds_credits(&self, port: PortId) -> bool {
        self.ports[port as usize].holds_credits(self.credits_at_crossbar)
    }

    /// Input buffer phits (per VC) at the far end of `port`'s link.
    #[inline]
    fn capacity(&self, port: PortId) -> u32 {
        self.sh.input_capacity(self.local, port)
    }
}

/// The [`Load`] of router state `$state` at `$now`. A macro, not a method, so that the
/// view borrows only the fields it reads and the caller may still change the others (the
/// packet being routed, the random stream).
macro_rules! load_view {
    ($state:expr, $sh:expr, $now:expr) => {
        Load {
            channels: &$state.sw.channels,
            reported: $state.reports.as_ref().map_or(&[], |r| &r.received),
            learned: &$state.learned,
            ports: &$state.sw.ports,
            vcs: $state.vcs,
            sh: $sh,
            local: $state.local,
            now: $now,
            credits_at_crossbar: $state.sw.credits_at_crossbar,
        }
    };
}

impl LoadView for Load<'_> {
    fn vc_occupancy(&self, port: PortId, vc: u8) -> u32 {
        let c = &self.channels[port as usize * self.vcs + vc as usize];
        let credits_in_use = self.capacity(port).saturating_sub(c.credits as u32);
        if self.holds_credits(port) {
            // Output-buffered packets are among the credits in use (BookSim's count).
            credits_in_use
        } else {
            self.buffered(port, vc) + credits_in_use
        }
    }
    fn port_occupancy(&self, port: PortId) -> u32 {
        // The sum over the VCs, kept up to date in the port: one cache line to read.
        let p = &self.ports[port as usize];
        let released = if p.link_busy_until as u64 <= self.now && !self.holds_credits(port) {
            p.pending_phits as u32
        } else {
            0
        };
        debug_assert_eq!(
            p.occupancy - released,
            (0..self.vcs as u8).map(|v| self.vc_occupancy(port, v)).sum::<u32>()
        );
        p.occupancy - released
    }
    fn reported(&self, port: PortId, index: usize) -> u8 {
        self.reported.get(port as usize).map_or(0, |r| r[index])
    }
    fn learned(&self) -> &[f32] {
        self.learned
    }
}

impl RouterState {
    /// A head arriving at input `port` at time `arrival` (now, or later for own endpoints).
    pub(super) fn on_head(
        &mut self,
        sh: &Shared,
        port: PortId,
        packet: Packet,
        arrival: u64,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        // Cycles from the head's arrival to the tail's.
        let tail = match sh.speeds {
            Some(_) => self.serialization(sh, port, packet.size) - 1,
            None => u64::from(packet.size) - 1,
        };
        let ready = arrival
            + sh.params.router_delay
            + if sh.params.switching == Switching::StoreAndForward { tail } else { 0 };
        st.arrivals += 1;
        let input = port as usize * self.vcs + packet.vc as usize;
        if sh.flow.is_some()
            && self.sw.ports[port as usize].nic == NETWORK
            && !self.admit(sh, port, input, packet.size, ctx, st)
        {
            // Dropped: no room under PFC or without flow control (`flow.rs`).
            return;
        }
        let mut packet = packet;
        if !self.learned.is_empty() {
            self.learn_on_arrival(sh, port, &mut packet, arrival, ctx);
        }
        if self.sw.channels[input].input.is_empty() {
            self.sw.channels[input].head_ready = ready;
            self.sw.unrouted.push(input as u32);
            self.sw.ports[port as usize].in_occupied |= 1 << packet.vc;
            // Routed in `router_delay` cycles: let the routing's table entries load meanwhile.
            self.prefetch_route(sh, packet.dst);
        }
        // A held packet's tail is read only with links of several speeds.
        let tail = if sh.speeds.is_some() { tail as u32 } else { 0 };
        let slot = self.store(Held { packet, ready, next: NIL, tail });
        self.sw.channels[input].input.push_back(slot, &mut self.slab);
        debug_assert!(
            self.sw.channels[input].input.len as u32 <= self.input_capacity(sh, port),
            "input buffer {input} of switch {} overflows: flow control violated",
            self.id
        );
        self.sw.waiting += 1;
        self.request_allocation(ready, ctx);
        self.wake_reports(ctx);
    }

    /// A routing that learns sees the head arrive: it stamps the packet and may tell the
    /// upstream router what it measured, over the link the packet came by.
    #[cold]
    fn learn_on_arrival(
        &mut self,
        sh: &Shared,
        port: PortId,
        packet: &mut Packet,
        now: u64,
        ctx: &mut RouterCtx<'_>,
    ) {
        let dst = sh.endpoints.locate(packet.dst).0;
        if let Some(feedback) = sh.routes.routing.on_arrive(self.id, port, dst, packet, now, &self.learned) {
            let input = &self.sw.ports[port as usize];
            ctx.send_link(input.route, LinkMsg::Feedback { port: input.peer_port, feedback });
        }
    }

    /// What the routing reports of this router's state now ([`routing::Routing::report`]).
    pub(super) fn current_report(&self, sh: &Shared, now: u64) -> Report {
        let load = load_view!(self, sh, now);
        let mut report = [0; REPORT_BYTES];
        sh.routes.routing.report(self.id, &load, &mut report);
        report
    }

    /// Hints the routing that a head for endpoint `dst` will be routed here soon
    /// ([`routing::Routing::prefetch`]); when it is delivered here, asks for the
    /// terminal port's records, which the ejection reads.
    #[inline]
    pub(super) fn prefetch_route(&self, sh: &Shared, dst: EndpointId) {
        let (dst_switch, dst_port) = sh.endpoints.locate(dst);
        if dst_switch != self.id {
            sh.routes.routing.prefetch(self.id, dst_switch);
        } else {
            let first = dst_port as usize * self.vcs;
            engine::prefetch(&self.sw.ports[dst_port as usize]);
            engine::prefetch_all(&self.sw.channels[first..first + self.vcs]);
        }
    }

    /// Routes the head of an input VC: candidates, VC policy, selection. With an escape
    /// subnetwork, or when blocked heads re-select (`router.reselect`), only candidates
    /// whose output VC has room for the packet are considered (SurePath's "if it satisfies
    /// flow-control requirements", Camarero et al. 2024, section 3.2; CAMINOS's routers
    /// likewise choose among the candidates with room, and drop those whose output VC is
    /// being fed from another input), and `None` means none has: the
    /// head is routed again later, so a packet blocked in the routing VCs can still take
    /// the escape (Duato).
    pub(super) fn route(
        &mut self,
        sh: &Shared,
        input: usize,
        now: u64,
        candidates: &mut Vec<Candidate>,
    ) -> Option<Candidate> {
        let slot = self.sw.channels[input].input.front().expect("head") as usize;
        let dst_endpoint = self.slab[slot].packet.dst;
        let (dst_switch, dst_port) = sh.endpoints.locate(dst_endpoint);
        if dst_switch == self.id {
            let size = self.slab[slot].packet.size as u32;
            return Some(Candidate {
                port: dst_port,
                vc: self.ejection_vc(sh, dst_port, size, now),
                penalty: 0,
            });
        }
        let load = load_view!(self, sh, now);
        let head = &mut self.slab[slot].packet;
        let hop = Hop {
            ports: sh.ports.of(self.local as usize),
            at: self.id,
            in_port: (input / self.vcs) as PortId,
            dst: dst_switch,
            vcs: self.vcs as u8,
        };
        sh.routes.next_hops(&hop, head, &load, &mut self.rng, candidates);
        let flow = sh.flow(head, self.id);
        // The selection reads each candidate's port and VC records: let the misses overlap.
        for c in candidates.iter() {
            engine::prefetch(&self.sw.ports[c.port as usize]);
            let record = c.port as usize * self.vcs + c.vc as usize;
            engine::prefetch_all(&self.sw.channels[record..record + 1]);
        }
        if sh.routes.escape.is_some() || sh.params.reselect {
            let size = head.size as u32;
            let local = self.local;
            // An output VC the crossbar is feeding from another input is taken too.
            let taken = |c: &Candidate| self.vc_output_taken(c.port, c.vc, now);
            candidates.retain(|c| {
                load.has_room(c.port, c.vc, size, sh.output_capacity(local, c.port)) && !taken(c)
            });
            if candidates.is_empty() {
                return None;
            }
        }
        Some(sh.selection.pick(candidates, &load, &mut self.rng, flow))
    }

    /// With the per-VC crossbar: whether output VC `vc` of `port` is being fed from an
    /// input until after `now` (never with the per-port crossbar).
    #[inline]
    fn vc_output_taken(&self, port: PortId, vc: u8, now: u64) -> bool {
        self.sw.vc_out_busy.get(port as usize * self.vcs + vc as usize).is_some_and(|&b| b as u64 > now)
    }

    /// The next hop of a congestion notification travelling outside the buffers
    /// (`cc.rs`), arrived at input `in_port` on its way to switch `dst`: the routing's
    /// candidates under this router's load and the selection's pick, as for a head;
    /// `None` if the routing has none (a notification then is lost).
    pub(super) fn route_notice(
        &mut self,
        sh: &Shared,
        in_port: PortId,
        dst: topology::SwitchId,
        packet: &mut Packet,
        now: u64,
    ) -> Option<Candidate> {
        let load = load_view!(self, sh, now);
        let hop =
            Hop { ports: sh.ports.of(self.local as usize), at: self.id, in_port, dst, vcs: self.vcs as u8 };
        let mut candidates = std::mem::take(&mut self.sw.notice_candidates);
        candidates.clear();
        if !sh.routes.try_next_hops(&hop, packet, &load, &mut self.rng, &mut candidates)
            || candidates.is_empty()
        {
            self.sw.notice_candidates = candidates;
            return None;
        }
        let chosen = sh.selection.pick(&candidates, &load, &mut self.rng, sh.flow(packet, self.id));
        self.sw.notice_candidates = candidates;
        sh.routes.on_forward(self.id, chosen, packet);
        packet.hops = packet.hops.saturating_add(1);
        packet.vc = chosen.vc;
        Some(chosen)
    }

    /// The output VC a packet for an own endpoint at terminal port `port` is moved into:
    /// 0, or with `ejection_vc = "any"` one chosen at random among the VCs with room for
    /// the packet (and, with the per-VC crossbar, a free crossbar output), 0 if none has.
    fn ejection_vc(&mut self, sh: &Shared, port: PortId, size: u32, now: u64) -> u8 {
        if sh.params.ejection_vc == EjectionVc::Zero {
            return 0;
        }
        let cap = self.output_capacity(sh, port);
        let base = port as usize * self.vcs;
        let mut allowed = 0u64;
        for v in 0..self.vcs.min(64) {
            if self.sw.channels[base + v].used as u32 + size <= cap
                && !self.vc_output_taken(port, v as u8, now)
            {
                allowed |= 1 << v;
            }
        }
        if allowed == 0 {
            return 0;
        }
        let mut pick = base::rng::below(&mut self.rng, allowed.count_ones() as u64);
        let mut bits = allowed;
        while pick > 0 {
            bits &= bits - 1;
            pick -= 1;
        }
        bits.trailing_zeros() as u8
    }
}

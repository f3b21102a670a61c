//! Heads at the router's inputs: their arrival in an input buffer, their routing, and the
//! separable allocator that moves them across the crossbar into output buffers.
//!
//! The allocator runs as a self-event (`Allocate`) at the times heads become ready or a
//! blocked resource frees; it visits only the inputs whose heads are unrouted and the
//! outputs that have requesters. Its scratch space lives once per partition
//! ([`Scratch`], in [`PartitionState`]).

use super::buffers::{out_vc_bit, Held, PortState, VcState, NIL};
use super::messages::{LinkMsg, Post, SelfEvent};
use super::stats::PartitionStats;
use super::{Allocator, Arbitration, Crossbar, EjectionVc, PartitionState, RouterCtx, RouterState, Shared};
use routing::packet::Packet;
use routing::{Candidate, Hop, LoadView};
use topology::{EndpointId, PortId};

/// The allocator's scratch space, reused by every router of a partition: each pass
/// leaves it as it found it.
#[derive(Default)]
pub(super) struct Scratch {
    candidates: Vec<Candidate>,
    /// `(output, input, vc)` requests of the current pass.
    requests: Vec<(PortId, PortId, u8)>,
    /// Per input port: the best `(rank, output, vc)` proposal (input-first) or grant
    /// (output-first) of the current iteration.
    proposal: Vec<(u32, PortId, u8)>,
    /// Per output port: the best `(rank, input, vc)` of the current iteration; once the
    /// output is matched, its match until the grants take effect.
    grant_choice: Vec<(u32, PortId, u8)>,
    /// Per port: whether an earlier iteration of the current pass matched it as an input
    /// and as an output.
    in_matched: Vec<bool>,
    out_matched: Vec<bool>,
    /// Input ports with a proposal (or a grant) in the current iteration.
    touched: Vec<PortId>,
    /// Output ports granting in the current iteration (output-first).
    offers: Vec<PortId>,
    /// Output ports matched in the current pass.
    granted: Vec<PortId>,
    /// With the per-VC crossbar: `(output port * vcs + output VC, round-robin rank, input,
    /// input VC)` of the current pass's requests.
    vc_requests: Vec<(u32, u32, PortId, u8)>,
}

impl Scratch {
    /// Makes the per-port arrays at least `ports` long.
    #[inline]
    fn fit(&mut self, ports: usize) {
        if self.proposal.len() < ports {
            self.proposal.resize(ports, (u32::MAX, 0, 0));
            self.grant_choice.resize(ports, (u32::MAX, 0, 0));
            self.in_matched.resize(ports, false);
            self.out_matched.resize(ports, false);
        }
    }
}

/// One arbiter's offer: port `who`'s slot in `slots` keeps the lowest-ranked `(port, vc)`
/// offered to it, and `who` joins `listed` at its first offer of the iteration.
#[inline]
fn keep_best(
    slots: &mut [(u32, PortId, u8)],
    listed: &mut Vec<PortId>,
    who: PortId,
    rank: u32,
    (port, vc): (PortId, u8),
) {
    let slot = &mut slots[who as usize];
    if slot.0 == u32::MAX {
        listed.push(who);
    }
    if rank < slot.0 {
        *slot = (rank, port, vc);
    }
}

/// Indices of the set bits of `words`, in increasing order.
#[inline]
fn set_bits(words: &[u64]) -> impl Iterator<Item = usize> + '_ {
    words.iter().enumerate().flat_map(|(w, &word)| {
        std::iter::successors((word != 0).then_some(word), |&rest| {
            let rest = rest & (rest - 1);
            (rest != 0).then_some(rest)
        })
        .map(move |bits| w * 64 + bits.trailing_zeros() as usize)
    })
}

/// Index of the first set bit at or after `from`.
#[inline]
fn first_set_bit(words: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    if w >= words.len() {
        return None;
    }
    let mut word = words[w] & (!0u64 << (from % 64));
    loop {
        if word != 0 {
            return Some(w * 64 + word.trailing_zeros() as usize);
        }
        w += 1;
        if w == words.len() {
            return None;
        }
        word = words[w];
    }
}

/// The occupancy of a router's outputs as the routing and the selection see it
/// ([`LoadView`]), pending buffer releases included.
struct Load<'a> {
    channels: &'a [VcState],
    ports: &'a [PortState],
    vcs: usize,
    capacity: u32,
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
}

impl LoadView for Load<'_> {
    fn vc_occupancy(&self, port: PortId, vc: u8) -> u32 {
        let c = &self.channels[port as usize * self.vcs + vc as usize];
        let credits_in_use = self.capacity.saturating_sub(c.credits as u32);
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
}

impl RouterState {
    /// Until when the crossbar input of input VC `input` (`port * vcs + vc`) is busy: its
    /// port's, or with the per-VC crossbar its own.
    #[inline]
    fn input_busy(&self, input: usize) -> u64 {
        if self.vc_in_busy.is_empty() {
            self.ports[input / self.vcs].in_xbar_busy_until as u64
        } else {
            self.vc_in_busy[input] as u64
        }
    }

    /// Makes sure the allocator runs at `at` (once per cycle).
    pub(super) fn request_allocation(&mut self, at: u64, ctx: &mut RouterCtx<'_>) {
        if !self.scheduled_allocations.contains(&at) {
            self.scheduled_allocations.push(at);
            ctx.schedule_self(at - ctx.now(), SelfEvent::Allocate);
        }
    }

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
        let ready = arrival + sh.params.router_delay;
        st.arrivals += 1;
        let input = port as usize * self.vcs + packet.vc as usize;
        if self.channels[input].input.is_empty() {
            self.channels[input].head_ready = ready;
            self.unrouted.push(input as u32);
            self.ports[port as usize].in_occupied |= 1 << packet.vc;
            // Routed in `router_delay` cycles: let the routing's table entries load meanwhile.
            self.prefetch_route(sh, packet.dst);
        }
        let slot = self.store(Held { packet, ready, next: NIL });
        self.channels[input].input.push_back(slot, &mut self.slab);
        debug_assert!(
            self.channels[input].input.len as u32 * sh.params.packet_size as u32 <= sh.params.input_buffer,
            "input buffer {input} of switch {} overflows: flow control violated",
            self.id
        );
        self.waiting += 1;
        self.request_allocation(ready, ctx);
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
            engine::prefetch(&self.ports[dst_port as usize]);
            engine::prefetch_all(&self.channels[first..first + self.vcs]);
        }
    }

    /// Routes the head of an input VC: candidates, VC policy, selection. With an escape
    /// subnetwork, or when blocked heads re-select (`router.reselect`), only candidates
    /// whose output VC has room for the packet are considered (SurePath's "if it satisfies
    /// flow-control requirements", Camarero et al. 2024, section 3.2; CAMINOS's routers
    /// likewise choose among the candidates with room), and `None` means none has: the
    /// head is routed again later, so a packet blocked in the routing VCs can still take
    /// the escape (Duato).
    fn route(
        &mut self,
        sh: &Shared,
        input: usize,
        now: u64,
        candidates: &mut Vec<Candidate>,
    ) -> Option<Candidate> {
        let slot = self.channels[input].input.front().expect("head") as usize;
        let dst_endpoint = self.slab[slot].packet.dst;
        let (dst_switch, dst_port) = sh.endpoints.locate(dst_endpoint);
        if dst_switch == self.id {
            return Some(Candidate { port: dst_port, vc: self.ejection_vc(sh, dst_port, now), penalty: 0 });
        }
        let load = Load {
            channels: &self.channels,
            ports: &self.ports,
            vcs: self.vcs,
            capacity: sh.params.input_buffer,
            now,
            credits_at_crossbar: self.credits_at_crossbar,
        };
        let head = &mut self.slab[slot].packet;
        let hop = Hop {
            ports: sh.ports.of(self.local as usize),
            at: self.id,
            in_port: (input / self.vcs) as PortId,
            dst: dst_switch,
            vcs: self.vcs as u8,
        };
        sh.routes.next_hops(&hop, head, &load, &mut self.rng, candidates);
        // The selection reads each candidate's port and VC records: let the misses overlap.
        for c in candidates.iter() {
            engine::prefetch(&self.ports[c.port as usize]);
            let record = c.port as usize * self.vcs + c.vc as usize;
            engine::prefetch_all(&self.channels[record..record + 1]);
        }
        if sh.routes.escape.is_some() || sh.params.reselect {
            let (size, cap) = (sh.params.packet_size as u32, sh.params.output_buffer);
            candidates.retain(|c| load.has_room(c.port, c.vc, size, cap));
            if candidates.is_empty() {
                return None;
            }
        }
        Some(sh.selection.pick(candidates, &load, &mut self.rng))
    }

    /// The output VC a packet for an own endpoint at terminal port `port` is moved into:
    /// 0, or with `ejection_vc = "any"` one chosen at random among the VCs with room for
    /// the packet (and, with the per-VC crossbar, a free crossbar output), 0 if none has.
    fn ejection_vc(&mut self, sh: &Shared, port: PortId, now: u64) -> u8 {
        if sh.params.ejection_vc == EjectionVc::Zero {
            return 0;
        }
        let (size, cap) = (sh.params.packet_size as u32, sh.params.output_buffer);
        let base = port as usize * self.vcs;
        let mut allowed = 0u64;
        for v in 0..self.vcs.min(64) {
            let busy = self.vc_out_busy.get(base + v).is_some_and(|&b| b as u64 > now);
            if self.channels[base + v].used as u32 + size <= cap && !busy {
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

    /// Separable allocator. Heads that became ready are routed; then every input with a
    /// ready head for a free output proposes one VC (round-robin over its VCs), and every
    /// output grants one proposing input (round-robin over inputs); with
    /// `arbitration = "random"` both choices are uniformly random. Only outputs that have
    /// waiting heads are visited. Whatever could not go now asks for another pass when it
    /// may (`retry_at`).
    pub(super) fn allocate(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let t = ctx.now();
        self.scheduled_allocations.retain(|&x| x != t);
        if self.waiting == 0 {
            return;
        }
        let PartitionState { stats, scratch } = part;
        let mut retry_at = u64::MAX;
        if sh.params.reselect {
            // Heads that lost the last pass choose again among the candidates with room.
            self.unroute_requesters();
            retry_at = t + 1;
        }
        self.route_ready_heads(sh, t, scratch, &mut retry_at);
        self.collect_requests(sh, t, scratch, &mut retry_at);
        let transfer = (sh.params.packet_size as u32).div_ceil(sh.params.speedup as u32) as u64;
        if !self.vc_out_busy.is_empty() {
            self.arbitrate_per_vc(sh, scratch, transfer, &mut retry_at, ctx, stats);
        } else if sh.params.crossbar == Crossbar::OutputQueued {
            scratch.fit(self.ports.len());
            self.grant_output_queued(sh, scratch, transfer, &mut retry_at, ctx, stats);
        } else {
            scratch.fit(self.ports.len());
            self.arbitrate_separable(sh, scratch, transfer, &mut retry_at, ctx, stats);
        }
        if retry_at != u64::MAX && self.waiting > 0 {
            self.request_allocation(retry_at, ctx);
        }
    }

    /// Routes the unrouted heads that can leave now (ready, their input's crossbar port
    /// free), so that adaptive choices see the freshest occupancy, and makes each a
    /// requester of the output it chose.
    fn route_ready_heads(&mut self, sh: &Shared, t: u64, scratch: &mut Scratch, retry_at: &mut u64) {
        // The heads to route and the outputs to arbitrate are visited one after another:
        // ask for their packets and port records first, so that the misses overlap.
        for &input in &self.unrouted {
            if let Some(slot) = self.channels[input as usize].input.front() {
                engine::prefetch(self.slab.as_ptr().wrapping_add(slot as usize));
            }
        }
        for o in set_bits(&self.wanted_outputs) {
            engine::prefetch(&self.ports[o]);
        }
        let mut k = 0;
        while k < self.unrouted.len() {
            let input = self.unrouted[k] as usize;
            let ready = self.channels[input].head_ready;
            let in_busy = self.input_busy(input);
            if ready <= t && in_busy <= t {
                let Some(c) = self.route(sh, input, t, &mut scratch.candidates) else {
                    // No candidate has room (escape subnetwork only): try again next cycle.
                    *retry_at = (*retry_at).min(t + 1);
                    k += 1;
                    continue;
                };
                self.channels[input].choice = Some(c);
                // Join the output's requesters (a list through the VCs, newest first).
                let out = &mut self.ports[c.port as usize];
                self.channels[input].next_requester =
                    std::mem::replace(&mut out.first_requester, input as u32);
                self.wanted_outputs[c.port as usize / 64] |= 1 << (c.port % 64);
                self.unrouted.swap_remove(k);
            } else {
                if ready <= t {
                    *retry_at = (*retry_at).min(in_busy);
                }
                k += 1;
            }
        }
    }

    /// Lists in `scratch.requests` the `(output, input, input VC)` of every requester that
    /// may go now: its output's crossbar port and its input's are free, and the output VC
    /// has room for the packet (and, when grants take credits, the credits). A requester
    /// that must wait either sets `retry_at` or marks the output VC so that freed room
    /// calls the allocator again.
    fn collect_requests(&mut self, sh: &Shared, t: u64, scratch: &mut Scratch, retry_at: &mut u64) {
        let vcs = self.vcs;
        // Ask for the first requester of each output (its VC record and input port).
        for o in set_bits(&self.wanted_outputs) {
            let x = self.ports[o].first_requester;
            if x != NIL {
                engine::prefetch_all(&self.channels[x as usize..x as usize + 1]);
                engine::prefetch(&self.ports[x as usize / vcs]);
            }
        }
        let size = sh.params.packet_size as u32;
        let out_cap = sh.params.output_buffer;
        let requests = &mut scratch.requests;
        requests.clear();
        let mut next = first_set_bit(&self.wanted_outputs, 0);
        while let Some(o) = next {
            next = first_set_bit(&self.wanted_outputs, o + 1);
            let busy = self.ports[o].xbar_busy_until as u64;
            if busy > t {
                *retry_at = (*retry_at).min(busy);
                continue;
            }
            self.settle(o, t);
            let (pending_phits, pending_vc, pending_at) = {
                let p = &self.ports[o];
                (p.pending_phits, p.pending_vc, p.link_busy_until as u64)
            };
            let holds_credits = self.ports[o].holds_credits(self.credits_at_crossbar);
            let mut x = self.ports[o].first_requester;
            while x != NIL {
                let (i, v) = (x as usize / vcs, x as usize % vcs);
                let requester = x as usize;
                x = self.channels[requester].next_requester;
                let in_busy = self.input_busy(requester);
                if in_busy > t {
                    *retry_at = (*retry_at).min(in_busy);
                    continue;
                }
                let vc = self.channels[requester].choice.expect("requesters are routed").vc;
                if let Some(&busy) = self.vc_out_busy.get(o * vcs + vc as usize) {
                    if busy as u64 > t {
                        *retry_at = (*retry_at).min(busy as u64);
                        continue;
                    }
                }
                let out = &mut self.channels[o * vcs + vc as usize];
                if out.used as u32 + size > out_cap {
                    if pending_phits > 0 && pending_vc == vc {
                        *retry_at = (*retry_at).min(pending_at); // room frees when that tail leaves
                    } else {
                        out.space_waiter = true; // the next transmission will call us again
                    }
                    continue;
                }
                if holds_credits && (out.credits as u32) < size {
                    out.space_waiter = true; // the next credits will call us again
                    continue;
                }
                requests.push((o as PortId, i as PortId, v as u8));
            }
        }
    }

    /// The separable allocation of `scratch.requests` (see `separable_allocation`), then
    /// the grants in output order, so that nothing depends on the order in which requests
    /// were listed. The losers, and packets left at a granted input, come back when the
    /// crossbar frees.
    fn arbitrate_separable(
        &mut self,
        sh: &Shared,
        scratch: &mut Scratch,
        transfer: u64,
        retry_at: &mut u64,
        ctx: &mut RouterCtx<'_>,
        stats: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let mut arbiters = Arbiters {
            ports: &self.ports,
            rng: &mut self.rng,
            vcs: self.vcs,
            random: sh.params.arbitration == Arbitration::Random,
        };
        let (allocator, iterations) = (sh.params.allocator, sh.params.allocator_iterations);
        if separable_allocation(scratch, allocator, iterations, &mut arbiters) < scratch.requests.len() {
            *retry_at = (*retry_at).min(t + transfer);
        }
        scratch.granted.sort_unstable();
        for g in 0..scratch.granted.len() {
            let o = scratch.granted[g];
            let (_, i, v) = std::mem::replace(&mut scratch.grant_choice[o as usize], (u32::MAX, 0, 0));
            scratch.in_matched[i as usize] = false;
            scratch.out_matched[o as usize] = false;
            self.grant(sh, o, i, v, transfer, ctx, stats);
            if self.ports[i as usize].in_occupied != 0 {
                *retry_at = (*retry_at).min(t + transfer);
            }
        }
    }

    /// Arbitration of the per-(port, VC) crossbar: every input VC is a crossbar input of
    /// its own, so it needs no input arbitration; each (output port, output VC) grants the
    /// first of its requesters in round-robin order from the output's pointer (input
    /// port, then VC). Grants take effect in (output, output VC) order.
    fn arbitrate_per_vc(
        &mut self,
        sh: &Shared,
        scratch: &mut Scratch,
        transfer: u64,
        retry_at: &mut u64,
        ctx: &mut RouterCtx<'_>,
        stats: &mut PartitionStats,
    ) {
        let (vcs, ports) = (self.vcs, self.ports.len());
        scratch.vc_requests.clear();
        for &(o, i, v) in &scratch.requests {
            let out_vc =
                self.channels[i as usize * vcs + v as usize].choice.expect("requesters are routed").vc;
            let key = (o as usize * vcs + out_vc as usize) as u32;
            let rank = if sh.params.arbitration == Arbitration::Random {
                base::rng::below(&mut self.rng, u32::MAX as u64) as u32
            } else {
                let from = self.ports[o as usize].grant_rr as usize;
                (((i as usize + ports - from) % ports) * vcs + v as usize) as u32
            };
            scratch.vc_requests.push((key, rank, i, v));
        }
        scratch.vc_requests.sort_unstable();
        let mut last = u32::MAX;
        for k in 0..scratch.vc_requests.len() {
            let (key, _, i, v) = scratch.vc_requests[k];
            if key == last {
                // Outvoted: it comes back when the winner's transfer ends.
                *retry_at = (*retry_at).min(ctx.now() + transfer);
                continue;
            }
            last = key;
            self.grant(sh, (key as usize / vcs) as PortId, i, v, transfer, ctx, stats);
        }
    }

    /// The output-queued crossbar: each input port sends the request its arbiter prefers
    /// (one packet at a time, as the port crossbar), and every such request is granted
    /// while its output VC has room, however many go to one output. Inputs are served in
    /// port order, so that several heads for one output VC with room for only some of
    /// them are served in the same order on any partitioning.
    fn grant_output_queued(
        &mut self,
        sh: &Shared,
        scratch: &mut Scratch,
        transfer: u64,
        retry_at: &mut u64,
        ctx: &mut RouterCtx<'_>,
        stats: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let mut arbiters = Arbiters {
            ports: &self.ports,
            rng: &mut self.rng,
            vcs: self.vcs,
            random: sh.params.arbitration == Arbitration::Random,
        };
        scratch.touched.clear();
        for &(o, i, v) in scratch.requests.iter() {
            let rank = arbiters.input_rank(i, v);
            keep_best(&mut scratch.proposal, &mut scratch.touched, i, rank, (o, v));
        }
        if scratch.touched.len() < scratch.requests.len() {
            // The other VCs of an input wait for its crossbar port.
            *retry_at = (*retry_at).min(t + transfer);
        }
        scratch.touched.sort_unstable();
        let (size, cap) = (sh.params.packet_size as u32, sh.params.output_buffer);
        for k in 0..scratch.touched.len() {
            let i = scratch.touched[k];
            let (_, o, v) = std::mem::replace(&mut scratch.proposal[i as usize], (u32::MAX, 0, 0));
            let out_vc =
                self.channels[i as usize * self.vcs + v as usize].choice.expect("requesters are routed").vc;
            let holds_credits = self.ports[o as usize].holds_credits(self.credits_at_crossbar);
            let out = &mut self.channels[o as usize * self.vcs + out_vc as usize];
            if out.used as u32 + size > cap || (holds_credits && (out.credits as u32) < size) {
                out.space_waiter = true; // an earlier input of this pass took the room
                continue;
            }
            self.grant(sh, o, i, v, transfer, ctx, stats);
            if self.ports[i as usize].in_occupied != 0 {
                *retry_at = (*retry_at).min(t + transfer);
            }
        }
    }

    /// Takes every routed head off its output's requesters and back among the unrouted
    /// ones (outputs in increasing order, each output's requesters in list order).
    fn unroute_requesters(&mut self) {
        for w in 0..self.wanted_outputs.len() {
            let mut word = std::mem::take(&mut self.wanted_outputs[w]);
            while word != 0 {
                let o = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let mut x = std::mem::replace(&mut self.ports[o].first_requester, NIL);
                while x != NIL {
                    let requester = &mut self.channels[x as usize];
                    requester.choice = None;
                    self.unrouted.push(x);
                    x = requester.next_requester;
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    /// Moves the head of input `i`, VC `v`, across the crossbar into output `o`'s chosen
    /// VC: crossbar ports busy for `transfer` cycles, credits back upstream, and the
    /// output link tries to send it.
    fn grant(
        &mut self,
        sh: &Shared,
        o: PortId,
        i: PortId,
        v: u8,
        transfer: u64,
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let vcs = self.vcs;
        let input = i as usize * vcs + v as usize;
        let slot = self.channels[input].input.pop_front(&self.slab).expect("requested head");
        let choice = self.channels[input].choice.take().expect("granted heads are routed");
        // Leave the output's requesters.
        let after = self.channels[input].next_requester;
        let first = &mut self.ports[o as usize].first_requester;
        if *first as usize == input {
            *first = after;
        } else {
            let mut x = *first;
            while self.channels[x as usize].next_requester as usize != input {
                x = self.channels[x as usize].next_requester;
                assert!(x != NIL, "granted input {input} did not request output {o}");
            }
            self.channels[x as usize].next_requester = after;
        }
        if self.ports[o as usize].first_requester == NIL {
            self.wanted_outputs[o as usize / 64] &= !(1 << (o % 64));
        }
        match self.channels[input].input.front() {
            Some(next) => {
                self.channels[input].head_ready = self.slab[next as usize].ready;
                self.unrouted.push(input as u32);
                // Routed once the crossbar input is free again.
                self.prefetch_route(sh, self.slab[next as usize].packet.dst);
            }
            None => {
                self.channels[input].head_ready = u64::MAX;
                self.ports[i as usize].in_occupied &= !(1 << v);
            }
        }
        self.waiting -= 1;
        let ports = self.ports.len() as PortId;
        let per_vc_crossbar = !self.vc_in_busy.is_empty();
        if per_vc_crossbar {
            self.vc_in_busy[input] = (t + transfer) as u32;
            self.vc_out_busy[o as usize * vcs + choice.vc as usize] = (t + transfer) as u32;
        }
        let in_port = &mut self.ports[i as usize];
        in_port.in_vc_rr = (v + 1) % vcs as u8;
        if !per_vc_crossbar {
            in_port.in_xbar_busy_until = (t + transfer) as u32;
        }
        let (in_to_nic, in_nic, in_latency, in_route, in_peer) =
            (in_port.leads_to_nic(), in_port.nic, in_port.route.latency(), in_port.route, in_port.peer_port);
        let out = &mut self.ports[o as usize];
        if !per_vc_crossbar && sh.params.crossbar != Crossbar::OutputQueued {
            out.xbar_busy_until = (t + transfer) as u32;
        }
        out.grant_rr = (i + 1) % ports;
        let to_nic = out.leads_to_nic();
        let packet = &mut self.slab[slot as usize].packet;
        let size = packet.size;
        let in_vc = packet.vc;
        if !to_nic {
            sh.routes.on_forward(self.id, choice, packet);
            packet.hops += 1;
        }
        packet.vc = choice.vc;
        // Credits for the freed input buffer go back upstream.
        if in_to_nic {
            let back = t + in_latency;
            let ret = (back, in_nic, in_vc, size);
            // Terminal links share one latency, so returns arrive in the order they leave;
            // keep the queue in time order whatever happens.
            match self.nic_credit_returns.back() {
                Some(last) if last.0 > back => {
                    let at = self.nic_credit_returns.partition_point(|r| r.0 <= back);
                    self.nic_credit_returns.insert(at, ret);
                }
                _ => self.nic_credit_returns.push_back(ret),
            }
            let nic = &mut self.nics[in_nic as usize];
            if nic.blocked_on_credits && !nic.inject_scheduled {
                nic.inject_scheduled = true;
                ctx.schedule_self(back - t, SelfEvent::Inject { nic: in_nic });
            }
        } else {
            ctx.send_link(in_route, LinkMsg::Credit { port: in_peer, vc: in_vc, phits: size });
        }
        let out_vc = o as usize * vcs + choice.vc as usize;
        self.channels[out_vc].used += size;
        if self.ports[o as usize].holds_credits(self.credits_at_crossbar) {
            // The packet takes its downstream credits now; it is counted as them.
            self.channels[out_vc].credits -= size;
        }
        self.ports[o as usize].occupancy += size as u32;
        self.channels[out_vc].output.push_back(slot, &mut self.slab);
        self.ports[o as usize].out_queued |= out_vc_bit(choice.vc as usize);
        self.try_transmit(sh, o, ctx, st);
    }
}

/// The priorities of a separable allocator's arbiters: the smaller rank wins.
trait Priorities {
    /// Of VC `vc` at input port `input`, among that input's requests.
    fn input_rank(&mut self, input: PortId, vc: u8) -> u32;
    /// Of input port `input`'s VC `vc` at output port `output`, among that output's
    /// requests.
    fn output_rank(&mut self, output: PortId, input: PortId, vc: u8) -> u32;
}

/// A router's arbiters: round-robin from the ports' pointers (an input's over its VCs, an
/// output's over the input ports, then their VCs), or uniformly random draws.
struct Arbiters<'a> {
    ports: &'a [PortState],
    rng: &'a mut base::rng::Rng,
    vcs: usize,
    random: bool,
}

impl Arbiters<'_> {
    /// Distance of VC `vc` from input `input`'s pointer.
    fn vc_distance(&self, input: PortId, vc: u8) -> usize {
        (vc as usize + self.vcs - self.ports[input as usize].in_vc_rr as usize) % self.vcs
    }
}

impl Priorities for Arbiters<'_> {
    fn input_rank(&mut self, input: PortId, vc: u8) -> u32 {
        if self.random {
            base::rng::below(self.rng, 1 << 15) as u32
        } else {
            self.vc_distance(input, vc) as u32
        }
    }
    fn output_rank(&mut self, output: PortId, input: PortId, vc: u8) -> u32 {
        if self.random {
            base::rng::below(self.rng, 1 << 15) as u32
        } else {
            let ports = self.ports.len();
            let from = self.ports[output as usize].grant_rr as usize;
            (((input as usize + ports - from) % ports) * self.vcs + self.vc_distance(input, vc)) as u32
        }
    }
}

/// The separable allocator of the port crossbar: matches `scratch.requests` (`(output,
/// input, input VC)`) so that each input port and each output port takes part in at most
/// one match, in up to `iterations` iterations of `allocator`'s two arbitrations; later
/// iterations consider only the ports earlier ones left unmatched. Leaves the matched
/// outputs in `scratch.granted`, each one's `(rank, input, VC)` in `scratch.grant_choice`
/// and the matched ports marked in `in_matched`/`out_matched` (the caller clears both
/// as it applies the grants); returns the number of matches.
fn separable_allocation(
    scratch: &mut Scratch,
    allocator: Allocator,
    iterations: u8,
    arbiters: &mut impl Priorities,
) -> usize {
    scratch.granted.clear();
    for _ in 0..iterations {
        let before = scratch.granted.len();
        match allocator {
            Allocator::InputFirst => {
                // Each free input proposes its best request to a free output...
                scratch.touched.clear();
                for &(o, i, v) in scratch.requests.iter() {
                    if scratch.in_matched[i as usize] || scratch.out_matched[o as usize] {
                        continue;
                    }
                    let rank = arbiters.input_rank(i, v);
                    keep_best(&mut scratch.proposal, &mut scratch.touched, i, rank, (o, v));
                }
                // ...and each output grants its best proposal.
                for &i in &scratch.touched {
                    let (_, o, v) = std::mem::replace(&mut scratch.proposal[i as usize], (u32::MAX, 0, 0));
                    let rank = arbiters.output_rank(o, i, v);
                    keep_best(&mut scratch.grant_choice, &mut scratch.granted, o, rank, (i, v));
                }
            }
            Allocator::OutputFirst => {
                // Each free output grants its best request from a free input...
                scratch.offers.clear();
                for &(o, i, v) in scratch.requests.iter() {
                    if scratch.in_matched[i as usize] || scratch.out_matched[o as usize] {
                        continue;
                    }
                    let rank = arbiters.output_rank(o, i, v);
                    keep_best(&mut scratch.grant_choice, &mut scratch.offers, o, rank, (i, v));
                }
                // ...each input accepts its best grant...
                scratch.touched.clear();
                for &o in &scratch.offers {
                    let (_, i, v) = scratch.grant_choice[o as usize];
                    let rank = arbiters.input_rank(i, v);
                    keep_best(&mut scratch.proposal, &mut scratch.touched, i, rank, (o, v));
                }
                for &i in &scratch.touched {
                    let (_, o, _) = std::mem::replace(&mut scratch.proposal[i as usize], (u32::MAX, 0, 0));
                    scratch.out_matched[o as usize] = true;
                    scratch.granted.push(o);
                }
                // ...and the grants not accepted are withdrawn.
                for &o in &scratch.offers {
                    if !scratch.out_matched[o as usize] {
                        scratch.grant_choice[o as usize] = (u32::MAX, 0, 0);
                    }
                }
            }
        }
        for g in before..scratch.granted.len() {
            let o = scratch.granted[g] as usize;
            scratch.out_matched[o] = true;
            scratch.in_matched[scratch.grant_choice[o].1 as usize] = true;
        }
        if scratch.granted.len() == before || scratch.granted.len() == scratch.requests.len() {
            break;
        }
    }
    scratch.granted.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_bits_lists_what_first_set_bit_finds() {
        let words = [0x8000_0000_0000_0001u64, 0, 0b1010_0000, u64::MAX];
        let mut expected = Vec::new();
        let mut next = first_set_bit(&words, 0);
        while let Some(b) = next {
            expected.push(b);
            next = first_set_bit(&words, b + 1);
        }
        assert_eq!(&expected[..4], &[0, 63, 133, 135]);
        assert_eq!(expected.len(), 4 + 64);
        assert_eq!(set_bits(&words).collect::<Vec<_>>(), expected);
        assert_eq!(set_bits(&[0, 0]).count(), 0);
    }

    /// Round-robin arbiters whose pointers all stand at 0, with `VCS` VCs per port.
    struct AtZero;
    const VCS: u32 = 4;
    impl Priorities for AtZero {
        fn input_rank(&mut self, _input: PortId, vc: u8) -> u32 {
            vc as u32
        }
        fn output_rank(&mut self, _output: PortId, input: PortId, vc: u8) -> u32 {
            input as u32 * VCS + vc as u32
        }
    }

    /// The `(output, input, vc)` matches of `requests` among `ports` ports.
    fn matches(
        requests: &[(PortId, PortId, u8)],
        allocator: Allocator,
        iterations: u8,
    ) -> Vec<(PortId, PortId, u8)> {
        let mut scratch = Scratch::default();
        scratch.fit(8);
        scratch.requests = requests.to_vec();
        let n = separable_allocation(&mut scratch, allocator, iterations, &mut AtZero);
        let mut out: Vec<_> = scratch
            .granted
            .iter()
            .map(|&o| {
                let (_, i, v) = scratch.grant_choice[o as usize];
                (o, i, v)
            })
            .collect();
        assert_eq!(out.len(), n);
        out.sort_unstable();
        // A matching of requests: every port at most once on each side.
        for (k, m) in out.iter().enumerate() {
            assert!(requests.contains(m), "{m:?} was not requested");
            assert!(out[k + 1..].iter().all(|x| x.0 != m.0 && x.1 != m.1), "{out:?} is not a matching");
            assert!(scratch.out_matched[m.0 as usize] && scratch.in_matched[m.1 as usize]);
        }
        out
    }

    #[test]
    fn iterations_and_output_first_match_what_one_input_first_pass_leaves() {
        // Inputs 0 and 1 both want output 5 on VC 0; input 1 also wants output 6 on VC 1.
        let requests = [(5, 0, 0), (5, 1, 0), (6, 1, 1)];
        // One input-first pass: both inputs propose VC 0 to output 5, which takes input 0;
        // input 1's request for output 6 waits for the next pass.
        assert_eq!(matches(&requests, Allocator::InputFirst, 1), vec![(5, 0, 0)]);
        // A second iteration matches it.
        assert_eq!(matches(&requests, Allocator::InputFirst, 2), vec![(5, 0, 0), (6, 1, 1)]);
        // Output-first: output 5 grants input 0, output 6 grants input 1; both accept.
        assert_eq!(matches(&requests, Allocator::OutputFirst, 1), vec![(5, 0, 0), (6, 1, 1)]);
    }

    #[test]
    fn enough_iterations_leave_no_request_with_both_ends_free() {
        // Every input requests every output on some VC: a complete 4x4 bipartite graph,
        // where a matching with no request left between two free ports has 4 matches.
        let mut requests = Vec::new();
        for i in 0..4u16 {
            for o in 4..8u16 {
                requests.push((o, i, ((i + o) % VCS as u16) as u8));
            }
        }
        for allocator in [Allocator::InputFirst, Allocator::OutputFirst] {
            let m = matches(&requests, allocator, 8);
            assert_eq!(m.len(), 4, "{allocator:?}: {m:?}");
            // One iteration matches at least one pair.
            assert!(!matches(&requests, allocator, 1).is_empty());
        }
    }
}

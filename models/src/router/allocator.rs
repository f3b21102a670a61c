//! The allocator that moves routed heads across the crossbar into output buffers: its
//! passes (route the ready heads (`route.rs`), collect the requests that may go, arbitrate
//! them (`separable.rs`, or per VC, or output-queued)) and the grants.
//!
//! The allocator runs as a self-event (`Allocate`) at the times heads become ready or a
//! blocked resource frees; it visits only the inputs whose heads are unrouted and the
//! outputs that have requesters. Its scratch space lives once per partition
//! ([`Scratch`], in [`PartitionState`]).

use super::buffers::{out_vc_bit, NIL};
use super::messages::{LinkMsg, Post, SelfEvent};
use super::separable::{keep_best, separable_allocation, Arbiters, Priorities, Scratch};
use super::stats::PartitionStats;
use super::{Arbitration, Crossbar, PartitionState, RouterCtx, RouterState, Shared};
use topology::PortId;

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

impl RouterState {
    /// Until when the crossbar input of input VC `input` (`port * vcs + vc`) is busy: its
    /// port's, or with the per-VC crossbar its own.
    #[inline]
    fn input_busy(&self, input: usize) -> u64 {
        if self.sw.vc_in_busy.is_empty() {
            self.sw.ports[input / self.vcs].in_xbar_busy_until as u64
        } else {
            self.sw.vc_in_busy[input] as u64
        }
    }

    /// Makes sure the allocator runs at `at` (once per cycle).
    pub(super) fn request_allocation(&mut self, at: u64, ctx: &mut RouterCtx<'_>) {
        if !self.sw.scheduled_allocations.contains(&at) {
            self.sw.scheduled_allocations.push(at);
            ctx.schedule_self(at - ctx.now(), SelfEvent::Allocate);
        }
    }

    /// Separable allocator. Heads that became ready are routed; then every input with a
    /// ready head for a free output proposes one VC (round-robin over its VCs), and every
    /// output grants one proposing input (round-robin over inputs); with
    /// `arbitration = "random"` both choices are uniformly random. Only outputs that have
    /// waiting heads are visited. Whatever could not go now asks for another pass when it
    /// may (`retry_at`).
    pub(super) fn allocate(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let t = ctx.now();
        self.sw.scheduled_allocations.retain(|&x| x != t);
        if self.sw.waiting == 0 {
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
        if !self.sw.vc_out_busy.is_empty() {
            self.arbitrate_per_vc(sh, scratch, &mut retry_at, ctx, stats);
        } else if sh.params.crossbar == Crossbar::OutputQueued {
            scratch.fit(self.sw.ports.len());
            self.grant_output_queued(sh, scratch, &mut retry_at, ctx, stats);
        } else {
            scratch.fit(self.sw.ports.len());
            self.arbitrate_separable(sh, scratch, &mut retry_at, ctx, stats);
        }
        if retry_at != u64::MAX && self.sw.waiting > 0 {
            self.request_allocation(retry_at, ctx);
        }
    }

    /// Routes the unrouted heads that can leave now (ready, their input's crossbar port
    /// free), so that adaptive choices see the freshest occupancy, and makes each a
    /// requester of the output it chose.
    fn route_ready_heads(&mut self, sh: &Shared, t: u64, scratch: &mut Scratch, retry_at: &mut u64) {
        // The heads to route and the outputs to arbitrate are visited one after another:
        // ask for their packets and port records first, so that the misses overlap.
        for &input in &self.sw.unrouted {
            if let Some(slot) = self.sw.channels[input as usize].input.front() {
                engine::prefetch(self.slab.as_ptr().wrapping_add(slot as usize));
            }
        }
        for o in set_bits(&self.sw.wanted_outputs) {
            engine::prefetch(&self.sw.ports[o]);
        }
        let mut k = 0;
        while k < self.sw.unrouted.len() {
            let input = self.sw.unrouted[k] as usize;
            let ready = self.sw.channels[input].head_ready;
            let in_busy = self.input_busy(input);
            if ready <= t && in_busy <= t {
                let Some(c) = self.route(sh, input, t, &mut scratch.candidates) else {
                    // No candidate has room (escape subnetwork only): try again next cycle.
                    *retry_at = (*retry_at).min(t + 1);
                    k += 1;
                    continue;
                };
                self.sw.channels[input].choice = Some(c);
                // Join the output's requesters (a list through the VCs, newest first).
                let out = &mut self.sw.ports[c.port as usize];
                self.sw.channels[input].next_requester =
                    std::mem::replace(&mut out.first_requester, input as u32);
                self.sw.wanted_outputs[c.port as usize / 64] |= 1 << (c.port % 64);
                self.sw.unrouted.swap_remove(k);
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
        for o in set_bits(&self.sw.wanted_outputs) {
            let x = self.sw.ports[o].first_requester;
            if x != NIL {
                engine::prefetch_all(&self.sw.channels[x as usize..x as usize + 1]);
                engine::prefetch(&self.sw.ports[x as usize / vcs]);
            }
        }
        let requests = &mut scratch.requests;
        requests.clear();
        let mut next = first_set_bit(&self.sw.wanted_outputs, 0);
        while let Some(o) = next {
            next = first_set_bit(&self.sw.wanted_outputs, o + 1);
            let out_cap = self.output_capacity(sh, o as PortId);
            let busy = self.sw.ports[o].xbar_busy_until as u64;
            if busy > t {
                *retry_at = (*retry_at).min(busy);
                continue;
            }
            self.settle(o, t);
            let (pending_phits, pending_vc, pending_at) = {
                let p = &self.sw.ports[o];
                (p.pending_phits, p.pending_vc, p.link_busy_until as u64)
            };
            let holds_credits = self.sw.ports[o].holds_credits(self.sw.credits_at_crossbar);
            let mut x = self.sw.ports[o].first_requester;
            while x != NIL {
                let (i, v) = (x as usize / vcs, x as usize % vcs);
                let requester = x as usize;
                x = self.sw.channels[requester].next_requester;
                let in_busy = self.input_busy(requester);
                if in_busy > t {
                    *retry_at = (*retry_at).min(in_busy);
                    continue;
                }
                let vc = self.sw.channels[requester].choice.expect("requesters are routed").vc;
                let size = self.head_size(requester);
                if let Some(&busy) = self.sw.vc_out_busy.get(o * vcs + vc as usize) {
                    if busy as u64 > t {
                        *retry_at = (*retry_at).min(busy as u64);
                        continue;
                    }
                }
                let out = &mut self.sw.channels[o * vcs + vc as usize];
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
        retry_at: &mut u64,
        ctx: &mut RouterCtx<'_>,
        stats: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let mut arbiters = Arbiters {
            ports: &self.sw.ports,
            rng: &mut self.rng,
            vcs: self.vcs,
            random: sh.params.arbitration == Arbitration::Random,
        };
        let (allocator, iterations) = (sh.params.allocator, sh.params.allocator_iterations);
        let losers =
            separable_allocation(scratch, allocator, iterations, &mut arbiters) < scratch.requests.len();
        scratch.granted.sort_unstable();
        // The losers, and the packets left at a granted input, come back when the first
        // crossbar port frees (every transfer is as long with packets of one length).
        let mut first_free = u64::MAX;
        for g in 0..scratch.granted.len() {
            let o = scratch.granted[g];
            let (_, i, v) = std::mem::replace(&mut scratch.grant_choice[o as usize], (u32::MAX, 0, 0));
            scratch.in_matched[i as usize] = false;
            scratch.out_matched[o as usize] = false;
            let transfer = self.grant(sh, o, i, v, ctx, stats);
            if losers || self.sw.ports[i as usize].in_occupied != 0 {
                first_free = first_free.min(t + transfer);
            }
        }
        if losers && first_free == u64::MAX {
            first_free = t + nominal_transfer(sh);
        }
        *retry_at = (*retry_at).min(first_free);
    }

    /// Arbitration of the per-(port, VC) crossbar: every input VC is a crossbar input of
    /// its own, so it needs no input arbitration; each (output port, output VC) grants the
    /// first of its requesters in round-robin order from the output's pointer (input
    /// port, then VC). Grants take effect in (output, output VC) order.
    fn arbitrate_per_vc(
        &mut self,
        sh: &Shared,
        scratch: &mut Scratch,
        retry_at: &mut u64,
        ctx: &mut RouterCtx<'_>,
        stats: &mut PartitionStats,
    ) {
        let (vcs, ports) = (self.vcs, self.sw.ports.len());
        scratch.vc_requests.clear();
        for &(o, i, v) in &scratch.requests {
            let out_vc =
                self.sw.channels[i as usize * vcs + v as usize].choice.expect("requesters are routed").vc;
            let key = (o as usize * vcs + out_vc as usize) as u32;
            let rank = if sh.params.arbitration == Arbitration::Random {
                base::rng::below(&mut self.rng, u32::MAX as u64) as u32
            } else {
                let from = self.sw.ports[o as usize].grant_rr as usize;
                (((i as usize + ports - from) % ports) * vcs + v as usize) as u32
            };
            scratch.vc_requests.push((key, rank, i, v));
        }
        scratch.vc_requests.sort_unstable();
        let (mut last, mut winner_ends) = (u32::MAX, 0);
        for k in 0..scratch.vc_requests.len() {
            let (key, _, i, v) = scratch.vc_requests[k];
            if key == last {
                // Outvoted: it comes back when the winner's transfer ends.
                *retry_at = (*retry_at).min(winner_ends);
                continue;
            }
            last = key;
            winner_ends = ctx.now() + self.grant(sh, (key as usize / vcs) as PortId, i, v, ctx, stats);
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
        retry_at: &mut u64,
        ctx: &mut RouterCtx<'_>,
        stats: &mut PartitionStats,
    ) {
        let t = ctx.now();
        let mut arbiters = Arbiters {
            ports: &self.sw.ports,
            rng: &mut self.rng,
            vcs: self.vcs,
            random: sh.params.arbitration == Arbitration::Random,
        };
        scratch.touched.clear();
        for &(o, i, v) in scratch.requests.iter() {
            let rank = arbiters.input_rank(i, v);
            keep_best(&mut scratch.proposal, &mut scratch.touched, i, rank, (o, v));
        }
        // The other VCs of an input wait for its crossbar port.
        let waiting_vcs = scratch.touched.len() < scratch.requests.len();
        scratch.touched.sort_unstable();
        let mut first_free = u64::MAX;
        for k in 0..scratch.touched.len() {
            let i = scratch.touched[k];
            let (_, o, v) = std::mem::replace(&mut scratch.proposal[i as usize], (u32::MAX, 0, 0));
            let cap = self.output_capacity(sh, o);
            let input = i as usize * self.vcs + v as usize;
            let out_vc = self.sw.channels[input].choice.expect("requesters are routed").vc;
            let size = self.head_size(input);
            let holds_credits = self.sw.ports[o as usize].holds_credits(self.sw.credits_at_crossbar);
            let out = &mut self.sw.channels[o as usize * self.vcs + out_vc as usize];
            if out.used as u32 + size > cap || (holds_credits && (out.credits as u32) < size) {
                out.space_waiter = true; // an earlier input of this pass took the room
                continue;
            }
            let transfer = self.grant(sh, o, i, v, ctx, stats);
            if waiting_vcs || self.sw.ports[i as usize].in_occupied != 0 {
                first_free = first_free.min(t + transfer);
            }
        }
        if waiting_vcs && first_free == u64::MAX {
            first_free = t + nominal_transfer(sh);
        }
        *retry_at = (*retry_at).min(first_free);
    }

    /// Takes every routed head off its output's requesters and back among the unrouted
    /// ones (outputs in increasing order, each output's requesters in list order).
    fn unroute_requesters(&mut self) {
        for w in 0..self.sw.wanted_outputs.len() {
            let mut word = std::mem::take(&mut self.sw.wanted_outputs[w]);
            while word != 0 {
                let o = w * 64 + word.trailing_zeros() as usize;
                word &= word - 1;
                let mut x = std::mem::replace(&mut self.sw.ports[o].first_requester, NIL);
                while x != NIL {
                    let requester = &mut self.sw.channels[x as usize];
                    requester.choice = None;
                    self.sw.unrouted.push(x);
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
        ctx: &mut RouterCtx<'_>,
        st: &mut PartitionStats,
    ) -> u64 {
        let t = ctx.now();
        let vcs = self.vcs;
        let input = i as usize * vcs + v as usize;
        let slot = self.sw.channels[input].input.pop_front(&self.slab).expect("requested head");
        // The crossbar carries the packet at `speedup` times the faster port's speed.
        let transfer = self.crossbar_transfer(sh, i, o, self.slab[slot as usize].packet.size);
        let choice = self.sw.channels[input].choice.take().expect("granted heads are routed");
        // Leave the output's requesters.
        let after = self.sw.channels[input].next_requester;
        let first = &mut self.sw.ports[o as usize].first_requester;
        if *first as usize == input {
            *first = after;
        } else {
            let mut x = *first;
            while self.sw.channels[x as usize].next_requester as usize != input {
                x = self.sw.channels[x as usize].next_requester;
                assert!(x != NIL, "granted input {input} did not request output {o}");
            }
            self.sw.channels[x as usize].next_requester = after;
        }
        if self.sw.ports[o as usize].first_requester == NIL {
            self.sw.wanted_outputs[o as usize / 64] &= !(1 << (o % 64));
        }
        match self.sw.channels[input].input.front() {
            Some(next) => {
                self.sw.channels[input].head_ready = self.slab[next as usize].ready;
                self.sw.unrouted.push(input as u32);
                // Routed once the crossbar input is free again.
                self.prefetch_route(sh, self.slab[next as usize].packet.dst);
            }
            None => {
                self.sw.channels[input].head_ready = u64::MAX;
                self.sw.ports[i as usize].in_occupied &= !(1 << v);
            }
        }
        self.sw.waiting -= 1;
        let ports = self.sw.ports.len() as PortId;
        let per_vc_crossbar = !self.sw.vc_in_busy.is_empty();
        if per_vc_crossbar {
            self.sw.vc_in_busy[input] = (t + transfer) as u32;
            self.sw.vc_out_busy[o as usize * vcs + choice.vc as usize] = (t + transfer) as u32;
        }
        let in_port = &mut self.sw.ports[i as usize];
        in_port.in_vc_rr = (v + 1) % vcs as u8;
        if !per_vc_crossbar {
            in_port.in_xbar_busy_until = (t + transfer) as u32;
        }
        let (in_to_nic, in_nic, in_latency, in_route, in_peer) =
            (in_port.leads_to_nic(), in_port.nic, in_port.route.latency(), in_port.route, in_port.peer_port);
        let out = &mut self.sw.ports[o as usize];
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
            if self.ends.return_credits(back, in_nic, in_vc, size) {
                ctx.schedule_self(back - t, SelfEvent::Inject { nic: in_nic });
            }
        } else if sh.flow.is_some() {
            self.drained(sh, i, input, size, ctx);
        } else {
            ctx.send_link(in_route, LinkMsg::Credit { port: in_peer, vc: in_vc, phits: size });
        }
        let out_vc = o as usize * vcs + choice.vc as usize;
        self.sw.channels[out_vc].used += size;
        if sh.cc.is_some() || sh.nscc.is_some() {
            self.mark_if_congested(sh, o, out_vc, slot, st);
        }
        if self.sw.ports[o as usize].holds_credits(self.sw.credits_at_crossbar) {
            // The packet takes its downstream credits now; it is counted as them.
            self.sw.channels[out_vc].credits -= size;
        }
        self.sw.ports[o as usize].occupancy += size as u32;
        self.sw.channels[out_vc].output.push_back(slot, &mut self.slab);
        self.sw.ports[o as usize].out_queued |= out_vc_bit(choice.vc as usize);
        self.try_transmit(sh, o, ctx, st);
        transfer
    }

    /// Phits of the packet at the head of input (port, VC) `input`.
    fn head_size(&self, input: usize) -> u32 {
        let slot = self.sw.channels[input].input.front().expect("a requester has a head");
        self.slab[slot as usize].packet.size as u32
    }
}

/// Cycles a full packet (`router.packet_size`) takes across the crossbar: when a pass
/// granted nothing, when to try again.
fn nominal_transfer(sh: &Shared) -> u64 {
    (sh.params.packet_size as u64).div_ceil(sh.params.speedup as u64)
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
}

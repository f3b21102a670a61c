//! The router (switch) logical process with its endpoints (NICs).
//!
//! # Model: virtual cut-through at packet granularity
//! A packet of `S` phits holds a link for `S` cycles (1 phit/cycle); only its head is
//! simulated, the tail follows `S - 1` cycles behind. Per hop:
//!
//! 1. the head arrives at an input VC buffer (`t_a`) and is routed after the
//!    router delay `R` (pipeline latency);
//! 2. the separable allocator (input-first, round-robin at inputs over VCs and at outputs
//!    over inputs) moves it across the crossbar into the chosen output VC buffer when
//!    that buffer has room for the whole packet (VCT). Input and output crossbar ports
//!    stay busy `ceil(S / speedup)` cycles;
//! 3. the output link sends it when the link is free and the downstream input VC has
//!    credits for the whole packet; the head arrives downstream after the link latency.
//!
//! Zero-load latency is therefore `sum(link latencies) + switches x R + (S - 1)`, counted
//! from the head leaving the source to the tail reaching the destination.
//!
//! Credits for a packet go upstream when its head leaves the input buffer. Both ends
//! stream at least 1 phit/cycle and a new packet needs room for all `S` phits, so the
//! buffer never holds more than its capacity. Output buffer room is freed when the tail
//! has left (`S` cycles after the head).

use crate::fixed_queue::FixedQueues;
use crate::packet::Packet;
use crate::rng::{self, Purpose, Rng};
use crate::routing::{Candidate, Hop, LoadView, Routes, Selection};
use crate::stats::{Counters, Histogram};
use crate::topology::{EndpointId, Network, PortId, PortTarget, SwitchId};
use crate::traffic::{geometric_gap, Pattern};
use engine::{Ctx, LogicalProcess};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// Router and endpoint parameters, validated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RouterParams {
    /// Virtual channels per port.
    pub vcs: u8,
    /// Input buffer per VC, in phits.
    pub input_buffer: u32,
    /// Output buffer per VC, in phits.
    pub output_buffer: u32,
    /// Packet length in phits.
    pub packet_size: u16,
    /// Crossbar speedup: phits per cycle a crossbar port moves.
    pub speedup: u16,
    /// Cycles from head arrival to the head being routed and eligible for allocation.
    pub router_delay: u64,
}

/// Everything the routers share, read-only during the run.
pub struct Shared {
    /// The network.
    pub net: Arc<Network>,
    /// Routing algorithm, VC policy and escape subnetwork.
    pub routes: Routes,
    /// Candidate selection.
    pub selection: Selection,
    /// Destination pattern.
    pub pattern: Pattern,
    /// Router parameters.
    pub params: RouterParams,
    /// Packet generation probability per endpoint per cycle.
    pub generation_probability: f64,
    /// Start of the measurement period.
    pub warmup: u64,
    /// End of the run; nothing is generated from here on.
    pub end: u64,
    /// Engine link id of every network port (indexed like `Network::ports`), or `u32::MAX`.
    pub link_of_port: Vec<u32>,
    /// Switch of every endpoint.
    pub endpoint_switch: Arc<Vec<SwitchId>>,
    /// Run seed.
    pub seed: u64,
    /// Record every delivered packet (for tests).
    pub record_deliveries: bool,
}

/// Messages and self events of a router.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Msg {
    /// A packet head arrives at input `port` (from a link or from an own endpoint).
    Head {
        /// Receiving input port.
        port: PortId,
        /// The packet.
        packet: Packet,
    },
    /// Credits arrive at output `port` for downstream VC `vc`.
    Credit {
        /// Output port the credits are for.
        port: PortId,
        /// Downstream VC.
        vc: u8,
        /// Phits freed.
        phits: u16,
    },
    /// The link of output `port` is free again (the last tail has left). Scheduled only
    /// when something waits for it: a queued packet, or the allocator waiting for room.
    LinkFree {
        /// Output port.
        port: PortId,
    },
    /// The tail of `packet` reaches endpoint `nic`.
    Deliver {
        /// Local endpoint index.
        nic: u16,
        /// The packet.
        packet: Packet,
    },
    /// Endpoint `nic` generates a packet.
    Generate {
        /// Local endpoint index.
        nic: u16,
    },
    /// Endpoint `nic` tries to inject its next packet.
    Inject {
        /// Local endpoint index.
        nic: u16,
    },
    /// Run the switch allocator.
    Allocate,
}

// Self-event priorities within a cycle (link arrivals always come first): link frees,
// deliveries, generation, injection, then allocation, which sees everything that arrived.
const P_FREE: u16 = 1;
const P_DELIVER: u16 = 2;
const P_GENERATE: u16 = 3;
const P_INJECT: u16 = 4;
const P_ALLOCATE: u16 = 5;

/// A packet held by the router, in its slab slot.
#[derive(Clone, Copy)]
struct Held {
    packet: Packet,
    /// Cycle from which it may be allocated (head arrival + router delay).
    ready: u64,
}

#[derive(Default)]
struct OutputVc {
    /// Output buffer phits reserved by packets in or entering the queue.
    used: u32,
    /// Free phits in the downstream input VC buffer.
    credits: u32,
    /// A packet found this buffer full; freeing room must rerun the allocator.
    space_waiter: bool,
}

/// The output buffer room held by the packet on the link, released when its tail leaves.
/// Only one packet is on a link at a time, so one slot per port suffices; the release is
/// applied lazily, without an event, by whoever next looks at the buffer.
#[derive(Clone, Copy, Default)]
struct PendingFree {
    at: u64,
    vc: u8,
    phits: u16,
}

struct OutputPort {
    link_busy_until: u64,
    xbar_busy_until: u64,
    vc_rr: u8,
    grant_rr: u16,
    /// Local endpoint index for terminal ports.
    nic: Option<u16>,
    /// Engine link and latency for network ports; the latency for terminal ports.
    link: u32,
    latency: u64,
    /// Port at the far end of the link.
    peer_port: PortId,
    connected: bool,
    pending_free: PendingFree,
    /// A `LinkFree` event is scheduled.
    wake_scheduled: bool,
}

/// An input VC that held packets when a deadlock was declared.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockedChannel {
    /// Switch.
    pub switch: SwitchId,
    /// Input port.
    pub port: PortId,
    /// VC.
    pub vc: u8,
    /// Packets queued.
    pub packets: u32,
    /// Output port and VC its head waits for (`u16::MAX`/`u8::MAX` if not routed yet).
    pub wants_port: PortId,
    /// Output VC the head waits for.
    pub wants_vc: u8,
}

/// A delivered packet, as recorded for tests and traces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Packet id.
    pub id: u64,
    /// Source endpoint.
    pub src: EndpointId,
    /// Destination endpoint.
    pub dst: EndpointId,
    /// Endpoint that received it (must equal `dst`).
    pub received_by: EndpointId,
    /// Generation cycle.
    pub created: u64,
    /// Injection cycle (head left the source).
    pub injected: u64,
    /// Delivery cycle (tail received).
    pub delivered: u64,
    /// Switch-to-switch hops.
    pub hops: u16,
}

/// An endpoint (NIC) attached to the router.
pub struct Nic {
    /// Global endpoint id.
    pub endpoint: EndpointId,
    /// Terminal port on the router.
    port: PortId,
    source_queue: VecDeque<Packet>,
    credits: Vec<u32>,
    link_busy_until: u64,
    /// An `Inject` event is pending for this NIC.
    inject_scheduled: bool,
    /// Credits on their way back from the router: `(arrival, vc, phits)`, in time order.
    credit_returns: VecDeque<(u64, u8, u16)>,
    /// The head of the source queue waits for credits.
    blocked_on_credits: bool,
    next_seq: u32,
    rng: Rng,
    /// Phits generated during the measurement period.
    pub generated_phits: u64,
    /// Phits delivered to this endpoint during the measurement period.
    pub accepted_phits: u64,
    /// Every delivered packet (only with `record_deliveries`).
    pub deliveries: Vec<Delivery>,
}

/// Per-router statistics.
#[derive(Default)]
pub struct RouterStats {
    /// Counters since the last sample.
    pub period: Counters,
    /// Counters over the measurement period.
    pub measured: Counters,
    /// Latency (creation to delivery) of measured packets.
    pub latency: Histogram,
    /// Network latency (injection to delivery) of measured packets.
    pub network_latency: Histogram,
    /// Switch-to-switch hops of measured packets.
    pub hops: Histogram,
    /// Phits sent per output port during the measurement period.
    pub port_phits: Vec<u64>,
    /// Phits sent per VC over network links during the measurement period.
    pub vc_phits: Vec<u64>,
    /// Packets that left an endpoint or an output port (all time).
    pub departures: u64,
    /// Packets that reached an input port or were delivered (all time).
    pub arrivals: u64,
    /// Packets generated (all time).
    pub generated_total: u64,
    /// Packets delivered (all time).
    pub delivered_total: u64,
}

/// A switch and its endpoints.
pub struct Router {
    shared: Arc<Shared>,
    state: RouterState,
}

struct RouterState {
    id: SwitchId,
    rng: Rng,
    vcs: usize,
    /// Every packet in the router's buffers lives in one slot of this slab from arrival
    /// to departure; queues hold slot numbers. Freed slots are reused first, so the
    /// packet data a router touches stays in few, warm cache lines.
    slab: Vec<Held>,
    /// Packets on their way to an own endpoint: `(delivery time, nic, packet)`, in order.
    deliveries: VecDeque<(u64, u16, Packet)>,
    free_slots: Vec<u32>,
    /// Slab slots of the packets in each input VC (`port * vcs + vc`), in order.
    inputs: FixedQueues,
    /// Slab slots of the packets in each output VC buffer, in order.
    out_queues: FixedQueues,
    /// Ready time of each input VC's head packet (`u64::MAX` when empty), kept beside the
    /// queues so the allocator's scan stays in one cache-friendly array.
    head_ready: Vec<u64>,
    /// Output chosen for each input VC's head once it has been routed.
    head_choice: Vec<Option<Candidate>>,
    in_xbar_busy_until: Vec<u64>,
    in_vc_rr: Vec<u8>,
    outputs: Vec<OutputPort>,
    out_vcs: Vec<OutputVc>,
    nics: Vec<Nic>,
    waiting: u32,
    /// Input VCs (`port * vcs + vc`) whose head packet has not been routed yet.
    unrouted: Vec<u32>,
    /// Per output port, the input VCs whose routed head packet waits for it.
    requesters: Vec<Vec<u32>>,
    /// One bit per output port with requesters: the allocator looks only at these.
    wanted_outputs: Vec<u64>,
    scheduled_allocations: Vec<u64>,
    candidates: Vec<Candidate>,
    requests: Vec<(PortId, PortId, u8)>,
    /// Per input port: the best `(rank, output, vc)` proposal of the current pass.
    proposal: Vec<(u16, PortId, u8)>,
    /// Per output port: the best `(rank, input, vc)` request of the current pass.
    grant_choice: Vec<(u16, PortId, u8)>,
    /// Input ports with a proposal in the current pass.
    touched: Vec<PortId>,
    stats: RouterStats,
}

type RouterCtx<'a> = Ctx<'a, Msg>;

impl Router {
    /// Builds switch `id`'s router and its endpoints.
    pub fn new(shared: Arc<Shared>, id: SwitchId) -> Self {
        let net = &shared.net;
        let p = &shared.params;
        let vcs = p.vcs as usize;
        let ports = net.ports(id);
        let base = net.port_offsets[id as usize] as usize;
        let mut nics = Vec::new();
        let mut outputs = Vec::with_capacity(ports.len());
        for (i, port) in ports.iter().enumerate() {
            let latency = net.link_classes[port.class as usize].latency;
            let (nic, link, peer_port, connected) = match port.target {
                PortTarget::Endpoint(e) => {
                    nics.push(Nic {
                        endpoint: e,
                        port: i as PortId,
                        source_queue: VecDeque::new(),
                        credits: vec![p.input_buffer; vcs],
                        link_busy_until: 0,
                        inject_scheduled: false,
                        credit_returns: VecDeque::new(),
                        blocked_on_credits: false,
                        next_seq: 0,
                        rng: rng::stream(shared.seed, Purpose::Traffic, e as u64),
                        generated_phits: 0,
                        accepted_phits: 0,
                        deliveries: Vec::new(),
                    });
                    (Some(nics.len() as u16 - 1), u32::MAX, 0, true)
                }
                PortTarget::Switch { port, .. } => (None, shared.link_of_port[base + i], port, true),
                PortTarget::Unconnected => (None, u32::MAX, 0, false),
            };
            outputs.push(OutputPort {
                link_busy_until: 0,
                xbar_busy_until: 0,
                vc_rr: 0,
                grant_rr: 0,
                nic,
                link,
                latency,
                peer_port,
                connected,
                pending_free: PendingFree::default(),
                wake_scheduled: false,
            });
        }
        let n = ports.len();
        let out_vcs = (0..n * vcs)
            .map(|_| OutputVc { used: 0, credits: p.input_buffer, space_waiter: false })
            .collect();
        let state = RouterState {
            id,
            rng: rng::stream(shared.seed, Purpose::Routing, id as u64),
            vcs,
            slab: Vec::new(),
            deliveries: VecDeque::new(),
            free_slots: Vec::new(),
            // Credits bound every buffer to `buffer / packet_size` packets.
            inputs: FixedQueues::new(n * vcs, (p.input_buffer / p.packet_size as u32) as usize),
            out_queues: FixedQueues::new(n * vcs, (p.output_buffer / p.packet_size as u32) as usize),
            head_ready: vec![u64::MAX; n * vcs],
            head_choice: vec![None; n * vcs],
            in_xbar_busy_until: vec![0; n],
            in_vc_rr: vec![0; n],
            outputs,
            out_vcs,
            nics,
            waiting: 0,
            unrouted: Vec::new(),
            requesters: vec![Vec::new(); n],
            wanted_outputs: vec![0; n.div_ceil(64)],
            scheduled_allocations: Vec::new(),
            candidates: Vec::new(),
            requests: Vec::new(),
            proposal: vec![(u16::MAX, 0, 0); n],
            grant_choice: vec![(u16::MAX, 0, 0); n],
            touched: Vec::new(),
            stats: RouterStats { port_phits: vec![0; n], vc_phits: vec![0; vcs], ..Default::default() },
        };
        Router { shared, state }
    }

    /// Switch id.
    pub fn id(&self) -> SwitchId {
        self.state.id
    }

    /// Statistics gathered so far.
    pub fn stats(&self) -> &RouterStats {
        &self.state.stats
    }

    /// Takes the counters of the current sampling period, resetting them.
    /// `now` is the checkpoint time: deliveries before it are accounted first.
    pub fn take_period(&mut self, now: u64) -> Counters {
        let Router { shared, state } = self;
        state.flush_deliveries(shared, now);
        std::mem::take(&mut state.stats.period)
    }

    /// The attached endpoints.
    pub fn nics(&self) -> &[Nic] {
        &self.state.nics
    }

    /// Packets held by this router: in source queues, input buffers and output buffers.
    pub fn resident_packets(&self) -> u64 {
        let s = &self.state;
        let queued: usize = s.nics.iter().map(|n| n.source_queue.len()).sum();
        let inputs = s.inputs.total_len();
        let outputs = s.out_queues.total_len();
        (queued + inputs + outputs) as u64
    }

    /// Packets waiting in source queues.
    pub fn source_queued_packets(&self) -> u64 {
        self.state.nics.iter().map(|n| n.source_queue.len() as u64).sum()
    }

    /// Input VCs holding packets, with the output each head waits for.
    pub fn occupied_inputs(&self) -> Vec<BlockedChannel> {
        let s = &self.state;
        (0..s.outputs.len() * s.vcs)
            .filter(|&i| !s.inputs.is_empty(i))
            .map(|i| {
                let (wants_port, wants_vc) =
                    s.head_choice[i].map_or((PortId::MAX, u8::MAX), |c| (c.port, c.vc));
                BlockedChannel {
                    switch: s.id,
                    port: (i / s.vcs) as PortId,
                    vc: (i % s.vcs) as u8,
                    packets: s.inputs.len(i) as u32,
                    wants_port,
                    wants_vc,
                }
            })
            .collect()
    }
}

impl LogicalProcess for Router {
    type Msg = Msg;

    fn start(&mut self, ctx: &mut RouterCtx<'_>) {
        let Router { shared, state } = self;
        let p = shared.generation_probability;
        for (i, nic) in state.nics.iter_mut().enumerate() {
            if let Some(gap) = geometric_gap(&mut nic.rng, p) {
                if gap < shared.end {
                    ctx.schedule(gap, P_GENERATE, Msg::Generate { nic: i as u16 });
                }
            }
        }
    }

    #[inline]
    fn handle(&mut self, msg: Msg, ctx: &mut RouterCtx<'_>) {
        let Router { shared, state } = self;
        let sh: &Shared = shared;
        match msg {
            Msg::Head { port, packet } => state.on_head(sh, port, packet, ctx.now(), ctx),
            Msg::Credit { port, vc, phits } => {
                state.out_vcs[port as usize * state.vcs + vc as usize].credits += phits as u32;
                state.try_transmit(sh, port, ctx);
            }
            Msg::LinkFree { port } => {
                state.outputs[port as usize].wake_scheduled = false;
                if state.settle(port as usize, ctx.now()) {
                    state.request_allocation(ctx.now(), ctx);
                }
                state.try_transmit(sh, port, ctx);
            }
            Msg::Deliver { nic, packet } => state.on_deliver(sh, nic, packet, ctx.now()),
            Msg::Generate { nic } => state.on_generate(sh, nic, ctx),
            Msg::Inject { nic } => {
                state.nics[nic as usize].inject_scheduled = false;
                state.try_inject(sh, nic, ctx)
            }
            Msg::Allocate => state.allocate(sh, ctx),
        }
    }
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

struct Load<'a> {
    out_vcs: &'a [OutputVc],
    outputs: &'a [OutputPort],
    vcs: usize,
    capacity: u32,
    now: u64,
}

impl Load<'_> {
    /// Phits in the output buffer of `vc` at `port`.
    fn buffered(&self, port: PortId, vc: u8) -> u32 {
        let o = &self.out_vcs[port as usize * self.vcs + vc as usize];
        let f = self.outputs[port as usize].pending_free;
        let released = if f.at <= self.now && f.vc == vc { f.phits as u32 } else { 0 };
        o.used - released
    }
}

impl LoadView for Load<'_> {
    fn vc_occupancy(&self, port: PortId, vc: u8) -> u32 {
        let o = &self.out_vcs[port as usize * self.vcs + vc as usize];
        self.buffered(port, vc) + self.capacity.saturating_sub(o.credits)
    }
    fn port_occupancy(&self, port: PortId) -> u32 {
        (0..self.vcs as u8).map(|v| self.vc_occupancy(port, v)).sum()
    }
}

impl RouterState {
    fn in_measurement(sh: &Shared, t: u64) -> bool {
        t >= sh.warmup && t < sh.end
    }

    /// Applies output `o`'s pending buffer release if its time has come. Returns true if
    /// the allocator was waiting for that room.
    fn settle(&mut self, o: usize, t: u64) -> bool {
        let f = self.outputs[o].pending_free;
        if f.phits == 0 || f.at > t {
            return false;
        }
        self.outputs[o].pending_free.phits = 0;
        let ovc = &mut self.out_vcs[o * self.vcs + f.vc as usize];
        ovc.used -= f.phits as u32;
        std::mem::take(&mut ovc.space_waiter)
    }

    fn request_allocation(&mut self, at: u64, ctx: &mut RouterCtx<'_>) {
        if !self.scheduled_allocations.contains(&at) {
            self.scheduled_allocations.push(at);
            ctx.schedule(at - ctx.now(), P_ALLOCATE, Msg::Allocate);
        }
    }

    fn on_generate(&mut self, sh: &Shared, nic_index: u16, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        let size = sh.params.packet_size;
        let nic = &mut self.nics[nic_index as usize];
        let dst = sh.pattern.destination(nic.endpoint, &mut nic.rng);
        let packet = Packet {
            id: (nic.endpoint as u64) << 32 | nic.next_seq as u64,
            src: nic.endpoint,
            dst,
            size,
            hops: 0,
            vc: 0,
            route: Default::default(),
            created: t,
            injected: 0,
        };
        nic.next_seq = nic.next_seq.wrapping_add(1);
        let was_idle = nic.source_queue.is_empty();
        nic.source_queue.push_back(packet);
        self.stats.generated_total += 1;
        self.stats.period.generated_packets += 1;
        self.stats.period.generated_phits += size as u64;
        if Self::in_measurement(sh, t) {
            nic.generated_phits += size as u64;
            self.stats.measured.generated_packets += 1;
            self.stats.measured.generated_phits += size as u64;
        }
        if let Some(gap) = geometric_gap(&mut nic.rng, sh.generation_probability) {
            if t + 1 + gap < sh.end {
                ctx.schedule(1 + gap, P_GENERATE, Msg::Generate { nic: nic_index });
            }
        }
        if was_idle {
            self.try_inject(sh, nic_index, ctx);
        }
    }

    fn try_inject(&mut self, sh: &Shared, nic_index: u16, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        let nic = &mut self.nics[nic_index as usize];
        let Some(front) = nic.source_queue.front() else {
            return;
        };
        if nic.link_busy_until > t {
            // Come back when the link is free (once).
            if !nic.inject_scheduled {
                nic.inject_scheduled = true;
                ctx.schedule(nic.link_busy_until - t, P_INJECT, Msg::Inject { nic: nic_index });
            }
            return;
        }
        let size = front.size;
        let vc = 0usize;
        // Credits come back lazily: apply those whose time has come.
        while let Some(&(at, v, phits)) = nic.credit_returns.front() {
            if at > t {
                break;
            }
            nic.credits[v as usize] += phits as u32;
            nic.credit_returns.pop_front();
        }
        if nic.credits[vc] < size as u32 {
            nic.blocked_on_credits = true;
            if let Some(&(at, _, _)) = nic.credit_returns.front() {
                if !nic.inject_scheduled {
                    nic.inject_scheduled = true;
                    ctx.schedule(at - t, P_INJECT, Msg::Inject { nic: nic_index });
                }
            }
            return;
        }
        nic.blocked_on_credits = false;
        let mut packet = nic.source_queue.pop_front().expect("non-empty");
        nic.credits[vc] -= size as u32;
        nic.link_busy_until = t + size as u64;
        packet.injected = t;
        packet.vc = vc as u8;
        let src_switch = self.id;
        let dst_switch = sh.endpoint_switch[packet.dst as usize];
        sh.routes.routing.init(src_switch, dst_switch, &mut packet.route, &mut self.rng);
        let port = nic.port;
        let latency = self.outputs[port as usize].latency;
        self.stats.departures += 1;
        self.stats.period.injected_packets += 1;
        self.stats.period.injected_phits += size as u64;
        if Self::in_measurement(sh, t) {
            self.stats.measured.injected_packets += 1;
            self.stats.measured.injected_phits += size as u64;
        }
        // The head reaches the router's input after the terminal link's latency. Nothing can
        // overtake it on that link, so it is queued at once with its ready time instead of
        // travelling as an event; the allocator ignores it until then.
        if !nic.source_queue.is_empty() && !nic.inject_scheduled {
            nic.inject_scheduled = true;
            ctx.schedule(size as u64, P_INJECT, Msg::Inject { nic: nic_index });
        }
        self.on_head(sh, port, packet, t + latency, ctx);
    }

    /// A head arriving at input `port` at time `arrival` (now, or later for own endpoints).
    fn on_head(&mut self, sh: &Shared, port: PortId, packet: Packet, arrival: u64, ctx: &mut RouterCtx<'_>) {
        let ready = arrival + sh.params.router_delay;
        self.stats.arrivals += 1;
        let input = port as usize * self.vcs + packet.vc as usize;
        if self.inputs.is_empty(input) {
            self.head_ready[input] = ready;
            self.unrouted.push(input as u32);
        }
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Held { packet, ready };
                slot
            }
            None => {
                self.slab.push(Held { packet, ready });
                self.slab.len() as u32 - 1
            }
        };
        self.inputs.push_back(input, slot);
        self.waiting += 1;
        self.request_allocation(ready, ctx);
    }

    /// Accounts the queued deliveries whose time is before `now`.
    fn flush_deliveries(&mut self, sh: &Shared, now: u64) {
        while let Some(&(at, nic, packet)) = self.deliveries.front() {
            if at >= now {
                break;
            }
            self.deliveries.pop_front();
            self.on_deliver(sh, nic, packet, at);
        }
    }

    fn on_deliver(&mut self, sh: &Shared, nic_index: u16, packet: Packet, t: u64) {
        let nic = &mut self.nics[nic_index as usize];
        let size = packet.size as u64;
        let latency = t - packet.created;
        let network_latency = t - packet.injected;
        let s = &mut self.stats;
        s.arrivals += 1;
        s.delivered_total += 1;
        let period = &mut s.period;
        period.delivered_packets += 1;
        period.delivered_phits += size;
        period.latency_sum += latency;
        period.network_latency_sum += network_latency;
        period.hops_sum += packet.hops as u64;
        if Self::in_measurement(sh, t) {
            nic.accepted_phits += size;
            s.measured.delivered_phits += size;
            s.measured.delivered_packets += 1;
        }
        if Self::in_measurement(sh, packet.created) {
            s.measured.latency_sum += latency;
            s.measured.network_latency_sum += network_latency;
            s.measured.hops_sum += packet.hops as u64;
            s.latency.record(latency);
            s.network_latency.record(network_latency);
            s.hops.record(packet.hops as u64);
        }
        if sh.record_deliveries {
            nic.deliveries.push(Delivery {
                id: packet.id,
                src: packet.src,
                dst: packet.dst,
                received_by: nic.endpoint,
                created: packet.created,
                injected: packet.injected,
                delivered: t,
                hops: packet.hops,
            });
        }
    }

    /// Routes the head of an input VC: candidates, VC policy, selection. With an escape
    /// subnetwork only candidates whose output VC has room for the packet are considered
    /// (the seed's "if it satisfies flow-control requirements"), and `None` means none has:
    /// the head is routed again later, so a packet blocked in the routing VCs can still
    /// take the escape (Duato).
    fn route(&mut self, sh: &Shared, input: usize, now: u64) -> Option<Candidate> {
        let slot = self.inputs.front(input).expect("head") as usize;
        let dst_endpoint = self.slab[slot].packet.dst;
        let (dst_switch, dst_port) = sh.net.endpoint_location[dst_endpoint as usize];
        if dst_switch == self.id {
            return Some(Candidate { port: dst_port, vc: 0, penalty: 0 });
        }
        let load = Load {
            out_vcs: &self.out_vcs,
            outputs: &self.outputs,
            vcs: self.vcs,
            capacity: sh.params.input_buffer,
            now,
        };
        let head = &mut self.slab[slot].packet;
        let hop = Hop {
            ports: sh.net.ports(self.id),
            at: self.id,
            in_port: (input / self.vcs) as PortId,
            dst: dst_switch,
            vcs: self.vcs as u8,
        };
        sh.routes.next_hops(&hop, head, &load, &mut self.rng, &mut self.candidates);
        if sh.routes.escape.is_some() {
            let (size, cap) = (sh.params.packet_size as u32, sh.params.output_buffer);
            self.candidates.retain(|c| load.buffered(c.port, c.vc) + size <= cap);
            if self.candidates.is_empty() {
                return None;
            }
        }
        Some(sh.selection.pick(&self.candidates, &load, &mut self.rng))
    }

    /// Separable allocator. Heads that became ready are routed; then every input with a
    /// ready head for a free output proposes one VC (round-robin over its VCs), and every
    /// output grants one proposing input (round-robin over inputs). Only outputs that have
    /// waiting heads are visited.
    fn allocate(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        self.scheduled_allocations.retain(|&x| x != t);
        if self.waiting == 0 {
            return;
        }
        let vcs = self.vcs;
        let mut retry_at = u64::MAX;
        let mut k = 0;
        while k < self.unrouted.len() {
            let input = self.unrouted[k] as usize;
            // Route when the head can actually leave: adaptive choices then see the
            // freshest occupancy.
            if self.head_ready[input] <= t && self.in_xbar_busy_until[input / vcs] <= t {
                let Some(c) = self.route(sh, input, t) else {
                    // No candidate has room (escape subnetwork only): try again next cycle.
                    retry_at = retry_at.min(t + 1);
                    k += 1;
                    continue;
                };
                self.head_choice[input] = Some(c);
                self.requesters[c.port as usize].push(input as u32);
                self.wanted_outputs[c.port as usize / 64] |= 1 << (c.port % 64);
                self.unrouted.swap_remove(k);
            } else {
                if self.head_ready[input] <= t {
                    retry_at = retry_at.min(self.in_xbar_busy_until[input / vcs]);
                }
                k += 1;
            }
        }
        let size = sh.params.packet_size as u32;
        let out_cap = sh.params.output_buffer;
        self.requests.clear();
        let mut next = first_set_bit(&self.wanted_outputs, 0);
        while let Some(o) = next {
            next = first_set_bit(&self.wanted_outputs, o + 1);
            let busy = self.outputs[o].xbar_busy_until;
            if busy > t {
                retry_at = retry_at.min(busy);
                continue;
            }
            self.settle(o, t);
            let pending = self.outputs[o].pending_free;
            for &x in &self.requesters[o] {
                let (i, v) = (x as usize / vcs, x as usize % vcs);
                let in_busy = self.in_xbar_busy_until[i];
                if in_busy > t {
                    retry_at = retry_at.min(in_busy);
                    continue;
                }
                let vc = self.head_choice[x as usize].expect("requesters are routed").vc;
                let ovc = &mut self.out_vcs[o * vcs + vc as usize];
                if ovc.used + size > out_cap {
                    if pending.phits > 0 && pending.vc == vc {
                        retry_at = retry_at.min(pending.at); // room frees when that tail leaves
                    } else {
                        ovc.space_waiter = true; // the next transmission will call us again
                    }
                    continue;
                }
                self.requests.push((o as PortId, i as PortId, v as u8));
            }
        }
        let transfer = size.div_ceil(sh.params.speedup as u32) as u64;
        // Input arbitration: each input proposes the VC with the smallest round-robin rank
        // from its pointer.
        self.touched.clear();
        let mut outvoted = false;
        for &(o, i, v) in &self.requests {
            let rank = ((v as usize + vcs - self.in_vc_rr[i as usize] as usize) % vcs) as u16;
            let slot = &mut self.proposal[i as usize];
            if slot.0 == u16::MAX {
                self.touched.push(i);
            } else {
                outvoted = true;
            }
            if rank < slot.0 {
                *slot = (rank, o, v);
            }
        }
        // Output arbitration: each output grants the proposing input with the smallest
        // round-robin rank from its pointer.
        let ports = self.outputs.len();
        let mut outputs_touched = std::mem::take(&mut self.requests);
        outputs_touched.clear();
        for &i in &self.touched {
            let (_, o, v) = std::mem::replace(&mut self.proposal[i as usize], (u16::MAX, 0, 0));
            let rank = ((i as usize + ports - self.outputs[o as usize].grant_rr as usize) % ports) as u16;
            let slot = &mut self.grant_choice[o as usize];
            if slot.0 == u16::MAX {
                outputs_touched.push((o, 0, 0));
            } else {
                outvoted = true;
            }
            if rank < slot.0 {
                *slot = (rank, i, v);
            }
        }
        if outvoted {
            // The losers come back when the crossbar frees.
            retry_at = retry_at.min(t + transfer);
        }
        for &(o, _, _) in &outputs_touched {
            let (_, i, v) = std::mem::replace(&mut self.grant_choice[o as usize], (u16::MAX, 0, 0));
            self.grant(sh, o, i, v, transfer, ctx);
            // Packets left at this input wait for its crossbar port.
            let first = i as usize * vcs;
            if (first..first + vcs).any(|x| self.head_ready[x] != u64::MAX) {
                retry_at = retry_at.min(t + transfer);
            }
        }
        self.requests = outputs_touched;
        if retry_at != u64::MAX && self.waiting > 0 {
            self.request_allocation(retry_at, ctx);
        }
    }

    fn grant(&mut self, sh: &Shared, o: PortId, i: PortId, v: u8, transfer: u64, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        let input = i as usize * self.vcs + v as usize;
        let slot = self.inputs.pop_front(input).expect("requested head");
        let choice = self.head_choice[input].take().expect("granted heads are routed");
        let waiters = &mut self.requesters[o as usize];
        let at = waiters.iter().position(|&x| x as usize == input).expect("granted input requested");
        waiters.swap_remove(at);
        if waiters.is_empty() {
            self.wanted_outputs[o as usize / 64] &= !(1 << (o % 64));
        }
        match self.inputs.front(input) {
            Some(next) => {
                self.head_ready[input] = self.slab[next as usize].ready;
                self.unrouted.push(input as u32);
            }
            None => self.head_ready[input] = u64::MAX,
        }
        self.waiting -= 1;
        self.in_vc_rr[i as usize] = (v + 1) % self.vcs as u8;
        self.in_xbar_busy_until[i as usize] = t + transfer;
        let ports = self.outputs.len() as PortId;
        let out = &mut self.outputs[o as usize];
        out.xbar_busy_until = t + transfer;
        out.grant_rr = (i + 1) % ports;
        let packet = &mut self.slab[slot as usize].packet;
        let size = packet.size;
        let in_vc = packet.vc;
        if self.outputs[o as usize].nic.is_none() {
            sh.routes.on_forward(self.id, choice, packet);
            packet.hops += 1;
        }
        packet.vc = choice.vc;
        // Credits for the freed input buffer go back upstream.
        let in_port = &self.outputs[i as usize];
        if let Some(nic) = in_port.nic {
            let back = t + in_port.latency;
            let nic = &mut self.nics[nic as usize];
            nic.credit_returns.push_back((back, in_vc, size));
            if nic.blocked_on_credits && !nic.inject_scheduled {
                nic.inject_scheduled = true;
                let index = self.outputs[i as usize].nic.expect("terminal port");
                ctx.schedule(back - t, P_INJECT, Msg::Inject { nic: index });
            }
        } else {
            ctx.send(in_port.link, Msg::Credit { port: in_port.peer_port, vc: in_vc, phits: size });
        }
        let ovc = &mut self.out_vcs[o as usize * self.vcs + choice.vc as usize];
        ovc.used += size as u32;
        self.out_queues.push_back(o as usize * self.vcs + choice.vc as usize, slot);
        self.try_transmit(sh, o, ctx);
    }

    fn try_transmit(&mut self, sh: &Shared, o: PortId, ctx: &mut RouterCtx<'_>) {
        let t = ctx.now();
        let out = &mut self.outputs[o as usize];
        if !out.connected {
            return;
        }
        if out.link_busy_until > t {
            // Come back when the link frees (once).
            if !out.wake_scheduled {
                out.wake_scheduled = true;
                ctx.schedule(out.link_busy_until - t, P_FREE, Msg::LinkFree { port: o });
            }
            return;
        }
        if self.settle(o as usize, t) {
            self.request_allocation(t, ctx);
        }
        let out = &self.outputs[o as usize];
        let to_nic = out.nic;
        let start = out.vc_rr as usize;
        let mut chosen = None;
        for k in 0..self.vcs {
            let v = (start + k) % self.vcs;
            let ovc = &self.out_vcs[o as usize * self.vcs + v];
            if let Some(slot) = self.out_queues.front(o as usize * self.vcs + v) {
                if to_nic.is_some() || ovc.credits >= self.slab[slot as usize].packet.size as u32 {
                    chosen = Some(v);
                    break;
                }
            }
        }
        let Some(v) = chosen else { return };
        let ovc = &mut self.out_vcs[o as usize * self.vcs + v];
        let slot = self.out_queues.pop_front(o as usize * self.vcs + v).expect("chosen VC has a packet");
        let packet = self.slab[slot as usize].packet;
        self.free_slots.push(slot);
        let size = packet.size;
        if to_nic.is_none() {
            ovc.credits -= size as u32;
        }
        let wake = ovc.space_waiter;
        let first = o as usize * self.vcs;
        let queued = (first..first + self.vcs).any(|q| !self.out_queues.is_empty(q));
        let out = &mut self.outputs[o as usize];
        out.vc_rr = ((v + 1) % self.vcs) as u8;
        out.link_busy_until = t + size as u64;
        out.pending_free = PendingFree { at: t + size as u64, vc: v as u8, phits: size };
        if (wake || queued) && !out.wake_scheduled {
            out.wake_scheduled = true;
            ctx.schedule(size as u64, P_FREE, Msg::LinkFree { port: o });
        }
        self.stats.departures += 1;
        self.stats.period.link_transmissions += 1;
        if Self::in_measurement(sh, t) {
            self.stats.port_phits[o as usize] += size as u64;
            if to_nic.is_none() {
                self.stats.vc_phits[v] += size as u64;
            }
        }
        match to_nic {
            Some(nic) => {
                // The tail reaches the endpoint `latency + size - 1` cycles from now. Nothing
                // can change that, so the delivery is queued here and accounted when its time
                // has passed, without an event, unless packets of different sizes would
                // break the queue's time order.
                let at = t + out.latency + size as u64 - 1;
                self.flush_deliveries(sh, t);
                if self.deliveries.back().is_none_or(|d| d.0 <= at) {
                    self.deliveries.push_back((at, nic, packet));
                } else {
                    ctx.schedule(at - t, P_DELIVER, Msg::Deliver { nic, packet });
                }
            }
            None => {
                let port = out.peer_port;
                ctx.send(out.link, Msg::Head { port, packet });
            }
        }
    }
}

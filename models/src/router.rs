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

//!
//! # Layout of the state
//! At a million endpoints the routers' state is far larger than the caches, so the cost of
//! an event is mostly the cache lines it touches. Everything about one port (both
//! directions, crossbar, link, arbitration pointers, statistics) is one 64-byte `PortState`;
//! everything about one VC of a port (input buffer, output buffer, credits, routed head)
//! is one `VcState`, the VCs of a port side by side. Buffered packets live in a per-router
//! slab and the buffers are linked lists through it, so a router holds memory for the
//! packets it has, not for its buffers' capacity. Scratch space of the allocator and the
//! statistics that merge by addition live once per partition ([`PartitionState`]).

use crate::packet::{time32, Packet};
use crate::rng::{self, Purpose, Rng};
use crate::routing::{Candidate, Hop, LoadView, Routes, Selection};
use crate::stats::{Counters, Histogram};
use crate::topology::{EndpointId, EndpointMap, Port, PortId, PortTarget, SwitchId};
use crate::traffic::{geometric_gap, Pattern};
use engine::{Ctx, LinkRoute, LogicalProcess};
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

/// The ports of a rank's switches and the engine link of each: all a router needs of the
/// network besides the [`EndpointMap`].
#[derive(Clone, Debug, Default)]
pub struct LocalPorts {
    /// `ports[start[i]..start[i + 1]]` are the ports of the rank's `i`-th switch.
    pub start: Vec<u32>,
    /// The ports, switch by switch.
    pub ports: Vec<Port>,
    /// The engine link (index in the rank's link list) of every port in `ports`;
    /// `u32::MAX` for terminal and unconnected ports.
    pub links: Vec<u32>,
    /// Where every link of the rank's list delivers, for the run's partitioning.
    pub routes: Vec<LinkRoute>,
    /// Latency of every link class.
    pub class_latency: Vec<u64>,
}

impl LocalPorts {
    /// Ports of the rank's `i`-th switch.
    #[inline]
    pub fn of(&self, i: usize) -> &[Port] {
        &self.ports[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// Engine links of the rank's `i`-th switch's ports.
    pub fn links_of(&self, i: usize) -> &[u32] {
        &self.links[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Everything the routers share, read-only during the run.
pub struct Shared {
    /// The ports of this rank's switches.
    pub ports: Arc<LocalPorts>,
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
    /// Where every endpoint is.
    pub endpoints: EndpointMap,
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

/// "No slot": the end of a slab list.
const NIL: u32 = u32::MAX;
/// `PortState::nic` of a network port.
const NETWORK: u16 = u16::MAX;
/// `PortState::nic` of a port left unconnected.
const UNCONNECTED: u16 = u16::MAX - 1;

/// A packet held by the router, in its slab slot.
#[derive(Clone, Copy)]
struct Held {
    packet: Packet,
    /// Cycle from which it may be allocated (head arrival + router delay).
    ready: u64,
    /// Next slot of the buffer this slot is in.
    next: u32,
}

/// A FIFO of slab slots, linked through [`Held::next`]. Packed to 10 bytes (a buffer holds
/// at most 65,535 phits, so fewer packets); fields are read by value.
#[derive(Clone, Copy)]
#[repr(C, packed(2))]
struct Queue {
    head: u32,
    tail: u32,
    len: u16,
}

impl Queue {
    const EMPTY: Queue = Queue { head: NIL, tail: NIL, len: 0 };

    #[inline]
    fn front(&self) -> Option<u32> {
        (self.head != NIL).then_some(self.head)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        self.head == NIL
    }

    #[inline]
    fn push_back(&mut self, slot: u32, slab: &mut [Held]) {
        slab[slot as usize].next = NIL;
        if self.tail == NIL {
            self.head = slot;
        } else {
            slab[self.tail as usize].next = slot;
        }
        self.tail = slot;
        self.len += 1;
    }

    #[inline]
    fn pop_front(&mut self, slab: &[Held]) -> Option<u32> {
        let slot = self.front()?;
        self.head = slab[slot as usize].next;
        if self.head == NIL {
            self.tail = NIL;
        }
        self.len -= 1;
        Some(slot)
    }
}

/// One port: the output side (link, output crossbar port, VC and grant pointers) and the
/// input side (input crossbar port, VC pointer), in one cache line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct PortState {
    /// The output link is busy until this cycle (the last packet's tail leaves then).
    /// Times a router keeps fit 32 bits: runs end before 2^31 cycles.
    link_busy_until: u32,
    /// The output crossbar port is busy until this cycle.
    xbar_busy_until: u32,
    /// The input crossbar port is busy until this cycle.
    in_xbar_busy_until: u32,
    /// One bit per VC whose input buffer holds packets.
    in_occupied: u64,
    /// Occupancy of the output over all its VCs, as the adaptive selection counts it:
    /// output buffer phits reserved plus downstream credits in use (pending releases not
    /// yet subtracted; see `Load::port_occupancy`).
    occupancy: u32,
    /// Where the link delivers (network ports), kept here so that sending touches no
    /// other memory, and the link's latency (every port).
    route: LinkRoute,
    /// Output VCs whose output buffer may hold packets: bit `v` for VC `v` < 31, exact;
    /// bit 31 for all the others, set while any might. The link arbiter then reads only
    /// the VC records that have something to send.
    out_queued: u32,
    /// Phits sent during the measurement period (one per cycle at most: fits 32 bits).
    phits: u32,
    /// Port at the far end of the link.
    peer_port: PortId,
    /// Output arbitration: the input with the highest priority.
    grant_rr: u16,
    /// What is behind the port: the local index of an endpoint, `NETWORK` or
    /// `UNCONNECTED`.
    nic: u16,
    /// The first input VC (`port * vcs + vc`) whose routed head waits for this output;
    /// the others follow through [`VcState::next_requester`].
    first_requester: u32,
    /// Output buffer room held by the packet on the link, released when its tail leaves
    /// at `link_busy_until`. Only one packet is on a link at a time, so one pending
    /// release per port suffices; it is applied lazily, without an event, by whoever
    /// next looks at the buffer (see `settle`).
    pending_phits: u16,
    /// VC of the pending release.
    pending_vc: u8,
    /// Link arbitration: the output VC with the highest priority.
    vc_rr: u8,
    /// Input arbitration: the input VC with the highest priority.
    in_vc_rr: u8,
    /// A `LinkFree` event is scheduled.
    wake_scheduled: bool,
}

/// The bit of output VC `v` in [`PortState::out_queued`].
#[inline]
fn out_vc_bit(v: usize) -> u32 {
    1 << v.min(31)
}

impl PortState {
    /// Whether the port leads to an endpoint of this router.
    fn leads_to_nic(&self) -> bool {
        self.nic < UNCONNECTED
    }
}

/// One VC of one port: its input buffer (packets that arrived on it), its output buffer
/// (packets granted to it, waiting for the link) and the downstream credits.
#[derive(Clone, Copy)]
struct VcState {
    /// Ready time of the input buffer's head packet (`u64::MAX` when empty).
    head_ready: u64,
    /// Output chosen for the input buffer's head packet once it has been routed.
    choice: Option<Candidate>,
    /// The next input VC waiting for the same output (`NIL`: the last).
    next_requester: u32,
    input: Queue,
    output: Queue,
    /// Output buffer phits reserved by packets in or entering the output buffer.
    used: u16,
    /// Free phits in the downstream input buffer of this VC.
    credits: u16,
    /// For a terminal port, whose sender (the endpoint) lives in this router: the
    /// endpoint's credits for this input buffer.
    nic_credits: u16,
    /// A packet found the output buffer full; freeing room must rerun the allocator.
    space_waiter: bool,
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

/// An endpoint (NIC) attached to the router. Its queued packets live in the router's
/// slab and its credits for the router's input buffer in that buffer's [`VcState`], so an
/// idle endpoint holds no memory of its own beyond this struct.
pub struct Nic {
    /// Global endpoint id.
    pub endpoint: EndpointId,
    /// Terminal port on the router.
    port: PortId,
    /// An `Inject` event is pending for this NIC.
    inject_scheduled: bool,
    /// The head of the source queue waits for credits.
    blocked_on_credits: bool,
    next_seq: u32,
    link_busy_until: u64,
    /// Packets generated and not yet injected (unbounded: offered load stays honest past
    /// saturation).
    source_queue: Queue,
    rng: Rng,
    /// Phits generated during the measurement period.
    pub generated_phits: u64,
    /// Phits delivered to this endpoint during the measurement period.
    pub accepted_phits: u64,
}

/// Statistics of the routers of one partition. Integer sums and histograms: merging the
/// partitions' statistics gives the same totals however the routers were spread.
#[derive(Default)]
pub struct PartitionStats {
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
    /// Every delivered packet (only with `record_deliveries`).
    pub deliveries: Vec<Delivery>,
}

/// The allocator's scratch space, reused by every router of a partition: each pass
/// leaves it as it found it.
#[derive(Default)]
struct Scratch {
    candidates: Vec<Candidate>,
    /// `(output, input, vc)` requests of the current pass.
    requests: Vec<(PortId, PortId, u8)>,
    /// Per input port: the best `(rank, output, vc)` proposal of the current pass.
    proposal: Vec<(u16, PortId, u8)>,
    /// Per output port: the best `(rank, input, vc)` request of the current pass.
    grant_choice: Vec<(u16, PortId, u8)>,
    /// Input ports with a proposal in the current pass.
    touched: Vec<PortId>,
    /// Output ports with a grant in the current pass.
    granted: Vec<PortId>,
}

impl Scratch {
    /// Makes the per-port arrays at least `ports` long.
    fn fit(&mut self, ports: usize) {
        if self.proposal.len() < ports {
            self.proposal.resize(ports, (u16::MAX, 0, 0));
            self.grant_choice.resize(ports, (u16::MAX, 0, 0));
        }
    }
}

/// What the routers of one partition share: statistics and scratch space
/// ([`LogicalProcess::Local`]).
#[derive(Default)]
pub struct PartitionState {
    /// Statistics of the partition's routers.
    pub stats: PartitionStats,
    scratch: Scratch,
}

/// A switch and its endpoints.
pub struct Router {
    shared: Arc<Shared>,
    state: RouterState,
}

struct RouterState {
    id: SwitchId,
    /// Index of the switch among the rank's switches ([`LocalPorts`]).
    local: u32,
    vcs: usize,
    /// Packets in input buffers.
    waiting: u32,
    /// Free slab slots, most recently freed last.
    free_slots: Vec<u32>,
    rng: Rng,
    ports: Vec<PortState>,
    /// `port * vcs + vc`.
    channels: Vec<VcState>,
    /// Every packet in the router's buffers lives in one slot of this slab from arrival
    /// to departure; buffers are lists of slots. Freed slots are reused first, so the
    /// packet data a router touches stays in few, warm cache lines.
    slab: Vec<Held>,
    nics: Vec<Nic>,
    /// Input VCs (`port * vcs + vc`) whose head packet has not been routed yet.
    unrouted: Vec<u32>,
    /// One bit per output port with requesters: the allocator looks only at these.
    wanted_outputs: Vec<u64>,
    scheduled_allocations: Vec<u64>,
    /// Packets on their way to an own endpoint: `(delivery time, nic, packet)`, in order.
    deliveries: VecDeque<(u64, u16, Packet)>,
    /// Credits on their way back to the endpoints: `(arrival, nic, vc, phits)`, in time
    /// order; applied lazily, when an endpoint next looks at its credits.
    nic_credit_returns: VecDeque<(u64, u16, u8, u16)>,
}

type RouterCtx<'a> = Ctx<'a, Msg>;

impl Router {
    /// Bytes that `switches` routers with `ports` ports (all of them together), `vcs` VCs
    /// and `endpoints` endpoints hold before any packet arrives, with what the engine and
    /// the rank keep per port and link for them: the memory estimate's "routers"
    /// ([`crate::memory`]).
    pub fn bytes(switches: u64, ports: u64, endpoints: u64, vcs: u64) -> u64 {
        use std::mem::size_of;
        let per_port = size_of::<PortState>() + size_of::<Port>() + 4 + size_of::<LinkRoute>();
        // The router, its state, the engine's LP record and its small vectors' headers.
        let per_switch = size_of::<Router>() + size_of::<RouterState>() + 2 * size_of::<LinkRoute>() + 64;
        ports * (per_port as u64 + vcs * size_of::<VcState>() as u64)
            + endpoints * size_of::<Nic>() as u64
            + switches * per_switch as u64
    }

    /// Bytes one packet held by a router takes: its slab slot, the event that moves it and
    /// the credit event it sends back.
    pub fn packet_bytes() -> u64 {
        (std::mem::size_of::<Held>() + 2 * std::mem::size_of::<engine::Event<Msg>>()) as u64
    }

    /// Builds the router of switch `id`, the rank's `local`-th switch, and its endpoints.
    pub fn new(shared: Arc<Shared>, local: usize, id: SwitchId) -> Self {
        let p = &shared.params;
        let vcs = p.vcs as usize;
        let ports = shared.ports.of(local);
        let links = shared.ports.links_of(local);
        let mut nics = Vec::new();
        let mut states = Vec::with_capacity(ports.len());
        for (i, port) in ports.iter().enumerate() {
            // Link latencies are checked to fit 32 bits (engine::link_routes).
            let latency = shared.ports.class_latency[port.class as usize] as u32;
            let (nic, route, peer_port) = match port.target {
                PortTarget::Endpoint(e) => {
                    nics.push(Nic {
                        endpoint: e,
                        port: i as PortId,
                        inject_scheduled: false,
                        blocked_on_credits: false,
                        next_seq: 0,
                        link_busy_until: 0,
                        source_queue: Queue::EMPTY,
                        rng: rng::stream(shared.seed, Purpose::Traffic, e as u64),
                        generated_phits: 0,
                        accepted_phits: 0,
                    });
                    (nics.len() as u16 - 1, LinkRoute::placeholder(latency), 0)
                }
                PortTarget::Switch { port, .. } => (NETWORK, shared.ports.routes[links[i] as usize], port),
                PortTarget::Unconnected => (UNCONNECTED, LinkRoute::placeholder(latency), 0),
            };
            states.push(PortState {
                link_busy_until: 0,
                xbar_busy_until: 0,
                in_xbar_busy_until: 0,
                in_occupied: 0,
                occupancy: 0,
                route,
                out_queued: 0,
                phits: 0,
                peer_port,
                grant_rr: 0,
                nic,
                first_requester: NIL,
                pending_phits: 0,
                pending_vc: 0,
                vc_rr: 0,
                in_vc_rr: 0,
                wake_scheduled: false,
            });
        }
        let n = ports.len();
        let channel = VcState {
            head_ready: u64::MAX,
            choice: None,
            next_requester: NIL,
            input: Queue::EMPTY,
            output: Queue::EMPTY,
            used: 0,
            // Buffers are checked to hold at most 65,535 phits.
            credits: p.input_buffer as u16,
            nic_credits: p.input_buffer as u16,
            space_waiter: false,
        };
        let state = RouterState {
            id,
            local: local as u32,
            vcs,
            waiting: 0,
            free_slots: Vec::new(),
            rng: rng::stream(shared.seed, Purpose::Routing, id as u64),
            ports: states,
            channels: vec![channel; n * vcs],
            slab: Vec::new(),
            nics,
            unrouted: Vec::new(),
            wanted_outputs: vec![0; n.div_ceil(64)],
            scheduled_allocations: Vec::new(),
            deliveries: VecDeque::new(),
            nic_credit_returns: VecDeque::new(),
        };
        Router { shared, state }
    }

    /// Switch id.
    pub fn id(&self) -> SwitchId {
        self.state.id
    }

    /// Index of the switch among the rank's switches.
    pub fn local_index(&self) -> usize {
        self.state.local as usize
    }

    /// Phits sent through each port during the measurement period.
    pub fn port_phits(&self) -> impl Iterator<Item = u64> + '_ {
        self.state.ports.iter().map(|p| p.phits as u64)
    }

    /// Takes the partition's counters of the current sampling period, resetting them.
    /// `now` is the checkpoint time: every router's deliveries before it are accounted
    /// first.
    pub fn take_period(routers: &mut [Router], part: &mut PartitionState, now: u64) -> Counters {
        for r in routers.iter_mut() {
            let Router { shared, state } = r;
            state.flush_deliveries(shared, now, &mut part.stats);
        }
        std::mem::take(&mut part.stats.period)
    }

    /// The attached endpoints.
    pub fn nics(&self) -> &[Nic] {
        &self.state.nics
    }

    /// Packets held by this router: in source queues, input buffers and output buffers.
    pub fn resident_packets(&self) -> u64 {
        let s = &self.state;
        let queued: u64 = s.nics.iter().map(|n| n.source_queue.len as u64).sum();
        let buffered: u64 = s.channels.iter().map(|c| (c.input.len + c.output.len) as u64).sum();
        queued + buffered
    }

    /// Packets waiting in source queues.
    pub fn source_queued_packets(&self) -> u64 {
        self.state.nics.iter().map(|n| n.source_queue.len as u64).sum()
    }

    /// Input VCs holding packets, with the output each head waits for.
    pub fn occupied_inputs(&self) -> Vec<BlockedChannel> {
        let s = &self.state;
        (0..s.channels.len())
            .filter(|&i| !s.channels[i].input.is_empty())
            .map(|i| {
                let c = &s.channels[i];
                let (wants_port, wants_vc) = c.choice.map_or((PortId::MAX, u8::MAX), |c| (c.port, c.vc));
                BlockedChannel {
                    switch: s.id,
                    port: (i / s.vcs) as PortId,
                    vc: (i % s.vcs) as u8,
                    packets: c.input.len as u32,
                    wants_port,
                    wants_vc,
                }
            })
            .collect()
    }
}

impl LogicalProcess for Router {
    type Msg = Msg;
    type Local = PartitionState;

    fn start(&mut self, ctx: &mut RouterCtx<'_>, _part: &mut PartitionState) {
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
    fn handle(&mut self, msg: Msg, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let Router { shared, state } = self;
        let sh: &Shared = shared;
        let stats = &mut part.stats;
        match msg {
            Msg::Head { port, packet } => state.on_head(sh, port, packet, ctx.now(), ctx, stats),
            Msg::Credit { port, vc, phits } => {
                state.channels[port as usize * state.vcs + vc as usize].credits += phits;
                state.ports[port as usize].occupancy -= phits as u32;
                state.try_transmit(sh, port, ctx, stats);
            }
            Msg::LinkFree { port } => {
                state.ports[port as usize].wake_scheduled = false;
                if state.settle(port as usize, ctx.now()) {
                    state.request_allocation(ctx.now(), ctx);
                }
                state.try_transmit(sh, port, ctx, stats);
            }
            Msg::Deliver { nic, packet } => state.on_deliver(sh, nic, packet, ctx.now(), stats),
            Msg::Generate { nic } => state.on_generate(sh, nic, ctx, stats),
            Msg::Inject { nic } => {
                state.nics[nic as usize].inject_scheduled = false;
                state.try_inject(sh, nic, ctx, stats)
            }
            Msg::Allocate => state.allocate(sh, ctx, part),
        }
    }

    #[inline]
    fn prefetch(&self, msg: &Msg) {
        let s = &self.state;
        let channel =
            |port: PortId, vc: u8| s.channels.as_ptr().wrapping_add(port as usize * s.vcs + vc as usize);
        match msg {
            Msg::Head { port, packet } => {
                engine::prefetch(s.ports.as_ptr().wrapping_add(*port as usize));
                engine::prefetch(channel(*port, packet.vc));
            }
            Msg::Credit { port, vc, .. } => {
                engine::prefetch(s.ports.as_ptr().wrapping_add(*port as usize));
                engine::prefetch(channel(*port, *vc));
            }
            Msg::LinkFree { port } => {
                engine::prefetch(s.ports.as_ptr().wrapping_add(*port as usize));
                engine::prefetch(channel(*port, 0));
            }
            Msg::Generate { nic } | Msg::Inject { nic } | Msg::Deliver { nic, .. } => {
                engine::prefetch(s.nics.as_ptr().wrapping_add(*nic as usize));
            }
            Msg::Allocate => {
                engine::prefetch(s.wanted_outputs.as_ptr());
                for &x in s.unrouted.iter().take(4) {
                    engine::prefetch(s.channels.as_ptr().wrapping_add(x as usize));
                    engine::prefetch(s.ports.as_ptr().wrapping_add(x as usize / s.vcs));
                }
            }
        }
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

struct Load<'a> {
    channels: &'a [VcState],
    ports: &'a [PortState],
    vcs: usize,
    capacity: u32,
    now: u64,
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
}

impl LoadView for Load<'_> {
    fn vc_occupancy(&self, port: PortId, vc: u8) -> u32 {
        let c = &self.channels[port as usize * self.vcs + vc as usize];
        self.buffered(port, vc) + self.capacity.saturating_sub(c.credits as u32)
    }
    fn port_occupancy(&self, port: PortId) -> u32 {
        // The sum over the VCs, kept up to date in the port: one cache line to read.
        let p = &self.ports[port as usize];
        let released = if p.link_busy_until as u64 <= self.now { p.pending_phits as u32 } else { 0 };
        debug_assert_eq!(
            p.occupancy - released,
            (0..self.vcs as u8).map(|v| self.vc_occupancy(port, v)).sum::<u32>()
        );
        p.occupancy - released
    }
}

impl RouterState {
    fn in_measurement(sh: &Shared, t: u64) -> bool {
        t >= sh.warmup && t < sh.end
    }

    /// Puts `held` in a free slab slot (the most recently freed: its cache line is the
    /// likeliest to be warm).
    fn store(&mut self, held: Held) -> u32 {
        match self.free_slots.pop() {
            Some(slot) => {
                self.slab[slot as usize] = held;
                slot
            }
            None => {
                self.slab.push(held);
                self.slab.len() as u32 - 1
            }
        }
    }

    fn release(&mut self, slot: u32) {
        self.free_slots.push(slot);
    }

    /// Applies output `o`'s pending buffer release if its time has come. Returns true if
    /// the allocator was waiting for that room.
    fn settle(&mut self, o: usize, t: u64) -> bool {
        let p = &mut self.ports[o];
        if p.pending_phits == 0 || p.link_busy_until as u64 > t {
            return false;
        }
        let (vc, phits) = (p.pending_vc, p.pending_phits);
        p.pending_phits = 0;
        let c = &mut self.channels[o * self.vcs + vc as usize];
        c.used -= phits;
        self.ports[o].occupancy -= phits as u32;
        std::mem::take(&mut self.channels[o * self.vcs + vc as usize].space_waiter)
    }

    fn request_allocation(&mut self, at: u64, ctx: &mut RouterCtx<'_>) {
        if !self.scheduled_allocations.contains(&at) {
            self.scheduled_allocations.push(at);
            ctx.schedule(at - ctx.now(), P_ALLOCATE, Msg::Allocate);
        }
    }

    fn on_generate(&mut self, sh: &Shared, nic_index: u16, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        let t = ctx.now();
        let size = sh.params.packet_size;
        let nic = &mut self.nics[nic_index as usize];
        let dst = sh.pattern.destination(nic.endpoint, &mut nic.rng);
        let packet = Packet::new(nic.endpoint, nic.next_seq, dst, size, t);
        nic.next_seq = nic.next_seq.wrapping_add(1);
        let was_idle = nic.source_queue.is_empty();
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.slab[slot as usize].packet = packet;
                slot
            }
            None => {
                self.slab.push(Held { packet, ready: 0, next: NIL });
                self.slab.len() as u32 - 1
            }
        };
        nic.source_queue.push_back(slot, &mut self.slab);
        st.generated_total += 1;
        st.period.generated_packets += 1;
        st.period.generated_phits += size as u64;
        if Self::in_measurement(sh, t) {
            nic.generated_phits += size as u64;
            st.measured.generated_packets += 1;
            st.measured.generated_phits += size as u64;
        }
        if let Some(gap) = geometric_gap(&mut nic.rng, sh.generation_probability) {
            if t + 1 + gap < sh.end {
                ctx.schedule(1 + gap, P_GENERATE, Msg::Generate { nic: nic_index });
            }
        }
        if was_idle {
            self.try_inject(sh, nic_index, ctx, st);
        }
    }

    fn try_inject(&mut self, sh: &Shared, nic_index: u16, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
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
        let size = self.slab[front as usize].packet.size;
        let vc = 0usize;
        let port = nic.port;
        // Credits come back lazily: apply those whose time has come.
        while let Some(&(at, n, v, phits)) = self.nic_credit_returns.front() {
            if at > t {
                break;
            }
            let p = self.nics[n as usize].port as usize;
            self.channels[p * self.vcs + v as usize].nic_credits += phits;
            self.nic_credit_returns.pop_front();
        }
        let nic = &mut self.nics[nic_index as usize];
        let credits = &mut self.channels[port as usize * self.vcs + vc].nic_credits;
        if *credits < size {
            nic.blocked_on_credits = true;
            let next_return = self.nic_credit_returns.iter().find(|r| r.1 == nic_index);
            if let Some(&(at, _, _, _)) = next_return {
                if !nic.inject_scheduled {
                    nic.inject_scheduled = true;
                    ctx.schedule(at - t, P_INJECT, Msg::Inject { nic: nic_index });
                }
            }
            return;
        }
        nic.blocked_on_credits = false;
        *credits -= size;
        let slot = nic.source_queue.pop_front(&self.slab).expect("non-empty");
        let mut packet = self.slab[slot as usize].packet;
        self.free_slots.push(slot);
        nic.link_busy_until = t + size as u64;
        packet.injected = time32(t);
        packet.vc = vc as u8;
        let src_switch = self.id;
        let (dst_switch, _) = sh.endpoints.locate(packet.dst);
        sh.routes.routing.init(src_switch, dst_switch, &mut packet.route, &mut self.rng);
        let latency = self.ports[port as usize].route.latency();
        st.departures += 1;
        st.period.injected_packets += 1;
        st.period.injected_phits += size as u64;
        if Self::in_measurement(sh, t) {
            st.measured.injected_packets += 1;
            st.measured.injected_phits += size as u64;
        }
        // The head reaches the router's input after the terminal link's latency. Nothing can
        // overtake it on that link, so it is queued at once with its ready time instead of
        // travelling as an event; the allocator ignores it until then.
        if !nic.source_queue.is_empty() && !nic.inject_scheduled {
            nic.inject_scheduled = true;
            ctx.schedule(size as u64, P_INJECT, Msg::Inject { nic: nic_index });
        }
        self.on_head(sh, port, packet, t + latency, ctx, st);
    }

    /// A head arriving at input `port` at time `arrival` (now, or later for own endpoints).
    fn on_head(
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
    /// ([`crate::routing::Routing::prefetch`]); nothing when it is delivered here.
    #[inline]
    fn prefetch_route(&self, sh: &Shared, dst: EndpointId) {
        let (dst_switch, _) = sh.endpoints.locate(dst);
        if dst_switch != self.id {
            sh.routes.routing.prefetch(self.id, dst_switch);
        }
    }

    /// Accounts the queued deliveries whose time is before `now`.
    fn flush_deliveries(&mut self, sh: &Shared, now: u64, st: &mut PartitionStats) {
        while let Some(&(at, nic, packet)) = self.deliveries.front() {
            if at >= now {
                break;
            }
            self.deliveries.pop_front();
            self.on_deliver(sh, nic, packet, at, st);
        }
    }

    fn on_deliver(&mut self, sh: &Shared, nic_index: u16, packet: Packet, t: u64, s: &mut PartitionStats) {
        let nic = &mut self.nics[nic_index as usize];
        let size = packet.size as u64;
        let (created, injected) = (packet.created as u64, packet.injected as u64);
        let latency = t - created;
        let network_latency = t - injected;
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
        if Self::in_measurement(sh, created) {
            s.measured.latency_sum += latency;
            s.measured.network_latency_sum += network_latency;
            s.measured.hops_sum += packet.hops as u64;
            s.latency.record(latency);
            s.network_latency.record(network_latency);
            s.hops.record(packet.hops as u64);
        }
        if sh.record_deliveries {
            s.deliveries.push(Delivery {
                id: packet.id,
                src: packet.src(),
                dst: packet.dst,
                received_by: nic.endpoint,
                created,
                injected,
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
            return Some(Candidate { port: dst_port, vc: 0, penalty: 0 });
        }
        let load = Load {
            channels: &self.channels,
            ports: &self.ports,
            vcs: self.vcs,
            capacity: sh.params.input_buffer,
            now,
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
        // The selection reads each candidate's VC record: let the misses overlap.
        for c in candidates.iter() {
            engine::prefetch(&self.channels[c.port as usize * self.vcs + c.vc as usize]);
        }
        if sh.routes.escape.is_some() {
            let (size, cap) = (sh.params.packet_size as u32, sh.params.output_buffer);
            candidates.retain(|c| load.buffered(c.port, c.vc) + size <= cap);
            if candidates.is_empty() {
                return None;
            }
        }
        Some(sh.selection.pick(candidates, &load, &mut self.rng))
    }

    /// Separable allocator. Heads that became ready are routed; then every input with a
    /// ready head for a free output proposes one VC (round-robin over its VCs), and every
    /// output grants one proposing input (round-robin over inputs). Only outputs that have
    /// waiting heads are visited.
    fn allocate(&mut self, sh: &Shared, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let t = ctx.now();
        self.scheduled_allocations.retain(|&x| x != t);
        if self.waiting == 0 {
            return;
        }
        let PartitionState { stats, scratch } = part;
        let vcs = self.vcs;
        let mut retry_at = u64::MAX;
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
            let in_busy = self.ports[input / vcs].in_xbar_busy_until as u64;
            // Route when the head can actually leave: adaptive choices then see the
            // freshest occupancy.
            if ready <= t && in_busy <= t {
                let Some(c) = self.route(sh, input, t, &mut scratch.candidates) else {
                    // No candidate has room (escape subnetwork only): try again next cycle.
                    retry_at = retry_at.min(t + 1);
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
                    retry_at = retry_at.min(in_busy);
                }
                k += 1;
            }
        }
        // Likewise the first requester of each output (its VC record and input port).
        for o in set_bits(&self.wanted_outputs) {
            let x = self.ports[o].first_requester;
            if x != NIL {
                engine::prefetch(&self.channels[x as usize]);
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
                retry_at = retry_at.min(busy);
                continue;
            }
            self.settle(o, t);
            let (pending_phits, pending_vc, pending_at) = {
                let p = &self.ports[o];
                (p.pending_phits, p.pending_vc, p.link_busy_until as u64)
            };
            let mut x = self.ports[o].first_requester;
            while x != NIL {
                let (i, v) = (x as usize / vcs, x as usize % vcs);
                let requester = x as usize;
                x = self.channels[requester].next_requester;
                let in_busy = self.ports[i].in_xbar_busy_until as u64;
                if in_busy > t {
                    retry_at = retry_at.min(in_busy);
                    continue;
                }
                let vc = self.channels[requester].choice.expect("requesters are routed").vc;
                let out = &mut self.channels[o * vcs + vc as usize];
                if out.used as u32 + size > out_cap {
                    if pending_phits > 0 && pending_vc == vc {
                        retry_at = retry_at.min(pending_at); // room frees when that tail leaves
                    } else {
                        out.space_waiter = true; // the next transmission will call us again
                    }
                    continue;
                }
                requests.push((o as PortId, i as PortId, v as u8));
            }
        }
        let transfer = size.div_ceil(sh.params.speedup as u32) as u64;
        let ports = self.ports.len();
        scratch.fit(ports);
        // Input arbitration: each input proposes the VC with the smallest round-robin rank
        // from its pointer.
        scratch.touched.clear();
        let mut outvoted = false;
        for &(o, i, v) in scratch.requests.iter() {
            let rank = ((v as usize + vcs - self.ports[i as usize].in_vc_rr as usize) % vcs) as u16;
            let slot = &mut scratch.proposal[i as usize];
            if slot.0 == u16::MAX {
                scratch.touched.push(i);
            } else {
                outvoted = true;
            }
            if rank < slot.0 {
                *slot = (rank, o, v);
            }
        }
        // Output arbitration: each output grants the proposing input with the smallest
        // round-robin rank from its pointer.
        scratch.granted.clear();
        for &i in &scratch.touched {
            let (_, o, v) = std::mem::replace(&mut scratch.proposal[i as usize], (u16::MAX, 0, 0));
            let rank = ((i as usize + ports - self.ports[o as usize].grant_rr as usize) % ports) as u16;
            let slot = &mut scratch.grant_choice[o as usize];
            if slot.0 == u16::MAX {
                scratch.granted.push(o);
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
        // Grants take effect in output order, so that nothing depends on the order in
        // which requests were listed.
        scratch.granted.sort_unstable();
        for g in 0..scratch.granted.len() {
            let o = scratch.granted[g];
            let (_, i, v) = std::mem::replace(&mut scratch.grant_choice[o as usize], (u16::MAX, 0, 0));
            self.grant(sh, o, i, v, transfer, ctx, stats);
            // Packets left at this input wait for its crossbar port.
            if self.ports[i as usize].in_occupied != 0 {
                retry_at = retry_at.min(t + transfer);
            }
        }
        if retry_at != u64::MAX && self.waiting > 0 {
            self.request_allocation(retry_at, ctx);
        }
    }

    #[allow(clippy::too_many_arguments)]
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
        let in_port = &mut self.ports[i as usize];
        in_port.in_vc_rr = (v + 1) % vcs as u8;
        in_port.in_xbar_busy_until = (t + transfer) as u32;
        let (in_to_nic, in_nic, in_latency, in_route, in_peer) =
            (in_port.leads_to_nic(), in_port.nic, in_port.route.latency(), in_port.route, in_port.peer_port);
        let out = &mut self.ports[o as usize];
        out.xbar_busy_until = (t + transfer) as u32;
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
                ctx.schedule(back - t, P_INJECT, Msg::Inject { nic: in_nic });
            }
        } else {
            ctx.send_on(in_route, Msg::Credit { port: in_peer, vc: in_vc, phits: size });
        }
        let out_vc = o as usize * vcs + choice.vc as usize;
        self.channels[out_vc].used += size;
        self.ports[o as usize].occupancy += size as u32;
        self.channels[out_vc].output.push_back(slot, &mut self.slab);
        self.ports[o as usize].out_queued |= out_vc_bit(choice.vc as usize);
        self.try_transmit(sh, o, ctx, st);
    }

    fn try_transmit(&mut self, sh: &Shared, o: PortId, ctx: &mut RouterCtx<'_>, st: &mut PartitionStats) {
        let t = ctx.now();
        let vcs = self.vcs;
        let port = &mut self.ports[o as usize];
        if port.nic == UNCONNECTED {
            return;
        }
        if port.link_busy_until as u64 > t {
            // Come back when the link frees (once).
            if !port.wake_scheduled {
                port.wake_scheduled = true;
                ctx.schedule(port.link_busy_until as u64 - t, P_FREE, Msg::LinkFree { port: o });
            }
            return;
        }
        if self.settle(o as usize, t) {
            self.request_allocation(t, ctx);
        }
        let port = &self.ports[o as usize];
        let to_nic = port.leads_to_nic();
        let start = port.vc_rr as usize;
        let queued = port.out_queued;
        let first = o as usize * vcs;
        let mut chosen = None;
        for k in 0..vcs {
            let v = (start + k) % vcs;
            if queued & out_vc_bit(v) == 0 {
                continue;
            }
            let c = &self.channels[first + v];
            if let Some(slot) = c.output.front() {
                if to_nic || c.credits >= self.slab[slot as usize].packet.size {
                    chosen = Some(v);
                    break;
                }
            }
        }
        let Some(v) = chosen else { return };
        let slot = self.channels[first + v].output.pop_front(&self.slab).expect("chosen VC has a packet");
        if v < 31 && self.channels[first + v].output.is_empty() {
            self.ports[o as usize].out_queued &= !out_vc_bit(v);
        }
        let packet = self.slab[slot as usize].packet;
        self.release(slot);
        let size = packet.size;
        let c = &mut self.channels[first + v];
        if !to_nic {
            c.credits -= size;
        }
        let wake = c.space_waiter;
        if !to_nic {
            self.ports[o as usize].occupancy += size as u32;
        }
        let queued = match self.ports[o as usize].out_queued {
            0 => false,
            bits if bits < 1 << 31 => true,
            _ => (first..first + vcs).any(|q| !self.channels[q].output.is_empty()),
        };
        let port = &mut self.ports[o as usize];
        port.vc_rr = ((v + 1) % vcs) as u8;
        port.link_busy_until = (t + size as u64) as u32;
        port.pending_vc = v as u8;
        port.pending_phits = size;
        if (wake || queued) && !port.wake_scheduled {
            port.wake_scheduled = true;
            ctx.schedule(size as u64, P_FREE, Msg::LinkFree { port: o });
        }
        st.departures += 1;
        st.period.link_transmissions += 1;
        if Self::in_measurement(sh, t) {
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
            // The tail reaches the endpoint `latency + size - 1` cycles from now. Nothing
            // can change that, so the delivery is queued here and accounted when its time
            // has passed, without an event, unless packets of different sizes would break
            // the queue's time order.
            let at = t + latency + size as u64 - 1;
            self.flush_deliveries(sh, t, st);
            if self.deliveries.back().is_none_or(|d| d.0 <= at) {
                self.deliveries.push_back((at, nic, packet));
            } else {
                ctx.schedule(at - t, P_DELIVER, Msg::Deliver { nic, packet });
            }
        } else {
            ctx.send_on(route, Msg::Head { port: peer_port, packet });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_state_is_compact() {
        // One port in one cache line, a VC in three quarters of one.
        assert_eq!(std::mem::size_of::<PortState>(), 64);
        assert_eq!(std::mem::size_of::<VcState>(), 48);
    }

    #[test]
    fn an_event_is_one_cache_line() {
        // Every packet-hop moves one event through the engine's queues: a 32-byte packet,
        // the variant's tag and port, and the engine's time, LP and tie-breaker.
        assert_eq!(std::mem::size_of::<Msg>(), 40);
        assert_eq!(std::mem::size_of::<engine::Event<Msg>>(), 64);
    }

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

    #[test]
    fn slab_queues_are_fifos_that_share_one_slab() {
        let packet = Packet::new(0, 0, 0, 1, 0);
        let mut slab = vec![Held { packet, ready: 0, next: NIL }; 4];
        let (mut a, mut b) = (Queue::EMPTY, Queue::EMPTY);
        a.push_back(0, &mut slab);
        b.push_back(1, &mut slab);
        a.push_back(2, &mut slab);
        assert_eq!((a.len, a.front(), b.front()), (2, Some(0), Some(1)));
        assert_eq!(a.pop_front(&slab), Some(0));
        a.push_back(3, &mut slab);
        assert_eq!(a.pop_front(&slab), Some(2));
        assert_eq!(a.pop_front(&slab), Some(3));
        assert_eq!(a.pop_front(&slab), None);
        assert!(a.is_empty() && !b.is_empty());
        assert_eq!(b.pop_front(&slab), Some(1));
        assert!(b.is_empty() && b.tail == NIL);
    }
}

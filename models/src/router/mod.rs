//! The router (switch) logical process with its endpoints (NICs).
//!
//! # Model: virtual cut-through at packet granularity
//! A packet of `S` phits holds a link for `S` cycles (1 phit/cycle); only its head is
//! simulated, the tail follows `S - 1` cycles behind. Per hop:
//!
//! 1. the head arrives at an input VC buffer (`t_a`) and is routed after the
//!    router delay `R` (pipeline latency);
//! 2. the separable allocator (input-first or output-first, in one or more iterations;
//!    round-robin or random at inputs over VCs and at outputs over inputs) moves it across
//!    the crossbar into the chosen output VC buffer when that buffer has room for the
//!    whole packet (VCT). Input and output crossbar ports stay busy `ceil(S / speedup)`
//!    cycles;
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
//! # Events
//! A router receives two kinds of events (`messages.rs`): link messages ([`LinkMsg`]: a
//! packet head, credits) from the routers at the far ends of its links, and events it
//! schedules for itself ([`SelfEvent`]: a link frees, a delivery, generation and injection
//! at an endpoint, an allocator pass), ordered within a cycle by their priority. The engine
//! carries both in one flat [`Msg`], so that an event stays one cache line. Several things
//! happen without events because nothing can change them: the release of output-buffer
//! room when a tail leaves, credit returns to the endpoints, injection's arrival at the
//! router and deliveries to own endpoints.
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
//!
//! # Files
//! - `mod.rs` (here): parameters, the shared read-only state, the [`Router`] and its
//!   `RouterState`, construction, and the dispatch of events ([`LogicalProcess`]);
//! - `messages.rs`: [`LinkMsg`], [`SelfEvent`] and their carrier [`Msg`];
//! - `buffers.rs`: the port and VC records, the packet slab and its queues;
//! - `nic.rs`: the endpoints: generation, injection under credits, delivery;
//! - `allocator.rs`: head arrival, routing, the separable allocator;
//! - `link.rs`: transmission on output links;
//! - `stats.rs`: [`PartitionStats`] and what a router reports.

mod allocator;
mod app;
mod buffers;
mod link;
mod messages;
mod nic;
pub mod presets;
mod stats;

pub use messages::{LinkMsg, Msg, MsgKind, SelfEvent};
pub use nic::Nic;
pub use presets::{Preset, PRESETS};
pub use stats::{BlockedChannel, Delivery, JobStats, PartitionStats, StalledRank};

use crate::traffic::{geometric_gap, Pattern};
use crate::workload::{Workload, WORKLOAD_PACKET};
use allocator::Scratch;
use app::AppRank;
use base::rng::{self, Purpose, Rng};
use base::settings::Choice;
use buffers::{Held, PortState, Queue, SourceQueue, VcState, NETWORK, NIL, UNCONNECTED};
use engine::{Ctx, LinkRoute, LogicalProcess};
use messages::Post;
use routing::packet::Packet;
use routing::{Routes, Selection};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;
use topology::{EndpointMap, Port, PortId, PortTarget, SwitchId};

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
    /// Which input VC endpoints inject into.
    pub injection_vc: InjectionVc,
    /// Packets a source queue holds (0: unbounded).
    pub source_queue: u32,
    /// A head that was not granted chooses again, every cycle, among the candidates whose
    /// output VC has room (otherwise it keeps its first choice until granted).
    pub reselect: bool,
    /// What a crossbar transfer holds busy.
    pub crossbar: Crossbar,
    /// How the allocator's arbiters choose among requests.
    pub arbitration: Arbitration,
    /// Which output VC of a terminal port a packet for an own endpoint takes.
    pub ejection_vc: EjectionVc,
    /// The order of the separable allocator's two arbitrations (port crossbar).
    pub allocator: Allocator,
    /// Passes of the separable allocator per allocation, 1..=8: later passes match the
    /// inputs and outputs that earlier passes left free.
    pub allocator_iterations: u8,
    /// Where a packet for a switch needs credits for the downstream input VC.
    pub credit_check: CreditCheck,
}

/// Where a packet bound for another switch must find credits for all of it in the
/// downstream input VC: what the output buffer is, with respect to the credit loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CreditCheck {
    /// At the link: a packet enters the output buffer when it has room there and waits in
    /// it for credits, so the output buffer is storage of its own, in front of the credit
    /// loop (an output-buffered router's staging queue).
    #[default]
    Link,
    /// At the crossbar: a packet is granted only with credits for all of it, taken then, as
    /// BookSim2's input-queued router does (a flit crosses only with a downstream credit,
    /// iq_router.cpp:1375-1377, spent at the crossbar, iq_router.cpp:1122). The output
    /// buffer then never holds more than the downstream VC has room for, and an output's
    /// occupancy, as adaptive routing reads it, is the downstream credits in use
    /// (BookSim's `GetUsedCredit`), output-buffered packets included.
    Crossbar,
}

/// The credit checks `router.credit_check` accepts.
pub const CREDIT_CHECKS: &[Choice<CreditCheck>] = &[
    Choice {
        value: CreditCheck::Link,
        name: "link",
        doc: "a packet enters the output buffer when it has room there and waits in it for downstream credits: the output buffer is storage in front of the credit loop (default)",
    },
    Choice {
        value: CreditCheck::Crossbar,
        name: "crossbar",
        doc: "a packet crosses the crossbar only with credits for all of it in the downstream input VC, taken then (BookSim2's iq router): the output buffer holds no more than the downstream VC has room for",
    },
];

base::named_by_registry!(CreditCheck, CREDIT_CHECKS);

/// Which output VC of the terminal port a packet for an own endpoint is moved into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EjectionVc {
    /// Always VC 0: ejections to an endpoint queue in one output buffer.
    Zero,
    /// Any VC with room for the packet (and a free crossbar output), chosen at random: as
    /// CAMINOS's `Hops` policy allows every VC towards a server, so that a head for an
    /// endpoint leaves its input buffer as soon as any ejection buffer has room. The
    /// default: BookSim2's ejection goes through one output queue per port, not per VC.
    #[default]
    Any,
}

/// The ejection VC choices `router.ejection_vc` accepts.
pub const EJECTION_VCS: &[Choice<EjectionVc>] = &[
    Choice { value: EjectionVc::Zero, name: "zero", doc: "always VC 0 of the terminal port" },
    Choice {
        value: EjectionVc::Any,
        name: "any",
        doc: "any VC of the terminal port with room (and, with the per-VC crossbar, a free crossbar output), at random (default); CAMINOS's Hops policy allows every VC towards a server",
    },
];

base::named_by_registry!(EjectionVc, EJECTION_VCS);

/// How the allocator's arbiters (an input among its VCs, an output among its requesters)
/// choose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arbitration {
    /// Round-robin from a pointer that moves past each grant.
    #[default]
    RoundRobin,
    /// Uniformly at random (the router's random stream), as CAMINOS's Basic router matches
    /// requests in a random order.
    Random,
}

/// The arbitrations `router.arbitration` accepts.
pub const ARBITRATIONS: &[Choice<Arbitration>] = &[
    Choice {
        value: Arbitration::RoundRobin,
        name: "round_robin",
        doc: "round-robin from a pointer that moves past each grant (default)",
    },
    Choice {
        value: Arbitration::Random,
        name: "random",
        doc: "uniformly random, from the router's random stream; CAMINOS's Basic router grants requests in a random order",
    },
];

base::named_by_registry!(Arbitration, ARBITRATIONS);

/// Which side of the port crossbar's separable allocator arbitrates first. With the
/// per-VC crossbar every input VC is a crossbar input with one request, so only the
/// outputs arbitrate and the order does not matter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Allocator {
    /// Each input port proposes one of its requesting VCs, then each output port grants
    /// one of the inputs that proposed to it (BookSim2's `separable_input_first`).
    #[default]
    InputFirst,
    /// Each output port grants one of the input VCs that request it, then each input port
    /// accepts one of the grants it received (BookSim2's `separable_output_first`).
    OutputFirst,
}

/// The allocators `router.allocator` accepts.
pub const ALLOCATORS: &[Choice<Allocator>] = &[
    Choice {
        value: Allocator::InputFirst,
        name: "input_first",
        doc: "separable, input-first: each input port proposes one requesting VC, each output grants one proposal (default; BookSim2's separable_input_first)",
    },
    Choice {
        value: Allocator::OutputFirst,
        name: "output_first",
        doc: "separable, output-first: each output port grants one requesting input VC, each input accepts one grant (BookSim2's separable_output_first)",
    },
];

base::named_by_registry!(Allocator, ALLOCATORS);

/// The crossbar's ports: what one packet's transfer holds busy for
/// `ceil(packet_size / speedup)` cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Crossbar {
    /// One crossbar input per input port and one output per output port: an input port
    /// sends one packet at a time, whichever VC it comes from (an input-queued switch).
    #[default]
    Port,
    /// One crossbar input per (input port, VC) and one output per (output port, VC), as
    /// CAMINOS's Basic router moves a phit per cycle for each (port, VC) pair: packets of
    /// different VCs cross at once, and only heads wanting the same output VC compete.
    Vc,
    /// An output-queued switch: an input port sends one packet at a time, as with
    /// `Port`, but outputs never conflict: any number of inputs may move packets into one
    /// output port at once (the output memory runs at N times the link rate), limited
    /// only by room in the output VC buffers.
    OutputQueued,
}

/// The crossbar models `router.crossbar` accepts.
pub const CROSSBARS: &[Choice<Crossbar>] = &[
    Choice {
        value: Crossbar::Port,
        name: "port",
        doc: "one crossbar input per input port and one output per output port: an input sends one packet at a time, whatever its VC (default)",
    },
    Choice {
        value: Crossbar::Vc,
        name: "vc",
        doc: "one crossbar input per (input port, VC) and one output per (output port, VC), as CAMINOS's Basic router: packets of different VCs cross at once; heads compete only for the same output VC",
    },
    Choice {
        value: Crossbar::OutputQueued,
        name: "output_queued",
        doc: "an output-queued switch: an input port sends one packet at a time, but outputs never conflict (only output buffer room limits them); the ideal that input-queued designs with speedup approach",
    },
];

base::named_by_registry!(Crossbar, CROSSBARS);

/// Which VC of the router's input port an endpoint injects a packet into.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InjectionVc {
    /// Always VC 0: the source queue is a FIFO behind one input buffer.
    Zero,
    /// The lowest VC with credits for the packet among those it may start on, as
    /// CAMINOS's servers choose (caminos-lib 0.6.3, src/lib.rs): the routing's VCs (below
    /// an escape subnetwork's), or only VC 0 under a DAVC policy, whose VC count starts at
    /// the injection VC (the DAVC paper injects on VC 0). The default: BookSim2's
    /// endpoints likewise take any idle VC the routing allows.
    #[default]
    Any,
}

/// The injection VC choices `router.injection_vc` accepts.
pub const INJECTION_VCS: &[Choice<InjectionVc>] = &[
    Choice { value: InjectionVc::Zero, name: "zero", doc: "always VC 0: the source queue is a FIFO behind one input buffer" },
    Choice {
        value: InjectionVc::Any,
        name: "any",
        doc: "the lowest VC with credits for the packet among those it may start on (the routing's VCs below an escape subnetwork; VC 0 under DAVC), as CAMINOS's servers choose (default)",
    },
];

base::named_by_registry!(InjectionVc, INJECTION_VCS);

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
    /// VCs `0..injection_vcs` a packet may be injected on (see [`InjectionVc`]).
    pub injection_vcs: u8,
    /// Packet generation probability per endpoint per cycle.
    pub generation_probability: f64,
    /// Start of the measurement period.
    pub warmup: u64,
    /// End of the run; nothing is generated from here on.
    pub end: u64,
    /// Completion-time mode: packets each endpoint generates in all (0: no limit).
    pub packets_per_endpoint: u32,
    /// Where every endpoint is.
    pub endpoints: EndpointMap,
    /// Run seed.
    pub seed: u64,
    /// Record every delivered packet (for tests).
    pub record_deliveries: bool,
    /// The application jobs, if any: their ranks run at the endpoints the workload maps
    /// them to, and those endpoints generate no synthetic traffic.
    pub workload: Option<Arc<Workload>>,
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

/// The state of a switch and its endpoints. Its methods live in the files of the parts
/// they model (see the module docs); the fields are visible to all of them.
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
    /// With `crossbar = "vc"`: until when each crossbar input (`port * vcs + vc`) and
    /// output (`port * vcs + output vc`) is busy; empty otherwise (the ports' records
    /// hold the busy times of the per-port crossbar).
    vc_in_busy: Vec<u32>,
    vc_out_busy: Vec<u32>,
    /// `credit_check = "crossbar"`: packets in the output buffers of network ports hold
    /// their downstream credits, so those ports' occupancy is the credits in use.
    credits_at_crossbar: bool,
    /// The application ranks at this router's endpoints (see `app.rs`).
    apps: Vec<AppRank>,
    /// Scratch space for a rank's message lists.
    messages: Vec<(u32, u64)>,
    /// A rank is posting its sends (see `app.rs`).
    posting: bool,
}

/// The engine's context as a router sees it.
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
                        source_queue: SourceQueue::EMPTY,
                        rng: rng::stream(shared.seed, Purpose::Traffic, e as u64),
                        generated_phits: 0,
                        accepted_phits: 0,
                        last_delivery: 0,
                        app: NIL,
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
            vc_in_busy: if p.crossbar == Crossbar::Vc { vec![0; n * vcs] } else { Vec::new() },
            vc_out_busy: if p.crossbar == Crossbar::Vc { vec![0; n * vcs] } else { Vec::new() },
            credits_at_crossbar: p.credit_check == CreditCheck::Crossbar,
            apps: Vec::new(),
            messages: Vec::new(),
            posting: false,
        };
        let mut state = state;
        state.place_ranks(&shared);
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

    /// The attached endpoints.
    pub fn nics(&self) -> &[Nic] {
        &self.state.nics
    }
}

impl LogicalProcess for Router {
    type Msg = Msg;
    type Local = PartitionState;

    fn start(&mut self, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let Router { shared, state } = self;
        let p = shared.generation_probability;
        for (i, nic) in state.nics.iter_mut().enumerate() {
            if nic.app != NIL {
                // A rank's endpoint sends its rank's messages only.
                continue;
            }
            if let Some(gap) = geometric_gap(&mut nic.rng, p) {
                if gap < shared.end {
                    ctx.schedule_self(gap, SelfEvent::Generate { nic: i as u16 });
                }
            }
        }
        state.start_ranks(shared, ctx, &mut part.stats);
    }

    #[inline]
    fn handle(&mut self, msg: Msg, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let Router { shared, state } = self;
        let sh: &Shared = shared;
        let stats = &mut part.stats;
        match msg.split() {
            MsgKind::Link(msg) => match msg {
                LinkMsg::Head { port, packet } => state.on_head(sh, port, packet, ctx.now(), ctx, stats),
                LinkMsg::Credit { port, vc, phits } => state.on_credit(sh, port, vc, phits, ctx, stats),
            },
            MsgKind::Local(event) => match event {
                SelfEvent::LinkFree { port } => state.on_link_free(sh, port, ctx, stats),
                SelfEvent::Deliver { nic, packet } => {
                    state.on_deliver(sh, nic, packet, ctx.now(), stats);
                    if packet.id & WORKLOAD_PACKET != 0 {
                        state.on_rank_receive(sh, nic, &packet, ctx, stats);
                    }
                }
                SelfEvent::ComputeDone { nic } => state.on_compute_done(sh, nic, ctx, stats),
                SelfEvent::Generate { nic } => state.on_generate(sh, nic, ctx, stats),
                SelfEvent::Inject { nic } => state.on_inject(sh, nic, ctx, stats),
                SelfEvent::Allocate => state.allocate(sh, ctx, part),
            },
        }
    }

    #[inline]
    fn prefetch(&self, msg: &Msg) {
        let s = &self.state;
        // A 48-byte VC record may straddle two lines: ask for both.
        let channels = |port: PortId, vc: u8, count: usize| {
            let first = s.channels.as_ptr().wrapping_add(port as usize * s.vcs + vc as usize);
            engine::prefetch_bytes(first as *const u8, count * std::mem::size_of::<VcState>());
        };
        match msg.split() {
            MsgKind::Link(LinkMsg::Head { port, packet }) => {
                engine::prefetch(s.ports.as_ptr().wrapping_add(port as usize));
                channels(port, packet.vc, 1);
            }
            // The link then looks at every VC with packets queued for it.
            MsgKind::Link(LinkMsg::Credit { port, .. }) | MsgKind::Local(SelfEvent::LinkFree { port }) => {
                engine::prefetch(s.ports.as_ptr().wrapping_add(port as usize));
                channels(port, 0, s.vcs);
            }
            MsgKind::Local(
                SelfEvent::Generate { nic }
                | SelfEvent::Inject { nic }
                | SelfEvent::Deliver { nic, .. }
                | SelfEvent::ComputeDone { nic },
            ) => {
                engine::prefetch(s.nics.as_ptr().wrapping_add(nic as usize));
            }
            MsgKind::Local(SelfEvent::Allocate) => {
                engine::prefetch(s.wanted_outputs.as_ptr());
                for &x in s.unrouted.iter().take(4) {
                    channels((x as usize / s.vcs) as PortId, (x as usize % s.vcs) as u8, 1);
                    engine::prefetch(s.ports.as_ptr().wrapping_add(x as usize / s.vcs));
                }
            }
        }
    }
}

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
//! - `mod.rs` (here): the shared read-only state, the [`Router`] and its `RouterState`,
//!   construction, and the dispatch of events ([`LogicalProcess`]);
//! - `options.rs`: the parameters ([`RouterParams`]) and the named options of `[router]`;
//! - `messages.rs`: [`LinkMsg`], [`SelfEvent`] and their carrier [`Msg`];
//! - `buffers.rs`: the port and VC records, the packet slab and its queues;
//! - `switch.rs`: the switch as one record (`Switch`): ports, VCs, allocator state,
//!   stalls;
//! - `endpoints.rs`: the switch's endpoints as one record (`Endpoints`): NICs,
//!   application ranks, deliveries and returning credits;
//! - `nic.rs`: the endpoints: generation, injection under credits, delivery;
//! - `route.rs`: head arrival and routing;
//! - `allocator.rs`: the allocator's passes and the grants;
//! - `separable.rs`: the separable allocator's matching and its scratch space;
//! - `link.rs`: transmission on output links, and each link's stall time;
//! - `errors.rs`: bit errors on switch-to-switch links and their link-level replays;
//! - `flaps.rs`: links that go down and come back during a run;
//! - `flow.rs`: link-level flow control without credits: PFC's pauses and resumes, the
//!   drops of a full input buffer;
//! - `speeds.rs`: links of different speeds: serialization, the tail's arrival,
//!   crossbar transfers and buffer sizes per port;
//! - `cc.rs`: congestion control (`congestion.control`) at the endpoints: a
//!   destination's count of its senders (per destination), notifications and
//!   acknowledgements back to the source, the source's flows and the packets they hold;
//! - `cc_switch.rs`: congestion control at the switch: the marking at the grant and the
//!   notices forwarded hop by hop;
//! - `transport.rs`: the transports of application messages (`transport.kind`): the
//!   ranks' connections, acknowledgements, resends and timers;
//! - `sharing.rs`: reports of state to neighbouring routers, for routings that read them
//!   (what routings that learn measure travels in `route.rs`, on each head's arrival);
//! - `stats.rs`: [`PartitionStats`] and what a router reports.

mod allocator;
mod app;
mod buffers;
mod cc;
mod cc_switch;
mod endpoints;
mod errors;
mod flaps;
mod flow;
mod link;
mod messages;
mod nic;
mod options;
pub mod presets;
mod route;
mod separable;
mod sharing;
mod speeds;
mod stats;
mod switch;
mod transport;

pub use errors::{LinkErrors, MAX_BIT_ERROR_RATE};
pub use flaps::{LinkFlap, LinkFlaps};
pub use flow::{headroom, ClassLink, FlowLevels, Levels};
pub use messages::{LinkMsg, Msg, MsgKind, SelfEvent};
pub use nic::Nic;
pub use options::{
    Allocator, Arbitration, CreditCheck, Crossbar, EjectionVc, FlowControl, InjectionVc, LinkErrorParams,
    PfcParams, Recovery, RouterParams, Switching, ALLOCATORS, ARBITRATIONS, CREDIT_CHECKS, CROSSBARS,
    EJECTION_VCS, FLOW_CONTROLS, INJECTION_VCS, SWITCHINGS,
};
pub use presets::{Preset, PRESETS};
pub use speeds::LinkSpeeds;
pub use stats::{
    BlockedChannel, Delivery, JobStats, PartitionStats, PhaseSpan, RankEnd, SendRecord, StalledRank,
};

use crate::traffic::{geometric_gap, Pattern};
use crate::workload::{Workload, WORKLOAD_PACKET};
use base::rng::{self, Purpose, Rng};
use buffers::{Held, PortState, Queue, SourceQueue, VcState, NETWORK, NIL, UNCONNECTED};
use endpoints::Endpoints;
use engine::{Ctx, LinkRoute, LogicalProcess};
use messages::Post;
use routing::{Routes, Selection};
use separable::Scratch;
use std::sync::Arc;
use switch::Switch;
use topology::{EndpointId, EndpointMap, Port, PortId, PortTarget, SwitchId};

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
    /// Speed of every link class.
    pub class_speed: Vec<topology::LinkSpeed>,
    /// The speed `traffic.load` is stated against (`Network::load_speed`).
    pub load_speed: topology::LinkSpeed,
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
    /// ECMP's flows per pair for application packets (`routing.ecmp_flows`).
    pub ecmp_flows: u32,
    /// Destination pattern.
    pub pattern: Pattern,
    /// Router parameters.
    pub params: RouterParams,
    /// VCs `0..injection_vcs` a packet may be injected on (see [`InjectionVc`]).
    pub injection_vcs: u8,
    /// Packet generation probability per endpoint per cycle.
    pub generation_probability: f64,
    /// Synthetic packets' lengths drawn per packet (`traffic.packet_sizes`); `None`: all
    /// `params.packet_size`.
    pub packet_sizes: Option<crate::traffic::PacketSizes>,
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
    /// Measure reordering per flow at the endpoints (`simulation.reordering`, `nic.rs`).
    pub reordering: bool,
    /// The application jobs, if any: their ranks run at the endpoints the workload maps
    /// them to, and those endpoints generate no synthetic traffic.
    pub workload: Option<Arc<Workload>>,
    /// The congestion's targets (`congestion.targets`), sorted: packets to them are the
    /// aggressors.
    pub targets: Vec<EndpointId>,
    /// The congestion control, if one is on (`congestion.control`).
    pub cc: Option<crate::congestion::Scheme>,
    /// The link classes' speeds and the buffers that follow from them, when not every
    /// link sends one phit a cycle (`topology.link_speeds`).
    pub speeds: Option<LinkSpeeds>,
    /// The flow control's levels per link class, unless links run on credits
    /// (`router.flow_control`, `flow.rs`).
    pub flow: Option<FlowLevels>,
    /// Bit errors on switch-to-switch links and their replays (`[router.link_errors]`,
    /// `errors.rs`); `None` without.
    pub link_errors: Option<LinkErrors>,
    /// Links that go down and come back during the run (`router.link_flaps`, `flaps.rs`);
    /// `None` without.
    pub flaps: Option<LinkFlaps>,
    /// The transport application messages travel on, if any (`transport.kind`,
    /// `transport.rs`).
    pub transport: Option<crate::transport::Transport>,
    /// NSCC's parameters and the switches' ECN marking, with
    /// `transport.uec.congestion = "nscc"`; `None` otherwise.
    pub nscc: Option<crate::transport::Nscc>,
    /// The first switch of the fabric: on GPU nodes the GPUs and their scale-up switches
    /// come before it and mark no packet for congestion control (their queues are a
    /// node's insides, not the fabric's); 0 without nodes.
    pub first_fabric_switch: SwitchId,
}

impl Shared {
    /// Whether a packet for endpoint `dst` is one of the congestion's aggressors.
    #[inline]
    pub fn is_aggressor(&self, dst: EndpointId) -> bool {
        !self.targets.is_empty() && self.targets.binary_search(&dst).is_ok()
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

/// The state of a switch and its endpoints. Its methods live in the files of the parts
/// they model (see the module docs); the fields are visible to all of them.
struct RouterState {
    id: SwitchId,
    /// Index of the switch among the rank's switches ([`LocalPorts`]).
    local: u32,
    vcs: usize,
    /// Free slab slots, most recently freed last.
    free_slots: Vec<u32>,
    rng: Rng,
    /// Every packet in the router's buffers and its endpoints' source queues lives in one
    /// slot of this slab from arrival to departure; buffers and queues are lists of slots.
    /// Freed slots are reused first, so the packet data a router touches stays in few,
    /// warm cache lines.
    slab: Vec<Held>,
    /// The switch: its ports, VCs, allocator state and stalls (`switch.rs`).
    sw: Switch,
    /// The switch's endpoints: their NICs, application ranks, deliveries and returning
    /// credits (`endpoints.rs`).
    ends: Endpoints,
    /// With a routing that shares state: what the neighbours reported and what this
    /// router last said (see `sharing.rs`); `None` otherwise.
    reports: Option<Box<sharing::Reports>>,
    /// With a routing that learns: what this router learned (`Routing::learned_len`
    /// values); empty otherwise.
    learned: Vec<f32>,
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
        // With the stall record a router gets at its first stall, under any load.
        let per_port = size_of::<PortState>()
            + size_of::<Port>()
            + 4
            + size_of::<LinkRoute>()
            + size_of::<link::LinkStall>();
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
                        cc: shared.cc.map(|_| Box::default()),
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
                flags: 0,
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
            free_slots: Vec::new(),
            rng: rng::stream(shared.seed, Purpose::Routing, id as u64),
            slab: Vec::new(),
            sw: Switch {
                waiting: 0,
                ports: states,
                channels: vec![channel; n * vcs],
                unrouted: Vec::new(),
                wanted_outputs: vec![0; n.div_ceil(64)],
                scheduled_allocations: Vec::new(),
                vc_in_busy: if p.crossbar == Crossbar::Vc { vec![0; n * vcs] } else { Vec::new() },
                vc_out_busy: if p.crossbar == Crossbar::Vc { vec![0; n * vcs] } else { Vec::new() },
                credits_at_crossbar: p.credit_check == CreditCheck::Crossbar,
                stalls: Vec::new(),
                levels: shared.flow.as_ref().map(|_| Box::new(flow::InputLevels::new(n, vcs))),
                replays: shared.link_errors.as_ref().map(|e| {
                    Box::new(errors::Replays::new(e, shared.seed, id, ports.iter().map(|p| p.class)))
                }),
                cc_countdown: Vec::new(),
                notice_candidates: Vec::new(),
            },
            ends: Endpoints::new(nics),
            reports: sharing::Reports::new(&shared, id, ports),
            learned: {
                let mut learned = vec![0.0; shared.routes.routing.learned_len(id)];
                shared.routes.routing.init_learned(id, &mut learned);
                learned
            },
        };
        let mut state = state;
        if shared.speeds.is_some() {
            // Each port's buffers follow its link's speed, and so do the credits for the
            // buffer across the link (of the same class at both ends).
            for port in 0..n {
                let credits = state.input_capacity(&shared, port as PortId) as u16;
                for c in &mut state.sw.channels[port * vcs..(port + 1) * vcs] {
                    c.credits = credits;
                    c.nic_credits = credits;
                }
            }
        }
        if shared.reordering {
            state.ends.latest_from = vec![Default::default(); state.ends.nics.len()];
        }
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
        &self.state.ends.nics
    }
}

impl LogicalProcess for Router {
    type Msg = Msg;
    type Local = PartitionState;

    fn start(&mut self, ctx: &mut RouterCtx<'_>, part: &mut PartitionState) {
        let Router { shared, state } = self;
        let p = shared.generation_probability;
        for (i, nic) in state.ends.nics.iter_mut().enumerate() {
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
                LinkMsg::Pause { port, vc, paused } => state.on_pause(sh, port, vc, paused, ctx, stats),
                LinkMsg::Report { port, report } => state.on_report(port, report),
                LinkMsg::Notice { port, packet } => state.forward_notice(sh, port, packet, ctx),
                LinkMsg::Feedback { port, feedback } => {
                    sh.routes.routing.on_feedback(state.id, port, feedback, &mut state.learned)
                }
            },
            MsgKind::Local(event) => match event {
                SelfEvent::LinkFree { port } => state.on_link_free(sh, port, ctx, stats),
                SelfEvent::Deliver { nic, packet } => {
                    if packet.is_transport_ack() {
                        // An acknowledgement is no data: counted as a packet only.
                        stats.arrivals += 1;
                        stats.delivered_total += 1;
                        stats.period.control_delivered += 1;
                        state.transport_on_ack(sh, nic, &packet, ctx, stats);
                        return;
                    }
                    if sh.cc.is_some() {
                        state.cc_on_delivery(sh, nic, &packet, ctx, stats);
                        if packet.is_cnp() {
                            // A notification is no data: counted as a packet only.
                            stats.arrivals += 1;
                            stats.delivered_total += 1;
                            stats.period.control_delivered += 1;
                            state.try_inject(sh, nic, ctx, stats);
                            return;
                        }
                    }
                    state.on_deliver(sh, nic, packet, ctx.now(), stats);
                    if packet.id & WORKLOAD_PACKET != 0 {
                        if sh.transport.is_some() {
                            state.transport_on_data(sh, nic, &packet, ctx, stats);
                        } else {
                            state.on_rank_receive(sh, nic, &packet, ctx, stats);
                        }
                    }
                }
                SelfEvent::ComputeDone { nic, op } => state.on_compute_done(sh, nic, op, ctx, stats),
                SelfEvent::Generate { nic } => state.on_generate(sh, nic, ctx, stats),
                SelfEvent::Inject { nic } => state.on_inject(sh, nic, ctx, stats),
                SelfEvent::Wake { nic } => state.try_inject(sh, nic, ctx, stats),
                SelfEvent::Allocate => state.allocate(sh, ctx, part),
                SelfEvent::Report => state.on_report_due(sh, ctx),
                SelfEvent::Timeout { nic, peer } => state.transport_on_timeout(sh, nic, peer, ctx, stats),
                SelfEvent::Notify { nic, from, senders, ack } => {
                    state.cc_notify(sh, nic, from, senders, ack, ctx, stats)
                }
            },
        }
    }

    #[inline]
    fn prefetch(&self, msg: &Msg) {
        let s = &self.state;
        // A 48-byte VC record may straddle two lines: ask for both.
        let channels = |port: PortId, vc: u8, count: usize| {
            let first = s.sw.channels.as_ptr().wrapping_add(port as usize * s.vcs + vc as usize);
            engine::prefetch_bytes(first as *const u8, count * std::mem::size_of::<VcState>());
        };
        match msg.split() {
            MsgKind::Link(LinkMsg::Head { port, packet }) => {
                engine::prefetch(s.sw.ports.as_ptr().wrapping_add(port as usize));
                channels(port, packet.vc, 1);
            }
            // The link then looks at every VC with packets queued for it.
            MsgKind::Link(LinkMsg::Credit { port, .. } | LinkMsg::Pause { port, .. })
            | MsgKind::Local(SelfEvent::LinkFree { port }) => {
                engine::prefetch(s.sw.ports.as_ptr().wrapping_add(port as usize));
                channels(port, 0, s.vcs);
            }
            MsgKind::Local(
                SelfEvent::Generate { nic }
                | SelfEvent::Inject { nic }
                | SelfEvent::Deliver { nic, .. }
                | SelfEvent::ComputeDone { nic, .. },
            ) => {
                engine::prefetch(s.ends.nics.as_ptr().wrapping_add(nic as usize));
            }
            MsgKind::Link(LinkMsg::Report { .. } | LinkMsg::Feedback { .. } | LinkMsg::Notice { .. })
            | MsgKind::Local(
                SelfEvent::Report
                | SelfEvent::Notify { .. }
                | SelfEvent::Wake { .. }
                | SelfEvent::Timeout { .. },
            ) => {}
            MsgKind::Local(SelfEvent::Allocate) => {
                engine::prefetch(s.sw.wanted_outputs.as_ptr());
                for &x in s.sw.unrouted.iter().take(4) {
                    channels((x as usize / s.vcs) as PortId, (x as usize % s.vcs) as u8, 1);
                    engine::prefetch(s.sw.ports.as_ptr().wrapping_add(x as usize / s.vcs));
                }
            }
        }
    }
}

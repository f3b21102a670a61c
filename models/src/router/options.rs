//! The router's parameters ([`RouterParams`], from `[router]`) and its closed sets of
//! options as configs name them: the flow control, the credit check, the ejection and injection VCs, the
//! arbitration, the allocator and the crossbar, each listed with its doc for `xnet list`.

use base::settings::Choice;
use serde::{Deserialize, Serialize};

/// Router and endpoint parameters: `[router]` as read (its defaults and docs here; the
/// ranges `Config::validate` checks in `config/sections.rs`), a preset already expanded.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterParams {
    /// Virtual channels per port, 1..=64. Default 2.
    #[serde(default = "d_vcs")]
    pub vcs: u8,
    /// Input buffer per VC in phits, `packet_size..=65535`. Default 64.
    #[serde(default = "d_in")]
    pub input_buffer: u32,
    /// Output buffer per VC in phits, `packet_size..=65535`. Default 512: deep output
    /// queues, as BookSim2's (unbounded) ones, so that they do not limit throughput.
    #[serde(default = "d_out")]
    pub output_buffer: u32,
    /// Packet length in phits, 1..=4096, the header included: synthetic traffic's packets,
    /// and the longest packet (the MTU) of a message, whose last packet carries only what
    /// remains. Default 16.
    #[serde(default = "d_size")]
    pub packet_size: u16,
    /// Phits of every message packet that carry no data (its header), below `packet_size`.
    /// Default 0: a packet is all data.
    #[serde(default)]
    pub header_phits: u16,
    /// Crossbar speedup, 1..=16. Default 2 (BookSim2's Dragonfly example, the SurePath
    /// paper's Table 2).
    #[serde(default = "d_speedup")]
    pub speedup: u16,
    /// Router pipeline delay in cycles, 0..=1000. Default 2.
    #[serde(default = "d_delay")]
    pub router_delay: u64,
    /// When a switch may forward a packet (see [`SWITCHINGS`](super::SWITCHINGS)).
    /// Default `cut_through`.
    #[serde(default, skip_serializing_if = "Switching::is_cut_through")]
    pub switching: Switching,
    /// Which VC of the router's input an endpoint injects into (see
    /// [`INJECTION_VCS`](super::INJECTION_VCS)). Default `any`.
    #[serde(default)]
    pub injection_vc: InjectionVc,
    /// Packets an endpoint's source queue holds; a packet generated while it is full is
    /// refused and counted (`refused_load`). 0 (default): unbounded.
    #[serde(default)]
    pub source_queue: u32,
    /// A head that was not granted chooses again every cycle among the candidates whose
    /// output VC has room (and, with the per-VC crossbar, is not being fed from another
    /// input), as CAMINOS's routers do; `false` (default): it keeps its first choice until
    /// granted.
    #[serde(default)]
    pub reselect: bool,
    /// The crossbar's ports (see [`CROSSBARS`](super::CROSSBARS)). Default `port`.
    #[serde(default)]
    pub crossbar: Crossbar,
    /// How the allocator's arbiters choose (see
    /// [`ARBITRATIONS`](super::ARBITRATIONS)). Default `round_robin`.
    #[serde(default)]
    pub arbitration: Arbitration,
    /// Which output VC of a terminal port packets for an endpoint take (see
    /// [`EJECTION_VCS`](super::EJECTION_VCS)). Default `any`.
    #[serde(default)]
    pub ejection_vc: EjectionVc,
    /// The separable allocator's order (see [`ALLOCATORS`](super::ALLOCATORS)).
    /// Default `input_first`.
    #[serde(default)]
    pub allocator: Allocator,
    /// Passes of the allocator per allocation, 1..=8. Default 1.
    #[serde(default = "d_iterations")]
    pub allocator_iterations: u8,
    /// Where a packet for a switch needs downstream credits (see
    /// [`CREDIT_CHECKS`](super::CREDIT_CHECKS)). Default `link`.
    #[serde(default)]
    pub credit_check: CreditCheck,
    /// What keeps a switch's input buffers from overflowing (see
    /// [`FLOW_CONTROLS`](super::FLOW_CONTROLS)). Default `credits`.
    #[serde(default)]
    pub flow_control: FlowControl,
    /// PFC's thresholds and delay (`[router.pfc]`), with `flow_control = "pfc"` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfc: Option<PfcParams>,
    /// Bit errors on switch-to-switch links and their link-level retry
    /// (`[router.link_errors]`); none by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_errors: Option<LinkErrorParams>,
    /// Switch-to-switch links that go down and come back during the run
    /// (`[[router.link_flaps]]`); none by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub link_flaps: Vec<super::LinkFlap>,
    /// The preset whose values fill the keys not given (see
    /// [`PRESETS`](super::PRESETS)); already expanded into the other fields.
    #[serde(default)]
    pub preset: Option<String>,
}

fn d_vcs() -> u8 {
    2
}

fn d_in() -> u32 {
    64
}

fn d_out() -> u32 {
    512
}

fn d_size() -> u16 {
    16
}

fn d_speedup() -> u16 {
    2
}

fn d_delay() -> u64 {
    2
}

fn d_iterations() -> u8 {
    1
}

impl Default for RouterParams {
    fn default() -> Self {
        Self {
            vcs: d_vcs(),
            input_buffer: d_in(),
            output_buffer: d_out(),
            packet_size: d_size(),
            header_phits: 0,
            speedup: d_speedup(),
            router_delay: d_delay(),
            switching: Switching::default(),
            injection_vc: InjectionVc::default(),
            source_queue: 0,
            reselect: false,
            crossbar: Crossbar::default(),
            arbitration: Arbitration::default(),
            ejection_vc: EjectionVc::default(),
            allocator: Allocator::default(),
            allocator_iterations: d_iterations(),
            credit_check: CreditCheck::default(),
            flow_control: FlowControl::default(),
            pfc: None,
            link_errors: None,
            link_flaps: Vec::new(),
            preset: None,
        }
    }
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

/// What keeps the input buffers at the far end of a switch-to-switch link from
/// overflowing: link-level flow control. An endpoint's link into its switch keeps credits
/// under every choice (a NIC that honours its switch's pauses with room to spare).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowControl {
    /// Credits per VC (InfiniBand, Slingshot, BookSim2): a packet leaves only with room for
    /// all of it downstream, known from the credits that come back as room frees.
    #[default]
    Credits,
    /// Priority flow control (IEEE 802.1Qbb, RoCEv2's lossless Ethernet): each VC is a
    /// priority class; the receiver pauses the sender's class when its input buffer
    /// passes `xoff` phits and resumes it at `xon`. The pause travels the link; what was
    /// sent meanwhile lands in the headroom above `xoff`, and a packet that finds the
    /// buffer full is dropped.
    Pfc,
    /// None (lossy Ethernet): senders never wait; a packet that finds the downstream input
    /// buffer full is dropped and counted.
    None,
}

/// The flow controls `router.flow_control` accepts.
pub const FLOW_CONTROLS: &[Choice<FlowControl>] = &[
    Choice {
        value: FlowControl::Credits,
        name: "credits",
        doc: "credits per VC: a packet leaves only with room for all of it in the downstream input VC (InfiniBand, Slingshot; default)",
    },
    Choice {
        value: FlowControl::Pfc,
        name: "pfc",
        doc: "priority flow control (IEEE 802.1Qbb, lossless RoCE): each VC a priority; the receiver pauses it past router.pfc.xoff phits and resumes it at xon; a packet finding the buffer full is dropped and counted",
    },
    Choice {
        value: FlowControl::None,
        name: "none",
        doc: "none (lossy Ethernet): senders never wait; a packet finding the downstream input buffer full is dropped and counted",
    },
];

base::named_by_registry!(FlowControl, FLOW_CONTROLS);

/// `[router.pfc]`: PFC's thresholds, per input VC of a switch-to-switch link, in phits at
/// one phit a cycle (scaled with a link's speed, as the buffers are), and the pause's
/// delay.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcParams {
    /// Phits in an input VC above which the receiver pauses the sender's VC. Default: the
    /// buffer less its headroom, what can arrive before a pause takes effect
    /// (`flow::Levels`), per link class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xoff: Option<u32>,
    /// Phits in the input VC at or below which a paused sender resumes. Default: `xoff`
    /// less two packets, or 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xon: Option<u32>,
    /// Cycles the sender takes to act on a pause or resume after it arrives (its response
    /// delay), beyond the link's latency and the wait for the frame the receiver is
    /// sending. Default 0.
    #[serde(default)]
    pub delay: u64,
}

/// `[router.link_errors]`: bit errors on switch-to-switch links, each corrupted packet
/// replayed by its link (link-level retry, as Slingshot's links and Ethernet's LLR do).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkErrorParams {
    /// Bit error rate: one number for every switch-to-switch link, or a table by link
    /// class (`{ global = 1e-9 }`; classes not named have none). Each in `0..=1e-3`.
    pub bit_error_rate: toml::Value,
    /// Bits a phit carries on the wire, 1..=65536. Default 128 (16-byte phits, as the
    /// InfiniBand HDR and Slingshot presets').
    #[serde(default = "d_bits_per_phit")]
    pub bits_per_phit: u32,
    /// Cycles the sender takes to start the replay once the error report has arrived,
    /// beyond the round trip. Default 0.
    #[serde(default)]
    pub replay_delay: u64,
    /// Who recovers a bad packet: `link` (default: the link replays it) or `end_to_end`
    /// (the receiving switch drops it, as Ethernet without LLR does, and the transport
    /// sends it again: `transport.kind = "rc"` with a workload).
    #[serde(default)]
    pub recovery: Recovery,
}

/// `router.link_errors.recovery`: who recovers a packet a bit error corrupted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// The link replays it (link-level retry).
    #[default]
    Link,
    /// The receiving switch drops it (its checksum fails); the endpoints' transport sends
    /// it again.
    EndToEnd,
}

fn d_bits_per_phit() -> u32 {
    128
}

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

/// When a switch may forward a packet: as soon as its head is routed, or once all of it
/// has arrived.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Switching {
    /// The head is allocated `router_delay` cycles after it arrives (virtual cut-through).
    #[default]
    CutThrough,
    /// The head is allocated `router_delay` cycles after the packet's tail arrives: each
    /// switch adds the packet's serialization on its input link.
    StoreAndForward,
}

impl Switching {
    /// The default, which the stored configuration leaves out.
    pub fn is_cut_through(&self) -> bool {
        *self == Switching::CutThrough
    }
}

/// The switchings `router.switching` accepts.
pub const SWITCHINGS: &[Choice<Switching>] = &[
    Choice {
        value: Switching::CutThrough,
        name: "cut_through",
        doc: "virtual cut-through: a head is routed and allocated router_delay cycles after it arrives, while its tail is still coming (default; InfiniBand, Slingshot, BookSim2)",
    },
    Choice {
        value: Switching::StoreAndForward,
        name: "store_and_forward",
        doc: "store-and-forward: a packet is routed and allocated router_delay cycles after its tail has arrived, so every switch adds its serialization (Ethernet switches between ports of different speeds, or with cut-through off; htsim's and ns-3's queues)",
    },
];

base::named_by_registry!(Switching, SWITCHINGS);

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
/// `ceil(size / speedup)` cycles for a packet of `size` phits.
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

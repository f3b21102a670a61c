//! # xnet-routing: which output ports and virtual channels a packet may take at a switch
//!
//! The layer above `xnet-topology`: a packet's route state ([`packet`]), the routings and
//! their registry, the VC policies, the escape subnetwork, and the deadlock verifier and
//! path metrics over them ([`analysis`]). It knows nothing of routers, traffic, workloads
//! or the configuration file as a whole (a routing reads only its own `[routing.NAME]`
//! settings, given by its [`BuildContext`](registry::BuildContext)).
//!
//! A [`Routing`] lists candidate `(port, vc)` pairs for a packet at a switch; the router
//! picks one with a [`Selection`] policy, optionally after a [`VcPolicy`] rewrote the VCs.
//! Ejection at the destination switch is handled by the router, so routings only deal
//! with switch-to-switch hops.
//!
//! Each routing is one file ending with its [`RoutingEntry`] (see [`registry`]); the
//! `routing_registry!` list below declares the files and gathers the entries into
//! [`ROUTINGS`]. [`SELECTIONS`] and [`VC_POLICIES`] name the selections and VC policies.

#![warn(missing_docs, unreachable_pub)]

pub mod analysis;
pub mod packet;

pub mod escape;
pub mod genetic;
pub mod graph;
pub mod layered;
pub mod registry;
pub mod turns;

/// Declares each routing's module and lists the entries it defines in [`ROUTINGS`]: adding
/// a routing is its file plus one line here.
macro_rules! routing_registry {
    ($($module:ident => [$($entry:ident),+],)+) => {
        $(pub mod $module;)+

        /// Every routing `routing.algorithm` accepts, in the order `xnet list` shows them.
        pub const ROUTINGS: &[RoutingEntry] = &[$($($module::$entry,)+)+];
    };
}

pub mod balanced;

routing_registry! {
    minimal => [MINIMAL, SHORTEST_PATH],
    dor => [DOR],
    dragonfly => [DRAGONFLY_MIN, DRAGONFLY_VALIANT, DRAGONFLY_UGAL],
    allpath => [ALLPATH],
    valiant => [VALIANT],
    omni => [OMNIWAR, DAL],
    polarized => [POLARIZED],
    updown => [UP_DOWN],
    dfs => [DFS],
    lturn => [LTURN],
    sr => [SR],
    smart => [SMART],
    dfsssp => [DFSSSP],
    lash => [LASH],
    nue => [NUE],
    mud => [MUD],
    tor => [TOR],
    dl => [DL],
    lash_tor => [LASH_TOR],
    angara => [ANGARA_BFS, ANGARA_SSSP, ANGARA_GENETIC],
    spda => [SPDA],
    tables => [TABLES],
}

use crate::packet::{Packet, RouteState};
use base::rng::Rng;
use base::settings::Choice;
use escape::Escape;
use std::sync::Arc;
use topology::{EndpointId, Port, PortId, PortTarget, SwitchId};

pub use registry::RoutingEntry;

/// One way forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// Output port.
    pub port: PortId,
    /// Virtual channel at the next switch's input.
    pub vc: u8,
    /// Added to the occupancy when the adaptive selection compares candidates.
    pub penalty: u16,
}

/// Occupancy of the router's outputs, for adaptive decisions: phits queued in the output
/// buffer plus phits buffered downstream (credits in use).
pub trait LoadView {
    /// Occupancy of one VC of an output port, in phits.
    fn vc_occupancy(&self, port: PortId, vc: u8) -> u32;
    /// Occupancy of an output port over all its VCs, in phits.
    fn port_occupancy(&self, port: PortId) -> u32;
}

/// Empty buffers everywhere: a routing's candidates at zero load (the balanced
/// selection's search, tests).
pub(crate) struct ZeroLoad;

impl LoadView for ZeroLoad {
    fn vc_occupancy(&self, _port: PortId, _vc: u8) -> u32 {
        0
    }
    fn port_occupancy(&self, _port: PortId) -> u32 {
        0
    }
}

/// What a routing's decisions read besides the deciding switch, the destination switch and
/// the packet's hops, VC and route state. The deadlock verifier merges routing states that
/// differ only in what is not read (`xnet routes`, see `analysis`); a routing that claims
/// not to read something it reads would be verified wrongly, so [`Reads::EVERYTHING`] is
/// the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reads {
    /// `candidates` or `on_forward` read the packet's source (`packet.src`, or `packet.id`,
    /// which encodes it).
    pub source: bool,
    /// `candidates` read the [`LoadView`] (a load-dependent choice such as UGAL's).
    pub load: bool,
    /// `init` draws from its random stream (a random route state at injection, such as a
    /// Valiant intermediate); if not, one call gives every possible initial state.
    pub random_init: bool,
}

impl Reads {
    /// Reads everything: the safe default.
    pub const EVERYTHING: Reads = Reads { source: true, load: true, random_init: true };
    /// Reads none of the above.
    pub const NOTHING: Reads = Reads { source: false, load: false, random_init: false };
}

/// A routing algorithm.
pub trait Routing: Send + Sync {
    /// Fewest VCs the routing needs for its own VC assignment to be deadlock-free.
    fn vcs_required(&self) -> u8;

    /// Upper bound on switch-to-switch hops of any route (for the ladder VC policy).
    fn max_hops(&self) -> u32;

    /// Sets up the packet's routing state at its source switch (e.g. picks a Valiant
    /// intermediate).
    fn init(&self, _src: SwitchId, _dst: SwitchId, _state: &mut RouteState, _rng: &mut Rng) {}

    /// Appends the candidates for `packet` at switch `at` (not its destination switch) to
    /// `out`. May update the packet's routing state (e.g. the phase).
    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    );

    /// Called once the packet is granted `chosen` at `at`, before it leaves.
    fn on_forward(&self, _at: SwitchId, _chosen: Candidate, _packet: &mut Packet) {}

    /// A hint, with no effect on results: a packet for `dst` will be routed at `at` soon.
    /// The router gives it when the packet's head reaches the switch, a few cycles before
    /// routing it; table-based routings ask the memory system for the entries
    /// `candidates` will read, so that the misses overlap with other work.
    fn prefetch(&self, _at: SwitchId, _dst: SwitchId) {}

    /// What `init`, `candidates` and `on_forward` read (see [`Reads`]); by default
    /// everything. Override only with what the code really reads.
    fn reads(&self) -> Reads {
        Reads::EVERYTHING
    }

    /// For the deadlock verifier: every route state `init` may give a packet from `src`
    /// to `dst`, `base` being one of them, into `out` (empty), and `true`; or `false` when
    /// they cannot be listed, and the verifier samples `init` instead.
    fn initial_states(
        &self,
        _src: SwitchId,
        _dst: SwitchId,
        _base: RouteState,
        _out: &mut Vec<RouteState>,
    ) -> bool {
        false
    }

    /// What building the tables took worth reporting (e.g. Nue's backtracks and escape
    /// fallbacks), for `xnet routes`.
    fn build_summary(&self) -> Option<String> {
        None
    }

    /// For routings whose decisions read the destination endpoint (`packet.dst`), not only
    /// its switch: endpoints of one switch with the same class are routed alike, so the
    /// verifier explores one endpoint per class. `None` (the default): decisions read the
    /// destination switch only.
    fn destination_class(&self, _endpoint: EndpointId) -> Option<u32> {
        None
    }
}

/// How the router picks among candidates (names and docs: [`SELECTIONS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Selection {
    /// The first candidate: deterministic, single path.
    First,
    /// Uniformly random candidate (oblivious ECMP).
    Random,
    /// Smallest occupancy + penalty; ties broken at random.
    #[default]
    Adaptive,
    /// One path per switch pair, chosen when the routes are built to balance link weights
    /// ([`balanced::Balanced`]); at run time, the first of what remains.
    Balanced,
}

/// Rewrites the VC of every candidate, for deadlock avoidance independent of the routing
/// (names and docs: [`VC_POLICIES`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VcPolicy {
    /// The routing's own VC assignment.
    #[default]
    Routing,
    /// VC = switch-to-switch hops taken (needs as many VCs as the longest route).
    Ladder,
    /// The ladder with the spare VCs shared among its steps: hop `h` may take any of the
    /// VCs `h * w .. (h + 1) * w`, `w` being `router.vcs` over the longest route, chosen
    /// like a port by the selection.
    WideLadder,
    /// Any VC, chosen by the selection policy like a port. Not deadlock-free in general:
    /// the watchdog will tell.
    Any,
    /// DAVC F_N (Pascual and Navaridas, ICS'18, Alg. 1): the VC goes up by one when
    /// the next switch's id is `<=` the current switch's id. Deadlock-free with any routing.
    DavcNode,
    /// DAVC F_P (Alg. 2): the VC goes up by one when the outbound port id is `<=` the
    /// inbound port id (the port the packet left the previous switch by).
    DavcPort,
    /// DAVC F_NP (Alg. 3): the VC goes up by one when the outbound port id is `<` the
    /// inbound one, or equal to it and the next switch's id is `<=` the current one's.
    DavcNodePort,
}

/// The selections `routing.selection` accepts.
pub const SELECTIONS: &[Choice<Selection>] = &[
    Choice { value: Selection::First, name: "first", doc: "the first candidate: deterministic, a single path" },
    Choice { value: Selection::Random, name: "random", doc: "a uniformly random candidate (oblivious ECMP)" },
    Choice {
        value: Selection::Balanced,
        name: "balanced",
        doc: "one path per switch pair, chosen among the routing's when the routes are built: pairs in order take the path whose most loaded link is least loaded, then a second pass re-chooses each (link-weight balancing as the routing survey's path selection; routings that read neither load nor random state, up to 4,096 switches)",
    },
    Choice {
        value: Selection::Adaptive,
        name: "adaptive",
        doc: "the least occupancy + penalty (phits queued at the output and downstream), ties at random (default)",
    },
];

/// The VC policies `routing.vc_policy` accepts.
pub const VC_POLICIES: &[Choice<VcPolicy>] = &[
    Choice {
        value: VcPolicy::Routing,
        name: "routing",
        doc: "the algorithm's own VCs (default; `minimal`, `shortest_path`, `allpath` and `valiant` use `ladder`)",
    },
    Choice {
        value: VcPolicy::Ladder,
        name: "ladder",
        doc: "VC = switch hops taken: needs as many VCs as the longest route",
    },
    Choice {
        value: VcPolicy::WideLadder,
        name: "wide_ladder",
        doc: "the ladder with router.vcs / longest route VCs per step, any of a step's VCs chosen like a port (the SurePath seed's Minimal: 2 VCs per hop)",
    },
    Choice {
        value: VcPolicy::Any,
        name: "any",
        doc: "any VC, chosen like a port by the selection; not deadlock-free in general (the watchdog tells)",
    },
    Choice {
        value: VcPolicy::DavcNode,
        name: "davc_n",
        doc: "DAVC F_N (Pascual and Navaridas, ICS'18, Alg. 1): the VC goes up by one when the next switch id is <= the current one; deadlock-free with any routing given router.vcs >= its longest route (Lemma 6.1)",
    },
    Choice {
        value: VcPolicy::DavcPort,
        name: "davc_p",
        doc: "DAVC F_P (Alg. 2): the VC goes up by one when the outbound port is <= the inbound port (the previous switch's output port); first network hop on VC 0",
    },
    Choice {
        value: VcPolicy::DavcNodePort,
        name: "davc_np",
        doc: "DAVC F_NP (Alg. 3): the VC goes up by one when the outbound port is < the inbound one, or equal and the next switch id <= the current one",
    },
];

base::named_by_registry!(Selection, SELECTIONS);
base::named_by_registry!(VcPolicy, VC_POLICIES);

impl VcPolicy {
    /// Whether this is one of the DAVC allocation functions.
    pub fn is_davc(self) -> bool {
        matches!(self, VcPolicy::DavcNode | VcPolicy::DavcPort | VcPolicy::DavcNodePort)
    }

    /// DAVC: whether the hop from switch `current` (reached through its neighbour's port
    /// `inbound`, `None` at the source switch) by its port `outbound` to switch `next`
    /// moves to the next VC. At the source switch the packet comes from a dedicated
    /// terminal link and never changes VC (the DAVC paper's "injection uses VC 0"). `false` for
    /// the non-DAVC policies.
    pub fn davc_transition(
        self,
        current: SwitchId,
        next: SwitchId,
        inbound: Option<PortId>,
        outbound: PortId,
    ) -> bool {
        let Some(inbound) = inbound else {
            return false;
        };
        match self {
            VcPolicy::DavcNode => next <= current,
            VcPolicy::DavcPort => outbound <= inbound,
            VcPolicy::DavcNodePort => outbound < inbound || (outbound == inbound && next <= current),
            _ => false,
        }
    }
}

/// Where a routing decision is taken: the switch and its ports, the port the packet
/// arrived on, its destination switch, and the VCs available. It carries only the deciding
/// switch's ports, so a rank that holds only its own switches can build it.
#[derive(Clone, Copy)]
pub struct Hop<'a> {
    /// The ports of the deciding switch (`Network::ports(at)`).
    pub ports: &'a [Port],
    /// The switch deciding.
    pub at: SwitchId,
    /// The input port the packet arrived on (a terminal port at the source switch).
    pub in_port: PortId,
    /// The packet's destination switch (not `at`).
    pub dst: SwitchId,
    /// VCs per port.
    pub vcs: u8,
}

/// How packets are routed: a routing, the VC policy applied to its candidates, and
/// optionally an escape subnetwork on the last VCs. The router and the deadlock verifier
/// both ask it, so they see the same candidates.
#[derive(Clone)]
pub struct Routes {
    /// The routing algorithm.
    pub routing: Arc<dyn Routing>,
    /// Its name in the registry (`routing.algorithm`).
    pub name: &'static str,
    /// The VC policy in force.
    pub vc_policy: VcPolicy,
    /// SurePath's escape subnetwork, when `routing.escape_vcs > 0`.
    pub escape: Option<Arc<Escape>>,
}

impl Routes {
    /// The candidates for `packet` at `hop`: what the router chooses from, and what the
    /// verifier enumerates. Replaces `out`'s contents. With an escape subnetwork the
    /// routing's candidates are confined to the VCs below the escape set (those that do
    /// not fit are dropped) and the escape candidates are always added; a packet already
    /// in escape gets only escape candidates.
    pub fn next_hops(
        &self,
        hop: &Hop<'_>,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        if !self.try_next_hops(hop, packet, load, rng, out) {
            no_candidate(hop, packet);
        }
    }

    /// Like [`Routes::next_hops`], but returns `false` (and leaves `out` empty) instead of
    /// panicking when the routing offers no candidate and there is no escape subnetwork
    /// to take the packet: the verifier reports such states.
    pub fn try_next_hops(
        &self,
        hop: &Hop<'_>,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) -> bool {
        out.clear();
        let Some(escape) = &self.escape else {
            return candidates_with_policy(&*self.routing, self.vc_policy, hop, packet, load, rng, out, true);
        };
        if !escape.is_escape(packet.vc) {
            // A routing that offers nothing here (its routes cut by failed links) leaves
            // the packet the escape candidates alone: SurePath's forced hop.
            let confined = Hop { vcs: escape.first_vc(), ..*hop };
            candidates_with_policy(&*self.routing, self.vc_policy, &confined, packet, load, rng, out, false);
        }
        escape.candidates(hop.at, hop.dst, packet, out);
        assert!(
            !out.is_empty(),
            "no escape candidate at switch {} towards switch {} (packet {})",
            hop.at,
            hop.dst,
            packet.id
        );
        true
    }

    /// Updates the packet's routing state for the granted `chosen`, before it leaves `at`.
    pub fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        match &self.escape {
            Some(escape) if escape.is_escape(chosen.vc) => escape.on_forward(at, chosen, packet),
            _ => self.routing.on_forward(at, chosen, packet),
        }
    }

    /// Whether `vc` belongs to the escape set.
    pub fn is_escape(&self, vc: u8) -> bool {
        self.escape.as_ref().is_some_and(|e| e.is_escape(vc))
    }
}

/// The candidates for `packet` at `hop`, with the VC policy applied: what the router
/// chooses from, and what the deadlock verifier enumerates. Replaces `out`'s contents.
/// Panics if the routing offers nothing (a routing bug, not a user error).
pub fn next_hops(
    routing: &dyn Routing,
    vc_policy: VcPolicy,
    hop: &Hop<'_>,
    packet: &mut Packet,
    load: &dyn LoadView,
    rng: &mut Rng,
    out: &mut Vec<Candidate>,
) {
    out.clear();
    if !candidates_with_policy(routing, vc_policy, hop, packet, load, rng, out, true) {
        no_candidate(hop, packet);
    }
}

/// The panic of a routing that offers nothing (a routing bug, not a user error).
fn no_candidate(hop: &Hop<'_>, packet: &Packet) -> ! {
    panic!(
        "the routing offered no candidate at switch {} for packet {} to switch {}",
        hop.at, packet.id, hop.dst
    )
}

/// Fills the empty `out` with the routing's candidates, VC policy applied; `false` (and
/// `out` empty) if the routing offers none. With `strict` the configuration checks
/// guarantee the VCs suffice (running out panics with an explanation); otherwise
/// candidates whose VC would be `hop.vcs` or more are dropped.
#[allow(clippy::too_many_arguments)]
fn candidates_with_policy(
    routing: &dyn Routing,
    vc_policy: VcPolicy,
    hop: &Hop<'_>,
    packet: &mut Packet,
    load: &dyn LoadView,
    rng: &mut Rng,
    out: &mut Vec<Candidate>,
    strict: bool,
) -> bool {
    routing.candidates(hop.at, hop.dst, packet, load, rng, out);
    if out.is_empty() {
        return false;
    }
    match vc_policy {
        VcPolicy::Routing => {
            if !strict {
                out.retain(|c| c.vc < hop.vcs);
            }
        }
        VcPolicy::Ladder => {
            if !strict && packet.hops >= hop.vcs as u16 {
                out.clear();
            }
            for c in out.iter_mut() {
                c.vc = packet.hops as u8;
            }
        }
        VcPolicy::WideLadder => {
            let per_step = (hop.vcs as u32 / routing.max_hops().max(1)).max(1);
            let first = packet.hops as u32 * per_step;
            let last = (first + per_step).min(hop.vcs as u32);
            if first >= last {
                assert!(
                    !strict,
                    "the wide ladder ran out of VCs: packet {} took {} hops, {} VCs",
                    packet.id, packet.hops, hop.vcs
                );
                out.clear();
            }
            spread_over_vcs(out, first as u8..last as u8);
        }
        VcPolicy::Any => spread_over_vcs(out, 0..hop.vcs),
        VcPolicy::DavcNode | VcPolicy::DavcPort | VcPolicy::DavcNodePort => {
            let ports = hop.ports;
            // The inbound port in the DAVC paper's sense is the previous switch's output port,
            // which is the far end of the link the packet arrived on.
            let inbound = match ports[hop.in_port as usize].target {
                PortTarget::Switch { port, .. } => Some(port),
                _ => None,
            };
            out.retain_mut(|c| {
                let PortTarget::Switch { switch: next, .. } = ports[c.port as usize].target else {
                    panic!("the routing offered non-network port {} at switch {}", c.port, hop.at)
                };
                let vc =
                    packet.vc as u32 + u32::from(vc_policy.davc_transition(hop.at, next, inbound, c.port));
                c.vc = vc as u8;
                vc < hop.vcs as u32
            });
            assert!(
                !strict || !out.is_empty(),
                "DAVC ({vc_policy:?}) ran out of VCs: packet {} on VC {} at switch {} (to switch {}, {} hops \
                 taken) needs VC {} but only {} VCs exist; give router.vcs >= the routing's longest route",
                packet.id,
                packet.vc,
                hop.at,
                hop.dst,
                packet.hops,
                packet.vc as u32 + 1,
                hop.vcs
            );
        }
    }
    true
}

/// Offers every candidate in `out` on each VC of `vcs` (non-empty), the candidate itself
/// taking the first.
fn spread_over_vcs(out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
    let n = out.len();
    for i in 0..n {
        for vc in vcs.start + 1..vcs.end {
            let c = Candidate { vc, ..out[i] };
            out.push(c);
        }
        out[i].vc = vcs.start;
    }
}

impl Selection {
    /// Picks one of `cands` (non-empty).
    pub fn pick(self, cands: &[Candidate], load: &dyn LoadView, rng: &mut Rng) -> Candidate {
        match self {
            Selection::First | Selection::Balanced => cands[0],
            Selection::Random => cands[base::rng::below(rng, cands.len() as u64) as usize],
            Selection::Adaptive => {
                let mut best = u32::MAX;
                let mut ties = 0u64;
                let mut chosen = cands[0];
                for c in cands {
                    let cost =
                        load.vc_occupancy(c.port, c.vc) + load.port_occupancy(c.port) + c.penalty as u32;
                    if cost < best {
                        best = cost;
                        ties = 1;
                        chosen = *c;
                    } else if cost == best {
                        // Reservoir sampling keeps every tied candidate equally likely.
                        ties += 1;
                        if base::rng::below(rng, ties) == 0 {
                            chosen = *c;
                        }
                    }
                }
                chosen
            }
        }
    }
}

//! What a routing is, and what the router asks of it: the [`Routing`] trait, the
//! [`Candidate`]s it offers at a [`Hop`], the [`LoadView`] adaptive decisions read, what a
//! routing [`Reads`] besides its switch and destination, and the closed sets of
//! [`Selection`]s and [`VcPolicy`]s with their names.

use crate::packet::{Packet, RouteState};
use base::rng::Rng;
use base::settings::Choice;
use topology::{EndpointId, Port, PortId, SwitchId};

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
/// buffer plus phits buffered downstream (credits in use); and, for routings that share
/// state between neighbours ([`Routing::sharing`]), what the neighbours last reported.
pub trait LoadView {
    /// Occupancy of one VC of an output port, in phits.
    fn vc_occupancy(&self, port: PortId, vc: u8) -> u32;
    /// Occupancy of an output port over all its VCs, in phits.
    fn port_occupancy(&self, port: PortId) -> u32;
    /// Byte `index` of the last [`Report`] the neighbour across `port` sent (0 before its
    /// first one, and for routings that share nothing).
    fn reported(&self, _port: PortId, _index: usize) -> u8 {
        0
    }
    /// What the deciding switch learned, for routings that learn ([`Routing::learned_len`]):
    /// the values its `on_feedback` keeps; empty for the others.
    fn learned(&self) -> &[f32] {
        &[]
    }
    /// Whether the deadlock verifier asks: a routing whose choice is not a function of the
    /// load and its random stream alone (what it learned) then offers every next hop it
    /// may choose as a candidate, so that all its routes are explored.
    fn exploring(&self) -> bool {
        false
    }
}

/// What a switch tells the upstream switch when a packet's head arrives, for routings that
/// learn ([`Routing::on_arrive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Feedback {
    /// Which of the learned values it concerns (for Q-adaptive, the destination group).
    pub row: u16,
    /// The measurement (for Q-adaptive, cycles).
    pub value: u32,
}

/// What a switch tells its neighbours, for routings that share state ([`Routing::report`]):
/// up to 32 bytes, their meaning the routing's (for example one
/// [`encode_occupancy`] per global port).
pub type Report = [u8; REPORT_BYTES];

/// Bytes in a [`Report`].
pub const REPORT_BYTES: usize = 32;

/// How a routing shares state between neighbouring switches ([`Routing::sharing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sharing {
    /// A switch reports every `period` cycles (at multiples of it) while it has packets or
    /// its last report was not empty, and only what changed: a report reaches the
    /// neighbour after the link's latency, beside the credits, taking no bandwidth.
    pub period: u32,
}

/// An occupancy in phits as one byte with four significant bits: exact below 16, then
/// within 1/16 (rounded down), saturating at 507,904 phits. For [`Report`]s.
pub fn encode_occupancy(phits: u32) -> u8 {
    if phits < 16 {
        return phits as u8;
    }
    let exponent = (31 - phits.leading_zeros() - 4).min(14);
    let mantissa = (phits >> exponent).min(31);
    (16 + exponent * 16 + (mantissa - 16)) as u8
}

/// The occupancy a byte of [`encode_occupancy`] stands for (the low end of its range).
pub fn decode_occupancy(code: u8) -> u32 {
    if code < 16 {
        return code as u32;
    }
    let (exponent, mantissa) = ((code as u32 - 16) / 16, 16 + (code as u32 - 16) % 16);
    mantissa << exponent
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
    fn exploring(&self) -> bool {
        true
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
    /// The most switch-to-switch hops a packet has taken where `candidates` decide on the
    /// load (with `load`): 0, at its source switch only (UGAL); 1, also at the next switch
    /// (PAR's revision). The verifier asks again at those hops with each proposed port
    /// reported full; later load-dependent choices must be offered as candidates.
    pub load_hops: u16,
    /// `init` draws from its random stream (a random route state at injection, such as a
    /// Valiant intermediate); if not, one call gives every possible initial state.
    pub random_init: bool,
}

impl Reads {
    /// Reads everything: the safe default.
    pub const EVERYTHING: Reads = Reads { source: true, load: true, load_hops: 0, random_init: true };
    /// Reads none of the above.
    pub const NOTHING: Reads = Reads { source: false, load: false, load_hops: 0, random_init: false };
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

    /// Whether, and how often, switches report their state to their neighbours
    /// ([`report`](Routing::report)); `None` (the default): they do not.
    fn sharing(&self) -> Option<Sharing> {
        None
    }

    /// With [`sharing`](Routing::sharing): writes what switch `at` reports (from `load`,
    /// its own outputs) into `out` (zeroed). Sent to the neighbours across the ports for
    /// which [`reports_to`](Routing::reports_to) holds; they read it with
    /// [`LoadView::reported`].
    fn report(&self, _at: SwitchId, _load: &dyn LoadView, _out: &mut Report) {}

    /// With [`sharing`](Routing::sharing): whether switch `at` sends its reports across its
    /// port `port` (a port to another switch).
    fn reports_to(&self, _at: SwitchId, _port: PortId) -> bool {
        false
    }

    /// For routings that learn while the run goes (Q-adaptive): how many values switch `at`
    /// keeps (0, the default: it learns nothing). The router holds them, starts them with
    /// [`init_learned`](Routing::init_learned), shows them to `candidates` through
    /// [`LoadView::learned`] and hands them to [`on_feedback`](Routing::on_feedback).
    fn learned_len(&self, _at: SwitchId) -> usize {
        0
    }

    /// The learned values of switch `at` before the run (`out` has `learned_len` zeros).
    fn init_learned(&self, _at: SwitchId, _out: &mut [f32]) {}

    /// For routings that learn: the packet's head arrives at input `in_port` of switch `at`
    /// at `now` (its destination is `dst`'s switch); the feedback returned, if any, goes
    /// back over the link it came by. May update the packet's route state (a time stamp).
    fn on_arrive(
        &self,
        _at: SwitchId,
        _in_port: PortId,
        _dst: SwitchId,
        _packet: &mut Packet,
        _now: u64,
        _learned: &[f32],
    ) -> Option<Feedback> {
        None
    }

    /// For routings that learn: `feedback` came back to output `port` of switch `at`.
    fn on_feedback(&self, _at: SwitchId, _port: PortId, _feedback: Feedback, _learned: &mut [f32]) {}

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
    /// Uniformly random candidate, packet by packet (oblivious spraying).
    Random,
    /// ECMP: a hash of the packet's flow and the switch picks the candidate
    /// ([`ecmp_hash`]); every packet of a flow takes one path.
    Ecmp,
    /// Smallest occupancy + penalty; ties broken at random.
    #[default]
    Adaptive,
    /// One path per switch pair, chosen when the routes are built to balance link weights
    /// ([`Balanced`](crate::balanced::Balanced)); at run time, the first of what remains.
    Balanced,
}

/// Rewrites the VC of every candidate, for deadlock avoidance independent of the routing
/// (names and docs: [`VC_POLICIES`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VcPolicy {
    /// The routing's own VC assignment.
    #[default]
    Routing,
    /// The routing's own VC assignment on fewer VCs than it needs: VCs at or above
    /// `router.vcs` fold onto the last one. Not deadlock-free: it lets `xnet routes` show the
    /// cycle that makes a routing's VCs necessary.
    Folded,
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
    Choice { value: Selection::Random, name: "random", doc: "a uniformly random candidate, packet by packet (oblivious packet spraying)" },
    Choice {
        value: Selection::Ecmp,
        name: "ecmp",
        doc: "ECMP by flow hash: SplitMix64's finaliser of (source endpoint << 32 | destination endpoint) XOR the switch's salt (SplitMix64 of the switch id XOR simulation.seed) picks the candidate, as switches hash a packet's 5-tuple: a flow keeps one path, and flows collide; one flow per pair of endpoints (an application's messages on `routing.ecmp_flows` flows per pair, round robin)",
    },
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
        value: VcPolicy::Folded,
        name: "folded",
        doc: "the algorithm's own VCs, those at or above router.vcs folded onto the last: runs a routing on fewer VCs than it needs, so that `xnet routes` shows the dependency cycle that makes them necessary (not deadlock-free)",
    },
    Choice {
        value: VcPolicy::Ladder,
        name: "ladder",
        doc: "VC = switch hops taken: needs as many VCs as the longest route",
    },
    Choice {
        value: VcPolicy::WideLadder,
        name: "wide_ladder",
        doc: "the ladder with router.vcs / longest route VCs per step, any of a step's VCs chosen like a port (the SurePath paper's (Camarero et al., FTXS'24) Minimal: 2 VCs per hop)",
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

/// SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014).
#[inline]
fn mix64(x: u64) -> u64 {
    let x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The flow hash of [`Selection::Ecmp`] for a packet from endpoint `src` to `dst` at
/// switch `at`: `mix64((src << 32 | dst) ^ mix64(at ^ seed))`. Each switch has its own
/// salt, as ECMP switches seed their hashes to avoid polarization.
#[inline]
pub fn ecmp_hash(src: EndpointId, dst: EndpointId, at: SwitchId, seed: u64) -> u64 {
    ecmp_flow_hash(src, dst, 0, at, seed)
}

/// [`ecmp_hash`] of flow `index` of the pair (`routing.ecmp_flows`): the key also holds
/// `index * 0x9e3779b97f4a7c15` (the golden ratio in 64 bits), so that flow 0 hashes as
/// [`ecmp_hash`] and each other flow of the pair as a different 5-tuple would (a queue
/// pair's own UDP source port, in RoCE).
#[inline]
pub fn ecmp_flow_hash(src: EndpointId, dst: EndpointId, index: u32, at: SwitchId, seed: u64) -> u64 {
    let key = ((src as u64) << 32 | dst as u64) ^ (index as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    mix64(key ^ mix64(at as u64 ^ seed))
}

impl Selection {
    /// Picks one of `cands` (non-empty); `flow` is the packet's [`ecmp_hash`] here (read
    /// by [`Selection::Ecmp`] only).
    pub fn pick(self, cands: &[Candidate], load: &dyn LoadView, rng: &mut Rng, flow: u64) -> Candidate {
        match self {
            Selection::First | Selection::Balanced => cands[0],
            Selection::Random => cands[base::rng::below(rng, cands.len() as u64) as usize],
            // The hash's high bits scaled to the candidates (Lemire's multiply-shift).
            Selection::Ecmp => cands[((flow as u128 * cands.len() as u128) >> 64) as usize],
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancies_keep_four_significant_bits_in_a_byte() {
        for x in 0..16 {
            assert_eq!(decode_occupancy(encode_occupancy(x)), x);
        }
        let mut last = 0;
        for x in (16..600_000).step_by(7) {
            let code = encode_occupancy(x);
            assert!(code >= last, "not monotone at {x}");
            last = code;
            let back = decode_occupancy(code);
            assert!(back <= x, "{x} -> {code} -> {back}");
            if x < 507_904 {
                // Rounded down within one part in 16.
                assert!(x - back < back / 16 + 1, "{x} -> {back}");
            }
        }
        assert_eq!(encode_occupancy(u32::MAX), u8::MAX);
        assert_eq!(decode_occupancy(u8::MAX), 31 << 14);
        assert_eq!((encode_occupancy(16), encode_occupancy(31), encode_occupancy(32)), (16, 31, 32));
    }
}

//! Dragonfly routings: MIN, Valiant and UGAL-L as in Kim, Dally, Scott, Abts,
//! "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA'08, with its VC
//! assignment: a packet's VC is the number of global hops it has taken, so MIN needs 2 VCs
//! and Valiant/UGAL 3. Valiant routing is from Valiant and Brebner, "Universal Schemes for
//! Parallel Communication", STOC'81; UGAL from A. Singh, "Load-Balanced Routing in
//! Interconnection Networks", PhD thesis, Stanford University, 2005.
//!
//! MIN: local hop to the router holding the global link to the destination group, the
//! global hop, a local hop to the destination router. Valiant: MIN to a random
//! intermediate group, then MIN to the destination. UGAL-L decides at the source router
//! between MIN and Valiant by comparing `occupancy x hops` of the first output of each.
//!
//! UGAL-G (Kim et al., ISCA'08, the ideal the papers measure against): UGAL's comparison
//! at the source router on the occupancy of the global channel each path leaves the source
//! group by. A router knows its own channels now and the other routers' as they reported
//! them over the local links (see [`Routing::sharing`]): one byte per global channel, every
//! `report_period` cycles, arriving after the local latency. The papers' UGAL-G knows them
//! with no delay, which no router can; this is the nearest a real one comes.
//!
//! Piggybacking (Jiang, Kim and Dally, ISCA'09; the rule as FOGSim, the simulator of
//! Garcia et al., implements it, the only implementation we found): each router marks
//! its global channels congested when their occupancy exceeds twice the mean over its
//! global channels plus five packets, and reports the marks to the routers of its group;
//! the source router goes Valiant when UGAL-L says so or when the minimal path's global
//! channel is marked. The Valiant channel's mark is not consulted.
//!
//! The increasingly-minimal-bias routing (after Cray's public description of Aries and
//! Slingshot routing, patent US 10,757,022: at each hop the lightest loaded port after a
//! bias that favours minimal paths more as the packet proceeds; the bias values and where
//! choices are made are xnet's): at the source router and the next router of the source
//! group, the minimal and the Valiant next hop are both candidates, the Valiant one's load
//! raised by `bias + hops x bias_growth`, and the selection takes the lighter. A packet that
//! changes its mind at the next router (either way) takes a second local hop in its group,
//! so its VC goes up by one, as PAR's: 4 VCs.
//!
//! In-transit adaptive misrouting, after OFAR (Garcia, Vallejo, Beivide, Odriozola and
//! Valero, "On-the-Fly Adaptive Routing in High-Radix Hierarchical Networks", ICPP'12): at
//! every router the minimal next hop and the misroutes are candidates, the misroutes'
//! load raised by a penalty: while in the source group any other global link of the
//! router (one global misroute), and in any group, when the minimal hop is local and no
//! local hop was taken there yet, any other router of the group. Its own VCs are the hops
//! taken, the sixth and later on the last (6 VCs, proved by `xnet routes`; 5 close a cycle
//! of local channels); OFAR itself runs on any VC with an escape subnetwork, which xnet's
//! `routing.escape_vcs` provides (SurePath's up/down tree where OFAR used a ring).
//!
//! Q-adaptive (Kang, Wang and Lan, "Q-adaptive: A Multi-Agent Reinforcement Learning Based
//! Routing on Dragonfly Network", HPDC'21; the rules of the authors' SST code): each router
//! keeps an estimate of the time to each destination group through each of its network
//! ports, one row per source position (`destG_srcN`). When a packet's head arrives, the
//! router sends back to the upstream one the time since the packet arrived there plus its
//! own lowest estimate for the group; the upstream router moves its estimate for the port
//! towards it (rate `alpha` down, `beta` up). The source router takes the port with the
//! lowest estimate unless the minimal one is within `threshold_source` of it (a random
//! port with probability `epsilon`); the first router of an intermediate group may go
//! through a random other router of the group; minimal elsewhere. The estimates live in
//! the routers (`Routing::learned_len`) and the measurements travel as messages over the
//! links, so runs are identical on any partitioning.
//!
//! PAR, progressive adaptive routing (N. Jiang, J. Kim, W. J. Dally, "Indirect Adaptive
//! Routing on Large Scale Interconnection Networks", ISCA'09): UGAL-L's decision at the
//! source router, and a packet sent minimally may still be diverted to Valiant at the next
//! router of its source group, by the same comparison made there. A diverted packet takes
//! two local hops in its source group, and with Kim and Dally's VCs (VC = global hops) those
//! hops on VC 0 close cycles among the group's local channels; PAR's VC is the global hops
//! plus one once diverted (4 VCs: first local hop 0; diverted local hop and first global
//! hop 1; intermediate group 2; destination group 3), along which every route's VC never
//! decreases and within one VC a local hop only leads to a global one. The decisions are
//! made again each time a waiting head is routed again (`par.rs`).
//!
//! Files: here the modes, the route state's phases, the shared geometry and the
//! [`Routing`] implementation, which dispatches to `ugal.rs` (the UGAL family's
//! comparisons, UGAL-G's and piggybacking's reports), `par.rs`, `biased.rs`, `transit.rs`
//! and `q.rs` (one routing each); `faults.rs` routes around failed global links;
//! `entries.rs` holds the registry entries and their settings.

mod biased;
mod entries;
mod faults;
mod par;
mod q;
mod transit;
mod ugal;

pub use entries::{
    DRAGONFLY_IMB, DRAGONFLY_MIN, DRAGONFLY_OFAR, DRAGONFLY_PAR, DRAGONFLY_PB, DRAGONFLY_Q, DRAGONFLY_UGAL,
    DRAGONFLY_UGAL_G, DRAGONFLY_VALIANT,
};
pub use q::{QFeedback, QParams, QSourceOutputs};

use crate::packet::{Packet, RouteState};
use crate::registry::BuildContext;
use crate::REPORT_BYTES;
use crate::{Candidate, Feedback, LoadView, Reads, Report, Routing, RoutingError, Sharing};
use base::rng::{below, Rng};
use serde::Deserialize;
use std::sync::Arc;
use topology::shape::DragonflyShape;
use topology::Shape;
use topology::{PortId, SwitchId};

/// Which Dragonfly routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DragonflyMode {
    /// Minimal.
    Min,
    /// Valiant through a random intermediate group.
    Valiant,
    /// UGAL with local information at the source router.
    UgalLocal {
        /// Extra occupancy (phits) the non-minimal path must beat.
        threshold: u32,
    },
    /// UGAL-G: UGAL at the source router on the occupancy of the global channel each path
    /// takes out of the source group, known from the other routers' reports.
    UgalGlobal {
        /// Extra occupancy (phits) the non-minimal path must beat.
        threshold: u32,
        /// Cycles between a router's reports to the routers of its group.
        period: u32,
    },
    /// Piggybacking: UGAL-L at the source router, and Valiant whenever the minimal path's
    /// global channel is marked congested; routers mark their global channels and report
    /// the marks to the routers of their group.
    Piggyback {
        /// Extra occupancy (phits) the non-minimal path must beat in UGAL-L's comparison.
        threshold: u32,
        /// A global channel is congested when its occupancy exceeds this percentage of the
        /// mean over its router's global channels...
        percent: u32,
        /// ...plus this many phits.
        offset: u32,
        /// Cycles between a router's reports to the routers of its group.
        period: u32,
    },
    /// Per-hop adaptive with a bias towards minimal that grows with every hop: at the source
    /// router and the next one the minimal and the Valiant next hop are both candidates,
    /// the Valiant one's load raised by `bias + hops x growth` phits, and the router takes
    /// the lighter; a packet may change its mind once, either way.
    Biased {
        /// Phits added to the non-minimal candidate's load at the source router.
        bias: u32,
        /// Phits added to it for every hop taken.
        growth: u32,
    },
    /// In-transit adaptive misrouting (after OFAR): at every router the minimal next hop and
    /// misroutes, chosen by the selection on load + `penalty`: any other global link of
    /// the router while still in the source group, any other router of the group when the
    /// minimal hop is local and no local hop was taken in this group yet.
    InTransit {
        /// Phits added to a misroute's load.
        penalty: u16,
    },
    /// Q-adaptive: each router learns, per destination group and output, the time to reach
    /// the group, from its neighbours' feedback; the source router and the first router of
    /// an intermediate group choose on it (parameters in [`QParams`]).
    QAdaptive,
    /// PAR: UGAL-L at the source router, revised at the next router of the source group.
    Par {
        /// Extra occupancy (phits) the non-minimal path must beat.
        threshold: u32,
        /// VCs: PAR's own (global hops + diverted, 4) or Kim and Dally's (global hops, 3:
        /// not deadlock-free for PAR, kept to show why).
        vcs: ParVcs,
        /// A diverted packet goes to a random router of the intermediate group (`true`, as
        /// CAMINOS and Cray's Aries do) or to whichever router the global link reaches.
        via_router: bool,
        /// Offer the way the rule did not choose behind it, for routers that re-select.
        fallback: bool,
    },
}

/// The VC assignment PAR's routes use (`vc_assignment`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParVcs {
    /// Global hops taken, plus one once diverted: 4 VCs, deadlock-free.
    #[default]
    Diverted,
    /// Global hops taken (Kim and Dally's for UGAL): 3 VCs, cyclic under PAR.
    GlobalHops,
}

/// Dragonfly routing.
pub struct DragonflyRouting {
    shape: DragonflyShape,
    mode: DragonflyMode,
    /// Q-adaptive's parameters (only with [`DragonflyMode::QAdaptive`]).
    q: Option<QParams>,
    /// With failed global links: `dead[g * groups + h]` when the global link between groups
    /// `g` and `h` failed; empty on an intact network.
    dead: Vec<bool>,
}

const NO_INTERMEDIATE: u32 = u32::MAX;
/// Phase 0: heading for the intermediate group; phase 1: heading for the destination.
const TO_DESTINATION: u8 = 1;
/// PAR: heading minimally for the destination, still revisable at the next router (the
/// intermediate group is kept for that).
const REVISABLE: u8 = 2;
/// PAR: set in the phase once a packet was diverted to Valiant after its source router;
/// the biased routing: once it changed its direction at the next router.
const DIVERTED: u8 = 0x10;
/// The biased routing: minimal and Valiant are both still open (the source router and the
/// next one, in the source group).
const OPEN: u8 = 0x20;
/// The biased routing: the source router's hop went the minimal way (only).
const WENT_MINIMAL: u8 = 0x04;
/// The biased routing: the source router's hop went the Valiant way (only).
const WENT_VALIANT: u8 = 0x08;
/// The biased routing: set by `candidates` when the two ways leave by the same port, for
/// `on_forward`, which clears it.
const SHARED: u8 = 0x40;
/// PAR through an intermediate router: the packet has reached it (its VC goes up by one:
/// the local hops before and after it, in one group, would otherwise share a VC).
const PASSED_ROUTER: u8 = 0x80;
/// The in-transit routing: the packet took a local hop in the group it is in.
const LOCAL_HOP: u8 = 0x01;

impl DragonflyRouting {
    /// Routing for `shape`.
    pub fn new(shape: DragonflyShape, mode: DragonflyMode) -> Self {
        Self { shape, mode, q: None, dead: Vec::new() }
    }

    /// Whether the routing draws an intermediate group at injection (all but MIN and the
    /// in-transit routing).
    fn draws_intermediate(&self) -> bool {
        !matches!(self.mode, DragonflyMode::Min | DragonflyMode::InTransit { .. } | DragonflyMode::QAdaptive)
    }

    /// The minimal next port from `at` towards group `target_group`, router `target` (used
    /// when already in the target group).
    fn min_port(&self, at: SwitchId, target: SwitchId) -> PortId {
        let s = &self.shape;
        let (g, gt) = (s.group(at), s.group(target));
        if g == gt {
            return s.local_port(s.router_in_group(at), s.router_in_group(target));
        }
        let (gateway, port) = s.gateway(g, self.next_group(g, gt));
        if gateway == at {
            port
        } else {
            s.local_port(s.router_in_group(at), s.router_in_group(gateway))
        }
    }

    /// Minimal switch hops from `at` to group `gt` (first router reached there).
    fn hops_to_group(&self, at: SwitchId, gt: u32) -> u32 {
        let s = &self.shape;
        if s.group(at) == gt {
            return 0;
        }
        let (gateway, _) = s.gateway(s.group(at), gt);
        1 + u32::from(gateway != at)
    }

    /// Whether the route state's `intermediate` is a router (PAR with `intermediate =
    /// "router"`), not a group.
    fn via_router(&self) -> bool {
        matches!(self.mode, DragonflyMode::Par { via_router: true, .. })
    }

    /// The intermediate group of a route state's `intermediate`.
    fn intermediate_group(&self, intermediate: u32) -> u32 {
        if self.via_router() && intermediate != NO_INTERMEDIATE {
            self.shape.group(intermediate)
        } else {
            intermediate
        }
    }

    /// The VC of a hop in phase `phase`: the global hops taken, and for PAR's own VCs and
    /// the biased routing one more once diverted and (PAR through a router) once past it.
    fn route_vc(&self, p: &Packet, phase: u8) -> u8 {
        match self.mode {
            DragonflyMode::Par { vcs: ParVcs::Diverted, .. } | DragonflyMode::Biased { .. } => {
                p.route.global_hops + u8::from(phase & DIVERTED != 0) + u8::from(phase & PASSED_ROUTER != 0)
            }
            _ => p.route.global_hops,
        }
    }

    /// The next port from `at` towards the packet's intermediate: a router (through its
    /// group's gateway, then a local hop there) or a group (its gateway's global link).
    fn intermediate_port(&self, at: SwitchId, p: &Packet) -> PortId {
        let s = &self.shape;
        if self.via_router() {
            return self.min_port(at, p.route.intermediate);
        }
        let (gateway, port) = s.gateway(s.group(at), p.route.intermediate);
        if gateway == at {
            port
        } else {
            s.local_port(s.router_in_group(at), s.router_in_group(gateway))
        }
    }

    fn random_intermediate(&self, src_group: u32, dst_group: u32, rng: &mut Rng) -> u32 {
        let g = self.shape.groups;
        if !self.dead.is_empty() {
            // Uniform over the groups linked to both ends (counted, then the k-th taken:
            // no allocation per packet).
            let valid = || (0..g).filter(|&i| self.may_go_through(i, src_group, dst_group));
            let count = valid().count() as u64;
            return if count == 0 {
                NO_INTERMEDIATE
            } else {
                valid().nth(below(rng, count) as usize).unwrap_or(NO_INTERMEDIATE)
            };
        }
        if g <= 2 {
            return NO_INTERMEDIATE;
        }
        // Uniform over the groups other than source and destination.
        let mut excluded = vec![src_group.min(dst_group), src_group.max(dst_group)];
        excluded.dedup();
        let mut i = below(rng, (g - excluded.len() as u32) as u64) as u32;
        for e in excluded {
            if i >= e {
                i += 1;
            }
        }
        i
    }
}

impl Routing for DragonflyRouting {
    /// Valiant and UGAL: a packet sent non-minimally may go through any group other than
    /// its source's and destination's.
    fn initial_states(
        &self,
        src: SwitchId,
        dst: SwitchId,
        base: RouteState,
        out: &mut Vec<RouteState>,
    ) -> bool {
        if !self.draws_intermediate() {
            return false;
        }
        if base.intermediate == NO_INTERMEDIATE {
            out.push(base);
        } else {
            let s = &self.shape;
            let (gs, gd) = (s.group(src), s.group(dst));
            let groups = (0..s.groups).filter(|&g| self.may_go_through(g, gs, gd));
            if self.via_router() {
                let routers = groups.flat_map(|g| g * s.a..(g + 1) * s.a);
                out.extend(routers.map(|r| RouteState { intermediate: r, ..base }));
            } else {
                out.extend(groups.map(|g| RouteState { intermediate: g, ..base }));
            }
        }
        true
    }

    fn vcs_required(&self) -> u8 {
        match self.mode {
            // With failed global links a minimal route may take two global hops.
            DragonflyMode::Min if !self.dead.is_empty() => 3,
            DragonflyMode::Min => 2,
            DragonflyMode::Par { vcs: ParVcs::Diverted, via_router: true, .. } => 5,
            DragonflyMode::Par { vcs: ParVcs::Diverted, .. } | DragonflyMode::Biased { .. } => 4,
            DragonflyMode::QAdaptive => 4,
            DragonflyMode::InTransit { .. } => self.transit_vcs(),
            _ => 3,
        }
    }

    fn reads(&self) -> Reads {
        match self.mode {
            DragonflyMode::Min => Reads::NOTHING,
            // The biased routing offers both ways as candidates: the selection reads the load.
            DragonflyMode::Valiant | DragonflyMode::Biased { .. } => {
                Reads { random_init: true, ..Reads::NOTHING }
            }
            // Misroutes are candidates; nothing drawn at injection.
            DragonflyMode::InTransit { .. } => Reads::NOTHING,
            // Q-adaptive decides on what it learned for the packet's source position, and
            // offers the verifier every choice.
            DragonflyMode::QAdaptive => Reads { source: true, ..Reads::NOTHING },
            // UGAL-L compares output occupancies at the source router.
            DragonflyMode::UgalLocal { .. } => Reads { random_init: true, load: true, ..Reads::NOTHING },
            // UGAL-G and piggybacking also read what the group's routers reported.
            DragonflyMode::UgalGlobal { .. } | DragonflyMode::Piggyback { .. } => {
                Reads { random_init: true, load: true, ..Reads::NOTHING }
            }
            // PAR also decides at the next router.
            DragonflyMode::Par { .. } => {
                Reads { random_init: true, load: true, load_hops: 1, ..Reads::NOTHING }
            }
        }
    }

    fn max_hops(&self) -> u32 {
        match self.mode {
            // Local, global, local, global, local around a failed global link.
            DragonflyMode::Min if !self.dead.is_empty() => 5,
            DragonflyMode::Min => 3,
            // A diverted packet: local, local, global, local, global, local.
            // Through an intermediate router, a second local hop in its group.
            DragonflyMode::Par { via_router: true, .. } => 7,
            DragonflyMode::Par { .. } | DragonflyMode::Biased { .. } => 6,
            // Two local hops in each of three groups, two global hops.
            DragonflyMode::InTransit { .. } => 8,
            // Global, local, local, global, local; around a failed global link a local hop
            // and the minimal route's five.
            DragonflyMode::QAdaptive if !self.dead.is_empty() => 6,
            DragonflyMode::QAdaptive => 5,
            _ => 5,
        }
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        let (gs, gd) = (self.shape.group(src), self.shape.group(dst));
        state.intermediate = NO_INTERMEDIATE;
        state.phase = TO_DESTINATION;
        if self.draws_intermediate() && gs != gd {
            let i = self.random_intermediate(gs, gd, rng);
            if i != NO_INTERMEDIATE {
                state.intermediate = if self.via_router() {
                    i * self.shape.a + below(rng, self.shape.a as u64) as u32
                } else {
                    i
                };
                // Both ways open only where the minimal one is direct.
                let open = matches!(self.mode, DragonflyMode::Biased { .. }) && self.linked(gs, gd);
                state.phase = if open { OPEN } else { 0 };
            }
        }
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let s = &self.shape;
        if self.mode == DragonflyMode::QAdaptive {
            self.q_candidates(at, dst, p, load, rng, out);
            return;
        }
        if let DragonflyMode::InTransit { penalty } = self.mode {
            self.in_transit_candidates(at, dst, p, penalty, out);
            return;
        }
        if p.route.phase & OPEN != 0 {
            self.biased_candidates(at, dst, p, out);
            return;
        }
        match self.mode {
            // UGAL-L decides once, at the source router.
            DragonflyMode::UgalLocal { threshold }
                if p.hops == 0
                    && p.route.phase == 0
                    && self.minimal_is_better(at, dst, p.route.intermediate, threshold, load) =>
            {
                p.route.phase = TO_DESTINATION;
                p.route.intermediate = NO_INTERMEDIATE;
            }
            DragonflyMode::UgalGlobal { threshold, .. }
                if p.hops == 0
                    && p.route.phase == 0
                    && self.minimal_is_better_globally(at, dst, p.route.intermediate, threshold, load) =>
            {
                p.route.phase = TO_DESTINATION;
                p.route.intermediate = NO_INTERMEDIATE;
            }
            DragonflyMode::Piggyback { threshold, percent, offset, .. }
                if p.hops == 0
                    && p.route.phase == 0
                    && self.minimal_is_better(at, dst, p.route.intermediate, threshold, load)
                    && !self.minimal_channel_congested(at, dst, percent, offset, load) =>
            {
                p.route.phase = TO_DESTINATION;
                p.route.intermediate = NO_INTERMEDIATE;
            }
            DragonflyMode::Par { .. } if Self::par_deciding(p) => {
                self.par_candidates(at, dst, p, load, out);
                return;
            }
            _ => {}
        }
        let diverted = p.route.phase & DIVERTED;
        let mut to_intermediate = p.route.phase & !DIVERTED == 0;
        let reached =
            if self.via_router() { at == p.route.intermediate } else { s.group(at) == p.route.intermediate };
        if to_intermediate && reached {
            let passed = if self.via_router() { PASSED_ROUTER } else { 0 };
            p.route.phase = TO_DESTINATION | diverted | passed;
            to_intermediate = false;
        }
        let vc = self.route_vc(p, p.route.phase);
        let port = if to_intermediate { self.intermediate_port(at, p) } else { self.min_port(at, dst) };
        out.push(Candidate { port, vc, penalty: 0 });
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, p: &mut Packet) {
        if p.route.phase & OPEN != 0 {
            self.note_way(at, chosen.port, p);
        }
        if matches!(self.mode, DragonflyMode::Par { .. }) && Self::par_deciding(p) {
            self.note_par_hop(at, chosen, p);
        }
        if self.shape.is_global_port(chosen.port) {
            p.route.global_hops += 1;
            if matches!(self.mode, DragonflyMode::InTransit { .. }) {
                p.route.phase &= !LOCAL_HOP;
            }
        } else if matches!(self.mode, DragonflyMode::InTransit { .. }) {
            p.route.phase |= LOCAL_HOP;
        }
    }

    fn sharing(&self) -> Option<Sharing> {
        match self.mode {
            DragonflyMode::UgalGlobal { period, .. } | DragonflyMode::Piggyback { period, .. } => {
                Some(Sharing { period })
            }
            _ => None,
        }
    }

    /// One byte per global port: UGAL-G its occupancy, piggybacking its congestion mark.
    fn report(&self, _at: SwitchId, load: &dyn LoadView, out: &mut Report) {
        self.report_global_channels(load, out);
    }

    /// Q-adaptive: an estimate per destination group, source position and network port.
    fn learned_len(&self, _at: SwitchId) -> usize {
        self.q_learned_len()
    }

    fn init_learned(&self, at: SwitchId, out: &mut [f32]) {
        self.q_init(at, out);
    }

    fn on_arrive(
        &self,
        at: SwitchId,
        in_port: PortId,
        dst: SwitchId,
        p: &mut Packet,
        now: u64,
        learned: &[f32],
    ) -> Option<Feedback> {
        self.q_on_arrive(at, in_port, dst, p, now, learned)
    }

    fn on_feedback(&self, _at: SwitchId, port: PortId, feedback: Feedback, learned: &mut [f32]) {
        self.q_on_feedback(port, feedback, learned);
    }

    /// To the other routers of the group.
    fn reports_to(&self, _at: SwitchId, port: PortId) -> bool {
        let s = &self.shape;
        (s.p..s.p + s.a - 1).contains(&(port as u32))
    }
}

fn build_dragonfly(ctx: &BuildContext<'_>, mode: DragonflyMode) -> Result<Arc<dyn Routing>, RoutingError> {
    let Shape::Dragonfly(d) = &ctx.net.shape else {
        return Err(ctx.needs("dragonfly"));
    };
    let period = match mode {
        DragonflyMode::UgalGlobal { period, .. } | DragonflyMode::Piggyback { period, .. } => Some(period),
        _ => None,
    };
    if period == Some(0) {
        return Err(RoutingError::new(
            format!("routing.{}.report_period", ctx.entry.name),
            "must be at least 1 (cycles between reports)",
        ));
    }
    if period.is_some() && d.h as usize > REPORT_BYTES {
        return Err(RoutingError::algorithm(format!(
            "`{}` reports at most {REPORT_BYTES} global channels a router, the Dragonfly has h = {}",
            ctx.entry.name, d.h
        )));
    }
    Ok(Arc::new(DragonflyRouting::new(d.clone(), mode).with_faults(ctx.net)?))
}

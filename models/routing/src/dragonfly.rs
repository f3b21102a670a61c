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
//! PAR, progressive adaptive routing (N. Jiang, J. Kim, W. J. Dally, "Indirect Adaptive
//! Routing on Large Scale Interconnection Networks", ISCA'09): UGAL-L's decision at the
//! source router, and a packet sent minimally may still be diverted to Valiant at the next
//! router of its source group, by the same comparison made there. A diverted packet takes
//! two local hops in its source group, and with Kim and Dally's VCs (VC = global hops) those
//! hops on VC 0 close cycles among the group's local channels; PAR's VC is the global hops
//! plus one once diverted (4 VCs: first local hop 0; diverted local hop and first global
//! hop 1; intermediate group 2; destination group 3), along which every route's VC never
//! decreases and within one VC a local hop only leads to a global one.

use super::registry::{per_switch_state, BuildContext, RoutingEntry, Settings, StateSize};
use super::VcPolicy;
use super::{decode_occupancy, encode_occupancy, Report, Sharing, REPORT_BYTES};
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::{below, Rng};
use base::settings::Setting;
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
    /// PAR: UGAL-L at the source router, revised at the next router of the source group.
    Par {
        /// Extra occupancy (phits) the non-minimal path must beat.
        threshold: u32,
        /// VCs: PAR's own (global hops + diverted, 4) or Kim and Dally's (global hops, 3:
        /// not deadlock-free for PAR, kept to show why).
        vcs: ParVcs,
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
/// The in-transit routing: the packet took a local hop in the group it is in.
const LOCAL_HOP: u8 = 0x01;

impl DragonflyRouting {
    /// Routing for `shape`.
    pub fn new(shape: DragonflyShape, mode: DragonflyMode) -> Self {
        Self { shape, mode }
    }

    /// Whether the routing draws an intermediate group at injection (all but MIN and the
    /// in-transit routing).
    fn draws_intermediate(&self) -> bool {
        !matches!(self.mode, DragonflyMode::Min | DragonflyMode::InTransit { .. })
    }

    /// The minimal next port from `at` towards group `target_group`, router `target` (used
    /// when already in the target group).
    fn min_port(&self, at: SwitchId, target: SwitchId) -> PortId {
        let s = &self.shape;
        let (g, gt) = (s.group(at), s.group(target));
        if g == gt {
            return s.local_port(s.router_in_group(at), s.router_in_group(target));
        }
        let (gateway, port) = s.gateway(g, gt);
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

    /// UGAL's comparison at `at`: whether the minimal path to `dst` beats the Valiant path
    /// through group `intermediate` (`occupancy x hops` of each first output; the Valiant
    /// one must also beat `threshold`).
    fn minimal_is_better(
        &self,
        at: SwitchId,
        dst: SwitchId,
        intermediate: u32,
        threshold: u32,
        load: &dyn LoadView,
    ) -> bool {
        let s = &self.shape;
        let min_port = self.min_port(at, dst);
        let val_port = self.min_port(at, intermediate * s.a); // any router of the group
        let min_hops = self.hops_to_group(at, s.group(dst)) + 1;
        let val_hops = self.hops_to_group(at, intermediate) + 1 + 2;
        let q_min = load.port_occupancy(min_port) as u64 * min_hops as u64;
        let q_val = load.port_occupancy(val_port) as u64 * val_hops as u64 + threshold as u64;
        q_min <= q_val
    }

    /// The occupancy of the global channel from `at`'s group to group `to` as `at` knows
    /// it: its own, now; another router's, as that router last reported it over the local
    /// link between them.
    fn global_queue(&self, at: SwitchId, to: u32, load: &dyn LoadView) -> u32 {
        let s = &self.shape;
        let (gateway, port) = s.gateway(s.group(at), to);
        if gateway == at {
            load.port_occupancy(port)
        } else {
            let via = s.local_port(s.router_in_group(at), s.router_in_group(gateway));
            decode_occupancy(load.reported(via, self.global_index(port)))
        }
    }

    /// Index of global port `port` among a router's global ports (its byte in a report).
    fn global_index(&self, port: PortId) -> usize {
        port as usize - (self.shape.p + self.shape.a - 1) as usize
    }

    /// UGAL-G's comparison at the source router `at`: whether the minimal path to `dst`
    /// beats the Valiant path through group `intermediate`, by `occupancy x hops` of the
    /// global channel each takes out of the source group (the Valiant one must also beat
    /// `threshold`).
    fn minimal_is_better_globally(
        &self,
        at: SwitchId,
        dst: SwitchId,
        intermediate: u32,
        threshold: u32,
        load: &dyn LoadView,
    ) -> bool {
        let s = &self.shape;
        let min_hops = self.hops_to_group(at, s.group(dst)) + 1;
        let val_hops = self.hops_to_group(at, intermediate) + 1 + 2;
        let q_min = self.global_queue(at, s.group(dst), load) as u64 * min_hops as u64;
        let q_val = self.global_queue(at, intermediate, load) as u64 * val_hops as u64 + threshold as u64;
        q_min <= q_val
    }

    /// The biased routing, as the packet leaves `at` by `port` with both ways open: which
    /// way the hop went (neither, when the two ways shared the port). The source router's
    /// hop is noted; at the next router, or on a global hop, the choice closes: Valiant or
    /// minimal from here on, and a change of mind at the next router sets `DIVERTED` (one
    /// VC up, as PAR's).
    fn note_way(&self, at: SwitchId, port: PortId, p: &mut Packet) {
        let s = &self.shape;
        let shared = p.route.phase & SHARED != 0;
        p.route.phase &= !SHARED;
        let went = if shared {
            0
        } else if port == self.min_port(at, p.route.intermediate * s.a) {
            WENT_VALIANT
        } else {
            WENT_MINIMAL
        };
        let before = p.route.phase & (WENT_MINIMAL | WENT_VALIANT);
        if p.hops == 0 && !s.is_global_port(port) {
            p.route.phase |= went;
            return;
        }
        let way = if went != 0 { went } else { before };
        let changed = before != 0 && way != before;
        p.route.phase =
            if way == WENT_VALIANT { 0 } else { TO_DESTINATION } | if changed { DIVERTED } else { 0 };
        if way != WENT_VALIANT {
            p.route.intermediate = NO_INTERMEDIATE;
        }
    }

    /// The in-transit routing's candidates at `at`: the minimal next hop, the router's
    /// other global links while the packet is in its source group, and, when the minimal
    /// hop is local and the packet took no local hop in this group yet, the group's other
    /// routers; misroutes carry `penalty`. VC = hops taken, the sixth and later hops on
    /// the last of 6 VCs: the verifier proves 6 acyclic and finds a cycle of one group's
    /// local channels with 5.
    fn in_transit_candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &Packet,
        penalty: u16,
        out: &mut Vec<Candidate>,
    ) {
        let s = &self.shape;
        let vc = p.hops.min(5) as u8;
        let min = self.min_port(at, dst);
        out.push(Candidate { port: min, vc, penalty: 0 });
        let (g, gd, own) = (s.group(at), s.group(dst), s.router_in_group(at));
        let first_global = (s.p + s.a - 1) as PortId;
        if p.route.global_hops == 0 && g != gd {
            for j in 0..s.h {
                let port = first_global + j as PortId;
                if port != min && s.global_target(g, own * s.h + j).is_some() {
                    out.push(Candidate { port, vc, penalty });
                }
            }
        }
        if !s.is_global_port(min) && p.route.phase & LOCAL_HOP == 0 {
            for other in (0..s.a).filter(|&r| r != own) {
                let port = s.local_port(own, other);
                if port != min && g * s.a + other != dst {
                    out.push(Candidate { port, vc, penalty });
                }
            }
        }
    }

    /// Piggybacking's mark: whether global port `port` of the router whose outputs `load`
    /// shows is congested, its occupancy above `percent` % of the mean over the router's
    /// global ports plus `offset` phits.
    fn congested(&self, port: PortId, percent: u32, offset: u32, load: &dyn LoadView) -> bool {
        let first = (self.shape.p + self.shape.a - 1) as PortId;
        let total: u64 = (0..self.shape.h as PortId).map(|j| load.port_occupancy(first + j) as u64).sum();
        let limit = total * percent as u64 / (100 * self.shape.h as u64) + offset as u64;
        load.port_occupancy(port) as u64 > limit
    }

    /// Piggybacking at the source router `at`: whether the global channel the minimal path
    /// to `dst` leaves the group by is marked congested (the router's own mark now, another
    /// router's as it last reported it).
    fn minimal_channel_congested(
        &self,
        at: SwitchId,
        dst: SwitchId,
        percent: u32,
        offset: u32,
        load: &dyn LoadView,
    ) -> bool {
        let s = &self.shape;
        let (gateway, port) = s.gateway(s.group(at), s.group(dst));
        if gateway == at {
            self.congested(port, percent, offset, load)
        } else {
            let via = s.local_port(s.router_in_group(at), s.router_in_group(gateway));
            load.reported(via, self.global_index(port)) != 0
        }
    }

    fn random_intermediate(&self, src_group: u32, dst_group: u32, rng: &mut Rng) -> u32 {
        let g = self.shape.groups;
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
            out.extend(
                (0..s.groups).filter(|&g| g != gs && g != gd).map(|g| RouteState { intermediate: g, ..base }),
            );
        }
        true
    }

    fn vcs_required(&self) -> u8 {
        match self.mode {
            DragonflyMode::Min => 2,
            DragonflyMode::Par { vcs: ParVcs::Diverted, .. } | DragonflyMode::Biased { .. } => 4,
            DragonflyMode::InTransit { .. } => 6,
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
            DragonflyMode::Min => 3,
            // A diverted packet: local, local, global, local, global, local.
            DragonflyMode::Par { .. } | DragonflyMode::Biased { .. } => 6,
            // Two local hops in each of three groups, two global hops.
            DragonflyMode::InTransit { .. } => 8,
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
                state.intermediate = i;
                state.phase = if matches!(self.mode, DragonflyMode::Biased { .. }) { OPEN } else { 0 };
            }
        }
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &mut Packet,
        load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let s = &self.shape;
        if let DragonflyMode::InTransit { penalty } = self.mode {
            self.in_transit_candidates(at, dst, p, penalty, out);
            return;
        }
        if p.route.phase & OPEN != 0 {
            // The biased routing at the source router or the next one: both ways offered,
            // Valiant's with its bias; `on_forward` notes the way taken.
            let DragonflyMode::Biased { bias, growth } = self.mode else {
                unreachable!("only the biased routing opens both ways")
            };
            let (min_port, val_port) =
                (self.min_port(at, dst), self.min_port(at, p.route.intermediate * s.a));
            let (went_min, went_val) = (p.route.phase & WENT_MINIMAL != 0, p.route.phase & WENT_VALIANT != 0);
            let vc = p.route.global_hops;
            out.push(Candidate { port: min_port, vc: vc + u8::from(went_val), penalty: 0 });
            if val_port == min_port {
                p.route.phase |= SHARED;
            } else {
                let penalty = (bias as u64 + p.hops as u64 * growth as u64).min(u16::MAX as u64) as u16;
                out.push(Candidate { port: val_port, vc: vc + u8::from(went_min), penalty });
            }
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
            DragonflyMode::Par { threshold, .. } => {
                if p.hops == 0 && p.route.phase == 0 {
                    // UGAL-L at the source router; a minimal packet keeps its intermediate
                    // group for the revision.
                    if self.minimal_is_better(at, dst, p.route.intermediate, threshold, load) {
                        p.route.phase = REVISABLE;
                    }
                } else if p.route.phase == REVISABLE && p.hops >= 1 {
                    // The next router: revise while the packet is still in its source group.
                    p.route.phase = if p.route.global_hops == 0
                        && !self.minimal_is_better(at, dst, p.route.intermediate, threshold, load)
                    {
                        DIVERTED
                    } else {
                        TO_DESTINATION
                    };
                }
            }
            _ => {}
        }
        let diverted = p.route.phase & DIVERTED;
        let mut to_intermediate = p.route.phase & !DIVERTED == 0;
        if to_intermediate && s.group(at) == p.route.intermediate {
            p.route.phase = TO_DESTINATION | diverted;
            to_intermediate = false;
        }
        let vc = match self.mode {
            DragonflyMode::Par { vcs: ParVcs::Diverted, .. } | DragonflyMode::Biased { .. } => {
                p.route.global_hops + u8::from(diverted != 0)
            }
            _ => p.route.global_hops,
        };
        let port = if !to_intermediate {
            self.min_port(at, dst)
        } else {
            let gi = p.route.intermediate;
            let (gateway, port) = s.gateway(s.group(at), gi);
            if gateway == at {
                port
            } else {
                s.local_port(s.router_in_group(at), s.router_in_group(gateway))
            }
        };
        out.push(Candidate { port, vc, penalty: 0 });
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, p: &mut Packet) {
        if p.route.phase & OPEN != 0 {
            self.note_way(at, chosen.port, p);
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
        let first = (self.shape.p + self.shape.a - 1) as PortId;
        for (j, byte) in out.iter_mut().take(self.shape.h as usize).enumerate() {
            let port = first + j as PortId;
            *byte = match self.mode {
                DragonflyMode::Piggyback { percent, offset, .. } => {
                    u8::from(self.congested(port, percent, offset, load))
                }
                _ => encode_occupancy(load.port_occupancy(port)),
            };
        }
    }

    /// To the other routers of the group.
    fn reports_to(&self, _at: SwitchId, port: PortId) -> bool {
        let s = &self.shape;
        (s.p..s.p + s.a - 1).contains(&(port as u32))
    }
}

/// `dragonfly_min` in the routing registry.
pub const DRAGONFLY_MIN: RoutingEntry = RoutingEntry {
    name: "dragonfly_min",
    doc: "Dragonfly minimal: local, global, local hop, with the Kim/Dally VCs (VC = global hops taken)",
    topologies: "dragonfly",
    vcs: "2",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: true,
    state_bytes: per_switch_state,
    build: |ctx| build_dragonfly(ctx, DragonflyMode::Min),
};

/// `dragonfly_valiant` in the routing registry.
pub const DRAGONFLY_VALIANT: RoutingEntry = RoutingEntry {
    name: "dragonfly_valiant",
    doc: "Dragonfly Valiant: minimal to a random intermediate group, then minimal to the destination",
    vcs: "3",
    build: |ctx| build_dragonfly(ctx, DragonflyMode::Valiant),
    ..DRAGONFLY_MIN
};

/// `dragonfly_ugal` in the routing registry.
pub const DRAGONFLY_UGAL: RoutingEntry = RoutingEntry {
    name: "dragonfly_ugal",
    doc: "Dragonfly UGAL-L: minimal or Valiant, decided at the source router by queue occupancy x hops of each path's first output",
    vcs: "3",
    settings: Settings::typed::<UgalSettings>(&[Setting {
        key: "threshold",
        default: "0",
        doc: "occupancy in phits the non-minimal path must beat",
    }]),
    build: |ctx| {
        let s: UgalSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::UgalLocal { threshold: s.threshold })
    },
    ..DRAGONFLY_MIN
};

/// `dragonfly_ugal_g` in the routing registry.
pub const DRAGONFLY_UGAL_G: RoutingEntry = RoutingEntry {
    name: "dragonfly_ugal_g",
    doc: "Dragonfly UGAL-G (Kim, Dally, Scott and Abts, ISCA'08): minimal or Valiant, decided at the source router by occupancy x hops of the global channel each path takes out of the source group; the other routers' channels as they last reported them over the local links (every `report_period` cycles, arriving after the local latency)",
    vcs: "3",
    settings: Settings::typed::<UgalGlobalSettings>(&[
        Setting { key: "threshold", default: "0", doc: "occupancy in phits the non-minimal path must beat" },
        Setting {
            key: "report_period",
            default: "1",
            doc: "cycles between a router's reports of its global channels' occupancy to the routers of its group (sent only when changed; each arrives after the local link's latency)",
        },
    ]),
    state_bytes: shared_state,
    build: |ctx| {
        let s: UgalGlobalSettings = ctx.settings()?;
        if s.report_period == 0 {
            return Err(RoutingError::new(
                "routing.dragonfly_ugal_g.report_period",
                "must be at least 1 (cycles between reports)",
            ));
        }
        build_dragonfly(ctx, DragonflyMode::UgalGlobal { threshold: s.threshold, period: s.report_period })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_ugal_g]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UgalGlobalSettings {
    #[serde(default)]
    threshold: u32,
    #[serde(default = "one")]
    report_period: u32,
}

fn one() -> u32 {
    1
}

/// A routing that shares state: a record per switch and, on the switches this rank owns,
/// the last report heard over each port (at most as many terminal as network ports).
fn shared_state(size: &StateSize) -> u64 {
    size.per_switch() + size.own_switches * size.degree * 2 * (REPORT_BYTES as u64 + 2)
}

/// `dragonfly_pb` in the routing registry.
pub const DRAGONFLY_PB: RoutingEntry = RoutingEntry {
    name: "dragonfly_pb",
    doc: "Dragonfly piggybacking (Jiang, Kim and Dally, ISCA'09), as FOGSim implements it: each router marks its global channels congested above a multiple of their mean occupancy and reports the marks to the routers of its group; the source router goes Valiant when UGAL-L says so or when the minimal path's global channel is marked",
    vcs: "3",
    settings: Settings::typed::<PiggybackSettings>(&[
        Setting { key: "threshold", default: "0", doc: "occupancy in phits the non-minimal path must beat in UGAL-L's comparison" },
        Setting {
            key: "congestion_percent",
            default: "200",
            doc: "a global channel is marked congested when its occupancy exceeds this percentage of the mean over its router's global channels (FOGSim's piggybacking_coef)...",
        },
        Setting {
            key: "congestion_offset",
            default: "80",
            doc: "...plus this many phits (FOGSim's 5 packets, of 16 phits)",
        },
        Setting {
            key: "report_period",
            default: "1",
            doc: "cycles between a router's reports of its marks to the routers of its group (sent only when changed; each arrives after the local link's latency)",
        },
    ]),
    state_bytes: shared_state,
    build: |ctx| {
        let s: PiggybackSettings = ctx.settings()?;
        if s.report_period == 0 {
            return Err(RoutingError::new(
                "routing.dragonfly_pb.report_period",
                "must be at least 1 (cycles between reports)",
            ));
        }
        build_dragonfly(
            ctx,
            DragonflyMode::Piggyback {
                threshold: s.threshold,
                percent: s.congestion_percent,
                offset: s.congestion_offset,
                period: s.report_period,
            },
        )
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_pb]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PiggybackSettings {
    #[serde(default)]
    threshold: u32,
    #[serde(default = "two_hundred")]
    congestion_percent: u32,
    #[serde(default = "eighty")]
    congestion_offset: u32,
    #[serde(default = "one")]
    report_period: u32,
}

fn two_hundred() -> u32 {
    200
}

fn eighty() -> u32 {
    80
}

/// `dragonfly_imb` in the routing registry.
pub const DRAGONFLY_IMB: RoutingEntry = RoutingEntry {
    name: "dragonfly_imb",
    doc: "Dragonfly per-hop adaptive with an increasingly minimal bias, after Cray's description of Aries and Slingshot routing (patent US 10,757,022: the lightest loaded port after a bias that favours minimal paths more at every hop; the numbers are xnet's): at the source router and the next one the minimal and the Valiant next hop are both candidates, the Valiant one's load raised by bias + hops x bias_growth, the selection takes the lighter; a packet may change its mind once, either way",
    vcs: "4 (global hops, plus one after a change of mind)",
    settings: Settings::typed::<BiasedSettings>(&[
        Setting {
            key: "bias",
            default: "128",
            doc: "phits added to the Valiant candidate's load at the source router (0: neutral, ties at random); the defaults were chosen on BookSim2's Dragonfly(4,8,4) with 256-phit buffers, where they carry 0.79 of uniform traffic and 0.4 of the group shift unsaturated",
        },
        Setting { key: "bias_growth", default: "256", doc: "phits added to it for every hop taken (at the next router: bias + bias_growth)" },
    ]),
    build: |ctx| {
        let s: BiasedSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::Biased { bias: s.bias, growth: s.bias_growth })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_imb]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BiasedSettings {
    #[serde(default = "one_hundred_twenty_eight")]
    bias: u32,
    #[serde(default = "two_hundred_fifty_six")]
    bias_growth: u32,
}

fn one_hundred_twenty_eight() -> u32 {
    128
}

fn two_hundred_fifty_six() -> u32 {
    256
}

/// `dragonfly_ofar` in the routing registry.
pub const DRAGONFLY_OFAR: RoutingEntry = RoutingEntry {
    name: "dragonfly_ofar",
    doc: "Dragonfly in-transit adaptive misrouting, after OFAR (Garcia et al., ICPP'12): at every router the minimal next hop and misroutes, taken when the minimal output is busier by `penalty`: the router's other global links while in the source group, the group's other routers when the minimal hop is local and no local hop was taken in the group yet; VC = hops taken up to the last of 6, or, as OFAR, any VC with an escape subnetwork (`vc_policy = \"any\"`, `escape_vcs = 1`)",
    vcs: "6 (hops taken, the sixth and later on the last), or any with routing.escape_vcs",
    settings: Settings::typed::<InTransitSettings>(&[Setting {
        key: "penalty",
        default: "256",
        doc: "phits added to a misroute's load when the selection compares candidates (on BookSim2's Dragonfly(4,8,4), 256-phit buffers: 64 misroutes so eagerly that uniform traffic saturates at 0.63; 256 carries 0.8 of it and 0.4 of the group shift)",
    }]),
    build: |ctx| {
        let s: InTransitSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::InTransit { penalty: s.penalty })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_ofar]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InTransitSettings {
    #[serde(default = "two_hundred_fifty_six_phits")]
    penalty: u16,
}

fn two_hundred_fifty_six_phits() -> u16 {
    256
}

/// `dragonfly_par` in the routing registry.
pub const DRAGONFLY_PAR: RoutingEntry = RoutingEntry {
    name: "dragonfly_par",
    doc: "Dragonfly PAR (progressive adaptive routing, Jiang, Kim and Dally, ISCA'09): UGAL-L's choice at the source router, and a packet sent minimally may be diverted to Valiant at the next router of its source group by the same comparison",
    vcs: "4 (global hops, plus one once diverted)",
    settings: Settings::typed::<ParSettings>(&[
        Setting { key: "threshold", default: "0", doc: "occupancy in phits the non-minimal path must beat, at both decisions" },
        Setting {
            key: "vc_assignment",
            default: "diverted",
            doc: "`diverted`: VC = global hops taken, plus one once diverted (4 VCs, deadlock-free); `global_hops`: Kim and Dally's UGAL VCs (3), which PAR's two local hops in the source group close into cycles (`xnet routes` shows one; for comparison only)",
        },
    ]),
    build: |ctx| {
        let s: ParSettings = ctx.settings()?;
        build_dragonfly(ctx, DragonflyMode::Par { threshold: s.threshold, vcs: s.vc_assignment })
    },
    ..DRAGONFLY_MIN
};

/// `[routing.dragonfly_par]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ParSettings {
    #[serde(default)]
    threshold: u32,
    #[serde(default)]
    vc_assignment: ParVcs,
}

/// `[routing.dragonfly_ugal]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct UgalSettings {
    #[serde(default)]
    threshold: u32,
}

fn build_dragonfly(ctx: &BuildContext<'_>, mode: DragonflyMode) -> Result<Arc<dyn Routing>, RoutingError> {
    let Shape::Dragonfly(d) = &ctx.net.shape else {
        return Err(ctx.needs("dragonfly"));
    };
    let reports = matches!(mode, DragonflyMode::UgalGlobal { .. } | DragonflyMode::Piggyback { .. });
    if reports && d.h as usize > REPORT_BYTES {
        return Err(RoutingError::algorithm(format!(
            "`{}` reports at most {REPORT_BYTES} global channels a router, the Dragonfly has h = {}",
            ctx.entry.name, d.h
        )));
    }
    Ok(Arc::new(DragonflyRouting::new(d.clone(), mode)))
}

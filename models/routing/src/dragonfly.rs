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
//! PAR, progressive adaptive routing (N. Jiang, J. Kim, W. J. Dally, "Indirect Adaptive
//! Routing on Large Scale Interconnection Networks", ISCA'09): UGAL-L's decision at the
//! source router, and a packet sent minimally may still be diverted to Valiant at the next
//! router of its source group, by the same comparison made there. A diverted packet takes
//! two local hops in its source group, and with Kim and Dally's VCs (VC = global hops) those
//! hops on VC 0 close cycles among the group's local channels; PAR's VC is the global hops
//! plus one once diverted (4 VCs: first local hop 0; diverted local hop and first global
//! hop 1; intermediate group 2; destination group 3), along which every route's VC never
//! decreases and within one VC a local hop only leads to a global one.

use super::registry::{per_switch_state, BuildContext, RoutingEntry, Settings};
use super::VcPolicy;
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
/// PAR: set in the phase once a packet was diverted to Valiant after its source router.
const DIVERTED: u8 = 0x10;

impl DragonflyRouting {
    /// Routing for `shape`.
    pub fn new(shape: DragonflyShape, mode: DragonflyMode) -> Self {
        Self { shape, mode }
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
        if self.mode == DragonflyMode::Min {
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
            DragonflyMode::Par { vcs: ParVcs::Diverted, .. } => 4,
            _ => 3,
        }
    }

    fn reads(&self) -> Reads {
        match self.mode {
            DragonflyMode::Min => Reads::NOTHING,
            DragonflyMode::Valiant => Reads { random_init: true, ..Reads::NOTHING },
            // UGAL-L compares output occupancies at the source router.
            DragonflyMode::UgalLocal { .. } => Reads { random_init: true, load: true, ..Reads::NOTHING },
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
            DragonflyMode::Par { .. } => 6,
            _ => 5,
        }
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        let (gs, gd) = (self.shape.group(src), self.shape.group(dst));
        state.intermediate = NO_INTERMEDIATE;
        state.phase = TO_DESTINATION;
        if self.mode != DragonflyMode::Min && gs != gd {
            let i = self.random_intermediate(gs, gd, rng);
            if i != NO_INTERMEDIATE {
                state.intermediate = i;
                state.phase = 0;
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
            DragonflyMode::Par { vcs: ParVcs::Diverted, .. } => p.route.global_hops + u8::from(diverted != 0),
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

    fn on_forward(&self, _at: SwitchId, chosen: Candidate, p: &mut Packet) {
        if self.shape.is_global_port(chosen.port) {
            p.route.global_hops += 1;
        }
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
    Ok(Arc::new(DragonflyRouting::new(d.clone(), mode)))
}

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
}

/// Dragonfly routing.
pub struct DragonflyRouting {
    shape: DragonflyShape,
    mode: DragonflyMode,
}

const NO_INTERMEDIATE: u32 = u32::MAX;
/// Phase 0: heading for the intermediate group; phase 1: heading for the destination.
const TO_DESTINATION: u8 = 1;

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
            _ => 3,
        }
    }

    fn reads(&self) -> Reads {
        match self.mode {
            DragonflyMode::Min => Reads::NOTHING,
            DragonflyMode::Valiant => Reads { random_init: true, ..Reads::NOTHING },
            // UGAL-L compares output occupancies at the source router.
            DragonflyMode::UgalLocal { .. } => Reads { random_init: true, load: true, source: false },
        }
    }

    fn max_hops(&self) -> u32 {
        match self.mode {
            DragonflyMode::Min => 3,
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
        let vc = p.route.global_hops;
        if let DragonflyMode::UgalLocal { threshold } = self.mode {
            // Decide once, at the source router.
            if p.hops == 0 && p.route.phase == 0 {
                let min_port = self.min_port(at, dst);
                let val_target = p.route.intermediate * s.a; // any router of the group
                let val_port = self.min_port(at, val_target);
                let min_hops = self.hops_to_group(at, s.group(dst)) + 1;
                let val_hops = self.hops_to_group(at, p.route.intermediate) + 1 + 2;
                let q_min = load.port_occupancy(min_port) as u64 * min_hops as u64;
                let q_val = load.port_occupancy(val_port) as u64 * val_hops as u64 + threshold as u64;
                if q_min <= q_val {
                    p.route.phase = TO_DESTINATION;
                    p.route.intermediate = NO_INTERMEDIATE;
                }
            }
        }
        if p.route.phase != TO_DESTINATION && s.group(at) == p.route.intermediate {
            p.route.phase = TO_DESTINATION;
        }
        let port = if p.route.phase == TO_DESTINATION {
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

//! ALLPATH(k) for any topology: every next hop that keeps the route within `shortest + k`
//! switch hops. The multipath routing of Pascual and Navaridas, "High-Performance,
//! Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings", ICS'18,
//! section 7.3 (after Faizian et al., IEEE TPDS 29(1), 2018).
//!
//! At the source the packet gets a hop budget `dist(src, dst) + k` (kept in its route
//! state's `intermediate` field); every hop spends one.
//! At switch `s` the candidates are the neighbours `n` with `dist(n, dst) + 1 <= budget`,
//! so the remaining slack is `budget - dist(s, dst)`. Routes may revisit switches when
//! `k >= 2`; use a deadlock-free VC policy (ladder, the default, or DAVC).

use super::minimal::Minimal;
use super::registry::{exact_distance_state, RoutingEntry, Settings};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use serde::Deserialize;
use std::sync::Arc;
use topology::{Network, SwitchId};

/// ALLPATH(k) over exact distances: from coordinates on HyperX, tori and meshes without
/// failed links, else from a table of one byte per switch pair. The slack
/// `budget - dist(s, dst)` needs absolute distances, which the two-bit table of
/// [`Minimal`] does not hold (it only tells a neighbour's distance relative to the
/// switch's); recovering them would cost a walk to the destination per decision.
pub struct AllPath {
    min: Minimal,
    k: u32,
}

impl AllPath {
    /// ALLPATH(k) on `net`.
    pub fn new(net: &Network, k: u32) -> Result<Self, RoutingError> {
        Ok(Self { min: Minimal::with_exact_distances(net)?, k })
    }
}

impl Routing for AllPath {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn build_summary(&self) -> Option<String> {
        Some(self.min.describe())
    }

    fn max_hops(&self) -> u32 {
        self.min.diameter() + self.k
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.intermediate = self.min.distance(src, dst) + self.k;
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let budget = packet.route.intermediate;
        self.min.distances_around(at, dst, |port, here, there| {
            let remaining = there + 1;
            if remaining <= budget {
                // Non-minimal hops carry their extra length as a small penalty, so that
                // the adaptive selection prefers minimal ones when loads tie.
                out.push(Candidate { port, vc: 0, penalty: (remaining - here) as u16 });
            }
        });
    }

    fn on_forward(&self, _at: SwitchId, _chosen: Candidate, packet: &mut Packet) {
        packet.route.intermediate = packet.route.intermediate.saturating_sub(1);
    }
}

/// `allpath` in the routing registry.
pub const ALLPATH: RoutingEntry = RoutingEntry {
    name: "allpath",
    doc: "ALLPATH(k): every next hop that keeps the route within shortest + k switch hops",
    topologies: "any",
    vcs: "ladder: diameter + k",
    settings: Settings::typed::<AllPathSettings>(&[Setting {
        key: "k",
        default: "1",
        doc: "extra switch hops allowed over the shortest route, 0..=64",
    }]),
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    state_bytes: exact_distance_state,
    build: |ctx| {
        let s: AllPathSettings = ctx.settings()?;
        if s.k > 64 {
            return Err(RoutingError::new("routing.allpath.k", format!("must be at most 64, got {}", s.k)));
        }
        Ok(Arc::new(AllPath::new(ctx.net, s.k)?))
    },
};

/// `[routing.allpath]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AllPathSettings {
    #[serde(default = "one")]
    k: u32,
}

fn one() -> u32 {
    1
}

//! Valiant routing (Valiant and Brebner, "Universal Schemes for Parallel Communication",
//! STOC'81) for any topology: minimal to a random intermediate switch chosen at the source,
//! then minimal to the destination. Routes have at most twice the diameter in switch hops;
//! use a deadlock-free VC policy (ladder, the default, or DAVC).

use super::minimal::Minimal;
use super::registry::{RoutingEntry, Settings};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::{below, Rng};
use std::sync::Arc;
use topology::{Network, SwitchId};

const NO_INTERMEDIATE: u32 = u32::MAX;
/// Phase 0: heading for the intermediate switch; phase 1: heading for the destination.
const TO_DESTINATION: u8 = 1;

/// Generic Valiant routing.
pub struct Valiant {
    min: Minimal,
    switches: u32,
}

impl Valiant {
    /// Valiant on `net`.
    pub fn new(net: &Network) -> Result<Self, RoutingError> {
        Ok(Self { min: Minimal::new(net, false)?, switches: net.num_switches() as u32 })
    }
}

impl Routing for Valiant {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn reads(&self) -> Reads {
        Reads { random_init: true, ..Reads::NOTHING }
    }

    fn build_summary(&self) -> Option<String> {
        Some(self.min.describe())
    }

    fn max_hops(&self) -> u32 {
        2 * self.min.diameter()
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        state.phase = 0;
        // Uniform over the switches other than source and destination.
        let excluded = if src == dst { 1 } else { 2 };
        if self.switches <= excluded {
            state.intermediate = NO_INTERMEDIATE;
            state.phase = TO_DESTINATION;
            return;
        }
        let mut i = below(rng, (self.switches - excluded) as u64) as u32;
        let (lo, hi) = (src.min(dst), src.max(dst));
        if i >= lo {
            i += 1;
        }
        if lo != hi && i >= hi {
            i += 1;
        }
        state.intermediate = i;
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let st = &mut packet.route;
        if st.phase != TO_DESTINATION && (st.intermediate == at || st.intermediate == NO_INTERMEDIATE) {
            st.phase = TO_DESTINATION;
        }
        let target = if st.phase == TO_DESTINATION { dst } else { st.intermediate };
        self.min.candidates(at, target, packet, load, rng, out);
    }
}

/// `valiant` in the routing registry.
pub const VALIANT: RoutingEntry = RoutingEntry {
    name: "valiant",
    doc: "Valiant: minimal to a random intermediate switch, then minimal to the destination",
    topologies: "any",
    vcs: "ladder: 2 x diameter",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    // A byte per switch pair.
    state_bytes: |size| size.pairs().saturating_add(size.per_switch()),
    build: |ctx| Ok(Arc::new(Valiant::new(ctx.net)?)),
};

//! PAR's two decisions (Jiang, Kim and Dally, ISCA'09): UGAL-L's rule at the source router
//! and, for a packet sent minimally, again at the next router of its source group.
//!
//! The decision is written into the packet's state when it leaves the router
//! (`note_par_hop`), not when it is routed: a router that routes a blocked head again
//! (`router.reselect`) decides again on that cycle's loads. With `fallback`, the way the rule
//! did not choose is offered too, behind every other candidate: such a router takes it when
//! the chosen way's output has no room, as CAMINOS's PAR does (its routers drop the
//! candidates without room before comparing).

use super::{DragonflyMode, DragonflyRouting, DIVERTED, REVISABLE, SHARED, TO_DESTINATION};
use crate::packet::Packet;
use crate::{Candidate, LoadView};
use topology::SwitchId;

/// The fallback's penalty: behind any candidate an adaptive selection compares it with.
const FALLBACK_PENALTY: u16 = u16::MAX;

impl DragonflyRouting {
    /// Whether `p` is at one of PAR's decisions: at its source router with an intermediate
    /// drawn, or at the next router after a minimal first hop.
    pub(super) fn par_deciding(p: &Packet) -> bool {
        let phase = p.route.phase & !SHARED;
        (p.hops == 0 && phase == 0) || phase == REVISABLE
    }

    /// The phase of a packet that takes the Valiant way from here: heading for the
    /// intermediate, diverted if it went minimally before.
    fn par_valiant_phase(p: &Packet) -> u8 {
        if p.hops == 0 {
            0
        } else {
            DIVERTED
        }
    }

    /// The hop the Valiant way takes from `at`.
    fn par_valiant_hop(&self, at: SwitchId, p: &Packet) -> Candidate {
        let phase = Self::par_valiant_phase(p);
        Candidate { port: self.intermediate_port(at, p), vc: self.route_vc(p, phase), penalty: 0 }
    }

    /// PAR's candidates at a decision: the way UGAL-L's rule picks (and with `fallback` the
    /// other behind it). Two ways by one port and VC are one candidate, the minimal one
    /// (the rule always picks it then: the same occupancy over fewer hops); `SHARED` tells
    /// `note_par_hop`.
    pub(super) fn par_candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &mut Packet,
        load: &dyn LoadView,
        out: &mut Vec<Candidate>,
    ) {
        let DragonflyMode::Par { threshold, fallback, .. } = self.mode else {
            unreachable!("only PAR decides here")
        };
        let minimal =
            Candidate { port: self.min_port(at, dst), vc: self.route_vc(p, TO_DESTINATION), penalty: 0 };
        let valiant = self.par_valiant_hop(at, p);
        if (minimal.port, minimal.vc) == (valiant.port, valiant.vc) {
            p.route.phase |= SHARED;
            out.push(minimal);
            return;
        }
        let gi = self.intermediate_group(p.route.intermediate);
        let (chosen, other) = if self.minimal_is_better(at, dst, gi, threshold, load) {
            (minimal, valiant)
        } else {
            (valiant, minimal)
        };
        out.push(chosen);
        if fallback {
            out.push(Candidate { penalty: FALLBACK_PENALTY, ..other });
        }
    }

    /// PAR, as a packet at a decision leaves `at` by `chosen`: which way it went. The
    /// minimal way after the source router's local hop stays revisable; any other hop closes
    /// the decision.
    pub(super) fn note_par_hop(&self, at: SwitchId, chosen: Candidate, p: &mut Packet) {
        let shared = p.route.phase & SHARED != 0;
        p.route.phase &= !SHARED;
        let valiant = self.par_valiant_hop(at, p);
        p.route.phase = if !shared && (chosen.port, chosen.vc) == (valiant.port, valiant.vc) {
            Self::par_valiant_phase(p)
        } else if p.hops == 0 && !self.shape.is_global_port(chosen.port) {
            REVISABLE
        } else {
            TO_DESTINATION
        };
    }
}

//! The increasingly-minimal-bias routing's two choices in the source group: the
//! candidates with their bias, and the way each hop went.

use super::{
    DragonflyMode, DragonflyRouting, DIVERTED, NO_INTERMEDIATE, SHARED, TO_DESTINATION, WENT_MINIMAL,
    WENT_VALIANT,
};
use crate::packet::Packet;
use crate::Candidate;
use topology::{PortId, SwitchId};

impl DragonflyRouting {
    /// The biased routing at the source router or the next one: both ways offered,
    /// Valiant's with its bias; `on_forward` notes the way taken (`note_way`).
    pub(super) fn biased_candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &mut Packet,
        out: &mut Vec<Candidate>,
    ) {
        let s = &self.shape;
        let DragonflyMode::Biased { bias, growth } = self.mode else {
            unreachable!("only the biased routing opens both ways")
        };
        let (min_port, val_port) = (self.min_port(at, dst), self.min_port(at, p.route.intermediate * s.a));
        let (went_min, went_val) = (p.route.phase & WENT_MINIMAL != 0, p.route.phase & WENT_VALIANT != 0);
        let vc = p.route.global_hops;
        out.push(Candidate { port: min_port, vc: vc + u8::from(went_val), penalty: 0 });
        if val_port == min_port {
            p.route.phase |= SHARED;
        } else {
            let penalty = (bias as u64 + p.hops as u64 * growth as u64).min(u16::MAX as u64) as u16;
            out.push(Candidate { port: val_port, vc: vc + u8::from(went_min), penalty });
        }
    }

    /// The biased routing, as the packet leaves `at` by `port` with both ways open: which
    /// way the hop went (neither, when the two ways shared the port). The source router's
    /// hop is noted; at the next router, or on a global hop, the choice closes: Valiant or
    /// minimal from here on, and a change of mind at the next router sets `DIVERTED` (one
    /// VC up, as PAR's).
    pub(super) fn note_way(&self, at: SwitchId, port: PortId, p: &mut Packet) {
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
}

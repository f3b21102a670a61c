//! The UGAL family's comparisons: UGAL-L's on the deciding router's own outputs (UGAL-L,
//! PAR), UGAL-G's on the global channels of the source group as their routers reported
//! them, and piggybacking's congestion marks.

use super::{DragonflyMode, DragonflyRouting};
use crate::{decode_occupancy, encode_occupancy, LoadView, Report};
use topology::{PortId, SwitchId};

impl DragonflyRouting {
    /// UGAL's rule at `at`: the minimal path to `dst` beats the Valiant path through group
    /// `intermediate` when `occupancy x hops` of the minimal one is at most the Valiant
    /// one's plus `threshold`, `queue(g)` being the occupancy the variant reads on the way
    /// to group `g` (the decision is taken outside the destination group).
    fn ugal_prefers_minimal(
        &self,
        at: SwitchId,
        dst: SwitchId,
        intermediate: u32,
        threshold: u32,
        queue: impl Fn(u32) -> u32,
    ) -> bool {
        let gd = self.shape.group(dst);
        if !self.linked(self.shape.group(at), gd) {
            // Their link failed: no minimal route shorter than a Valiant one.
            return false;
        }
        let min_hops = self.hops_to_group(at, gd) + 1;
        let val_hops = self.hops_to_group(at, intermediate) + 1 + 2;
        queue(gd) as u64 * min_hops as u64 <= queue(intermediate) as u64 * val_hops as u64 + threshold as u64
    }

    /// UGAL-L's comparison (and PAR's): on the first output of each path at `at`.
    pub(super) fn minimal_is_better(
        &self,
        at: SwitchId,
        dst: SwitchId,
        intermediate: u32,
        threshold: u32,
        load: &dyn LoadView,
    ) -> bool {
        // Any router of the group: the first hop depends on the group alone.
        let first_output = |g: u32| load.port_occupancy(self.min_port(at, g * self.shape.a));
        self.ugal_prefers_minimal(at, dst, intermediate, threshold, first_output)
    }

    /// The occupancy of the global channel from `at`'s group to group `to` as `at` knows
    /// it: its own, now; another router's, as that router last reported it over the local
    /// link between them.
    pub(super) fn global_queue(&self, at: SwitchId, to: u32, load: &dyn LoadView) -> u32 {
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
    pub(super) fn global_index(&self, port: PortId) -> usize {
        port as usize - (self.shape.p + self.shape.a - 1) as usize
    }

    /// UGAL-G's comparison at the source router `at`: on the global channel each path
    /// takes out of the source group.
    pub(super) fn minimal_is_better_globally(
        &self,
        at: SwitchId,
        dst: SwitchId,
        intermediate: u32,
        threshold: u32,
        load: &dyn LoadView,
    ) -> bool {
        self.ugal_prefers_minimal(at, dst, intermediate, threshold, |g| self.global_queue(at, g, load))
    }

    /// Piggybacking's mark of the router whose outputs `load` shows: a global port is
    /// congested when its occupancy exceeds this many phits, `percent` % of the mean over
    /// the router's global ports plus `offset`.
    pub(super) fn congestion_limit(&self, percent: u32, offset: u32, load: &dyn LoadView) -> u64 {
        let first = (self.shape.p + self.shape.a - 1) as PortId;
        let total: u64 = (0..self.shape.h as PortId).map(|j| load.port_occupancy(first + j) as u64).sum();
        total * percent as u64 / (100 * self.shape.h as u64) + offset as u64
    }

    /// Piggybacking at the source router `at`: whether the global channel the minimal path
    /// to `dst` leaves the group by is marked congested (the router's own mark now, another
    /// router's as it last reported it).
    pub(super) fn minimal_channel_congested(
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
            load.port_occupancy(port) as u64 > self.congestion_limit(percent, offset, load)
        } else {
            let via = s.local_port(s.router_in_group(at), s.router_in_group(gateway));
            load.reported(via, self.global_index(port)) != 0
        }
    }

    /// UGAL-G's and piggybacking's report: one byte per global port, its occupancy or its
    /// congestion mark.
    pub(super) fn report_global_channels(&self, load: &dyn LoadView, out: &mut Report) {
        let first = (self.shape.p + self.shape.a - 1) as PortId;
        let limit = match self.mode {
            DragonflyMode::Piggyback { percent, offset, .. } => {
                Some(self.congestion_limit(percent, offset, load))
            }
            _ => None,
        };
        for (j, byte) in out.iter_mut().take(self.shape.h as usize).enumerate() {
            let occupancy = load.port_occupancy(first + j as PortId);
            *byte = match limit {
                Some(limit) => u8::from(occupancy as u64 > limit),
                None => encode_occupancy(occupancy),
            };
        }
    }
}

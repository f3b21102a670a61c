//! The UGAL family's comparisons: UGAL-L's on the deciding router's own outputs (UGAL-L,
//! PAR), UGAL-G's on the global channels of the source group as their routers reported
//! them, and piggybacking's congestion marks.

use super::DragonflyRouting;
use crate::{decode_occupancy, LoadView};
use topology::{PortId, SwitchId};

impl DragonflyRouting {
    /// UGAL's comparison at `at`: whether the minimal path to `dst` beats the Valiant path
    /// through group `intermediate` (`occupancy x hops` of each first output; the Valiant
    /// one must also beat `threshold`).
    pub(super) fn minimal_is_better(
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

    /// UGAL-G's comparison at the source router `at`: whether the minimal path to `dst`
    /// beats the Valiant path through group `intermediate`, by `occupancy x hops` of the
    /// global channel each takes out of the source group (the Valiant one must also beat
    /// `threshold`).
    pub(super) fn minimal_is_better_globally(
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

    /// Piggybacking's mark: whether global port `port` of the router whose outputs `load`
    /// shows is congested, its occupancy above `percent` % of the mean over the router's
    /// global ports plus `offset` phits.
    pub(super) fn congested(&self, port: PortId, percent: u32, offset: u32, load: &dyn LoadView) -> bool {
        let first = (self.shape.p + self.shape.a - 1) as PortId;
        let total: u64 = (0..self.shape.h as PortId).map(|j| load.port_occupancy(first + j) as u64).sum();
        let limit = total * percent as u64 / (100 * self.shape.h as u64) + offset as u64;
        load.port_occupancy(port) as u64 > limit
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
            self.congested(port, percent, offset, load)
        } else {
            let via = s.local_port(s.router_in_group(at), s.router_in_group(gateway));
            load.reported(via, self.global_index(port)) != 0
        }
    }
}

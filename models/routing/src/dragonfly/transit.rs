//! In-transit adaptive misrouting (after OFAR): the candidates at every router.

use super::{DragonflyRouting, LOCAL_HOP};
use crate::packet::Packet;
use crate::Candidate;
use topology::{PortId, SwitchId};

impl DragonflyRouting {
    /// The in-transit routing's candidates at `at`: the minimal next hop, the router's
    /// other global links while the packet is in its source group, and, when the minimal
    /// hop is local and the packet took no local hop in this group yet, the group's other
    /// routers; misroutes carry `penalty`. VC = hops taken, the sixth and later hops on
    /// the last of 6 VCs: the verifier proves 6 acyclic and finds a cycle of one group's
    /// local channels with 5.
    pub(super) fn in_transit_candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        p: &Packet,
        penalty: u16,
        out: &mut Vec<Candidate>,
    ) {
        let s = &self.shape;
        let vc = p.hops.min(self.transit_vcs() as u16 - 1) as u8;
        let min = self.min_port(at, dst);
        out.push(Candidate { port: min, vc, penalty: 0 });
        let (g, gd, own) = (s.group(at), s.group(dst), s.router_in_group(at));
        let first_global = (s.p + s.a - 1) as PortId;
        if p.route.global_hops == 0 && g != gd {
            for j in 0..s.h {
                let port = first_global + j as PortId;
                // A misroute to a group linked to the destination's: two global hops at most.
                let far = s.global_target(g, own * s.h + j);
                if port != min && far.is_some_and(|t| self.linked(g, t) && self.linked(t, gd)) {
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

    /// The in-transit routing's VCs: the hops taken, the sixth and later on the last of 6;
    /// with failed global links routes are a hop longer and the seventh and later share
    /// the last of 7 (`xnet routes` finds a cycle of one group's local channels on one VC
    /// less).
    pub(super) fn transit_vcs(&self) -> u8 {
        if self.dead.is_empty() {
            6
        } else {
            7
        }
    }
}

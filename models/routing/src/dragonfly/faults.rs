//! Failed global links: which group pairs lost their link, where a packet heads instead,
//! and which groups a non-minimal packet may go through.

use super::DragonflyRouting;
use crate::RoutingError;
use topology::{Network, PortId, PortTarget, SwitchId};

impl DragonflyRouting {
    /// The routing for `net`'s failed global links (none: unchanged); a failed local link
    /// is an error, which names a switch and port.
    pub fn with_faults(mut self, net: &Network) -> Result<Self, RoutingError> {
        let s = &self.shape;
        let mut dead = vec![false; (s.groups * s.groups) as usize];
        for sw in 0..net.num_switches() as SwitchId {
            let (g, own) = (s.group(sw), s.router_in_group(sw));
            for (port, p) in net.ports(sw).iter().enumerate().skip(s.p as usize) {
                if !matches!(p.target, PortTarget::Unconnected) {
                    continue;
                }
                if !s.is_global_port(port as PortId) {
                    return Err(RoutingError::algorithm(format!(
                        "the Dragonfly routings route around failed global links only; the local link at \
                         switch {sw} port {port} failed (give topology.failed_link_class = \"global\", or \
                         route with `minimal` or `valiant` and the ladder)"
                    )));
                }
                if let Some(h) = s.global_target(g, own * s.h + self.global_index(port as PortId) as u32) {
                    dead[(g * s.groups + h) as usize] = true;
                    dead[(h * s.groups + g) as usize] = true;
                }
            }
        }
        if dead.iter().any(|&d| d) {
            self.dead = dead;
        }
        Ok(self)
    }

    /// Whether groups `g` and `h` are joined by a working global link.
    pub(super) fn linked(&self, g: u32, h: u32) -> bool {
        self.dead.is_empty() || !self.dead[(g * self.shape.groups + h) as usize]
    }

    /// The group a packet in group `g` heads for on its way to group `gd`: `gd` itself, or,
    /// when their link failed, the first group after `g` linked to both (with failed global
    /// links the minimal route takes two global hops).
    pub(super) fn next_group(&self, g: u32, gd: u32) -> u32 {
        if g == gd || self.linked(g, gd) {
            return gd;
        }
        let n = self.shape.groups;
        (1..n)
            .map(|k| (g + k) % n)
            .find(|&h| h != gd && self.linked(g, h) && self.linked(h, gd))
            .unwrap_or(gd)
    }

    /// Whether group `i` may be a non-minimal packet from group `gs` to `gd`:
    /// neither of them, linked to both.
    pub(super) fn may_go_through(&self, i: u32, gs: u32, gd: u32) -> bool {
        i != gs && i != gd && self.linked(gs, i) && self.linked(i, gd)
    }
}

//! Dragonfly (Kim, Dally, Scott, Abts, ISCA'08): `p` endpoints, `a` routers and `h`
//! global ports per router; groups are complete graphs of `a` routers; `g <= a*h + 1`
//! groups with (at most) one global link per group pair.
//!
//! Switch `s` is router `s % a` of group `s / a`. Port layout: terminals `0..p`, local
//! ports `p..p+a-1` (to the other routers of the group in increasing order), global ports
//! `p+a-1..p+a-1+h`. Global link `j` of a group (`0 <= j < a*h`) is port `j % h` of router
//! `j / h`. Arrangements say which group link `j` of group `G` reaches:
//! absolute `j < G ? j : j + 1`; relative `(G + j + 1) mod g`; palmtree `(G - j - 1) mod g`.
//! Links `j >= g - 1` are left unconnected.

use super::PortId;
use serde::{Deserialize, Serialize};

/// How global links are wired between groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrangement {
    /// Port `j` of group `G` goes to group `j` if `j < G`, else `j + 1`.
    Absolute,
    /// Port `j` of group `G` goes to group `(G + j + 1) mod g`.
    Relative,
    /// Port `j` of group `G` goes to group `(G - j - 1) mod g`.
    Palmtree,
}

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DragonflyShape {
    /// Endpoints per router.
    pub p: u32,
    /// Routers per group.
    pub a: u32,
    /// Global ports per router.
    pub h: u32,
    /// Number of groups.
    pub groups: u32,
    /// Global wiring.
    pub arrangement: Arrangement,
}

impl DragonflyShape {
    /// Group of switch `s`.
    pub fn group(&self, s: u32) -> u32 {
        s / self.a
    }

    /// Index of switch `s` within its group.
    pub fn router_in_group(&self, s: u32) -> u32 {
        s % self.a
    }

    /// Group reached by global link `j` of group `g`, or `None` if `j` is unconnected.
    pub fn global_target(&self, group: u32, j: u32) -> Option<u32> {
        let n = self.groups;
        if j + 1 >= n {
            return None;
        }
        Some(match self.arrangement {
            Arrangement::Absolute => {
                if j < group {
                    j
                } else {
                    j + 1
                }
            }
            Arrangement::Relative => (group + j + 1) % n,
            Arrangement::Palmtree => (group + n - (j + 1) % n) % n,
        })
    }

    /// Global link index `j` of group `from` that reaches group `to` (`from != to`).
    pub fn global_link(&self, from: u32, to: u32) -> u32 {
        debug_assert_ne!(from, to);
        let n = self.groups;
        match self.arrangement {
            Arrangement::Absolute => {
                if to < from {
                    to
                } else {
                    to - 1
                }
            }
            Arrangement::Relative => (to + n - from) % n - 1,
            Arrangement::Palmtree => (from + n - to) % n - 1,
        }
    }

    /// Router (switch id) of group `from` that owns the global link to group `to`, and its port.
    pub fn gateway(&self, from: u32, to: u32) -> (u32, PortId) {
        let j = self.global_link(from, to);
        (
            from * self.a + j / self.h,
            (self.p + self.a - 1 + j % self.h) as PortId,
        )
    }

    /// Local port of router index `own` leading to router index `to` in the same group.
    pub fn local_port(&self, own: u32, to: u32) -> PortId {
        debug_assert_ne!(own, to);
        (self.p + if to < own { to } else { to - 1 }) as PortId
    }

    /// True if `port` is a global port.
    pub fn is_global_port(&self, port: PortId) -> bool {
        port as u32 >= self.p + self.a - 1
    }
}

//! The shapes of the topology families: the parameters that algorithmic routings compute
//! from (coordinates, groups, levels), kept with a built [`Network`](crate::Network) so that
//! routing state for HyperX, tori, fat trees and Dragonflies stays algorithmic rather than
//! tabular. Each family's file builds its network and fills its shape here.

use crate::ids::PortId;
use serde::{Deserialize, Serialize};

/// Topology-specific parameters kept for algorithmic routing and for partitioning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Shape {
    /// HyperX: `sides[k]` switches in dimension `k`, every dimension a complete graph.
    HyperX(HyperXShape),
    /// Dragonfly with `p` endpoints, `a` routers and `h` global ports per router.
    Dragonfly(DragonflyShape),
    /// n-dimensional torus or mesh.
    Torus(TorusShape),
    /// k-ary n-tree.
    FatTree(FatTreeShape),
    /// Random regular graph (no structure a routing can use).
    RandomRegular(RrgShape),
    /// Slim Fly (MMS graph of a prime q).
    SlimFly(SlimFlyShape),
    /// A fabric read from a file (no structure a routing can use).
    File(FileShape),
    /// Folded Clos of two or three tiers.
    Clos(ClosShape),
    /// GPU nodes on a fabric (`Network::nodes` holds the layout and the fabric, with its
    /// own shape).
    Nodes,
}

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HyperXShape {
    /// Switches per dimension.
    pub sides: Vec<u32>,
    /// Endpoints per switch.
    pub endpoints_per_switch: u32,
}

impl HyperXShape {
    /// Coordinate of switch `s` in dimension `dim`.
    pub fn coord(&self, s: u32, dim: usize) -> u32 {
        let stride: u32 = self.sides[..dim].iter().product();
        (s / stride) % self.sides[dim]
    }

    /// First port of dimension `dim`.
    pub fn dim_offset(&self, dim: usize) -> u32 {
        self.endpoints_per_switch + self.sides[..dim].iter().map(|s| s - 1).sum::<u32>()
    }

    /// The port of a switch whose coordinate in `dim` is `own` leading to coordinate `to`.
    pub fn port_to(&self, dim: usize, own: u32, to: u32) -> PortId {
        debug_assert_ne!(own, to);
        (self.dim_offset(dim) + if to < own { to } else { to - 1 }) as PortId
    }

    /// Switch reached from `s` by setting its coordinate in `dim` to `to`.
    pub fn neighbour(&self, s: u32, dim: usize, to: u32) -> u32 {
        let stride: u32 = self.sides[..dim].iter().product();
        s - self.coord(s, dim) * stride + to * stride
    }
}

/// How global links are wired between groups.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Arrangement {
    /// Port `j` of group `G` goes to group `j` if `j < G`, else `j + 1` (the default).
    #[default]
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
        (from * self.a + j / self.h, (self.p + self.a - 1 + j % self.h) as PortId)
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

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TorusShape {
    /// Switches per dimension.
    pub sides: Vec<u32>,
    /// Whether each dimension wraps around.
    pub wrap: Vec<bool>,
    /// Endpoints per switch.
    pub endpoints_per_switch: u32,
}

impl TorusShape {
    /// Coordinate of switch `s` in dimension `dim`.
    pub fn coord(&self, s: u32, dim: usize) -> u32 {
        let stride: u32 = self.sides[..dim].iter().product();
        (s / stride) % self.sides[dim]
    }

    /// Port towards `+1` (`positive`) or `-1` in dimension `dim`.
    pub fn port(&self, dim: usize, positive: bool) -> PortId {
        (self.endpoints_per_switch + 2 * dim as u32 + u32::from(!positive)) as PortId
    }

    /// Dimension and direction of a network port, or `None` for a terminal port.
    pub fn port_direction(&self, port: PortId) -> Option<(usize, bool)> {
        let p = (port as u32).checked_sub(self.endpoints_per_switch)?;
        Some(((p / 2) as usize, p % 2 == 0))
    }
}

/// Parameters kept for routing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FatTreeShape {
    /// Arity.
    pub k: u32,
    /// Levels.
    pub n: u32,
}

impl FatTreeShape {
    /// Switches per level, `k^(n-1)`.
    pub fn switches_per_level(&self) -> u32 {
        self.k.pow(self.n - 1)
    }

    /// Level of switch `s` (0 at the leaves, `n - 1` at the top).
    pub fn level(&self, s: u32) -> u32 {
        s / self.switches_per_level()
    }

    /// Position `w` of switch `s` within its level, `0..k^(n-1)`.
    pub fn index(&self, s: u32) -> u32 {
        s % self.switches_per_level()
    }

    /// Digit `l` (base `k`, digit 0 least significant) of a position `w`.
    pub fn digit(&self, w: u32, l: u32) -> u32 {
        (w / self.stride(l)) % self.k
    }

    /// `k^l`: the weight of digit `l`.
    pub(crate) fn stride(&self, l: u32) -> u32 {
        self.k.pow(l)
    }
}

/// Parameters kept for reference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RrgShape {
    /// Switches.
    pub switches: u32,
    /// Network ports per switch.
    pub degree: u32,
    /// Endpoints per switch.
    pub endpoints_per_switch: u32,
    /// Seed actually used to build the graph (after retries).
    pub seed_used: u64,
}

/// What is kept of a Slim Fly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SlimFlyShape {
    /// The field's order.
    pub q: u32,
}

/// What is kept of a fabric read from a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileShape {
    /// The file it came from (or `inline`).
    pub path: String,
    /// Switch names, in switch id order.
    pub names: Vec<String>,
    /// An InfiniBand fabric's HCA names and IB port numbers (`None` for edge lists).
    pub ib: Option<FileIb>,
}

/// The InfiniBand identity of a `.net` fabric's ports and endpoints (see
/// [`IbView`](crate::ib::IbView)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileIb {
    /// The IB port number of every port, indexed like [`Network::ports`](crate::Network::ports).
    pub ports: Vec<u16>,
    /// Per endpoint: its HCA's name and HCA port.
    pub hcas: Vec<(String, u16)>,
}

/// A folded Clos of two tiers (`pods == 1`) or three: switch ids are the leaves (pod by
/// pod), the spines (pod by pod), then the cores (plane by plane).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ClosShape {
    /// Leaves.
    pub leaves: u32,
    /// Spines per pod.
    pub spines: u32,
    /// Pods.
    pub pods: u32,
    /// Links from each spine to the cores (0 with two tiers).
    pub spine_uplinks: u32,
}

impl ClosShape {
    /// Spines of all pods.
    pub fn spines_total(&self) -> u32 {
        self.spines * self.pods
    }

    /// Cores (0 with two tiers).
    pub fn cores(&self) -> u32 {
        if self.pods > 1 {
            self.spines * self.spine_uplinks
        } else {
            0
        }
    }

    /// Spine `j` of pod `pod`.
    pub fn spine(&self, pod: u32, j: u32) -> u32 {
        self.leaves + pod * self.spines + j
    }

    /// Core `c` of plane `j` (linked to spine `j` of every pod).
    pub fn core(&self, j: u32, c: u32) -> u32 {
        self.leaves + self.spines_total() + j * self.spine_uplinks + c
    }

    /// The pod of switch `s` (a core's: its index modulo the pods, for partitioning).
    pub fn pod(&self, s: u32) -> u32 {
        let per_pod = self.leaves / self.pods;
        if s < self.leaves {
            s / per_pod
        } else if s < self.leaves + self.spines_total() {
            (s - self.leaves) / self.spines
        } else {
            (s - self.leaves - self.spines_total()) % self.pods
        }
    }
}

//! Minimal routing for any topology, from all-pairs switch distances.
//!
//! The candidates at switch `s` for destination switch `d` are the neighbours `n` with
//! `dist(n, d) = dist(s, d) - 1`. The distance table (one byte per switch pair) is
//! computed by a parallel BFS from every switch. In single-path mode one candidate is kept,
//! chosen by a hash of `(s, d)` so that destinations spread over the minimal ports.

use super::graph::{connected_diameter, SwitchGraph};
use super::{Candidate, LoadView, Routing};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::topology::metrics::DistanceTable;
use crate::topology::{Network, SwitchId, TopologyError};

/// Minimal routing over a distance table.
pub struct Minimal {
    dist: DistanceTable,
    graph: SwitchGraph,
    single_path: bool,
    diameter: u32,
}

impl Minimal {
    /// Builds the table for `net`. `single_path` keeps one route per switch pair.
    pub fn new(net: &Network, single_path: bool) -> Result<Self, TopologyError> {
        let dist = DistanceTable::compute(net)?;
        let diameter = connected_diameter(&dist)?;
        Ok(Self { dist, graph: SwitchGraph::new(net), single_path, diameter })
    }

    /// Switch-to-switch distance.
    pub fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        self.dist.get(a, b) as u32
    }

    /// The network's diameter.
    pub fn diameter(&self) -> u32 {
        self.diameter
    }

    /// The switch graph.
    pub fn graph(&self) -> &SwitchGraph {
        &self.graph
    }
}

impl Routing for Minimal {
    fn name(&self) -> &'static str {
        if self.single_path {
            "shortest_path"
        } else {
            "minimal"
        }
    }

    fn vcs_required(&self) -> u8 {
        1
    }

    fn max_hops(&self) -> u32 {
        self.diameter
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        _packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        // Distances are symmetric (links are bidirectional); reading the row of `dst`
        // keeps all the lookups of this call in one cache-friendly row.
        let here = self.dist.get(dst, at);
        let first = out.len();
        for &(port, n) in self.graph.neighbours(at) {
            if self.dist.get(dst, n) + 1 == here {
                out.push(Candidate { port, vc: 0, penalty: 0 });
            }
        }
        if self.single_path && out.len() > first + 1 {
            let count = (out.len() - first) as u64;
            let pick = (at as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(dst as u64) % count;
            let keep = out[first + pick as usize];
            out.truncate(first);
            out.push(keep);
        }
    }
}

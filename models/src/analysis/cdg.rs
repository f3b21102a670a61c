//! The channel dependency graph over `(channel, VC)` and its cycle search.

use crate::topology::{Network, PortId, SwitchId};
use serde::Serialize;

/// A node of the channel dependency graph: VC `vc` of the link leaving `port` of `switch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Channel {
    /// The switch the link leaves.
    pub switch: SwitchId,
    /// Its output port (a network port).
    pub port: PortId,
    /// The virtual channel (at the downstream switch's input).
    pub vc: u8,
    /// Part of an escape subnetwork (Duato): always `false` for now. Hook for the escape
    /// VC sets of a later issue, whose dependencies are checked separately.
    pub escape: bool,
}

/// Packs `(global port index, vc)` into one key; the order of keys is the order of
/// `(switch, port, vc)`, since global port indices grow with the switch.
pub(crate) fn key(port_index: usize, vc: u8) -> u64 {
    (port_index as u64) << 8 | vc as u64
}

/// The channel a key stands for.
pub(crate) fn channel(net: &Network, key: u64) -> Channel {
    let index = (key >> 8) as u32;
    let switch = net.port_offsets.partition_point(|&o| o <= index) as SwitchId - 1;
    Channel {
        switch,
        port: (index - net.port_offsets[switch as usize]) as PortId,
        vc: (key & 0xff) as u8,
        escape: false,
    }
}

/// A channel dependency graph in compressed form: nodes sorted, edges by source node.
pub(crate) struct Cdg {
    /// Channel keys, sorted.
    pub(crate) nodes: Vec<u64>,
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

impl Cdg {
    /// Builds the graph from channel keys and sorted, deduplicated `(from, to)` edges.
    pub(crate) fn new(mut nodes: Vec<u64>, edges: &[(u64, u64)]) -> Self {
        nodes.extend(edges.iter().flat_map(|&(a, b)| [a, b]));
        nodes.sort_unstable();
        nodes.dedup();
        let index = |k: u64| nodes.binary_search(&k).expect("node") as u32;
        let mut offsets = vec![0usize; nodes.len() + 1];
        for &(a, _) in edges {
            offsets[index(a) as usize + 1] += 1;
        }
        for i in 0..nodes.len() {
            offsets[i + 1] += offsets[i];
        }
        // Edges are sorted by source, so targets fill in order.
        let targets = edges.iter().map(|&(_, b)| index(b)).collect();
        Cdg { nodes, offsets, targets }
    }

    /// Number of dependency edges.
    pub(crate) fn num_edges(&self) -> usize {
        self.targets.len()
    }

    /// A cycle as a list of node keys (each depends on the next, the last on the first),
    /// or `None` if the graph is acyclic. Iterative depth-first search in node order, so
    /// the witness is deterministic.
    pub(crate) fn find_cycle(&self) -> Option<Vec<u64>> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let n = self.nodes.len();
        let mut colour = vec![WHITE; n];
        let mut parent = vec![u32::MAX; n];
        // Stack of (node, next edge offset).
        let mut stack: Vec<(u32, usize)> = Vec::new();
        for root in 0..n {
            if colour[root] != WHITE {
                continue;
            }
            colour[root] = GREY;
            stack.push((root as u32, self.offsets[root]));
            while let Some(top) = stack.last_mut() {
                let (v, e) = (top.0 as usize, top.1);
                if e == self.offsets[v + 1] {
                    colour[v] = BLACK;
                    stack.pop();
                    continue;
                }
                top.1 += 1;
                let w = self.targets[e] as usize;
                match colour[w] {
                    WHITE => {
                        colour[w] = GREY;
                        parent[w] = v as u32;
                        stack.push((w as u32, self.offsets[w]));
                    }
                    GREY => {
                        // Back edge v -> w: the cycle is w -> ... -> v -> w.
                        let mut cycle = vec![self.nodes[v]];
                        let mut x = v;
                        while x != w {
                            x = parent[x] as usize;
                            cycle.push(self.nodes[x]);
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

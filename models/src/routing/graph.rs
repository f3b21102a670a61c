//! Shared tables for the table-driven routings (`minimal`, `allpath`, `valiant`,
//! `up_down`, `spda`): the switch graph in CSR form and the diameter check.

use crate::topology::metrics::DistanceTable;
use crate::topology::{Network, PortId, PortTarget, SwitchId, TopologyError};

/// Neighbours of every switch and the switch behind every port.
pub struct SwitchGraph {
    adj_offsets: Vec<u32>,
    adj: Vec<(PortId, SwitchId)>,
    port_offsets: Vec<u32>,
    /// Switch behind each port, `u32::MAX` for terminal and unconnected ports.
    port_next: Vec<SwitchId>,
}

impl SwitchGraph {
    /// The graph of `net`.
    pub fn new(net: &Network) -> Self {
        let n = net.num_switches();
        let mut adj_offsets = Vec::with_capacity(n + 1);
        adj_offsets.push(0u32);
        let mut adj = Vec::new();
        let mut port_next = Vec::with_capacity(net.ports.len());
        for s in 0..n as SwitchId {
            adj.extend(net.neighbours(s));
            adj_offsets.push(adj.len() as u32);
            port_next.extend(net.ports(s).iter().map(|p| match p.target {
                PortTarget::Switch { switch, .. } => switch,
                _ => u32::MAX,
            }));
        }
        Self { adj_offsets, adj, port_offsets: net.port_offsets.clone(), port_next }
    }

    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.adj_offsets.len() - 1
    }

    /// `(port, neighbour)` of every network port of `s`.
    pub fn neighbours(&self, s: SwitchId) -> &[(PortId, SwitchId)] {
        &self.adj[self.adj_offsets[s as usize] as usize..self.adj_offsets[s as usize + 1] as usize]
    }

    /// The switch behind port `port` of `s` (`u32::MAX` if it is not a network port).
    pub fn next_switch(&self, s: SwitchId, port: PortId) -> SwitchId {
        self.port_next[self.port_offsets[s as usize] as usize + port as usize]
    }
}

/// The diameter of a connected network; an error naming a disconnected pair otherwise.
pub fn connected_diameter(dist: &DistanceTable) -> Result<u32, TopologyError> {
    let n = dist.num_switches();
    let mut diameter = 0;
    for a in 0..n as SwitchId {
        for b in 0..n as SwitchId {
            let d = dist.get(a, b);
            if d == DistanceTable::UNREACHABLE {
                return Err(TopologyError::new(
                    "kind",
                    format!("network is disconnected: no path from switch {a} to {b}"),
                ));
            }
            diameter = diameter.max(d as u32);
        }
    }
    Ok(diameter)
}

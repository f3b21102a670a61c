//! The partition of a network over ranks and threads: the graph the partitioner sees and
//! the plan it makes for a run.

use crate::config::Config;
use partitioner::{Method, PartGraph, Plan};
use topology::{Network, PortTarget, SwitchId};

/// The graph the partitioner sees: routers weighted by ports + endpoints, links with
/// latencies, and the topology's natural blocks (Dragonfly groups, fat-tree pods; see
/// [`Network::blocks`]).
pub fn partition_graph(net: &Network) -> PartGraph {
    let vertex_weight = (0..net.num_switches() as SwitchId)
        .map(|s| net.radix(s) as u64 + net.terminals[s as usize] as u64)
        .collect();
    let mut edges = Vec::with_capacity(net.num_network_links());
    for s in 0..net.num_switches() as SwitchId {
        for p in net.ports(s) {
            if let PortTarget::Switch { switch, .. } = p.target {
                edges.push((s, switch, net.link_classes[p.class as usize].latency));
            }
        }
    }
    PartGraph { vertex_weight, edges, blocks: net.blocks() }
}

/// A partition of `net` into `parts` with `method` (`Auto`: Dragonfly groups when there are
/// enough, else the better of linear slabs and the multilevel partitioner). Message
/// estimates assume every link carries the configured load at its speed (a packet and
/// its credit per `packet_size` cycles at full load on a link of one phit a cycle).
pub fn plan(
    config: &Config,
    net: &Network,
    parts: u32,
    method: Method,
) -> Result<Plan, partitioner::PartitionError> {
    let graph = partition_graph(net);
    let per_link = 2.0 * config.traffic.load / config.router.packet_size as f64;
    // The edges in `partition_graph`'s order, each at its link's speed.
    let traffic = (0..net.num_switches() as SwitchId)
        .flat_map(|s| net.ports(s))
        .filter(|p| matches!(p.target, PortTarget::Switch { .. }))
        .map(|p| (per_link * net.link_classes[p.class as usize].speed.phits_per_cycle()).max(1e-9))
        .collect();
    let options = partitioner::PartitionOptions { edge_traffic: Some(traffic), ..Default::default() };
    partitioner::partition_with(&graph, parts, method, &options)
}

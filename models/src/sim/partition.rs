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
/// enough to balance, else the better of linear slabs and the multilevel partitioner). Message
/// estimates assume every link carries the configured load at its speed (a packet and
/// its credit per `packet_size` cycles at full load on a link of one phit a cycle).
pub fn plan(
    config: &Config,
    net: &Network,
    parts: u32,
    method: Method,
) -> Result<Plan, partitioner::PartitionError> {
    let (graph, options) = plan_inputs(config, net);
    partitioner::partition_with(&graph, parts, method, &options)
}

/// The graph and options [`plan`] hands the partitioner, to be built once for many plans.
fn plan_inputs(config: &Config, net: &Network) -> (PartGraph, partitioner::PartitionOptions) {
    let graph = partition_graph(net);
    let per_link = 2.0 * config.traffic.load / config.router.packet_size as f64;
    // The edges in `partition_graph`'s order, each at its link's speed.
    let traffic = (0..net.num_switches() as SwitchId)
        .flat_map(|s| net.ports(s))
        .filter(|p| matches!(p.target, PortTarget::Switch { .. }))
        .map(|p| (per_link * net.link_classes[p.class as usize].speed.phits_per_cycle()).max(1e-9))
        .collect();
    let options = partitioner::PartitionOptions { edge_traffic: Some(traffic), ..Default::default() };
    (graph, options)
}

/// A partitioning a run is counted for (a census, see [`engine::CensusLayout`]): how it was
/// made and what the partitioner says of it.
#[derive(Clone, Debug)]
pub struct CensusSpec {
    /// The partitioning method.
    pub method: Method,
    /// The partition of every switch and the window (the partitioning's lookahead).
    pub layout: engine::CensusLayout,
    /// The heaviest partition's weight (ports + endpoints) over the mean.
    pub imbalance: f64,
}

impl CensusSpec {
    /// The name of its group in the result file: `<method>-<partitions>`, e.g. `linear-64`.
    pub fn name(&self) -> String {
        format!("{}-{}", method_name(self.method), self.layout.parts())
    }
}

/// A partitioning method's name as the command line spells it.
pub fn method_name(method: Method) -> &'static str {
    match method {
        Method::Linear => "linear",
        Method::Blocks => "blocks",
        Method::Multilevel => "multilevel",
        Method::Auto => "auto",
    }
}

/// The partitionings of `net` into each of `parts` with each of `methods`, for a census.
/// `Blocks` is left out (with a note saying so) where the network has no natural blocks or
/// fewer than the partitions; anything else the partitioner refuses is an error naming the
/// partition count. Fails on fewer than 2 partitions (nothing to count).
pub fn census(
    config: &Config,
    net: &Network,
    parts: &[u32],
    methods: &[Method],
) -> Result<(Vec<CensusSpec>, Vec<String>), String> {
    let mut specs = Vec::new();
    let mut notes = Vec::new();
    let (graph, options) = plan_inputs(config, net);
    let blocks = graph.blocks.as_ref().map_or(0, |b| b.iter().map(|&x| x as usize + 1).max().unwrap_or(0));
    for &p in parts {
        if p < 2 {
            return Err(format!("--census {p}: a census needs at least 2 partitions"));
        }
        for &method in methods {
            if method == Method::Blocks && blocks < p as usize {
                notes.push(format!(
                    "census: no blocks-{p} ({} natural blocks in this network)",
                    if blocks == 0 { "no".to_string() } else { blocks.to_string() }
                ));
                continue;
            }
            let plan = partitioner::partition_with(&graph, p, method, &options)
                .map_err(|e| format!("--census {p} ({}): {e}", method_name(method)))?;
            let Some(window) = plan.lookahead else {
                return Err(format!(
                    "--census {p} ({}): no link crosses its partitions",
                    method_name(method)
                ));
            };
            specs.push(CensusSpec {
                method: plan.method,
                layout: engine::CensusLayout { partition_of: plan.assignment, window },
                imbalance: plan.imbalance,
            });
        }
    }
    Ok((specs, notes))
}

//! # xnet-partitioner: which partition runs which router
//!
//! A partitioner gives every vertex (router) a partition number. The quality of a
//! partition is its balance (heaviest partition over the average), the number of links
//! it cuts, and its lookahead: the minimum latency of the cut links, which is the length
//! of the engine's synchronisation windows. This crate knows graphs, weights and
//! latencies, nothing about routers.
#![warn(missing_docs, unreachable_pub)]

use serde::Serialize;

/// The graph to partition.
#[derive(Clone, Debug, Default)]
pub struct PartGraph {
    /// Work estimate per vertex (e.g. ports + endpoints of a router).
    pub vertex_weight: Vec<u64>,
    /// Directed edges `(from, to, latency)`.
    pub edges: Vec<(u32, u32, u64)>,
    /// Natural blocks that should stay whole (e.g. Dragonfly groups), numbered in vertex
    /// order; `None` when the topology has none.
    pub blocks: Option<Vec<u32>>,
}

/// How to partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Method {
    /// Contiguous ranges of vertex ids with balanced weight. For mixed-radix ids (HyperX,
    /// torus) these are slabs along the highest dimension.
    Linear,
    /// Contiguous ranges of whole blocks (falls back to `Linear` without blocks).
    Blocks,
}

/// A partition and its quality figures.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    /// Partition of every vertex.
    pub assignment: Vec<u32>,
    /// Method used.
    pub method: Method,
    /// Number of partitions.
    pub parts: u32,
    /// Total vertex weight per partition.
    pub part_weights: Vec<u64>,
    /// Heaviest partition weight over the mean (1.0 is perfect).
    pub imbalance: f64,
    /// Directed edges whose ends are in different partitions.
    pub cut_edges: u64,
    /// Minimum latency of the cut edges (`None` if nothing is cut).
    pub lookahead: Option<u64>,
}

/// A request that cannot be met.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PartitionError {
    /// More partitions than vertices (or blocks, for the block method).
    #[error("cannot split {units} {what} into {parts} partitions; use at most {units} threads")]
    TooManyParts {
        /// Partitions asked for.
        parts: u32,
        /// Vertices or blocks available.
        units: usize,
        /// "routers" or "blocks".
        what: &'static str,
    },
    /// Zero partitions.
    #[error("the number of partitions must be at least 1")]
    ZeroParts,
}

/// Splits `weights` (in order) into `parts` contiguous ranges of about equal weight and
/// returns the range index of each item.
fn contiguous(weights: &[u64], parts: u32) -> Vec<u32> {
    let total: u64 = weights.iter().sum();
    let n = weights.len();
    let mut out = Vec::with_capacity(n);
    let mut acc = 0u64;
    let mut part = 0u32;
    for (i, &w) in weights.iter().enumerate() {
        // Move on when this item's midpoint passes the next boundary, but keep at least
        // one item for every remaining part.
        let remaining_items = n - i;
        let remaining_parts = (parts - part) as usize;
        let boundary = total as u128 * (part as u128 + 1) / parts as u128;
        if part + 1 < parts
            && (remaining_items < remaining_parts
                || (acc as u128 * 2 + w as u128) > boundary * 2 && out.last() == Some(&part))
        {
            part += 1;
        }
        out.push(part);
        acc += w;
    }
    out
}

/// Partitions `graph` into `parts` partitions with `method`.
pub fn partition(graph: &PartGraph, parts: u32, method: Method) -> Result<Plan, PartitionError> {
    if parts == 0 {
        return Err(PartitionError::ZeroParts);
    }
    let n = graph.vertex_weight.len();
    let assignment = match (method, &graph.blocks) {
        (Method::Blocks, Some(blocks)) => {
            let num_blocks = blocks.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
            if (parts as usize) > num_blocks {
                return Err(PartitionError::TooManyParts { parts, units: num_blocks, what: "blocks" });
            }
            let mut block_weight = vec![0u64; num_blocks];
            for (v, &b) in blocks.iter().enumerate() {
                block_weight[b as usize] += graph.vertex_weight[v];
            }
            let block_part = contiguous(&block_weight, parts);
            blocks.iter().map(|&b| block_part[b as usize]).collect()
        }
        _ => {
            if parts as usize > n {
                return Err(PartitionError::TooManyParts { parts, units: n, what: "routers" });
            }
            contiguous(&graph.vertex_weight, parts)
        }
    };
    Ok(evaluate(graph, assignment, parts, method))
}

/// Computes the quality figures of an assignment.
pub fn evaluate(graph: &PartGraph, assignment: Vec<u32>, parts: u32, method: Method) -> Plan {
    let mut part_weights = vec![0u64; parts as usize];
    for (v, &p) in assignment.iter().enumerate() {
        part_weights[p as usize] += graph.vertex_weight[v];
    }
    let total: u64 = part_weights.iter().sum();
    let mean = total as f64 / parts as f64;
    let imbalance = if total == 0 { 1.0 } else { *part_weights.iter().max().unwrap_or(&0) as f64 / mean };
    let mut cut_edges = 0;
    let mut lookahead: Option<u64> = None;
    for &(a, b, lat) in &graph.edges {
        if assignment[a as usize] != assignment[b as usize] {
            cut_edges += 1;
            lookahead = Some(lookahead.map_or(lat, |l| l.min(lat)));
        }
    }
    Plan { assignment, method, parts, part_weights, imbalance, cut_edges, lookahead }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(n: u32, latency: u64) -> PartGraph {
        let mut edges = Vec::new();
        for i in 0..n {
            edges.push((i, (i + 1) % n, latency));
            edges.push(((i + 1) % n, i, latency));
        }
        PartGraph { vertex_weight: vec![1; n as usize], edges, blocks: None }
    }

    #[test]
    fn linear_split_of_a_ring_is_balanced_and_cuts_four_edges() {
        let plan = partition(&ring(8, 3), 2, Method::Linear).unwrap();
        assert_eq!(plan.assignment, vec![0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(plan.imbalance, 1.0);
        assert_eq!(plan.cut_edges, 4);
        assert_eq!(plan.lookahead, Some(3));
    }

    #[test]
    fn every_part_gets_something_even_with_skewed_weights() {
        let g = PartGraph { vertex_weight: vec![100, 1, 1, 1], edges: vec![], blocks: None };
        let plan = partition(&g, 4, Method::Linear).unwrap();
        assert_eq!(plan.assignment, vec![0, 1, 2, 3]);
        let plan = partition(&g, 2, Method::Linear).unwrap();
        assert_eq!(plan.assignment, vec![0, 1, 1, 1]);
    }

    #[test]
    fn blocks_stay_whole() {
        let mut g = ring(6, 1);
        g.blocks = Some(vec![0, 0, 1, 1, 2, 2]);
        let plan = partition(&g, 2, Method::Blocks).unwrap();
        assert_eq!(plan.assignment[0], plan.assignment[1]);
        assert_eq!(plan.assignment[2], plan.assignment[3]);
        assert_eq!(plan.assignment[4], plan.assignment[5]);
        assert!(partition(&g, 4, Method::Blocks).is_err());
    }

    #[test]
    fn one_part_cuts_nothing() {
        let plan = partition(&ring(5, 2), 1, Method::Linear).unwrap();
        assert_eq!(plan.cut_edges, 0);
        assert_eq!(plan.lookahead, None);
        assert!(matches!(partition(&ring(5, 2), 0, Method::Linear), Err(PartitionError::ZeroParts)));
        assert!(partition(&ring(5, 2), 6, Method::Linear).is_err());
    }
}

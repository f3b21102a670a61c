//! # xnet-partitioner: which partition runs which router
//!
//! A partitioner gives every vertex (router) a partition number. The quality of a
//! partition is its balance (heaviest partition over the average), the number of links
//! it cuts, and its lookahead: the minimum latency of the cut links, which is the length
//! of the engine's synchronisation windows. This crate knows graphs, weights and
//! latencies, nothing about routers.
//!
//! ## Methods
//!
//! * [`Method::Linear`]: contiguous ranges of vertex ids (slabs for mixed-radix ids).
//! * [`Method::Blocks`]: contiguous ranges of whole blocks (Dragonfly groups).
//! * [`Method::Multilevel`]: a METIS-style multilevel k-way partitioner, written here.
//! * [`Method::Auto`]: `Blocks` when there are at least as many blocks as parts and they
//!   balance (within 5 %), else the better of `Linear` and `Multilevel`.
//!
//! ## The multilevel partitioner
//!
//! It optimises, in this order:
//!
//! 1. **Lookahead.** The distinct link latencies form classes. For each class from the
//!    largest down, the links of lower latency are made uncuttable by contracting them:
//!    the connected components over those links become supervertices. If there are at
//!    least `parts` of them, none heavier than a part may be, and partitioning the
//!    supervertex graph gives imbalance at most
//!    `PartitionOptions::lookahead_imbalance`, that partition is taken: only links of
//!    this class or longer are cut, so the lookahead is at least its latency. Otherwise
//!    the next class is tried (at most 16 classes are partitioned this way, classes that
//!    give the same components as a failed one are skipped); the last class contracts
//!    nothing.
//! 2. **Balance.** Part weights stay within `PartitionOptions::max_imbalance` times
//!    the mean (1.03 by default) wherever the vertex weights allow it.
//! 3. **Cut weight.** The weight of the cut links is minimised. A directed edge weighs its
//!    traffic estimate (1 per directed edge without [`PartitionOptions::edge_traffic`]);
//!    the two directions of a link and parallel links are merged into one undirected edge.
//!
//! Each (contracted) graph is partitioned in three phases:
//!
//! * **Coarsening** by heavy-edge matching: vertices are visited by degree, then id, and
//!   matched with the unmatched neighbour over the heaviest edge (then the lightest
//!   neighbour, then the lowest id), as long as the pair stays under 1.5 times the weight
//!   of an average vertex of the target size; until about `20·parts` vertices remain or
//!   matching stalls.
//! * **Initial partition** of the coarsest graph by recursive bisection: each bisection
//!   grows one side greedily (breadth-first by best cut gain) from a peripheral vertex and
//!   several other deterministic seeds, refines every try with Fiduccia–Mattheyses (with
//!   rollback to the best prefix of moves) and keeps the best (balance first, then cut).
//! * **Uncoarsening**: the partition is projected level by level; at every level a
//!   balancing pass moves boundary vertices out of overweight parts (best gain first),
//!   then greedy boundary k-way refinement moves vertices to the adjacent part that
//!   lowers the cut (or keeps it and improves balance) without overloading that part.
//!   Every part ends up non-empty.
//!
//! Everything is deterministic: fixed visiting orders, ties broken by vertex id, no hash
//! map iteration and no random numbers; the result depends only on the graph and the
//! options (without traffic data, not even on the order of the edges).
//!
//! ## Message estimate
//!
//! [`Plan::expected_messages_per_window`] sums, over the cut directed edges, the edge's
//! traffic in messages per cycle times the lookahead. Without measured traffic every
//! directed edge is assumed to carry [`DEFAULT_EDGE_TRAFFIC`] = 1/16 messages per cycle:
//! one 16-phit packet every 16 cycles, i.e. a link at full load.
#![warn(missing_docs, unreachable_pub)]

mod multilevel;

use serde::Serialize;
use std::cmp::{Ordering, Reverse};

/// Messages per cycle assumed on each directed edge when no traffic is given: one
/// 16-phit packet per 16 cycles, a fully loaded link.
pub const DEFAULT_EDGE_TRAFFIC: f64 = 1.0 / 16.0;

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
    /// Multilevel k-way partitioning (coarsening, recursive bisection, k-way refinement)
    /// that first tries to cut only the longest links; see the crate documentation.
    Multilevel,
    /// `Blocks` when the graph has at least `parts` blocks and they balance within
    /// the field `PartitionOptions::lookahead_imbalance`; otherwise the better of `Linear` and
    /// `Multilevel` (acceptable balance first, then larger lookahead, then smaller cut
    /// weight), or unbalanced blocks if neither balances and they are the least unbalanced.
    /// The plan records the method chosen, never `Auto`.
    Auto,
}

/// Tuning of [`partition_with`] and [`evaluate_with`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PartitionOptions {
    /// Largest accepted heaviest-part weight over the mean for `Multilevel` (values below
    /// 1 are treated as 1). Default 1.03.
    pub max_imbalance: f64,
    /// Largest imbalance accepted in exchange for a larger lookahead, when only long
    /// links may be cut and the supervertices are coarse (e.g. Dragonfly groups), and
    /// for `Auto`'s choice. Default 1.05; never below `max_imbalance`.
    pub lookahead_imbalance: f64,
    /// Messages per cycle on each directed edge of [`PartGraph::edges`] (same order and
    /// length). `None`: [`DEFAULT_EDGE_TRAFFIC`] on every edge. Negative or non-finite
    /// values count as 0.
    pub edge_traffic: Option<Vec<f64>>,
}

impl Default for PartitionOptions {
    fn default() -> Self {
        PartitionOptions { max_imbalance: 1.03, lookahead_imbalance: 1.05, edge_traffic: None }
    }
}

impl PartitionOptions {
    fn max_imbalance(&self) -> f64 {
        if self.max_imbalance.is_finite() {
            self.max_imbalance.max(1.0)
        } else {
            1.0
        }
    }

    fn lookahead_imbalance(&self) -> f64 {
        if self.lookahead_imbalance.is_finite() {
            self.lookahead_imbalance.max(self.max_imbalance())
        } else {
            self.max_imbalance()
        }
    }

    /// Traffic of edge `e` in messages per cycle.
    fn traffic(&self, e: usize) -> f64 {
        match &self.edge_traffic {
            None => DEFAULT_EDGE_TRAFFIC,
            Some(t) => {
                let x = t[e];
                if x.is_finite() && x > 0.0 {
                    x
                } else {
                    0.0
                }
            }
        }
    }
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
    /// Sum of the weights of the cut directed edges, where an edge weighs its traffic
    /// relative to [`DEFAULT_EDGE_TRAFFIC`]: equal to `cut_edges` without traffic data.
    pub cut_weight: f64,
    /// Estimated messages crossing partitions per synchronisation window: the sum over
    /// cut directed edges of traffic (messages per cycle; [`DEFAULT_EDGE_TRAFFIC`] when
    /// not given) times the lookahead. 0 when nothing is cut.
    pub expected_messages_per_window: f64,
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
    /// [`PartitionOptions::edge_traffic`] does not have one entry per edge.
    #[error("edge traffic has {traffic} entries for {edges} edges")]
    TrafficLength {
        /// Number of edges.
        edges: usize,
        /// Number of traffic entries.
        traffic: usize,
    },
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

/// Partitions `graph` into `parts` partitions with `method` and default options.
pub fn partition(graph: &PartGraph, parts: u32, method: Method) -> Result<Plan, PartitionError> {
    partition_with(graph, parts, method, &PartitionOptions::default())
}

/// Partitions `graph` into `parts` partitions with `method` and `options`.
pub fn partition_with(
    graph: &PartGraph,
    parts: u32,
    method: Method,
    options: &PartitionOptions,
) -> Result<Plan, PartitionError> {
    if parts == 0 {
        return Err(PartitionError::ZeroParts);
    }
    if let Some(t) = &options.edge_traffic {
        if t.len() != graph.edges.len() {
            return Err(PartitionError::TrafficLength { edges: graph.edges.len(), traffic: t.len() });
        }
    }
    let n = graph.vertex_weight.len();
    let too_many = || PartitionError::TooManyParts { parts, units: n, what: "routers" };
    let num_blocks = graph.blocks.as_ref().map(|b| b.iter().map(|&b| b as usize + 1).max().unwrap_or(0));
    match method {
        Method::Blocks if num_blocks.is_some() => {
            let blocks = graph.blocks.as_ref().expect("checked");
            let num_blocks = num_blocks.expect("checked");
            if (parts as usize) > num_blocks {
                return Err(PartitionError::TooManyParts { parts, units: num_blocks, what: "blocks" });
            }
            let mut block_weight = vec![0u64; num_blocks];
            for (v, &b) in blocks.iter().enumerate() {
                block_weight[b as usize] += graph.vertex_weight[v];
            }
            let block_part = contiguous(&block_weight, parts);
            let assignment = blocks.iter().map(|&b| block_part[b as usize]).collect();
            Ok(evaluate_with(graph, assignment, parts, Method::Blocks, options))
        }
        Method::Linear | Method::Blocks => {
            if parts as usize > n {
                return Err(too_many());
            }
            Ok(evaluate_with(graph, contiguous(&graph.vertex_weight, parts), parts, method, options))
        }
        Method::Multilevel => {
            if parts as usize > n {
                return Err(too_many());
            }
            let assignment = multilevel_assignment(graph, parts, options);
            Ok(evaluate_with(graph, assignment, parts, Method::Multilevel, options))
        }
        Method::Auto => {
            let limit = options.lookahead_imbalance();
            // Whole blocks, when they balance: few blocks per partition do not (1,059
            // Dragonfly groups over 1,024 partitions give some two and most one).
            let blocks = match num_blocks {
                Some(b) if b >= parts as usize => {
                    Some(partition_with(graph, parts, Method::Blocks, options)?)
                }
                _ => None,
            };
            let blocks = match blocks {
                Some(b) if b.imbalance <= limit + 1e-12 => return Ok(b),
                other => other,
            };
            let linear = partition_with(graph, parts, Method::Linear, options)?;
            let multilevel = partition_with(graph, parts, Method::Multilevel, options)?;
            // Smaller is better: unacceptable balance, then shorter lookahead, then cut.
            let key = |p: &Plan| {
                (
                    p.imbalance > limit + 1e-12,
                    Reverse(p.lookahead.unwrap_or(u64::MAX)),
                    p.cut_weight,
                    p.cut_edges,
                )
            };
            let (kl, km) = (key(&linear), key(&multilevel));
            let multilevel_better = match (kl.0, kl.1).cmp(&(km.0, km.1)) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => (km.2, km.3) < (kl.2, kl.3),
            };
            let best = if multilevel_better { multilevel } else { linear };
            // Unbalanced blocks only where nothing else balances either.
            Ok(match blocks {
                Some(b) if key(&best).0 && b.imbalance < best.imbalance => b,
                _ => best,
            })
        }
    }
}

/// Weight of each directed edge for the multilevel partitioner: 1 without traffic data,
/// else 1 + 64 × traffic / mean traffic (the 1 prefers fewer cut links among equals).
fn internal_edge_weights(graph: &PartGraph, options: &PartitionOptions) -> Vec<i64> {
    let m = graph.edges.len();
    if options.edge_traffic.is_none() || m == 0 {
        return vec![1; m];
    }
    let traffic: Vec<f64> = (0..m).map(|e| options.traffic(e)).collect();
    let mean = traffic.iter().sum::<f64>() / m as f64;
    if mean <= 0.0 || !mean.is_finite() {
        return vec![1; m];
    }
    traffic.iter().map(|&t| 1 + (t / mean * 64.0).round().min(1e12) as i64).collect()
}

/// Union-find with path halving and union by size.
struct UnionFind {
    parent: Vec<u32>,
    size: Vec<u64>,
}

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind { parent: (0..n as u32).collect(), size: vec![1; n] }
    }

    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let gp = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = gp;
            x = gp;
        }
        x
    }

    /// Joins the sets of `a` and `b`; returns the new root if they were distinct.
    fn union(&mut self, a: u32, b: u32) -> Option<u32> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return None;
        }
        let (big, small) = if self.size[ra as usize] >= self.size[rb as usize] { (ra, rb) } else { (rb, ra) };
        self.parent[small as usize] = big;
        self.size[big as usize] += self.size[small as usize];
        Some(big)
    }
}

/// Latency classes tried with contraction before partitioning the whole graph.
const MAX_LOOKAHEAD_ATTEMPTS: usize = 16;

/// The multilevel assignment with latency classes (see the crate documentation).
fn multilevel_assignment(graph: &PartGraph, parts: u32, options: &PartitionOptions) -> Vec<u32> {
    let n = graph.vertex_weight.len();
    let ew = internal_edge_weights(graph, options);
    let vw: Vec<i64> = graph.vertex_weight.iter().map(|&w| w.min(i64::MAX as u64 / 4) as i64).collect();
    let total: i64 = vw.iter().sum();
    let ub = options.max_imbalance();
    let look_ub = options.lookahead_imbalance();
    let mut lats: Vec<u64> = graph.edges.iter().filter(|e| e.0 != e.1).map(|e| e.2).collect();
    lats.sort_unstable();
    lats.dedup();
    if parts > 1 && lats.len() > 1 {
        // For each threshold (ascending), the number of components and the heaviest one
        // when all edges of lower latency are contracted.
        let mut order: Vec<usize> = (0..graph.edges.len()).collect();
        order.sort_by_key(|&e| (graph.edges[e].2, e));
        let mut uf = UnionFind::new(n);
        let mut comp_w = vw.clone();
        let mut ncomp = n;
        let mut max_w = vw.iter().copied().max().unwrap_or(0);
        let mut feasible = vec![false; lats.len()];
        let mut components = vec![0usize; lats.len()];
        let mut next = 0;
        for (i, &t) in lats.iter().enumerate() {
            while next < order.len() && graph.edges[order[next]].2 < t {
                let (a, b, _) = graph.edges[order[next]];
                let (ra, rb) = (uf.find(a), uf.find(b));
                if let Some(r) = uf.union(ra, rb) {
                    let w = comp_w[ra as usize] + comp_w[rb as usize];
                    comp_w[r as usize] = w;
                    max_w = max_w.max(w);
                    ncomp -= 1;
                }
                next += 1;
            }
            components[i] = ncomp;
            feasible[i] = ncomp >= parts as usize && (max_w as f64) <= look_ub * total as f64 / parts as f64;
        }
        let mut attempts = 0;
        for i in (1..lats.len()).rev() {
            // The same number of components means the same components (they only merge as
            // the threshold rises), which already failed.
            if !feasible[i] || (i + 1 < lats.len() && feasible[i + 1] && components[i + 1] == components[i]) {
                continue;
            }
            attempts += 1;
            if attempts > MAX_LOOKAHEAD_ATTEMPTS {
                break;
            }
            let t = lats[i];
            let mut uf = UnionFind::new(n);
            for &(a, b, lat) in &graph.edges {
                if lat < t {
                    uf.union(a, b);
                }
            }
            let mut comp_of_root = vec![u32::MAX; n];
            let mut comp = vec![0u32; n];
            let mut nc = 0u32;
            for (v, c) in comp.iter_mut().enumerate() {
                let r = uf.find(v as u32) as usize;
                if comp_of_root[r] == u32::MAX {
                    comp_of_root[r] = nc;
                    nc += 1;
                }
                *c = comp_of_root[r];
            }
            let mut cvw = vec![0i64; nc as usize];
            for v in 0..n {
                cvw[comp[v] as usize] += vw[v];
            }
            let cedges = graph
                .edges
                .iter()
                .zip(&ew)
                .filter(|(e, _)| e.2 >= t)
                .map(|(&(a, b, _), &w)| (comp[a as usize], comp[b as usize], w));
            let cg = multilevel::Graph::from_edges(cvw, cedges);
            let cpart = multilevel::partition_kway(&cg, parts, ub);
            let mut pw = vec![0i64; parts as usize];
            let mut count = vec![0usize; parts as usize];
            for (c, &p) in cpart.iter().enumerate() {
                pw[p as usize] += cg.vw[c];
                count[p as usize] += 1;
            }
            let heaviest = pw.iter().copied().max().unwrap_or(0);
            let nonempty = count.iter().all(|&c| c > 0);
            if nonempty && (heaviest as f64) <= look_ub * total as f64 / parts as f64 + 1e-9 {
                return comp.iter().map(|&c| cpart[c as usize]).collect();
            }
        }
    }
    let g = multilevel::Graph::from_edges(vw, graph.edges.iter().zip(&ew).map(|(&(a, b, _), &w)| (a, b, w)));
    multilevel::partition_kway(&g, parts, ub)
}

/// Computes the quality figures of an assignment (default options).
pub fn evaluate(graph: &PartGraph, assignment: Vec<u32>, parts: u32, method: Method) -> Plan {
    evaluate_with(graph, assignment, parts, method, &PartitionOptions::default())
}

/// Computes the quality figures of an assignment, with the traffic of `options`.
///
/// # Panics
/// If `options.edge_traffic` does not have one entry per edge.
pub fn evaluate_with(
    graph: &PartGraph,
    assignment: Vec<u32>,
    parts: u32,
    method: Method,
    options: &PartitionOptions,
) -> Plan {
    if let Some(t) = &options.edge_traffic {
        assert_eq!(t.len(), graph.edges.len(), "edge traffic needs one entry per edge");
    }
    let mut part_weights = vec![0u64; parts as usize];
    for (v, &p) in assignment.iter().enumerate() {
        part_weights[p as usize] += graph.vertex_weight[v];
    }
    let total: u64 = part_weights.iter().sum();
    let mean = total as f64 / parts as f64;
    let imbalance = if total == 0 { 1.0 } else { *part_weights.iter().max().unwrap_or(&0) as f64 / mean };
    let mut cut_edges = 0;
    let mut lookahead: Option<u64> = None;
    let mut cut_traffic = 0.0;
    for (e, &(a, b, lat)) in graph.edges.iter().enumerate() {
        if assignment[a as usize] != assignment[b as usize] {
            cut_edges += 1;
            cut_traffic += options.traffic(e);
            lookahead = Some(lookahead.map_or(lat, |l| l.min(lat)));
        }
    }
    let cut_weight =
        if options.edge_traffic.is_none() { cut_edges as f64 } else { cut_traffic / DEFAULT_EDGE_TRAFFIC };
    let expected_messages_per_window = cut_traffic * lookahead.unwrap_or(0) as f64;
    Plan {
        assignment,
        method,
        parts,
        part_weights,
        imbalance,
        cut_edges,
        lookahead,
        cut_weight,
        expected_messages_per_window,
    }
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

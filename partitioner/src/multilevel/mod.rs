//! Multilevel k-way partitioning of an undirected, vertex- and edge-weighted graph.
//!
//! The scheme is the one of METIS: coarsen by heavy-edge matching, partition the coarsest
//! graph by recursive bisection (greedy graph growing from a peripheral vertex, then
//! Fiduccia–Mattheyses), and project back level by level with a balancing pass and greedy
//! boundary k-way refinement at every level. Sources: Karypis and Kumar, "A Fast and High
//! Quality Multilevel Scheme for Partitioning Irregular Graphs", SIAM J. Sci. Comput.
//! 20(1), 1998 (coarsening, graph growing, multilevel bisection); Karypis and Kumar,
//! "Multilevel k-way Partitioning Scheme for Irregular Graphs", J. Parallel Distrib.
//! Comput. 48(1), 1998 (k-way refinement); Fiduccia and Mattheyses, "A Linear-Time
//! Heuristic for Improving Network Partitions", DAC 1982.
//!
//! Everything is deterministic: vertices are visited in fixed orders (degree, then id),
//! heaps break ties by vertex id, and no hash map or random number generator is used.
//!
//! The phases, in the order a partitioning runs them: `coarsen` (heavy-edge matching),
//! `initial` (recursive bisection of the coarsest graph) and `refine` (balancing and k-way
//! refinement at every level on the way back).

mod coarsen;
mod initial;
mod refine;

use coarsen::coarsen;
use initial::recursive_bisection;
use refine::KWay;

const NONE: u32 = u32::MAX;

/// An undirected graph in compressed adjacency form. Every edge appears once in the list
/// of each of its ends, with the same weight.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    xadj: Vec<usize>,
    adj: Vec<u32>,
    ew: Vec<i64>,
    pub(crate) vw: Vec<i64>,
}

impl Graph {
    /// Builds the undirected graph of weighted directed edges: the two directions of a link
    /// and parallel links are merged (weights added), self-loops are dropped. Adjacency
    /// lists are sorted by neighbour id, so the result does not depend on the edge order.
    pub(crate) fn from_edges(vw: Vec<i64>, edges: impl Iterator<Item = (u32, u32, i64)> + Clone) -> Graph {
        let n = vw.len();
        let mut xadj = vec![0usize; n + 1];
        for (a, b, _) in edges.clone() {
            if a != b {
                xadj[a as usize + 1] += 1;
                xadj[b as usize + 1] += 1;
            }
        }
        for v in 0..n {
            xadj[v + 1] += xadj[v];
        }
        let mut pos = xadj[..n].to_vec();
        let mut pairs = vec![(0u32, 0i64); xadj[n]];
        for (a, b, w) in edges {
            if a != b {
                pairs[pos[a as usize]] = (b, w);
                pos[a as usize] += 1;
                pairs[pos[b as usize]] = (a, w);
                pos[b as usize] += 1;
            }
        }
        let mut out = Graph { xadj: Vec::with_capacity(n + 1), adj: Vec::new(), ew: Vec::new(), vw };
        out.adj.reserve(pairs.len());
        out.ew.reserve(pairs.len());
        out.xadj.push(0);
        for v in 0..n {
            let list = &mut pairs[xadj[v]..xadj[v + 1]];
            // Equal keys are summed, so an unstable sort is still deterministic.
            list.sort_unstable_by_key(|p| p.0);
            let start = out.adj.len();
            for &(u, w) in list.iter() {
                if out.adj.len() > start && out.adj[out.adj.len() - 1] == u {
                    *out.ew.last_mut().expect("nonempty") += w;
                } else {
                    out.adj.push(u);
                    out.ew.push(w);
                }
            }
            out.xadj.push(out.adj.len());
        }
        out
    }

    pub(crate) fn n(&self) -> usize {
        self.vw.len()
    }

    fn range(&self, v: usize) -> std::ops::Range<usize> {
        self.xadj[v]..self.xadj[v + 1]
    }

    fn total(&self) -> i64 {
        self.vw.iter().sum()
    }

    /// The subgraph induced by `ids` (local vertex `i` is `ids[i]`).
    fn induced(&self, ids: &[u32], local: &mut [u32]) -> Graph {
        for (i, &v) in ids.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        let mut g = Graph { xadj: Vec::with_capacity(ids.len() + 1), ..Default::default() };
        g.xadj.push(0);
        for &v in ids {
            for i in self.range(v as usize) {
                let u = local[self.adj[i] as usize];
                if u != NONE {
                    g.adj.push(u);
                    g.ew.push(self.ew[i]);
                }
            }
            g.xadj.push(g.adj.len());
            g.vw.push(self.vw[v as usize]);
        }
        for &v in ids {
            local[v as usize] = NONE;
        }
        g
    }
}

/// Sum of the weights of the edges between different parts (each undirected edge once).
fn cut_of(g: &Graph, part: &[u32]) -> i64 {
    let mut cut = 0;
    for v in 0..g.n() {
        for i in g.range(v) {
            if part[g.adj[i] as usize] != part[v] {
                cut += g.ew[i];
            }
        }
    }
    cut / 2
}

/// Partitions `g` into `k` parts with part weights at most `ub` times the mean where the
/// vertex weights allow it, minimising the weight of the cut edges.
pub(crate) fn partition_kway(g: &Graph, k: u32, ub: f64) -> Vec<u32> {
    let n = g.n();
    if k <= 1 || n == 0 {
        return vec![0; n];
    }
    let total = g.total();
    let mean = total as f64 / k as f64;
    let maxw = ((mean * ub).floor() as i64).max(mean.ceil() as i64);
    let coarsen_to = (20 * k as usize).max(40);
    let max_vw = ((1.5 * total as f64 / coarsen_to as f64).ceil() as i64).max(1);
    let mut graphs: Vec<Graph> = Vec::new();
    let mut cmaps: Vec<Vec<u32>> = Vec::new();
    loop {
        let cur = graphs.last().unwrap_or(g);
        if cur.n() <= coarsen_to || graphs.len() >= 64 {
            break;
        }
        let (cg, cmap) = coarsen(cur, max_vw);
        if cg.n() as f64 > 0.95 * cur.n() as f64 {
            break;
        }
        graphs.push(cg);
        cmaps.push(cmap);
    }
    let coarsest = graphs.last().unwrap_or(g);
    let mut part = vec![0u32; coarsest.n()];
    let ids: Vec<u32> = (0..coarsest.n() as u32).collect();
    let mut local = vec![NONE; coarsest.n()];
    recursive_bisection(coarsest, &ids, 0, k, ub, &mut part, &mut local);
    for level in (0..=graphs.len()).rev() {
        let gl = if level == 0 { g } else { &graphs[level - 1] };
        if level < graphs.len() {
            let cmap = &cmaps[level];
            part = cmap.iter().map(|&c| part[c as usize]).collect();
        }
        let mut kw = KWay::new(gl, part, k, maxw);
        kw.rebalance();
        kw.refine(12);
        kw.rebalance();
        if level == 0 {
            kw.fill_empty();
        }
        part = kw.part;
    }
    part
}

#[cfg(test)]
mod tests {
    use super::initial::bisect;
    use super::*;

    fn grid(w: u32, h: u32) -> Graph {
        let mut e = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let v = y * w + x;
                if x + 1 < w {
                    e.push((v, v + 1, 1));
                }
                if y + 1 < h {
                    e.push((v, v + w, 1));
                }
            }
        }
        Graph::from_edges(vec![1; (w * h) as usize], e.into_iter())
    }

    #[test]
    fn merged_edges_and_coarsening_keep_weights() {
        let g = Graph::from_edges(vec![1, 2, 3], [(0, 1, 1), (1, 0, 1), (1, 2, 5), (2, 2, 9)].into_iter());
        assert_eq!(g.adj, vec![1, 0, 2, 1]);
        assert_eq!(g.ew, vec![2, 2, 5, 5]);
        let g = grid(8, 8);
        let (c, cmap) = coarsen(&g, 100);
        assert_eq!(c.total(), 64);
        assert_eq!(cmap.len(), 64);
        assert!(c.n() <= 40);
        // Edge weight is conserved: cut of the coarse graph under any assignment equals
        // the fine cut under the projected one.
        let cp: Vec<u32> = (0..c.n() as u32).map(|v| v % 3).collect();
        let fp: Vec<u32> = cmap.iter().map(|&x| cp[x as usize]).collect();
        assert_eq!(cut_of(&c, &cp), cut_of(&g, &fp));
    }

    #[test]
    fn bisection_of_a_grid_is_a_straight_cut() {
        let g = grid(10, 10);
        let side = bisect(&g, 0.5, 1.0, 1, 1);
        let part: Vec<u32> = side.iter().map(|&s| s as u32).collect();
        assert_eq!(cut_of(&g, &part), 10);
        assert_eq!(side.iter().filter(|&&s| s == 0).count(), 50);
    }
}

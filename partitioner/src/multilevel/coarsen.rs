//! Coarsening: one level of heavy-edge matching (Karypis and Kumar, SIAM J. Sci. Comput.
//! 20(1), 1998).

use super::{Graph, NONE};

/// One level of heavy-edge matching; returns the coarse graph and the map from fine to
/// coarse vertices.
pub(super) fn coarsen(g: &Graph, max_vw: i64) -> (Graph, Vec<u32>) {
    let n = g.n();
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&v| (g.xadj[v as usize + 1] - g.xadj[v as usize], v));
    let mut mate = vec![NONE; n];
    for &v in &order {
        let v = v as usize;
        if mate[v] != NONE {
            continue;
        }
        let (mut best, mut best_w, mut best_vw) = (NONE, i64::MIN, i64::MAX);
        for i in g.range(v) {
            let u = g.adj[i] as usize;
            if mate[u] != NONE || g.vw[v] + g.vw[u] > max_vw {
                continue;
            }
            let w = g.ew[i];
            // Heaviest edge, then lightest partner, then lowest id.
            if w > best_w || (w == best_w && (g.vw[u] < best_vw || (g.vw[u] == best_vw && (u as u32) < best)))
            {
                (best, best_w, best_vw) = (u as u32, w, g.vw[u]);
            }
        }
        if best == NONE {
            mate[v] = v as u32;
        } else {
            mate[v] = best;
            mate[best as usize] = v as u32;
        }
    }
    let mut cmap = vec![NONE; n];
    let mut nc = 0u32;
    for v in 0..n {
        if cmap[v] == NONE {
            cmap[v] = nc;
            cmap[mate[v] as usize] = nc;
            nc += 1;
        }
    }
    let nc = nc as usize;
    let mut cg = Graph {
        xadj: Vec::with_capacity(nc + 1),
        adj: Vec::with_capacity(g.adj.len() / 2),
        ew: Vec::with_capacity(g.adj.len() / 2),
        vw: vec![0; nc],
    };
    cg.xadj.push(0);
    // marker[c]: position of coarse neighbour c in the list being built (stale when it
    // points before the start of the current list).
    let mut marker = vec![usize::MAX; nc];
    for v in 0..n {
        let c = cmap[v] as usize;
        if c + 1 != cg.xadj.len() {
            continue; // second member of an already built coarse vertex
        }
        let start = cg.adj.len();
        let m = mate[v] as usize;
        let members = if m == v { [v, v] } else { [v, m] };
        for (k, &x) in members.iter().enumerate() {
            if k == 1 && m == v {
                break;
            }
            cg.vw[c] += g.vw[x];
            for i in g.range(x) {
                let cu = cmap[g.adj[i] as usize];
                if cu as usize == c {
                    continue;
                }
                let p = marker[cu as usize];
                if p == usize::MAX || p < start {
                    marker[cu as usize] = cg.adj.len();
                    cg.adj.push(cu);
                    cg.ew.push(g.ew[i]);
                } else {
                    cg.ew[p] += g.ew[i];
                }
            }
        }
        cg.xadj.push(cg.adj.len());
    }
    (cg, cmap)
}

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

use std::cmp::Reverse;
use std::collections::BinaryHeap;

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

/// One level of heavy-edge matching; returns the coarse graph and the map from fine to
/// coarse vertices.
fn coarsen(g: &Graph, max_vw: i64) -> (Graph, Vec<u32>) {
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

/// The vertex farthest (in hops) from `start`, found by two breadth-first searches; ties
/// go to the lowest id. Only the component of `start` is searched.
fn peripheral(g: &Graph, start: usize) -> usize {
    let n = g.n();
    let mut dist = vec![u32::MAX; n];
    let mut far = start;
    let mut queue = Vec::with_capacity(n);
    for _ in 0..2 {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        queue.clear();
        let s = far;
        dist[s] = 0;
        queue.push(s as u32);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head] as usize;
            head += 1;
            if dist[v] > dist[far] || (dist[v] == dist[far] && v < far) {
                far = v;
            }
            for i in g.range(v) {
                let u = g.adj[i] as usize;
                if dist[u] == u32::MAX {
                    dist[u] = dist[v] + 1;
                    queue.push(u as u32);
                }
            }
        }
    }
    far
}

/// Graph growing: side 0 grows from `start` until it holds about `target` weight. With
/// `greedy`, the frontier vertex whose move reduces the cut most comes next (ties: lowest
/// id); otherwise vertices come in breadth-first order, which gives bands where heavy
/// edges would lure the greedy growth along a line.
fn grow(g: &Graph, start: usize, target: i64, greedy: bool) -> Vec<u8> {
    let n = g.n();
    let mut side = vec![1u8; n];
    let mut to_region = vec![0i64; n];
    let degw: Vec<i64> = (0..n).map(|v| g.range(v).map(|i| g.ew[i]).sum()).collect();
    let mut heap: BinaryHeap<(i64, Reverse<u32>)> = BinaryHeap::new();
    let mut queue: std::collections::VecDeque<u32> = std::collections::VecDeque::new();
    let mut queued = vec![false; n];
    if greedy {
        heap.push((-degw[start], Reverse(start as u32)));
    } else {
        queue.push_back(start as u32);
        queued[start] = true;
    }
    let mut w0 = 0i64;
    let mut next_unvisited = 0usize;
    while w0 < target {
        let v = loop {
            let popped = if greedy {
                heap.pop().map(|(gain, Reverse(v))| (gain, v as usize))
            } else {
                queue.pop_front().map(|v| (0, v as usize))
            };
            match popped {
                Some((gain, v)) => {
                    if side[v] == 1 && (!greedy || gain == 2 * to_region[v] - degw[v]) {
                        break Some(v);
                    }
                }
                None => {
                    // Disconnected: continue in the lowest-id vertex not taken yet.
                    while next_unvisited < n && side[next_unvisited] == 0 {
                        next_unvisited += 1;
                    }
                    break (next_unvisited < n).then_some(next_unvisited);
                }
            }
        };
        let Some(v) = v else { break };
        if w0 > 0 && w0 + g.vw[v] - target > target - w0 {
            break;
        }
        side[v] = 0;
        w0 += g.vw[v];
        for i in g.range(v) {
            let u = g.adj[i] as usize;
            if side[u] == 1 {
                to_region[u] += g.ew[i];
                if greedy {
                    heap.push((2 * to_region[u] - degw[u], Reverse(u as u32)));
                } else if !queued[u] {
                    queued[u] = true;
                    queue.push_back(u as u32);
                }
            }
        }
    }
    side
}

/// Quality of a bisection: (overweight beyond the limits, cut, distance from target).
fn bisection_key(pw: [i64; 2], maxw: [i64; 2], target0: i64, cut: i64) -> (i64, i64, i64) {
    let over = (pw[0] - maxw[0]).max(0) + (pw[1] - maxw[1]).max(0);
    (over, cut, (pw[0] - target0).abs())
}

/// Two-way Fiduccia–Mattheyses refinement with rollback to the best prefix of moves.
fn fm2(g: &Graph, side: &mut [u8], maxw: [i64; 2], target0: i64, passes: usize) {
    let n = g.n();
    let part: Vec<u32> = side.iter().map(|&s| s as u32).collect();
    let mut cut = cut_of(g, &part);
    let mut pw = [0i64; 2];
    for v in 0..n {
        pw[side[v] as usize] += g.vw[v];
    }
    let limit = (n / 100).clamp(15, 100);
    let mut gain = vec![0i64; n];
    let mut locked = vec![false; n];
    for _ in 0..passes {
        let mut heaps: [BinaryHeap<(i64, Reverse<u32>)>; 2] = [BinaryHeap::new(), BinaryHeap::new()];
        for v in 0..n {
            let (mut ext, mut int) = (0, 0);
            for i in g.range(v) {
                if side[g.adj[i] as usize] == side[v] {
                    int += g.ew[i];
                } else {
                    ext += g.ew[i];
                }
            }
            gain[v] = ext - int;
            locked[v] = false;
            if ext > 0 {
                heaps[side[v] as usize].push((gain[v], Reverse(v as u32)));
            }
        }
        let start_key = bisection_key(pw, maxw, target0, cut);
        let mut best_key = start_key;
        let mut best_len = 0;
        let mut moves: Vec<u32> = Vec::new();
        let mut since_best = 0;
        loop {
            // Valid top of each heap.
            let mut top = [None, None];
            for s in 0..2 {
                while let Some(&(gn, Reverse(v))) = heaps[s].peek() {
                    let vu = v as usize;
                    if !locked[vu] && side[vu] as usize == s && gain[vu] == gn {
                        top[s] = Some((gn, vu));
                        break;
                    }
                    heaps[s].pop();
                }
            }
            let over = [pw[0] - maxw[0], pw[1] - maxw[1]];
            let from = if over[0] > 0 && over[0] >= over[1] && top[0].is_some() {
                0
            } else if over[1] > 0 && top[1].is_some() {
                1
            } else {
                let ok = |s: usize| top[s].filter(|&(_, v)| pw[1 - s] + g.vw[v] <= maxw[1 - s]);
                match (ok(0), ok(1)) {
                    (Some((g0, _)), Some((g1, _))) => {
                        if g0 > g1 || (g0 == g1 && pw[0] >= target0) {
                            0
                        } else {
                            1
                        }
                    }
                    (Some(_), None) => 0,
                    (None, Some(_)) => 1,
                    (None, None) => break,
                }
            };
            let (gn, v) = top[from].expect("checked");
            heaps[from].pop();
            let to = 1 - from;
            side[v] = to as u8;
            locked[v] = true;
            pw[from] -= g.vw[v];
            pw[to] += g.vw[v];
            cut -= gn;
            moves.push(v as u32);
            for i in g.range(v) {
                let u = g.adj[i] as usize;
                let d = if side[u] as usize == to { -2 * g.ew[i] } else { 2 * g.ew[i] };
                gain[u] += d;
                if !locked[u] {
                    heaps[side[u] as usize].push((gain[u], Reverse(u as u32)));
                }
            }
            let key = bisection_key(pw, maxw, target0, cut);
            if key < best_key {
                best_key = key;
                best_len = moves.len();
                since_best = 0;
            } else {
                since_best += 1;
                if since_best > limit {
                    break;
                }
            }
        }
        for &v in moves[best_len..].iter().rev() {
            let v = v as usize;
            let from = side[v] as usize;
            side[v] = 1 - side[v];
            pw[from] -= g.vw[v];
            pw[1 - from] += g.vw[v];
        }
        cut = best_key.1;
        if best_len == 0 || best_key >= start_key {
            break;
        }
    }
}

/// Bisects `g` so that side 0 gets about `frac` of the weight and at least `min0`
/// vertices, side 1 at least `min1`.
fn bisect(g: &Graph, frac: f64, ub: f64, min0: usize, min1: usize) -> Vec<u8> {
    let n = g.n();
    let total = g.total();
    let target0 = (total as f64 * frac).round() as i64;
    let targets = [target0, total - target0];
    let maxw = [0, 1].map(|s| ((targets[s] as f64 * ub).floor() as i64).max(targets[s]));
    let tries = if n <= 256 {
        8
    } else if n <= 4096 {
        4
    } else {
        2
    };
    let mut starts = vec![peripheral(g, 0)];
    for t in 1..tries {
        let s = t * n / tries;
        let s = if t % 2 == 1 { peripheral(g, s) } else { s };
        if !starts.contains(&s) {
            starts.push(s);
        }
    }
    let mut best: Option<((i64, i64, i64), Vec<u8>)> = None;
    for (&s, greedy) in starts.iter().flat_map(|s| [(s, true), (s, false)]) {
        let mut side = grow(g, s, target0, greedy);
        fm2(g, &mut side, maxw, target0, 8);
        let mut pw = [0i64; 2];
        for v in 0..n {
            pw[side[v] as usize] += g.vw[v];
        }
        let part: Vec<u32> = side.iter().map(|&x| x as u32).collect();
        let key = bisection_key(pw, maxw, target0, cut_of(g, &part));
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            best = Some((key, side));
        }
    }
    let mut side = best.expect("at least one try").1;
    // Each side needs at least as many vertices as the parts it will be split into.
    for (s, min) in [(0u8, min0), (1u8, min1)] {
        let mut count = side.iter().filter(|&&x| x == s).count();
        while count < min {
            // Move the vertex of the other side with the most weight towards side s.
            let mut best_v = NONE;
            let mut best_gain = i64::MIN;
            for v in 0..n {
                if side[v] == s {
                    continue;
                }
                let gain: i64 =
                    g.range(v).map(|i| if side[g.adj[i] as usize] == s { g.ew[i] } else { -g.ew[i] }).sum();
                if gain > best_gain {
                    best_gain = gain;
                    best_v = v as u32;
                }
            }
            side[best_v as usize] = s;
            count += 1;
        }
    }
    side
}

/// Recursive bisection of `g` into `k` parts numbered from `first`; `ids` maps the
/// vertices of `g` to the vertices of the graph whose assignment `out` is.
fn recursive_bisection(
    g: &Graph,
    ids: &[u32],
    first: u32,
    k: u32,
    ub: f64,
    out: &mut [u32],
    local: &mut [u32],
) {
    if k == 1 {
        for &v in ids {
            out[v as usize] = first;
        }
        return;
    }
    let k0 = k / 2;
    let side = bisect(g, k0 as f64 / k as f64, ub, k0 as usize, (k - k0) as usize);
    for (s, first_s, k_s) in [(0u8, first, k0), (1u8, first + k0, k - k0)] {
        let sub_local: Vec<u32> = (0..g.n() as u32).filter(|&v| side[v as usize] == s).collect();
        let sub_ids: Vec<u32> = sub_local.iter().map(|&v| ids[v as usize]).collect();
        let sub = g.induced(&sub_local, &mut local[..g.n()]);
        recursive_bisection(&sub, &sub_ids, first_s, k_s, ub, out, local);
    }
}

/// Scratch space for the connectivity of one vertex to the parts.
struct Conn {
    w: Vec<i64>,
    touched: Vec<u32>,
}

impl Conn {
    fn new(k: u32) -> Self {
        Conn { w: vec![0; k as usize], touched: Vec::new() }
    }

    /// Fills the connectivity of `v`; returns its connection to its own part.
    fn fill(&mut self, g: &Graph, part: &[u32], v: usize) -> i64 {
        self.clear();
        for i in g.range(v) {
            let p = part[g.adj[i] as usize];
            if self.w[p as usize] == 0 {
                self.touched.push(p);
            }
            self.w[p as usize] += g.ew[i];
        }
        self.touched.sort_unstable();
        self.w[part[v] as usize]
    }

    fn clear(&mut self) {
        for &p in &self.touched {
            self.w[p as usize] = 0;
        }
        self.touched.clear();
    }
}

/// State of a k-way assignment under refinement.
struct KWay<'a> {
    g: &'a Graph,
    part: Vec<u32>,
    pw: Vec<i64>,
    count: Vec<usize>,
    maxw: i64,
    conn: Conn,
}

impl<'a> KWay<'a> {
    fn new(g: &'a Graph, part: Vec<u32>, k: u32, maxw: i64) -> Self {
        let mut pw = vec![0; k as usize];
        let mut count = vec![0; k as usize];
        for (v, &p) in part.iter().enumerate() {
            pw[p as usize] += g.vw[v];
            count[p as usize] += 1;
        }
        KWay { g, part, pw, count, maxw, conn: Conn::new(k) }
    }

    fn apply(&mut self, v: usize, to: u32) {
        let from = self.part[v] as usize;
        self.pw[from] -= self.g.vw[v];
        self.count[from] -= 1;
        self.pw[to as usize] += self.g.vw[v];
        self.count[to as usize] += 1;
        self.part[v] = to;
    }

    fn is_boundary(&self, v: usize) -> bool {
        let p = self.part[v];
        self.g.range(v).any(|i| self.part[self.g.adj[i] as usize] != p)
    }

    /// Moves vertices out of overweight parts: first boundary vertices to adjacent parts
    /// with room (best gain first), then, if still needed, any vertex to the lightest part.
    fn rebalance(&mut self) {
        let g = self.g;
        let n = g.n();
        for round in 0..6 {
            if self.pw.iter().all(|&w| w <= self.maxw) {
                return;
            }
            let mut moved = false;
            if round % 2 == 0 {
                let mut cands: Vec<(i64, u32)> = Vec::new();
                for v in 0..n {
                    if self.pw[self.part[v] as usize] > self.maxw && self.is_boundary(v) {
                        let own = self.conn.fill(g, &self.part, v);
                        let best = self
                            .conn
                            .touched
                            .iter()
                            .filter(|&&p| p != self.part[v])
                            .map(|&p| self.conn.w[p as usize])
                            .max();
                        if let Some(b) = best {
                            cands.push((b - own, v as u32));
                        }
                    }
                }
                cands.sort_by_key(|&(gain, v)| (Reverse(gain), v));
                for (_, v) in cands {
                    let v = v as usize;
                    let a = self.part[v] as usize;
                    if self.pw[a] <= self.maxw || self.count[a] <= 1 {
                        continue;
                    }
                    let own = self.conn.fill(g, &self.part, v);
                    let mut best: Option<(i64, i64, u32)> = None;
                    for &p in &self.conn.touched {
                        if p as usize == a || self.pw[p as usize] + g.vw[v] > self.maxw {
                            continue;
                        }
                        let key = (self.conn.w[p as usize] - own, -self.pw[p as usize], p);
                        if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                            best = Some(key);
                        }
                    }
                    if let Some((_, _, p)) = best {
                        self.apply(v, p);
                        moved = true;
                    }
                }
            } else {
                // No adjacent part has room: send the least connected vertices of
                // overweight parts to the lightest part.
                let mut cands: Vec<(i64, u32)> = Vec::new();
                for v in 0..n {
                    if self.pw[self.part[v] as usize] > self.maxw {
                        let own = self.conn.fill(g, &self.part, v);
                        cands.push((own, v as u32));
                    }
                }
                cands.sort_unstable();
                for (_, v) in cands {
                    let v = v as usize;
                    let a = self.part[v] as usize;
                    if self.pw[a] <= self.maxw || self.count[a] <= 1 {
                        continue;
                    }
                    let lightest = (0..self.pw.len()).min_by_key(|&p| (self.pw[p], p)).expect("k >= 1");
                    if lightest != a && self.pw[lightest] + g.vw[v] < self.pw[a] {
                        self.apply(v, lightest as u32);
                        moved = true;
                    }
                }
            }
            if !moved && round % 2 == 1 {
                return;
            }
        }
    }

    /// Greedy boundary refinement: a vertex moves to the adjacent part that reduces the
    /// cut most, or keeps it and improves balance, without overloading the target.
    fn refine(&mut self, passes: usize) {
        let g = self.g;
        let n = g.n();
        let mut cands: Vec<u32> = (0..n as u32).filter(|&v| self.is_boundary(v as usize)).collect();
        let mut stamp = vec![0u32; n];
        for pass in 1..=passes as u32 {
            let mut moved: Vec<u32> = Vec::new();
            for &v in &cands {
                let v = v as usize;
                let a = self.part[v];
                if self.count[a as usize] <= 1 {
                    continue;
                }
                let own = self.conn.fill(g, &self.part, v);
                if self.conn.touched.len() == 1 && self.conn.touched[0] == a {
                    continue;
                }
                let vw = g.vw[v];
                let mut best: Option<(i64, i64, u32)> = None;
                for &p in &self.conn.touched {
                    if p == a || self.pw[p as usize] + vw > self.maxw {
                        continue;
                    }
                    let gain = self.conn.w[p as usize] - own;
                    if best.is_none_or(|b| (gain, -self.pw[p as usize]) > (b.0, b.1)) {
                        best = Some((gain, -self.pw[p as usize], p));
                    }
                }
                if let Some((gain, neg_pw, p)) = best {
                    if gain > 0 || (gain == 0 && -neg_pw + vw < self.pw[a as usize]) {
                        self.apply(v, p);
                        moved.push(v as u32);
                    }
                }
            }
            if moved.is_empty() {
                break;
            }
            cands.clear();
            for &v in &moved {
                for x in std::iter::once(v).chain(g.range(v as usize).map(|i| g.adj[i])) {
                    if stamp[x as usize] != pass {
                        stamp[x as usize] = pass;
                        cands.push(x);
                    }
                }
            }
            cands.sort_unstable();
        }
    }

    /// Gives every empty part one vertex from the part with the most vertices: the one
    /// whose move costs least.
    fn fill_empty(&mut self) {
        let g = self.g;
        for p in 0..self.pw.len() {
            if self.count[p] > 0 {
                continue;
            }
            let donor = (0..self.count.len()).max_by_key(|&q| (self.count[q], Reverse(q))).expect("k >= 1");
            if self.count[donor] < 2 {
                return;
            }
            let mut best: Option<(i64, i64, usize)> = None;
            for v in 0..g.n() {
                if self.part[v] as usize != donor {
                    continue;
                }
                let own = self.conn.fill(g, &self.part, v);
                let key = (own, g.vw[v], v);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
            let v = best.expect("donor has vertices").2;
            self.apply(v, p as u32);
        }
    }
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

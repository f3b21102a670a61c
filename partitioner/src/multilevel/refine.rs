//! Refinement of a k-way assignment at one level: a balancing pass and greedy boundary
//! k-way refinement (Karypis and Kumar, J. Parallel Distrib. Comput. 48(1), 1998).

use super::Graph;
use std::cmp::Reverse;

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
pub(super) struct KWay<'a> {
    g: &'a Graph,
    pub(super) part: Vec<u32>,
    pw: Vec<i64>,
    count: Vec<usize>,
    maxw: i64,
    conn: Conn,
}

impl<'a> KWay<'a> {
    pub(super) fn new(g: &'a Graph, part: Vec<u32>, k: u32, maxw: i64) -> Self {
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
    pub(super) fn rebalance(&mut self) {
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
    pub(super) fn refine(&mut self, passes: usize) {
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
    pub(super) fn fill_empty(&mut self) {
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

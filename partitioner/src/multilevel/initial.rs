//! Initial partitioning of the coarsest graph: recursive bisection, each bisection grown
//! from a peripheral vertex (greedy graph growing, Karypis and Kumar, SIAM J. Sci. Comput.
//! 20(1), 1998) and refined by Fiduccia–Mattheyses (DAC 1982).

use super::{cut_of, Graph, NONE};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

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
pub(super) fn bisect(g: &Graph, frac: f64, ub: f64, min0: usize, min1: usize) -> Vec<u8> {
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
pub(super) fn recursive_bisection(
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

//! Distances, diameter and average distance.
//!
//! All computations run breadth-first searches over switch-to-switch links (terminal and
//! unconnected ports are ignored), in parallel with rayon over source switches. Reductions
//! use integer sums, so results do not depend on the number of threads.

use super::{Network, PortTarget, SwitchId, TopologyError};
use rayon::prelude::*;
use serde::Serialize;

/// The common length of the CSR rows that `offsets` delimit, or 0 if they differ (or there
/// are none).
pub(crate) fn uniform_stride(offsets: &[u32]) -> u32 {
    let first = match offsets {
        [a, b, ..] => b - a,
        _ => return 0,
    };
    if offsets.windows(2).all(|w| w[1] - w[0] == first) {
        first
    } else {
        0
    }
}

/// Switch adjacency in compressed form (neighbour lists, parallel links repeated).
pub(crate) struct Adjacency {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    /// The degree of every switch when they all have the same (0 otherwise): the lists
    /// are then found without reading `offsets` (a cache miss saved per lookup).
    uniform_degree: u32,
}

impl Adjacency {
    pub(crate) fn new(net: &Network) -> Self {
        let n = net.num_switches();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbours = Vec::with_capacity(net.num_network_links());
        offsets.push(0);
        for s in 0..n as SwitchId {
            neighbours.extend(net.neighbours(s).map(|(_, v)| v));
            offsets.push(neighbours.len() as u32);
        }
        let uniform_degree = uniform_stride(&offsets);
        Adjacency { offsets, neighbours, uniform_degree }
    }

    /// Memory held, in bytes.
    pub(crate) fn bytes(&self) -> usize {
        (self.offsets.len() + self.neighbours.len()) * 4
    }

    /// Number of switches.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The neighbours of `s`, in port order (a neighbour behind several links appears as
    /// often).
    #[inline]
    pub(crate) fn of(&self, s: u32) -> &[u32] {
        if self.uniform_degree != 0 {
            let d = self.uniform_degree as usize;
            return &self.neighbours[s as usize * d..][..d];
        }
        &self.neighbours[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize]
    }

    fn degree(&self, s: u32) -> u64 {
        (self.offsets[s as usize + 1] - self.offsets[s as usize]) as u64
    }

    /// BFS from `src` into `dist` (length n, overwritten) using `queue` as scratch.
    fn bfs_into(&self, src: SwitchId, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.fill(u32::MAX);
        queue.clear();
        dist[src as usize] = 0;
        queue.push(src);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            let next = dist[v as usize] + 1;
            for &u in self.of(v) {
                if dist[u as usize] == u32::MAX {
                    dist[u as usize] = next;
                    queue.push(u);
                }
            }
        }
    }
}

/// Words per vertex in [`MultiBfs`]: a batch is `LANES * 64` sources.
pub(crate) const LANES: usize = 4;
/// Sources per [`MultiBfs`] batch.
pub(crate) const BATCH: usize = LANES * 64;
/// One bit per source of a batch.
pub(crate) type Bits = [u64; LANES];

/// Multi-source bit-parallel breadth-first search: up to [`BATCH`] BFS at once.
///
/// Every switch keeps a bitset of the batch's sources that reached it (`seen`) and of those
/// that reached it at the current level (`frontier`). A level computes, for every switch,
/// the OR of its neighbours' frontier bits minus its own seen bits: the sources that reach
/// it at the next level. Levels with few frontier switches push from them (top-down);
/// later levels pull into every switch not yet reached by all sources (bottom-up), stopping
/// a switch's scan once every missing source is found. One pass over the adjacency serves
/// `BATCH` sources, so all-pairs distances of a sparse graph cost about
/// `levels x links x n / BATCH` word operations. Batches are independent: callers run
/// them in parallel (rayon), each with its own `MultiBfs`, and combine results in an
/// order-independent way.
pub(crate) struct MultiBfs<'a> {
    adj: &'a Adjacency,
    seen: Vec<Bits>,
    cur: Vec<Bits>,
    next: Vec<Bits>,
    frontier: Vec<u32>,
    next_frontier: Vec<u32>,
}

impl<'a> MultiBfs<'a> {
    pub(crate) fn new(adj: &'a Adjacency) -> Self {
        let n = adj.len();
        MultiBfs {
            adj,
            seen: vec![[0; LANES]; n],
            cur: vec![[0; LANES]; n],
            next: vec![[0; LANES]; n],
            frontier: Vec::new(),
            next_frontier: Vec::new(),
        }
    }

    /// BFS from `sources` (at most [`BATCH`], distinct): calls `visit(level, switch, new)`
    /// once per level for every switch first reached at that level by some sources, `new`
    /// holding bit `i` for `sources[i]` (level 0: each source itself). Returns the switches'
    /// final `seen` bits (bit `i` clear: `sources[i]` does not reach the switch).
    pub(crate) fn run(&mut self, sources: &[u32], mut visit: impl FnMut(u32, u32, &Bits)) -> &[Bits] {
        assert!(sources.len() <= BATCH, "at most {BATCH} sources per batch");
        let full = full_mask(sources.len());
        let adj = self.adj;
        let n = adj.len();
        for x in [&mut self.seen, &mut self.cur, &mut self.next] {
            x.fill([0; LANES]);
        }
        self.frontier.clear();
        for (i, &s) in sources.iter().enumerate() {
            assert!(self.seen[s as usize] == [0; LANES], "switch {s} appears twice in a BFS batch");
            self.seen[s as usize] = single(i);
            self.cur[s as usize] = single(i);
            self.frontier.push(s);
        }
        // Level 0: every source at distance 0 from itself (a switch holds one source).
        for &s in &self.frontier {
            visit(0, s, &self.cur[s as usize]);
        }
        // Links into switches not yet reached by every source.
        let mut remaining: u64 = (0..n as u32).map(|v| adj.degree(v)).sum();
        for &s in &self.frontier {
            if is_zero(&and_not(&full, &self.seen[s as usize])) {
                remaining -= adj.degree(s);
            }
        }
        let mut level = 0u32;
        while !self.frontier.is_empty() {
            level += 1;
            self.next_frontier.clear();
            let frontier_links: u64 = self.frontier.iter().map(|&u| adj.degree(u)).sum();
            if frontier_links * 4 < remaining {
                // Top-down: push the frontier's bits to its neighbours.
                for &u in &self.frontier {
                    let f = self.cur[u as usize];
                    for &v in adj.of(u) {
                        let x = &mut self.next[v as usize];
                        if is_zero(x) {
                            self.next_frontier.push(v);
                        }
                        or_into(x, &f);
                    }
                }
                let mut kept = 0;
                for k in 0..self.next_frontier.len() {
                    let v = self.next_frontier[k];
                    let seen = &mut self.seen[v as usize];
                    let new = and_not(&self.next[v as usize], seen);
                    self.next[v as usize] = new;
                    if !is_zero(&new) {
                        or_into(seen, &new);
                        if is_zero(&and_not(&full, seen)) {
                            remaining -= adj.degree(v);
                        }
                        visit(level, v, &new);
                        self.next_frontier[kept] = v;
                        kept += 1;
                    }
                }
                self.next_frontier.truncate(kept);
            } else {
                // Bottom-up: every switch not reached by all sources pulls from its
                // neighbours.
                for v in 0..n as u32 {
                    let seen = self.seen[v as usize];
                    let missing = and_not(&full, &seen);
                    if is_zero(&missing) {
                        continue;
                    }
                    let mut acc = [0u64; LANES];
                    for &u in adj.of(v) {
                        or_into(&mut acc, &self.cur[u as usize]);
                        if is_zero(&and_not(&missing, &acc)) {
                            break;
                        }
                    }
                    let new = and(&acc, &missing);
                    if !is_zero(&new) {
                        let s = &mut self.seen[v as usize];
                        or_into(s, &new);
                        if is_zero(&and_not(&missing, &new)) {
                            remaining -= adj.degree(v);
                        }
                        self.next[v as usize] = new;
                        visit(level, v, &new);
                        self.next_frontier.push(v);
                    }
                }
            }
            for &u in &self.frontier {
                self.cur[u as usize] = [0; LANES];
            }
            std::mem::swap(&mut self.cur, &mut self.next);
            std::mem::swap(&mut self.frontier, &mut self.next_frontier);
        }
        &self.seen
    }
}

/// The bits of the first `k` sources.
pub(crate) fn full_mask(k: usize) -> Bits {
    let mut m = [0u64; LANES];
    for (w, x) in m.iter_mut().enumerate() {
        let bits = k.saturating_sub(w * 64).min(64);
        *x = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    }
    m
}

pub(crate) fn single(i: usize) -> Bits {
    let mut m = [0u64; LANES];
    m[i / 64] = 1 << (i % 64);
    m
}

#[inline(always)]
fn or_into(a: &mut Bits, b: &Bits) {
    for w in 0..LANES {
        a[w] |= b[w];
    }
}

#[inline(always)]
fn is_zero(a: &Bits) -> bool {
    a.iter().fold(0, |x, &w| x | w) == 0
}

#[inline(always)]
fn and(a: &Bits, b: &Bits) -> Bits {
    std::array::from_fn(|w| a[w] & b[w])
}

#[inline(always)]
fn and_not(a: &Bits, b: &Bits) -> Bits {
    std::array::from_fn(|w| a[w] & !b[w])
}

/// Number of sources in `b`.
#[inline]
pub(crate) fn count(b: &Bits) -> u32 {
    b.iter().map(|w| w.count_ones()).sum()
}

/// Indices of the sources in `b`, in increasing order.
pub(crate) fn ones(b: &Bits) -> impl Iterator<Item = usize> + '_ {
    b.iter().enumerate().flat_map(|(w, &x)| {
        let mut x = x;
        std::iter::from_fn(move || {
            (x != 0).then(|| {
                let i = x.trailing_zeros() as usize;
                x &= x - 1;
                w * 64 + i
            })
        })
    })
}

/// Records in `too_long` the smallest `(level, source)` of a distance over 254 (`new`: the
/// sources of the batch starting at source `first` that reach a switch at `level`).
pub(crate) fn note_too_long(too_long: &mut Option<(u32, SwitchId)>, level: u32, first: usize, new: &Bits) {
    let i = ones(new).next().expect("some source") + first;
    let t = (level, i as SwitchId);
    *too_long = Some(too_long.map_or(t, |x| x.min(t)));
}

/// The error for the smallest distance over 254 noted by [`note_too_long`] in any batch.
pub(crate) fn check_too_long(batches: Vec<Option<(u32, SwitchId)>>) -> Result<(), TopologyError> {
    match batches.into_iter().flatten().min() {
        Some((x, src)) => Err(TopologyError::new(
            "switches",
            format!("switch distance {x} from switch {src} does not fit the distance table (max 254)"),
        )),
        None => Ok(()),
    }
}

/// What [`all_pairs`] learns about a network besides what its visitor collects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PairStats {
    /// Largest finite distance.
    pub(crate) diameter: u32,
    /// The first unreachable `(source, target)` pair in `(source, target)` order, if any.
    pub(crate) first_unreachable: Option<(SwitchId, SwitchId)>,
    /// Unreachable ordered pairs.
    pub(crate) unreachable: u64,
}

impl PairStats {
    fn merge(self, o: PairStats) -> PairStats {
        PairStats {
            diameter: self.diameter.max(o.diameter),
            first_unreachable: match (self.first_unreachable, o.first_unreachable) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
            unreachable: self.unreachable + o.unreachable,
        }
    }

    /// The diameter of a connected network; an error naming the first disconnected pair.
    pub(crate) fn connected_diameter(&self) -> Result<u32, TopologyError> {
        match self.first_unreachable {
            Some((a, b)) => Err(TopologyError::new(
                "kind",
                format!("network is disconnected: no path from switch {a} to {b}"),
            )),
            None => Ok(self.diameter),
        }
    }
}

/// Runs the BFS of every source in `sources` (in batches of [`BATCH`], in parallel): for
/// batch `b` (sources `sources[b * BATCH..]`), `init(b, chunks[b])` makes a per-batch state
/// (`chunks`: per-batch outputs, e.g. the batch's table rows), `visit(state, level, switch,
/// new)` sees every switch first reached at `level` by the batch's sources in `new`, and
/// `finish(state)` turns the state into the batch's result, still on the worker thread.
/// Returns the results in batch order and the distance figures.
pub(crate) fn all_pairs<C: Send, S, R: Send>(
    adj: &Adjacency,
    sources: &[SwitchId],
    chunks: Vec<C>,
    init: impl Fn(usize, C) -> S + Sync,
    visit: impl Fn(&mut S, u32, u32, &Bits) + Sync,
    finish: impl Fn(S) -> R + Sync,
) -> (Vec<R>, PairStats) {
    assert_eq!(chunks.len(), sources.len().div_ceil(BATCH), "one chunk per batch");
    let batches: Vec<(usize, C)> = chunks.into_iter().enumerate().collect();
    let results: Vec<(R, PairStats)> = batches
        .into_par_iter()
        .map_init(
            || MultiBfs::new(adj),
            |bfs, (b, chunk)| {
                let src = &sources[b * BATCH..((b + 1) * BATCH).min(sources.len())];
                let mut state = init(b, chunk);
                let mut diameter = 0;
                let seen = bfs.run(src, |level, v, new| {
                    diameter = level;
                    visit(&mut state, level, v, new)
                });
                let full = full_mask(src.len());
                let mut stats = PairStats { diameter, ..PairStats::default() };
                for (v, s) in seen.iter().enumerate() {
                    let missing = and_not(&full, s);
                    if !is_zero(&missing) {
                        stats.unreachable += count(&missing) as u64;
                        for i in ones(&missing) {
                            let pair = (src[i], v as SwitchId);
                            if stats.first_unreachable.is_none_or(|f| pair < f) {
                                stats.first_unreachable = Some(pair);
                            }
                        }
                    }
                }
                (finish(state), stats)
            },
        )
        .collect();
    let mut stats = PairStats::default();
    let mut out = Vec::with_capacity(results.len());
    for (r, p) in results {
        stats = stats.merge(p);
        out.push(r);
    }
    (out, stats)
}

/// Switch hops from `src` to every switch; `u32::MAX` where unreachable.
pub fn bfs(net: &Network, src: SwitchId) -> Vec<u32> {
    let adj = Adjacency::new(net);
    let mut dist = vec![0; net.num_switches()];
    adj.bfs_into(src, &mut dist, &mut Vec::new());
    dist
}

/// All-pairs switch distances, one byte each (`255` = unreachable): `n^2` bytes.
#[derive(Clone, Debug)]
pub struct DistanceTable {
    n: usize,
    dist: Vec<u8>,
}

impl DistanceTable {
    /// Value stored for unreachable pairs.
    pub const UNREACHABLE: u8 = u8::MAX;

    /// Computes the table (multi-source bit-parallel BFS, batches in parallel). Fails if
    /// some finite distance is 255 or more, or if the table would not fit in memory
    /// addressing.
    pub fn compute(net: &Network) -> Result<Self, TopologyError> {
        let n = net.num_switches();
        let Some(size) = n.checked_mul(n) else {
            return Err(TopologyError::new(
                "switches",
                format!("a distance table for {n} switches does not fit in memory"),
            ));
        };
        let adj = Adjacency::new(net);
        let mut dist = vec![Self::UNREACHABLE; size];
        if n == 0 {
            return Ok(DistanceTable { n, dist });
        }
        let sources: Vec<SwitchId> = (0..n as SwitchId).collect();
        // Each batch writes its sources' rows; the first too long distance it meets is
        // `(level, source)`, the smallest source at the smallest such level.
        let (too_long, _) = all_pairs(
            &adj,
            &sources,
            dist.chunks_mut(BATCH * n).collect(),
            |b, rows| (b * BATCH, rows, None),
            |(first, rows, too_long), level, v, new| {
                if level >= Self::UNREACHABLE as u32 {
                    note_too_long(too_long, level, *first, new);
                    return;
                }
                for i in ones(new) {
                    rows[i * n + v as usize] = level as u8;
                }
            },
            |(_, _, too_long)| too_long,
        );
        check_too_long(too_long)?;
        Ok(DistanceTable { n, dist })
    }

    /// Hops from switch `a` to switch `b` (`255` if unreachable).
    pub fn get(&self, a: SwitchId, b: SwitchId) -> u8 {
        self.dist[a as usize * self.n + b as usize]
    }

    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.n
    }

    /// Memory used by the table in bytes.
    pub fn bytes(&self) -> usize {
        self.dist.len()
    }
}

/// Size and distance figures of a network.
#[derive(Clone, Debug, Serialize)]
pub struct TopologySummary {
    /// Number of switches.
    pub switches: usize,
    /// Number of endpoints.
    pub endpoints: usize,
    /// Bidirectional links between switches (parallel links counted separately).
    pub network_links: usize,
    /// Ports left unconnected.
    pub unconnected_ports: usize,
    /// Smallest switch radix (ports, terminal ports included).
    pub min_radix: usize,
    /// Largest switch radix.
    pub max_radix: usize,
    /// Largest switch-to-switch distance in hops over reachable pairs.
    pub diameter: u32,
    /// Mean switch-to-switch hops over ordered pairs of distinct switches (reachable pairs
    /// only when the network is disconnected; 0 with a single switch).
    pub average_distance: f64,
    /// Mean switch hops over ordered pairs of distinct endpoints (two endpoints on the
    /// same switch count 0; reachable pairs only when disconnected; 0 with < 2 endpoints).
    pub endpoint_average_distance: f64,
    /// Whether every switch reaches every other.
    pub connected: bool,
}

/// Per-batch partial sums of [`summarize`].
#[derive(Clone, Copy, Default)]
struct Partial {
    /// Sum of distances to reachable switches.
    dist_sum: u64,
    /// Reachable ordered pairs of distinct switches.
    pairs: u64,
    /// Sum over reachable switch pairs of `t_a * t_b * d(a, b)`.
    ep_dist_sum: u128,
    /// Ordered pairs of distinct endpoints whose switches reach each other.
    ep_pairs: u128,
}

impl Partial {
    fn merge(self, o: Partial) -> Partial {
        Partial {
            dist_sum: self.dist_sum + o.dist_sum,
            pairs: self.pairs + o.pairs,
            ep_dist_sum: self.ep_dist_sum + o.ep_dist_sum,
            ep_pairs: self.ep_pairs + o.ep_pairs,
        }
    }
}

/// Counts, radix range, diameter and average distances (multi-source bit-parallel BFS
/// from every switch, batches in parallel, `O(n)` memory per thread).
pub fn summarize(net: &Network) -> TopologySummary {
    let n = net.num_switches();
    let adj = Adjacency::new(net);
    let sources: Vec<SwitchId> = (0..n as SwitchId).collect();
    let terminals: Vec<u64> = net.terminals.iter().map(|&t| t as u64).collect();
    // Per batch: the sources grouped by endpoint count, so the endpoint-weighted sums over
    // a set of sources are a few popcounts.
    let batches = sources.len().div_ceil(BATCH);
    let (partials, stats) = all_pairs(
        &adj,
        &sources,
        vec![(); batches],
        |b, ()| {
            let src = &sources[b * BATCH..((b + 1) * BATCH).min(n)];
            let mut classes: Vec<(u64, Bits)> = Vec::new();
            let mut p = Partial::default();
            for (i, &s) in src.iter().enumerate() {
                let t = terminals[s as usize];
                // Endpoint pairs on the same switch: distance 0.
                p.ep_pairs += (t * t.saturating_sub(1)) as u128;
                match classes.iter_mut().find(|(c, _)| *c == t) {
                    Some((_, m)) => m[i / 64] |= 1 << (i % 64),
                    None => classes.push((t, single(i))),
                }
            }
            (p, classes)
        },
        |(p, classes), level, v, new| {
            if level == 0 {
                return;
            }
            let k = count(new) as u64;
            let ts: u128 = classes.iter().map(|(t, m)| *t as u128 * count(&and(new, m)) as u128).sum();
            let w = ts * terminals[v as usize] as u128;
            p.dist_sum += level as u64 * k;
            p.pairs += k;
            p.ep_dist_sum += w * level as u128;
            p.ep_pairs += w;
        },
        |(p, _)| p,
    );
    let total = partials.into_iter().fold(Partial::default(), Partial::merge);
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
    let radix = (0..n as SwitchId).map(|s| net.radix(s));
    TopologySummary {
        switches: n,
        endpoints: net.num_endpoints(),
        network_links: net.num_network_links() / 2,
        unconnected_ports: net.ports.iter().filter(|p| p.target == PortTarget::Unconnected).count(),
        min_radix: radix.clone().min().unwrap_or(0),
        max_radix: radix.max().unwrap_or(0),
        diameter: stats.diameter,
        average_distance: ratio(total.dist_sum as f64, total.pairs as f64),
        endpoint_average_distance: ratio(total.ep_dist_sum as f64, total.ep_pairs as f64),
        connected: stats.unreachable == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{dragonfly, fattree, hyperx, link_classes, rrg, terminal_port, torus, Port, Shape};

    fn small_networks() -> Vec<Network> {
        vec![
            hyperx::build(&hyperx::HyperXParams {
                sides: vec![3, 4],
                endpoints_per_switch: 2,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap(),
            torus::build(&torus::TorusParams {
                sides: vec![5, 3],
                wrap: Some(vec![true, false]),
                endpoints_per_switch: 3,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap(),
            dragonfly::build(&dragonfly::DragonflyParams {
                p: 2,
                a: 4,
                h: 2,
                groups: Some(6),
                arrangement: dragonfly::Arrangement::Palmtree,
                terminal_latency: 1,
                local_latency: 1,
                global_latency: 1,
            })
            .unwrap(),
            fattree::build(&fattree::FatTreeParams { k: 3, n: 3, terminal_latency: 1, link_latency: 1 })
                .unwrap(),
            rrg::build(
                &rrg::RrgParams {
                    switches: 30,
                    degree: 3,
                    endpoints_per_switch: 2,
                    seed: None,
                    terminal_latency: 1,
                    link_latency: 1,
                },
                7,
            )
            .unwrap(),
        ]
    }

    /// Two switches with one endpoint each and no link between them.
    fn disconnected() -> Network {
        let lists = vec![
            vec![terminal_port(), Port { target: PortTarget::Unconnected, class: 1 }],
            vec![terminal_port()],
        ];
        Network::from_port_lists(
            "two islands".into(),
            lists,
            link_classes(&[("terminal", 1), ("network", 1)]),
            Shape::RandomRegular(rrg::RrgShape {
                switches: 2,
                degree: 0,
                endpoints_per_switch: 1,
                seed_used: 0,
            }),
        )
    }

    #[test]
    fn summary_agrees_with_distance_table() {
        for net in small_networks() {
            let table = DistanceTable::compute(&net).unwrap();
            let n = net.num_switches();
            assert_eq!(table.num_switches(), n);
            assert_eq!(table.bytes(), n * n);
            let (mut sum, mut max) = (0u64, 0u8);
            let (mut ep_sum, mut ep_pairs) = (0u64, 0u64);
            for a in 0..n as u32 {
                assert_eq!(table.get(a, a), 0);
                let row = bfs(&net, a);
                for b in 0..n as u32 {
                    let d = table.get(a, b);
                    assert_eq!(d as u32, row[b as usize]);
                    assert_eq!(d, table.get(b, a), "{}: not symmetric", net.name);
                    sum += d as u64;
                    max = max.max(d);
                }
            }
            for &(sa, _) in &net.endpoint_location {
                for &(sb, _) in &net.endpoint_location {
                    ep_sum += table.get(sa, sb) as u64;
                    ep_pairs += 1;
                }
            }
            let e = net.num_endpoints() as u64;
            ep_pairs -= e; // self pairs (distance 0) are excluded
            let s = summarize(&net);
            assert!(s.connected, "{}", net.name);
            assert_eq!(s.diameter, max as u32, "{}", net.name);
            let avg = sum as f64 / (n * (n - 1)) as f64;
            assert!((s.average_distance - avg).abs() < 1e-12, "{}", net.name);
            let ep_avg = ep_sum as f64 / ep_pairs as f64;
            assert!((s.endpoint_average_distance - ep_avg).abs() < 1e-12, "{}", net.name);
            assert_eq!(s.endpoints, net.num_endpoints());
            assert_eq!(s.network_links * 2, net.num_network_links());
        }
    }

    #[test]
    fn summary_is_independent_of_thread_count() {
        let net = &small_networks()[4];
        let run = |threads| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| summarize(net))
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a.average_distance.to_bits(), b.average_distance.to_bits());
        assert_eq!(a.endpoint_average_distance.to_bits(), b.endpoint_average_distance.to_bits());
        assert_eq!(a.diameter, b.diameter);
    }

    /// Networks of more than one BFS batch, with faults and long distances.
    fn larger_networks() -> Vec<Network> {
        let mut rrg = rrg::build(
            &rrg::RrgParams {
                switches: 700,
                degree: 5,
                endpoints_per_switch: 3,
                seed: Some(4),
                terminal_latency: 1,
                link_latency: 1,
            },
            4,
        )
        .unwrap();
        crate::topology::faults::fail_random_links(&mut rrg, 200, 4).unwrap();
        let mut mesh = torus::build(&torus::TorusParams {
            sides: vec![23, 13],
            wrap: Some(vec![false, true]),
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap();
        crate::topology::faults::fail_random_links(&mut mesh, 30, 2).unwrap();
        vec![rrg, mesh]
    }

    #[test]
    fn bit_parallel_bfs_agrees_with_single_source_bfs() {
        for net in larger_networks() {
            let n = net.num_switches();
            let table = DistanceTable::compute(&net).unwrap();
            let (mut sum, mut max) = (0u64, 0u32);
            for a in 0..n as u32 {
                let row = bfs(&net, a);
                for b in 0..n as u32 {
                    assert_eq!(table.get(a, b) as u32, row[b as usize], "{}: {a} -> {b}", net.name);
                    sum += row[b as usize] as u64;
                    max = max.max(row[b as usize]);
                }
            }
            let s = summarize(&net);
            assert_eq!(s.diameter, max);
            assert!((s.average_distance - sum as f64 / (n * (n - 1)) as f64).abs() < 1e-12);
            // Any list of sources, on any number of threads: the same distances.
            let adj = Adjacency::new(&net);
            let sources: Vec<SwitchId> = (0..n as SwitchId).rev().step_by(3).collect();
            let run = |threads| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                pool.install(|| {
                    all_pairs(
                        &adj,
                        &sources,
                        vec![(); sources.len().div_ceil(BATCH)],
                        |b, ()| (b, Vec::new()),
                        |(b, found), level, v, new| {
                            for i in ones(new) {
                                found.push((sources[*b * BATCH + i], v, level));
                            }
                        },
                        |(_, found)| found,
                    )
                })
            };
            let (one, stats) = run(1);
            assert_eq!((one.clone(), stats), run(3));
            assert_eq!(stats.diameter, max);
            assert_eq!(stats.first_unreachable, None);
            let mut found: Vec<_> = one.into_iter().flatten().collect();
            found.sort_unstable();
            assert_eq!(found.len(), sources.len() * n);
            for (a, b, d) in found {
                assert_eq!(table.get(a, b) as u32, d);
            }
        }
    }

    #[test]
    fn unreachable_switches_are_reported() {
        let net = disconnected();
        assert_eq!(bfs(&net, 0), vec![0, u32::MAX]);
        let table = DistanceTable::compute(&net).unwrap();
        assert_eq!(table.get(0, 1), DistanceTable::UNREACHABLE);
        let adj = Adjacency::new(&net);
        let (_, stats) = all_pairs(&adj, &[0, 1], vec![()], |_, ()| (), |_, _, _, _| {}, |_| ());
        assert_eq!(stats.first_unreachable, Some((0, 1)));
        assert_eq!(stats.unreachable, 2);
        assert!(stats.connected_diameter().unwrap_err().message.contains("no path from switch 0 to 1"));
        let s = summarize(&net);
        assert!(!s.connected);
        assert_eq!(s.unconnected_ports, 1);
        assert_eq!((s.min_radix, s.max_radix), (1, 2));
        assert_eq!(s.network_links, 0);
        assert_eq!(s.diameter, 0);
        assert_eq!(s.average_distance, 0.0);
    }

    #[test]
    fn distance_table_rejects_long_paths() {
        let ring = torus::build(&torus::TorusParams {
            sides: vec![600],
            wrap: Some(vec![false]),
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap();
        assert_eq!(summarize(&ring).diameter, 599);
        let e = DistanceTable::compute(&ring).unwrap_err();
        assert!(e.message.contains("254"), "{e}");
    }
}

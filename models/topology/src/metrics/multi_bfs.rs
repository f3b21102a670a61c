//! Multi-source bit-parallel breadth-first search (the MS-BFS of Then et al., "The More the
//! Merrier: Efficient Multi-Source Graph Traversal", PVLDB 8(4), 2014), switching from
//! top-down to bottom-up levels as in Beamer, Asanović, Patterson, "Direction-Optimizing
//! Breadth-First Search", SC'12; and [`all_pairs`], which runs it from every source in
//! parallel batches.

use super::Adjacency;
use crate::{SwitchId, TopologyError};
use rayon::prelude::*;

/// Words per vertex in the multi-source BFS: a batch is `LANES * 64` sources.
pub const LANES: usize = 4;
/// Sources per batch of the multi-source BFS.
pub const BATCH: usize = LANES * 64;
/// One bit per source of a batch.
pub type Bits = [u64; LANES];

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
        let n = adj.switches();
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
        let n = adj.switches();
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
pub(super) fn and(a: &Bits, b: &Bits) -> Bits {
    std::array::from_fn(|w| a[w] & b[w])
}

#[inline(always)]
fn and_not(a: &Bits, b: &Bits) -> Bits {
    std::array::from_fn(|w| a[w] & !b[w])
}

/// Number of sources in `b`.
#[inline]
pub fn count(b: &Bits) -> u32 {
    b.iter().map(|w| w.count_ones()).sum()
}

/// Indices of the sources in `b`, in increasing order.
pub fn ones(b: &Bits) -> impl Iterator<Item = usize> + '_ {
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
pub fn note_too_long(too_long: &mut Option<(u32, SwitchId)>, level: u32, first: usize, new: &Bits) {
    let i = ones(new).next().expect("some source") + first;
    let t = (level, i as SwitchId);
    *too_long = Some(too_long.map_or(t, |x| x.min(t)));
}

/// The error for the smallest distance over 254 noted by [`note_too_long`] in any batch.
pub fn check_too_long(batches: Vec<Option<(u32, SwitchId)>>) -> Result<(), TopologyError> {
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
pub struct PairStats {
    /// Largest finite distance.
    pub diameter: u32,
    /// The first unreachable `(source, target)` pair in `(source, target)` order, if any.
    pub first_unreachable: Option<(SwitchId, SwitchId)>,
    /// Unreachable ordered pairs.
    pub unreachable: u64,
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
    pub fn connected_diameter(&self) -> Result<u32, TopologyError> {
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
pub fn all_pairs<C: Send, S, R: Send>(
    adj: &Adjacency,
    sources: &[SwitchId],
    chunks: Vec<C>,
    init: impl Fn(usize, C) -> S + Sync,
    visit: impl Fn(&mut S, u32, u32, &Bits) + Sync,
    finish: impl Fn(S) -> R + Sync,
) -> (Vec<R>, PairStats) {
    run_batches(adj, sources, chunks, init, visit, finish, &|| false)
}

/// [`all_pairs`] that stops when a stop is asked for ([`base::cancel`]): the batches not
/// yet started are skipped, and the call fails with `Interrupted` naming `what` ("computing
/// the distance rows"). A large network's distances take seconds to minutes; the batches
/// are small enough that a stop is seen within a fraction of a second.
pub fn try_all_pairs<C: Send, S, R: Send>(
    what: &str,
    adj: &Adjacency,
    sources: &[SwitchId],
    chunks: Vec<C>,
    init: impl Fn(usize, C) -> S + Sync,
    visit: impl Fn(&mut S, u32, u32, &Bits) + Sync,
    finish: impl Fn(S) -> R + Sync,
) -> Result<(Vec<R>, PairStats), base::cancel::Interrupted> {
    let out = run_batches(adj, sources, chunks, init, visit, finish, &base::cancel::requested);
    base::cancel::check(what)?;
    Ok(out)
}

/// The batches of [`all_pairs`]; a batch that starts once `stop()` holds is skipped (its
/// state finished without a search).
pub(crate) fn run_batches<C: Send, S, R: Send>(
    adj: &Adjacency,
    sources: &[SwitchId],
    chunks: Vec<C>,
    init: impl Fn(usize, C) -> S + Sync,
    visit: impl Fn(&mut S, u32, u32, &Bits) + Sync,
    finish: impl Fn(S) -> R + Sync,
    stop: &(dyn Fn() -> bool + Sync),
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
                if stop() {
                    return (finish(state), PairStats::default());
                }
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

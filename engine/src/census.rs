//! The census: a run's work and traffic counted as if it were split another way.
//!
//! A run gives the same results on any partitioning, and does the same work: the same
//! events, handled by the same LPs at the same times, and the same messages over the same
//! links. So one run, on however many threads, can count exactly what any other
//! partitioning would have each partition do, window by window: how many events it runs,
//! how many messages (and bytes) it sends to other partitions and to which. That is what
//! a scaling model needs from thousands of ranks, counted on a machine with two cores.
//!
//! A [`CensusLayout`] names a partitioning (a partition per LP) and its window, the
//! lookahead of that partitioning. Every event is counted in window `time / window` of the
//! partition of its LP; every message whose sender and receiver lie in different partitions
//! of the layout is counted in the window of its sending, for the sender, and for the pair.
//! Windows are aligned at multiples of `window`, as the engine's windows are when every
//! cycle has events and checkpoints fall on multiples of the window; a window in which no
//! LP has an event is not counted, as the engine skips it.
//!
//! From the counts, [`CensusCounts`] also derives how long each partition would wait,
//! measured in events (times the cost of an event, a time):
//! - [`wait_events`](CensusCounts::wait_events): under the engine's protocol, where every
//!   window starts when the previous one has ended everywhere, a partition waits in each
//!   window for the busiest partition: the sum over windows of the busiest partition's
//!   events less its own;
//! - [`neighbour_wait_events`](CensusCounts::neighbour_wait_events): under a protocol in
//!   which a partition starts a window as soon as the partitions whose links lead to it
//!   have finished the previous one (what a neighbour-only synchronisation would give), the
//!   time it waits for them.

use crate::queue::Event;
use crate::{LinkSpec, LpId, Time};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A partitioning to count the run for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CensusLayout {
    /// The partition of every LP (numbered from 0; every number up to the largest used).
    pub partition_of: Vec<u32>,
    /// The window, in cycles: the lookahead of this partitioning (the smallest latency of
    /// a link between two of its partitions); 0 is taken as 1.
    pub window: Time,
}

impl CensusLayout {
    /// Number of partitions (the largest partition number plus one).
    pub fn parts(&self) -> usize {
        crate::partition_count(&self.partition_of)
    }
}

/// What a run counted for one [`CensusLayout`], over all its partitions.
///
/// Per-window arrays are row-major: row `k` (window [`windows`](Self::windows)`[k]`) holds
/// one entry per partition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CensusCounts {
    /// Partitions of the layout.
    pub parts: u32,
    /// The layout's window in cycles.
    pub window: Time,
    /// The windows that had events, by number (window `k` covers cycles
    /// `[k * window, (k + 1) * window)`), in increasing order.
    pub windows: Vec<u64>,
    /// Events each partition ran in each window.
    pub events: Vec<u32>,
    /// Messages each partition sent to other partitions in each window.
    pub messages: Vec<u32>,
    /// Their size on the wire (the engine's encoding of the events), in bytes.
    pub bytes: Vec<u64>,
    /// Messages and bytes from one partition to another over the whole run:
    /// `(sender, receiver, messages, bytes)`, sorted.
    pub pairs: Vec<(u32, u32, u64, u64)>,
    /// Links from each partition to other partitions.
    pub cut_links: Vec<u64>,
    /// Partitions with a link to each partition.
    pub neighbours: Vec<u32>,
    /// Per partition: the events the busiest partition ran beyond this one's, summed over
    /// the windows (the wait of the engine's global synchronisation, in events).
    pub wait_events: Vec<u64>,
    /// Per partition: its wait, in events, for the partitions with links to it, when each
    /// partition starts a window once those have finished the previous one.
    pub neighbour_wait_events: Vec<u64>,
}

/// The layouts of a run's census with what every partition thread needs to count them.
pub(crate) struct CensusPlan {
    layouts: Vec<CensusLayout>,
    /// The global id of every LP of every partition of the run, by local index.
    global_of: Vec<Vec<LpId>>,
}

impl CensusPlan {
    /// The plan for `layouts` in a run whose LPs are split by `partition_of`.
    pub(crate) fn new(layouts: &[CensusLayout], partition_of: &[u32]) -> Arc<Self> {
        let mut global_of = vec![Vec::new(); crate::partition_count(partition_of)];
        for (lp, &p) in partition_of.iter().enumerate() {
            global_of[p as usize].push(lp as LpId);
        }
        let layouts = layouts.iter().map(|l| CensusLayout { window: l.window.max(1), ..l.clone() }).collect();
        Arc::new(CensusPlan { layouts, global_of })
    }
}

/// One partition thread's counts for one layout.
#[derive(Default)]
struct Tally {
    parts: usize,
    /// Row of each window seen, and the rows' windows in order of appearance.
    row_of: FxHashMap<u64, u32>,
    windows: Vec<u64>,
    /// The last window looked up and its row (events come in bursts of one window).
    last: Option<(u64, usize)>,
    events: Vec<u32>,
    messages: Vec<u32>,
    bytes: Vec<u64>,
    pairs: FxHashMap<(u32, u32), (u64, u64)>,
}

impl Tally {
    /// The start of window `w`'s row, added if new.
    #[inline]
    fn row(&mut self, w: u64) -> usize {
        if let Some((last, row)) = self.last {
            if last == w {
                return row;
            }
        }
        let next = self.windows.len() as u32;
        let row = *self.row_of.entry(w).or_insert(next) as usize * self.parts;
        if row == self.events.len() {
            self.windows.push(w);
            self.events.resize(row + self.parts, 0);
            self.messages.resize(row + self.parts, 0);
            self.bytes.resize(row + self.parts, 0);
        }
        self.last = Some((w, row));
        row
    }
}

/// A partition thread's census: the counts for every layout.
pub(crate) struct Census {
    plan: Arc<CensusPlan>,
    tallies: Vec<Tally>,
}

impl Census {
    pub(crate) fn new(plan: Arc<CensusPlan>) -> Self {
        let tallies = plan.layouts.iter().map(|l| Tally { parts: l.parts(), ..Tally::default() }).collect();
        Census { plan, tallies }
    }

    /// Counts an event of LP `lp` at time `t`.
    #[inline(never)]
    pub(crate) fn event(&mut self, lp: LpId, t: Time) {
        for (layout, tally) in self.plan.layouts.iter().zip(&mut self.tallies) {
            let part = layout.partition_of[lp as usize] as usize;
            let row = tally.row(t / layout.window);
            tally.events[row + part] += 1;
        }
    }

    /// Counts `event`, sent at time `now` by LP `src` to the LP that is `dst_local` of the
    /// run's partition `dst_partition`.
    #[inline(never)]
    pub(crate) fn message<M: Serialize>(
        &mut self,
        src: LpId,
        dst_partition: u32,
        dst_local: u32,
        now: Time,
        event: &Event<M>,
    ) {
        let dst = self.plan.global_of[dst_partition as usize][dst_local as usize];
        let mut size = None;
        for (layout, tally) in self.plan.layouts.iter().zip(&mut self.tallies) {
            let (from, to) = (layout.partition_of[src as usize], layout.partition_of[dst as usize]);
            if from == to {
                continue;
            }
            let bytes = *size.get_or_insert_with(|| crate::comm::encoded_len(event));
            let row = tally.row(now / layout.window);
            tally.messages[row + from as usize] += 1;
            tally.bytes[row + from as usize] += bytes;
            let pair = tally.pairs.entry((from, to)).or_default();
            pair.0 += 1;
            pair.1 += bytes;
        }
    }
}

/// Adds the partition threads' `censuses` and derives the waits; `links` are all the
/// run's links (a census is taken on one rank, which holds them all).
pub(crate) fn merge(censuses: Vec<Census>, links: &[LinkSpec]) -> Vec<CensusCounts> {
    let Some(first) = censuses.first() else { return Vec::new() };
    let plan = first.plan.clone();
    let mut per_layout: Vec<Vec<Tally>> = plan.layouts.iter().map(|_| Vec::new()).collect();
    for census in censuses {
        for (i, tally) in census.tallies.into_iter().enumerate() {
            per_layout[i].push(tally);
        }
    }
    plan.layouts.iter().zip(per_layout).map(|(layout, tallies)| counts(layout, tallies, links)).collect()
}

/// One layout's counts from the threads' tallies.
fn counts(layout: &CensusLayout, tallies: Vec<Tally>, links: &[LinkSpec]) -> CensusCounts {
    let parts = layout.parts();
    let mut windows: Vec<u64> = tallies.iter().flat_map(|t| t.windows.iter().copied()).collect();
    windows.sort_unstable();
    windows.dedup();
    let row_of: FxHashMap<u64, usize> = windows.iter().enumerate().map(|(i, &w)| (w, i * parts)).collect();
    let cells = windows.len() * parts;
    let (mut events, mut messages, mut bytes) = (vec![0u32; cells], vec![0u32; cells], vec![0u64; cells]);
    let mut pairs: FxHashMap<(u32, u32), (u64, u64)> = FxHashMap::default();
    for t in tallies {
        for (k, w) in t.windows.iter().enumerate() {
            let (from, to) = (k * parts, row_of[w]);
            for i in 0..parts {
                events[to + i] += t.events[from + i];
                messages[to + i] += t.messages[from + i];
                bytes[to + i] += t.bytes[from + i];
            }
        }
        for (pair, (m, b)) in t.pairs {
            let sum = pairs.entry(pair).or_default();
            sum.0 += m;
            sum.1 += b;
        }
    }
    let mut pairs: Vec<(u32, u32, u64, u64)> =
        pairs.into_iter().map(|((s, d), (m, b))| (s, d, m, b)).collect();
    pairs.sort_unstable();

    // The cut links, and the partitions with links into each (CSR, deduplicated).
    let mut cut_links = vec![0u64; parts];
    let mut into: Vec<(u32, u32)> = Vec::new();
    for l in links {
        let (s, d) = (layout.partition_of[l.src as usize], layout.partition_of[l.dst as usize]);
        if s != d {
            cut_links[s as usize] += 1;
            into.push((d, s));
        }
    }
    into.sort_unstable();
    into.dedup();
    let mut starts = vec![0usize; parts + 1];
    for &(d, _) in &into {
        starts[d as usize + 1] += 1;
    }
    for i in 0..parts {
        starts[i + 1] += starts[i];
    }
    let neighbours = (0..parts).map(|r| (starts[r + 1] - starts[r]) as u32).collect();
    let (wait_events, neighbour_wait_events) = waits(&events, parts, &starts, &into);
    CensusCounts {
        parts: parts as u32,
        window: layout.window,
        windows,
        events,
        messages,
        bytes,
        pairs,
        cut_links,
        neighbours,
        wait_events,
        neighbour_wait_events,
    }
}

/// The waits of both protocols (see the module's documentation), from the events per
/// window (`events`, rows of `parts`) and the partitions with links into each
/// (`into[starts[r]..starts[r + 1]]`, as `(r, sender)`).
fn waits(events: &[u32], parts: usize, starts: &[usize], into: &[(u32, u32)]) -> (Vec<u64>, Vec<u64>) {
    let mut global = vec![0u64; parts];
    let mut neighbour = vec![0u64; parts];
    // When each partition finishes its latest window, in events since the start.
    let mut finish = vec![0u64; parts];
    let mut next = vec![0u64; parts];
    for row in events.chunks(parts.max(1)) {
        let busiest = row.iter().copied().max().unwrap_or(0);
        for (r, &e) in row.iter().enumerate() {
            global[r] += u64::from(busiest - e);
            let ready =
                into[starts[r]..starts[r + 1]].iter().map(|&(_, q)| finish[q as usize]).max().unwrap_or(0);
            let start = ready.max(finish[r]);
            neighbour[r] += start - finish[r];
            next[r] = start + u64::from(e);
        }
        std::mem::swap(&mut finish, &mut next);
    }
    (global, neighbour)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_global_wait_is_the_busiest_partitions_surplus() {
        // Two windows of three partitions, no links.
        let events = [4, 1, 2, 0, 3, 3];
        let (global, neighbour) = waits(&events, 3, &[0, 0, 0, 0], &[]);
        assert_eq!(global, vec![3, 3, 2]);
        assert_eq!(neighbour, vec![0, 0, 0], "without links nobody waits for anybody");
    }

    #[test]
    fn a_partition_waits_only_for_those_linked_to_it() {
        // 0 -> 1 -> 2 in a chain; partition 0 is slow in window 0.
        let events = [10, 1, 1, 1, 1, 1];
        let into = [(1, 0), (2, 1)];
        let (_, neighbour) = waits(&events, 3, &[0, 0, 1, 2], &into);
        // Window 1: partition 1 starts when 0 finished (10), having finished at 1: waits 9;
        // partition 2 starts when 1 finished window 0 (1): no wait.
        assert_eq!(neighbour, vec![0, 9, 0]);
    }
}

//! SR: Segment-based Routing. Mejia, Flich, Duato, Reinemo, Skeie, "Segment-Based
//! Routing: An Efficient Fault-Tolerant Routing Algorithm for Meshes and Tori", IPDPS
//! 2006, as the routing survey describes it (Flich et al., IEEE TPDS 23(3), 2012, sections
//! 2 and 4.1): the network is cut into segments, and each segment gets one bidirectional
//! routing restriction placed *locally* inside it, so that each cycle is broken where it
//! is closed. No spanning tree, no virtual channels.
//!
//! Our reading, since the survey gives the rules in outline and the paper was not at hand:
//! * **Segments.** From the starting switch (`routing.sr.root`, default the least
//!   eccentric), the switches are taken in the order they were reached, and each link of
//!   theirs not yet in a segment becomes one:
//!   - a link to a switch already reached is a *unitary* segment;
//!   - otherwise the shortest path from the new neighbour through switches not yet
//!     reached, back to any switch already reached (possibly the one it started from:
//!     then it closes a cycle, the survey's starting segment), is a *regular* segment and
//!     its switches are reached;
//!   - if there is none, the link is a bridge into a part reached only through it: a tree
//!     link, no segment, and its far switch is reached.
//! * **Restrictions.** A segment with switches inside it forbids both turns along the
//!   segment at one of them (the two directions of passing through it); a unitary segment
//!   forbids, at one of its two ends, every turn between its link and the links there
//!   that are in earlier segments (or are tree links).
//! * **Why this is deadlock-free.** The switches inside a segment had no other segment's
//!   links when it was made. Take any cycle of the channel dependency graph (a closed
//!   walk without U-turns) and the latest segment it uses: inside that segment the walk
//!   can only follow the segment, so it passes the restricted switch (or turns at the
//!   restricted end of a unitary link onto an older link: the walk's other links there
//!   are older, being in earlier segments), which is forbidden. Tree links close no
//!   cycle, and a walk over a later tree link would need a later segment to come back.
//!   Routes stay complete: a segment's switches reach its ends without crossing the
//!   restriction, and its ends were connected before. The build checks both anyway.
//! * **Where the restriction goes** is SR's freedom. On networks of up to
//!   [`PLACE_SWITCHES`] switches every choice of each segment, in segment order, is tried
//!   and the one giving the shortest average route (with the restrictions placed so far)
//!   kept (ties: the switch nearest the middle of the segment); above, the middle switch
//!   of a segment and the end of a unitary link with fewer older links.
//!
//! Routes are the shortest legal ones, all listed as candidates (`turns.rs`); the survey
//! balances them with a path selection, here `routing.selection = "balanced"`.

use super::registry::{RootSetting, RoutingEntry, Settings, ROOT_KEYS};
use super::turns::{terminals, total_length, Channels, TurnRouting};
use super::updown::root_or_central;
use super::VcPolicy;
use crate::RoutingError;
use std::collections::VecDeque;
use std::sync::Arc;
use topology::{Network, SwitchId};

/// Largest network on which every placement of each restriction is tried.
pub const PLACE_SWITCHES: usize = 256;

/// The segments of `channels` from `root`, each as its channels in order (one channel:
/// a unitary segment), in the order they were made; and per channel when it was taken
/// (the number of segments and tree links before it).
fn segments(channels: &Channels, n: usize, root: SwitchId) -> (Vec<Vec<u32>>, Vec<u32>) {
    let m = channels.len();
    let mut reached = vec![false; n];
    let mut used = vec![false; m];
    let mut taken_at = vec![u32::MAX; m];
    let mut step = 0u32;
    let mut order = vec![root];
    reached[root as usize] = true;
    let mut segments = Vec::new();
    // BFS scratch: the channel each switch was entered by in the current search.
    let mut via = vec![u32::MAX; n];
    let mut queue = VecDeque::new();
    let mut touched = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let w = order[i];
        i += 1;
        for c in channels.out(w) {
            if used[c as usize] {
                continue;
            }
            let x = channels.head(c);
            let take = |c: u32, used: &mut [bool], taken_at: &mut [u32]| {
                used[c as usize] = true;
                used[channels.reverse(c) as usize] = true;
                taken_at[c as usize] = step;
                taken_at[channels.reverse(c) as usize] = step;
            };
            if reached[x as usize] {
                take(c, &mut used, &mut taken_at);
                segments.push(vec![c]);
                step += 1;
                continue;
            }
            // The shortest way from x over unreached switches and free links back to a
            // reached switch (not over `c` itself).
            queue.clear();
            queue.push_back(x);
            via[x as usize] = c;
            touched.push(x);
            let mut closing = None;
            'bfs: while let Some(u) = queue.pop_front() {
                for d in channels.out(u) {
                    if used[d as usize] || d == channels.reverse(via[u as usize]) {
                        continue;
                    }
                    let y = channels.head(d);
                    if reached[y as usize] {
                        closing = Some(d);
                        break 'bfs;
                    }
                    if via[y as usize] == u32::MAX {
                        via[y as usize] = d;
                        touched.push(y);
                        queue.push_back(y);
                    }
                }
            }
            match closing {
                Some(last) => {
                    let mut path = vec![last];
                    let mut at = channels.tail(last);
                    while at != x {
                        let d = via[at as usize];
                        path.push(d);
                        at = channels.tail(d);
                    }
                    path.push(c);
                    path.reverse();
                    for &d in &path {
                        take(d, &mut used, &mut taken_at);
                    }
                    for &d in &path[..path.len() - 1] {
                        let s = channels.head(d);
                        reached[s as usize] = true;
                        order.push(s);
                    }
                    segments.push(path);
                }
                None => {
                    // A bridge: no segment.
                    take(c, &mut used, &mut taken_at);
                    reached[x as usize] = true;
                    order.push(x);
                }
            }
            step += 1;
            for &s in &touched {
                via[s as usize] = u32::MAX;
            }
            touched.clear();
        }
    }
    (segments, taken_at)
}

/// The turns one placement of a segment's restriction forbids: `at` is the index of the
/// restricted switch inside the segment (after channel `at`), or for a unitary segment 0
/// for its tail end and 1 for its head end. A unitary segment's restriction covers the
/// turns with the links taken before it at that end: a cycle through a later link also
/// runs through a later segment, whose own restriction breaks it.
fn restriction(channels: &Channels, segment: &[u32], at: usize, taken_at: &[u32]) -> Vec<usize> {
    if let [c] = *segment {
        // Every turn onto or off the link at one end, with the older links there.
        let (end_in, end_out) = if at == 0 { (channels.reverse(c), c) } else { (c, channels.reverse(c)) };
        let s = channels.head(end_in);
        let mut turns = Vec::new();
        let older = |x: u32| taken_at[x as usize] < taken_at[c as usize];
        for x in channels.out(s).filter(|&x| x != end_out && older(x)) {
            turns.push(channels.turn(end_in, x));
            turns.push(channels.turn(channels.reverse(x), end_out));
        }
        turns
    } else {
        let (a, b) = (segment[at], segment[at + 1]);
        vec![channels.turn(a, b), channels.turn(channels.reverse(b), channels.reverse(a))]
    }
}

/// How many placements a segment's restriction has.
fn placements(segment: &[u32]) -> usize {
    if segment.len() == 1 {
        2
    } else {
        segment.len() - 1
    }
}

/// SR on `net` from `root` (default: least eccentric switch).
pub fn build(
    net: &Network,
    root: Option<SwitchId>,
    endpoint_switch: &[SwitchId],
) -> Result<TurnRouting, RoutingError> {
    let root = root_or_central(net, root)?;
    let channels = Channels::new(net);
    let terminals = terminals(endpoint_switch);
    let (segments, taken_at) = segments(&channels, net.num_switches(), root);
    let mut allowed = channels.all_turns();
    let search = net.num_switches() <= PLACE_SWITCHES;
    for segment in &segments {
        let options = placements(segment);
        let at = if search && options > 1 {
            (0..options)
                .filter_map(|at| {
                    let mut trial = allowed.clone();
                    for t in restriction(&channels, segment, at, &taken_at) {
                        trial[t] = false;
                    }
                    // Ties: the placement nearest the middle of the segment.
                    let off_centre = (2 * at).abs_diff(options - 1);
                    total_length(&channels, &trial, None, &terminals).map(|sum| (sum, off_centre, at))
                })
                .min()
                .map_or(0, |(_, _, at)| at)
        } else if segment.len() == 1 {
            // The end with fewer turns to forbid (ties: the tail).
            let older = |at| restriction(&channels, segment, at, &taken_at).len();
            usize::from(older(1) < older(0))
        } else {
            (options - 1) / 2
        };
        for t in restriction(&channels, segment, at, &taken_at) {
            allowed[t] = false;
        }
    }
    if let Some(cycle) = channels.find_cycle(&allowed) {
        return Err(RoutingError::algorithm(format!(
            "sr left a dependency cycle of {} turns (a bug: please report the network); another routing avoids it",
            cycle.len()
        )));
    }
    let unitary = segments.iter().filter(|s| s.len() == 1).count();
    let summary = format!(
        "sr: {} segments ({unitary} unitary) from switch {root}, restrictions {}",
        segments.len(),
        if search { "placed where routes grow least" } else { "in the middle" }
    );
    TurnRouting::new(net, channels, &allowed, &terminals, summary)
}

/// `sr` in the routing registry.
pub const SR: RoutingEntry = RoutingEntry {
    name: "sr",
    doc: "SR (Segment-based Routing), our reading: the links cut into segments from a starting switch, one bidirectional turn restriction inside each; shortest legal routes, 1 VC",
    topologies: "any",
    vcs: "1",
    settings: Settings::typed::<RootSetting>(ROOT_KEYS),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| super::turns::state_bytes(size, 1),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        Ok(Arc::new(build(ctx.net, ctx.root(s.root)?, ctx.endpoint_switch)?))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turns::tests::grid;

    /// Every segment adds one independent cycle (a regular one k links and k - 1 new
    /// switches, a unitary one a link), so there are as many as the cycle rank, links -
    /// switches + 1; each link is in at most one; the switches inside a segment are new.
    #[test]
    fn segments_match_the_cycle_rank_and_share_no_link() {
        for (sides, wrap, rank) in
            [(vec![5], true, 1), (vec![5], false, 0), (vec![3, 3], false, 4), (vec![4, 4], true, 17)]
        {
            let net = grid(sides.clone(), wrap);
            let ch = Channels::new(&net);
            let (segments, taken_at) = segments(&ch, net.num_switches(), 0);
            assert_eq!(segments.len(), rank, "{sides:?} wrap {wrap}");
            let mut links = vec![0; ch.len()];
            for segment in &segments {
                for &c in segment {
                    links[c as usize] += 1;
                    links[ch.reverse(c) as usize] += 1;
                }
                for pair in segment.windows(2) {
                    assert_eq!(ch.head(pair[0]), ch.tail(pair[1]), "a segment is a path");
                    // Inside a segment, the switch's other links were taken later.
                    let inside = ch.head(pair[0]);
                    for x in ch.out(inside).filter(|&x| x != pair[1] && x != ch.reverse(pair[0])) {
                        assert!(taken_at[x as usize] > taken_at[pair[1] as usize], "{sides:?}");
                    }
                }
            }
            assert!(links.iter().all(|&k| k <= 1), "{sides:?}");
            assert!(taken_at.iter().all(|&t| t != u32::MAX), "every link taken");
        }
    }
}

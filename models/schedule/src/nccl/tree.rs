//! NCCL's double binary tree all-reduce (`src/graph/trees.cc`, `src/device/all_reduce.h`,
//! `runTreeSplit`).
//!
//! The first tree is a binary tree over the ranks in which leaves and inner nodes alternate
//! (rank 0 its root with one child); the second mirrors it (an even number of ranks) or
//! shifts it by one rank (odd), so that a rank that is a leaf in one tree is an inner node
//! in the other. The first half of the channels run the first tree, the second half the
//! second. On a channel, each chunk is reduced up the tree and broadcast down it: the
//! root receives from its children, reduces and sends the result back down; every other
//! rank runs the two directions as two thread groups, each its own loop over the chunks
//! (the reduction receives from its children and sends to its parent; the broadcast
//! receives from its parent and sends to its children).

use super::pipeline::Channel;
use super::{NcclKind, NcclSettings};
use crate::graph::ScheduleBuilder;

/// Rank `rank`'s place in NCCL's binary tree of `n` ranks rooted at 0: its parent and
/// its children (`ncclGetBtree`).
pub(super) fn btree(n: usize, rank: usize) -> (Option<usize>, [Option<usize>; 2]) {
    let mut bit = 1;
    while bit < n && bit & rank == 0 {
        bit <<= 1;
    }
    if rank == 0 {
        return (None, [None, (n > 1).then_some(bit >> 1)]);
    }
    let mut up = (rank ^ bit) | (bit << 1);
    if up >= n {
        up = rank ^ bit;
    }
    let low = bit >> 1;
    let down0 = (low != 0).then(|| rank - low);
    // The second child: the largest of low, low / 2, ... that stays below n.
    let down1 = std::iter::successors(Some(low), |l| Some(l >> 1))
        .take_while(|&l| l != 0)
        .map(|l| rank + l)
        .find(|&d| d < n);
    (Some(up), [down0, down1])
}

/// Rank `rank`'s place in tree `tree` (0 or 1) of NCCL's double binary tree of `n`
/// ranks (`ncclGetDtree`): the second tree is the first one mirrored (`n` even) or
/// shifted by one rank (`n` odd).
pub(super) fn dtree(n: usize, rank: usize, tree: usize) -> (Option<usize>, [Option<usize>; 2]) {
    if tree == 0 {
        return btree(n, rank);
    }
    let odd = n % 2 == 1;
    let into = |r: usize| if odd { (r + n - 1) % n } else { n - 1 - r };
    let back = |r: usize| if odd { (r + 1) % n } else { n - 1 - r };
    let (up, down) = btree(n, into(rank));
    (up.map(back), down.map(|d| d.map(back)))
}

/// Rank `me`'s place (parent, children; communicator positions) in tree `tree` of channel
/// `channel` when the communicator `ranks` spans several nodes of `node_gpus` GPUs with
/// several of them on each, as NCCL 2.30 builds its trees on NVSwitch nodes with a NIC per
/// GPU (`src/graph/search.cc`'s TREE pattern, `connect.cc`'s `connectTrees`): on every
/// node a chain from GPU `s = channel mod m` (`m` the node's GPUs in the communicator, by
/// local index) through `s + 1, ..., s - 1`; GPU `s` alone talks to the network, to the
/// GPU `s` of its parent and child nodes in NCCL's double binary tree over the nodes
/// (`ncclGetDtree` of node indices). `None` when the communicator's ranks are the tree's
/// nodes (one node, or one GPU per node), as [`super::ring::ring_order`] decides.
pub(super) fn node_tree(
    ranks: &[u32],
    node_gpus: u32,
    channel: u32,
    tree: usize,
    me: usize,
) -> Option<(Option<usize>, Vec<usize>)> {
    let order = super::ring::ring_order(ranks, node_gpus, 0)?;
    // ring_order's checks passed: several nodes, `m` GPUs on each, nodes in order of first
    // appearance; recover them from its node-major order.
    let m = ranks.iter().filter(|&&r| r / node_gpus == order[0] / node_gpus).count();
    let nodes = ranks.len() / m;
    let mut members: Vec<Vec<u32>> = order.chunks(m).map(|c| c.to_vec()).collect();
    for node in &mut members {
        node.sort_unstable_by_key(|&r| r % node_gpus);
    }
    let s = channel as usize % m;
    let chain = |n: usize, i: usize| members[n][(s + i) % m];
    let position = |r: u32| ranks.iter().position(|&x| x == r).expect("a member");
    let me_rank = ranks[me];
    let n = members.iter().position(|node| node.contains(&me_rank)).expect("on a node");
    let i = (0..m).find(|&i| chain(n, i) == me_rank).expect("in its node's chain");
    if i > 0 {
        let children = if i + 1 < m { vec![position(chain(n, i + 1))] } else { Vec::new() };
        return Some((Some(position(chain(n, i - 1))), children));
    }
    let (up, down) = dtree(nodes, n, tree);
    let mut children: Vec<usize> = down.iter().flatten().map(|&c| position(chain(c, 0))).collect();
    children.push(position(chain(n, 1)));
    Some((up.map(|p| position(chain(p, 0))), children))
}

/// Rank `me`'s part of an all-reduce of `bytes` bytes on channel `channel` of `channels`
/// (`ranks`: the communicator's members).
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_tree(
    b: &mut ScheduleBuilder,
    ch: &mut Channel,
    settings: &NcclSettings,
    ranks: &[u32],
    me: usize,
    channel: u32,
    chunk: u64,
    bytes: u64,
) {
    let tree = usize::from(channel >= settings.channels.div_ceil(2));
    let (up, down) = match node_tree(ranks, settings.node_gpus, channel, tree, me) {
        Some(place) => place,
        None => {
            let (up, down) = dtree(ranks.len(), me, tree);
            (up, down.iter().flatten().copied().collect())
        }
    };
    let children: Vec<u32> = down.iter().map(|&c| ranks[c]).collect();
    let wire = |b: u64| settings.protocol.wire_bytes(b);
    let mut chunks = Vec::new();
    let mut offset = 0;
    while offset < bytes {
        chunks.push(chunk.min(bytes - offset));
        offset += chunk;
    }
    match up {
        None => {
            // The root reduces what its children send and sends the result back down.
            let from: Vec<usize> = children.iter().map(|&c| ch.from(c)).collect();
            let to: Vec<usize> = children.iter().map(|&c| ch.to(c)).collect();
            let gpu = ch.chain();
            for &c in &chunks {
                ch.slice(b, gpu, &from, &to, wire(c));
            }
        }
        Some(parent) => {
            let parent = ranks[parent];
            let (up_from, up_to): (Vec<usize>, Vec<usize>) =
                (children.iter().map(|&c| ch.from(c)).collect(), vec![ch.to(parent)]);
            let (down_from, down_to): (Vec<usize>, Vec<usize>) =
                (vec![ch.from(parent)], children.iter().map(|&c| ch.to(c)).collect());
            let (reduce, broadcast) = (ch.chain(), ch.chain());
            for &c in &chunks {
                ch.slice(b, reduce, &up_from, &up_to, wire(c));
            }
            for &c in &chunks {
                ch.slice(b, broadcast, &down_from, &down_to, wire(c));
            }
        }
    }
}

/// The tree's chunk: one FIFO step of data; LL128 halves it while the channel's part is
/// small against the tree's depth (`calcCollChunking`, one rank per node).
pub(super) fn tree_chunk(settings: &NcclSettings, ranks: usize, channel_bytes: u64) -> u64 {
    let mut chunk = settings.chunk(NcclKind::AllReduce);
    if settings.protocol == super::Protocol::Ll128 {
        let steps = 1.0 + (ranks as f64).log2().floor() + 0.1;
        while ((channel_bytes / chunk) as f64) < steps * 64.0 && chunk > 131_072 {
            chunk /= 2;
        }
        while ((channel_bytes / chunk) as f64) < steps * 16.0 && chunk > 32_768 {
            chunk /= 2;
        }
    }
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_tree_is_nccl_s_illustration() {
        // trees.cc's picture for 14 ranks: 0 -> 8; 8 -> 4, 12; 4 -> 2, 6; 12 -> 10, 13;
        // 2 -> 1, 3; 6 -> 5, 7; 10 -> 9, 11; odd ranks are leaves.
        let t = |r| btree(14, r);
        assert_eq!(t(0), (None, [None, Some(8)]));
        assert_eq!(t(8), (Some(0), [Some(4), Some(12)]));
        assert_eq!(t(12), (Some(8), [Some(10), Some(13)]));
        assert_eq!(t(13), (Some(12), [None, None]));
        assert_eq!(t(2), (Some(4), [Some(1), Some(3)]));
        assert_eq!(t(11), (Some(10), [None, None]));
    }

    #[test]
    fn every_rank_has_one_parent_and_the_trees_swap_leaves_and_inner_ranks() {
        for n in 2..40 {
            for tree in 0..2 {
                let mut parents = vec![0; n];
                for r in 0..n {
                    for c in dtree(n, r, tree).1.iter().flatten() {
                        assert_eq!(dtree(n, *c, tree).0, Some(r), "n {n} tree {tree}");
                        parents[*c] += 1;
                    }
                }
                for (r, &p) in parents.iter().enumerate() {
                    assert_eq!(dtree(n, r, tree).0.is_none(), p == 0, "n {n} tree {tree} rank {r}");
                }
                assert_eq!(parents.iter().filter(|&&p| p == 0).count(), 1, "one root, n {n}");
                assert!(parents.iter().all(|&p| p <= 1));
            }
            // With an even n, a leaf of one tree is an inner rank of the other.
            if n % 2 == 0 && n >= 4 {
                let leaf = |r, t| dtree(n, r, t).1 == [None, None];
                assert!((0..n).all(|r| !(leaf(r, 0) && leaf(r, 1))), "n {n}");
            }
        }
    }

    #[test]
    fn trees_across_nodes_chain_each_node_from_its_channel_s_gpu() {
        // 5 nodes of 4 GPUs: every rank one parent but the root, the heads GPU s of their
        // nodes, every edge between nodes joining two GPUs s.
        let g = 4u32;
        let ranks: Vec<u32> = (0..20).collect();
        for channel in 0..8 {
            for tree in 0..2 {
                let s = channel % g;
                let mut parents = [0; 20];
                let mut roots = 0;
                for me in 0..20 {
                    let (up, down) = node_tree(&ranks, g, channel, tree, me).expect("nodes");
                    roots += usize::from(up.is_none());
                    for &c in &down {
                        parents[c] += 1;
                        assert_eq!(node_tree(&ranks, g, channel, tree, c).unwrap().0, Some(me));
                        if c as u32 / g != me as u32 / g {
                            assert_eq!(
                                (me as u32 % g, c as u32 % g),
                                (s, s),
                                "an edge between nodes off rail {s}"
                            );
                        }
                    }
                }
                assert_eq!(roots, 1);
                assert_eq!(parents.iter().filter(|&&p| p == 1).count(), 19);
            }
        }
        assert_eq!(node_tree(&ranks, 1, 0, 0, 3), None);
    }
}

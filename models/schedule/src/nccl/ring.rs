//! NCCL's ring algorithms: per channel, the chunks a rank sends to the next rank and
//! receives from the previous one (`src/device/{all_reduce,all_gather,reduce_scatter,
//! broadcast,reduce}.h`, `runRing`).

use super::pipeline::Channel;
use super::{NcclKind, NcclSettings};
use crate::graph::ScheduleBuilder;

/// What a rank does with one chunk of a ring step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Sends its own data to the next rank.
    Send,
    /// Receives from the previous rank and sends on (reduced or copied).
    RecvSend,
    /// Receives from the previous rank.
    Recv,
}

/// The ring of channel `channel` over `ranks` (a communicator's ranks, global numbers)
/// when they span several nodes of `node_gpus` GPUs with several of them on each, as
/// NCCL 2.30's topology search builds it on NVSwitch nodes with a NIC per GPU (the
/// `crossNic = 2` rings of `src/graph/search.cc`, stitched by `connect.cc`); `None` when
/// the communicator's rank order is the ring (one node, or one GPU per node).
///
/// Nodes come in the order their first rank appears; a node's `m` GPUs in the
/// communicator are taken by local index. Channel `c` is search channel `s = c mod m`
/// (one per NIC). On an even node, search channel `g = s` enters the node at its GPU `g`
/// and, for even `g`, goes down (`g, g - 1, ..., g + 1`), leaving by GPU `g + 1`'s NIC; for
/// odd `g`, up (`g, g + 1, ..., g - 1`), leaving by GPU `g - 1`'s. Odd nodes take the
/// paired channel `s ^ 1` (with `m` odd, the last channel has no pair and goes down on
/// every node, its hops between nodes crossing rails: NCCL would send them through the
/// next GPU's NIC by PXN, which is not modelled). So each hop between nodes joins two GPUs
/// of one local index: one rail, alternating between `s` and its pair, but the hop back to
/// the first node when the node count is odd.
pub fn ring_order(ranks: &[u32], node_gpus: u32, channel: u32) -> Option<Vec<u32>> {
    if node_gpus <= 1 {
        return None;
    }
    let mut nodes: Vec<(u32, Vec<u32>)> = Vec::new();
    for &r in ranks {
        let node = r / node_gpus;
        match nodes.iter_mut().find(|(n, _)| *n == node) {
            Some((_, members)) => members.push(r),
            None => nodes.push((node, vec![r])),
        }
    }
    let m = nodes[0].1.len();
    if nodes.len() < 2 || m < 2 || nodes.iter().any(|(_, members)| members.len() != m) {
        return None;
    }
    let s = channel as usize % m;
    let mut order = Vec::with_capacity(ranks.len());
    for (n, (_, members)) in nodes.iter_mut().enumerate() {
        members.sort_unstable_by_key(|&r| r % node_gpus);
        let paired = s ^ 1 < m;
        let g = if n % 2 == 1 && paired { s ^ 1 } else { s };
        let down = g % 2 == 0 || !paired;
        order.extend((0..m).map(|i| members[if down { (g + m - i) % m } else { (g + i) % m }]));
    }
    Some(order)
}

/// Rank `me`'s chunks on one channel of `bytes` bytes, in order: `(role, bytes)`.
pub(super) fn ring_program(
    kind: NcclKind,
    n: usize,
    me: usize,
    root: usize,
    bytes: u64,
    chunk: u64,
) -> Vec<(Role, u64)> {
    let mut steps = Vec::new();
    match kind {
        NcclKind::AllReduce => {
            let loop_bytes = n as u64 * chunk;
            let mut offset = 0;
            while offset < bytes {
                let rest = bytes - offset;
                let chunk =
                    if rest < loop_bytes { rest.div_ceil(n as u64).next_multiple_of(16) } else { chunk };
                let size = |c: usize| chunk.min(rest.saturating_sub(c as u64 * chunk));
                let m = |r: usize| r % n;
                steps.push((Role::Send, size(m(me + n - 1))));
                for j in 2..n {
                    steps.push((Role::RecvSend, size(m(me + n - j))));
                }
                steps.push((Role::RecvSend, size(me)));
                for j in 1..n - 1 {
                    steps.push((Role::RecvSend, size(m(me + n - j))));
                }
                steps.push((Role::Recv, size(m(me + 1))));
                offset += loop_bytes;
            }
        }
        NcclKind::AllGather | NcclKind::ReduceScatter => {
            let mut offset = 0;
            while offset < bytes {
                let size = chunk.min(bytes - offset);
                steps.push((Role::Send, size));
                steps.extend(std::iter::repeat_n((Role::RecvSend, size), n - 2));
                steps.push((Role::Recv, size));
                offset += chunk;
            }
        }
        NcclKind::Broadcast | NcclKind::Reduce => {
            // Broadcast flows from the root; reduce flows to it, from the rank after it.
            let (first, last) = match kind {
                NcclKind::Broadcast => (root, (root + n - 1) % n),
                _ => ((root + 1) % n, root),
            };
            let role = if me == first {
                Role::Send
            } else if me == last {
                Role::Recv
            } else {
                Role::RecvSend
            };
            let mut offset = 0;
            while offset < bytes {
                steps.push((role, chunk.min(bytes - offset)));
                offset += chunk;
            }
        }
    }
    steps
}

/// Rank `me`'s part of `kind` on one ring channel of `bytes` bytes (`ranks` in ring
/// order).
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_ring(
    b: &mut ScheduleBuilder,
    ch: &mut Channel,
    kind: NcclKind,
    settings: &NcclSettings,
    ranks: &[u32],
    me: usize,
    root: usize,
    bytes: u64,
) {
    let n = ranks.len();
    let (prev, next) = (ch.from(ranks[(me + n - 1) % n]), ch.to(ranks[(me + 1) % n]));
    let gpu = ch.chain();
    let mut slices = Vec::new();
    for (role, chunk) in ring_program(kind, n, me, root, bytes, settings.chunk(kind)) {
        let (from, to): (&[usize], &[usize]) = match role {
            Role::Send => (&[], &[next]),
            Role::RecvSend => (&[prev], &[next]),
            Role::Recv => (&[prev], &[]),
        };
        settings.slices(kind, chunk, &mut slices);
        for &slice in &slices {
            ch.slice(b, gpu, from, to, settings.protocol.wire_bytes(slice));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ring_allreduce_moves_2_n_minus_1_chunks_of_a_loop() {
        // 4 ranks, 4 chunks of 100 bytes: 6 steps, every chunk once per reduce and copy.
        let p = ring_program(NcclKind::AllReduce, 4, 1, 0, 400, 2 << 20);
        let roles: Vec<Role> = p.iter().map(|s| s.0).collect();
        use Role::*;
        assert_eq!(roles, vec![Send, RecvSend, RecvSend, RecvSend, RecvSend, RecvSend, Recv]);
        assert!(p.iter().all(|s| s.1 == 112 || s.1 == 64), "{p:?}");
        // What a rank sends at a step, the next receives at the next step.
        for me in 0..4 {
            let mine = ring_program(NcclKind::AllReduce, 4, me, 0, 1000, 96);
            let next = ring_program(NcclKind::AllReduce, 4, (me + 1) % 4, 0, 1000, 96);
            let sends: Vec<u64> = mine.iter().filter(|s| s.0 != Recv).map(|s| s.1).collect();
            let recvs: Vec<u64> = next.iter().filter(|s| s.0 != Send).map(|s| s.1).collect();
            assert_eq!(sends, recvs);
        }
    }
}

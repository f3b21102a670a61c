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

//! NCCL's point-to-point operations: sends and receives grouped between `ncclGroupStart`
//! and `ncclGroupEnd`, and all-to-all as such a group (`src/enqueue.cc`
//! `scheduleP2pTasksToPlan`, `addP2pToPlan`, `ncclAddWorkBatchToPlan`; `src/init.cc`'s
//! peer schedule; `src/graph/paths.cc`'s p2p channels), for ranks that are one GPU each on
//! their own node.
//!
//! - **Rounds.** A rank meets its peers in rounds: in round `r` it sends to `me + d_r` and
//!   receives from `me - d_r` (mod n), the deltas `d_r` running through `(k^2 + k) / 2`
//!   modulo the power of two at or above n, those below n kept (0, 1, 3, 6, 10, 15, 5, ...
//!   for 16 ranks). A second send to the same peer waits for the next pass (epoch).
//! - **Channels.** p2p runs on the communicator's channels rounded up to a power of two
//!   (2 by default). An operation is striped over one channel, or two for a large one
//!   when the communicator is small: parts of up to 128 KiB (`NCCL_P2P_NET_CHUNKSIZE`),
//!   at least 64 KiB each. Round `r`'s part `k` runs on channel `(reverse(r) + k) mod
//!   channels`.
//! - **Batches.** A channel runs up to 8 operations at once: those of one pass whose rounds
//!   fall in the same group of 8. Its batches run one after the other; within one, every
//!   operation's send and receive go at once, each on its own warps.
//! - **Chunks.** Over the network, Simple moves 128 KiB steps, cut to a quarter for a
//!   message under one step and to half under 8 steps; a message of at most 16 KiB per
//!   channel goes in LL (64 KiB steps carrying half their bytes). Every chunk goes through
//!   the connection's FIFO of 8 slots, posted by the receiver as for collectives.

use super::pipeline::{self, Channel};
use super::{Protocol, NCCL_STEPS};
use crate::graph::{OpId, ScheduleBuilder};
use crate::Comm;

/// NCCL's chunk of point-to-point data over the network (`NCCL_P2P_NET_CHUNKSIZE`).
pub const P2P_CHUNK: u64 = 128 << 10;

/// The largest message per channel that goes in LL (`NCCL_P2P_LL_THRESHOLD`).
pub const P2P_LL_THRESHOLD: u64 = 16 << 10;

/// Operations a channel runs at once (`NCCL_MAX_DEV_WORK_P2P_PER_BATCH`).
pub const P2P_PER_BATCH: usize = 8;

/// One send or receive of a group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct P2p {
    /// The peer's comm rank.
    pub peer: usize,
    /// Bytes.
    pub bytes: u64,
    /// A send (else a receive).
    pub send: bool,
}

/// How NCCL runs a group of point-to-point operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct P2pSettings {
    /// The p2p channels (a power of two; the communicator's channels rounded up).
    pub channels: u32,
    /// The launch latency, in the unit of the schedule's `calc`s.
    pub launch: u64,
    /// The GPU's latency per chunk, in the same unit.
    pub hop: u64,
}

impl P2pSettings {
    /// NCCL's defaults for a communicator of `channels` channels, latencies in ns (the
    /// ring's in Simple: NCCL's tuning model has none for p2p).
    pub fn new(channels: u32) -> P2pSettings {
        P2pSettings {
            channels: channels.max(1).next_power_of_two(),
            launch: Protocol::Simple.launch_ns(super::Algorithm::Ring),
            hop: Protocol::Simple.hop_ns(super::Algorithm::Ring),
        }
    }
}

/// The deltas of NCCL's peer schedule for `n` ranks, one per round: round `r` sends to
/// `me + d` and receives from `me - d`.
pub fn peer_deltas(n: usize) -> Vec<usize> {
    let pow2 = n.next_power_of_two();
    let mut deltas = Vec::with_capacity(n);
    let (mut k, mut delta) = (0usize, 0usize);
    loop {
        if delta < n {
            deltas.push(delta);
        }
        k += 1;
        delta = (delta + k) & (pow2 - 1);
        if k == pow2 {
            break;
        }
    }
    deltas
}

/// `x`'s lowest `bits` bits in reverse order.
fn reverse_bits(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

/// The channels (parts) an operation of `bytes` bytes is striped over among
/// `per_peer` at most, on a communicator of `n` ranks and `channels` p2p channels.
fn parts(bytes: u64, n: usize, channels: u32, per_peer: u32) -> u32 {
    if bytes == 0 {
        return 1;
    }
    let mut least = per_peer;
    while least as usize * n > channels as usize && least > 1 {
        least /= 2;
    }
    let (min_part, max_part) = (P2P_CHUNK / 2, P2P_CHUNK);
    let mut parts = u64::from(least).min(bytes.div_ceil(min_part)) as u32;
    let mut part = min_part.max(bytes.div_ceil(u64::from(parts)));
    while part > max_part && parts <= per_peer / 2 {
        parts *= 2;
        part = bytes.div_ceil(u64::from(parts));
    }
    parts
}

/// The channels each peer gets at most: 2 over the network, halved until every peer of a
/// batch group fits the p2p channels.
fn per_peer(n: usize, channels: u32) -> u32 {
    let mut per_peer = 2u32;
    while per_peer as usize * n.div_ceil(P2P_PER_BATCH) > channels as usize && per_peer > 1 {
        per_peer /= 2;
    }
    per_peer
}

/// The wire bytes of the chunks of a part of `bytes` bytes of an operation of `total`
/// bytes on `parts` channels.
fn chunks(total: u64, parts: u32, bytes: u64, out: &mut Vec<u64>) {
    out.clear();
    let ll = total <= u64::from(parts) * P2P_LL_THRESHOLD;
    let step = if ll { Protocol::Ll.default_buffer() / u64::from(NCCL_STEPS) } else { P2P_CHUNK };
    let mut chunk = step;
    if !ll && total < step {
        chunk /= 4;
    } else if total < 8 * step {
        chunk /= 2;
    }
    let (data, protocol) = if ll { (chunk / 2, Protocol::Ll) } else { (chunk, Protocol::Simple) };
    if bytes == 0 {
        out.push(0);
        return;
    }
    let mut offset = 0;
    while offset < bytes {
        let b = data.min(bytes - offset);
        out.push(protocol.wire_bytes(b));
        offset += b;
    }
}

/// One operation placed: its round, pass, peer and direction, bytes.
struct Placed {
    round: usize,
    pass: usize,
    op: P2p,
}

/// Appends comm rank `me`'s group of point-to-point operations `ops` on `comm` to the
/// builder's current rank; everything starts after `after`. Every rank's group must pair
/// up: a send of `b` bytes to a peer for each receive of `b` bytes there, in the same
/// order per peer. A send to oneself pairs with a receive from oneself and is a local
/// copy. Tags: `tag << 8 | channel << 1 | record`, as [`super::emit_nccl`]. Returns the
/// op that ends when the group has, or `None` if it has nothing to do.
///
/// # Panics
/// If a peer is not below the communicator's size or `tag` is 2^24 or more.
pub fn emit_nccl_group(
    b: &mut ScheduleBuilder,
    ops: &[P2p],
    settings: &P2pSettings,
    comm: &Comm,
    me: usize,
    tag: u32,
    after: Option<OpId>,
) -> Option<OpId> {
    let n = comm.size();
    assert!(ops.iter().all(|o| o.peer < n), "a peer beyond the communicator's {n} ranks");
    assert!(tag < 1 << 24, "tag {tag} leaves no room for the channel");
    let deltas = peer_deltas(n);
    let mut round_of = vec![0; n];
    for (r, &d) in deltas.iter().enumerate() {
        round_of[d] = r;
    }
    // Each operation's round and pass (its index among this direction's operations
    // with the same peer); local copies need no network.
    let mut seen = vec![[0usize; 2]; n];
    let mut placed: Vec<Placed> = Vec::new();
    for &op in ops.iter().filter(|o| o.peer != me) {
        let delta = if op.send { (op.peer + n - me) % n } else { (me + n - op.peer) % n };
        let pass = &mut seen[op.peer][usize::from(op.send)];
        placed.push(Placed { round: round_of[delta], pass: *pass, op });
        *pass += 1;
    }
    if placed.is_empty() {
        return None;
    }
    placed.sort_by_key(|p| (p.pass, p.round, !p.op.send));
    let start = pipeline::launch(b, settings.launch, after);
    let channels = settings.channels;
    let per_peer = per_peer(n, channels);
    let bits = channels.trailing_zeros();
    let mut lanes: Vec<Channel> = (0..channels)
        .map(|c| Channel::new(comm.id, tag, c, NCCL_STEPS as usize, settings.hop, start))
        .collect();
    // Per channel: the batch running (its pass and group of rounds), its chains, and the
    // op the next batch waits for.
    let mut batch: Vec<Option<(usize, usize)>> = vec![None; channels as usize];
    let mut running: Vec<Vec<usize>> = vec![Vec::new(); channels as usize];
    let mut gate: Vec<OpId> = vec![start; channels as usize];
    let mut wire = Vec::new();
    for p in &placed {
        let nparts = parts(p.op.bytes, n, channels, per_peer);
        let base = reverse_bits(p.round, bits);
        let peer = comm.ranks[p.op.peer];
        for part in 0..nparts {
            let c = (base + part as usize) & (channels as usize - 1);
            let key = (p.pass, p.round / P2P_PER_BATCH);
            if batch[c] != Some(key) {
                // A new batch on this channel: it starts when the previous one has ended.
                if batch[c].is_some() {
                    let join = b.calc(0);
                    for &chain in &running[c] {
                        if let Some(op) = lanes[c].chain_end(chain) {
                            b.requires(join, op);
                        }
                    }
                    gate[c] = join;
                    running[c].clear();
                }
                batch[c] = Some(key);
            }
            let share =
                p.op.bytes / u64::from(nparts) + u64::from(u64::from(part) < p.op.bytes % u64::from(nparts));
            chunks(p.op.bytes, nparts, share, &mut wire);
            let lane = &mut lanes[c];
            let chain = lane.chain_after(gate[c]);
            running[c].push(chain);
            let conn = if p.op.send { lane.to(peer) } else { lane.from(peer) };
            for &w in &wire {
                if p.op.send {
                    lane.slice(b, chain, &[], &[conn], w);
                } else {
                    lane.slice(b, chain, &[conn], &[], w);
                }
            }
        }
    }
    let mut ends = Vec::new();
    for lane in lanes {
        lane.ends(&mut ends);
    }
    Some(pipeline::join(b, start, &ends))
}

/// Comm rank `me`'s part of NCCL's all-to-all of `bytes` per pair on `comm`: a group of a
/// send to and a receive from every other member (see [`emit_nccl_group`]).
pub fn emit_nccl_all_to_all(
    b: &mut ScheduleBuilder,
    bytes: u64,
    settings: &P2pSettings,
    comm: &Comm,
    me: usize,
    tag: u32,
    after: Option<OpId>,
) -> Option<OpId> {
    let ops: Vec<P2p> = (0..comm.size())
        .filter(|&peer| peer != me)
        .flat_map(|peer| [P2p { peer, bytes, send: true }, P2p { peer, bytes, send: false }])
        .collect();
    emit_nccl_group(b, &ops, settings, comm, me, tag, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_schedule_is_nccl_s_quadratic_walk() {
        assert_eq!(peer_deltas(16), vec![0, 1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8]);
        for n in 1..70 {
            let mut d = peer_deltas(n);
            assert_eq!(d.len(), n, "every peer once, n {n}");
            d.sort();
            assert_eq!(d, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn large_messages_stripe_over_two_channels_only_on_small_communicators() {
        assert_eq!(per_peer(8, 2), 2);
        assert_eq!(per_peer(128, 2), 1);
        assert_eq!(parts(1 << 20, 2, 2, 2), 2);
        assert_eq!(parts(1 << 20, 128, 2, 1), 1);
        assert_eq!(parts(100, 2, 2, 2), 1);
        assert_eq!(parts(0, 2, 2, 2), 1);
    }

    #[test]
    fn chunks_follow_the_size_of_the_message() {
        let mut v = Vec::new();
        chunks(1 << 20, 1, 1 << 20, &mut v);
        assert_eq!(v, vec![128 << 10; 8], "8 steps or more: whole steps");
        chunks(300_000, 1, 300_000, &mut v);
        assert_eq!(v.len(), 5, "under 8 steps: half steps of 64 KiB");
        chunks(100_000, 1, 100_000, &mut v);
        assert_eq!(v, vec![32768, 32768, 32768, 1696], "under a step: quarter steps");
        chunks(10_000, 1, 10_000, &mut v);
        assert_eq!(v, vec![20_000], "LL: half its lines carry data");
    }
}

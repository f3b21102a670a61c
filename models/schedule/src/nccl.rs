//! NCCL's ring collectives as generators of [`Schedule`](crate::Schedule) graphs: all-reduce,
//! all-gather, reduce-scatter, broadcast and reduce, with NCCL's channels, its chunks and
//! slices, its three protocols and the flow control of its network transport.
//!
//! Facts from NCCL 2.2x (`src/device/{all_reduce,all_gather,reduce_scatter,broadcast,
//! reduce}.h`, `src/device/prims_simple.h`, `src/enqueue.cc`, `src/init.cc`,
//! `src/graph/tuning.cc`, `src/transport/net.cc`, `src/transport/net_ib/`), read at
//! commit 5067397c of NVIDIA/nccl:
//!
//! - **Channels.** A collective's buffer is split over `channels` channels, each a ring
//!   over the communicator in rank order with its own connections; channels run in
//!   parallel. The split is even, in the protocol's grains (512 bytes for Simple, 16 for
//!   LL, 1,920 for LL128); NCCL's scheduler, which packs several collectives into
//!   channels by traffic, gives the same split to a collective alone, up to a grain.
//! - **Chunks and loops.** A channel's part is cut into loops; in a loop each ring step
//!   moves one chunk. All-reduce: `2 (n - 1)` steps over `n` chunks per loop (a send,
//!   `n - 2` receive-reduce-sends, a receive-reduce-copy-send, `n - 2` receive-copy-sends,
//!   a receive); the last loop's chunk is `ceil(rest / n)` rounded up to 16 bytes.
//!   All-gather and reduce-scatter: `n - 1` steps of one chunk of each rank's part.
//!   Broadcast and reduce: a chain from the root (to the root), one chunk per loop.
//! - **Steps and slices.** Each connection has a FIFO of `NCCL_STEPS` = 8 slots of
//!   `buffer / 8` bytes (`NCCL_BUFFSIZE` = 4 MiB for Simple). Simple's ring all-reduce,
//!   all-gather and reduce-scatter use chunks of 4 steps sent as 2 slices of 2 steps
//!   (`*_CHUNKSTEPS`, `*_SLICESTEPS`); broadcast and reduce chunks of one step in one
//!   slice. A slice of a chunk of `e` bytes is `max(ceil(e / 32) * 16, slice / 32)` bytes
//!   (`genericOp`, with one-byte elements); slices a chunk does not fill still go, empty.
//!   LL and LL128 send a chunk of one step as one slice.
//! - **Protocols.** Simple sends the data as it is; LL sends 8-byte lines of 4 data bytes
//!   and a flag (its chunk is half a step, its wire twice the data); LL128 sends 128-byte
//!   lines of 120 data bytes. Buffers: Simple 4 MiB, LL 512 KiB, LL128 4,800 KiB.
//! - **Flow control over the network.** The receiver's proxy posts each receive buffer to
//!   the sender as a small message (the IB plugin's CTS, an RDMA write of a FIFO record,
//!   64 bytes here) once the slot is free, at most `8 / slice steps` slices ahead; the
//!   sender's proxy writes a slice once the GPU has put it in its own FIFO slot and the
//!   receiver's record has come. So the data itself never waits on the network for a
//!   rendezvous ([`NCCL_COMM`] marks these messages as sent at once).
//! - **The GPU.** A channel's kernel handles its slices one after the other: a slice is
//!   taken (received, reduced, copied to the send slot) once the previous one has been and
//!   its send slot is free; each costs the protocol's per-hop latency. A collective starts
//!   with its launch latency. Defaults: NCCL's tuning model's ring latencies over NVLink,
//!   where the link's own latency is negligible (base: LL 6.6, LL128 14, Simple 8.4 µs;
//!   per hop: LL 0.6, LL128 1.9, Simple 3.4 µs): the GPU's part of a step, the network's
//!   part being simulated.

use crate::graph::{OpId, ScheduleBuilder, Source, TagMatch};
use crate::Comm;
use std::collections::VecDeque;

/// Marks the communicator of NCCL's messages (bit 31 of `comm`): a receiver posts its
/// buffer before the data comes (the CTS messages in the graph), so the executor sends
/// them at once whatever their size, never by its own rendezvous.
pub const NCCL_COMM: u32 = 1 << 31;

/// NCCL's FIFO slots per connection (`NCCL_STEPS`).
pub const NCCL_STEPS: u32 = 8;

/// Bytes of the record a receiver posts to its sender for each receive buffer.
pub const CTS_BYTES: u64 = 64;

/// The most channels (NCCL's `MAXCHANNELS`).
pub const MAX_CHANNELS: u32 = 64;

/// NCCL's protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// Bulk data with a flag per slice: full bandwidth, the highest latency.
    Simple,
    /// Low latency: 8-byte lines of 4 data bytes and a 4-byte flag.
    Ll,
    /// 128-byte lines of 120 data bytes and an 8-byte flag.
    Ll128,
}

impl Protocol {
    /// Every protocol with its name in configurations.
    pub const ALL: [(&'static str, Protocol); 3] =
        [("simple", Protocol::Simple), ("ll", Protocol::Ll), ("ll128", Protocol::Ll128)];

    /// Its name in configurations.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, p)| *p == self).map_or("?", |(n, _)| n)
    }

    /// The protocol named `name`.
    pub fn parse(name: &str) -> Option<Protocol> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, p)| p)
    }

    /// NCCL's default buffer per connection: `NCCL_BUFFSIZE` (4 MiB), `NCCL_LL_BUFFSIZE`
    /// (8 lines x 512 threads x 8 steps x 16 bytes) and `NCCL_LL128_BUFFSIZE` (120 words x
    /// 640 threads x 8 steps x 8 bytes).
    pub fn default_buffer(self) -> u64 {
        match self {
            Protocol::Simple => 1 << 22,
            Protocol::Ll => 8 * 512 * 8 * 16,
            Protocol::Ll128 => 120 * 640 * 8 * 8,
        }
    }

    /// The unit channels split buffers in (`ncclProtoGrainSize`).
    pub fn grain(self) -> u64 {
        match self {
            Protocol::Simple => 512,
            Protocol::Ll => 16,
            Protocol::Ll128 => 32 * 8 / 16 * 15 * 8,
        }
    }

    /// Bytes on the wire for `data` bytes.
    pub fn wire_bytes(self, data: u64) -> u64 {
        match self {
            Protocol::Simple => data,
            Protocol::Ll => data.div_ceil(8) * 16,
            Protocol::Ll128 => data.div_ceil(120) * 128,
        }
    }

    /// NCCL's ring base latency (ns): the launch of a collective (`baseLatencies`).
    pub fn ring_launch_ns(self) -> u64 {
        match self {
            Protocol::Simple => 8_400,
            Protocol::Ll => 6_600,
            Protocol::Ll128 => 14_000,
        }
    }

    /// NCCL's ring latency per step over NVLink (ns, `hwLatencies[NVLINK][RING]`): the
    /// GPU's part of a hop.
    pub fn ring_hop_ns(self) -> u64 {
        match self {
            Protocol::Simple => 3_400,
            Protocol::Ll => 600,
            Protocol::Ll128 => 1_900,
        }
    }
}

/// NCCL's ring collectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NcclKind {
    /// `ncclAllReduce`; the size is the buffer's.
    AllReduce,
    /// `ncclAllGather`; the size is each rank's part.
    AllGather,
    /// `ncclReduceScatter`; the size is each rank's part of the result.
    ReduceScatter,
    /// `ncclBroadcast` from a root; the size is the buffer's.
    Broadcast,
    /// `ncclReduce` to a root; the size is the buffer's.
    Reduce,
}

/// How NCCL runs a collective: its protocol, channels, buffer and latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NcclSettings {
    /// The protocol.
    pub protocol: Protocol,
    /// Channels (1 to [`MAX_CHANNELS`]).
    pub channels: u32,
    /// Bytes of a connection's FIFO (`NCCL_BUFFSIZE` and its LL, LL128 peers).
    pub buffer: u64,
    /// The launch latency, in the unit of the schedule's `calc`s.
    pub launch: u64,
    /// The GPU's latency per slice it handles, in the same unit.
    pub hop: u64,
}

impl NcclSettings {
    /// NCCL's defaults for `protocol` on `channels` channels, latencies in nanoseconds.
    pub fn new(protocol: Protocol, channels: u32) -> NcclSettings {
        NcclSettings {
            protocol,
            channels,
            buffer: protocol.default_buffer(),
            launch: protocol.ring_launch_ns(),
            hop: protocol.ring_hop_ns(),
        }
    }

    /// Bytes of a FIFO step.
    fn step(&self) -> u64 {
        self.buffer / u64::from(NCCL_STEPS)
    }

    /// `(chunk steps, slice steps)` of `kind` under this protocol.
    fn steps(&self, kind: NcclKind) -> (u64, u64) {
        match (self.protocol, kind) {
            (Protocol::Simple, NcclKind::AllReduce | NcclKind::AllGather | NcclKind::ReduceScatter) => {
                (u64::from(NCCL_STEPS / 2), u64::from(NCCL_STEPS / 4))
            }
            _ => (1, 1),
        }
    }

    /// A chunk's data bytes for `kind` (`calcCollChunking` for rings), in whole grains.
    fn chunk(&self, kind: NcclKind) -> u64 {
        let (chunk_steps, _) = self.steps(kind);
        let chunk = self.step() * chunk_steps;
        let data = match self.protocol {
            Protocol::Simple => chunk,
            Protocol::Ll => chunk / 2,
            Protocol::Ll128 => chunk / 128 * 120,
        };
        (data / self.protocol.grain() * self.protocol.grain()).max(self.protocol.grain())
    }

    /// Slices a connection's FIFO holds.
    fn depth(&self, kind: NcclKind) -> usize {
        (u64::from(NCCL_STEPS) / self.steps(kind).1) as usize
    }

    /// The data bytes of the slices of a chunk of `bytes` bytes.
    fn slices(&self, kind: NcclKind, bytes: u64, out: &mut Vec<u64>) {
        out.clear();
        let (chunk_steps, slice_steps) = self.steps(kind);
        let per_chunk = chunk_steps / slice_steps;
        if self.protocol != Protocol::Simple || per_chunk == 1 {
            out.push(bytes);
            return;
        }
        let size = (bytes.div_ceil(16 * per_chunk) * 16).max(self.step() * slice_steps / 32);
        let mut offset = 0;
        for _ in 0..per_chunk {
            let slice = size.min(bytes - offset);
            out.push(slice);
            offset += slice;
        }
    }
}

/// What a rank does with one chunk of a ring step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Sends its own data to the next rank.
    Send,
    /// Receives from the previous rank and sends on (reduced or copied).
    RecvSend,
    /// Receives from the previous rank.
    Recv,
}

/// The bytes each channel carries of `count` bytes: an even split in grains, the last
/// channel short by the rounding; channels left without data are dropped.
fn channel_bytes(count: u64, channels: u32, grain: u64) -> Vec<u64> {
    let cells = count.div_ceil(grain);
    let used = cells.min(u64::from(channels)).max(1);
    let mut bytes: Vec<u64> =
        (0..used).map(|c| (cells / used + u64::from(c < cells % used)) * grain).collect();
    let over = cells * grain - count;
    let last = bytes.len() - 1;
    bytes[last] -= over;
    bytes
}

/// Rank `me`'s chunks on one channel of `bytes` bytes, in order: `(role, bytes)`.
fn ring_program(
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

/// Appends comm rank `me`'s part of `kind` (`bytes` as the kind says; `root` for broadcast
/// and reduce) on `comm` under `settings` to the builder's current rank (which must be
/// `comm.ranks[me]`); everything starts after `after` ends, when given. Messages carry
/// `comm.id | NCCL_COMM` and tags `tag << 8 | channel << 1 | cts`. Returns the op that
/// ends when this rank's part has ended, or `None` on a communicator of one rank.
///
/// # Panics
/// If `me` or `root` is not below the communicator's size, `tag` is 2^24 or more, or the
/// channels are not 1 to [`MAX_CHANNELS`].
#[allow(clippy::too_many_arguments)]
pub fn emit_nccl(
    b: &mut ScheduleBuilder,
    kind: NcclKind,
    bytes: u64,
    root: usize,
    settings: &NcclSettings,
    comm: &Comm,
    me: usize,
    tag: u32,
    after: Option<OpId>,
) -> Option<OpId> {
    let n = comm.size();
    assert!(me < n && root < n, "comm rank {me} or root {root} of a communicator of {n}");
    assert!(tag < 1 << 24, "tag {tag} leaves no room for the channel");
    assert!((1..=MAX_CHANNELS).contains(&settings.channels), "{} channels", settings.channels);
    if n == 1 {
        return None;
    }
    let start = b.calc(settings.launch);
    if let Some(a) = after {
        b.requires(start, a);
    }
    let (next, prev) = (comm.ranks[(me + 1) % n], comm.ranks[(me + n - 1) % n]);
    let id = comm.id | NCCL_COMM;
    let depth = settings.depth(kind);
    let mut ends = Vec::new();
    let mut slices = Vec::new();
    for (channel, channel_bytes) in
        channel_bytes(bytes, settings.channels, settings.protocol.grain()).into_iter().enumerate()
    {
        let data_tag = tag << 8 | (channel as u32) << 1;
        let cts_tag = data_tag | 1;
        // The GPU's last slice, the receive slots it freed and the sends it filled, in
        // order (the last `depth` of each).
        let mut gpu: Option<OpId> = None;
        let mut freed: VecDeque<OpId> = VecDeque::new();
        let mut sent: VecDeque<OpId> = VecDeque::new();
        let mut last_send: Option<OpId> = None;
        for (role, chunk_bytes) in ring_program(kind, n, me, root, channel_bytes, settings.chunk(kind)) {
            settings.slices(kind, chunk_bytes, &mut slices);
            for &slice in &slices {
                let wire = settings.protocol.wire_bytes(slice);
                let step = b.calc(settings.hop);
                b.requires(step, gpu.unwrap_or(start));
                if role != Role::Send {
                    // The receive buffer is posted (its record sent) once its slot is free.
                    let cts = b.send(prev, CTS_BYTES, cts_tag, id);
                    let slot = if freed.len() == depth { freed.pop_front() } else { None };
                    b.requires(cts, slot.unwrap_or(start));
                    let recv = b.recv(Source::Rank(prev), wire, TagMatch::Tag(data_tag), id);
                    b.irequires(recv, cts);
                    // The record left before the data could come: no wait, but every op
                    // leads to the end (what a repeated graph needs).
                    b.requires(step, cts);
                    b.requires(step, recv);
                    freed.push_back(step);
                }
                if role != Role::Recv {
                    if sent.len() == depth {
                        b.requires(step, sent.pop_front().expect("full"));
                    }
                    let posted = b.recv(Source::Rank(next), CTS_BYTES, TagMatch::Tag(cts_tag), id);
                    b.requires(posted, start);
                    let send = b.send(next, wire, data_tag, id);
                    b.requires(send, step);
                    b.requires(send, posted);
                    if let Some(l) = last_send {
                        b.irequires(send, l);
                    }
                    sent.push_back(send);
                    last_send = Some(send);
                }
                gpu = Some(step);
            }
        }
        // The last GPU step follows every other; the sends not yet waited on (a slot's)
        // end in order, but the graph wants each to lead to the end.
        ends.extend(gpu);
        ends.extend(sent);
    }
    let end = b.calc(0);
    b.requires(end, start);
    for op in ends {
        b.requires(end, op);
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn channels_split_in_grains_the_last_short() {
        assert_eq!(channel_bytes(4096, 2, 512), vec![2048, 2048]);
        assert_eq!(channel_bytes(1000, 4, 512), vec![512, 488]);
        assert_eq!(channel_bytes(0, 4, 512), vec![0]);
        assert_eq!(channel_bytes(5 * 512 + 1, 2, 512), vec![3 * 512, 2 * 512 + 1]);
    }

    #[test]
    fn simple_slices_are_nccl_s_generic_op() {
        let s = NcclSettings::new(Protocol::Simple, 1);
        // Chunks of 4 steps of 512 KiB; slices of 2 steps, at least 1/32 of that.
        assert_eq!(s.chunk(NcclKind::AllReduce), 2 << 20);
        assert_eq!(s.chunk(NcclKind::Broadcast), 512 << 10);
        let mut v = Vec::new();
        s.slices(NcclKind::AllReduce, 2 << 20, &mut v);
        assert_eq!(v, vec![1 << 20, 1 << 20]);
        s.slices(NcclKind::AllReduce, 1000, &mut v);
        assert_eq!(v, vec![1000, 0], "a small chunk fills the first slice (32 KiB at least)");
        s.slices(NcclKind::AllReduce, 100_000, &mut v);
        assert_eq!(v, vec![50_000, 50_000]);
        assert_eq!(s.depth(NcclKind::AllReduce), 4);
        assert_eq!(s.depth(NcclKind::Broadcast), 8);
    }

    #[test]
    fn ll_protocols_send_their_lines() {
        assert_eq!(Protocol::Ll.wire_bytes(8), 16);
        assert_eq!(Protocol::Ll.wire_bytes(9), 32);
        assert_eq!(Protocol::Ll128.wire_bytes(120), 128);
        assert_eq!(Protocol::Ll128.wire_bytes(121), 256);
        assert_eq!(NcclSettings::new(Protocol::Ll, 1).chunk(NcclKind::AllReduce), 32 << 10);
        assert_eq!(NcclSettings::new(Protocol::Ll128, 1).chunk(NcclKind::AllReduce), 576_000);
    }

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

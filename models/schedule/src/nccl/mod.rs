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

pub mod p2p;
pub mod pat;
mod pipeline;
mod ring;
mod tree;
pub mod tuning;

pub use ring::ring_order;

use crate::graph::{OpId, ScheduleBuilder};
use crate::Comm;
use pipeline::Channel;

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

    /// NCCL's base latency (ns) of `algorithm`: the launch of a collective
    /// (`baseLatencies`).
    pub fn launch_ns(self, algorithm: Algorithm) -> u64 {
        match (algorithm, self) {
            (Algorithm::Ring, Protocol::Simple) => 8_400,
            (Algorithm::Ring, Protocol::Ll) => 6_600,
            (Algorithm::Ring, Protocol::Ll128) => 14_000,
            (Algorithm::Tree, Protocol::Simple) => 8_400,
            (Algorithm::Tree, Protocol::Ll) => 6_800,
            (Algorithm::Tree, Protocol::Ll128) => 14_000,
            // PAT runs in Simple only; NCCL lists 8 us for each protocol.
            (Algorithm::Pat, _) => 8_000,
        }
    }

    /// NCCL's latency per step of `algorithm` over NVLink (ns, `hwLatencies[NVLINK]`):
    /// the GPU's part of a hop.
    pub fn hop_ns(self, algorithm: Algorithm) -> u64 {
        match (algorithm, self) {
            (Algorithm::Ring, Protocol::Simple) => 3_400,
            (Algorithm::Ring, Protocol::Ll) => 600,
            (Algorithm::Ring, Protocol::Ll128) => 1_900,
            (Algorithm::Tree, Protocol::Simple) => 4_000,
            (Algorithm::Tree, Protocol::Ll) => 600,
            (Algorithm::Tree, Protocol::Ll128) => 1_250,
            (Algorithm::Pat, _) => 4_000,
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

impl NcclKind {
    /// The NCCL collective of MPI's `kind`, where NCCL has it (all-to-all is grouped sends,
    /// [`p2p::emit_nccl_all_to_all`]).
    pub fn of(kind: crate::collectives::Kind) -> Option<NcclKind> {
        use crate::collectives::Kind;
        match kind {
            Kind::Allreduce => Some(NcclKind::AllReduce),
            Kind::Allgather => Some(NcclKind::AllGather),
            Kind::ReduceScatter => Some(NcclKind::ReduceScatter),
            Kind::Bcast => Some(NcclKind::Broadcast),
            Kind::Reduce => Some(NcclKind::Reduce),
            _ => None,
        }
    }
}

/// NCCL's algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// Rings, one per channel.
    Ring,
    /// The double binary tree (all-reduce only).
    Tree,
    /// PAT, Parallel Aggregated Trees (all-gather and reduce-scatter, Simple only).
    Pat,
}

impl Algorithm {
    /// Every algorithm with its name in configurations.
    pub const ALL: [(&'static str, Algorithm); 3] =
        [("ring", Algorithm::Ring), ("tree", Algorithm::Tree), ("pat", Algorithm::Pat)];

    /// Its name in configurations.
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, a)| *a == self).map_or("?", |(n, _)| n)
    }

    /// The algorithm named `name`.
    pub fn parse(name: &str) -> Option<Algorithm> {
        Self::ALL.iter().find(|(n, _)| *n == name).map(|&(_, a)| a)
    }

    /// Whether it runs `kind`.
    pub fn runs(self, kind: NcclKind) -> bool {
        match self {
            Algorithm::Ring => true,
            Algorithm::Tree => kind == NcclKind::AllReduce,
            Algorithm::Pat => matches!(kind, NcclKind::AllGather | NcclKind::ReduceScatter),
        }
    }
}

/// How NCCL runs a collective: its algorithm, protocol, channels, buffer and latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NcclSettings {
    /// The algorithm.
    pub algorithm: Algorithm,
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
    /// GPUs per node (1: no nodes): ranks `r` and `r'` share a node when `r / node_gpus
    /// == r' / node_gpus`, and a ring crosses the nodes as NCCL's do ([`ring::ring_order`]).
    pub node_gpus: u32,
}

impl NcclSettings {
    /// NCCL's defaults for `algorithm` in `protocol` on `channels` channels, latencies in
    /// nanoseconds.
    pub fn new(algorithm: Algorithm, protocol: Protocol, channels: u32) -> NcclSettings {
        NcclSettings {
            algorithm,
            protocol,
            channels,
            buffer: protocol.default_buffer(),
            launch: protocol.launch_ns(algorithm),
            hop: protocol.hop_ns(algorithm),
            node_gpus: 1,
        }
    }

    /// Bytes of a FIFO step.
    fn step(&self) -> u64 {
        self.buffer / u64::from(NCCL_STEPS)
    }

    /// `(chunk steps, slice steps)` of `kind` under this algorithm and protocol.
    fn steps(&self, kind: NcclKind) -> (u64, u64) {
        match (self.algorithm, self.protocol, kind) {
            (
                Algorithm::Ring,
                Protocol::Simple,
                NcclKind::AllReduce | NcclKind::AllGather | NcclKind::ReduceScatter,
            ) => (u64::from(NCCL_STEPS / 2), u64::from(NCCL_STEPS / 4)),
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

/// Appends comm rank `me`'s part of `kind` (`bytes` as the kind says; `root` for broadcast
/// and reduce) on `comm` under `settings` to the builder's current rank (which must be
/// `comm.ranks[me]`); everything starts after `after` ends, when given. Messages carry
/// `comm.id | NCCL_COMM` and tags `tag << 8 | channel << 1 | record`. Returns the op that
/// ends when this rank's part has ended, or `None` on a communicator of one rank.
///
/// # Panics
/// If `me` or `root` is not below the communicator's size, `tag` is 2^24 or more, the
/// channels are not 1 to [`MAX_CHANNELS`], or the algorithm does not run `kind`.
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
    assert!(settings.algorithm.runs(kind), "{:?} does not run {kind:?}", settings.algorithm);
    assert!(
        settings.algorithm != Algorithm::Pat || settings.protocol == Protocol::Simple,
        "PAT runs in Simple only"
    );
    if n == 1 {
        return None;
    }
    let start = pipeline::launch(b, settings.launch, after);
    let depth = settings.depth(kind);
    let mut ends = Vec::new();
    for (channel, part) in
        channel_bytes(bytes, settings.channels, settings.protocol.grain()).into_iter().enumerate()
    {
        let channel = channel as u32;
        let mut ch = Channel::new(comm.id, tag, channel, depth, settings.hop, start);
        match settings.algorithm {
            Algorithm::Ring => match ring::ring_order(&comm.ranks, settings.node_gpus, channel) {
                None => ring::emit_ring(b, &mut ch, kind, settings, &comm.ranks, me, root, part),
                Some(order) => {
                    let at = |k: usize| order.iter().position(|&x| x == comm.ranks[k]).expect("a member");
                    ring::emit_ring(b, &mut ch, kind, settings, &order, at(me), at(root), part)
                }
            },
            Algorithm::Tree => {
                let chunk = tree::tree_chunk(settings, n, part);
                tree::emit_tree(b, &mut ch, settings, &comm.ranks, me, channel, chunk, part)
            }
            Algorithm::Pat => {
                let all_gather = kind == NcclKind::AllGather;
                let total = bytes * n as u64;
                pat::emit_pat(
                    b,
                    &mut ch,
                    all_gather,
                    settings.step(),
                    total,
                    settings.channels,
                    &comm.ranks,
                    me,
                    part,
                )
            }
        }
        ch.ends(&mut ends);
    }
    Some(pipeline::join(b, start, &ends))
}

/// Comm rank `me`'s part of MPI's collective `kind` of `bytes` (as
/// [`crate::collectives::Collective`] counts them: each pair's block for all-to-all) as NCCL
/// runs it when nothing is named: the algorithm, protocol and channels (at most
/// `channels`) its tuning model chooses for NICs of `nic_gbs` GB/s, all-to-all as grouped
/// sends and receives. `None` where NCCL has no such collective (gather, scatter,
/// barrier); otherwise [`emit_nccl`]'s result.
#[allow(clippy::too_many_arguments)]
pub fn emit_nccl_chosen(
    b: &mut ScheduleBuilder,
    kind: crate::collectives::Kind,
    bytes: u64,
    root: usize,
    nic_gbs: f64,
    channels: u32,
    node_gpus: u32,
    comm: &Comm,
    me: usize,
    tag: u32,
    after: Option<OpId>,
) -> Option<Option<OpId>> {
    if kind == crate::collectives::Kind::Alltoall {
        let settings = p2p::P2pSettings::new(channels);
        return Some(p2p::emit_nccl_all_to_all(b, bytes, &settings, comm, me, tag, after));
    }
    let k = NcclKind::of(kind)?;
    let settings =
        NcclSettings { node_gpus, ..tuning::settings_for(k, bytes, comm.size(), nic_gbs, channels) };
    Some(emit_nccl(b, k, bytes, root, &settings, comm, me, tag, after))
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
        let s = NcclSettings::new(Algorithm::Ring, Protocol::Simple, 1);
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
        assert_eq!(NcclSettings::new(Algorithm::Ring, Protocol::Ll, 1).chunk(NcclKind::AllReduce), 32 << 10);
        assert_eq!(
            NcclSettings::new(Algorithm::Ring, Protocol::Ll128, 1).chunk(NcclKind::AllReduce),
            576_000
        );
    }
}

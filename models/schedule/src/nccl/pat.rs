//! PAT, NCCL's "Parallel Aggregated Trees" all-gather and reduce-scatter (NCCL 2.23; one
//! GPU per node): the sequence of steps each rank's GPU runs, after NCCL's
//! `PatAGAlgorithm` and `PatRSAlgorithm` (`src/include/collectives.h`, NCCL 5067397c).
//!
//! Rank r talks to the ranks at distance 2^d for every dimension d below log2(n): an
//! all-gather sends to r - 2^d and receives from r + 2^d, a reduce-scatter the other way.
//! Data travels a binomial tree from the farthest dimension in, so a part crosses at most
//! log2(n) links; steps that go to the same peer are aggregated into one slot of its
//! connection's FIFO (the step size over the part's, up to the FIFO's depth), a network
//! message when the slot is posted. Each step says which dimension it receives from and
//! sends to, where in the slots, and whether it posts them.
//!
//! The two generators below are the algorithms' state machines, phase by phase, as NCCL
//! runs them on the host to count each connection's network steps (`src/proxy.cc`); they
//! are checked step for step against NCCL's own code (`tests/nccl_pat.rs`).

use super::NCCL_STEPS;
use crate::graph::{OpId, ScheduleBuilder};

/// One step of PAT on one rank (NCCL's `ncclPatStep`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PatStep {
    /// The dimension received from (the peer at distance 2^d), or -1.
    pub recv_dim: i32,
    /// The dimension sent to, or -1.
    pub send_dim: i32,
    /// Where in the receive slot the step's data is, elements (-1: none).
    pub recv_offset: i64,
    /// Where in the send slot it goes, elements (-1: none).
    pub send_offset: i64,
    /// How many slots ahead of the connection's current one the step reads or writes.
    pub step_offset: i32,
    /// The step frees its receive slot (the network may fill it again).
    pub post_recv: bool,
    /// The step posts its send slot: a network message of `send_offset + nelem` elements.
    pub post_send: bool,
    /// Elements the step moves.
    pub nelem: i64,
    /// 2 on the last step; 1 on the step after which only skipped ones may follow.
    pub last: u8,
    /// The step does nothing (its slot in the tree is beyond the ranks).
    pub skipped: bool,
    /// Where the step reads the input, elements.
    pub inp_ix: u64,
    /// Where it writes the output, elements.
    pub out_ix: u64,
}

/// `log2(n)` rounded up.
fn log2_up(n: i64) -> u32 {
    let mut r = 0;
    while (1i64 << r) < n {
        r += 1;
    }
    r
}

/// The index of `i`'s lowest set bit, or `max` if none.
fn first_bit_set(i: i64, max: i64) -> i64 {
    if i == 0 {
        max
    } else {
        i64::from(i.trailing_zeros())
    }
}

/// Whether only the upper bits of `i` below `pow2` are set (8, 12, 14, 15 for 16).
fn new_peer(i: i64, pow2: i64) -> bool {
    ((i ^ (pow2 - 1)) + 1).count_ones() == 1
}

/// The settings both algorithms derive from the step size and the part's size: the
/// aggregation factor (steps per slot), the stride between aggregated steps and how
/// often a slot is posted.
struct Aggregation {
    /// Ranks rounded up to a power of two.
    nr_pow2: i64,
    agg_factor: i64,
    agg_delta: i64,
    post_freq: i64,
    parallel_factor: i64,
}

impl Aggregation {
    /// For parts of `channel_size` bytes, slots of `step_size` bytes, FIFOs `step_depth`
    /// slots deep and at most `max_parallel` step groups.
    fn new(
        step_size: i64,
        step_depth: i64,
        max_parallel: i64,
        channel_size: i64,
        nranks: i64,
    ) -> Aggregation {
        let nr_pow2 = 1i64 << log2_up(nranks);
        let (mut agg_factor, mut agg_delta) = (1, nr_pow2);
        while step_size / (channel_size * agg_factor) >= 2 && agg_factor < nranks / 2 {
            agg_factor *= 2;
            agg_delta /= 2;
        }
        let post_freq = agg_factor;
        let parallel_factor = max_parallel.min(post_freq);
        let mut d = step_depth;
        while d > 1 && agg_factor < nranks / 2 {
            d /= 2;
            agg_factor *= 2;
            agg_delta /= 2;
        }
        Aggregation { nr_pow2, agg_factor, agg_delta, post_freq, parallel_factor }
    }
}

/// One rank's PAT collective: rank `rank` of `nranks`, `size` bytes per rank (NCCL's
/// `count`), cut in chunks of `chunk` bytes, slots of `step_size` bytes in FIFOs of `depth`
/// slots, at most `max_parallel` step groups (NCCL's proxy passes 16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatShape {
    /// Bytes of a FIFO slot.
    pub step_size: i64,
    /// Slots of a FIFO (`NCCL_STEPS`).
    pub depth: i64,
    /// The most step groups.
    pub max_parallel: i64,
    /// Bytes of each rank's part.
    pub size: u64,
    /// Bytes of a chunk.
    pub chunk: i64,
    /// The rank.
    pub rank: i64,
    /// The ranks.
    pub nranks: i64,
}

impl PatShape {
    /// What both algorithms start from: the part's end and count, and the aggregation.
    fn start(&self) -> (i64, u64, Aggregation) {
        let end = self.size as i64;
        (end, self.size, Aggregation::new(self.step_size, self.depth, self.max_parallel, end, self.nranks))
    }
}

/// The steps of a PAT all-gather.
pub fn pat_all_gather_steps(shape: &PatShape) -> Vec<PatStep> {
    let (end, count, g) = shape.start();
    let (chunk, rank, nranks) = (shape.chunk, shape.rank, shape.nranks);
    let (nr_pow2, agg_factor, agg_delta, post_freq, parallel_factor) =
        (g.nr_pow2, g.agg_factor, g.agg_delta, g.post_freq, g.parallel_factor);
    let as_dim = log2_up(agg_delta) as usize;
    let mut offset: i64 = 0;
    let (mut nelem, mut scale, mut phase, mut a, mut last_a, mut as_);
    let mut v: i64;
    let mut bit_count = vec![0i64; as_dim];
    let mut bit_zero_step = vec![0i64; as_dim];

    // The next aggregated step: a counter whose bits flip in PAT's order.
    let next_as = |v: &mut i64, bit_count: &mut [i64], bit_zero_step: &mut [i64]| -> i64 {
        for d in 0..as_dim {
            let p = 1i64 << d;
            bit_count[d] -= 1;
            if bit_count[d] == 0 {
                *v ^= p;
                bit_count[d] = p;
                if *v & p == 0 {
                    bit_count[d] += first_bit_set(bit_zero_step[d], as_dim as i64) - 1;
                    if bit_count[d] == 0 {
                        *v ^= p;
                        bit_count[d] = p;
                    }
                    bit_zero_step[d] += 1;
                }
            }
        }
        *v
    };
    let reset_a = |phase: i64, scale: i64| -> i64 {
        let mut last_a = agg_factor;
        if phase >= 2 {
            last_a /= 2 * scale;
        }
        last_a
    };
    // reset()
    macro_rules! reset {
        () => {{
            nelem = chunk.min(end - offset);
            scale = agg_factor / 2;
            phase = if scale != 0 { 2 } else { 1 };
            v = 0;
            for i in 0..as_dim {
                bit_count[i] = (as_dim - i) as i64;
                bit_zero_step[i] = 1;
            }
            as_ = next_as(&mut v, &mut bit_count, &mut bit_zero_step);
            a = 0;
            last_a = reset_a(phase, scale);
        }};
    }
    reset!();

    let mut steps = Vec::new();
    let mut ps = PatStep::default();
    loop {
        ps.last = 0;
        ps.nelem = nelem;
        ps.inp_ix = offset as u64;
        let mut skip = false;
        if a >= last_a {
            skip = true;
        } else if phase == 0 {
            let s = a * agg_delta + as_;
            if s >= nranks {
                skip = true;
            }
            let recv_data_rank = (rank + s) % nranks;
            ps.out_ix = recv_data_rank as u64 * count + offset as u64;
            ps.send_dim = -1;
            ps.recv_dim = 0;
            ps.inp_ix = 0;
            ps.send_offset = -1;
            ps.recv_offset = (a % post_freq) * nelem;
            ps.step_offset = 0;
            ps.post_recv = a % post_freq == post_freq - 1 || (a + 1) * agg_delta + as_ >= nranks;
            ps.post_send = false;
        } else if phase == 1 {
            let mut s = a * agg_delta + as_;
            if s >= nranks {
                skip = true;
            }
            ps.send_dim = first_bit_set(s, nr_pow2) as i32;
            s -= 1 << ps.send_dim;
            let send_data_rank = (rank + nranks + s) % nranks;
            ps.out_ix = send_data_rank as u64 * count + offset as u64;
            ps.recv_dim = if s != 0 { first_bit_set(s, nr_pow2) as i32 } else { -1 };
            ps.send_offset = (a % post_freq) * nelem;
            ps.recv_offset = ps.send_offset;
            let posted = a % post_freq == post_freq - 1 || (a + 1) * agg_delta + as_ >= nranks;
            ps.post_send = posted;
            ps.post_recv =
                ps.send_dim == 0 && (a % post_freq == post_freq - 1 || (a + 1) * agg_delta + as_ > nranks);
            ps.step_offset = if ps.send_dim == 0 { 0 } else { (a / post_freq) as i32 };
            if ps.recv_dim == -1 {
                ps.recv_offset = -1;
                ps.post_recv = false;
            } else if as_ - (1 << ps.send_dim) == 0 {
                let foffset = (a * agg_delta) >> (ps.recv_dim + 1);
                ps.recv_offset = (foffset % post_freq) * nelem;
                ps.post_recv = ps.send_dim == 0
                    && (foffset % post_freq == post_freq - 1
                        || (((foffset + 1) * 2) + 1) << ps.recv_dim >= nranks);
                ps.step_offset = if ps.send_dim == 0 { 0 } else { (foffset / post_freq) as i32 };
            }
            if s < nranks && ps.send_dim == 0 && skip {
                // Receive at least once even if nothing is sent afterwards.
                ps.send_dim = -1;
                ps.send_offset = -1;
                ps.post_send = false;
                skip = false;
            }
        } else if phase == 2 {
            let mut s = (2 * a + 1) * scale * agg_delta;
            ps.post_send = a % post_freq == post_freq - 1 || (2 * (a + 1) + 1) * scale * agg_delta >= nranks;
            ps.post_recv = false;
            if s >= nranks {
                skip = true;
            }
            ps.send_dim = first_bit_set(s, nr_pow2) as i32;
            s -= 1 << ps.send_dim;
            ps.send_offset = (a % post_freq) * nelem;
            ps.step_offset = (a / post_freq) as i32;
            let send_data_rank = (rank + nranks + s) % nranks;
            ps.out_ix = send_data_rank as u64 * count + offset as u64;
            ps.recv_dim = if s != 0 { first_bit_set(s, nr_pow2) as i32 } else { -1 };
            if ps.recv_dim == -1 {
                ps.recv_offset = -1;
            } else {
                let foffset = (a * 2 * scale * agg_delta) >> (ps.recv_dim + 1);
                ps.recv_offset = (foffset % post_freq) * nelem;
                ps.step_offset = (foffset / post_freq) as i32;
            }
        }
        a += 1;
        if a >= last_a && a >= parallel_factor {
            let p = phase;
            if p == 2 {
                scale /= 2;
            }
            phase = match p {
                2 if scale != 0 => 2,
                2 => 1,
                1 if as_ % 2 == 1 => 0,
                _ => 1,
            };
            if p == 0 || (p == 1 && as_ % 2 == 0) {
                as_ = next_as(&mut v, &mut bit_count, &mut bit_zero_step);
            }
            if p == 0 && as_ == agg_delta / 2 {
                offset += chunk;
                if offset >= end {
                    ps.last = 2;
                } else {
                    reset!();
                }
            } else {
                a = 0;
                last_a = reset_a(phase, scale);
            }
        } else if phase == 0
            && as_ == 1
            && offset + chunk >= end
            && a > ((last_a - 1) / parallel_factor) * parallel_factor
        {
            ps.last = 1;
        }
        ps.skipped = skip;
        steps.push(ps);
        if ps.last == 2 {
            return steps;
        }
    }
}

/// The steps of a PAT reduce-scatter.
pub fn pat_reduce_scatter_steps(shape: &PatShape) -> Vec<PatStep> {
    let (end, count, g) = shape.start();
    let (chunk, rank, nranks) = (shape.chunk, shape.rank, shape.nranks);
    let (nr_pow2, agg_factor, agg_delta, post_freq, parallel_factor) =
        (g.nr_pow2, g.agg_factor, g.agg_delta, g.post_freq, g.parallel_factor);
    // The slot index of `i` among `max` with its bits inverted and mirrored.
    let mirror_invert = |i: i64, max: i64| -> i64 {
        let (mut ret, mut mask, mut imask) = (0, 1, max / 2);
        while mask < max {
            if i & mask == 0 {
                ret += imask;
            }
            mask <<= 1;
            imask >>= 1;
        }
        ret
    };
    let mut offset: i64 = 0;
    let (mut nelem, mut phase, mut scale, mut as_): (i64, i64, i64, i64);
    let (mut a, mut last_a, mut send_skipped, mut step_offset): (i64, i64, i64, i64);
    macro_rules! reset_a {
        () => {{
            a = 0;
            send_skipped = 0;
            step_offset = 0;
            last_a = agg_factor;
            if phase >= 2 {
                last_a /= 2 * scale;
            }
            if phase == 4 {
                last_a = 1;
            }
        }};
    }
    macro_rules! reset {
        () => {{
            nelem = chunk.min(end - offset);
            phase = 0;
            scale = 1;
            as_ = agg_delta - 1;
            reset_a!();
        }};
    }
    reset!();

    let mut steps = Vec::new();
    let mut ps = PatStep::default();
    loop {
        ps.last = 0;
        ps.nelem = nelem;
        ps.out_ix = offset as u64;
        ps.step_offset = step_offset as i32;
        let mut skip = false;
        let posting = |a: i64, last_a: i64| (a % post_freq) + 1 >= post_freq || a == last_a - 1;
        if a >= last_a {
            skip = true;
        } else if phase == 0 {
            let s = mirror_invert(a, last_a) * agg_delta + as_;
            if s >= nranks {
                skip = true;
            }
            let send_data_rank = (rank + s) % nranks;
            ps.inp_ix = send_data_rank as u64 * count + offset as u64;
            ps.recv_dim = -1;
            ps.send_dim = 0;
            ps.out_ix = 0;
            ps.recv_offset = -1;
            ps.send_offset = (a % post_freq) * nelem;
            ps.post_send = posting(a, last_a);
            ps.post_recv = false;
        } else if phase == 1 {
            let mut s = mirror_invert(a, last_a) * agg_delta + as_;
            if s >= nranks {
                skip = true;
            }
            ps.recv_dim = first_bit_set(s, nr_pow2) as i32;
            ps.send_offset = (a % post_freq) * nelem;
            ps.recv_offset = (a % post_freq) * nelem;
            ps.post_send = ps.recv_dim == 0 && posting(a, last_a);
            ps.post_recv = posting(a, last_a);
            s -= 1 << ps.recv_dim;
            let recv_data_rank = (rank + nranks + s) % nranks;
            ps.inp_ix = recv_data_rank as u64 * count + offset as u64;
            ps.send_dim = if s != 0 { first_bit_set(s, nr_pow2) as i32 } else { -1 };
            if ps.send_dim == -1 {
                ps.send_offset = -1;
            } else if as_ - (1 << ps.recv_dim) == 0 {
                if new_peer(a, agg_factor) {
                    send_skipped = a;
                    step_offset = 0;
                    ps.step_offset = 0;
                }
                let foffset = a - send_skipped;
                ps.send_offset = (foffset % post_freq) * nelem;
            }
            let recv_dim = ps.recv_dim;
            if s < nranks && skip {
                ps.recv_dim = -1;
                ps.recv_offset = -1;
                ps.post_recv = false;
                skip = false;
            }
            if recv_dim > 0 && ((a - send_skipped) % post_freq) + 1 >= post_freq && !skip {
                step_offset += 1;
            }
        } else if phase == 2 {
            let mut s = (2 * mirror_invert(a, last_a) + 1) * scale * agg_delta + 1;
            ps.post_recv = false;
            if s >= nranks {
                skip = true;
            }
            ps.recv_dim = 0;
            ps.post_send = a == last_a - 1;
            s -= 1;
            if s < nranks && skip {
                ps.recv_dim = -1;
                ps.recv_offset = -1;
                skip = false;
            } else if !skip {
                let foffset = a + agg_factor - agg_factor / scale;
                ps.post_recv |= (foffset + 1) % post_freq == 0;
                ps.recv_offset = (foffset % post_freq) * nelem;
            }
            let recv_data_rank = (rank + nranks + s) % nranks;
            ps.inp_ix = recv_data_rank as u64 * count + offset as u64;
            ps.send_dim = if s != 0 { first_bit_set(s, nr_pow2) as i32 } else { -1 };
            ps.post_send |= (a + 1) % post_freq == 0;
            ps.send_offset = (a % post_freq) * nelem;
        } else if phase == 3 {
            let mut s = (2 * mirror_invert(a, last_a) + 1) * scale * agg_delta;
            ps.post_recv = a == last_a - 1;
            if s >= nranks {
                skip = true;
            }
            ps.recv_dim = first_bit_set(s, nr_pow2) as i32;
            ps.post_send = false;
            s -= 1 << ps.recv_dim;
            ps.post_recv |= (a + 1) % post_freq == 0;
            ps.recv_offset = (a % post_freq) * nelem;
            let recv_data_rank = (rank + nranks + s) % nranks;
            ps.inp_ix = recv_data_rank as u64 * count + offset as u64;
            ps.send_dim = if s != 0 { first_bit_set(s, nr_pow2) as i32 } else { -1 };
            if s < nranks && skip {
                ps.recv_dim = -1;
                ps.recv_offset = -1;
                ps.post_recv = false;
                skip = false;
            }
            if new_peer(a, agg_factor / (2 * scale)) {
                send_skipped = a;
                step_offset = 0;
                ps.step_offset = 0;
            }
            let foffset = a - send_skipped;
            if (foffset % post_freq) + 1 >= post_freq && !skip {
                step_offset += 1;
            }
            ps.send_offset = if ps.send_dim >= 0 { (foffset % post_freq) * nelem } else { -1 };
        } else if phase == 4 {
            ps.recv_dim = 0;
            ps.send_dim = -1;
            ps.inp_ix = rank as u64 * count + offset as u64;
            ps.recv_offset = ((agg_factor - 1) % post_freq) * nelem;
            ps.send_offset = -1;
            ps.post_recv = true;
            ps.post_send = false;
            offset += chunk;
        }
        a += 1;
        if a >= last_a && a >= parallel_factor {
            let p = phase;
            if p == 1 {
                as_ -= 1;
            }
            if p == 3 {
                scale *= 2;
            }
            phase = match p {
                0 if as_ == 1 && agg_factor > 1 => 2,
                0 if as_ == 1 => 4,
                0 => 1,
                1 if as_ % 2 == 1 => 0,
                1 => 1,
                2 => 3,
                3 if scale < agg_factor => 2,
                3 => 4,
                _ => 5,
            };
            if p == 4 {
                if offset >= end {
                    ps.last = 2;
                } else {
                    reset!();
                }
            } else {
                reset_a!();
            }
        } else if phase == 4 && offset >= end {
            ps.last = 1;
        }
        ps.skipped = skip;
        steps.push(ps);
        if ps.last == 2 {
            return steps;
        }
    }
}

/// The settings PAT's steps take from NCCL's: the step size and chunk (one FIFO step,
/// halved while the collective's `total` bytes would give each of `channels` channels
/// fewer than 32 chunks (all-gather) or 16 (reduce-scatter), down to 64 KiB,
/// `enqueue.cc`), the FIFO's depth and the step groups.
fn pat_chunk(step: u64, total: u64, channels: u32, all_gather: bool) -> u64 {
    let per = if all_gather { 32 } else { 16 };
    let mut chunk = step;
    while chunk * u64::from(channels) * per > total && chunk > 65_536 {
        chunk /= 2;
    }
    chunk
}

/// The most step groups NCCL's proxy counts with (its `PatRSAlgorithm(..., 16, ...)`).
const MAX_PARALLEL: i64 = 16;

/// A connection from the peer at distance 2^d.
struct Inbound {
    peer: u32,
    /// The bytes of each message the peer posts, in order.
    sizes: Vec<u64>,
    /// The receive of each message emitted so far.
    received: Vec<OpId>,
    /// The step that freed each slot, in order: their count is the slot now read.
    freed: Vec<OpId>,
}

/// A connection to the peer at distance 2^d.
struct Outbound {
    peer: u32,
    /// Each posted message's send: their count is the slot now written.
    sent: Vec<OpId>,
    /// The steps that wrote each slot not yet posted, the next one first.
    writers: std::collections::VecDeque<Vec<OpId>>,
}

impl Inbound {
    /// Emits the receives up to message `upto`, each once its slot is free.
    fn receive_upto(&mut self, b: &mut ScheduleBuilder, channel: &mut super::pipeline::Channel, upto: usize) {
        let depth = NCCL_STEPS as usize;
        while self.received.len() <= upto {
            let j = self.received.len();
            let freed = j.checked_sub(depth).and_then(|i| self.freed.get(i)).copied();
            let bytes = self.sizes.get(j).copied().unwrap_or(0);
            self.received.push(channel.receive(b, self.peer, bytes, freed));
        }
    }
}

/// Comm rank `me`'s part of a PAT all-gather (`all_gather`) or reduce-scatter of `part`
/// bytes per rank on `channel`'s connections, with FIFO steps of `step` bytes, the
/// collective's `total` bytes over `channels` channels deciding the chunk: each step of
/// [`pat_all_gather_steps`] or [`pat_reduce_scatter_steps`] a GPU step of `hop` on its
/// step group (step k on group k mod the parallel factor), waiting for the message whose
/// slot it reads and, when its send slot is still in flight, for that send; each posted
/// slot a message of the slot's bytes to the peer of its dimension, sent once the
/// receiver has posted the buffer (a 64-byte record, as for every NCCL connection here).
#[allow(clippy::too_many_arguments)]
pub(super) fn emit_pat(
    b: &mut ScheduleBuilder,
    channel: &mut super::pipeline::Channel,
    all_gather: bool,
    step: u64,
    total: u64,
    channels: u32,
    ranks: &[u32],
    me: usize,
    part: u64,
) {
    let n = ranks.len() as i64;
    let chunk = pat_chunk(step, total, channels, all_gather) as i64;
    let shape = |rank: i64| PatShape {
        step_size: chunk,
        depth: i64::from(NCCL_STEPS),
        max_parallel: MAX_PARALLEL,
        size: part,
        chunk,
        rank,
        nranks: n,
    };
    let steps_of = |r: i64| {
        if all_gather {
            pat_all_gather_steps(&shape(r))
        } else {
            pat_reduce_scatter_steps(&shape(r))
        }
    };
    // An all-gather sends to r - 2^d and receives from r + 2^d; a reduce-scatter the
    // other way.
    let me_i = me as i64;
    let toward = |d: i32, sign: i64| ((me_i + sign * (1i64 << d)) % n + n) % n;
    let (send_sign, recv_sign) = if all_gather { (-1, 1) } else { (1, -1) };
    let dims = log2_up(n) as i32;
    let mut sends: Vec<Outbound> = (0..dims)
        .map(|d| Outbound {
            peer: ranks[toward(d, send_sign) as usize],
            sent: Vec::new(),
            writers: Default::default(),
        })
        .collect();
    let mut recvs: Vec<Inbound> = (0..dims)
        .map(|d| {
            let from = toward(d, recv_sign);
            // What the peer posts on its dimension d, in order.
            let sizes = steps_of(from)
                .iter()
                .filter(|s| !s.skipped && s.post_send && s.send_dim == d)
                .map(|s| (s.send_offset + s.nelem) as u64)
                .collect();
            Inbound { peer: ranks[from as usize], sizes, received: Vec::new(), freed: Vec::new() }
        })
        .collect();
    let steps = steps_of(me_i);
    let parallel =
        Aggregation::new(chunk, i64::from(NCCL_STEPS), MAX_PARALLEL, part as i64, n).parallel_factor;
    let groups: Vec<usize> = (0..parallel).map(|_| channel.chain()).collect();
    let depth = NCCL_STEPS as usize;
    // The all-gather reads ahead in its receive slots (`patCopy`), the reduce-scatter
    // writes ahead in its send slots (`patReduce`), by the step's offset.
    let (recv_ahead, send_ahead) = if all_gather { (1, 0) } else { (0, 1) };
    for (k, s) in steps.iter().enumerate() {
        if s.skipped {
            continue;
        }
        let group = groups[k % groups.len()];
        let op = channel.gpu_step(b, group);
        let offset = s.step_offset.max(0) as usize;
        if s.recv_dim >= 0 {
            let conn = &mut recvs[s.recv_dim as usize];
            let m = conn.freed.len() + recv_ahead * offset;
            conn.receive_upto(b, channel, m);
            b.requires(op, conn.received[m]);
            if s.post_recv {
                conn.freed.push(op);
            }
        }
        if s.send_dim >= 0 {
            let conn = &mut sends[s.send_dim as usize];
            let ahead = send_ahead * offset;
            // The slot is free once the send that last used it has gone.
            let m = conn.sent.len() + ahead;
            if let Some(&gone) = m.checked_sub(depth).and_then(|i| conn.sent.get(i)) {
                b.requires(op, gone);
            }
            if conn.writers.len() <= ahead {
                conn.writers.resize_with(ahead + 1, Vec::new);
            }
            conn.writers[ahead].push(op);
            if s.post_send {
                let bytes = (s.send_offset + s.nelem) as u64;
                let writers = conn.writers.pop_front().unwrap_or_default();
                let send = channel.send_posted(b, conn.peer, bytes, &writers, conn.sent.last().copied());
                conn.sent.push(send);
            }
        }
    }
    // Every message a peer posts is received, read or not.
    for conn in &mut recvs {
        if let Some(last) = conn.sizes.len().checked_sub(1) {
            conn.receive_upto(b, channel, last);
        }
        channel.keep(conn.received.iter().copied());
    }
    for conn in &sends {
        channel.keep(conn.sent.iter().copied());
    }
}

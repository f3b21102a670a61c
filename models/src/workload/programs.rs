//! The built-in application programs: who sends what to whom at each step.
//!
//! A program is a sequence of steps, the same for every rank, repeated for a number of
//! iterations. In a step a rank sends messages and waits for the messages of that step
//! addressed to it; the order of the two is the program's ([`Order`]): an exchange posts
//! its sends first (non-blocking sends, then a wait, as `MPI_Isend`/`MPI_Waitall`), a
//! pipeline waits first and forwards. After the last step of an iteration a rank computes
//! for the job's `compute` cycles. Programs never send a message to the sending rank
//! itself, and for every step the messages sent and the messages expected match exactly
//! (tested over every rank and step).

use base::rng::{shuffle, stream, Purpose};
use schedule::{OpId, Repeated, Schedule, ScheduleBuilder, Source, TagMatch};
use std::sync::Arc;

/// Whether a step's sends come before or after its receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Post every send of the step, then wait for its receives (an exchange).
    SendFirst,
    /// Wait for the step's receives, then send (a pipeline: what is sent depends on what
    /// arrived).
    ReceiveFirst,
}

/// How all-to-all is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllToAll {
    /// `ranks - 1` steps; in step `k` rank `r` sends to `r + k` and receives from `r - k`
    /// (modulo `ranks`).
    Pairwise,
    /// One step: every rank sends to every other, starting with `r + 1`.
    Linear,
}

/// How all-reduce is done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllReduce {
    /// Reduce-scatter then all-gather around a ring: `2 (ranks - 1)` steps, each sending
    /// `bytes / ranks` to `r + 1` and receiving from `r - 1`.
    Ring,
    /// `log2 ranks` steps; in step `k` rank `r` exchanges all `bytes` with `r xor 2^k`.
    RecursiveDoubling,
}

/// One application's communication structure.
#[derive(Clone, Debug)]
pub enum Program {
    /// Halo exchange on a process grid (2 or 3 dimensions): every rank sends `halo_bytes`
    /// to each of its `2 x dims` neighbours and receives as much from each, then computes.
    Stencil {
        /// Process grid; ranks = product, rank `r` at coordinates with the first fastest.
        grid: Vec<u32>,
        /// Bytes per face.
        halo_bytes: u64,
        /// Neighbours wrap around the grid's edges.
        periodic: bool,
    },
    /// Recursive doubling over `log2 ranks` steps: in step `k` rank `r` exchanges
    /// `message_bytes` with `r xor 2^k` (Pascual and Navaridas's (ICS'18) butterfly; also all-reduce by
    /// recursive doubling).
    Butterfly {
        /// Ranks, a power of two.
        ranks: u32,
        /// Bytes per message.
        message_bytes: u64,
    },
    /// A pipelined wavefront of small messages on a process grid: in each wave a rank waits
    /// for the wave's message from its predecessor in every dimension (coordinate one
    /// lower), then sends to its successors. After the pipeline fills, most ranks inject
    /// at once, every message depending on the ones before it.
    Waterfall {
        /// Process grid (1 to 3 dimensions).
        grid: Vec<u32>,
        /// Bytes per message.
        message_bytes: u64,
    },
    /// All-to-all personalized exchange.
    AllToAll {
        /// Ranks.
        ranks: u32,
        /// Bytes from every rank to every other.
        message_bytes: u64,
        /// Pairwise or linear.
        algorithm: AllToAll,
    },
    /// Ring all-reduce (recursive doubling is [`Program::Butterfly`]).
    RingAllReduce {
        /// Ranks.
        ranks: u32,
        /// Bytes of the vector reduced; each step moves `ceil(bytes / ranks)`.
        bytes: u64,
    },
    /// Bursts: in iteration `i` rank `r` sends `message_bytes` to `perm_i(r)`, a random
    /// permutation drawn per iteration (fixed points send nothing).
    RandomPermutation {
        /// Ranks.
        ranks: u32,
        /// Bytes per message.
        message_bytes: u64,
        /// Per iteration, the permutation and its inverse.
        perms: Arc<Vec<(Vec<u32>, Vec<u32>)>>,
    },
}

impl Program {
    /// Ranks the program has.
    pub fn ranks(&self) -> u32 {
        match self {
            Program::Stencil { grid, .. } | Program::Waterfall { grid, .. } => grid.iter().product(),
            Program::Butterfly { ranks, .. }
            | Program::AllToAll { ranks, .. }
            | Program::RingAllReduce { ranks, .. }
            | Program::RandomPermutation { ranks, .. } => *ranks,
        }
    }

    /// Steps in one iteration.
    pub fn steps_per_iteration(&self) -> u32 {
        let p = self.ranks();
        match self {
            Program::Stencil { .. } | Program::Waterfall { .. } | Program::RandomPermutation { .. } => 1,
            Program::Butterfly { .. } => p.trailing_zeros(),
            Program::AllToAll { algorithm: AllToAll::Pairwise, .. } => p.saturating_sub(1),
            Program::AllToAll { algorithm: AllToAll::Linear, .. } => u32::from(p > 1),
            Program::RingAllReduce { .. } => 2 * p.saturating_sub(1),
        }
    }

    /// Whether a step sends before or after it receives.
    pub fn order(&self) -> Order {
        match self {
            Program::Waterfall { .. } => Order::ReceiveFirst,
            _ => Order::SendFirst,
        }
    }

    /// The most ops [`Program::graph`] stores for `iterations` iterations (one template,
    /// or one per iteration for a random permutation): per rank and step its receives and
    /// sends and up to three joining calcs. A bound, close for every program here.
    pub fn ops_bound(&self, iterations: u32) -> u64 {
        let templates = match self {
            Program::RandomPermutation { .. } => u64::from(iterations.max(1)),
            _ => 1,
        };
        let per_step = 2 * self.max_messages_per_step() + 3;
        templates
            .saturating_mul(u64::from(self.ranks()))
            .saturating_mul(u64::from(self.steps_per_iteration().max(1)))
            .saturating_mul(per_step)
    }

    /// The most messages a rank sends in one step.
    pub fn max_messages_per_step(&self) -> u64 {
        match self {
            Program::Stencil { grid, .. } => 2 * grid.len() as u64,
            Program::Waterfall { grid, .. } => grid.len() as u64,
            Program::AllToAll { algorithm: AllToAll::Linear, ranks, .. } => ranks.saturating_sub(1) as u64,
            _ => 1,
        }
    }

    /// The largest message, in bytes.
    pub fn max_message_bytes(&self) -> u64 {
        match self {
            Program::Stencil { halo_bytes, .. } => *halo_bytes,
            Program::Butterfly { message_bytes, .. }
            | Program::Waterfall { message_bytes, .. }
            | Program::AllToAll { message_bytes, .. }
            | Program::RandomPermutation { message_bytes, .. } => *message_bytes,
            Program::RingAllReduce { ranks, bytes } => bytes.div_ceil((*ranks).max(1) as u64),
        }
    }

    /// The messages `rank` sends in `step` (of its iteration `iteration`), as `(peer,
    /// bytes)`, appended to `out`.
    pub fn sends(&self, rank: u32, iteration: u32, step: u32, out: &mut Vec<(u32, u64)>) {
        self.messages(rank, iteration, step, true, out)
    }

    /// The messages `rank` receives in `step`, as `(peer, bytes)`, appended to `out`.
    pub fn receives(&self, rank: u32, iteration: u32, step: u32, out: &mut Vec<(u32, u64)>) {
        self.messages(rank, iteration, step, false, out)
    }

    /// Packets `src` sends `dst` in `step` of `iteration`, a message of `b` bytes being
    /// `packets(b)` packets; `scratch` is working space.
    pub fn packets_between(
        &self,
        src: u32,
        dst: u32,
        iteration: u32,
        step: u32,
        scratch: &mut Vec<(u32, u64)>,
        packets: impl Fn(u64) -> u32,
    ) -> u32 {
        match self {
            // Every rank sends every other one message: no need to list P - 1 of them.
            Program::AllToAll { algorithm: AllToAll::Linear, message_bytes, .. } => {
                if src == dst {
                    0
                } else {
                    packets(*message_bytes)
                }
            }
            _ => {
                scratch.clear();
                self.sends(src, iteration, step, scratch);
                scratch.iter().filter(|m| m.0 == dst).map(|m| packets(m.1)).sum()
            }
        }
    }

    fn messages(&self, rank: u32, iteration: u32, step: u32, sending: bool, out: &mut Vec<(u32, u64)>) {
        let p = self.ranks();
        // Towards whom: the peer a send goes to, or the peer a receive comes from.
        let dir = |forward: bool| if sending { forward } else { !forward };
        match self {
            Program::Stencil { grid, halo_bytes, periodic } => {
                // Symmetric: the neighbours a rank sends to are those it receives from.
                let mut stride = 1u32;
                for &side in grid {
                    let c = (rank / stride) % side;
                    for forward in [false, true] {
                        let next = if forward { c + 1 } else { c.wrapping_sub(1) };
                        let next = if next < side {
                            Some(next)
                        } else if *periodic {
                            Some(if forward { 0 } else { side - 1 })
                        } else {
                            None
                        };
                        if let Some(n) = next.filter(|&n| n != c) {
                            out.push((rank - c * stride + n * stride, *halo_bytes));
                        }
                    }
                    stride *= side;
                }
            }
            Program::Waterfall { grid, message_bytes } => {
                let mut stride = 1u32;
                for &side in grid {
                    let c = (rank / stride) % side;
                    // Sends go to the successor, receives come from the predecessor.
                    if sending && c + 1 < side {
                        out.push((rank + stride, *message_bytes));
                    } else if !sending && c > 0 {
                        out.push((rank - stride, *message_bytes));
                    }
                    stride *= side;
                }
            }
            Program::Butterfly { message_bytes, .. } => {
                let partner = rank ^ (1 << step);
                if partner < p {
                    out.push((partner, *message_bytes));
                }
            }
            Program::AllToAll { message_bytes, algorithm: AllToAll::Pairwise, .. } => {
                let k = step + 1;
                let peer = if dir(true) { (rank + k) % p } else { (rank + p - k) % p };
                out.push((peer, *message_bytes));
            }
            Program::AllToAll { message_bytes, algorithm: AllToAll::Linear, .. } => {
                out.extend((1..p).map(|k| ((rank + k) % p, *message_bytes)));
            }
            Program::RingAllReduce { bytes, .. } => {
                let peer = if dir(true) { (rank + 1) % p } else { (rank + p - 1) % p };
                out.push((peer, bytes.div_ceil(p as u64)));
            }
            Program::RandomPermutation { message_bytes, perms, .. } => {
                let (perm, inverse) = &perms[iteration as usize];
                let peer = if sending { perm[rank as usize] } else { inverse[rank as usize] };
                if peer != rank {
                    out.push((peer, *message_bytes));
                }
            }
        }
    }
}

/// The permutations of a [`Program::RandomPermutation`] job: one per iteration, from the
/// stream `(seed, workload, job * 2^32 + iteration)`, with their inverses.
pub fn random_permutations(seed: u64, job: u32, ranks: u32, iterations: u32) -> Vec<(Vec<u32>, Vec<u32>)> {
    (0..iterations)
        .map(|i| {
            let mut rng = stream(seed, Purpose::Workload, ((job as u64) << 32) | i as u64);
            let mut perm: Vec<u32> = (0..ranks).collect();
            shuffle(&mut rng, &mut perm);
            let mut inverse = vec![0; ranks as usize];
            for (r, &d) in perm.iter().enumerate() {
                inverse[d as usize] = r as u32;
            }
            (perm, inverse)
        })
        .collect()
}

impl Program {
    /// The program's operation graph: one iteration per rank as a template (one template
    /// per iteration for [`Program::RandomPermutation`], whose permutation changes), repeated
    /// `iterations` times, each iteration ending in a computation of `compute` (the job's
    /// time unit).
    ///
    /// A step is its receives and sends, all posted at once (`MPI_Irecv`/`MPI_Isend` then
    /// `MPI_Waitall`); a pipeline step ([`Order::ReceiveFirst`]) posts its sends once its
    /// receives are in. Every op of a step requires the previous step's end, a zero-time
    /// `calc` joining the step's ops; the iteration ends in its computation, after the last step's join.
    /// Messages of step `k` carry tag `k`. A rank posts its sends in the order
    /// [`Program::sends`] lists them, so its packets leave in that order.
    pub fn graph(&self, compute: u64, iterations: u32) -> Result<Repeated, String> {
        let templates = match self {
            Program::RandomPermutation { .. } => (0..iterations).map(|i| self.template(i, compute)).collect(),
            _ => vec![self.template(0, compute)],
        };
        Repeated::new(templates, iterations)
    }

    /// Iteration `iteration`'s ops of every rank.
    fn template(&self, iteration: u32, compute: u64) -> Schedule {
        let mut b = ScheduleBuilder::new();
        let steps = self.steps_per_iteration();
        let mut messages = Vec::new();
        let after = |b: &mut ScheduleBuilder, op: OpId, on: Option<OpId>| {
            if let Some(on) = on {
                b.requires(op, on);
            }
        };
        // A permutation's templates differ per iteration but must have as many ops per
        // rank: a fixed point stands in a zero-time calc for each message.
        let uniform = matches!(self, Program::RandomPermutation { .. });
        for rank in 0..self.ranks() {
            b.add_rank();
            let mut before: Option<OpId> = None;
            for step in 0..steps {
                let mut ops = Vec::new();
                messages.clear();
                self.receives(rank, iteration, step, &mut messages);
                for &(peer, bytes) in &messages {
                    let op = b.recv(Source::Rank(peer), bytes, TagMatch::Tag(step), 0);
                    after(&mut b, op, before);
                    ops.push(op);
                }
                if uniform && messages.is_empty() {
                    let op = b.calc(0);
                    after(&mut b, op, before);
                    ops.push(op);
                }
                let mut sends_after = before;
                if self.order() == Order::ReceiveFirst && !ops.is_empty() {
                    let received = b.calc(0);
                    ops.iter().for_each(|&op| b.requires(received, op));
                    ops.clear();
                    sends_after = Some(received);
                    ops.push(received);
                }
                messages.clear();
                self.sends(rank, iteration, step, &mut messages);
                for &(peer, bytes) in &messages {
                    let op = b.send(peer, bytes, step, 0);
                    after(&mut b, op, sends_after);
                    ops.push(op);
                }
                if uniform && messages.is_empty() {
                    let op = b.calc(0);
                    after(&mut b, op, sends_after);
                    ops.push(op);
                }
                if ops.is_empty() {
                    continue;
                }
                let join = b.calc(0);
                ops.iter().for_each(|&op| b.requires(join, op));
                before = Some(join);
            }
            // The iteration ends in its computation (the template's last op).
            let end = b.calc(compute);
            if let Some(on) = before {
                b.requires(end, on);
            }
        }
        b.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(ranks: u32) -> Vec<Program> {
        vec![
            Program::Stencil { grid: vec![4, 3], halo_bytes: 100, periodic: true },
            Program::Stencil { grid: vec![2, 3, 1], halo_bytes: 7, periodic: true },
            Program::Stencil { grid: vec![3, 3, 2], halo_bytes: 7, periodic: false },
            Program::Waterfall { grid: vec![4, 3], message_bytes: 8 },
            Program::Waterfall { grid: vec![5], message_bytes: 8 },
            Program::Butterfly { ranks, message_bytes: 64 },
            Program::AllToAll { ranks, message_bytes: 10, algorithm: AllToAll::Pairwise },
            Program::AllToAll { ranks, message_bytes: 10, algorithm: AllToAll::Linear },
            Program::RingAllReduce { ranks, bytes: 1000 },
            Program::RandomPermutation {
                ranks,
                message_bytes: 5,
                perms: Arc::new(random_permutations(3, 0, ranks, 3)),
            },
        ]
    }

    /// Every message sent in a step is expected by its receiver in that step, and nothing
    /// else is: a job can always finish on a network that delivers.
    #[test]
    fn sends_and_receives_match_at_every_step() {
        for program in all(8) {
            let p = program.ranks();
            for iteration in 0..3 {
                for step in 0..program.steps_per_iteration() {
                    let mut sent = Vec::new();
                    let mut expected = Vec::new();
                    for r in 0..p {
                        let mut out = Vec::new();
                        program.sends(r, iteration, step, &mut out);
                        assert!(out.len() as u64 <= program.max_messages_per_step(), "{program:?}");
                        sent.extend(out.iter().map(|&(peer, b)| (r, peer, b)));
                        for &(peer, b) in &out {
                            assert_ne!(peer, r, "{program:?} sends to itself");
                            assert!(b <= program.max_message_bytes());
                            let mut scratch = Vec::new();
                            let n = program.packets_between(r, peer, iteration, step, &mut scratch, |_| 1);
                            assert_eq!(n as usize, out.iter().filter(|m| m.0 == peer).count());
                        }
                        out.clear();
                        program.receives(r, iteration, step, &mut out);
                        expected.extend(out.iter().map(|&(peer, b)| (peer, r, b)));
                    }
                    sent.sort_unstable();
                    expected.sort_unstable();
                    assert_eq!(sent, expected, "{program:?}, step {step}");
                }
            }
        }
    }

    #[test]
    fn step_counts_follow_the_algorithms() {
        let p = |program: Program| program.steps_per_iteration();
        assert_eq!(p(Program::Butterfly { ranks: 16, message_bytes: 1 }), 4);
        assert_eq!(p(Program::RingAllReduce { ranks: 5, bytes: 1 }), 8);
        assert_eq!(p(Program::AllToAll { ranks: 5, message_bytes: 1, algorithm: AllToAll::Pairwise }), 4);
        assert_eq!(p(Program::AllToAll { ranks: 5, message_bytes: 1, algorithm: AllToAll::Linear }), 1);
        // A 3D stencil's interior rank has 6 distinct neighbours.
        let s = Program::Stencil { grid: vec![4, 4, 4], halo_bytes: 1, periodic: false };
        let mut out = Vec::new();
        s.sends(1 + 4 + 16, 0, 0, &mut out);
        assert_eq!(out.len(), 6);
    }
}

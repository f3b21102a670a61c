//! The emitter every algorithm writes through: rounds of receives and sends posted
//! together after the previous round's end, and the arithmetic the algorithms share
//! (chunk sizes, powers of two, the fold of non-power-of-two sizes).

use crate::graph::{OpId, ScheduleBuilder, Source, TagMatch};

/// One rank's view while it emits its part of a collective.
pub(super) struct Ctx<'a> {
    b: &'a mut ScheduleBuilder,
    /// The communicator's members' schedule ranks, in comm-rank order.
    ranks: &'a [u32],
    comm: u32,
    tag: u32,
    /// The communicator's size.
    pub(super) p: usize,
    /// This rank's comm rank.
    pub(super) me: usize,
    /// The op that ends when everything emitted so far has ended (or the caller's `after`).
    last: Option<OpId>,
    /// Whether any op was emitted.
    emitted: bool,
}

impl<'a> Ctx<'a> {
    /// A context for comm rank `me` of the members `ranks`.
    pub(super) fn new(
        b: &'a mut ScheduleBuilder,
        ranks: &'a [u32],
        comm: u32,
        tag: u32,
        me: usize,
        after: Option<OpId>,
    ) -> Ctx<'a> {
        Ctx { b, ranks, comm, tag, p: ranks.len(), me, last: after, emitted: false }
    }

    /// Posts the receives `recvs` and sends `sends` (`(comm rank, bytes)`) together, each
    /// starting after the previous round ends; the round ends when all of them have.
    pub(super) fn round(&mut self, recvs: &[(usize, u64)], sends: &[(usize, u64)]) {
        let first = self.b.ops_in_rank();
        for &(from, bytes) in recvs {
            let from = Source::Rank(self.ranks[from]);
            let op = self.b.recv(from, bytes, TagMatch::Tag(self.tag), self.comm);
            self.depend(op);
        }
        for &(to, bytes) in sends {
            let op = self.b.send(self.ranks[to], bytes, self.tag, self.comm);
            self.depend(op);
        }
        let end = self.b.ops_in_rank();
        match end - first {
            0 => {}
            1 => self.last = Some(first),
            _ => {
                let join = self.b.calc(0);
                for op in first..end {
                    self.b.requires(join, op);
                }
                self.last = Some(join);
            }
        }
        self.emitted |= end > first;
    }

    fn depend(&mut self, op: OpId) {
        if let Some(prev) = self.last {
            self.b.requires(op, prev);
        }
    }

    /// A round of one send.
    pub(super) fn send(&mut self, to: usize, bytes: u64) {
        self.round(&[], &[(to, bytes)]);
    }

    /// A round of one receive.
    pub(super) fn recv(&mut self, from: usize, bytes: u64) {
        self.round(&[(from, bytes)], &[]);
    }

    /// A round of one receive and one send (MPI's `Sendrecv`).
    pub(super) fn sendrecv(&mut self, to: usize, sbytes: u64, from: usize, rbytes: u64) {
        self.round(&[(from, rbytes)], &[(to, sbytes)]);
    }

    /// The op that ends when this rank's part ends; `None` if it emitted nothing.
    pub(super) fn finish(self) -> Option<OpId> {
        if self.emitted {
            self.last
        } else {
            None
        }
    }
}

/// The size of chunk `i` of `total` bytes cut into `parts` chunks: `total / parts`, one
/// byte more for the first `total % parts` chunks (MPICH's `cnts` of Rabenseifner's
/// algorithms, here with one-byte elements).
pub(super) fn chunk(total: u64, parts: usize, i: usize) -> u64 {
    let parts = parts as u64;
    total / parts + u64::from((i as u64) < total % parts)
}

/// The sum of `sizes[lo..hi]` (clamped to the slice).
pub(super) fn sum(sizes: &[u64], lo: usize, hi: usize) -> u64 {
    sizes[lo.min(sizes.len())..hi.min(sizes.len())].iter().sum()
}

/// The largest power of two `<= p` (`p >= 1`).
pub(super) fn pof2_floor(p: usize) -> usize {
    1 << (usize::BITS - 1 - p.leading_zeros())
}

/// The fold of a size `p` into its largest power of two `pof2`, as MPICH's recursive
/// doubling and Rabenseifner's algorithms do: of the first `2 * rem` ranks
/// (`rem = p - pof2`), one of each pair (`survivor_odd`: the odd one) takes part, the other
/// hands its data over first and gets the result last.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fold {
    /// The power of two.
    pub(super) pof2: usize,
    /// `p - pof2`.
    pub(super) rem: usize,
    /// Whether the odd rank of each of the first `rem` pairs survives (else the even).
    survivor_odd: bool,
}

impl Fold {
    /// The fold of `p` ranks.
    pub(super) fn new(p: usize, survivor_odd: bool) -> Fold {
        let pof2 = pof2_floor(p);
        Fold { pof2, rem: p - pof2, survivor_odd }
    }

    /// The virtual rank of `r`, or `None` if it is folded out.
    pub(super) fn virt(&self, r: usize) -> Option<usize> {
        if r >= 2 * self.rem {
            Some(r - self.rem)
        } else if (r % 2 == 1) == self.survivor_odd {
            Some(r / 2)
        } else {
            None
        }
    }

    /// The rank of virtual rank `v`.
    pub(super) fn real(&self, v: usize) -> usize {
        if v < self.rem {
            2 * v + usize::from(self.survivor_odd)
        } else {
            v + self.rem
        }
    }

    /// The partner of folded rank `r` (the survivor of its pair), or of a survivor `r` of
    /// the first `2 * rem` ranks (the folded one); `None` past them.
    pub(super) fn pair(&self, r: usize) -> Option<usize> {
        (r < 2 * self.rem).then_some(r ^ 1)
    }

    /// The ranks virtual rank `v` stands for: itself, and the folded one of its pair.
    pub(super) fn members(&self, v: usize) -> impl Iterator<Item = usize> {
        let r = self.real(v);
        std::iter::once(r).chain((v < self.rem).then_some(r ^ 1))
    }
}

//! Copies of a graph side by side: a trace of R ranks replayed `copies` times, as that many
//! independent jobs of one schedule, without storing the copies. Copy `k`'s rank `r` is rank
//! `k * R + r`; its messages go to and come from ranks of its own copy only.

use std::sync::Arc;

use crate::graph::{Graph, Op, OpId, Source};

/// `copies` copies of `inner` (see the module documentation).
#[derive(Clone)]
pub struct Replicas {
    inner: Arc<dyn Graph>,
    copies: u32,
}

impl Replicas {
    /// `copies` copies of `inner`; errors when there are none, or more than `u32::MAX` ranks
    /// in all.
    pub fn new(inner: Arc<dyn Graph>, copies: u32) -> Result<Replicas, String> {
        let total = u64::from(inner.num_ranks()) * u64::from(copies);
        if copies == 0 || inner.num_ranks() == 0 {
            return Err("at least one copy of at least one rank".into());
        }
        if total > u64::from(u32::MAX) {
            return Err(format!(
                "{copies} copies of {} ranks are more than 2^32 - 1 ranks",
                inner.num_ranks()
            ));
        }
        Ok(Replicas { inner, copies })
    }

    /// The copy's first rank and the rank within the copy of `rank`.
    fn split(&self, rank: u32) -> (u32, u32) {
        let n = self.inner.num_ranks();
        (rank / n * n, rank % n)
    }
}

impl Graph for Replicas {
    fn num_ranks(&self) -> u32 {
        self.inner.num_ranks() * self.copies
    }
    fn ops_in_rank(&self, rank: u32) -> u32 {
        self.inner.ops_in_rank(rank % self.inner.num_ranks())
    }
    fn op(&self, rank: u32, op: OpId) -> Op {
        let (base, r) = self.split(rank);
        match self.inner.op(r, op) {
            Op::Send { to, bytes, tag, comm } => Op::Send { to: base + to, bytes, tag, comm },
            Op::Recv { from: Source::Rank(f), bytes, tag, comm } => {
                Op::Recv { from: Source::Rank(base + f), bytes, tag, comm }
            }
            other => other,
        }
    }
    fn unmet(&self, rank: u32, op: OpId) -> u32 {
        self.inner.unmet(rank % self.inner.num_ranks(), op)
    }
    fn each_after_start(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        self.inner.each_after_start(rank % self.inner.num_ranks(), op, each)
    }
    fn each_after_end(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        self.inner.each_after_end(rank % self.inner.num_ranks(), op, each)
    }
    fn iterations(&self) -> u32 {
        self.inner.iterations()
    }
    fn ops_per_iteration(&self, rank: u32) -> u32 {
        self.inner.ops_per_iteration(rank % self.inner.num_ranks())
    }
    fn cpu(&self, rank: u32, op: OpId) -> u8 {
        self.inner.cpu(rank % self.inner.num_ranks(), op)
    }
    fn nic(&self, rank: u32, op: OpId) -> u8 {
        self.inner.nic(rank % self.inner.num_ranks(), op)
    }
    fn op_name(&self, rank: u32, op: OpId) -> String {
        self.inner.op_name(self.split(rank).1, op)
    }
}

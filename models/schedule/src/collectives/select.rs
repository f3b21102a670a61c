//! MPICH 4's default choice of algorithm for intra-communicators.

use super::{
    AllgatherAlgo, AllreduceAlgo, AlltoallAlgo, BarrierAlgo, BcastAlgo, ReduceAlgo, ReduceScatterAlgo,
    TreeAlgo,
};

/// A kind of collective, for [`select`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `MPI_Bcast`; the size is the buffer's.
    Bcast,
    /// `MPI_Reduce`; the size is the buffer's.
    Reduce,
    /// `MPI_Allreduce`; the size is the buffer's.
    Allreduce,
    /// `MPI_Allgather`; the size is each rank's contribution.
    Allgather,
    /// `MPI_Alltoall`; the size is the block per pair.
    Alltoall,
    /// `MPI_Reduce_scatter_block`; the size is each rank's block.
    ReduceScatter,
    /// `MPI_Barrier`; the size is ignored.
    Barrier,
    /// `MPI_Gather`; the size is each rank's contribution.
    Gather,
    /// `MPI_Scatter`; the size is each rank's part.
    Scatter,
}

/// An algorithm of some collective: what [`select`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// For [`Kind::Bcast`].
    Bcast(BcastAlgo),
    /// For [`Kind::Reduce`].
    Reduce(ReduceAlgo),
    /// For [`Kind::Allreduce`].
    Allreduce(AllreduceAlgo),
    /// For [`Kind::Allgather`].
    Allgather(AllgatherAlgo),
    /// For [`Kind::Alltoall`].
    Alltoall(AlltoallAlgo),
    /// For [`Kind::ReduceScatter`].
    ReduceScatter(ReduceScatterAlgo),
    /// For [`Kind::Barrier`].
    Barrier(BarrierAlgo),
    /// For [`Kind::Gather`] and [`Kind::Scatter`].
    Tree(TreeAlgo),
}

/// The thresholds of [`select`], in bytes unless named ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// Bcast: binomial on fewer ranks than this.
    pub bcast_min_ranks: usize,
    /// Bcast: binomial up to this many bytes.
    pub bcast_short: u64,
    /// Bcast on a power of two: scatter + recursive doubling up to this many bytes.
    pub bcast_medium: u64,
    /// Allreduce: recursive doubling up to this many bytes.
    pub allreduce_short: u64,
    /// Reduce: binomial up to this many bytes.
    pub reduce_short: u64,
    /// Allgather on a power of two: recursive doubling below this total (`p` blocks).
    pub allgather_pof2_total: u64,
    /// Allgather otherwise: Bruck's below this total.
    pub allgather_total: u64,
    /// Reduce-scatter: recursive halving below this total (`p` blocks).
    pub reduce_scatter_total: u64,
    /// Alltoall: on fewer ranks than this, no Bruck's.
    pub alltoall_min_ranks: usize,
    /// Alltoall: Bruck's up to this block size (from `alltoall_min_ranks` ranks).
    pub alltoall_short: u64,
    /// Alltoall: linear up to this block size, pairwise above.
    pub alltoall_medium: u64,
}

/// MPICH 4's defaults, from its JSON tuning file `maint/tuning/coll/mpir/generic.json`
/// (the `comm_type=intra` branches; read at commit 6a79bf65 of pmodels/mpich).
///
/// Simplified: no SMP-aware (`comm_hierarchy=parent`) variants; operations are taken as
/// built-in and commutative; send buffers are never `MPI_IN_PLACE`
/// (`is_sendbuf_inplace=no`); MPICH's `count` (elements) is taken as bytes (one-byte
/// elements) in the allreduce and reduce rule `count < pof2`;
/// `MPIR_Alltoall_intra_scattered` is [`AlltoallAlgo::Linear`] (without its throttle,
/// `MPIR_CVAR_ALLTOALL_THROTTLE`, 32 requests by default); `CVAR`s a user sets are not
/// honoured.
pub const THRESHOLDS: Thresholds = Thresholds {
    bcast_min_ranks: 8,
    bcast_short: 12_288,
    bcast_medium: 524_288,
    allreduce_short: 8,
    reduce_short: 2048,
    allgather_pof2_total: 524_288,
    allgather_total: 81_920,
    reduce_scatter_total: 524_288,
    alltoall_min_ranks: 8,
    alltoall_short: 256,
    alltoall_medium: 32_768,
};

/// The algorithm MPICH 4 picks by default for a collective of `kind` with `bytes` (its
/// size parameter, see [`Kind`]) on an intra-communicator of `comm_size` ranks, by
/// [`THRESHOLDS`].
pub fn select(kind: Kind, bytes: u64, comm_size: usize) -> Algorithm {
    let t = &THRESHOLDS;
    let p = comm_size.max(1);
    let pow2 = p.is_power_of_two();
    let pof2 = 1u64 << (usize::BITS - 1 - p.leading_zeros());
    let total = bytes.saturating_mul(p as u64);
    match kind {
        Kind::Bcast => Algorithm::Bcast(if p < t.bcast_min_ranks || bytes <= t.bcast_short {
            BcastAlgo::Binomial
        } else if pow2 && bytes <= t.bcast_medium {
            BcastAlgo::ScatterRecursiveDoublingAllgather
        } else {
            BcastAlgo::ScatterRingAllgather
        }),
        Kind::Allreduce => Algorithm::Allreduce(if bytes <= t.allreduce_short || bytes < pof2 {
            AllreduceAlgo::RecursiveDoubling
        } else {
            AllreduceAlgo::ReduceScatterAllgather
        }),
        Kind::Reduce => Algorithm::Reduce(if bytes <= t.reduce_short || bytes < pof2 {
            ReduceAlgo::Binomial
        } else {
            ReduceAlgo::ReduceScatterGather
        }),
        Kind::Allgather => Algorithm::Allgather(match (pow2, total) {
            (true, n) if n < t.allgather_pof2_total => AllgatherAlgo::RecursiveDoubling,
            (false, n) if n < t.allgather_total => AllgatherAlgo::Bruck,
            _ => AllgatherAlgo::Ring,
        }),
        Kind::Alltoall => Algorithm::Alltoall(if p >= t.alltoall_min_ranks && bytes <= t.alltoall_short {
            AlltoallAlgo::Bruck
        } else if bytes <= t.alltoall_medium {
            AlltoallAlgo::Linear
        } else {
            AlltoallAlgo::Pairwise
        }),
        Kind::ReduceScatter => Algorithm::ReduceScatter(if total < t.reduce_scatter_total {
            ReduceScatterAlgo::RecursiveHalving
        } else {
            ReduceScatterAlgo::Pairwise
        }),
        Kind::Barrier => Algorithm::Barrier(BarrierAlgo::Dissemination),
        Kind::Gather | Kind::Scatter => Algorithm::Tree(TreeAlgo::Binomial),
    }
}

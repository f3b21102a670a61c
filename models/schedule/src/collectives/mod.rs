//! The collective algorithms of MPI libraries as generators of [`Schedule`](crate::Schedule)
//! graphs: [`emit`] appends one rank's part of a [`Collective`] on a [`Comm`] to the
//! current rank of a [`ScheduleBuilder`]; [`select`] picks the algorithm MPICH 4 would.
//!
//! Every rank of the communicator emits its part with the same collective, communicator
//! and tag; the parts pair up exactly (receives name their source and tag: no wildcards).
//! Algorithms follow MPICH's intra-communicator implementations (`src/mpi/coll/`) and
//! Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication Operations in
//! MPICH", IJHPCA 2005; Bruck et al., IEEE TPDS 1997. Each step is a *round*: its
//! receives and sends are posted together once the previous round has ended (MPICH's
//! `Isend`/`Irecv` + `Waitall`, or `Sendrecv`), and a round of several ops ends in a
//! `calc 0` join. Where MPICH blocks (a binomial reduce or gather receives its children
//! one after the other) each message is its own round. Local reductions take no time: only
//! messages are emitted.
//!
//! Sizes that do not divide: a buffer of `n` bytes cut into `k` chunks gives chunk `i`
//! `n / k` bytes, one more for the first `n % k` (MPICH's counts for Rabenseifner's
//! algorithms, with one-byte elements; its scatter of a broadcast uses `ceil(n / p)` for
//! all but the last instead). Chunks of zero bytes are still sent as (empty) messages, so
//! that the rounds do not depend on the size. Non-powers of two fold in and out as MPICH
//! does for recursive doubling, Rabenseifner and recursive halving: of the first
//! `2 (p - pof2)` ranks, one of each pair hands its data to the other first and gets the
//! result last (two more rounds).

mod allgather;
mod allreduce;
mod alltoall;
mod barrier;
mod bcast;
mod gather;
mod named;
mod reduce;
mod reduce_scatter;
mod round;
mod select;

pub use named::KINDS;
pub use select::{select, Algorithm, Kind, THRESHOLDS};

use crate::graph::{OpId, ScheduleBuilder};
use round::Ctx;

/// A communicator: its id (the `comm` of its messages) and its members' schedule ranks in
/// comm-rank order (comm rank `i` is schedule rank `ranks[i]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comm {
    /// The communicator's id, put in every message's `comm`.
    pub id: u32,
    /// The members' schedule ranks, in comm-rank order; distinct.
    pub ranks: Vec<u32>,
}

impl Comm {
    /// The communicator of schedule ranks `0..n` in order.
    pub fn world(id: u32, n: u32) -> Comm {
        Comm { id, ranks: (0..n).collect() }
    }

    /// Its size.
    pub fn size(&self) -> usize {
        self.ranks.len()
    }
}

/// Broadcast algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BcastAlgo {
    /// Binomial tree: `ceil(log2 p)` rounds of all the bytes.
    Binomial,
    /// Binomial scatter of `p` chunks, then recursive-doubling allgather (van de Geijn).
    ScatterRecursiveDoublingAllgather,
    /// Binomial scatter of `p` chunks, then ring allgather.
    ScatterRingAllgather,
}

/// Reduce algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceAlgo {
    /// Binomial tree.
    Binomial,
    /// Rabenseifner: reduce-scatter by recursive halving, then a binomial gather.
    ReduceScatterGather,
}

/// Allreduce algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllreduceAlgo {
    /// Ring reduce-scatter then ring allgather: `2 (p - 1)` rounds.
    Ring,
    /// Recursive doubling of the whole buffer.
    RecursiveDoubling,
    /// Rabenseifner: recursive-halving reduce-scatter, recursive-doubling allgather.
    ReduceScatterAllgather,
    /// Binomial reduce to comm rank 0, then binomial broadcast from it.
    ReduceBcast,
}

/// Allgather algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AllgatherAlgo {
    /// Ring: `p - 1` rounds of one block.
    Ring,
    /// Recursive doubling (folded for non-powers of two).
    RecursiveDoubling,
    /// Bruck's: `ceil(log2 p)` rounds.
    Bruck,
}

/// All-to-all algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AlltoallAlgo {
    /// Pairwise exchange: `p - 1` rounds.
    Pairwise,
    /// Everything posted at once: one round.
    Linear,
    /// Bruck's: `ceil(log2 p)` rounds of about half the blocks.
    Bruck,
}

/// Reduce-scatter (equal blocks) algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceScatterAlgo {
    /// Recursive halving (folded for non-powers of two).
    RecursiveHalving,
    /// Pairwise exchange: `p - 1` rounds.
    Pairwise,
    /// Ring: `p - 1` rounds.
    Ring,
}

/// Barrier algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierAlgo {
    /// Dissemination: `ceil(log2 p)` rounds of empty messages.
    Dissemination,
}

/// Gather and scatter algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TreeAlgo {
    /// Binomial tree: `ceil(log2 p)` rounds.
    Binomial,
    /// The root talks to every rank directly, all posted at once.
    Linear,
}

/// A collective operation with its sizes (bytes) and algorithm; roots are comm ranks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// `MPI_Bcast` of `bytes` from `root`.
    Bcast {
        /// The root's comm rank.
        root: usize,
        /// The buffer's size.
        bytes: u64,
        /// The algorithm.
        algo: BcastAlgo,
    },
    /// `MPI_Reduce` of `bytes` to `root` (a commutative operation).
    Reduce {
        /// The root's comm rank.
        root: usize,
        /// The buffer's size.
        bytes: u64,
        /// The algorithm.
        algo: ReduceAlgo,
    },
    /// `MPI_Allreduce` of `bytes` (a commutative operation).
    Allreduce {
        /// The buffer's size.
        bytes: u64,
        /// The algorithm.
        algo: AllreduceAlgo,
    },
    /// `MPI_Allgather` of `bytes_per_rank` from each rank.
    Allgather {
        /// Each rank's contribution.
        bytes_per_rank: u64,
        /// The algorithm.
        algo: AllgatherAlgo,
    },
    /// `MPI_Alltoall` of `bytes_per_pair` from each rank to each other.
    Alltoall {
        /// The block each rank sends each other rank.
        bytes_per_pair: u64,
        /// The algorithm.
        algo: AlltoallAlgo,
    },
    /// `MPI_Reduce_scatter_block`: each rank ends with its `bytes_per_rank` block reduced.
    ReduceScatter {
        /// Each rank's block of the result.
        bytes_per_rank: u64,
        /// The algorithm.
        algo: ReduceScatterAlgo,
    },
    /// `MPI_Barrier`.
    Barrier {
        /// The algorithm.
        algo: BarrierAlgo,
    },
    /// `MPI_Gather` of `bytes_per_rank` from each rank to `root`.
    Gather {
        /// The root's comm rank.
        root: usize,
        /// Each rank's contribution.
        bytes_per_rank: u64,
        /// The algorithm.
        algo: TreeAlgo,
    },
    /// `MPI_Scatter` of `bytes_per_rank` to each rank from `root`.
    Scatter {
        /// The root's comm rank.
        root: usize,
        /// Each rank's part.
        bytes_per_rank: u64,
        /// The algorithm.
        algo: TreeAlgo,
    },
}

/// Appends comm rank `me`'s part of `c` on `comm` to the builder's current rank (which
/// must be `comm.ranks[me]`); every op starts after `after` ends, when given. Messages
/// carry `comm.id` and `tag`. Returns an op that ends when this rank's part has ended
/// (a `calc 0` join where the part ends in several ops), or `None` if it has nothing to do
/// (a communicator of one rank).
///
/// # Panics
/// If `me` or a root is not below the communicator's size.
pub fn emit(
    b: &mut ScheduleBuilder,
    c: &Collective,
    comm: &Comm,
    me: usize,
    tag: u32,
    after: Option<OpId>,
) -> Option<OpId> {
    assert!(me < comm.size(), "comm rank {me} of a communicator of {}", comm.size());
    let mut x = Ctx::new(b, &comm.ranks, comm.id, tag, me, after);
    let root_ok =
        |root: usize| assert!(root < comm.size(), "root {root} of a communicator of {}", comm.size());
    match *c {
        Collective::Bcast { root, bytes, algo } => {
            root_ok(root);
            match algo {
                BcastAlgo::Binomial => bcast::binomial(&mut x, bytes, root),
                BcastAlgo::ScatterRecursiveDoublingAllgather => {
                    bcast::scatter_rd_allgather(&mut x, bytes, root)
                }
                BcastAlgo::ScatterRingAllgather => bcast::scatter_ring_allgather(&mut x, bytes, root),
            }
        }
        Collective::Reduce { root, bytes, algo } => {
            root_ok(root);
            match algo {
                ReduceAlgo::Binomial => reduce::binomial(&mut x, bytes, root),
                ReduceAlgo::ReduceScatterGather => reduce::reduce_scatter_gather(&mut x, bytes, root),
            }
        }
        Collective::Allreduce { bytes, algo } => match algo {
            AllreduceAlgo::Ring => allreduce::ring(&mut x, bytes),
            AllreduceAlgo::RecursiveDoubling => allreduce::recursive_doubling(&mut x, bytes),
            AllreduceAlgo::ReduceScatterAllgather => allreduce::reduce_scatter_allgather(&mut x, bytes),
            AllreduceAlgo::ReduceBcast => allreduce::reduce_bcast(&mut x, bytes),
        },
        Collective::Allgather { bytes_per_rank, algo } => {
            let blocks = vec![bytes_per_rank; comm.size()];
            match algo {
                AllgatherAlgo::Ring => allgather::ring(&mut x, &blocks, 0),
                AllgatherAlgo::RecursiveDoubling => allgather::recursive_doubling(&mut x, &blocks, 0),
                AllgatherAlgo::Bruck => allgather::bruck(&mut x, bytes_per_rank),
            }
        }
        Collective::Alltoall { bytes_per_pair, algo } => match algo {
            AlltoallAlgo::Pairwise => alltoall::pairwise(&mut x, bytes_per_pair),
            AlltoallAlgo::Linear => alltoall::linear(&mut x, bytes_per_pair),
            AlltoallAlgo::Bruck => alltoall::bruck(&mut x, bytes_per_pair),
        },
        Collective::ReduceScatter { bytes_per_rank, algo } => match algo {
            ReduceScatterAlgo::RecursiveHalving => reduce_scatter::recursive_halving(&mut x, bytes_per_rank),
            ReduceScatterAlgo::Pairwise => reduce_scatter::pairwise(&mut x, bytes_per_rank),
            ReduceScatterAlgo::Ring => reduce_scatter::ring(&mut x, bytes_per_rank),
        },
        Collective::Barrier { algo: BarrierAlgo::Dissemination } => barrier::dissemination(&mut x),
        Collective::Gather { root, bytes_per_rank, algo } => {
            root_ok(root);
            match algo {
                TreeAlgo::Binomial => gather::gather_binomial(&mut x, bytes_per_rank, root),
                TreeAlgo::Linear => gather::gather_linear(&mut x, bytes_per_rank, root),
            }
        }
        Collective::Scatter { root, bytes_per_rank, algo } => {
            root_ok(root);
            match algo {
                TreeAlgo::Binomial => {
                    gather::scatter_binomial(&mut x, &vec![bytes_per_rank; comm.size()], root)
                }
                TreeAlgo::Linear => gather::scatter_linear(&mut x, bytes_per_rank, root),
            }
        }
    }
    x.finish()
}

/// Emits the whole collective: every member of `comm` its part, into a schedule of `n`
/// ranks (ranks outside the communicator get no ops). A convenience for tests and tools.
///
/// # Panics
/// If a member of `comm` is not below `n`.
pub fn whole(c: &Collective, comm: &Comm, n: u32, tag: u32) -> crate::Schedule {
    assert!(comm.ranks.iter().all(|&r| r < n), "a member of the communicator is not below {n}");
    let mut b = ScheduleBuilder::new();
    for r in 0..n {
        b.add_rank();
        if let Some(me) = comm.ranks.iter().position(|&x| x == r) {
            emit(&mut b, c, comm, me, tag, None);
        }
    }
    b.build()
}

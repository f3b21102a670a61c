//! Collectives and their algorithms by name, as configurations write them
//! (`allreduce`, `recursive_doubling`), and a [`Collective`] made from a kind, a size, a
//! root and an algorithm.

use super::select::{Algorithm, Kind};
use super::{
    AllgatherAlgo, AllreduceAlgo, AlltoallAlgo, BarrierAlgo, BcastAlgo, Collective, ReduceAlgo,
    ReduceScatterAlgo, TreeAlgo,
};

/// Every kind of collective with its name, in the order documentation lists them.
pub const KINDS: [(&str, Kind); 9] = [
    ("bcast", Kind::Bcast),
    ("reduce", Kind::Reduce),
    ("allreduce", Kind::Allreduce),
    ("allgather", Kind::Allgather),
    ("alltoall", Kind::Alltoall),
    ("reduce_scatter", Kind::ReduceScatter),
    ("barrier", Kind::Barrier),
    ("gather", Kind::Gather),
    ("scatter", Kind::Scatter),
];

impl Kind {
    /// The kind named `name` (`allreduce`, ...).
    pub fn parse(name: &str) -> Option<Kind> {
        KINDS.iter().find(|k| k.0 == name).map(|k| k.1)
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        KINDS.iter().find(|k| k.1 == self).map(|k| k.0).expect("every kind is named")
    }

    /// Its algorithms with their names.
    pub fn algorithms(self) -> &'static [(&'static str, Algorithm)] {
        use Algorithm as A;
        match self {
            Kind::Bcast => &[
                ("binomial", A::Bcast(BcastAlgo::Binomial)),
                (
                    "scatter_recursive_doubling_allgather",
                    A::Bcast(BcastAlgo::ScatterRecursiveDoublingAllgather),
                ),
                ("scatter_ring_allgather", A::Bcast(BcastAlgo::ScatterRingAllgather)),
            ],
            Kind::Reduce => &[
                ("binomial", A::Reduce(ReduceAlgo::Binomial)),
                ("reduce_scatter_gather", A::Reduce(ReduceAlgo::ReduceScatterGather)),
            ],
            Kind::Allreduce => &[
                ("ring", A::Allreduce(AllreduceAlgo::Ring)),
                ("recursive_doubling", A::Allreduce(AllreduceAlgo::RecursiveDoubling)),
                ("reduce_scatter_allgather", A::Allreduce(AllreduceAlgo::ReduceScatterAllgather)),
                ("reduce_bcast", A::Allreduce(AllreduceAlgo::ReduceBcast)),
            ],
            Kind::Allgather => &[
                ("ring", A::Allgather(AllgatherAlgo::Ring)),
                ("recursive_doubling", A::Allgather(AllgatherAlgo::RecursiveDoubling)),
                ("bruck", A::Allgather(AllgatherAlgo::Bruck)),
            ],
            Kind::Alltoall => &[
                ("pairwise", A::Alltoall(AlltoallAlgo::Pairwise)),
                ("linear", A::Alltoall(AlltoallAlgo::Linear)),
                ("bruck", A::Alltoall(AlltoallAlgo::Bruck)),
            ],
            Kind::ReduceScatter => &[
                ("recursive_halving", A::ReduceScatter(ReduceScatterAlgo::RecursiveHalving)),
                ("pairwise", A::ReduceScatter(ReduceScatterAlgo::Pairwise)),
                ("ring", A::ReduceScatter(ReduceScatterAlgo::Ring)),
            ],
            Kind::Barrier => &[("dissemination", A::Barrier(BarrierAlgo::Dissemination))],
            Kind::Gather | Kind::Scatter => {
                &[("binomial", A::Tree(TreeAlgo::Binomial)), ("linear", A::Tree(TreeAlgo::Linear))]
            }
        }
    }

    /// Its algorithm named `name`.
    pub fn algorithm(self, name: &str) -> Option<Algorithm> {
        self.algorithms().iter().find(|a| a.0 == name).map(|a| a.1)
    }
}

impl Algorithm {
    /// Its name among its kind's algorithms.
    pub fn name(self) -> &'static str {
        KINDS
            .iter()
            .flat_map(|k| k.1.algorithms())
            .find(|a| a.1 == self)
            .map(|a| a.0)
            .expect("every algorithm is named")
    }
}

impl Collective {
    /// A collective of `kind` with `bytes` (its size as [`Kind`] says: the buffer, each
    /// rank's part or each pair's block), `root` (for those that have one) and `algo`;
    /// `None` when `algo` is not one of `kind`'s.
    pub fn new(kind: Kind, bytes: u64, root: usize, algo: Algorithm) -> Option<Collective> {
        use Algorithm as A;
        Some(match (kind, algo) {
            (Kind::Bcast, A::Bcast(algo)) => Collective::Bcast { root, bytes, algo },
            (Kind::Reduce, A::Reduce(algo)) => Collective::Reduce { root, bytes, algo },
            (Kind::Allreduce, A::Allreduce(algo)) => Collective::Allreduce { bytes, algo },
            (Kind::Allgather, A::Allgather(algo)) => Collective::Allgather { bytes_per_rank: bytes, algo },
            (Kind::Alltoall, A::Alltoall(algo)) => Collective::Alltoall { bytes_per_pair: bytes, algo },
            (Kind::ReduceScatter, A::ReduceScatter(algo)) => {
                Collective::ReduceScatter { bytes_per_rank: bytes, algo }
            }
            (Kind::Barrier, A::Barrier(algo)) => Collective::Barrier { algo },
            (Kind::Gather, A::Tree(algo)) => Collective::Gather { root, bytes_per_rank: bytes, algo },
            (Kind::Scatter, A::Tree(algo)) => Collective::Scatter { root, bytes_per_rank: bytes, algo },
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collectives::select;

    #[test]
    fn every_kind_and_algorithm_has_a_name_that_reads_back() {
        for (name, kind) in KINDS {
            assert_eq!((Kind::parse(name), kind.name()), (Some(kind), name));
            for &(algo_name, algo) in kind.algorithms() {
                assert_eq!(kind.algorithm(algo_name), Some(algo));
                assert!(Collective::new(kind, 64, 0, algo).is_some(), "{name} {algo_name}");
            }
            // MPICH's choice is one of the kind's algorithms, whatever the size.
            for (bytes, ranks) in [(1, 2), (4096, 16), (1 << 20, 7), (1 << 24, 64)] {
                let chosen = select(kind, bytes, ranks);
                assert!(kind.algorithms().iter().any(|a| a.1 == chosen), "{name} {bytes} {ranks}");
            }
        }
        assert_eq!(Kind::parse("allreduce").unwrap().algorithm("bruck"), None);
        let ring = Kind::Allreduce.algorithm("ring").unwrap();
        assert_eq!(Collective::new(Kind::Alltoall, 8, 0, ring), None);
        assert_eq!(Algorithm::Alltoall(AlltoallAlgo::Bruck).name(), "bruck");
    }
}

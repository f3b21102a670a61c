use crate::{LinkId, LpId};

/// Errors the engine reports before or while running. All are fatal for the run.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// A link has latency 0 (which would give a lookahead of 0) or one that does not fit
    /// 32 bits.
    #[error("link {link} ({src} -> {dst}) has latency {latency}; every link needs 1..2^32 cycles")]
    BadLatency {
        /// The offending link.
        link: LinkId,
        /// Its sender.
        src: LpId,
        /// Its receiver.
        dst: LpId,
        /// Its latency.
        latency: crate::Time,
    },
    /// A link names an LP that does not exist.
    #[error("link {link} names LP {lp}, but there are only {num_lps} LPs")]
    UnknownLp {
        /// The offending link.
        link: LinkId,
        /// The LP it names.
        lp: LpId,
        /// How many LPs there are.
        num_lps: usize,
    },
    /// A link given to a rank starts at an LP the rank does not host (a rank gets only the
    /// links that leave its own LPs).
    #[error("link {link} starts at LP {src}, which rank {rank} does not host")]
    ForeignLink {
        /// The offending link (index in the rank's list).
        link: LinkId,
        /// Its sender.
        src: LpId,
        /// This rank.
        rank: usize,
    },
    /// The partition map does not cover every LP.
    #[error("partition map has {got} entries for {num_lps} LPs")]
    PartitionMapLength {
        /// Entries in the map.
        got: usize,
        /// LPs in the model.
        num_lps: usize,
    },
    /// A partition holds no LP.
    #[error("partition {0} is empty; use fewer partitions than LPs")]
    EmptyPartition(u32),
    /// This rank hosts no partition.
    #[error("rank {rank} hosts no partition; use at most as many ranks as partitions")]
    NoLocalPartition {
        /// The rank.
        rank: usize,
    },
    /// An LP was given to a rank that does not host its partition.
    #[error("LP {lp} belongs to partition {partition}, which is not on rank {rank}")]
    ForeignLp {
        /// The LP.
        lp: LpId,
        /// Its partition.
        partition: u32,
        /// This rank.
        rank: usize,
    },
    /// A local partition did not get all its LPs.
    #[error("partition {partition} got {got} LPs, expected {expected}")]
    MissingLps {
        /// The partition.
        partition: u32,
        /// LPs given.
        got: usize,
        /// LPs it has in the partition map.
        expected: usize,
    },
    /// The model failed (panicked) in a partition; the whole run stopped at the next
    /// synchronisation.
    #[error("rank {rank}, partition {partition} failed: {message}")]
    PartitionFailed {
        /// Rank of the failing partition (`usize::MAX` if not known on this rank).
        rank: usize,
        /// The failing partition (`u32::MAX` for a failure in the exchange itself).
        partition: u32,
        /// What went wrong.
        message: String,
    },
    /// The ranks of a distributed run were given different layouts (partition maps or
    /// partitions per rank): they were started with different arguments.
    #[error(
        "the ranks were given different partition layouts (started with different threads or \
         configurations?); every rank must get the same"
    )]
    LayoutMismatch,
    /// A census was asked of a run on several ranks.
    #[error(
        "a census is taken on one rank ({ranks} ranks here): its counts do not depend on how \
         the run is split, so run it without mpiexec"
    )]
    CensusOnRanks {
        /// The ranks of the run.
        ranks: usize,
    },
    /// A worker thread panicked.
    #[error("partition {partition} failed: {message}")]
    WorkerPanic {
        /// Partition whose thread failed.
        partition: u32,
        /// Panic message.
        message: String,
    },
}

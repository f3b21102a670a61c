//! The built-in workload kinds: for each, its entry in the registry (name, doc, documented
//! keys), its settings (the keys of its job's table, read by serde) and the [`Program`] they
//! build, with the checks that serde's types do not make (a grid's sides, a power of two).
//! `WORKLOADS` (mod.rs) lists them.

use super::{
    parse_as, random_permutations, AllToAll, JobContext, KindError, KindParams, Program, WorkloadEntry,
};
use base::settings::Setting;
use serde::Deserialize;
use std::sync::Arc;

/// `stencil2d` in the workload registry.
pub(super) const STENCIL2D: WorkloadEntry = WorkloadEntry {
    name: "stencil2d",
    doc: "halo exchange on a 2D process grid: each rank sends halo_bytes to its 4 neighbours and receives from them, then computes (Pascual and Navaridas's (ICS'18) Stencil 2D)",
    settings: &[
        Setting { key: "grid", default: "required", doc: "process grid [x, y]; ranks = x * y, rank r at (r mod x, r div x)" },
        Setting { key: "halo_bytes", default: "required", doc: "bytes sent to each neighbour per iteration" },
        Setting { key: "periodic", default: "true", doc: "neighbours wrap around the grid's edges (a torus of processes)" },
    ],
    files: &[],
    parse: parse_as::<Stencil2d>,
};

/// The settings of `stencil2d`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stencil2d {
    /// Process grid.
    grid: [u32; 2],
    /// Bytes per face.
    halo_bytes: u64,
    /// Wrap around.
    #[serde(default = "yes")]
    periodic: bool,
}

impl KindParams for Stencil2d {
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        Ok(Program::Stencil {
            grid: grid(&self.grid)?,
            halo_bytes: at_least_one("halo_bytes", self.halo_bytes)?,
            periodic: self.periodic,
        })
    }
}

/// `stencil3d` in the workload registry.
pub(super) const STENCIL3D: WorkloadEntry = WorkloadEntry {
    name: "stencil3d",
    doc: "halo exchange on a 3D process grid: 6 neighbours (Pascual and Navaridas's (ICS'18) Stencil 3D)",
    settings: &[
        Setting { key: "grid", default: "required", doc: "process grid [x, y, z]" },
        Setting { key: "halo_bytes", default: "required", doc: "bytes sent to each neighbour per iteration" },
        Setting { key: "periodic", default: "true", doc: "neighbours wrap around the grid's edges" },
    ],
    files: &[],
    parse: parse_as::<Stencil3d>,
};

/// The settings of `stencil3d`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stencil3d {
    /// Process grid.
    grid: [u32; 3],
    /// Bytes per face.
    halo_bytes: u64,
    /// Wrap around.
    #[serde(default = "yes")]
    periodic: bool,
}

impl KindParams for Stencil3d {
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        Ok(Program::Stencil {
            grid: grid(&self.grid)?,
            halo_bytes: at_least_one("halo_bytes", self.halo_bytes)?,
            periodic: self.periodic,
        })
    }
}

/// `butterfly` in the workload registry.
pub(super) const BUTTERFLY: WorkloadEntry = WorkloadEntry {
    name: "butterfly",
    doc: "recursive doubling: log2(ranks) steps, in step k rank r exchanges message_bytes with r xor 2^k (Pascual and Navaridas's (ICS'18) Butterfly)",
    settings: &[
        Setting { key: "ranks", default: "required", doc: "ranks, a power of two" },
        Setting { key: "message_bytes", default: "required", doc: "bytes per message" },
    ],
    files: &[],
    parse: parse_as::<Butterfly>,
};

/// The settings of `butterfly`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Butterfly {
    /// Ranks (a power of two).
    ranks: u32,
    /// Bytes per message.
    message_bytes: u64,
}

impl KindParams for Butterfly {
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        Ok(Program::Butterfly {
            ranks: power_of_two(ranks(self.ranks)?, "butterfly")?,
            message_bytes: at_least_one("message_bytes", self.message_bytes)?,
        })
    }
}

/// `waterfall` in the workload registry.
pub(super) const WATERFALL: WorkloadEntry = WorkloadEntry {
    name: "waterfall",
    doc: "a pipelined wavefront of small messages (Pascual and Navaridas's (ICS'18) Waterfall): each iteration is a wave; a rank waits for the wave's message from its predecessor in every grid dimension, then sends to its successors",
    settings: &[
        Setting { key: "grid", default: "required", doc: "process grid, 1 to 3 dimensions, e.g. [73, 72]" },
        Setting { key: "message_bytes", default: "required", doc: "bytes per message" },
    ],
    files: &[],
    parse: parse_as::<Waterfall>,
};

/// The settings of `waterfall`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Waterfall {
    /// Process grid.
    grid: Vec<u32>,
    /// Bytes per message.
    message_bytes: u64,
}

impl KindParams for Waterfall {
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        Ok(Program::Waterfall {
            grid: grid(&self.grid)?,
            message_bytes: at_least_one("message_bytes", self.message_bytes)?,
        })
    }
}

/// `alltoall` in the workload registry.
pub(super) const ALLTOALL: WorkloadEntry = WorkloadEntry {
    name: "alltoall",
    doc: "all-to-all personalized exchange, pairwise (ranks - 1 steps: send to r + k, receive from r - k) or linear (one step: send to every other rank)",
    settings: &[
        Setting { key: "ranks", default: "required", doc: "ranks" },
        Setting { key: "message_bytes", default: "required", doc: "bytes from each rank to each other rank" },
        Setting { key: "algorithm", default: "pairwise", doc: "`pairwise` or `linear`" },
    ],
    files: &[],
    parse: parse_as::<Alltoall>,
};

/// The settings of `alltoall`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Alltoall {
    /// Ranks.
    ranks: u32,
    /// Bytes per message.
    message_bytes: u64,
    /// `pairwise` or `linear`.
    #[serde(default = "pairwise")]
    algorithm: String,
}

impl KindParams for Alltoall {
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        Ok(Program::AllToAll {
            ranks: ranks(self.ranks)?,
            message_bytes: at_least_one("message_bytes", self.message_bytes)?,
            algorithm: match self.algorithm.as_str() {
                "pairwise" => AllToAll::Pairwise,
                "linear" => AllToAll::Linear,
                other => {
                    return Err(KindError::new(
                        "algorithm",
                        base::settings::unknown_message(other, ["pairwise", "linear"].into_iter()),
                    ))
                }
            },
        })
    }
}

/// `allreduce` in the workload registry.
pub(super) const ALLREDUCE: WorkloadEntry = WorkloadEntry {
    name: "allreduce",
    doc: "all-reduce of a vector: ring (2 (ranks - 1) steps of bytes / ranks to the next rank) or recursive doubling (log2(ranks) steps of all the bytes with r xor 2^k)",
    settings: &[
        Setting { key: "ranks", default: "required", doc: "ranks (a power of two for recursive_doubling)" },
        Setting { key: "bytes", default: "required", doc: "bytes of the vector reduced" },
        Setting { key: "algorithm", default: "ring", doc: "`ring` or `recursive_doubling`" },
    ],
    files: &[],
    parse: parse_as::<Allreduce>,
};

/// The settings of `allreduce`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Allreduce {
    /// Ranks.
    ranks: u32,
    /// Bytes reduced.
    bytes: u64,
    /// `ring` or `recursive_doubling`.
    #[serde(default = "ring")]
    algorithm: String,
}

impl KindParams for Allreduce {
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        let bytes = at_least_one("bytes", self.bytes)?;
        let ranks = ranks(self.ranks)?;
        match self.algorithm.as_str() {
            "ring" => Ok(Program::RingAllReduce { ranks, bytes }),
            "recursive_doubling" => Ok(Program::Butterfly {
                ranks: power_of_two(ranks, "recursive_doubling")?,
                message_bytes: bytes,
            }),
            other => Err(KindError::new(
                "algorithm",
                base::settings::unknown_message(other, ["ring", "recursive_doubling"].into_iter()),
            )),
        }
    }
}

/// `random_permutation` in the workload registry.
pub(super) const RANDOM_PERMUTATION: WorkloadEntry = WorkloadEntry {
    name: "random_permutation",
    doc: "bursts: in each iteration every rank sends message_bytes to its image under a random permutation drawn for that iteration, and waits for the message addressed to it",
    settings: &[
        Setting { key: "ranks", default: "required", doc: "ranks" },
        Setting { key: "message_bytes", default: "required", doc: "bytes per message" },
    ],
    files: &[],
    parse: parse_as::<RandomPermutation>,
};

/// The settings of `random_permutation`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomPermutation {
    /// Ranks.
    ranks: u32,
    /// Bytes per message.
    message_bytes: u64,
}

impl KindParams for RandomPermutation {
    fn program(&self, job: &JobContext) -> Result<Program, KindError> {
        let ranks = ranks(self.ranks)?;
        let message_bytes = at_least_one("message_bytes", self.message_bytes)?;
        let perms = random_permutations(job.seed, job.index as u32, ranks, job.iterations);
        Ok(Program::RandomPermutation { ranks, message_bytes, perms: Arc::new(perms) })
    }
}

fn yes() -> bool {
    true
}

fn pairwise() -> String {
    "pairwise".into()
}

fn ring() -> String {
    "ring".into()
}

/// `value` of `key`, a number of bytes, which must be at least 1.
fn at_least_one(key: &'static str, value: u64) -> Result<u64, KindError> {
    if value == 0 {
        Err(KindError::new(key, "must be at least 1"))
    } else {
        Ok(value)
    }
}

/// A process grid (`grid`): 1 to 3 sides, each at least 1, and fewer than 2^32 ranks.
fn grid(sides: &[u32]) -> Result<Vec<u32>, KindError> {
    if sides.is_empty() || sides.len() > 3 || sides.contains(&0) {
        return Err(KindError::new(
            "grid",
            format!("must have 1 to 3 sides, each at least 1, got {sides:?}"),
        ));
    }
    if sides.iter().map(|&s| s as u64).product::<u64>() > u32::MAX as u64 {
        return Err(KindError::new("grid", format!("{sides:?} has more than 2^32 ranks")));
    }
    Ok(sides.to_vec())
}

/// A number of ranks (`ranks`): at least 2.
fn ranks(ranks: u32) -> Result<u32, KindError> {
    if ranks < 2 {
        Err(KindError::new("ranks", format!("must be at least 2, got {ranks}")))
    } else {
        Ok(ranks)
    }
}

/// `ranks`, which `what` needs to be a power of two.
fn power_of_two(ranks: u32, what: &str) -> Result<u32, KindError> {
    if ranks.is_power_of_two() {
        Ok(ranks)
    } else {
        Err(KindError::new("ranks", format!("{what} needs a power-of-two number of ranks, got {ranks}")))
    }
}

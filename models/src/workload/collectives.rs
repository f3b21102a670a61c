//! The `collectives` kind: a sequence of MPI collectives, each on the whole job or on
//! sub-communicators, with the algorithm MPICH 4 would choose unless the configuration
//! names one; the sequence repeats for the job's iterations, each ending in `compute`
//! cycles of computation.

use super::{parse_as, CalcUnit, JobContext, JobOps, KindError, KindParams, WorkloadEntry};
use base::settings::{names, Setting};
use schedule::collectives::{select, Kind, KINDS};
use schedule::{emit, Collective, Comm, Repeated, Schedule, ScheduleBuilder};
use serde::Deserialize;
use std::sync::Arc;

/// `collectives` in the workload registry.
pub(super) const COLLECTIVES: WorkloadEntry = WorkloadEntry {
    name: "collectives",
    doc: "a sequence of MPI collectives (bcast, reduce, allreduce, allgather, alltoall, reduce_scatter, barrier, gather, scatter), each on the job or on sub-communicators, expanded into messages by the algorithm MPICH 4 chooses by default or the one named",
    settings: &[
        Setting { key: "ranks", default: "required", doc: "ranks" },
        Setting { key: "operations", default: "required", doc: "the collectives in order, as tables: `collective` (its name), `bytes` (the buffer for bcast, reduce and allreduce; each rank's part for allgather, reduce_scatter, gather and scatter; each pair's block for alltoall; none for barrier), `root` (0), `algorithm` (MPICH's choice; `xnet` names them in errors and docs/workloads.md), `comm_size` (the job's ranks: one communicator; else the ranks split into communicators of this size) and `split` (`block`: consecutive ranks, as rows; `cyclic`: every ranks/comm_size-th rank, as columns)" },
    ],
    files: &[],
    parse: parse_as::<Collectives>,
};

/// The settings of `collectives`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Collectives {
    /// Ranks.
    ranks: u32,
    /// The collectives, in order.
    operations: Vec<Operation>,
}

/// One collective of the sequence, as configured.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Operation {
    collective: String,
    #[serde(default)]
    bytes: Option<u64>,
    #[serde(default)]
    root: u32,
    #[serde(default)]
    algorithm: Option<String>,
    #[serde(default)]
    comm_size: Option<u32>,
    #[serde(default)]
    split: Option<String>,
}

/// One collective, resolved: per communicator its members and what it runs.
struct Step {
    comms: Vec<(Comm, Collective)>,
    /// Per rank: its communicator and its rank in it.
    member: Vec<(usize, usize)>,
}

impl Operation {
    /// The collective on `ranks` ranks, its communicators and their algorithms; errors
    /// name `operations[i]` and the field.
    fn resolve(&self, i: usize, ranks: u32) -> Result<Step, KindError> {
        let err = |field: &str, message: String| {
            KindError::new("operations", format!("operations[{i}].{field}: {message}"))
        };
        let kind = Kind::parse(&self.collective).ok_or_else(|| {
            err(
                "collective",
                format!("unknown `{}`; known: {}", self.collective, names(KINDS.iter().map(|k| k.0))),
            )
        })?;
        let bytes = match (kind, self.bytes) {
            (Kind::Barrier, None) => 0,
            (Kind::Barrier, Some(_)) => {
                return Err(err("bytes", "a barrier moves no bytes: leave it out".into()))
            }
            (_, Some(b)) => b,
            (_, None) => return Err(err("bytes", format!("missing: the size of the {}", kind.name()))),
        };
        let size = self.comm_size.unwrap_or(ranks);
        if size == 0 || !ranks.is_multiple_of(size) {
            return Err(err("comm_size", format!("must divide the job's {ranks} ranks, got {size}")));
        }
        if self.root >= size {
            return Err(err(
                "root",
                format!("must be below the communicator's {size} ranks, got {}", self.root),
            ));
        }
        let groups = ranks / size;
        let cyclic = match self.split.as_deref() {
            None | Some("block") => false,
            Some("cyclic") => true,
            Some(other) => return Err(err("split", format!("unknown `{other}`; known: block, cyclic"))),
        };
        let member_ranks = |c: u32| -> Vec<u32> {
            if cyclic {
                (0..size).map(|k| c + k * groups).collect()
            } else {
                (c * size..(c + 1) * size).collect()
            }
        };
        let algorithm = match &self.algorithm {
            None => None,
            Some(name) => Some(kind.algorithm(name).ok_or_else(|| {
                err(
                    "algorithm",
                    format!(
                        "`{name}` is not a {} algorithm; known: {}",
                        kind.name(),
                        names(kind.algorithms().iter().map(|a| a.0))
                    ),
                )
            })?),
        };
        let algo = algorithm.unwrap_or_else(|| select(kind, bytes, size as usize));
        let collective =
            Collective::new(kind, bytes, self.root as usize, algo).expect("the kind's own algorithm");
        let mut member = vec![(0, 0); ranks as usize];
        let comms = (0..groups)
            .map(|c| {
                let comm = Comm { id: c, ranks: member_ranks(c) };
                for (me, &r) in comm.ranks.iter().enumerate() {
                    member[r as usize] = (c as usize, me);
                }
                (comm, collective)
            })
            .collect();
        Ok(Step { comms, member })
    }
}

impl KindParams for Collectives {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        if self.ranks < 2 {
            return Err(KindError::new("ranks", format!("must be at least 2, got {}", self.ranks)));
        }
        if self.operations.is_empty() {
            return Err(KindError::new("operations", "give at least one collective"));
        }
        let steps: Vec<Step> = self
            .operations
            .iter()
            .enumerate()
            .map(|(i, op)| op.resolve(i, self.ranks))
            .collect::<Result<_, _>>()?;
        let graph = Repeated::new(vec![template(&steps, self.ranks, job.compute)], job.iterations)
            .map_err(|e| KindError::new("iterations", format!("the collectives cannot be repeated: {e}")))?;
        Ok(JobOps { graph: Arc::new(graph), steps_per_iteration: steps.len() as u32, unit: CalcUnit::Cycles })
    }

    /// Per collective, the ops of its root (comm rank 0 for rootless ones) and of two other
    /// members emitted alone, the busier of those two standing for every other member.
    fn ops_estimate(&self, _job: &JobContext) -> u64 {
        let mut ops = u64::from(self.ranks); // each rank's closing calc
        for (i, op) in self.operations.iter().enumerate() {
            let Ok(step) = op.resolve(i, self.ranks) else { return 0 };
            let Some((comm, collective)) = step.comms.first() else { continue };
            let size = comm.size();
            let alone = |me: usize| {
                let mut b = ScheduleBuilder::new();
                b.add_rank();
                emit(&mut b, collective, comm, me, 0, None);
                u64::from(b.ops_in_rank())
            };
            let root = (op.root as usize).min(size - 1);
            let others = alone((root + 1) % size).max(alone((root + size / 2) % size));
            let per_comm = alone(root) + others * (size as u64 - 1);
            ops = ops.saturating_add(per_comm.saturating_mul(step.comms.len() as u64));
        }
        ops
    }
}

/// One iteration: every rank runs its part of each collective after the previous one
/// (the messages of collective `i` carry tag `i` and their communicator's number), then
/// computes `compute` cycles.
fn template(steps: &[Step], ranks: u32, compute: u64) -> Schedule {
    let mut b = ScheduleBuilder::new();
    for r in 0..ranks {
        b.add_rank();
        let mut last = None;
        for (i, step) in steps.iter().enumerate() {
            let (c, me) = step.member[r as usize];
            let (comm, collective) = &step.comms[c];
            last = emit(&mut b, collective, comm, me, i as u32, last).or(last);
        }
        let end = b.calc(compute);
        if let Some(l) = last {
            b.requires(end, l);
        }
    }
    b.build()
}

//! The `collectives` kind: a sequence of collectives, each on the whole job or on
//! sub-communicators, from MPICH (the algorithm MPICH 4 would choose unless the
//! configuration names one) or from NCCL (its rings, trees and grouped point-to-point,
//! channels and protocols: `schedule::nccl`); the sequence repeats for the job's
//! iterations, each ending in `compute` cycles of computation. Each collective is timed
//! ([`Phases`]).

use super::{
    parse_as, CalcUnit, JobContext, JobOps, KindError, KindParams, Phase, PhaseBook, Phases, WorkloadEntry,
};
use base::settings::{names, Setting};
use schedule::collectives::{select, Kind, KINDS};
use schedule::nccl::p2p::{emit_nccl_all_to_all, P2pSettings};
use schedule::nccl::{emit_nccl, tuning, Algorithm, NcclKind, NcclSettings, Protocol, MAX_CHANNELS};

/// NCCL's channels when an operation names none: the ring (or tree) its topology search
/// finds for a GPU with one NIC, doubled (`src/graph/connect.cc`).
const DEFAULT_CHANNELS: u32 = 2;
use schedule::{emit, Collective, Comm, OpId, Repeated, Schedule, ScheduleBuilder};
use serde::Deserialize;
use std::sync::Arc;

/// `collectives` in the workload registry.
pub(super) const COLLECTIVES: WorkloadEntry = WorkloadEntry {
    name: "collectives",
    doc: "a sequence of collectives (bcast, reduce, allreduce, allgather, alltoall, reduce_scatter, barrier, gather, scatter), each on the job or on sub-communicators, expanded into messages by MPICH's algorithms (the one MPICH 4 chooses by default or the one named) or by NCCL's ring algorithms with its channels, chunks and protocols",
    settings: &[
        Setting { key: "ranks", default: "required", doc: "ranks" },
        Setting { key: "operations", default: "required", doc: "the collectives in order, as tables: `collective` (its name), `bytes` (the buffer for bcast, reduce and allreduce; each rank's part for allgather, reduce_scatter, gather and scatter; each pair's block for alltoall; none for barrier), `root` (0), `algorithm` (MPICH's choice; `xnet` names them in errors and docs/workloads.md), `comm_size` (the job's ranks: one communicator; else the ranks split into communicators of this size) and `split` (`block`: consecutive ranks, as rows; `cyclic`: every ranks/comm_size-th rank, as columns); `library` (`mpich`, or `nccl` for allreduce, allgather, reduce_scatter, bcast, reduce and alltoall (grouped sends and receives): `algorithm` `ring`, `tree` for allreduce, or `pat` for allgather and reduce_scatter (simple only); NCCL's tuning model's choice when not named), and with `nccl`: `protocol` (`simple`, `ll`, `ll128`; the tuning model's choice), `channels` (2, fewer for small collectives as NCCL does; 1 to 64), `buffer` (bytes of a connection's FIFO: NCCL_BUFFSIZE, 4 MiB for simple), `launch_ns` and `hop_ns` (the GPU's latency per collective and per slice: NCCL's ring latencies over NVLink by protocol)" },
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
    #[serde(default)]
    library: Option<String>,
    #[serde(default)]
    protocol: Option<String>,
    #[serde(default)]
    channels: Option<u32>,
    #[serde(default)]
    buffer: Option<u64>,
    #[serde(default)]
    launch_ns: Option<u64>,
    #[serde(default)]
    hop_ns: Option<u64>,
}

/// A collective as one library runs it.
#[derive(Clone, Copy, Debug)]
enum Expanded {
    /// MPICH's algorithm.
    Mpich(Collective),
    /// NCCL's ring or tree, latencies in cycles.
    Nccl { kind: NcclKind, bytes: u64, root: usize, settings: NcclSettings },
    /// NCCL's all-to-all: a group of a send to and a receive from every other rank of
    /// `bytes` each, latencies in cycles.
    NcclAllToAll { bytes: u64, settings: P2pSettings },
}

impl Expanded {
    /// Appends comm rank `me`'s part on `comm` (see [`emit`] and [`emit_nccl`]).
    fn emit(
        &self,
        b: &mut ScheduleBuilder,
        comm: &Comm,
        me: usize,
        tag: u32,
        after: Option<OpId>,
    ) -> Option<OpId> {
        match self {
            Expanded::Mpich(c) => emit(b, c, comm, me, tag, after),
            Expanded::Nccl { kind, bytes, root, settings } => {
                emit_nccl(b, *kind, *bytes, *root, settings, comm, me, tag, after)
            }
            Expanded::NcclAllToAll { bytes, settings } => {
                emit_nccl_all_to_all(b, *bytes, settings, comm, me, tag, after)
            }
        }
    }
}

/// One collective, resolved: per communicator its members and what it runs.
struct Step {
    comms: Vec<(Comm, Expanded)>,
    /// Per rank: its communicator and its rank in it.
    member: Vec<(usize, usize)>,
    /// What the results call it, with nccl-tests' size and bus factor.
    phase: Phase,
}

/// The collective `kind` of `bytes` (as configured) on communicators of `n` ranks, as
/// nccl-tests reports it (`doc/PERFORMANCE.md` of NVIDIA/nccl-tests).
pub(super) fn phase(kind: Kind, bytes: u64, n: u32) -> Phase {
    let n64 = u64::from(n);
    let nf = f64::from(n.max(1));
    let (bytes, bus_factor) = match kind {
        Kind::Allreduce => (bytes, 2.0 * (nf - 1.0) / nf),
        Kind::Allgather | Kind::ReduceScatter | Kind::Alltoall | Kind::Gather | Kind::Scatter => {
            (bytes.saturating_mul(n64), (nf - 1.0) / nf)
        }
        Kind::Bcast | Kind::Reduce => (bytes, 1.0),
        Kind::Barrier => (0, 1.0),
    };
    Phase { name: kind.name().to_string(), bytes, bus_factor }
}

impl Operation {
    /// The collective on `ranks` ranks, its communicators and their algorithms; errors
    /// name `operations[i]` and the field.
    fn resolve(&self, i: usize, ranks: u32, job: &JobContext) -> Result<Step, KindError> {
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
        let expanded = match self.library.as_deref() {
            None | Some("mpich") => {
                if let Some(key) = self.nccl_key() {
                    return Err(err(key, "is NCCL's: set `library = \"nccl\"`, or leave it out".into()));
                }
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
                Expanded::Mpich(
                    Collective::new(kind, bytes, self.root as usize, algo).expect("the kind's own algorithm"),
                )
            }
            Some("nccl") => self.nccl(kind, bytes, size as usize, job).map_err(|(field, m)| err(field, m))?,
            Some(other) => return Err(err("library", format!("unknown `{other}`; known: mpich, nccl"))),
        };
        let mut member = vec![(0, 0); ranks as usize];
        let comms = (0..groups)
            .map(|c| {
                let comm = Comm { id: c, ranks: member_ranks(c) };
                for (me, &r) in comm.ranks.iter().enumerate() {
                    member[r as usize] = (c as usize, me);
                }
                (comm, expanded)
            })
            .collect();
        // A named algorithm names the collective in the results (two all-gathers of one
        // size, by ring and by PAT, are two rows).
        let mut phase = phase(kind, bytes, size);
        if let Some(algorithm) = &self.algorithm {
            phase.name = format!("{} ({algorithm})", phase.name);
        }
        Ok(Step { comms, member, phase })
    }
}

impl Operation {
    /// The first NCCL-only key given.
    fn nccl_key(&self) -> Option<&'static str> {
        [
            ("protocol", self.protocol.is_some()),
            ("channels", self.channels.is_some()),
            ("buffer", self.buffer.is_some()),
            ("launch_ns", self.launch_ns.is_some()),
            ("hop_ns", self.hop_ns.is_some()),
        ]
        .into_iter()
        .find_map(|(key, given)| given.then_some(key))
    }

    /// The collective as NCCL runs it; an error names the field.
    /// The collective as NCCL runs it on a communicator of `size` ranks: what the
    /// operation names, the rest as NCCL's tuning model chooses (`schedule::nccl::tuning`,
    /// the NIC at the endpoints' link rate). An error names the field.
    fn nccl(
        &self,
        kind: Kind,
        bytes: u64,
        size: usize,
        job: &JobContext,
    ) -> Result<Expanded, (&'static str, String)> {
        if kind == Kind::Alltoall {
            return self.nccl_all_to_all(bytes, job);
        }
        let kind = NcclKind::of(kind).ok_or_else(|| {
            (
                "library",
                format!(
                    "NCCL here runs allreduce, allgather, reduce_scatter, bcast, reduce and alltoall, not {}",
                    kind.name()
                ),
            )
        })?;
        let algorithms = match self.algorithm.as_deref() {
            // PAT too: every rank is a node of one GPU here, which is when NCCL enables it.
            None => vec![Algorithm::Ring, Algorithm::Tree, Algorithm::Pat],
            Some(name) => vec![Algorithm::parse(name).ok_or_else(|| {
                (
                    "algorithm",
                    format!(
                        "unknown NCCL algorithm `{name}`; known: {}",
                        names(Algorithm::ALL.iter().map(|a| a.0))
                    ),
                )
            })?],
        };
        if let [algorithm] = algorithms[..] {
            if !algorithm.runs(kind) {
                let runs =
                    if algorithm == Algorithm::Pat { "allgather and reduce_scatter" } else { "allreduce" };
                return Err(("algorithm", format!("NCCL's {} runs {runs} only", algorithm.name())));
            }
        }
        let protocols = match self.protocol.as_deref() {
            None => vec![Protocol::Ll, Protocol::Ll128, Protocol::Simple],
            Some(name) => vec![Protocol::parse(name).ok_or_else(|| {
                ("protocol", format!("unknown `{name}`; known: {}", names(Protocol::ALL.iter().map(|p| p.0))))
            })?],
        };
        if algorithms == [Algorithm::Pat] && protocols != [Protocol::Simple] && self.protocol.is_some() {
            return Err(("protocol", "NCCL's pat runs in simple only".to_string()));
        }
        let most = self.channels.unwrap_or(DEFAULT_CHANNELS);
        if !(1..=MAX_CHANNELS).contains(&most) {
            return Err(("channels", format!("must be 1 to {MAX_CHANNELS}, got {most}")));
        }
        // NCCL's model counts all-gather's and reduce-scatter's whole buffer.
        let total = match kind {
            NcclKind::AllGather | NcclKind::ReduceScatter => bytes.saturating_mul(size as u64),
            _ => bytes,
        };
        let chosen = tuning::choose(kind, total, size.max(2), job.link_gbs(), most, &algorithms, &protocols)
            .expect("every kind has its ring");
        let (algorithm, protocol) = (chosen.algorithm, chosen.protocol);
        let channels = match self.channels {
            Some(c) => c,
            None => tuning::channels_for(algorithm, protocol, total, size, most),
        };
        let mut settings =
            NcclSettings { node_gpus: job.node_gpus, ..NcclSettings::new(algorithm, protocol, channels) };
        if let Some(buffer) = self.buffer {
            let least = u64::from(schedule::nccl::NCCL_STEPS) * protocol.grain() * 4;
            if buffer < least {
                return Err((
                    "buffer",
                    format!("must be at least {least} bytes for {}, got {buffer}", protocol.name()),
                ));
            }
            settings.buffer = buffer;
        }
        settings.launch = job.cycles(self.launch_ns.unwrap_or(settings.launch));
        settings.hop = job.cycles(self.hop_ns.unwrap_or(settings.hop));
        Ok(Expanded::Nccl { kind, bytes, root: self.root as usize, settings })
    }
}

impl Operation {
    /// NCCL's all-to-all (grouped sends and receives, `schedule::nccl::p2p`): only the
    /// channels and latencies apply.
    fn nccl_all_to_all(&self, bytes: u64, job: &JobContext) -> Result<Expanded, (&'static str, String)> {
        for (key, given) in [
            ("algorithm", self.algorithm.is_some()),
            ("protocol", self.protocol.is_some()),
            ("buffer", self.buffer.is_some()),
        ] {
            if given {
                return Err((key, "NCCL's alltoall is grouped sends and receives: it takes no algorithm, protocol or buffer (the protocol follows the size)".into()));
            }
        }
        let channels = self.channels.unwrap_or(DEFAULT_CHANNELS);
        if !(1..=MAX_CHANNELS).contains(&channels) {
            return Err(("channels", format!("must be 1 to {MAX_CHANNELS}, got {channels}")));
        }
        let mut settings = P2pSettings::new(channels);
        settings.launch = job.cycles(self.launch_ns.unwrap_or(settings.launch));
        settings.hop = job.cycles(self.hop_ns.unwrap_or(settings.hop));
        Ok(Expanded::NcclAllToAll { bytes, settings })
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
        // NCCL's tags hold the operation's index in 24 bits (the rest: channel, record).
        if self.operations.len() > 1 << 24 {
            return Err(KindError::new(
                "operations",
                format!("must be at most {} collectives, got {}", 1 << 24, self.operations.len()),
            ));
        }
        let steps: Vec<Step> = self
            .operations
            .iter()
            .enumerate()
            .map(|(i, op)| op.resolve(i, self.ranks, job))
            .collect::<Result<_, _>>()?;
        let (iteration, phases) = template(&steps, self.ranks, job.compute);
        let graph = Repeated::new(vec![iteration], job.iterations)
            .map_err(|e| KindError::new("iterations", format!("the collectives cannot be repeated: {e}")))?;
        Ok(JobOps {
            graph: Arc::new(graph),
            steps_per_iteration: steps.len() as u32,
            unit: CalcUnit::Cycles,
            phases: Some(Arc::new(phases)),
            compute: None,
        })
    }

    /// Per collective, the ops of its root (comm rank 0 for rootless ones) and of two other
    /// members emitted alone, the busier of those two standing for every other member.
    fn ops_estimate(&self, job: &JobContext) -> u64 {
        let mut ops = u64::from(self.ranks); // each rank's closing calc
        for (i, op) in self.operations.iter().enumerate() {
            let Ok(step) = op.resolve(i, self.ranks, job) else { return 0 };
            let Some((comm, collective)) = step.comms.first() else { continue };
            let size = comm.size();
            let alone = |me: usize| {
                let mut b = ScheduleBuilder::new();
                b.add_rank();
                collective.emit(&mut b, comm, me, 0, None);
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
/// computes `compute` cycles. With it, per rank, the first and last op of each
/// collective's part (the phases' marks).
fn template(steps: &[Step], ranks: u32, compute: u64) -> (Schedule, Phases) {
    let mut b = ScheduleBuilder::new();
    let mut timed = PhaseBook::new(ranks as usize);
    // Collective i is the iteration's i-th, as `operations` lists them.
    for (i, step) in steps.iter().enumerate() {
        timed.declare(i, step.phase.clone());
    }
    for r in 0..ranks {
        b.add_rank();
        let mut last = None;
        for (i, step) in steps.iter().enumerate() {
            let (c, me) = step.member[r as usize];
            let (comm, collective) = &step.comms[c];
            let first = b.ops_in_rank();
            if let Some(end) = collective.emit(&mut b, comm, me, i as u32, last) {
                timed.mark(i, || step.phase.clone(), r as usize, first, end);
                last = Some(end);
            }
        }
        let end = b.calc(compute);
        if let Some(l) = last {
            b.requires(end, l);
        }
    }
    (b.build(), timed.phases)
}

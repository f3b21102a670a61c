//! The `chakra` kind: a job recorded as Chakra execution traces (MLCommons; what ASTRA-sim
//! replays), one `.et` file per rank. When the configuration's files are read, the traces
//! become a schedule the process holds once, `contents` taking its record
//! (`schedule::chakra`, `crate::files`): computations as `calc`s,
//! point-to-point messages as sends and receives, and each collective expanded by NCCL's
//! algorithms (the tuning model's choice, `schedule::nccl`) or by MPICH's.

use super::collectives::phase;
use super::traces::{
    check_scale, goal_ops_estimate, inline_bytes, one, ops_in, ops_of_schedule, runs_once, schedule_ops,
    schedule_record,
};
use super::{
    ns_to_cycles, parse_as, JobContext, JobOps, KindError, KindParams, PhaseBook, Phases, WorkloadEntry,
};
use base::settings::{held, read_text, FileError, FileForm, FileKey, Held, Setting};
use schedule::chakra::{
    parse_comm_groups, rank_file, read_rank, schedule_of_chakra_with, ChakraCollective, ChakraOptions,
    NodeType,
};
use schedule::collectives::select;
use schedule::nccl::emit_nccl_chosen;
use schedule::{emit, Collective, Comm, OpId, Schedule, ScheduleBuilder};
use serde::Deserialize;
use std::cell::RefCell;
use std::sync::Arc;

/// `chakra` in the workload registry.
pub(super) const CHAKRA: WorkloadEntry = WorkloadEntry {
    name: "chakra",
    doc: "Chakra execution traces (MLCommons; ASTRA-sim's workload format), one .et file per rank: computations, point-to-point messages and collectives on process groups, the collectives expanded by NCCL's algorithms (its tuning model's choice) or MPICH's",
    settings: &[
        Setting { key: "trace", default: "required", doc: "rank 0's file, PREFIX.0.et (ASTRA-sim's naming); the ranks are PREFIX.0.et, PREFIX.1.et, ... beside it, up to the first that cannot be read; gzipped files are read too; relative to the working directory" },
        Setting { key: "groups", default: "none", doc: "ASTRA-sim's communicator-group file (JSON: group name to its ranks), for process groups the traces do not describe" },
        Setting { key: "library", default: "nccl", doc: "what expands the collectives: nccl (its rings, trees and grouped point-to-point, as its tuning model chooses; MPICH's algorithms for gather, scatter and barrier, which NCCL has not) or mpich" },
        Setting { key: "channels", default: "2", doc: "NCCL's channels" },
        Setting { key: "contents", default: "from trace", doc: "the record of the traces' schedule (`held: sha256 ...`), filled in by the xnet command, which holds the schedule once: a recorded configuration reads the traces again and refuses them if they changed" },
        Setting { key: "compute_scale", default: "1.0", doc: "factor on the traced computation times (0.5: a GPU twice as fast)" },
    ],
    files: &[FileKey { path: "trace", contents: "contents", what: "the Chakra trace", form: FileForm::Held(chakra_held) }],
    parse: parse_as::<Chakra>,
};

/// The settings of `chakra` (the conversion's are read by the converter).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Chakra {
    /// Rank 0's file, for messages.
    trace: Option<String>,
    /// Read by the converter.
    #[allow(dead_code)]
    groups: Option<String>,
    /// Read by the converter.
    #[allow(dead_code)]
    library: Option<String>,
    /// Read by the converter.
    #[allow(dead_code)]
    channels: Option<u32>,
    /// The record of the held schedule.
    contents: Option<String>,
    /// Factor on the computations.
    #[serde(default = "one")]
    compute_scale: f64,
}

/// What the process holds of a job's traces: their schedule, its collectives to time and
/// each rank's computation.
struct ChakraJob {
    schedule: Arc<Schedule>,
    phases: Arc<Phases>,
    /// Per rank, the nanoseconds of its `COMP` nodes.
    compute_ns: Vec<u64>,
}

impl Chakra {
    /// The traces the process holds under `contents`' record.
    fn held(&self) -> Option<Arc<ChakraJob>> {
        held::<ChakraJob>(self.contents.as_deref()?)
    }
}

impl KindParams for Chakra {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        check_scale(self.compute_scale)?;
        let Some(traces) = self.held() else {
            // Inline GOAL text (or a record of traces this process does not hold).
            return schedule_ops(
                "trace",
                self.trace.as_deref(),
                self.contents.as_deref(),
                self.compute_scale,
                job,
            );
        };
        runs_once(job)?;
        let name = self.trace.as_deref().unwrap_or("contents");
        let mut ops = ops_of_schedule("trace", name, traces.schedule.clone(), self.compute_scale)?;
        ops.phases = Some(traces.phases.clone());
        let scale = self.compute_scale;
        let cycles = |ns: u64| ns_to_cycles((ns as f64 * scale).round() as u64, job.ps_per_cycle);
        ops.compute = Some(traces.compute_ns.iter().map(|&ns| cycles(ns)).collect());
        Ok(ops)
    }

    fn ops_estimate(&self, _job: &JobContext) -> u64 {
        match self.held() {
            Some(traces) => ops_in(&traces.schedule),
            None => goal_ops_estimate(self.contents.as_deref()),
        }
    }

    fn text_bytes(&self) -> u64 {
        inline_bytes(self.contents.as_deref())
    }
}

/// The most ranks read: a prefix whose files never end is a mistake.
const MAX_RANKS: u32 = 1 << 20;

/// How a job's collectives are expanded, and each one's marks as it is (to time it).
struct Expander {
    nccl: bool,
    channels: u32,
    /// The NIC's rate for NCCL's tuning model, GB/s.
    nic_gbs: f64,
    /// GPUs per node, for NCCL's rings.
    node_gpus: u32,
    timed: RefCell<Timed>,
}

/// The traces' collectives: each (communicator, number on it) one.
type Timed = PhaseBook<(u32, u32)>;

impl Expander {
    /// Comm rank `me`'s part of `c` on `comm`; tags are the collective's number on its
    /// communicator, modulo the 2^24 NCCL's tags leave it (collectives on one
    /// communicator run one after the other).
    fn expand(
        &self,
        b: &mut ScheduleBuilder,
        c: &ChakraCollective,
        comm: &Comm,
        me: usize,
        tag: u32,
        after: Option<OpId>,
    ) -> Option<OpId> {
        let first = b.ops_in_rank();
        let end = self.expand_untimed(b, c, comm, me, tag & 0xff_ffff, after);
        if let Some(end) = end {
            let (kind, bytes) = c.mpi(comm.size());
            let phase = || phase(kind, bytes, comm.size() as u32);
            self.timed.borrow_mut().mark((comm.id, tag), phase, comm.ranks[me] as usize, first, end);
        }
        end
    }

    /// [`Self::expand`] without the marks.
    fn expand_untimed(
        &self,
        b: &mut ScheduleBuilder,
        c: &ChakraCollective,
        comm: &Comm,
        me: usize,
        tag: u32,
        after: Option<OpId>,
    ) -> Option<OpId> {
        let n = comm.size();
        let root = c.root.min(n - 1);
        let (kind, bytes) = c.mpi(n);
        if self.nccl {
            let nccl = emit_nccl_chosen(
                b,
                kind,
                bytes,
                root,
                self.nic_gbs,
                self.channels,
                self.node_gpus,
                comm,
                me,
                tag,
                after,
            );
            if let Some(end) = nccl {
                return end;
            }
        }
        let algo = select(kind, bytes, n);
        let c = Collective::new(kind, bytes, root, algo).expect("the kind's own algorithm");
        emit(b, &c, comm, me, tag, after)
    }
}

/// The Chakra traces whose rank 0 file is `path` (`PREFIX.0.et`) as a schedule, held, the
/// collectives expanded as the job's `library` says.
fn chakra_held(
    path: &str,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Held, FileError> {
    let invalid = |m: String| FileError::Invalid(m);
    let prefix = path.strip_suffix(".0.et").ok_or_else(|| {
        invalid(format!("{path}: name rank 0's file, PREFIX.0.et (the others are PREFIX.1.et, ...)"))
    })?;
    let mut ranks = Vec::new();
    for r in 0..MAX_RANKS {
        let file = rank_file(prefix, r);
        let bytes = match read(&file) {
            Ok(b) => b,
            Err(error) if r == 0 => return Err(FileError::Unreadable { path: file, error }),
            Err(_) => break,
        };
        ranks.push(read_rank(&bytes, &file, r).map_err(|e| invalid(e.to_string()))?);
    }
    let mut options = ChakraOptions::default();
    if let Some(groups) = setting("groups") {
        let text = read_text(read, &groups)?;
        options.groups = parse_comm_groups(&text, &groups).map_err(|e| invalid(e.to_string()))?;
    }
    let nccl = match setting("library").as_deref() {
        None | Some("nccl") => true,
        Some("mpich") => false,
        Some(other) => return Err(invalid(format!("library: unknown `{other}`; known: nccl, mpich"))),
    };
    let channels = match setting("channels") {
        None => 2,
        Some(c) => {
            c.parse::<u32>().ok().filter(|c| (1..=schedule::nccl::MAX_CHANNELS).contains(c)).ok_or_else(
                || invalid(format!("channels: must be 1 to {}, got {c}", schedule::nccl::MAX_CHANNELS)),
            )?
        }
    };
    // The NIC runs at the endpoints' link rate: a phit per cycle.
    let number =
        |key: &str, default: f64| setting(key).and_then(|v| v.parse::<f64>().ok()).unwrap_or(default);
    let nic_gbs = number("workload.bytes_per_phit", 16.0) / number("workload.ns_per_cycle", 0.64);
    // NCCL's rings follow the GPU nodes, if any.
    let node_gpus = number("topology.nodes.gpus", 1.0).max(1.0) as u32;
    let expander =
        Expander { nccl, channels, nic_gbs, node_gpus, timed: RefCell::new(Timed::new(ranks.len())) };
    let schedule = schedule_of_chakra_with(&ranks, &options, &mut |b, c, comm, me, tag, after| {
        expander.expand(b, c, comm, me, tag, after)
    })
    .map_err(|e| invalid(e.to_string()))?;
    let phases = expander.timed.into_inner().phases;
    let compute_ns = ranks
        .iter()
        .map(|t| t.nodes.iter().filter(|n| n.node_type == NodeType::Comp).map(|n| n.duration_ns()).sum())
        .collect();
    let record = schedule_record(&schedule);
    let traces = ChakraJob { schedule: Arc::new(schedule), phases: Arc::new(phases), compute_ns };
    Ok(Held { record, value: Arc::new(traces) })
}

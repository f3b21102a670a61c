//! What a workload kind is: its entry in the registry ([`WorkloadEntry`]: name, doc,
//! documented keys and the parser of its typed settings), the settings once parsed
//! ([`KindParams`], which build the kind's [`Program`] for a job), and a job's kind as
//! configured ([`KindSpec`]: the entry with its settings).

use super::{JobOps, Program};
use base::settings::{typed, ConfigError, EntryDoc, FileKey, Setting};
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;
use toml::Table;

/// Bytes per op (of every replica) of a run besides the graph: the ideal-time pass and the
/// engine's state of each op, and the messages it posts: a 4,096-rank linear all-to-all
/// (33.5 M ops) run for 10 cycles peaked at 4.49 GB, 94 bytes per op more than its graph
/// (the memory estimate's `GRAPH_BYTES_PER_OP`). Kinds whose ops wait for
/// each other (a message at a time) post fewer and say so
/// ([`KindParams::run_bytes_per_op`]).
pub(crate) const RUN_BYTES_PER_OP: u64 = 100;

/// One workload kind in the registry.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadEntry {
    /// Name in `workload.jobs[].kind`.
    pub name: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// Its keys in the job's table, documented.
    pub settings: &'static [Setting],
    /// Its keys that name a file, which the `xnet` command reads into their contents key.
    pub files: &'static [FileKey],
    /// Reads the kind's keys ([`parse_as`] for a settings type).
    pub parse: ParseKind,
}

/// A kind's parser: it reads the kind's keys for the job named `job` (`workload.jobs[1]`),
/// `keys` being the job's table without the keys every job takes
/// ([`JOB_SETTINGS`](super::JOB_SETTINGS)); errors name the job or its key.
pub type ParseKind = fn(job: &str, keys: &Table) -> Result<Arc<dyn KindParams>, ConfigError>;

impl WorkloadEntry {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: self.settings }
    }
}

/// A kind's settings, read: they build the job's ops, from a built-in program or directly
/// (a schedule file).
pub trait KindParams: fmt::Debug + Send + Sync {
    /// The program of `job`; settings that make no program (a grid without ranks, a
    /// butterfly of 6 ranks) are an error naming the key. Kinds that build their ops
    /// directly ([`KindParams::ops`]) have none.
    fn program(&self, _job: &JobContext) -> Result<Program, KindError> {
        Err(KindError::new("kind", "this kind builds its ops without a program"))
    }

    /// The ops of `job`: by default its program's, repeated for its iterations.
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        JobOps::of_program(&self.program(job)?, job)
    }

    /// About how many ops [`KindParams::ops`] stores for `job`, found without building
    /// them (for the memory estimate); 0 when its settings make no ops.
    fn ops_estimate(&self, job: &JobContext) -> u64 {
        self.program(job).map_or(0, |p| p.ops_bound(job.iterations))
    }

    /// Bytes of text the kind holds besides its ops (a schedule's GOAL text).
    fn text_bytes(&self) -> u64 {
        0
    }

    /// Bytes a run holds per op besides the stored graph (the memory estimate): by
    /// default `RUN_BYTES_PER_OP` (100), those of a job that posts many messages at once.
    fn run_bytes_per_op(&self) -> u64 {
        RUN_BYTES_PER_OP
    }

    /// `job` as Chakra execution traces, its collectives left whole, for kinds that know
    /// them (a training step); `None` for the others.
    fn chakra(&self, _job: &JobContext) -> Option<Result<schedule::chakra::ChakraTraces, KindError>> {
        None
    }
}

/// What a job's program may depend on besides its kind's settings.
#[derive(Clone, Copy, Debug)]
pub struct JobContext {
    /// The job's index in `workload.jobs`.
    pub index: usize,
    /// Its iterations.
    pub iterations: u32,
    /// Its computation after each iteration (`compute`, cycles).
    pub compute: u64,
    /// The run's seed.
    pub seed: u64,
    /// Picoseconds per network cycle (`workload.ns_per_cycle`), for times a kind states in
    /// nanoseconds but emits in cycles.
    pub ps_per_cycle: u64,
    /// Bytes a phit carries (`workload.bytes_per_phit`): with `ps_per_cycle`, an
    /// endpoint's link rate.
    pub bytes_per_phit: u64,
    /// GPUs per node (1 without GPU nodes): NCCL's rings go node by node, ranks `r` and
    /// `r'` on one node when `r / node_gpus == r' / node_gpus`.
    pub node_gpus: u32,
}

impl JobContext {
    /// The cycles `ns` nanoseconds last (rounded up).
    pub fn cycles(&self, ns: u64) -> u64 {
        super::ns_to_cycles(ns, self.ps_per_cycle)
    }

    /// An endpoint's link rate, GB/s: a phit per cycle.
    pub fn link_gbs(&self) -> f64 {
        self.bytes_per_phit as f64 * 1000.0 / self.ps_per_cycle.max(1) as f64
    }
}

/// Settings that make no program; the message names the key of the job's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindError {
    /// The offending key.
    pub key: &'static str,
    /// What is wrong.
    pub message: String,
}

impl KindError {
    /// The error naming `key`.
    pub fn new(key: &'static str, message: impl Into<String>) -> Self {
        KindError { key, message: message.into() }
    }
}

/// The parser of a kind whose settings are `T` (a struct with `deny_unknown_fields`):
/// errors name the key as a path from the job (`workload.jobs[0].operations[1].bytes:
/// invalid type: string "big", expected u64`).
pub fn parse_as<T: KindParams + DeserializeOwned + 'static>(
    job: &str,
    keys: &Table,
) -> Result<Arc<dyn KindParams>, ConfigError> {
    Ok(Arc::new(typed::<T>(job, keys)?))
}

/// A job's kind as configured: its entry and its settings.
#[derive(Clone)]
pub struct KindSpec {
    entry: &'static WorkloadEntry,
    params: Arc<dyn KindParams>,
}

impl KindSpec {
    /// Reads `entry`'s keys for the job named `job`: `keys`, the job's table without the
    /// keys every job takes.
    pub fn parse(entry: &'static WorkloadEntry, job: &str, keys: &Table) -> Result<Self, ConfigError> {
        Ok(KindSpec { entry, params: (entry.parse)(job, keys)? })
    }

    /// The kind's entry.
    pub fn entry(&self) -> &'static WorkloadEntry {
        self.entry
    }

    /// The ops of `job`; errors name the key.
    pub fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        self.params.ops(job)
    }

    /// About how many ops `job` stores, without building them ([`KindParams::ops_estimate`]).
    pub fn ops_estimate(&self, job: &JobContext) -> u64 {
        self.params.ops_estimate(job)
    }

    /// Bytes of schedule text the job holds ([`KindParams::text_bytes`]).
    pub fn text_bytes(&self) -> u64 {
        self.params.text_bytes()
    }

    /// Bytes a run holds per op besides its graph ([`KindParams::run_bytes_per_op`]).
    pub fn run_bytes_per_op(&self) -> u64 {
        self.params.run_bytes_per_op()
    }

    /// `job` as Chakra traces, where the kind knows its collectives ([`KindParams::chakra`]).
    pub fn chakra(&self, job: &JobContext) -> Option<Result<schedule::chakra::ChakraTraces, KindError>> {
        self.params.chakra(job)
    }
}

impl fmt::Debug for KindSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KindSpec").field("kind", &self.entry.name).field("settings", &self.params).finish()
    }
}

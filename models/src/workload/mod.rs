//! Application workloads: jobs whose ranks run operation graphs on the endpoints (sends,
//! receives, computations and their dependencies; the `schedule` crate), until every rank
//! has finished.
//!
//! A `[workload]` section lists jobs (`[[workload.jobs]]`), each with a kind ([`WORKLOADS`]:
//! a built-in program, or a GOAL schedule file), its parameters, and a mapping of its ranks
//! to endpoints (linear, random with a seed, or a file). Jobs take disjoint endpoints.
//! Without a `[traffic]` section only the jobs inject; with one, the endpoints that run no
//! rank generate its pattern at its load as background traffic, so that interference can
//! be studied.
//!
//! Messages are split into packets of `router.packet_size` phits of `bytes_per_phit`
//! bytes; computations of a schedule (nanoseconds) last whole cycles of `ns_per_cycle`
//! ([`Workload::cycles`]). The router side (the executor: what a rank does when an op
//! starts, a packet arrives or a computation ends) is `router/app.rs`.
//!
//! `spec.rs` reads the section and its jobs ([`WorkloadSection`], [`JobSpec`]). The kinds
//! are a registry, like the traffic patterns: `kind.rs` is what a kind is
//! ([`WorkloadEntry`]: name, doc, documented keys and the parser of its typed settings,
//! which build the job's ops, [`JobOps`], through [`KindParams`]), `kinds.rs` holds the
//! kinds, each its settings and its entry, and [`WORKLOADS`] below lists them.
//! `programs.rs` is what each built-in program sends and expects at each step and the
//! graph it generates, `placement.rs` where a job's ranks run ([`Mapping`]). This file is
//! the workload built for a network: every job's ops, endpoints and ideal-network time.

mod chakra;
mod collectives;
mod export;
mod kind;
mod kinds;
mod phases;
mod placement;
mod programs;
mod spec;
mod traces;
mod training;

pub use export::AsGoal;
pub use kind::{parse_as, JobContext, KindError, KindParams, KindSpec, ParseKind, WorkloadEntry};
pub(crate) use phases::PhaseBook;
pub use phases::{Phase, PhaseMarks, Phases, PHASE_END, PHASE_START};
pub use placement::Mapping;
pub use programs::{random_permutations, AllReduce, AllToAll, Order, Program};
pub use spec::{JobSpec, WorkloadSection, JOB_FILES, JOB_SETTINGS, SECTION_SETTINGS};

use placement::Occupancy;

use base::settings::ConfigError;
use schedule::{run_ideal_until, send_volume, Graph, Replicas, SendVolume, Stuck};
use std::sync::Arc;
use topology::EndpointId;

/// Every workload kind `workload.jobs[].kind` accepts, in the order `xnet list` shows
/// them: adding a kind is its settings and its entry in `kinds.rs` plus its name here. A
/// test checks that each parses with exactly the keys listed.
pub const WORKLOADS: &[WorkloadEntry] = &[
    kinds::STENCIL2D,
    kinds::STENCIL3D,
    kinds::BUTTERFLY,
    kinds::WATERFALL,
    kinds::ALLTOALL,
    kinds::ALLREDUCE,
    kinds::RANDOM_PERMUTATION,
    collectives::COLLECTIVES,
    traces::GOAL,
    traces::DUMPI,
    traces::OTF2,
    chakra::CHAKRA,
    training::TRAINING,
];

/// The workload kind named `name`.
pub fn find(name: &str) -> Option<&'static WorkloadEntry> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// The time unit of a job's `calc` ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalcUnit {
    /// Cycles of the network (the built-in programs' `compute`).
    Cycles,
    /// Nanoseconds (GOAL schedules), converted with `workload.ns_per_cycle`.
    Nanoseconds,
}

/// What a job's kind builds: its operation graph and how to read it.
#[derive(Clone)]
pub struct JobOps {
    /// Every rank's ops and their dependencies.
    pub graph: Arc<dyn Graph>,
    /// Steps in one iteration, as the output reports them (1 for a schedule file).
    pub steps_per_iteration: u32,
    /// The unit of the graph's `calc` times.
    pub unit: CalcUnit,
    /// The collectives each iteration runs, timed by the executor (`None`: not timed).
    pub phases: Option<Arc<Phases>>,
    /// Per rank of the job (before replicas), the cycles one iteration computes: the
    /// model's own work (a training step's layers), not a library's latencies. `None`
    /// where a kind cannot tell them apart.
    pub compute: Option<Arc<[u64]>>,
}

impl JobOps {
    /// The ops of a built-in program run by `job`: its iteration repeated, each ending in
    /// `job.compute` cycles of computation.
    pub fn of_program(program: &Program, job: &JobContext) -> Result<JobOps, KindError> {
        let graph = program
            .graph(job.compute, job.iterations)
            .map_err(|e| KindError::new("iterations", format!("the program cannot be repeated: {e}")))?;
        Ok(JobOps {
            phases: None,
            compute: None,
            graph: Arc::new(graph),
            steps_per_iteration: program.steps_per_iteration(),
            unit: CalcUnit::Cycles,
        })
    }
}

impl std::fmt::Debug for JobOps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobOps")
            .field("ranks", &self.graph.num_ranks())
            .field("iterations", &self.graph.iterations())
            .field("steps_per_iteration", &self.steps_per_iteration)
            .field("unit", &self.unit)
            .finish()
    }
}

/// A job, built: its operation graph and where its ranks run.
#[derive(Clone, Debug)]
pub struct Job {
    /// Name.
    pub name: String,
    /// Kind, as configured.
    pub kind: &'static str,
    /// Its ops, their dependencies and their time unit.
    pub ops: JobOps,
    /// Iterations.
    pub iterations: u32,
    /// Endpoint of every rank.
    pub endpoints: Vec<EndpointId>,
    /// The job on an ideal network (zero latency, infinite bandwidth): its completion time
    /// in cycles, or why it can never complete.
    pub ideal: Result<f64, Arc<Stuck>>,
    /// Cycles the rank that computes most on the ideal network spends computing there (0
    /// when the job can never complete).
    pub ideal_computing: f64,
    /// Messages on the ideal run's longest chain of messages, each sent after the previous
    /// one was received (see [`schedule::Ideal::rounds`]; 0 when the job can never
    /// complete): each costs at least a message latency on a real network.
    pub ideal_rounds: u32,
    /// Its sends: the largest, and the rank with the most phits to send (each phit takes
    /// its endpoint's link a cycle, so the job takes at least that many cycles).
    pub sends: SendVolume,
}

/// Cycles of computation per message on a job's critical path from which
/// [`Workload::forecast`] notes that the network can hardly change its completion time: a
/// message's latency is tens to hundreds of cycles, so it adds at most a few percent.
pub const COMPUTE_PER_ROUND: f64 = 10_000.0;

/// No rank at this endpoint.
pub const NO_RANK: u32 = u32::MAX;

/// How messages become packets: the longest packet (`router.packet_size`, the MTU in
/// phits) and the phits of it a header takes (`router.header_phits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketFormat {
    /// The longest packet, in phits, its header included.
    pub mtu_phits: u16,
    /// Phits of every packet that carry no data.
    pub header_phits: u16,
}

impl From<u16> for PacketFormat {
    /// Packets of up to `mtu_phits` phits, no header.
    fn from(mtu_phits: u16) -> Self {
        PacketFormat { mtu_phits, header_phits: 0 }
    }
}

/// Messages between GPUs of one scale-up domain (a node's NVLink, `[topology.nodes]`) cut
/// into longer packets than the NICs' (`topology.nodes.scale_up_packet`): the scale-up
/// links' traffic at a coarser grain, hundreds of GB a training step in fewer events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScaleUpGrain {
    /// GPUs (endpoints) per domain: endpoints `d * gpus ..` are domain `d`.
    pub gpus: u32,
    /// The packets' lengths within a domain.
    pub format: PacketFormat,
}

/// The packets a message is cut into ([`Workload::message_packets`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessagePackets {
    /// How many.
    pub packets: u32,
    /// Phits of the last one.
    pub last: u16,
    /// Phits of the others.
    pub full: u16,
}

/// The workload, built: every job, and which rank each endpoint runs.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The jobs.
    pub jobs: Vec<Job>,
    /// Bytes of data a full packet carries.
    pub packet_bytes: u64,
    /// Bytes one phit carries (`workload.bytes_per_phit`).
    pub bytes_per_phit: u64,
    /// The packets' lengths.
    pub format: PacketFormat,
    /// Longer packets within a scale-up domain, if the network has GPU nodes whose
    /// `scale_up_packet` differs from `router.packet_size`.
    pub scale_up: Option<(ScaleUpGrain, u64)>,
    /// Messages of up to this many bytes are sent eagerly; larger ones by rendezvous.
    pub eager_limit: u64,
    /// Background traffic goes only to endpoints that run no rank (`workload.background`).
    pub background_free_only: bool,
    /// Every send's start and end are recorded (`workload.record_sends`).
    pub record_sends: bool,
    /// Picoseconds per network cycle.
    pub ps_per_cycle: u64,
    /// Per endpoint: its job, or [`NO_RANK`] as u32 when it runs none.
    job_of: Vec<u32>,
    /// Per endpoint: its rank in its job.
    rank_of: Vec<u32>,
}

/// The cycles of `ps_per_cycle` picoseconds that `ns` nanoseconds last, rounded up.
#[inline]
pub fn ns_to_cycles(ns: u64, ps_per_cycle: u64) -> u64 {
    (u128::from(ns) * 1000).div_ceil(u128::from(ps_per_cycle.max(1))).min(u64::MAX as u128) as u64
}

/// The flag that marks a workload packet's id (bit 63).
pub const WORKLOAD_PACKET: u64 = 1 << 63;

/// Marks a clear-to-send in a workload packet's low 32 bits (the rest: the send's op).
pub const CLEAR_TO_SEND: u32 = 1 << 31;

/// The most ops a rank of a job may have: a packet names its send by op number in 31 bits.
pub const MAX_OPS_PER_RANK: u32 = CLEAR_TO_SEND - 1;

/// Job `j` of `section` as its kind sees it (the run's `seed` draws what is random in it).
fn job_context(section: &WorkloadSection, j: usize, seed: u64) -> JobContext {
    let spec = &section.jobs[j];
    JobContext {
        index: j,
        iterations: spec.iterations,
        compute: spec.compute,
        seed,
        ps_per_cycle: section.ps_per_cycle,
        bytes_per_phit: section.bytes_per_phit,
        node_gpus: section.node_gpus,
    }
}

/// Job `j` of `section` as Chakra traces, its collectives whole (`None`: its kind does not
/// know them, as a trace's or a program's); errors name the job's key.
pub fn job_chakra(
    section: &WorkloadSection,
    j: usize,
    seed: u64,
) -> Result<Option<schedule::chakra::ChakraTraces>, ConfigError> {
    let spec = &section.jobs[j];
    match spec.kind.chakra(&job_context(section, j, seed)) {
        None => Ok(None),
        Some(traces) => {
            traces.map(Some).map_err(|e| ConfigError::new(format!("workload.jobs[{j}].{}", e.key), e.message))
        }
    }
}

/// The ops of job `j` of `section` (the run's `seed` draws what is random in them); errors
/// name the job's key.
pub fn job_ops(section: &WorkloadSection, j: usize, seed: u64) -> Result<JobOps, ConfigError> {
    let spec = &section.jobs[j];
    let job = job_context(section, j, seed);
    let mut ops = spec
        .kind
        .ops(&job)
        .map_err(|e| ConfigError::new(format!("workload.jobs[{j}].{}", e.key), e.message))?;
    if spec.replicas > 1 {
        let copies = Replicas::new(ops.graph.clone(), spec.replicas)
            .map_err(|e| ConfigError::new(format!("workload.jobs[{j}].replicas"), e))?;
        ops.graph = Arc::new(copies);
    }
    if let Some(r) = (0..ops.graph.num_ranks()).find(|&r| ops.graph.ops_in_rank(r) > MAX_OPS_PER_RANK) {
        return Err(ConfigError::new(
            format!("workload.jobs[{j}]"),
            format!(
                "rank {r} of job `{}` has {} ops; a rank may have at most 2^31 - 1",
                spec.name,
                ops.graph.ops_in_rank(r)
            ),
        ));
    }
    Ok(ops)
}

/// Phits of the last packet of a message of `bytes` bytes in packets of `packet_bytes`
/// bytes of data (see [`Workload::last_packet_phits`]).
fn last_packet_phits(bytes: u64, packet_bytes: u64, bytes_per_phit: u64, format: PacketFormat) -> u16 {
    let full = bytes.div_ceil(packet_bytes).max(1) - 1;
    let rest = bytes - full * packet_bytes;
    format.header_phits + rest.div_ceil(bytes_per_phit).max(1) as u16
}

/// Phits of a whole message of `bytes` bytes: its full packets and its last one
/// (saturating, for sizes no run accepts).
fn message_phits(bytes: u64, packet_bytes: u64, bytes_per_phit: u64, format: PacketFormat) -> u64 {
    let full = bytes.div_ceil(packet_bytes).max(1) - 1;
    full.saturating_mul(u64::from(format.mtu_phits)).saturating_add(u64::from(last_packet_phits(
        bytes,
        packet_bytes,
        bytes_per_phit,
        format,
    )))
}

impl Workload {
    /// Builds `section` for a network of `endpoints` endpoints with packets of `format`;
    /// `seed` is the run's.
    pub fn build(
        section: &WorkloadSection,
        endpoints: usize,
        format: PacketFormat,
        scale_up: Option<ScaleUpGrain>,
        seed: u64,
    ) -> Result<Arc<Workload>, ConfigError> {
        let payload_phits = format.mtu_phits.saturating_sub(format.header_phits).max(1);
        let packet_bytes = section.bytes_per_phit * payload_phits as u64;
        let mut occupancy = Occupancy::new(endpoints);
        let mut jobs = Vec::with_capacity(section.jobs.len());
        for (j, spec) in section.jobs.iter().enumerate() {
            let ops = job_ops(section, j, seed)?;
            let ranks = ops.graph.num_ranks();
            let placed = occupancy.place(j, &spec.name, &spec.mapping, ranks as usize, seed)?;
            let sends = send_volume(&*ops.graph, |bytes| {
                message_phits(bytes, packet_bytes, section.bytes_per_phit, format)
            });
            if let Some(largest) =
                sends.largest.filter(|l| l.bytes.div_ceil(packet_bytes) > u64::from(u32::MAX))
            {
                return Err(ConfigError::new(
                    format!("workload.jobs[{j}]"),
                    format!(
                        "rank {} of job `{}` sends a message of {} bytes (op l{}): {} packets of {packet_bytes} bytes \
                         (router.packet_size and workload.bytes_per_phit); a message may be at most 2^32 - 1 packets, \
                         {} bytes",
                        largest.rank,
                        spec.name,
                        largest.bytes,
                        largest.op,
                        largest.bytes.div_ceil(packet_bytes),
                        u64::from(u32::MAX).saturating_mul(packet_bytes)
                    ),
                ));
            }
            let to_cycles = |t: u64| match ops.unit {
                CalcUnit::Cycles => t as f64,
                CalcUnit::Nanoseconds => t as f64 * 1000.0 / section.ps_per_cycle as f64,
            };
            let outcome = run_ideal_until(&*ops.graph, &base::cancel::requested).ok_or_else(|| {
                ConfigError::new(format!("workload.jobs[{j}]"), "interrupted while computing its ideal time")
            })?;
            let (ideal, ideal_computing, ideal_rounds) = match outcome {
                Ok(ideal) => {
                    let computing = ideal.computing.iter().copied().max().unwrap_or(0);
                    (Ok(to_cycles(ideal.time)), to_cycles(computing), ideal.rounds)
                }
                Err(stuck) => (Err(Arc::new(stuck)), 0.0, 0),
            };
            jobs.push(Job {
                name: spec.name.clone(),
                kind: spec.kind.entry().name,
                iterations: ops.graph.iterations(),
                ops,
                endpoints: placed,
                ideal,
                ideal_computing,
                ideal_rounds,
                sends,
            });
        }
        let (job_of, rank_of) = occupancy.into_maps();
        Ok(Arc::new(Workload {
            jobs,
            packet_bytes,
            bytes_per_phit: section.bytes_per_phit,
            format,
            scale_up: scale_up.filter(|g| g.format != format).map(|g| {
                let payload = g.format.mtu_phits.saturating_sub(g.format.header_phits).max(1);
                (g, section.bytes_per_phit * payload as u64)
            }),
            eager_limit: section.eager_limit,
            background_free_only: section.background_free_only,
            record_sends: section.record_sends,
            ps_per_cycle: section.ps_per_cycle,
            job_of,
            rank_of,
        }))
    }

    /// `(job, rank)` of the rank running at endpoint `e`, if any.
    #[inline]
    pub fn rank_at(&self, e: EndpointId) -> Option<(u32, u32)> {
        let j = *self.job_of.get(e as usize)?;
        (j != NO_RANK).then(|| (j, self.rank_of[e as usize]))
    }

    /// Ranks in all jobs.
    pub fn total_ranks(&self) -> u64 {
        self.jobs.iter().map(|j| j.endpoints.len() as u64).sum()
    }

    /// Ranks that can finish: those of every job but the ranks a schedule that can never
    /// complete leaves stuck on the ideal network.
    pub fn finishable_ranks(&self) -> u64 {
        let stuck: u64 =
            self.jobs.iter().filter_map(|j| j.ideal.as_ref().err()).map(|s| s.ranks.len() as u64).sum();
        self.total_ranks() - stuck
    }

    /// What a run of at most `cycles` cycles can tell before it starts, a line per job
    /// concerned, each beginning `warning:` or `note:`: a job that can never complete, one
    /// that cannot finish within `cycles` (its ideal time, or its busiest rank's sends at a
    /// phit per cycle, exceed it), and one that computes so long between messages, and sends
    /// so little, that its slowdown will stay near 1 whatever the network (at least
    /// [`COMPUTE_PER_ROUND`] cycles per message of its ideal run's longest chain, and its
    /// busiest rank's sends under a tenth of its ideal time).
    pub fn forecast(&self, cycles: u64) -> Vec<String> {
        let mut lines = Vec::new();
        for (j, job) in self.jobs.iter().enumerate() {
            let name = format!("job `{}` (workload.jobs[{j}], {})", job.name, job.kind);
            let ideal = match &job.ideal {
                Err(stuck) => {
                    let first =
                        stuck.ranks.first().and_then(|r| r.waits.first().map(|w| (r.rank, r.describe(w))));
                    lines.push(format!(
                        "warning: {name} can never complete, on any network: {} of its {} ranks are stuck on an \
                         ideal network{}; the run ends once the other ranks have finished and these stopped moving",
                        stuck.ranks.len(),
                        job.endpoints.len(),
                        first.map_or(String::new(), |(r, w)| format!(" (rank {r}: {w})"))
                    ));
                    continue;
                }
                Ok(ideal) => *ideal,
            };
            let share = if ideal > 0.0 { job.ideal_computing / ideal } else { 0.0 };
            if ideal > cycles as f64 {
                lines.push(format!(
                    "warning: {name} cannot finish within simulation.cycles = {cycles}: on an ideal network it \
                     takes {ideal:.0} cycles, {:.0} % of them computing on its busiest rank (NCCL's GPU latencies \
                     included)",
                    share * 100.0
                ));
            } else if let Some((rank, phits)) = job.sends.busiest.filter(|&(_, p)| p > cycles) {
                lines.push(format!(
                    "warning: {name} cannot finish within simulation.cycles = {cycles}: rank {rank} sends \
                     {phits} phits, which take its endpoint's link at least as many cycles"
                ));
            }
            let per_round = ideal / f64::from(job.ideal_rounds.max(1));
            // Long messages are no help to computation's weight: the busiest rank's sends
            // must also take its link well under the ideal time (large collectives take
            // millions of cycles each).
            let busiest = job.sends.busiest.map_or(0, |(_, phits)| phits) as f64;
            if per_round >= COMPUTE_PER_ROUND && busiest <= 0.1 * ideal {
                let scale = find(job.kind)
                    .filter(|k| k.settings.iter().any(|s| s.key == "compute_scale"))
                    .map_or(String::new(), |_| {
                        format!(
                            "; workload.jobs[{j}].compute_scale below 1 gives the network more weight (docs/workloads.md, \
                             \"Choosing compute_scale\")"
                        )
                    });
                lines.push(format!(
                    "note: {name} computes about {per_round:.0} cycles per message on its critical path ({} \
                     messages in an ideal time of {ideal:.0} cycles): a message takes tens to hundreds of cycles, so \
                     its slowdown will stay near 1 whatever the network{scale}",
                    job.ideal_rounds
                ));
            }
        }
        lines
    }

    /// Whether a message of `bytes` bytes on communicator `comm` goes at once (eager): up to
    /// the eager limit, and always on NCCL's communicators, whose receivers post their
    /// buffers in the graph ([`schedule::nccl::NCCL_COMM`]). Larger ones go by rendezvous.
    #[inline]
    pub fn eager(&self, bytes: u64, comm: u32) -> bool {
        bytes <= self.eager_limit || comm & schedule::nccl::NCCL_COMM != 0
    }

    /// Packets a message of `bytes` bytes is split into: full ones, and a last one of what
    /// remains (a message of 0 bytes is one packet).
    #[inline]
    pub fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.packet_bytes).max(1) as u32
    }

    /// Phits of the last packet of a message of `bytes` bytes: its header and the phits the
    /// remaining bytes fill, at least one (the others are [`PacketFormat::mtu_phits`] long).
    #[inline]
    pub fn last_packet_phits(&self, bytes: u64) -> u16 {
        last_packet_phits(bytes, self.packet_bytes, self.bytes_per_phit, self.format)
    }

    /// The packets (data bytes of a full one, lengths) of a message from endpoint `src` to
    /// endpoint `dst`: longer within a scale-up domain ([`ScaleUpGrain`]).
    #[inline]
    fn grain(&self, src: EndpointId, dst: EndpointId) -> (u64, PacketFormat) {
        match self.scale_up {
            Some((grain, bytes)) if src / grain.gpus == dst / grain.gpus => (bytes, grain.format),
            _ => (self.packet_bytes, self.format),
        }
    }

    /// The packets of a message of `bytes` bytes from endpoint `src` to endpoint `dst`
    /// (longer within a scale-up domain): how many, the last one's phits and a full one's,
    /// as [`packets`](Self::packets) and [`last_packet_phits`](Self::last_packet_phits)
    /// count them.
    #[inline]
    pub fn message_packets(&self, bytes: u64, src: EndpointId, dst: EndpointId) -> MessagePackets {
        let (packet_bytes, format) = self.grain(src, dst);
        MessagePackets {
            packets: bytes.div_ceil(packet_bytes).max(1) as u32,
            last: last_packet_phits(bytes, packet_bytes, self.bytes_per_phit, format),
            full: format.mtu_phits,
        }
    }

    /// Phits of a control packet (a rendezvous request's clear-to-send): a header and one
    /// phit.
    #[inline]
    pub fn control_phits(&self) -> u16 {
        self.format.header_phits + 1
    }

    /// Cycles a `calc` of `time` (in `unit`) lasts: nanoseconds are rounded up to whole
    /// cycles.
    #[inline]
    pub fn cycles(&self, time: u64, unit: CalcUnit) -> u64 {
        match unit {
            CalcUnit::Cycles => time,
            CalcUnit::Nanoseconds => ns_to_cycles(time, self.ps_per_cycle),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toml::Table;

    fn section(text: &str) -> Result<WorkloadSection, ConfigError> {
        let t: Table = toml::from_str(text).unwrap();
        WorkloadSection::parse(t["workload"].as_table().unwrap())
    }

    #[test]
    fn units_convert_bytes_to_packets_and_nanoseconds_to_cycles() {
        let w = section(
            "[workload]\nns_per_cycle = 0.64\n[[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 1000\niterations = 7\n",
        )
        .unwrap();
        let built = Workload::build(&w, 16, 4.into(), None, 1).unwrap();
        // 1000 bytes in 64-byte packets: 16 packets.
        assert_eq!(built.packets(1000), 16);
        assert_eq!(built.packets(0), 1);
        assert_eq!(built.ps_per_cycle, 640);
        assert_eq!(built.cycles(640, CalcUnit::Nanoseconds), 1000);
        assert_eq!(built.cycles(641, CalcUnit::Nanoseconds), 1002);
        assert_eq!(built.cycles(641, CalcUnit::Cycles), 641);
        assert_eq!(built.jobs[0].iterations, 7);
    }
}

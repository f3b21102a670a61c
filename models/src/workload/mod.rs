//! Application workloads: jobs whose ranks run small programs on the endpoints, sending
//! messages that depend on the messages they received, until every rank has finished.
//!
//! A `[workload]` section lists jobs (`[[workload.jobs]]`), each with a kind (a built-in
//! program, [`WORKLOADS`]), its parameters, the iterations to run, the cycles to compute
//! after each iteration, and a mapping of its ranks to endpoints (linear, random with a
//! seed, or a file). Jobs take disjoint endpoints. Without a `[traffic]` section only the
//! jobs inject; with one, the endpoints that run no rank generate its pattern at its load
//! as background traffic, so that interference can be studied.
//!
//! Messages are split into packets of `router.packet_size` phits of `bytes_per_phit`
//! bytes. A packet carries its step in its id (see [`Workload::tag`]), so a receiver
//! counts packets that arrive early, for a step it has not reached, towards that step.
//! The router side (what a rank does when packets arrive and when its computation ends)
//! is `router/app.rs`.
//!
//! `spec.rs` reads the section and its jobs ([`WorkloadSection`], [`JobSpec`]). The kinds
//! are a registry, like the traffic patterns: `kind.rs` is what a kind is
//! ([`WorkloadEntry`]: name, doc, documented keys and the parser of its typed settings,
//! which build the job's [`Program`]: [`KindParams`]), `kinds.rs` holds the built-in
//! kinds, each its settings and its entry, and [`WORKLOADS`] below lists them.
//! `programs.rs` is what each program sends and expects at each step, `placement.rs`
//! where a job's ranks run ([`Mapping`]). This file is the workload built for a network:
//! every job's program and endpoints, and the tags of its packets.

mod kind;
mod kinds;
mod placement;
mod programs;
mod spec;

pub use kind::{parse_as, JobContext, KindError, KindParams, KindSpec, ParseKind, WorkloadEntry};
pub use placement::Mapping;
pub use programs::{random_permutations, AllReduce, AllToAll, Order, Program};
pub use spec::{JobSpec, WorkloadSection, JOB_FILES, JOB_SETTINGS, SECTION_SETTINGS};

use placement::Occupancy;

use base::settings::ConfigError;
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
];

/// The workload kind named `name`.
pub fn find(name: &str) -> Option<&'static WorkloadEntry> {
    WORKLOADS.iter().find(|w| w.name == name)
}

/// A job, built: its program and where its ranks run.
#[derive(Clone, Debug)]
pub struct Job {
    /// Name.
    pub name: String,
    /// Kind, as configured.
    pub kind: &'static str,
    /// Who sends what to whom.
    pub program: Program,
    /// Iterations.
    pub iterations: u32,
    /// Compute cycles after each iteration.
    pub compute: u64,
    /// Endpoint of every rank.
    pub endpoints: Vec<EndpointId>,
    /// Bits of a packet's tag that number the packet within its step; the step is above.
    pub packet_bits: u32,
}

impl Job {
    /// Steps in the whole run.
    pub fn total_steps(&self) -> u64 {
        self.iterations as u64 * self.program.steps_per_iteration() as u64
    }

    /// `(iteration, step within it)` of global step `s`.
    pub fn split_step(&self, s: u32) -> (u32, u32) {
        let per = self.program.steps_per_iteration().max(1);
        (s / per, s % per)
    }
}

/// No rank at this endpoint.
pub const NO_RANK: u32 = u32::MAX;

/// The workload, built: every job, and which rank each endpoint runs.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The jobs.
    pub jobs: Vec<Job>,
    /// Bytes a packet carries.
    pub packet_bytes: u64,
    /// Per endpoint: its job, or [`NO_RANK`] as u32 when it runs none.
    job_of: Vec<u32>,
    /// Per endpoint: its rank in its job.
    rank_of: Vec<u32>,
}

/// The flag that marks a workload packet's id (bit 63; endpoint ids stay below 2^31).
pub const WORKLOAD_PACKET: u64 = 1 << 63;

impl Workload {
    /// Builds `section` for a network of `endpoints` endpoints with packets of
    /// `packet_size` phits; `seed` is the run's.
    pub fn build(
        section: &WorkloadSection,
        endpoints: usize,
        packet_size: u16,
        seed: u64,
    ) -> Result<Arc<Workload>, ConfigError> {
        let packet_bytes = section.bytes_per_phit * packet_size as u64;
        let mut occupancy = Occupancy::new(endpoints);
        let mut jobs = Vec::with_capacity(section.jobs.len());
        for (j, spec) in section.jobs.iter().enumerate() {
            let at = |key: &str| format!("workload.jobs[{j}].{key}");
            let job = JobContext { index: j, iterations: spec.iterations, seed };
            let program = spec.kind.program(&job).map_err(|e| ConfigError::new(at(e.key), e.message))?;
            let placed = occupancy.place(j, &spec.name, &spec.mapping, program.ranks() as usize, seed)?;
            let packet_bits = packet_bits(j, spec, &program, packet_bytes)?;
            jobs.push(Job {
                name: spec.name.clone(),
                kind: spec.kind.entry().name,
                program,
                iterations: spec.iterations,
                compute: spec.compute,
                endpoints: placed,
                packet_bits,
            });
        }
        let (job_of, rank_of) = occupancy.into_maps();
        Ok(Arc::new(Workload { jobs, packet_bytes, job_of, rank_of }))
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

    /// Packets a message of `bytes` bytes is split into.
    #[inline]
    pub fn packets(&self, bytes: u64) -> u32 {
        bytes.div_ceil(self.packet_bytes).max(1) as u32
    }

    /// The low 32 bits of a workload packet's id: its step and its number within the step.
    #[inline]
    pub fn tag(job: &Job, step: u32, index: u32) -> u32 {
        (((step as u64) << job.packet_bits) | index as u64) as u32
    }

    /// The step of a workload packet's tag.
    #[inline]
    pub fn step_of_tag(job: &Job, tag: u32) -> u32 {
        ((tag as u64) >> job.packet_bits) as u32
    }
}

/// Bits of a packet's tag that number the packet within its step, for job `j` (`spec`)
/// running `program` with packets of `packet_bytes`: enough for the most packets a rank
/// sends in a step. The step takes the tag's other bits, which must be enough for every
/// step of the run.
fn packet_bits(j: usize, spec: &JobSpec, program: &Program, packet_bytes: u64) -> Result<u32, ConfigError> {
    // A packet's 32-bit tag holds its step and its number within the step.
    let packets = program.max_messages_per_step() * program.max_message_bytes().div_ceil(packet_bytes).max(1);
    let packet_bits = 64 - packets.saturating_sub(1).leading_zeros();
    let steps = spec.iterations as u64 * program.steps_per_iteration() as u64;
    if steps > 0 && (64 - (steps - 1).leading_zeros()) + packet_bits > 32 {
        return Err(ConfigError::new(
            format!("workload.jobs[{j}]"),
            format!(
                "job `{}` has {steps} steps of up to {packets} packets per rank; steps x packets per step must stay below 2^32 (fewer iterations or larger packets)",
                spec.name
            ),
        ));
    }
    Ok(packet_bits)
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
    fn tags_hold_step_and_packet() {
        let w = section("[workload]\n[[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [4, 4]\nhalo_bytes = 1000\niterations = 7\n")
            .unwrap();
        let built = Workload::build(&w, 16, 4, 1).unwrap();
        let job = &built.jobs[0];
        // 1000 bytes in 64-byte packets: 16 packets per message, 4 messages: 64 per step.
        assert_eq!(built.packets(1000), 16);
        assert_eq!(job.packet_bits, 6);
        let tag = Workload::tag(job, 6, 63);
        assert_eq!(Workload::step_of_tag(job, tag), 6);
    }
}

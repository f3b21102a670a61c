//! A load point's `workload` group: the jobs of an application workload.

use super::h5::{attr, attr_str, histogram_rows, table};
use anyhow::Result;
use hdf5::{Group, H5Type};
use models::sim::{JobResult, RankModel, WorkloadResult};
use models::workload::Job;

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct JobRow {
    job: u32,
    ranks: u32,
    iterations: u32,
    steps_per_iteration: u32,
    finished: u64,
    completion_time: u64,
    messages: u64,
    packets_sent: u64,
    packets_received: u64,
    message_latency_mean: f64,
    message_latency_p50: f64,
    message_latency_p99: f64,
    message_latency_max: f64,
    ideal_time: f64,
    slowdown: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct IterationRow {
    iteration: u64,
    end: u64,
    mean_end: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct StepRow {
    iteration: u64,
    time_ns: f64,
    /// The ranks' mean computation in the iteration.
    compute_mean_ns: f64,
    /// The busiest rank's computation.
    compute_max_ns: f64,
    /// The time less the busiest rank's computation.
    exposed_ns: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct CollectiveRow {
    iteration: u32,
    /// Its index among the iteration's collectives (`collective_names` names them).
    operation: u32,
    /// nccl-tests' size.
    bytes: u64,
    /// Members' parts that ended.
    parts: u64,
    start: u64,
    end: u64,
    time_ns: f64,
    algbw_gbs: f64,
    busbw_gbs: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct RankRow {
    rank: u64,
    endpoint: u32,
    switch: u32,
    finish: u64,
    computing: u64,
    sending: u64,
    waiting: u64,
    finished: u64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct SendRow {
    rank: u32,
    to: u32,
    bytes: u64,
    iteration: u32,
    start: u64,
    end: u64,
    time_ns: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct StalledRow {
    job: u32,
    rank: u32,
    iteration: u32,
    ops_left: u32,
    receives_posted: u32,
    unexpected: u32,
    unsent: u32,
    computing: u32,
}

/// A point's `workload` group: one row per job in `jobs`, and per job `job_NNN` with its
/// iterations, its ranks' finish times and its message latency histogram.
pub(super) fn write_workload(g: &Group, sim: &RankModel, w: &WorkloadResult, in_flight: u64) -> Result<()> {
    let wg = g.create_group("workload")?;
    let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
    let kinds: Vec<&str> = w.jobs.iter().map(|j| j.kind).collect();
    attr_str(&wg, "job_names", &names.join(","))?;
    attr_str(&wg, "job_kinds", &kinds.join(","))?;
    attr(&wg, "finished", u64::from(w.finished()))?;
    attr_str(&wg, "diagnosis", &w.diagnosis(in_flight).unwrap_or_default())?;
    let rows: Vec<JobRow> = w
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| JobRow {
            job: i as u32,
            ranks: j.ranks,
            iterations: j.iterations,
            steps_per_iteration: j.steps_per_iteration,
            finished: u64::from(j.completion_time.is_some()),
            completion_time: j.completion_time.unwrap_or(0),
            messages: j.messages,
            packets_sent: j.packets_sent,
            packets_received: j.packets_received,
            message_latency_mean: j.message_latency.mean(),
            message_latency_p50: j.message_latency.quantile(0.5),
            message_latency_p99: j.message_latency.quantile(0.99),
            message_latency_max: j.message_latency.max() as f64,
            ideal_time: j.ideal_time.unwrap_or(f64::NAN),
            slowdown: j.slowdown(),
        })
        .collect();
    table(&wg, "jobs", &rows)?;
    let workload = sim.workload().expect("a workload result comes from a workload");
    for (i, (j, built)) in w.jobs.iter().zip(&workload.jobs).enumerate() {
        write_job(&wg, i, j, built, sim, w.ps_per_cycle)?;
    }
    let stalled: Vec<StalledRow> = w
        .stalled
        .iter()
        .map(|s| StalledRow {
            job: s.job,
            rank: s.rank,
            iteration: s.iteration,
            ops_left: s.ops_left,
            receives_posted: s.receives_posted,
            unexpected: s.unexpected,
            unsent: s.unsent,
            computing: u32::from(s.computing),
        })
        .collect();
    table(&wg, "stalled_ranks", &stalled)?;
    Ok(())
}

/// Job `i`'s group, `job_NNN`: its name and kind, its iterations' end times, its ranks'
/// finish times (with the endpoint and switch each ran on), its message latencies, the
/// times of its collectives, where its computation is known its steps against it, and
/// with `workload.record_sends` its sends (cycles of `ps_per_cycle` picoseconds).
fn write_job(
    wg: &Group,
    i: usize,
    j: &JobResult,
    built: &Job,
    sim: &RankModel,
    ps_per_cycle: u64,
) -> Result<()> {
    let jg = wg.create_group(&format!("job_{i:03}"))?;
    attr_str(&jg, "name", &j.name)?;
    attr_str(&jg, "kind", j.kind)?;
    let iterations: Vec<IterationRow> = (0..j.iterations as usize)
        .map(|k| IterationRow {
            iteration: k as u64,
            end: j.iteration_end[k],
            mean_end: j.iteration_mean_end[k],
        })
        .collect();
    table(&jg, "iterations", &iterations)?;
    let ranks: Vec<RankRow> = j
        .rank_finish
        .iter()
        .enumerate()
        .map(|(r, &finish)| {
            let endpoint = built.endpoints[r];
            let (computing, sending) = (j.rank_computing[r], j.rank_sending[r]);
            RankRow {
                rank: r as u64,
                endpoint,
                switch: sim.endpoints.locate(endpoint).0,
                finish,
                computing,
                sending,
                waiting: j.rank_waiting[r],
                finished: u64::from(j.rank_done[r]),
            }
        })
        .collect();
    table(&jg, "ranks", &ranks)?;
    table(&jg, "message_latency_histogram", &histogram_rows(&j.message_latency))?;
    let ns_per_cycle = ps_per_cycle as f64 / 1000.0;
    if j.compute.is_some() {
        let rows: Vec<StepRow> = j
            .steps()
            .iter()
            .map(|s| StepRow {
                iteration: u64::from(s.iteration),
                time_ns: s.time as f64 * ns_per_cycle,
                compute_mean_ns: s.compute_mean * ns_per_cycle,
                compute_max_ns: s.compute_max as f64 * ns_per_cycle,
                exposed_ns: s.exposed as f64 * ns_per_cycle,
            })
            .collect();
        table(&jg, "steps", &rows)?;
    }
    if sim.workload().is_some_and(|w| w.record_sends) {
        let rows: Vec<SendRow> = j
            .sends
            .iter()
            .map(|e| SendRow {
                rank: e.rank,
                to: e.to,
                bytes: e.bytes,
                iteration: e.iteration,
                start: e.start,
                end: e.end,
                time_ns: (e.end - e.start) as f64 * ns_per_cycle,
            })
            .collect();
        table(&jg, "sends", &rows)?;
    }
    if let Some(phases) = built.ops.phases.as_deref() {
        let names: Vec<&str> = phases.list.iter().map(|p| p.name.as_str()).collect();
        attr_str(&jg, "collective_names", &names.join(","))?;
        let rows: Vec<CollectiveRow> = j
            .collectives
            .iter()
            .map(|c| CollectiveRow {
                iteration: c.iteration,
                operation: c.index,
                bytes: c.phase.bytes,
                parts: c.parts,
                start: c.start,
                end: c.end,
                time_ns: c.cycles() as f64 * ns_per_cycle,
                algbw_gbs: c.algbw() / ns_per_cycle,
                busbw_gbs: c.busbw() / ns_per_cycle,
            })
            .collect();
        table(&jg, "collectives", &rows)?;
    }
    Ok(())
}

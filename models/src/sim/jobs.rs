//! What the application jobs did: per job its ranks' finish times, its iterations, its
//! messages and its collectives' times, from the partitions' merged statistics.

use crate::router::{JobStats, SendRecord, StalledRank};
use crate::stats::Histogram;
use crate::workload::Workload;
use schedule::Stuck;
use std::sync::Arc;

/// What the application jobs did.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadResult {
    /// Per job, in configuration order.
    pub jobs: Vec<JobResult>,
    /// The ranks that had not finished, in (job, rank) order.
    pub stalled: Vec<StalledRank>,
    /// Picoseconds per cycle (`workload.ns_per_cycle`), to state times and bandwidths.
    pub ps_per_cycle: u64,
    /// Packets the network dropped (`router.flow_control`, end-to-end link errors, link
    /// flaps) that no transport sends again: a message that lost one never completes (0
    /// with a transport, which recovers them).
    pub dropped: u64,
    /// Connections of the transport that gave up after their retries: their messages
    /// never complete.
    pub failed_connections: u64,
    /// With a transport (`transport.kind` = `rc` or `uec`): its timeouts over the run.
    pub transport_timeouts: Option<u64>,
}

/// One job's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    /// Name.
    pub name: String,
    /// Kind (`stencil3d`, ...).
    pub kind: &'static str,
    /// Ranks.
    pub ranks: u32,
    /// Iterations.
    pub iterations: u32,
    /// Steps per iteration.
    pub steps_per_iteration: u32,
    /// When its last rank finished, if all did: the job's completion time.
    pub completion_time: Option<u64>,
    /// Per rank: whether it finished.
    pub rank_done: Vec<bool>,
    /// Per rank: when it finished (0 if it did not).
    pub rank_finish: Vec<u64>,
    /// Per rank: cycles it computed (a `calc` running), until it finished or the run ended.
    pub rank_computing: Vec<u64>,
    /// Per rank: cycles it sent (a send running, no `calc`), until it finished or the run
    /// ended.
    pub rank_sending: Vec<u64>,
    /// Per rank: cycles it waited (neither), until it finished or the run ended.
    pub rank_waiting: Vec<u64>,
    /// The job's completion time on an ideal network (zero latency, infinite bandwidth),
    /// in cycles; `None` if it cannot complete even there.
    pub ideal_time: Option<f64>,
    /// Per iteration: when its last rank finished it (0: not all did).
    pub iteration_end: Vec<u64>,
    /// Per iteration: the mean over the ranks that finished it of when they did.
    pub iteration_mean_end: Vec<f64>,
    /// Message latencies (posting to last packet in), every message of the run.
    pub message_latency: Histogram,
    /// Messages delivered whole.
    pub messages: u64,
    /// Packets posted.
    pub packets_sent: u64,
    /// Packets received.
    pub packets_received: u64,
    /// Why the job's schedule can never complete, whatever the network (it does not on an
    /// ideal one); `None` if it can.
    pub never_completes: Option<Arc<Stuck>>,
    /// Per collective run (a `collectives` job's, iteration by iteration), its time.
    pub collectives: Vec<CollectiveTime>,
    /// With `workload.record_sends`: every send that ended, by rank, iteration and start.
    pub sends: Vec<SendRecord>,
    /// Per rank, the cycles one iteration computes (the model's own work, as
    /// [`JobOps::compute`](crate::workload::JobOps::compute)), where the kind tells.
    pub compute: Option<Vec<u64>>,
}

/// One iteration of a job whose computation is known (a training step): its time, and the
/// part of it no computation covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepTime {
    /// Its number.
    pub iteration: u32,
    /// From the end of the previous iteration (the start) to the last rank's end, cycles.
    pub time: u64,
    /// The ranks' mean computation in it, cycles.
    pub compute_mean: f64,
    /// The busiest rank's computation in it, cycles.
    pub compute_max: u64,
    /// The time less the busiest rank's computation: communication that no computation
    /// hides, with the waits it causes (pipeline bubbles among them), cycles.
    pub exposed: u64,
}

impl JobResult {
    /// Its finished iterations' times against their computation, where the kind knows it.
    pub fn steps(&self) -> Vec<StepTime> {
        let Some(compute) = self.compute.as_deref().filter(|c| !c.is_empty()) else { return Vec::new() };
        let compute_max = compute.iter().copied().max().unwrap_or(0);
        let compute_mean = compute.iter().sum::<u64>() as f64 / compute.len() as f64;
        let mut start = 0;
        let mut steps = Vec::new();
        for (i, &end) in self.iteration_end.iter().enumerate() {
            if end == 0 {
                break;
            }
            let time = end.saturating_sub(start);
            steps.push(StepTime {
                iteration: i as u32,
                time,
                compute_mean,
                compute_max,
                exposed: time.saturating_sub(compute_max),
            });
            start = end;
        }
        steps
    }

    /// Completion time over the ideal network's: how much the network slowed the job
    /// down (NaN if it did not finish or takes no time on an ideal network).
    pub fn slowdown(&self) -> f64 {
        match (self.completion_time, self.ideal_time) {
            (Some(t), Some(ideal)) if ideal > 0.0 => t as f64 / ideal,
            _ => f64::NAN,
        }
    }
}

impl WorkloadResult {
    /// Every job finished.
    pub fn finished(&self) -> bool {
        self.jobs.iter().all(|j| j.completion_time.is_some())
    }

    /// Why the jobs did not finish, naming the first ranks that wait and for what; `None`
    /// when they all finished.
    pub fn diagnosis(&self, in_flight: u64) -> Option<String> {
        if self.finished() {
            return None;
        }
        let mut lines = Vec::new();
        for (j, job) in self.jobs.iter().enumerate() {
            let left = job.rank_done.iter().filter(|&&done| !done).count();
            if left > 0 {
                lines.push(format!(
                    "job `{}` ({}): {left} of {} ranks unfinished",
                    job.name, job.kind, job.ranks
                ));
            }
            if let Some(stuck) = &job.never_completes {
                lines.push(format!("  it can never complete, on any network: {stuck}"));
                continue;
            }
            for s in self.stalled.iter().filter(|s| s.job == j as u32).take(5) {
                let what =
                    if s.waits.is_empty() { "waiting for dependencies".to_string() } else { s.waits.clone() };
                lines.push(format!(
                    "  rank {} in iteration {} ({} ops left, {} unexpected messages, {} packets unsent): {what}",
                    s.rank, s.iteration, s.ops_left, s.unexpected, s.unsent
                ));
            }
        }
        let schedules_complete = self.jobs.iter().all(|j| j.never_completes.is_none());
        lines.push(if schedules_complete && self.failed_connections > 0 {
            format!(
                "{} connections failed after their retries, timeouts in a row (transport.rc.retries or transport.uec.retries; the sends above name them): their messages never complete",
                self.failed_connections
            )
        } else if schedules_complete && self.dropped > 0 {
            format!(
                "{} packets were dropped at full buffers (router.flow_control; see the links' `dropped`): a message that lost one never completes without a transport. Give PFC room for its headroom (router.pfc.xoff at its default), use credits, or set transport.kind = \"rc\"",
                self.dropped
            )
        } else if !schedules_complete {
            "a schedule that cannot complete: fix it (the ranks above wait for messages no rank sends, or for each other)".to_string()
        } else if let (0, Some(timeouts)) = (in_flight, self.transport_timeouts) {
            format!(
                "no packet was in flight at the end: the transport's connections waited for their timeout ({timeouts} timeouts in the run; a lost packet with nothing after it to draw a NAK is found only so), or simulation.cycles ended during a computation. Raise simulation.cycles or lower the transport's timeout (transport.rc.timeout or transport.uec.timeout)"
            )
        } else if in_flight == 0 {
            "no packet was in flight at the end, and every schedule completes on an ideal network: simulation.cycles ended during a computation".to_string()
        } else {
            format!("{in_flight} packets were still in flight: the network was too slow for simulation.cycles, or deadlocked (see the watchdog, simulation.watchdog)")
        });
        Some(lines.join("\n"))
    }
}

/// One collective of a job, timed: from the first member's start to the last member's end.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveTime {
    /// Its iteration.
    pub iteration: u32,
    /// Its index among the iteration's collectives.
    pub index: u32,
    /// What it is, its size and bus factor (nccl-tests').
    pub phase: crate::workload::Phase,
    /// The earliest start of a member's part, cycles.
    pub start: u64,
    /// The latest end of a member's part, cycles (0: none ended).
    pub end: u64,
    /// The members' parts that ended.
    pub parts: u64,
}

impl CollectiveTime {
    /// Its time, cycles (0 if it did not end).
    pub fn cycles(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }

    /// nccl-tests' algorithm bandwidth, bytes per cycle: size over time.
    pub fn algbw(&self) -> f64 {
        self.phase.bytes as f64 / self.cycles() as f64
    }

    /// nccl-tests' bus bandwidth, bytes per cycle: the algorithm bandwidth times the
    /// collective's factor, comparable with a link's rate whatever the collective.
    pub fn busbw(&self) -> f64 {
        self.algbw() * self.phase.bus_factor
    }
}

/// The jobs' results from the partitions' statistics and the ranks still unfinished when the
/// run ended at `end`.
pub(super) fn job_results(
    w: &Workload,
    mut stats: Vec<JobStats>,
    mut stalled: Vec<StalledRank>,
    end: u64,
) -> WorkloadResult {
    stats.resize_with(w.jobs.len(), Default::default);
    stalled.sort_unstable_by_key(|s| (s.job, s.rank));
    let jobs =
        w.jobs
            .iter()
            .zip(stats)
            .enumerate()
            .map(|(j, (job, mut s))| {
                let ranks = job.endpoints.len();
                let mut rank_done = vec![false; ranks];
                let mut rank_finish = vec![0; ranks];
                let mut rank_computing = vec![0; ranks];
                let mut rank_sending = vec![0; ranks];
                let mut rank_waiting = vec![0; ranks];
                for e in &s.finished {
                    rank_done[e.rank as usize] = true;
                    rank_finish[e.rank as usize] = e.finish;
                    rank_computing[e.rank as usize] = e.computing;
                    rank_sending[e.rank as usize] = e.sending;
                    rank_waiting[e.rank as usize] = e.finish.saturating_sub(e.computing + e.sending);
                }
                for r in stalled.iter().filter(|r| r.job == j as u32) {
                    rank_computing[r.rank as usize] = r.computing_cycles;
                    rank_sending[r.rank as usize] = r.sending_cycles;
                    rank_waiting[r.rank as usize] = end.saturating_sub(r.computing_cycles + r.sending_cycles);
                }
                let all_done = s.finished.len() == ranks;
                let n = job.iterations as usize;
                let at = |v: &[u64], i: usize| v.get(i).copied().unwrap_or(0);
                // An iteration is over once every rank has finished it.
                let iteration_end: Vec<u64> = (0..n)
                    .map(|i| {
                        if at(&s.iteration_ranks, i) == ranks as u64 {
                            at(&s.iteration_end_max, i)
                        } else {
                            0
                        }
                    })
                    .collect();
                let collectives = job.ops.phases.as_deref().map_or_else(Vec::new, |phases| {
                    let per = phases.list.len();
                    s.phases
                        .iter()
                        .enumerate()
                        .take(n * per)
                        .filter(|(_, span)| span.start != u64::MAX)
                        .map(|(i, span)| CollectiveTime {
                            iteration: (i / per) as u32,
                            index: (i % per) as u32,
                            phase: phases.list[i % per].clone(),
                            start: span.start,
                            end: span.end,
                            parts: span.parts,
                        })
                        .collect()
                });
                let iteration_mean_end = (0..n)
                    .map(|i| at(&s.iteration_end_sum, i) as f64 / at(&s.iteration_ranks, i).max(1) as f64)
                    .collect();
                JobResult {
                    name: job.name.clone(),
                    kind: job.kind,
                    ranks: ranks as u32,
                    iterations: job.iterations,
                    steps_per_iteration: job.ops.steps_per_iteration,
                    completion_time: all_done.then(|| rank_finish.iter().copied().max().unwrap_or(0)),
                    rank_done,
                    rank_finish,
                    rank_computing,
                    rank_sending,
                    rank_waiting,
                    ideal_time: job.ideal.as_ref().ok().copied(),
                    never_completes: job.ideal.as_ref().err().cloned(),
                    collectives,
                    compute: job
                        .ops
                        .compute
                        .as_deref()
                        .filter(|c| !c.is_empty())
                        .map(|c| (0..ranks).map(|r| c[r % c.len()]).collect()),
                    iteration_end,
                    iteration_mean_end,
                    sends: {
                        let mut sends = std::mem::take(&mut s.sends);
                        sends.sort_unstable_by_key(|e| (e.rank, e.iteration, e.start, e.end, e.to, e.bytes));
                        sends
                    },
                    message_latency: s.message_latency,
                    messages: s.messages,
                    packets_sent: s.packets_sent,
                    packets_received: s.packets_received,
                }
            })
            .collect();
    WorkloadResult {
        jobs,
        stalled,
        ps_per_cycle: w.ps_per_cycle,
        dropped: 0,
        failed_connections: 0,
        transport_timeouts: None,
    }
}

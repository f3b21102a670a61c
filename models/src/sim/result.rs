//! What a run produces: its status, time series, summary and tables, and how the ranks'
//! shares of them are merged at rank 0.

use super::jobs::{job_results, WorkloadResult};
use super::saturation::{backlog, saturated};
use super::schema::{ratio, Sample, Summary};
use crate::router::{BlockedChannel, Delivery, JobStats, PartitionStats, StalledRank};
use crate::stats::{jain, Counters, Histogram};
use crate::workload::Workload;
use engine::RunStats;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use topology::{EndpointId, PortId, SwitchId};

/// One directed switch-to-switch link and its load.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkLoad {
    /// The switch the link leaves.
    pub switch: SwitchId,
    /// Its output port.
    pub port: PortId,
    /// Link class (index into the network's link classes).
    pub class: u8,
    /// The switch at the other end.
    pub peer: SwitchId,
    /// Phits sent during the measurement period.
    pub phits: u64,
    /// Cycles in the measurement period the link was free, with packets waiting in its
    /// output buffer and credits for none of them (InfiniBand's XmitWait); under PFC, none
    /// of them on a VC that is not paused.
    pub stall_cycles: u64,
    /// PFC pauses the link's sender received in the measurement period.
    pub pauses: u64,
    /// Packets the link delivered to a full input buffer in the measurement period, lost
    /// (`router.flow_control` = `pfc` or `none`).
    pub dropped: u64,
    /// Replays of packets the link corrupted, in the measurement period
    /// (`[router.link_errors]`).
    pub retries: u64,
    /// The longest time one of its VCs stayed paused by PFC in the measurement period
    /// (a pause storm shows as a long one), in cycles.
    pub longest_pause: u64,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran to the configured number of cycles.
    #[default]
    Completed,
    /// The watchdog saw packets in flight and no movement.
    Deadlock,
    /// Stopped from outside (signal).
    Interrupted,
    /// Reached `simulation.cycles` before every rank of the workload finished (see
    /// [`WorkloadResult::diagnosis`]).
    Unfinished,
}

impl Status {
    /// Lower-case name, as stored in the output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Deadlock => "deadlock",
            Status::Interrupted => "interrupted",
            Status::Unfinished => "unfinished",
        }
    }
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// How it ended.
    pub status: Status,
    /// Cycle reached.
    pub time: u64,
    /// Headline figures.
    pub summary: Summary,
    /// Packet latency histogram (measured packets).
    pub latency: Histogram,
    /// Network latency histogram.
    pub network_latency: Histogram,
    /// Hop-count histogram.
    pub hops: Histogram,
    /// Per endpoint: phits generated and accepted during measurement.
    pub endpoint_generated: Vec<u64>,
    /// Phits accepted per endpoint during measurement.
    pub endpoint_accepted: Vec<u64>,
    /// Every directed network link with the phits it carried during measurement, in
    /// `(switch, port)` order.
    pub links: Vec<LinkLoad>,
    /// Phits sent per VC over network links during measurement.
    pub vc_phits: Vec<u64>,
    /// The time series.
    pub samples: Vec<Sample>,
    /// Blocked input VCs found by the watchdog (empty unless deadlocked).
    pub blocked: Vec<BlockedChannel>,
    /// Packets held in routers at the end (source queues and buffers).
    pub resident_end: u64,
    /// Packets on links (heads sent, not yet arrived or delivered) at the end.
    pub on_wires_end: u64,
    /// Every delivered packet, sorted by id (only with `record_deliveries`).
    pub deliveries: Vec<Delivery>,
    /// Packet-hops simulated: link traversals, injection and ejection links included.
    pub packet_hops: u64,
    /// Engine counters and wall-clock timings per rank (the only non-deterministic part).
    pub engine: Vec<RunStats>,
    /// Wall-clock seconds of the run.
    pub wall_seconds: f64,
    /// Completion-time mode (`traffic.phits_per_endpoint`): when the traffic was delivered.
    pub completion: Option<Completion>,
    /// With a `[workload]`: the jobs' completion times and what their ranks recorded.
    pub workload: Option<WorkloadResult>,
}

/// The outcome of a completion-time run: every endpoint sent `phits_per_endpoint` phits.
#[derive(Clone, Debug, PartialEq)]
pub struct Completion {
    /// Phits each endpoint sent.
    pub phits_per_endpoint: u64,
    /// Every packet was delivered (before the cycle limit or the watchdog stopped the run).
    pub all_delivered: bool,
    /// Cycle the last packet was delivered: the completion time when `all_delivered`.
    pub time: u64,
    /// Per endpoint: when the last packet it sent was delivered (0: none was).
    pub source_finish: Vec<u64>,
    /// Per endpoint: when the last packet for it arrived (0: none did).
    pub receive_finish: Vec<u64>,
}

impl Completion {
    /// The `count` endpoints whose traffic was delivered last (latest first, ties by id):
    /// the stragglers that set the completion time.
    pub fn stragglers(&self, count: usize) -> Vec<(u32, u64)> {
        let mut order: Vec<(u32, u64)> =
            self.source_finish.iter().enumerate().map(|(e, &t)| (e as u32, t)).collect();
        order.sort_by_key(|&(e, t)| (std::cmp::Reverse(t), e));
        order.truncate(count);
        order
    }
}

/// One rank's (or one partition's) share of a run's results, sent to rank 0. Shares merge
/// with [`Partial::merge`], the one place that says how each part combines: partitions into
/// their rank's share, ranks' shares into the run's.
#[derive(Default, Serialize, Deserialize)]
pub(crate) struct Partial {
    pub(crate) measured: Counters,
    pub(crate) latency: Histogram,
    pub(crate) network_latency: Histogram,
    pub(crate) hops: Histogram,
    /// `(endpoint, phits generated, phits accepted)` during measurement.
    pub(crate) endpoints: Vec<(EndpointId, u64, u64)>,
    pub(crate) links: Vec<LinkLoad>,
    /// `(switch, port, packets)`: drops at the far end of the link leaving `port` of
    /// `switch`, added to its [`LinkLoad`] once all links are in.
    pub(crate) input_drops: Vec<(SwitchId, PortId, u64)>,
    /// Phits sent per VC (summed element by element).
    pub(crate) vc_phits: Vec<u64>,
    pub(crate) blocked: Vec<BlockedChannel>,
    pub(crate) resident: u64,
    pub(crate) queued: u64,
    pub(crate) departures: u64,
    pub(crate) arrivals: u64,
    pub(crate) generated: u64,
    pub(crate) delivered: u64,
    pub(crate) dropped: u64,
    pub(crate) reorder_late_max: u64,
    pub(crate) transport_held_max: u64,
    pub(crate) deliveries: Vec<Delivery>,
    /// Engine figures, one entry per rank.
    pub(crate) engine: Vec<RunStats>,
    /// Completion-time mode: per source endpoint, its last packet's delivery (see
    /// [`Completion`]; the later of two shares' times); empty otherwise.
    pub(crate) source_finish: Vec<u64>,
    /// `(endpoint, last delivery to it)`.
    pub(crate) receive_finish: Vec<(EndpointId, u64)>,
    /// Per workload job.
    pub(crate) jobs: Vec<JobStats>,
    /// Unfinished ranks.
    pub(crate) stalled: Vec<StalledRank>,
}

impl Partial {
    /// What one partition's statistics contribute (its routers' tables are added by the
    /// rank, [`RankModel`](super::RankModel)).
    pub(crate) fn of_partition(s: PartitionStats) -> Partial {
        Partial {
            measured: s.measured,
            latency: s.latency,
            network_latency: s.network_latency,
            hops: s.hops,
            vc_phits: s.vc_phits,
            departures: s.departures,
            arrivals: s.arrivals,
            generated: s.generated_total,
            delivered: s.delivered_total,
            dropped: s.dropped_total,
            reorder_late_max: s.reorder_late_max,
            transport_held_max: s.transport_held_max,
            deliveries: s.deliveries,
            source_finish: s.source_finish,
            jobs: s.jobs,
            ..Default::default()
        }
    }

    /// Adds `o` into `self`: counts and histograms add up, lists are joined (rank 0 sorts
    /// them), per-VC phits add element by element, finish times take the later.
    pub(crate) fn merge(&mut self, o: Partial) {
        self.measured.merge(&o.measured);
        self.latency.merge(&o.latency);
        self.network_latency.merge(&o.network_latency);
        self.hops.merge(&o.hops);
        self.endpoints.extend(o.endpoints);
        self.links.extend(o.links);
        self.input_drops.extend(o.input_drops);
        if self.vc_phits.len() < o.vc_phits.len() {
            self.vc_phits.resize(o.vc_phits.len(), 0);
        }
        for (a, b) in self.vc_phits.iter_mut().zip(&o.vc_phits) {
            *a += b;
        }
        self.blocked.extend(o.blocked);
        self.resident += o.resident;
        self.queued += o.queued;
        self.departures += o.departures;
        self.arrivals += o.arrivals;
        self.generated += o.generated;
        self.delivered += o.delivered;
        self.dropped += o.dropped;
        self.reorder_late_max = self.reorder_late_max.max(o.reorder_late_max);
        self.transport_held_max = self.transport_held_max.max(o.transport_held_max);
        self.deliveries.extend(o.deliveries);
        self.engine.extend(o.engine);
        merge_finish(&mut self.source_finish, &o.source_finish);
        self.receive_finish.extend(o.receive_finish);
        if self.jobs.len() < o.jobs.len() {
            self.jobs.resize_with(o.jobs.len(), Default::default);
        }
        for (into, from) in self.jobs.iter_mut().zip(&o.jobs) {
            into.merge(from);
        }
        self.stalled.extend(o.stalled);
    }
}

/// What [`merge`] needs to know of the run besides the partial results.
pub(crate) struct MergeContext {
    pub(crate) load: f64,
    pub(crate) status: Status,
    pub(crate) time: u64,
    pub(crate) cycles: u64,
    pub(crate) warmup: u64,
    pub(crate) vcs: usize,
    pub(crate) endpoints: usize,
    pub(crate) wall_seconds: f64,
    pub(crate) phits_per_endpoint: u64,
    /// Completion-time mode: packets all endpoints generate together (0: not that mode).
    pub(crate) quota_packets: u64,
    /// The jobs, if any.
    pub(crate) workload: Option<Arc<Workload>>,
    /// Whether reordering was measured (`simulation.reordering`).
    pub(crate) reordering: bool,
    /// Whether a transport sends lost packets again (`transport.kind` = `rc` or `uec`):
    /// drops then lose no message.
    pub(crate) transport: bool,
}

/// Merges the ranks' shares (in rank order) into the run's result.
pub(crate) fn merge(ctx: MergeContext, parts: Vec<Partial>, samples: Vec<Sample>) -> RunResult {
    let MergeContext {
        load,
        status,
        time,
        cycles,
        warmup,
        vcs,
        endpoints,
        wall_seconds,
        phits_per_endpoint,
        quota_packets,
        workload,
        reordering,
        transport,
    } = ctx;
    let mut status = status;
    let mut all = Partial { vc_phits: vec![0; vcs], ..Default::default() };
    for p in parts {
        all.merge(p);
    }
    let mut endpoint_generated = vec![0; endpoints];
    let mut endpoint_accepted = vec![0; endpoints];
    for &(e, g, a) in &all.endpoints {
        endpoint_generated[e as usize] = g;
        endpoint_accepted[e as usize] = a;
    }
    let mut receive_finish = vec![0; endpoints];
    for &(e, t) in &all.receive_finish {
        receive_finish[e as usize] = t;
    }
    let mut source_finish = std::mem::take(&mut all.source_finish);
    let engine = std::mem::take(&mut all.engine);
    let end = cycles.min(time);
    let workload = workload.map(|w| WorkloadResult {
        dropped: if transport { 0 } else { all.dropped },
        failed_connections: all.measured.failed_connections,
        transport_timeouts: transport.then_some(all.measured.transport_timeouts),
        ..job_results(&w, std::mem::take(&mut all.jobs), std::mem::take(&mut all.stalled), end)
    });
    if status == Status::Completed && workload.as_ref().is_some_and(|w| !w.finished()) {
        status = Status::Unfinished;
    }
    all.deliveries.sort_unstable_by_key(|d| d.id);
    all.links.sort_unstable_by_key(|l| (l.switch, l.port));
    for &(switch, port, drops) in &all.input_drops {
        if let Ok(k) = all.links.binary_search_by_key(&(switch, port), |l| (l.switch, l.port)) {
            all.links[k].dropped += drops;
        }
    }
    all.blocked.sort_unstable_by_key(|b| (b.switch, b.port, b.vc));
    if status != Status::Deadlock {
        all.blocked.clear();
    }
    let mut summary = summary(&all, load, (warmup, end), &endpoint_generated, &endpoint_accepted, &samples);
    if !reordering {
        // Not measured: no figure, rather than a share of 0.
        summary.reordered_share = f64::NAN;
        summary.reorder_late_mean = f64::NAN;
    }
    let completion = (phits_per_endpoint > 0).then(|| {
        source_finish.resize(endpoints, 0);
        Completion {
            phits_per_endpoint,
            all_delivered: all.generated == quota_packets && all.delivered == quota_packets,
            time: receive_finish.iter().copied().max().unwrap_or(0),
            source_finish,
            receive_finish,
        }
    });
    let packet_hops =
        samples.iter().map(|s| s.counters.link_transmissions + s.counters.injected_packets).sum();
    RunResult {
        status,
        time,
        summary,
        latency: all.latency,
        network_latency: all.network_latency,
        hops: all.hops,
        endpoint_generated,
        endpoint_accepted,
        links: all.links,
        vc_phits: all.vc_phits,
        samples,
        blocked: all.blocked,
        resident_end: all.resident,
        on_wires_end: all.departures - all.arrivals,
        deliveries: all.deliveries,
        engine,
        packet_hops,
        wall_seconds,
        completion,
        workload,
    }
}

/// The headline figures of the merged shares `all` at offered `load` over the measurement
/// window `[warmup, end)`.
fn summary(
    all: &Partial,
    load: f64,
    (warmup, end): (u64, u64),
    endpoint_generated: &[u64],
    endpoint_accepted: &[u64],
    samples: &[Sample],
) -> Summary {
    let (measured, latency, network_latency, hops) =
        (&all.measured, &all.latency, &all.network_latency, &all.hops);
    let window = (end.saturating_sub(warmup)).max(1) as f64;
    let endpoints = endpoint_generated.len();
    let per = |phits: u64| phits as f64 / window / endpoints as f64;
    let backlog = backlog(samples, warmup, end, measured);
    Summary {
        load,
        offered_load: per(measured.generated_phits + measured.refused_phits),
        refused_load: per(measured.refused_phits),
        injected_load: per(measured.injected_phits),
        accepted_load: per(measured.delivered_phits),
        measured_packets: measured.generated_packets,
        measured_delivered: latency.count(),
        latency_mean: latency.mean(),
        latency_p50: latency.quantile(0.5),
        latency_p99: latency.quantile(0.99),
        latency_max: latency.max() as f64,
        network_latency_mean: network_latency.mean(),
        network_latency_p50: network_latency.quantile(0.5),
        network_latency_p99: network_latency.quantile(0.99),
        network_latency_max: network_latency.max() as f64,
        hops_mean: hops.mean(),
        jain_generated: jain(endpoint_generated.iter().copied()),
        jain_accepted: jain(endpoint_accepted.iter().copied()),
        generated_total: all.generated,
        delivered_total: all.delivered,
        in_flight_end: all.generated - all.delivered - all.dropped,
        dropped_total: all.dropped,
        dropped_load: per(measured.dropped_phits),
        pause_frames: measured.pause_frames,
        link_retries: measured.link_retries,
        longest_pause: all.links.iter().map(|l| l.longest_pause).max().unwrap_or(0),
        reordered_share: ratio(measured.reordered_packets, measured.delivered_packets),
        reorder_late_mean: ratio(measured.reorder_late_sum, measured.reordered_packets),
        reorder_late_max: all.reorder_late_max,
        retransmitted_packets: measured.retransmitted_packets,
        transport_timeouts: measured.transport_timeouts,
        discarded_packets: measured.discarded_packets,
        naks: measured.naks,
        failed_connections: measured.failed_connections,
        down_link_drops: measured.down_link_drops,
        out_of_order_packets: measured.out_of_order_packets,
        reorder_held_max: all.transport_held_max,
        source_queued_end: all.queued,
        backlog_growth: backlog.growth,
        backlog_z: backlog.z,
        saturated: saturated(backlog),
        victim_offered_load: per(
            measured.generated_phits + measured.refused_phits - measured.aggressor_offered_phits
        ),
        victim_accepted_load: per(measured.delivered_phits - measured.aggressor_delivered_phits),
        victim_latency_mean: ratio(
            measured.latency_sum - measured.aggressor_latency_sum,
            latency.count() - measured.aggressor_latency_count,
        ),
        aggressor_offered_load: per(measured.aggressor_offered_phits),
        aggressor_accepted_load: per(measured.aggressor_delivered_phits),
        aggressor_latency_mean: ratio(measured.aggressor_latency_sum, measured.aggressor_latency_count),
    }
}

/// Takes the later of each endpoint's finish times (`into` grows to `from`'s length).
pub(crate) fn merge_finish(into: &mut Vec<u64>, from: &[u64]) {
    if into.len() < from.len() {
        into.resize(from.len(), 0);
    }
    for (a, &b) in into.iter_mut().zip(from) {
        *a = (*a).max(b);
    }
}

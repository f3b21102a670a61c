//! One rank's share of a run: the rank's switches, their ports and links, the routing
//! state they need, and a compact description of the rest of the network.
//!
//! A rank never keeps the whole network. It is built from the whole [`Network`] (which
//! every rank constructs the same way, deterministically) and then drops it; what remains
//! is proportional to the rank's own switches, apart from a few bytes per switch (the
//! partition map, the endpoint numbering) and whatever global state the routing needs
//! (none for the algorithmic routings, the rows of the rank's switches and their
//! neighbours for table-based minimal routing).

use super::result::{merge, LinkLoad, MergeContext, Partial, Status};
use super::routes::{build_routes, routing_vcs};
use super::schema::Sample;
use super::RunResult;
use crate::config::{Config, ConfigError};
use crate::router::{
    FlowLevels, InjectionVc, LinkErrors, LinkFlaps, LinkSpeeds, LocalPorts, PartitionState, Router,
    RouterParams, Shared,
};
use crate::stats::Counters;
use crate::traffic::Pattern;
use crate::transport::{fabric_rtt, Nscc, NsccParams, Transport, UecCongestion};
use crate::workload::Workload;
use engine::comm::{decode, encode};
use engine::{run_distributed, Checkpoint, Control, EngineError, Layout, LinkSpec, RankComm, RunConfig};
use routing::Routes;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use topology::{EndpointId, EndpointMap, LinkClass, LinkSpeed, Network, PortId, PortTarget, SwitchId};

/// What the output needs to know of the whole network.
#[derive(Clone, Debug)]
pub struct NetworkInfo {
    /// Short description, e.g. `hyperx(16x16, t=16)`.
    pub name: String,
    /// Switches in the whole network.
    pub switches: usize,
    /// Endpoints in the whole network.
    pub endpoints: usize,
    /// Link classes (names and latencies).
    pub link_classes: Vec<LinkClass>,
}

/// One rank's share of a simulation, ready to run at any load.
pub struct RankModel {
    /// The configuration.
    pub config: Config,
    /// Name and sizes of the whole network.
    pub info: NetworkInfo,
    /// Where every endpoint is.
    pub endpoints: EndpointMap,
    /// Partition of every switch.
    assignment: Vec<u32>,
    /// Rank of every partition.
    partition_rank: Vec<u32>,
    rank: u32,
    /// This rank's switches, in id order.
    switches: Vec<SwitchId>,
    /// Their ports and links.
    ports: Arc<LocalPorts>,
    /// The links leaving them, in (switch, port) order.
    links: Vec<LinkSpec>,
    routes: Routes,
    pattern: Pattern,
    workload: Option<Arc<Workload>>,
    /// The congestion's targets (`congestion.targets`), sorted.
    targets: Vec<EndpointId>,
    /// The flow control's levels per link class, unless links run on credits.
    flow: Option<FlowLevels>,
    /// Bit errors on switch-to-switch links, if any.
    link_errors: Option<LinkErrors>,
    flaps: Option<LinkFlaps>,
    /// NSCC's parameters and ECN marking, with `transport.uec.congestion = "nscc"`.
    nscc: Option<Nscc>,
    /// The first fabric switch (0 without GPU nodes).
    first_fabric_switch: SwitchId,
    /// Seconds spent building the routing state.
    pub routing_build_seconds: f64,
    /// Record every delivered packet (tests).
    pub record_deliveries: bool,
    /// Partitionings to count the run for ([`partition::census`](super::partition::census)):
    /// none unless set.
    pub census: Vec<super::partition::CensusSpec>,
}

impl RankModel {
    /// Builds `rank`'s share of `net` (the whole network, dropped at the end), where switch
    /// `s` runs in partition `assignment[s]` and partition `p` on rank `partition_rank[p]`.
    /// The routing state is built for the rank's switches and their neighbours only.
    pub fn build(
        config: Config,
        net: Network,
        assignment: Vec<u32>,
        partition_rank: Vec<u32>,
        rank: u32,
    ) -> Result<Self, ConfigError> {
        let mine = |s: SwitchId| partition_rank[assignment[s as usize] as usize] == rank;
        let switches: Vec<SwitchId> = (0..net.num_switches() as SwitchId).filter(|&s| mine(s)).collect();
        // Packets are routed at this rank's switches only: routing state for them alone.
        let (routes, seconds) = build_routes(&config, &net, Some(&switches))?;
        let pattern = config.traffic.build_pattern(&net, config.simulation.seed)?;
        config.congestion.targets(&pattern, net.num_endpoints())?;
        let workload = super::build_workload(&config, &net)?;
        Ok(Self::assemble(
            config,
            &net,
            switches,
            (routes, pattern, workload),
            seconds,
            assignment,
            partition_rank,
            rank,
        ))
    }

    /// The whole of `net` on one rank (`sim`'s routes and pattern, any partitions).
    pub(crate) fn whole(
        config: Config,
        net: &Network,
        routes: Routes,
        pattern: Pattern,
        workload: Option<Arc<Workload>>,
        routing_build_seconds: f64,
        assignment: Vec<u32>,
    ) -> Self {
        let parts = assignment.iter().max().map_or(1, |&m| m as usize + 1);
        let switches = (0..net.num_switches() as SwitchId).collect();
        Self::assemble(
            config,
            net,
            switches,
            (routes, pattern, workload),
            routing_build_seconds,
            assignment,
            vec![0; parts],
            0,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        config: Config,
        net: &Network,
        switches: Vec<SwitchId>,
        (routes, pattern, workload): (Routes, Pattern, Option<Arc<Workload>>),
        routing_build_seconds: f64,
        assignment: Vec<u32>,
        partition_rank: Vec<u32>,
        rank: u32,
    ) -> Self {
        let mut ports = LocalPorts {
            start: Vec::with_capacity(switches.len() + 1),
            class_latency: net.link_classes.iter().map(|c| c.latency).collect(),
            class_speed: net.link_classes.iter().map(|c| c.speed).collect(),
            load_speed: net.load_speed(),
            ..Default::default()
        };
        let mut links = Vec::new();
        ports.start.push(0);
        for &s in &switches {
            let first_port = net.port_offsets[s as usize];
            for (i, p) in net.ports(s).iter().enumerate() {
                let link = match p.target {
                    PortTarget::Switch { switch, .. } => {
                        links.push(LinkSpec {
                            src: s,
                            dst: switch,
                            latency: ports.class_latency[p.class as usize],
                            // The global port number orders simultaneous arrivals the same
                            // way however the network is split.
                            tie: first_port + i as u32,
                        });
                        links.len() as u32 - 1
                    }
                    _ => u32::MAX,
                };
                ports.ports.push(*p);
                ports.links.push(link);
            }
            ports.start.push(ports.ports.len() as u32);
        }
        // Every link is checked when the network is built (latency >= 1); the routes cannot
        // fail.
        ports.routes = engine::link_routes(&links, &assignment).expect("links of a built network are valid");
        let targets = config
            .congestion
            .targets(&pattern, net.num_endpoints())
            .expect("checked when the model was built");
        let nscc = nscc_setup(&config, net, workload.as_deref());
        RankModel {
            info: NetworkInfo {
                name: net.name.clone(),
                switches: net.num_switches(),
                endpoints: net.num_endpoints(),
                link_classes: net.link_classes.clone(),
            },
            endpoints: net.endpoint_map(),
            flow: config.flow_levels(net).expect("checked when the network was built"),
            link_errors: config.link_errors(net).expect("checked when the network was built"),
            flaps: config.link_flaps(net).expect("checked when the network was built"),
            config,
            assignment,
            partition_rank,
            rank,
            switches,
            ports: Arc::new(ports),
            links,
            routes,
            pattern,
            workload,
            targets,
            nscc,
            first_fabric_switch: net.nodes.as_ref().map_or(0, |n| n.first_fabric()),
            routing_build_seconds,
            record_deliveries: false,
            census: Vec::new(),
        }
    }

    /// The routing, VC policy and escape subnetwork in use.
    pub fn routes(&self) -> &Routes {
        &self.routes
    }

    /// The application jobs, if the config has a `[workload]`.
    pub fn workload(&self) -> Option<&Workload> {
        self.workload.as_deref()
    }

    /// This rank's switches, in id order.
    pub fn switches(&self) -> &[SwitchId] {
        &self.switches
    }

    /// Runs this rank's share at offered `load`, one thread per local partition. Every rank
    /// calls this with the same load; `on_sample` matters on rank 0 only, which alone
    /// returns the result (the others return `None`). `interrupt`, on any rank, stops the
    /// run at the end of the current window, with a last sample there.
    pub fn run(
        &self,
        load: f64,
        comm: &mut dyn RankComm,
        on_sample: &mut dyn FnMut(&Sample),
        interrupt: Option<&AtomicBool>,
    ) -> Result<Option<RunResult>, EngineError> {
        let start = std::time::Instant::now();
        let cfg = &self.config;
        let shared = self.shared(load);
        let routers: Vec<(SwitchId, Router)> =
            self.switches.iter().enumerate().map(|(i, &s)| (s, Router::new(shared.clone(), i, s))).collect();
        // Completion-time mode: the run ends once every endpoint's quota is delivered.
        let quota_packets = shared.packets_per_endpoint as u64 * self.info.endpoints as u64;
        let mut monitor = Monitor {
            watchdog: cfg.simulation.watchdog,
            endpoints: self.info.endpoints as f64,
            quota_packets,
            // With a workload the run ends once every rank has finished its program, or every
            // rank that can (see `Monitor::checkpoint`).
            total_ranks: self.workload.as_ref().map_or(0, |w| w.total_ranks()),
            finishable_ranks: self.workload.as_ref().map_or(0, |w| w.finishable_ranks()),
            ..Monitor::default()
        };
        let layout = Layout { partition_of: &self.assignment, partition_rank: &self.partition_rank };
        let census: Option<Vec<engine::CensusLayout>> =
            (!self.census.is_empty()).then(|| self.census.iter().map(|c| c.layout.clone()).collect());
        let injected_failure = injected_failure();
        debug_assert_eq!(comm.rank() as u32, self.rank);
        let outcome = run_distributed(
            routers,
            &self.links,
            &layout,
            comm,
            &RunConfig {
                end_time: cfg.simulation.cycles,
                checkpoint_period: cfg.sample_period(),
                stop: interrupt,
                census: census.as_deref(),
            },
            |routers: &mut [Router], part: &mut PartitionState, t| {
                if let Some((switch, at)) = injected_failure {
                    if t >= at && routers.iter().any(|r| r.id() == switch) {
                        panic!("failure injected by XNET_TEST_FAIL_AT at switch {switch}, cycle {t}");
                    }
                }
                let mut counters = Router::take_period(routers, part, t);
                // A signal to this rank reaches rank 0 with the period's report.
                counters.stop_requests = u64::from(interrupt.is_some_and(|f| f.load(Ordering::Relaxed)));
                counters
            },
            |cp: Checkpoint<Counters>| monitor.checkpoint(cp, on_sample),
        )?;
        // Every rank summarises its routers (and lets them go); rank 0 merges the summaries
        // in rank order.
        let time = outcome.time;
        let part = self.partial(outcome);
        let Some(blobs) = comm.gather(encode(&part)) else { return Ok(None) };
        drop(part);
        let parts: Vec<Partial> =
            blobs.iter().map(|b| decode(b)).collect::<Result<_, _>>().map_err(|message| {
                EngineError::PartitionFailed { rank: usize::MAX, partition: u32::MAX, message }
            })?;
        let ctx = MergeContext {
            load,
            status: monitor.status,
            time,
            cycles: cfg.simulation.cycles,
            warmup: cfg.simulation.warmup,
            phits_per_endpoint: cfg.traffic.phits_per_endpoint,
            quota_packets,
            workload: self.workload.clone(),
            vcs: cfg.router.vcs as usize,
            endpoints: self.info.endpoints,
            wall_seconds: start.elapsed().as_secs_f64(),
            reordering: cfg.simulation.reordering,
            transport: cfg.transport().is_some(),
        };
        Ok(Some(merge(ctx, parts, monitor.samples)))
    }

    /// What every router of this rank reads at offered `load`.
    fn shared(&self, load: f64) -> Arc<Shared> {
        let cfg = &self.config;
        let params: RouterParams = cfg.router_params();
        // Loads are against the endpoints' links, or on GPU nodes their NICs'.
        let speed = self.ports.load_speed;
        let nic_load = if speed == LinkSpeed::ONE { load } else { load * speed.phits_per_cycle() };
        let speeds = LinkSpeeds::new(&self.ports.class_speed, &params);
        Arc::new(Shared {
            ports: self.ports.clone(),
            routes: self.routes.clone(),
            selection: cfg.routing.selection,
            ecmp_flows: cfg.routing.ecmp_flows,
            pattern: self.pattern.clone(),
            generation_probability: nic_load
                / cfg.traffic.packet_sizes.as_ref().map_or(params.packet_size as f64, |s| s.mean()),
            packet_sizes: cfg.traffic.packet_sizes.clone(),
            injection_vcs: match params.injection_vc {
                InjectionVc::Any if !self.routes.vc_policy.is_davc() => routing_vcs(cfg),
                _ => 1,
            },
            params,
            warmup: cfg.simulation.warmup,
            end: cfg.simulation.cycles,
            packets_per_endpoint: (cfg.traffic.phits_per_endpoint / cfg.router.packet_size as u64) as u32,
            endpoints: self.endpoints.clone(),
            seed: cfg.simulation.seed,
            record_deliveries: self.record_deliveries,
            reordering: cfg.simulation.reordering,
            workload: self.workload.clone(),
            targets: self.targets.clone(),
            cc: cfg
                .congestion
                .scheme(cfg.router.input_buffer, cfg.router.output_buffer)
                .expect("checked when parsed"),
            speeds,
            flow: self.flow.clone(),
            link_errors: self.link_errors.clone(),
            flaps: self.flaps.clone(),
            transport: cfg.transport(),
            nscc: self.nscc,
            first_fabric_switch: self.first_fabric_switch,
        })
    }

    /// What this rank contributes to the result: its partitions' statistics, then what
    /// its routers hold.
    fn partial(&self, mut outcome: engine::RunOutcome<Router>) -> Partial {
        let mut p = Partial {
            vc_phits: vec![0; self.config.router.vcs as usize],
            engine: vec![outcome.stats.clone()],
            ..Default::default()
        };
        let mut carried = std::collections::HashMap::new();
        for mut part in std::mem::take(&mut outcome.locals) {
            for (switch, port, phits) in std::mem::take(&mut part.stats.phits_carry) {
                *carried.entry((switch, port)).or_insert(0u64) += phits;
            }
            p.merge(Partial::of_partition(part.stats));
        }
        let time = outcome.time;
        for (_, r) in &outcome.lps {
            for n in r.nics() {
                p.endpoints.push((n.endpoint, n.generated_phits, n.accepted_phits));
                p.receive_finish.push((n.endpoint, n.last_delivery));
            }
            let ports = self.ports.of(r.local_index());
            let loads = r
                .port_phits()
                .zip(r.port_stall_cycles(time))
                .zip(r.port_pauses().zip(r.port_input_drops()))
                .zip(r.port_retries().zip(r.port_longest_pause(time)));
            for ((port, info), (((phits, stall_cycles), (pauses, drops)), (retries, longest_pause))) in
                ports.iter().enumerate().zip(loads)
            {
                if let PortTarget::Switch { switch, port: peer_port } = info.target {
                    p.links.push(LinkLoad {
                        switch: r.id(),
                        port: port as PortId,
                        class: info.class,
                        peer: switch,
                        phits: phits + carried.get(&(r.id(), port as PortId)).copied().unwrap_or(0),
                        stall_cycles,
                        pauses,
                        dropped: 0,
                        retries,
                        longest_pause,
                    });
                    if drops > 0 {
                        // Lost on the link that arrives here, from the peer's port.
                        p.input_drops.push((switch, peer_port, drops));
                    }
                }
            }
            p.stalled.extend(r.stalled_ranks(time));
            p.resident += r.resident_packets();
            p.queued += r.source_queued_packets();
            if outcome.stopped_early {
                p.blocked.extend(r.occupied_inputs());
            }
        }
        p
    }
}

/// What rank 0 makes of the checkpoints: the time series, and when the run stops (the
/// deadlock watchdog, completion-time traffic delivered, every application rank finished,
/// a stop asked for on any rank).
#[derive(Default)]
struct Monitor {
    /// Cycles without progress after which the run is a deadlock (0: never).
    watchdog: u64,
    endpoints: f64,
    /// Completion-time mode: packets all endpoints generate together (0: not that mode).
    quota_packets: u64,
    /// Application ranks of the workload (0: none).
    total_ranks: u64,
    /// Those of them that can finish: all but the ranks a schedule that can never complete
    /// leaves stuck on the ideal network.
    finishable_ranks: u64,
    samples: Vec<Sample>,
    in_flight: u64,
    generated: u64,
    finished_ranks: u64,
    last_progress: u64,
    last_time: u64,
    status: Status,
}

impl Monitor {
    /// Adds the checkpoint's sample (handed to `on_sample`) and decides whether to go on.
    fn checkpoint(&mut self, cp: Checkpoint<Counters>, on_sample: &mut dyn FnMut(&Sample)) -> Control {
        let mut c = Counters::default();
        for r in &cp.reports {
            c.merge(r);
        }
        let stop_requested = c.stop_requests > 0;
        let sample_finished = c.finished_ranks;
        let (ended_ops, busy_ranks, sample_waiting) = (c.ended_ops, c.busy_ranks, c.waiting_connections);
        let before = self.in_flight;
        // A transport's copies of packets are delivered (or dropped) like the originals, and
        // so are control packets (ACKs, NAKs, notifications), which drops count alike.
        self.in_flight = self.in_flight + c.generated_packets + c.retransmitted_packets + c.control_packets
            - c.delivered_packets
            - c.control_delivered
            - c.dropped_packets;
        self.generated += c.generated_packets;
        let span = (cp.time - self.last_time).max(1);
        self.last_time = cp.time;
        let sample = Sample {
            time: cp.time,
            accepted_load: c.delivered_phits as f64 / span as f64 / self.endpoints,
            counters: c,
            in_flight: self.in_flight,
        };
        on_sample(&sample);
        let moved = sample.counters.link_transmissions > 0;
        self.samples.push(sample);
        // A stall is counted from the first sample end that saw packets in flight and none
        // move: packets that entered an idle network late in a sample may not have
        // crossed a link by its end (a router's delay), which is no stall.
        // Connections waiting for their timeout will send again: no deadlock yet (they fail
        // after their retries, and then stop waiting).
        if moved || self.in_flight == 0 || before == 0 || sample_waiting > 0 {
            self.last_progress = cp.time;
        }
        if self.watchdog > 0 && cp.time - self.last_progress >= self.watchdog {
            self.status = Status::Deadlock;
            return Control::Stop;
        }
        if self.quota_packets > 0 && self.generated == self.quota_packets && self.in_flight == 0 {
            return Control::Stop;
        }
        self.finished_ranks += sample_finished;
        if self.total_ranks > 0 && self.finished_ranks == self.total_ranks {
            return Control::Stop;
        }
        // A schedule that can never complete: once every other rank has finished, the run
        // goes on while its ranks still end ops, compute or send (and so may still match
        // messages); after a period of none it has nothing left to do.
        if self.finishable_ranks < self.total_ranks
            && self.finished_ranks >= self.finishable_ranks
            && ended_ops == 0
            && busy_ranks == 0
        {
            return Control::Stop;
        }
        // Every rank's partitions, rank 0's included, report their stop requests.
        if stop_requested {
            self.status = Status::Interrupted;
            return Control::Stop;
        }
        Control::Continue
    }
}

/// The test hook `XNET_TEST_FAIL_AT=SWITCH:CYCLE`: the partition holding switch `SWITCH`
/// fails (panics) at its first sample from cycle `CYCLE` on, so that tests can watch a
/// distributed run lose one rank mid-run. Unset (or malformed) in normal use.
fn injected_failure() -> Option<(SwitchId, u64)> {
    let text = std::env::var("XNET_TEST_FAIL_AT").ok()?;
    let (switch, cycle) = text.split_once(':')?;
    Some((switch.trim().parse().ok()?, cycle.trim().parse().ok()?))
}

/// NSCC's parameters for this network, with `transport.uec.congestion = "nscc"`: the base
/// round trip given or computed ([`fabric_rtt`]), the constants scaled by it, and the ECN
/// thresholds given or derived from its bandwidth-delay product.
fn nscc_setup(config: &Config, net: &Network, workload: Option<&Workload>) -> Option<Nscc> {
    let Some(Transport::Uec(uec)) = config.transport() else { return None };
    if uec.congestion != UecCongestion::Nscc {
        return None;
    }
    let router = &config.router;
    let saf = router.switching == crate::router::Switching::StoreAndForward;
    let rtt = match uec.rtt {
        0 => fabric_rtt(net, router.router_delay, saf, router.packet_size, uec.ack_size).max(1),
        given => given,
    };
    let (bytes_per_phit, ps_per_cycle) = workload.map_or((16, 640), |w| (w.bytes_per_phit, w.ps_per_cycle));
    let target = (uec.target > 0).then_some(uec.target as f64);
    let params = NsccParams::new(rtt, router.packet_size, bytes_per_phit, ps_per_cycle, target);
    let (out, mtu) = (router.output_buffer, u32::from(router.packet_size));
    let kmax = match uec.ecn_kmax {
        0 => ((0.8 * rtt as f64) as u32).max(2 * mtu).min(out),
        given => given,
    };
    let kmin = match uec.ecn_kmin {
        0 => ((0.2 * rtt as f64) as u32).max(mtu).min(kmax / 2),
        given => given,
    };
    Some(Nscc { params, kmin, kmax })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(m: &mut Monitor, time: u64, generated: u64, delivered: u64, moved: u64) -> Control {
        let c = Counters {
            generated_packets: generated,
            delivered_packets: delivered,
            link_transmissions: moved,
            ..Counters::default()
        };
        m.checkpoint(Checkpoint { time, reports: vec![c], last: false }, &mut |_| {})
    }

    #[test]
    fn the_watchdog_counts_a_stall_from_when_packets_stood_still_in_flight() {
        let mut m = Monitor { watchdog: 10_000, endpoints: 1.0, ..Monitor::default() };
        // An idle network, then packets injected just before a sample's end, not yet past
        // their first router: no stall.
        assert_eq!(at(&mut m, 10_000, 0, 0, 0), Control::Continue);
        assert_eq!(at(&mut m, 20_000, 16, 0, 0), Control::Continue);
        assert_eq!(m.status, Status::default());
        assert_eq!(at(&mut m, 30_000, 0, 16, 32), Control::Continue);
        // Packets in flight at a sample's end that then stand still for a whole watchdog
        // period: a deadlock.
        assert_eq!(at(&mut m, 40_000, 8, 0, 0), Control::Continue);
        assert_eq!(at(&mut m, 50_000, 0, 0, 0), Control::Stop);
        assert_eq!(m.status, Status::Deadlock);
    }
}

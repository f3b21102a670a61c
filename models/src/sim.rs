//! A simulation: the built network, routing and traffic, run on the engine.

use crate::config::{Config, ConfigError};
pub use crate::router::BlockedChannel;
use crate::router::{PartitionState, Router, RouterParams, Shared};
use crate::routing::allpath::AllPath;
use crate::routing::angara::{self, Angara};
use crate::routing::dor::{HyperXDor, TorusDor};
use crate::routing::dragonfly::{DragonflyMode, DragonflyRouting};
use crate::routing::escape::Escape;
use crate::routing::lash_tor::LashTor;
use crate::routing::minimal::Minimal;
use crate::routing::mud::Mud;
use crate::routing::spda::Spda;
use crate::routing::tor::Tor;
use crate::routing::updown::UpDown;
use crate::routing::valiant::Valiant;
use crate::routing::{dfsssp, lash, nue};
use crate::routing::{Routes, Routing, VcPolicy};
use crate::stats::{jain, Counters, Histogram};
use crate::topology::{Network, PortId, PortTarget, Shape, SwitchId};
use crate::traffic::Pattern;
use engine::comm::{decode, encode};
use engine::{
    run_distributed, Checkpoint, Control, EngineError, Layout, LinkSpec, RankComm, RunConfig, RunStats,
    SingleRank,
};
use partitioner::{Method, PartGraph, Plan};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Ran to the configured number of cycles.
    Completed,
    /// The watchdog saw packets in flight and no movement.
    Deadlock,
    /// Stopped from outside (signal).
    Interrupted,
}

impl Status {
    /// Lower-case name, as stored in the output.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Completed => "completed",
            Status::Deadlock => "deadlock",
            Status::Interrupted => "interrupted",
        }
    }
}

/// One row of the time series: what happened during `(time - period, time]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// End of the period (cycles).
    pub time: u64,
    /// Counters of the period.
    pub counters: Counters,
    /// Packets generated but not yet delivered at `time`.
    pub in_flight: u64,
    /// Delivered phits per cycle per endpoint in the period.
    pub accepted_load: f64,
    /// Mean latency of the packets delivered in the period (NaN if none).
    pub mean_latency: f64,
}

/// Headline figures of a run over its measurement period.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Offered load: phits generated per cycle per endpoint.
    pub offered_load: f64,
    /// Injected load: phits that entered the network per cycle per endpoint.
    pub injected_load: f64,
    /// Accepted load: phits delivered per cycle per endpoint.
    pub accepted_load: f64,
    /// Packets generated in the measurement period.
    pub measured_packets: u64,
    /// Of those, delivered before the end.
    pub measured_delivered: u64,
    /// Packet latency (creation to delivery): mean, p50, p99, max.
    pub latency_mean: f64,
    /// Median packet latency.
    pub latency_p50: f64,
    /// 99th percentile packet latency.
    pub latency_p99: f64,
    /// Largest packet latency.
    pub latency_max: f64,
    /// Network latency (injection to delivery): mean.
    pub network_latency_mean: f64,
    /// Median network latency.
    pub network_latency_p50: f64,
    /// 99th percentile network latency.
    pub network_latency_p99: f64,
    /// Largest network latency.
    pub network_latency_max: f64,
    /// Mean switch-to-switch hops.
    pub hops_mean: f64,
    /// Jain index of the load generated per endpoint.
    pub jain_generated: f64,
    /// Jain index of the load accepted per endpoint.
    pub jain_accepted: f64,
    /// Packets generated over the whole run.
    pub generated_total: u64,
    /// Packets delivered over the whole run.
    pub delivered_total: u64,
    /// Packets in flight at the end (generated, not delivered).
    pub in_flight_end: u64,
    /// Of those, still waiting in source queues.
    pub source_queued_end: u64,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// How it ended.
    pub status: Status,
    /// Cycle reached.
    pub time: u64,
    /// Offered load asked for.
    pub load: f64,
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
    /// Per directed network link `(switch, port, phits sent during measurement)`.
    pub link_phits: Vec<(SwitchId, PortId, u64)>,
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
    pub deliveries: Vec<crate::router::Delivery>,
    /// Packet-hops simulated: link traversals, injection and ejection links included.
    pub packet_hops: u64,
    /// Engine counters and wall-clock timings per rank (the only non-deterministic part).
    pub engine: Vec<RunStats>,
    /// Wall-clock seconds of the run.
    pub wall_seconds: f64,
}

/// A network with its routing and traffic pattern, ready to run at any load.
pub struct Simulation {
    /// The configuration.
    pub config: Config,
    /// The network.
    pub net: Arc<Network>,
    routing: Arc<dyn Routing>,
    escape: Option<Arc<Escape>>,
    pattern: Pattern,
    links: Vec<LinkSpec>,
    link_of_port: Vec<u32>,
    /// Seconds spent building the routing state.
    pub routing_build_seconds: f64,
    /// Record every delivered packet (tests).
    pub record_deliveries: bool,
}

/// Builds the routing named in the config for `net`.
pub fn build_routing(
    config: &Config,
    net: &Network,
    endpoint_switch: &Arc<Vec<SwitchId>>,
) -> Result<Arc<dyn Routing>, ConfigError> {
    let algo = config.routing.algorithm.as_str();
    let needs =
        |what: &str| ConfigError::new("routing.algorithm", format!("`{algo}` needs a {what} topology"));
    let routing: Arc<dyn Routing> = match algo {
        "minimal" => Arc::new(Minimal::new(net, false)?),
        "shortest_path" => Arc::new(Minimal::new(net, true)?),
        "dor" => match &net.shape {
            Shape::HyperX(h) => Arc::new(HyperXDor::new(h.clone())),
            Shape::Torus(t) => Arc::new(TorusDor::new(t.clone(), endpoint_switch.clone())),
            _ => return Err(needs("hyperx, torus or mesh")),
        },
        "dragonfly_min" | "dragonfly_valiant" | "dragonfly_ugal" => {
            let Shape::Dragonfly(d) = &net.shape else {
                return Err(needs("dragonfly"));
            };
            let mode = match algo {
                "dragonfly_min" => DragonflyMode::Min,
                "dragonfly_valiant" => DragonflyMode::Valiant,
                _ => DragonflyMode::UgalLocal { threshold: config.routing.ugal_threshold },
            };
            Arc::new(DragonflyRouting::new(d.clone(), mode))
        }
        "allpath" => {
            let k = config.routing.allpath_k;
            if k > 64 {
                return Err(ConfigError::new("routing.allpath_k", format!("must be at most 64, got {k}")));
            }
            Arc::new(AllPath::new(net, k)?)
        }
        "valiant" => Arc::new(Valiant::new(net)?),
        "up_down" => Arc::new(UpDown::new(net, checked_root(config, net)?)?),
        "mud" => Arc::new(Mud::new(net, routing_vcs(config), checked_root(config, net)?)?),
        "angara_bfs" | "angara_sssp" => {
            let Shape::Torus(t) = &net.shape else {
                return Err(needs("torus or mesh"));
            };
            let method = if algo == "angara_bfs" { angara::Method::Bfs } else { angara::Method::Sssp };
            Arc::new(Angara::new(net, t, method, endpoint_switch)?)
        }
        "lash_tor" => {
            Arc::new(LashTor::new(net, endpoint_switch, routing_vcs(config), checked_root(config, net)?)?)
        }
        "tor" => {
            let r = Tor::new(net, checked_root(config, net)?, endpoint_switch)?;
            check_layers(config, algo, r.layers())?;
            Arc::new(r)
        }
        "spda" => {
            let mut rng = crate::rng::stream(config.simulation.seed, crate::rng::Purpose::Routing, u64::MAX);
            Arc::new(Spda::new(net, routing_vcs(config), &mut rng)?)
        }
        "nue" => {
            // Nue uses every VC as a layer and always fits: no layer check needed.
            let (r, _stats) =
                nue::build(net, endpoint_switch, routing_vcs(config) as usize, config.routing.nue_order)?;
            Arc::new(r)
        }
        "dfsssp" | "lash" => {
            let mut r = if algo == "dfsssp" {
                dfsssp::build(net, endpoint_switch)?
            } else {
                lash::build(net, endpoint_switch)?
            };
            check_layers(config, algo, r.layers_needed())?;
            if effective_vc_policy(config) == VcPolicy::Routing {
                r.spread_over(routing_vcs(config));
            }
            Arc::new(r)
        }
        other => {
            return Err(ConfigError::new(
                "routing.algorithm",
                format!(
                    "unknown `{other}`; known: {}",
                    crate::config::ROUTINGS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                ),
            ))
        }
    };
    if net.failed_links > 0 && routing.needs_intact_topology() {
        return Err(ConfigError::new(
            "routing.algorithm",
            format!(
                "`{algo}` follows the intact topology and cannot route around the {} failed links; \
                 use a table-based routing: minimal, shortest_path, allpath, valiant, up_down, spda, dfsssp, lash, mud, tor, lash_tor, angara_bfs, angara_sssp or nue",
                net.failed_links
            ),
        ));
    }
    Ok(routing)
}

/// `routing.root` if given and an existing switch.
fn checked_root(config: &Config, net: &Network) -> Result<Option<SwitchId>, ConfigError> {
    let root = config.routing.root;
    if let Some(r) = root.filter(|&r| r as usize >= net.num_switches()) {
        return Err(ConfigError::new(
            "routing.root",
            format!("switch {r} does not exist ({} switches)", net.num_switches()),
        ));
    }
    Ok(root)
}

/// VCs the routing may use: `router.vcs` less those reserved for an escape subnetwork.
pub fn routing_vcs(config: &Config) -> u8 {
    config.router.vcs - config.routing.escape_vcs
}

/// A layered routing's layers must fit in `router.vcs` when it assigns the VCs itself.
fn check_layers(config: &Config, algo: &str, layers: u8) -> Result<(), ConfigError> {
    let vcs = routing_vcs(config);
    if effective_vc_policy(config) == VcPolicy::Routing && layers > vcs {
        return Err(ConfigError::new(
            "router.vcs",
            format!(
                "{algo} needs {layers} layers, {vcs} available (one VC per layer){}",
                escape_note(config)
            ),
        ));
    }
    Ok(())
}

/// Explains a VC count reduced by the escape subnetwork.
fn escape_note(config: &Config) -> String {
    match config.routing.escape_vcs {
        0 => String::new(),
        e => format!(" after the {e} escape VCs (routing.escape_vcs)"),
    }
}

/// The VC policy in force: `minimal`, `shortest_path`, `allpath` and `valiant` default to
/// the ladder, since on an arbitrary graph their own single VC is not deadlock-free.
pub fn effective_vc_policy(config: &Config) -> VcPolicy {
    match (config.routing.vc_policy, config.routing.algorithm.as_str()) {
        (VcPolicy::Routing, "minimal" | "shortest_path" | "allpath" | "valiant") => VcPolicy::Ladder,
        (p, _) => p,
    }
}

fn davc_name(p: VcPolicy) -> &'static str {
    match p {
        VcPolicy::DavcNode => "davc_n",
        VcPolicy::DavcPort => "davc_p",
        _ => "davc_np",
    }
}

impl Simulation {
    /// Builds network, routing and traffic pattern; checks the VCs suffice.
    pub fn build(config: Config) -> Result<Self, ConfigError> {
        let net = config.build_network()?;
        let endpoint_switch: Arc<Vec<SwitchId>> =
            Arc::new(net.endpoint_location.iter().map(|&(s, _)| s).collect());
        let t0 = std::time::Instant::now();
        let routing = build_routing(&config, &net, &endpoint_switch)?;
        let escape = match config.routing.escape_vcs {
            0 => None,
            e => {
                let root = checked_root(&config, &net)?;
                Some(Arc::new(Escape::new(&net, root, config.router.vcs - e, e)?))
            }
        };
        let routing_build_seconds = t0.elapsed().as_secs_f64();
        let vcs = routing_vcs(&config);
        match effective_vc_policy(&config) {
            VcPolicy::Routing if routing.vcs_required() > vcs => {
                return Err(ConfigError::new(
                    "router.vcs",
                    format!(
                        "routing `{}` needs {} VCs, {vcs} available{}",
                        routing.name(),
                        routing.vcs_required(),
                        escape_note(&config)
                    ),
                ))
            }
            // With an escape subnetwork, packets whose ladder or DAVC VCs run out are forced
            // into the escape: no bound on the route length is needed.
            _ if escape.is_some() => {}
            VcPolicy::Ladder if routing.max_hops() > vcs as u32 => {
                return Err(ConfigError::new(
                    "router.vcs",
                    format!(
                    "the ladder VC policy needs one VC per hop of the longest route: {} VCs, {vcs} available",
                    routing.max_hops()
                ),
                ))
            }
            p if p.is_davc() && routing.max_hops() > vcs as u32 => {
                return Err(ConfigError::new(
                    "router.vcs",
                    format!(
                        "the DAVC VC policy `{}` needs at most one VC per hop of the longest route \
                         (a safe bound, Lemma 6.1 of the DAVC paper): {} VCs for routing `{}`, {vcs} available",
                        davc_name(p),
                        routing.max_hops(),
                        routing.name()
                    ),
                ))
            }
            _ => {}
        }
        let pattern = Pattern::build(&config.traffic.pattern, &net, config.simulation.seed)?;
        let mut links = Vec::new();
        let mut link_of_port = vec![u32::MAX; net.ports.len()];
        for s in 0..net.num_switches() as SwitchId {
            let base = net.port_offsets[s as usize] as usize;
            for (i, p) in net.ports(s).iter().enumerate() {
                if let PortTarget::Switch { switch, .. } = p.target {
                    link_of_port[base + i] = links.len() as u32;
                    links.push(LinkSpec {
                        src: s,
                        dst: switch,
                        latency: net.link_classes[p.class as usize].latency,
                    });
                }
            }
        }
        Ok(Self {
            config,
            net: Arc::new(net),
            routing,
            escape,
            pattern,
            links,
            link_of_port,
            routing_build_seconds,
            record_deliveries: false,
        })
    }

    /// The routing in use.
    pub fn routing(&self) -> &dyn Routing {
        &*self.routing
    }

    /// The escape subnetwork, if `routing.escape_vcs > 0`.
    pub fn escape(&self) -> Option<&Escape> {
        self.escape.as_deref()
    }

    /// Routing, VC policy in force and escape subnetwork, as the routers use them.
    pub fn routes(&self) -> Routes {
        Routes {
            routing: self.routing.clone(),
            vc_policy: effective_vc_policy(&self.config),
            escape: self.escape.clone(),
        }
    }

    /// The graph the partitioner sees: routers weighted by ports + endpoints, links with
    /// latencies, Dragonfly groups as blocks.
    pub fn partition_graph(&self) -> PartGraph {
        let net = &self.net;
        let vertex_weight = (0..net.num_switches() as SwitchId)
            .map(|s| net.radix(s) as u64 + net.terminals[s as usize] as u64)
            .collect();
        let edges = self.links.iter().map(|l| (l.src, l.dst, l.latency)).collect();
        let blocks = match &net.shape {
            Shape::Dragonfly(d) => Some((0..net.num_switches() as u32).map(|s| d.group(s)).collect()),
            // Pods of a k-ary n-tree: below the top level, links between levels l and l+1
            // change digit l of the switch index, so the highest digit (n-2) names the pod;
            // top-level switches join the pod of their own highest digit.
            Shape::FatTree(f) if f.n >= 2 => {
                Some((0..net.num_switches() as u32).map(|s| f.digit(f.index(s), f.n - 2)).collect())
            }
            _ => None,
        };
        PartGraph { vertex_weight, edges, blocks }
    }

    /// A partition into `parts` with `method` (`Auto`: Dragonfly groups when there are
    /// enough, else the better of linear slabs and the multilevel partitioner). Message
    /// estimates assume every link carries the configured load (a packet and its credit
    /// per `packet_size` cycles at full load).
    pub fn plan_with(&self, parts: u32, method: Method) -> Result<Plan, partitioner::PartitionError> {
        let graph = self.partition_graph();
        let per_link = 2.0 * self.config.traffic.load / self.config.router.packet_size as f64;
        let options = partitioner::PartitionOptions {
            edge_traffic: Some(vec![per_link.max(1e-9); graph.edges.len()]),
            ..Default::default()
        };
        partitioner::partition_with(&graph, parts, method, &options)
    }

    /// [`plan_with`](Self::plan_with) with the automatic method.
    pub fn plan(&self, parts: u32) -> Result<Plan, partitioner::PartitionError> {
        self.plan_with(parts, Method::Auto)
    }

    /// Runs at offered `load` in this process, one thread per partition of `assignment`.
    /// `on_sample` sees every time-series row as it is produced; `interrupt` stops the run
    /// at the next sample when set.
    pub fn run(
        &self,
        load: f64,
        assignment: &[u32],
        on_sample: &mut dyn FnMut(&Sample),
        interrupt: Option<&AtomicBool>,
    ) -> Result<RunResult, EngineError> {
        let parts = assignment.iter().max().map_or(1, |&m| m as usize + 1);
        let ranks = vec![0u32; parts];
        let result = self.run_on(load, assignment, &ranks, &mut SingleRank, on_sample, interrupt)?;
        Ok(result.expect("rank 0 gets the result"))
    }

    /// Runs this rank's share of a distributed run: partition `p` of `assignment` runs on
    /// rank `partition_rank[p]`, one thread per partition. Every rank calls this with the
    /// same arguments; `on_sample` and `interrupt` matter on rank 0 only, which alone
    /// returns the result (the others return `None`).
    pub fn run_on(
        &self,
        load: f64,
        assignment: &[u32],
        partition_rank: &[u32],
        comm: &mut dyn RankComm,
        on_sample: &mut dyn FnMut(&Sample),
        interrupt: Option<&AtomicBool>,
    ) -> Result<Option<RunResult>, EngineError> {
        let start = std::time::Instant::now();
        let cfg = &self.config;
        let params: RouterParams = cfg.router_params();
        let shared = Arc::new(Shared {
            net: self.net.clone(),
            routes: self.routes(),
            selection: cfg.routing.selection,
            pattern: self.pattern.clone(),
            generation_probability: load / params.packet_size as f64,
            params,
            warmup: cfg.simulation.warmup,
            end: cfg.simulation.cycles,
            link_of_port: self.link_of_port.clone(),
            endpoints: self.net.endpoint_map(),
            seed: cfg.simulation.seed,
            record_deliveries: self.record_deliveries,
        });
        let rank = comm.rank() as u32;
        // Only this rank's routers are built.
        let routers: Vec<(SwitchId, Router)> = (0..self.net.num_switches() as SwitchId)
            .filter(|&s| partition_rank[assignment[s as usize] as usize] == rank)
            .map(|s| (s, Router::new(shared.clone(), s)))
            .collect();
        let period = cfg.sample_period();
        let watchdog = cfg.simulation.watchdog;
        let endpoints = self.net.num_endpoints() as f64;
        let mut samples = Vec::new();
        let mut in_flight = 0u64;
        let mut last_progress = 0u64;
        let mut status = Status::Completed;
        let mut last_time = 0u64;
        let layout = Layout { partition_of: assignment, partition_rank };
        let outcome = run_distributed(
            routers,
            &self.links,
            &layout,
            comm,
            &RunConfig { end_time: cfg.simulation.cycles, checkpoint_period: period },
            |routers: &mut [Router], part: &mut PartitionState, t| Router::take_period(routers, part, t),
            |cp: Checkpoint<Counters>| {
                let mut c = Counters::default();
                for r in &cp.reports {
                    c.merge(r);
                }
                in_flight = in_flight + c.generated_packets - c.delivered_packets;
                let span = (cp.time - last_time).max(1);
                last_time = cp.time;
                let sample = Sample {
                    time: cp.time,
                    accepted_load: c.delivered_phits as f64 / span as f64 / endpoints,
                    mean_latency: if c.delivered_packets == 0 {
                        f64::NAN
                    } else {
                        c.latency_sum as f64 / c.delivered_packets as f64
                    },
                    counters: c,
                    in_flight,
                };
                on_sample(&sample);
                let moved = sample.counters.link_transmissions > 0;
                samples.push(sample);
                if moved || in_flight == 0 {
                    last_progress = cp.time;
                }
                if watchdog > 0 && cp.time - last_progress >= watchdog {
                    status = Status::Deadlock;
                    return Control::Stop;
                }
                if interrupt.is_some_and(|f| f.load(Ordering::Relaxed)) {
                    status = Status::Interrupted;
                    return Control::Stop;
                }
                Control::Continue
            },
        )?;
        // Every rank summarises its routers; rank 0 merges the summaries in rank order.
        let time = outcome.time;
        let part = self.partial(&outcome);
        let Some(blobs) = comm.gather(encode(&part)) else { return Ok(None) };
        let parts: Vec<Partial> =
            blobs.iter().map(|b| decode(b)).collect::<Result<_, _>>().map_err(|message| {
                EngineError::PartitionFailed { rank: usize::MAX, partition: u32::MAX, message }
            })?;
        Ok(Some(self.merge(load, status, time, parts, samples, start)))
    }

    /// What one rank contributes to the result.
    fn partial(&self, outcome: &engine::RunOutcome<Router>) -> Partial {
        let net = &self.net;
        let mut p = Partial {
            vc_phits: vec![0; self.config.router.vcs as usize],
            engine: outcome.stats.clone(),
            ..Default::default()
        };
        for part in &outcome.locals {
            let s = &part.stats;
            p.measured.merge(&s.measured);
            p.latency.merge(&s.latency);
            p.network_latency.merge(&s.network_latency);
            p.hops.merge(&s.hops);
            p.deliveries.extend_from_slice(&s.deliveries);
            for (v, x) in s.vc_phits.iter().enumerate() {
                p.vc_phits[v] += x;
            }
            p.departures += s.departures;
            p.arrivals += s.arrivals;
            p.generated += s.generated_total;
            p.delivered += s.delivered_total;
        }
        for (_, r) in &outcome.lps {
            for n in r.nics() {
                p.endpoints.push((n.endpoint, n.generated_phits, n.accepted_phits));
            }
            for ((port, info), phits) in net.ports(r.id()).iter().enumerate().zip(r.port_phits()) {
                if matches!(info.target, PortTarget::Switch { .. }) {
                    p.link_phits.push((r.id(), port as PortId, phits));
                }
            }
            p.resident += r.resident_packets();
            p.queued += r.source_queued_packets();
            if outcome.stopped_early {
                p.blocked.extend(r.occupied_inputs());
            }
        }
        p
    }

    fn merge(
        &self,
        load: f64,
        status: Status,
        time: u64,
        parts: Vec<Partial>,
        samples: Vec<Sample>,
        start: std::time::Instant,
    ) -> RunResult {
        let cfg = &self.config;
        let net = &self.net;
        let mut all = Partial { vc_phits: vec![0; cfg.router.vcs as usize], ..Default::default() };
        let mut endpoint_generated = vec![0; net.num_endpoints()];
        let mut endpoint_accepted = vec![0; net.num_endpoints()];
        let mut engine = Vec::with_capacity(parts.len());
        for p in parts {
            all.measured.merge(&p.measured);
            all.latency.merge(&p.latency);
            all.network_latency.merge(&p.network_latency);
            all.hops.merge(&p.hops);
            for (e, g, a) in p.endpoints {
                endpoint_generated[e as usize] = g;
                endpoint_accepted[e as usize] = a;
            }
            all.deliveries.extend(p.deliveries);
            all.link_phits.extend(p.link_phits);
            for (v, x) in p.vc_phits.iter().enumerate() {
                all.vc_phits[v] += x;
            }
            all.resident += p.resident;
            all.queued += p.queued;
            all.departures += p.departures;
            all.arrivals += p.arrivals;
            all.generated += p.generated;
            all.delivered += p.delivered;
            all.blocked.extend(p.blocked);
            engine.push(p.engine);
        }
        all.deliveries.sort_unstable_by_key(|d| d.id);
        all.link_phits.sort_unstable_by_key(|&(s, p, _)| (s, p));
        all.blocked.sort_unstable_by_key(|b| (b.switch, b.port, b.vc));
        if status != Status::Deadlock {
            all.blocked.clear();
        }
        let (measured, latency, network_latency, hops) =
            (&all.measured, &all.latency, &all.network_latency, &all.hops);
        let cycles = (cfg.simulation.cycles.min(time).saturating_sub(cfg.simulation.warmup)).max(1) as f64;
        let per = |phits: u64| phits as f64 / cycles / net.num_endpoints() as f64;
        let summary = Summary {
            offered_load: per(measured.generated_phits),
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
            in_flight_end: all.generated - all.delivered,
            source_queued_end: all.queued,
        };
        let packet_hops =
            samples.iter().map(|s| s.counters.link_transmissions + s.counters.injected_packets).sum();
        RunResult {
            status,
            time,
            load,
            summary,
            latency: all.latency,
            network_latency: all.network_latency,
            hops: all.hops,
            endpoint_generated,
            endpoint_accepted,
            link_phits: all.link_phits,
            vc_phits: all.vc_phits,
            samples,
            blocked: all.blocked,
            resident_end: all.resident,
            on_wires_end: all.departures - all.arrivals,
            deliveries: all.deliveries,
            engine,
            packet_hops,
            wall_seconds: start.elapsed().as_secs_f64(),
        }
    }
}

/// One rank's share of a run's results, sent to rank 0.
#[derive(Default, Serialize, Deserialize)]
struct Partial {
    measured: Counters,
    latency: Histogram,
    network_latency: Histogram,
    hops: Histogram,
    endpoints: Vec<(u32, u64, u64)>,
    link_phits: Vec<(SwitchId, PortId, u64)>,
    vc_phits: Vec<u64>,
    blocked: Vec<BlockedChannel>,
    resident: u64,
    queued: u64,
    departures: u64,
    arrivals: u64,
    generated: u64,
    delivered: u64,
    deliveries: Vec<crate::router::Delivery>,
    engine: RunStats,
}

//! A simulation: the built network, routing and traffic, run on the engine.
//!
//! * [`Simulation`]: the whole network in one process, with routing state for every
//!   switch: what `xnet routes`, the tests and single-process runs use.
//! * [`RankModel`]: one rank's share of a run, which keeps only the rank's switches and a
//!   compact description of the rest; distributed runs (and the CLI's runs) use it.
//! * [`routes`]: the routing built from the registry, with its VC checks.
//! * [`partition`]: the graph the partitioner sees and a run's partition plan.
//! * `result`: what a run produces and how the ranks' shares are merged.
//! * `saturation`: whether a load point is saturated (its backlog's growth and how sure it is).

mod jobs;
pub mod partition;
mod rank;
mod result;
pub mod routes;
mod saturation;
pub mod schema;

pub use crate::router::BlockedChannel;
pub use jobs::{CollectiveTime, JobResult, StepTime, WorkloadResult};
pub use partition::partition_graph;
pub use rank::{NetworkInfo, RankModel};
pub use result::{Completion, LinkLoad, RunResult, Status};
pub use routes::{build_routes, build_routing, effective_vc_policy, routing_vcs};
pub use schema::{Sample, Summary, SATURATED_BACKLOG, SATURATED_Z};

use crate::config::{Config, ConfigError};
use crate::traffic::Pattern;
use crate::workload::{PacketFormat, ScaleUpGrain, Workload};
use engine::{EngineError, SingleRank};
use partitioner::{Method, PartGraph, Plan};
use routing::escape::Escape;
use routing::{Routes, Routing};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use topology::Network;

/// The jobs of `config`'s `[workload]` on a network of `endpoints` endpoints, if any.
pub(crate) fn build_workload(config: &Config, net: &Network) -> Result<Option<Arc<Workload>>, ConfigError> {
    let Some(section) = &config.workload else { return Ok(None) };
    let endpoints = net.num_endpoints();
    if endpoints > routing::packet::MAX_APP_ENDPOINTS {
        return Err(ConfigError::new(
            "workload",
            format!(
                "applications run on networks of at most 2^24 endpoints (a packet names its source in 24 bits); this one has {endpoints}"
            ),
        ));
    }
    Workload::build(
        section,
        endpoints,
        PacketFormat { mtu_phits: config.router.packet_size, header_phits: config.router.header_phits },
        net.nodes.as_ref().and_then(|n| {
            let mtu_phits = n.scale_up_packet?;
            Some(ScaleUpGrain {
                gpus: n.gpus,
                format: PacketFormat { mtu_phits, header_phits: config.router.header_phits },
            })
        }),
        config.simulation.seed,
    )
    .map(Some)
}

/// A network with its routing and traffic pattern, ready to run at any load, all in this
/// process.
pub struct Simulation {
    /// The configuration.
    pub config: Config,
    /// The network.
    pub net: Arc<Network>,
    routes: Routes,
    pattern: Pattern,
    workload: Option<Arc<Workload>>,
    /// Seconds spent building the routing state.
    pub routing_build_seconds: f64,
    /// Record every delivered packet (tests).
    pub record_deliveries: bool,
}

impl Simulation {
    /// Builds network, routing and traffic pattern; checks the VCs suffice.
    pub fn build(config: Config) -> Result<Self, ConfigError> {
        let net = config.build_network()?;
        let (routes, routing_build_seconds) = build_routes(&config, &net, None)?;
        let pattern = config.traffic.build_pattern(&net, config.simulation.seed)?;
        config.congestion.targets(&pattern, net.num_endpoints())?;
        let workload = build_workload(&config, &net)?;
        Ok(Self {
            config,
            net: Arc::new(net),
            routes,
            pattern,
            workload,
            routing_build_seconds,
            record_deliveries: false,
        })
    }

    /// The application jobs, if the config has a `[workload]`.
    pub fn workload(&self) -> Option<&Workload> {
        self.workload.as_deref()
    }

    /// The routing in use.
    pub fn routing(&self) -> &dyn Routing {
        &*self.routes.routing
    }

    /// The escape subnetwork, if `routing.escape_vcs > 0`.
    pub fn escape(&self) -> Option<&Escape> {
        self.routes.escape.as_deref()
    }

    /// Routing, VC policy in force and escape subnetwork, as the routers use them.
    pub fn routes(&self) -> Routes {
        self.routes.clone()
    }

    /// The graph the partitioner sees (see [`partition_graph`]).
    pub fn partition_graph(&self) -> PartGraph {
        partition_graph(&self.net)
    }

    /// A partition into `parts` with `method` (see [`partition::plan`]).
    pub fn plan_with(&self, parts: u32, method: Method) -> Result<Plan, partitioner::PartitionError> {
        partition::plan(&self.config, &self.net, parts, method)
    }

    /// [`plan_with`](Self::plan_with) with the automatic method.
    pub fn plan(&self, parts: u32) -> Result<Plan, partitioner::PartitionError> {
        self.plan_with(parts, Method::Auto)
    }

    /// This simulation as one rank holding every switch, with partitions `assignment`.
    pub fn as_rank(&self, assignment: &[u32]) -> RankModel {
        let mut model = RankModel::whole(
            self.config.clone(),
            &self.net,
            self.routes.clone(),
            self.pattern.clone(),
            self.workload.clone(),
            self.routing_build_seconds,
            assignment.to_vec(),
        );
        model.record_deliveries = self.record_deliveries;
        model
    }

    /// Runs at offered `load` in this process, one thread per partition of `assignment`.
    /// `on_sample` sees every time-series row as it is produced; `interrupt` stops the run
    /// at the end of the current window when set, with a last sample there.
    pub fn run(
        &self,
        load: f64,
        assignment: &[u32],
        on_sample: &mut dyn FnMut(&Sample),
        interrupt: Option<&AtomicBool>,
    ) -> Result<RunResult, EngineError> {
        let result = self.as_rank(assignment).run(load, &mut SingleRank, on_sample, interrupt)?;
        Ok(result.expect("rank 0 gets the result"))
    }
}

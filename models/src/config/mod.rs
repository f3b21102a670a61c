//! Configuration: TOML text in, validated parameters out.
//!
//! Two stages: the text is parsed into a TOML table (syntax errors carry line numbers),
//! `--set key=value` overrides are applied to the table, then every section is checked
//! and turned into typed parameters. Unknown keys, wrong types and values out of range are
//! errors that name the key and what is allowed. Nothing here reads files or builds
//! anything: names and per-entry settings are checked against the registries (see
//! `registry`), and the topology is only parsed here (`topology::TopologySpec` builds it).
//!
//! Here: [`Config`], its parsing and the checks across sections; `sections.rs`:
//! `[simulation]`, `[router]` and `[traffic]`; `routing_section.rs`: `[routing]`;
//! `overrides.rs`: `--set`.

mod congestion;
mod overrides;
mod routing_section;
mod sections;
mod transport_checks;

pub use base::settings::{typed, ConfigError};
pub use congestion::CongestionSection;
pub use overrides::apply_overrides;
pub use routing_section::RoutingSection;
pub use sections::{RouterSection, SimulationSection, TrafficSection, MAX_CYCLES};

use crate::congestion::Control;
use crate::router::{
    ClassLink, CreditCheck, FlowControl, FlowLevels, LinkErrors, LinkFlaps, Recovery, RouterParams,
};
use crate::traffic::PatternSpec;
use crate::transport::{Transport, TransportKind, TransportSection};
use crate::workload::WorkloadSection;
use base::settings::typed_with_ranges;
use routing::{RoutingEntry, Selection};
use routing_section::parse_routing;
use sections::{expand_router_preset, integer_range, parse_traffic, INTEGER_RANGES};
use serde::de::DeserializeOwned;
use toml::{Table, Value};
use topology::{Network, NetworkSize, TopologySpec};

impl From<crate::traffic::PatternError> for ConfigError {
    fn from(e: crate::traffic::PatternError) -> Self {
        ConfigError::new(format!("traffic.{}", e.key), e.message)
    }
}

/// A validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// `[simulation]`.
    pub simulation: SimulationSection,
    /// `[topology]` as given (its `kind` selects the builder).
    pub topology: Table,
    /// `[router]`.
    pub router: RouterSection,
    /// `[routing]`.
    pub routing: RoutingSection,
    /// `[traffic]`: the synthetic traffic, or with a workload the background traffic of
    /// the endpoints that run no rank (load 0 when the section is absent).
    pub traffic: TrafficSection,
    /// `[workload]`: application jobs, if any.
    pub workload: Option<WorkloadSection>,
    /// `[congestion]`: the congestion's targets.
    pub congestion: CongestionSection,
    /// `[transport]`: how application messages travel end to end.
    pub transport: TransportSection,
    /// The final TOML text (after overrides), stored in the output for reproducibility.
    pub text: String,
}

fn section<T: DeserializeOwned>(doc: &Table, name: &str, default: Option<T>) -> Result<T, ConfigError> {
    match doc.get(name) {
        None => default.ok_or_else(|| ConfigError::new(name, "missing section")),
        Some(Value::Table(t)) => typed_with_ranges(name, t, INTEGER_RANGES),
        Some(other) => Err(ConfigError::new(name, format!("must be a table, got {}", other.type_str()))),
    }
}

impl Config {
    /// Parses and validates a configuration with optional overrides. No file is read: a
    /// key naming a file (`topology.path`, ...) needs its contents key filled in already
    /// (see [`Config::parse_with_files`]).
    pub fn parse(text: &str, overrides: &[String]) -> Result<Config, ConfigError> {
        Self::checked(Self::table(text, overrides)?)
    }

    /// Parses a configuration with optional overrides, reads the files it names with
    /// `read` (the caller's file access: this crate reads no files) into their contents
    /// keys (see [`files`](crate::files): contents given are kept unless an override names
    /// the file), then validates it. Errors name the key and the file:
    /// `routing.tables.lfts: cannot read the forwarding tables PATH: ...`.
    pub fn parse_with_files(
        text: &str,
        overrides: &[String],
        read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    ) -> Result<Config, ConfigError> {
        let mut doc = Self::table(text, overrides)?;
        crate::files::read_named_files(&mut doc, overrides, read)?;
        Self::checked(doc)
    }

    /// The TOML table of `text` with `overrides` applied.
    fn table(text: &str, overrides: &[String]) -> Result<Table, ConfigError> {
        let mut doc: Table =
            toml::from_str(text).map_err(|e| ConfigError::new("config", e.to_string().trim()))?;
        apply_overrides(&mut doc, overrides)?;
        Ok(doc)
    }

    /// Checks a configuration's table and turns it into a [`Config`].
    fn checked(mut doc: Table) -> Result<Config, ConfigError> {
        for key in doc.keys() {
            if ![
                "simulation",
                "topology",
                "router",
                "routing",
                "traffic",
                "workload",
                "congestion",
                "transport",
            ]
            .contains(&key.as_str())
            {
                return Err(ConfigError::new(
                    key.clone(),
                    "unknown section; allowed: simulation, topology, router, routing, traffic, workload, congestion, transport",
                ));
            }
        }
        let simulation: SimulationSection = section(&doc, "simulation", None)?;
        expand_router_preset(&mut doc)?;
        let router: RouterSection = section(&doc, "router", Some(RouterSection::default()))?;
        let routing = parse_routing(&doc)?;
        let topology = match doc.get("topology") {
            Some(Value::Table(t)) => t.clone(),
            Some(_) => return Err(ConfigError::new("topology", "must be a table")),
            None => return Err(ConfigError::new("topology", "missing section")),
        };
        let workload = match doc.get("workload") {
            None => None,
            Some(Value::Table(t)) => {
                let mut w = WorkloadSection::parse(t)?;
                // NCCL's rings follow the GPU nodes, if any (their key is checked with the
                // topology).
                let gpus = topology.get("nodes").and_then(|n| n.get("gpus")).and_then(Value::as_integer);
                w.node_gpus = gpus.filter(|&g| (1..=u32::MAX as i64).contains(&g)).map_or(1, |g| g as u32);
                Some(w)
            }
            Some(other) => {
                return Err(ConfigError::new(
                    "workload",
                    format!("must be a table, got {}", other.type_str()),
                ))
            }
        };
        let traffic = if workload.is_some() && !doc.contains_key("traffic") {
            // Only the jobs inject.
            TrafficSection {
                pattern: PatternSpec::uniform(),
                load: 0.0,
                loads: Vec::new(),
                phits_per_endpoint: 0,
                change: None,
                packet_sizes: None,
                given: false,
            }
        } else {
            parse_traffic(&doc)?
        };
        if workload.is_some() && traffic.phits_per_endpoint > 0 {
            return Err(ConfigError::new(
                "traffic.phits_per_endpoint",
                "a workload ends when its jobs finish; completion-time traffic cannot run beside it (remove one)",
            ));
        }
        let text = toml::to_string(&doc).map_err(|e| ConfigError::new("config", e.to_string()))?;
        let congestion = section(&doc, "congestion", Some(CongestionSection::default()))?;
        let transport = section(&doc, "transport", Some(TransportSection::default()))?;
        let cfg =
            Config { simulation, topology, router, routing, traffic, workload, congestion, transport, text };
        cfg.validate()?;
        Ok(cfg)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let s = &self.simulation;
        if s.cycles == 0 {
            return Err(ConfigError::new("simulation.cycles", "must be at least 1"));
        }
        if s.cycles > MAX_CYCLES {
            // Packets and routers keep times in 32 bits (half of an event's size), with room
            // for the cycles after the end that a router looks ahead.
            return Err(ConfigError::new(
                "simulation.cycles",
                format!("must be at most {MAX_CYCLES} (2^31), got {}", s.cycles),
            ));
        }
        if s.warmup >= s.cycles {
            return Err(ConfigError::new(
                "simulation.warmup",
                format!("must be less than simulation.cycles ({}), got {}", s.cycles, s.warmup),
            ));
        }
        if s.sample_period == Some(0) {
            return Err(ConfigError::new("simulation.sample_period", "must be at least 1"));
        }
        let r = &self.router;
        self.congestion.scheme(r.input_buffer, r.output_buffer)?;
        self.check_transport()?;
        let quota = self.traffic.phits_per_endpoint;
        if !quota.is_multiple_of(r.packet_size.max(1) as u64)
            || quota / r.packet_size.max(1) as u64 > u32::MAX as u64
        {
            return Err(ConfigError::new(
                "traffic.phits_per_endpoint",
                format!(
                    "must be a multiple of router.packet_size ({}) and at most 2^32 packets, got {quota}",
                    r.packet_size
                ),
            ));
        }
        let range = |key: &str, v: u64, lo: u64, hi: u64| {
            if v < lo || v > hi {
                Err(ConfigError::new(format!("router.{key}"), format!("must be in {lo}..={hi}, got {v}")))
            } else {
                Ok(())
            }
        };
        for (key, value) in [
            ("vcs", r.vcs as u64),
            ("packet_size", r.packet_size as u64),
            ("speedup", r.speedup as u64),
            ("router_delay", r.router_delay),
            ("allocator_iterations", r.allocator_iterations as u64),
        ] {
            let (lo, hi) = integer_range(&format!("router.{key}")).expect("listed in INTEGER_RANGES");
            range(key, value, lo, hi)?;
        }
        if let Some(sizes) = &self.traffic.packet_sizes {
            if let Some((i, phits)) = sizes.sizes().find(|&(_, p)| p > r.packet_size) {
                return Err(ConfigError::new(
                    format!("traffic.packet_sizes[{i}].phits"),
                    format!("must be at most router.packet_size ({}), the MTU, got {phits}", r.packet_size),
                ));
            }
            if self.traffic.phits_per_endpoint > 0 {
                return Err(ConfigError::new(
                    "traffic.packet_sizes",
                    "cannot be combined with traffic.phits_per_endpoint (a count of full packets): give one of them",
                ));
            }
        }
        if r.header_phits >= r.packet_size {
            return Err(ConfigError::new(
                "router.header_phits",
                format!(
                    "must be below router.packet_size ({}) so that a packet carries data, got {}",
                    r.packet_size, r.header_phits
                ),
            ));
        }
        // Buffer occupancies and credits are kept in 16 bits (a router's state per VC is a
        // third of a cache line).
        range("input_buffer", r.input_buffer as u64, r.packet_size as u64, u16::MAX as u64).map_err(|e| {
            ConfigError::new(e.key, format!("{} (it must hold one packet of packet_size phits)", e.message))
        })?;
        range("output_buffer", r.output_buffer as u64, r.packet_size as u64, u16::MAX as u64).map_err(
            |e| {
                ConfigError::new(
                    e.key,
                    format!("{} (it must hold one packet of packet_size phits)", e.message),
                )
            },
        )?;
        self.validate_flow_control()?;
        let escape = self.routing.escape_vcs;
        if escape > 0 && escape >= r.vcs {
            return Err(ConfigError::new(
                "routing.escape_vcs",
                format!(
                    "must be below router.vcs ({}) so that the routing keeps at least one VC, got {escape}",
                    r.vcs
                ),
            ));
        }
        if escape > 0 && self.routing.selection != Selection::Adaptive {
            return Err(ConfigError::new(
                "routing.selection",
                format!(
                    "an escape subnetwork needs `adaptive` (occupancy + penalty decides when to escape), got `{}`",
                    self.routing.selection.name()
                ),
            ));
        }
        Ok(())
    }

    /// `router.flow_control` against the keys it cannot be combined with.
    fn validate_flow_control(&self) -> Result<(), ConfigError> {
        let r = &self.router;
        let name = r.flow_control.name();
        if r.pfc.is_some() && r.flow_control != FlowControl::Pfc {
            return Err(ConfigError::new(
                "router.pfc",
                format!("sets PFC's thresholds, but router.flow_control is `{name}`: set it to `pfc` or remove [router.pfc]"),
            ));
        }
        let end_to_end = r.link_errors.as_ref().is_some_and(|e| e.recovery == Recovery::EndToEnd);
        if end_to_end && self.workload.is_some() && self.transport.kind == TransportKind::None {
            return Err(ConfigError::new(
                "router.link_errors.recovery",
                "`end_to_end` drops bad packets, and transport.kind = \"none\" does not send them again: set transport.kind = \"rc\", or recovery = \"link\"",
            ));
        }
        if !r.link_flaps.is_empty() && self.workload.is_some() && self.transport.kind == TransportKind::None {
            return Err(ConfigError::new(
                "router.link_flaps",
                "a link that is down loses the packets sent on it, and transport.kind = \"none\" does not send them again: set transport.kind = \"rc\"",
            ));
        }
        if end_to_end && self.congestion.control != Control::None {
            return Err(ConfigError::new(
                "router.link_errors.recovery",
                "`end_to_end` drops bad packets, congestion notifications among them: use recovery = \"link\" with congestion.control",
            ));
        }
        if r.flow_control == FlowControl::Credits {
            return Ok(());
        }
        if r.credit_check == CreditCheck::Crossbar {
            return Err(ConfigError::new(
                "router.credit_check",
                format!("`crossbar` takes downstream credits at the crossbar; router.flow_control = `{name}` has none: use `link`"),
            ));
        }
        if r.flow_control == FlowControl::None {
            // Lost packets would leave a message or a notification waiting for ever unless
            // a transport sends them again.
            if self.workload.is_some() && self.transport.kind == TransportKind::None {
                return Err(ConfigError::new(
                    "router.flow_control",
                    "`none` drops packets, and transport.kind = \"none\" does not send them again: set transport.kind = \"rc\" or \"uec\", or use `pfc` or `credits` with [workload]",
                ));
            }
            if self.congestion.control != Control::None {
                return Err(ConfigError::new(
                    "router.flow_control",
                    "`none` drops packets, congestion notifications among them: use `pfc` or `credits` with congestion.control",
                ));
            }
        }
        Ok(())
    }

    /// The transport of application messages, if any (`[transport]`, checked by
    /// [`Config::parse`]), with the acknowledgement's length filled in.
    pub fn transport(&self) -> Option<Transport> {
        let ack = |size: u16| if size == 0 { self.router.header_phits + 1 } else { size };
        match self.transport.kind {
            TransportKind::None => None,
            TransportKind::Rc => {
                let mut rc = self.transport.rc.unwrap_or_default();
                rc.ack_size = ack(rc.ack_size);
                Some(Transport::Rc(rc))
            }
            TransportKind::Uec => {
                let mut uec = self.transport.uec.unwrap_or_default();
                uec.ack_size = ack(uec.ack_size);
                Some(Transport::Uec(uec))
            }
        }
    }

    /// Sampling period in cycles.
    pub fn sample_period(&self) -> u64 {
        self.simulation.sample_period.unwrap_or((self.simulation.cycles / 100).max(1))
    }

    /// Router parameters.
    pub fn router_params(&self) -> RouterParams {
        self.router.clone()
    }

    /// What flow control and link errors need of `net`'s link classes: latency, speed,
    /// largest packet (scale-up packets on a node's links), whether they join switches.
    fn class_links<'a>(&self, net: &'a Network) -> Vec<ClassLink<'a>> {
        let scale_up = net.nodes.as_ref().and_then(|n| n.scale_up_packet);
        let mut between_switches = vec![false; net.link_classes.len()];
        for s in 0..net.num_switches() as topology::SwitchId {
            for p in net.ports(s) {
                if matches!(p.target, topology::PortTarget::Switch { .. }) {
                    between_switches[p.class as usize] = true;
                }
            }
        }
        net.link_classes
            .iter()
            .zip(between_switches)
            .map(|(c, between_switches)| ClassLink {
                name: &c.name,
                latency: c.latency,
                speed: c.speed,
                largest_packet: match scale_up {
                    Some(p) if c.name == "terminal" || c.name == "nvlink" => p.max(self.router.packet_size),
                    _ => self.router.packet_size,
                },
                between_switches,
            })
            .collect()
    }

    /// The levels of `router.flow_control` on `net`'s link classes (`None` under
    /// credits): each class's buffer and PFC thresholds.
    pub fn flow_levels(&self, net: &Network) -> Result<Option<FlowLevels>, ConfigError> {
        if self.router.flow_control == FlowControl::Credits {
            return Ok(None);
        }
        FlowLevels::new(&self.router, &self.class_links(net))
    }

    /// The bit errors of `[router.link_errors]` on `net`'s link classes (`None` without).
    pub fn link_errors(&self, net: &Network) -> Result<Option<LinkErrors>, ConfigError> {
        let Some(params) = &self.router.link_errors else { return Ok(None) };
        LinkErrors::new(params, &self.class_links(net)).map(Some)
    }

    /// The links of `router.link_flaps` on `net` (`None` without).
    pub fn link_flaps(&self, net: &Network) -> Result<Option<LinkFlaps>, ConfigError> {
        if self.router.link_flaps.is_empty() {
            return Ok(None);
        }
        LinkFlaps::new(&self.router.link_flaps, net).map(Some)
    }

    /// Builds the network described by `[topology]`.
    pub fn build_network(&self) -> Result<Network, ConfigError> {
        let net = TopologySpec::parse(&self.topology, self.simulation.seed)?.build()?;
        self.flow_levels(&net)?;
        self.link_errors(&net)?;
        self.link_flaps(&net)?;
        // A port's buffers scale with its link's speed: they must still count in 16 bits.
        for class in &net.link_classes {
            for (key, phits) in
                [("input_buffer", self.router.input_buffer), ("output_buffer", self.router.output_buffer)]
            {
                let scaled = class.speed.scaled_buffer(phits);
                if scaled > u16::MAX as u64 {
                    return Err(ConfigError::new(
                        format!("topology.link_speeds.{}", class.name),
                        format!(
                            "at {} phits a cycle, router.{key} = {phits} becomes {scaled} phits on these links; buffers hold at most {} phits: lower the speed or router.{key}",
                            class.speed,
                            u16::MAX
                        ),
                    ));
                }
            }
        }
        if let Some(packet) = net.nodes.as_ref().and_then(|n| n.scale_up_packet) {
            // A packet within a node must fit the buffers of the GPUs' and NVLink's ports.
            for class in net.link_classes.iter().filter(|c| c.name == "terminal" || c.name == "nvlink") {
                for (key, phits) in
                    [("input_buffer", self.router.input_buffer), ("output_buffer", self.router.output_buffer)]
                {
                    let room = class.speed.scaled_buffer(phits).min(u16::MAX as u64);
                    if room < packet as u64 {
                        return Err(ConfigError::new(
                            "topology.nodes.scale_up_packet",
                            format!(
                                "packets of {packet} phits do not fit the `{}` links' buffers: router.{key} = {phits} at {} phits a cycle holds {room}; lower it or raise router.{key}",
                                class.name, class.speed
                            ),
                        ));
                    }
                }
            }
        }
        Ok(net)
    }

    /// The registry entry of `routing.algorithm` (found when the config was parsed).
    pub fn routing_entry(&self) -> &'static RoutingEntry {
        self.routing.algorithm
    }

    /// The counts of the network described by `[topology]`, checked, without building it
    /// (instant even for networks too large to build).
    pub fn network_size(&self) -> Result<NetworkSize, ConfigError> {
        TopologySpec::parse(&self.topology, self.simulation.seed)?.size()
    }
}

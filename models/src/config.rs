//! Configuration: TOML text in, validated parameters out.
//!
//! Two stages: the text is parsed into a TOML table (syntax errors carry line numbers),
//! `--set key=value` overrides are applied to the table, then every section is checked
//! and turned into typed parameters. Unknown keys, wrong types and values out of range are
//! errors that name the key and what is allowed. Nothing here reads files.

use crate::router::RouterParams;
use crate::routing::{Selection, VcPolicy};
use crate::topology::faults::fail_random_links;
use crate::topology::{dragonfly, fattree, hyperx, rrg, torus, Network, NetworkSize, TopologyError};
use crate::traffic::PatternSpec;
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use toml::{Table, Value};

/// A configuration error; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ConfigError {
    /// Dotted key, e.g. `router.vcs`.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ConfigError {
    /// Error naming `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), message: message.into() }
    }
}

impl From<TopologyError> for ConfigError {
    fn from(e: TopologyError) -> Self {
        ConfigError::new(format!("topology.{}", e.key), e.message)
    }
}

impl From<crate::traffic::PatternError> for ConfigError {
    fn from(e: crate::traffic::PatternError) -> Self {
        ConfigError::new(format!("traffic.{}", e.key), e.message)
    }
}

/// Longest run, in cycles.
pub const MAX_CYCLES: u64 = 1 << 31;

fn default_seed() -> u64 {
    1
}

/// `[simulation]`: how long, what to measure, when to give up.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationSection {
    /// Cycles to simulate (the run ends at this time). At least 1.
    pub cycles: u64,
    /// Cycles of warm-up before measurement starts; less than `cycles`. Default 0.
    #[serde(default)]
    pub warmup: u64,
    /// Seed of every random stream. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Cycles between time-series samples. Default: `cycles / 100`, at least 1.
    #[serde(default)]
    pub sample_period: Option<u64>,
    /// Stop with status "deadlock" when packets are in flight but none has moved for
    /// this many cycles. Default 10,000; 0 disables.
    #[serde(default = "default_watchdog")]
    pub watchdog: u64,
}

fn default_watchdog() -> u64 {
    10_000
}

/// `[router]`: switch and NIC parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouterSection {
    /// Virtual channels per port, 1..=64. Default 2.
    #[serde(default = "d_vcs")]
    pub vcs: u8,
    /// Input buffer per VC in phits, `packet_size..=65535`. Default 64.
    #[serde(default = "d_in")]
    pub input_buffer: u32,
    /// Output buffer per VC in phits, `packet_size..=65535`. Default 32.
    #[serde(default = "d_out")]
    pub output_buffer: u32,
    /// Packet length in phits, 1..=4096. Default 16.
    #[serde(default = "d_size")]
    pub packet_size: u16,
    /// Crossbar speedup, 1..=16. Default 1.
    #[serde(default = "d_speedup")]
    pub speedup: u16,
    /// Router pipeline delay in cycles, 0..=1000. Default 2.
    #[serde(default = "d_delay")]
    pub router_delay: u64,
}

fn d_vcs() -> u8 {
    2
}
fn d_in() -> u32 {
    64
}
fn d_out() -> u32 {
    32
}
fn d_size() -> u16 {
    16
}
fn d_speedup() -> u16 {
    1
}
fn d_delay() -> u64 {
    2
}

impl Default for RouterSection {
    fn default() -> Self {
        Self {
            vcs: d_vcs(),
            input_buffer: d_in(),
            output_buffer: d_out(),
            packet_size: d_size(),
            speedup: d_speedup(),
            router_delay: d_delay(),
        }
    }
}

/// `[routing]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSection {
    /// Routing algorithm; see `xnet list routings`.
    pub algorithm: String,
    /// How to choose among candidates: `first`, `random` or `adaptive` (default).
    #[serde(default)]
    pub selection: Selection,
    /// `routing` (the algorithm's own VCs, default), `ladder` or `any`.
    #[serde(default)]
    pub vc_policy: VcPolicy,
    /// UGAL: extra occupancy in phits the non-minimal path must beat. Default 0.
    #[serde(default)]
    pub ugal_threshold: u32,
    /// ALLPATH(k): extra switch hops allowed over the shortest route. Default 1.
    #[serde(default = "d_allpath_k")]
    pub allpath_k: u32,
    /// Up*/Down*, MUD (first root), TOR, LASH-TOR: root switch. Default: the smallest eccentricity, ties to the lowest id.
    #[serde(default)]
    pub root: Option<u32>,
    /// SurePath escape subnetwork: VCs reserved for it at the top of `router.vcs`
    /// (0 = none, default). Root: `routing.root` or the least eccentric switch.
    #[serde(default)]
    pub escape_vcs: u8,
    /// Nue: the order in which each layer's destinations are routed. Default `id`.
    #[serde(default)]
    pub nue_order: crate::routing::nue::DestinationOrder,
}

fn d_allpath_k() -> u32 {
    1
}

/// `[traffic]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TrafficSection {
    /// Destination pattern.
    pub pattern: PatternSpec,
    /// Offered load in phits per cycle per endpoint, in `[0, 1]`.
    pub load: f64,
    /// Loads for `xnet sweep` (each in `[0, 1]`).
    pub loads: Vec<f64>,
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
    /// `[traffic]`.
    pub traffic: TrafficSection,
    /// The final TOML text (after overrides), stored in the output for reproducibility.
    pub text: String,
}

/// Topologies known to `[topology] kind`.
pub const TOPOLOGIES: &[(&str, &str)] = &[
    ("hyperx", "HyperX: sides = [S1, S2, ...], endpoints_per_switch, terminal_latency, link_latency"),
    ("dragonfly", "Dragonfly: p, a, h, groups (default a*h+1), arrangement = absolute|relative|palmtree, terminal_latency, local_latency, global_latency"),
    ("torus", "Torus: sides = [...], wrap = [true, ...] (default all true), endpoints_per_switch, terminal_latency, link_latency"),
    ("mesh", "Mesh: a torus without wrap-around links; same keys except wrap"),
    ("fat_tree", "k-ary n-tree: k, n, terminal_latency, link_latency"),
    ("random_regular", "Random regular graph (Jellyfish): switches, degree, endpoints_per_switch, seed (default simulation.seed), terminal_latency, link_latency"),
];

/// Routing algorithms known to `[routing] algorithm`.
pub const ROUTINGS: &[(&str, &str)] = &[
    ("minimal", "all minimal next hops from a parallel-BFS distance table (ECMP with selection random/adaptive); any topology; default VCs: ladder"),
    ("shortest_path", "one minimal path per switch pair, chosen by a hash; any topology; default VCs: ladder"),
    ("dor", "dimension-order routing on hyperx, torus and mesh (datelines on tori: 2 VCs)"),
    ("dragonfly_min", "Dragonfly minimal with Kim/Dally VCs (2 VCs)"),
    ("dragonfly_valiant", "Dragonfly Valiant via a random intermediate group (3 VCs)"),
    ("dragonfly_ugal", "Dragonfly UGAL-L: MIN or Valiant decided at the source router (3 VCs)"),
    ("allpath", "ALLPATH(k): every next hop keeping the route within shortest + routing.allpath_k (default 1) hops; any topology; default VCs: ladder (diameter + k)"),
    ("valiant", "Valiant via a random intermediate switch, minimal in both phases; any topology; default VCs: ladder (2 x diameter)"),
    ("up_down", "Up*/Down* from routing.root (default: least eccentric switch): shortest legal up*-then-down* routes; any topology; 1 VC"),
    ("dfsssp", "DFSSSP: balanced shortest paths (one Dijkstra per destination), split into deadlock-free layers by cutting CDG cycles, spread over all router.vcs; any topology; 1 VC per layer"),
    ("lash", "LASH: one shortest path per switch pair, both directions put in the first layer whose CDG stays acyclic, spread over all router.vcs; any topology; 1 VC per layer"),
    ("nue", "Nue: destination-based routes grown on the channel dependency graph, one layer (VC) per destination region, escape tree fallback; deadlock-free with any router.vcs >= 1; any topology, routes around faults"),
    ("mud", "MUD: one Up*/Down* instance per VC (min(router.vcs, switches)), roots spread apart from routing.root; a packet takes the instance with the shortest legal route; any topology; uses all router.vcs (>= 1)"),
    ("tor", "TOR: minimal paths with the fewest forbidden Up*/Down* down->up turns, next VC at each such turn; any topology; 1 VC per layer"),
    ("lash_tor", "LASH-TOR: one balanced shortest path per pair laid into layers, moving to the next layer where a dependency would close a cycle; last layer Up*/Down*; any topology; fits any router.vcs (>= 1)"),
    ("angara_bfs", "Angara routing graph (direction order, direction bits, First/Last Steps; datelines instead of bubbles) with BFS source-route tables; torus and mesh, faults allowed; 2 VCs on tori, 1 on meshes"),
    ("angara_sssp", "Angara routing graph with load-balancing SSSP source-route tables (lower edge-forwarding index than angara_bfs); torus and mesh, faults allowed; 2 VCs on tori, 1 on meshes"),
    ("spda", "SPDA: one BFS spanning tree per VC from random roots, a packet follows one tree on its VC; any topology; uses all router.vcs (>= 1)"),
];

/// Traffic patterns known to `[traffic] pattern`.
pub const PATTERNS: &[(&str, &str)] = &[
    ("uniform", "uniformly random destination other than the source"),
    ("random_permutation", "a fixed random permutation without fixed points"),
    (
        "group_shift",
        "Dragonfly: same position in the next group; others: next block of block_switches switches",
    ),
    ("bit_reversal", "destination = bit-reversed source (power-of-two endpoints)"),
    ("transpose", "swap the two halves of the source's bits (even power-of-two endpoints)"),
    ("tornado", "hyperx/torus: each coordinate advances by ceil(k/2)-1"),
    ("hot_spot", "fraction of packets to one endpoint (fraction, endpoint), the rest uniform"),
];

/// Deserializes `table` as section `name`; errors name the full key path.
fn typed<T: DeserializeOwned>(name: &str, table: &Table) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(Value::Table(table.clone())).map_err(|e| {
        let path = e.path().to_string();
        let key = if path == "." || path.is_empty() { name.to_string() } else { format!("{name}.{path}") };
        let message = plain_message(&key, e.into_inner().message().trim());
        ConfigError::new(key, message)
    })
}

/// Allowed ranges of the integer keys whose range is narrower than their type's, checked
/// by `Config::validate` and named when a value does not even fit the type.
const INTEGER_RANGES: &[(&str, u64, u64)] = &[
    ("router.vcs", 1, 64),
    ("router.packet_size", 1, 4096),
    ("router.speedup", 1, 16),
    ("router.router_delay", 0, 1000),
];

/// The allowed range of `key`, if [`INTEGER_RANGES`] lists it.
fn integer_range(key: &str) -> Option<(u64, u64)> {
    INTEGER_RANGES.iter().find(|(k, _, _)| *k == key).map(|&(_, lo, hi)| (lo, hi))
}

/// Serde's message for `key`, with an integer that does not fit its type answered by the
/// allowed range: "invalid value: integer `1000`, expected u8" becomes "must be in 1..=64,
/// got 1000" for `router.vcs`.
fn plain_message(key: &str, message: &str) -> String {
    let Some((value, ty)) =
        message.strip_prefix("invalid value: integer `").and_then(|rest| rest.split_once("`, expected "))
    else {
        return message.to_string();
    };
    if let Some((lo, hi)) = integer_range(key) {
        return format!("must be in {lo}..={hi}, got {value}");
    }
    match ty {
        "u8" => format!("must be in 0..=255, got {value}"),
        "u16" => format!("must be in 0..=65535, got {value}"),
        "u32" => format!("must be in 0..=4294967295, got {value}"),
        "u64" | "usize" => format!("must be a non-negative integer, got {value}"),
        _ => message.to_string(),
    }
}

fn section<T: DeserializeOwned>(doc: &Table, name: &str, default: Option<T>) -> Result<T, ConfigError> {
    match doc.get(name) {
        None => default.ok_or_else(|| ConfigError::new(name, "missing section")),
        Some(Value::Table(t)) => typed(name, t),
        Some(other) => Err(ConfigError::new(name, format!("must be a table, got {}", other.type_str()))),
    }
}

/// The value of `--set key=text`: TOML, or a bare word (letters, digits and `_-./:+`) taken
/// as a string, so that `routing.algorithm=nue` needs no quotes. Anything else that is not
/// TOML (e.g. `[0.3`) is an error rather than a string nobody meant.
fn parse_value(key: &str, text: &str) -> Result<Value, ConfigError> {
    match toml::from_str::<Table>(&format!("v = {text}")) {
        Ok(mut t) => Ok(t.remove("v").expect("the table has key v")),
        Err(_) if !text.is_empty() && text.chars().all(|c| c.is_alphanumeric() || "_-./:+".contains(c)) => {
            Ok(Value::String(text.to_string()))
        }
        Err(e) => Err(ConfigError::new(
            key,
            format!(
                "cannot read `{text}` as a TOML value ({}); strings with characters other than \
                 letters, digits and _-./:+ need quotes: --set 'key=\"...\"'",
                e.message().trim()
            ),
        )),
    }
}

/// Applies `key=value` overrides (dotted keys; the value is TOML, or a bare string).
pub fn apply_overrides(doc: &mut Table, overrides: &[String]) -> Result<(), ConfigError> {
    for o in overrides {
        let (key, value) = o.split_once('=').ok_or_else(|| {
            ConfigError::new(
                "--set",
                format!("`{o}` must look like section.key=value, e.g. traffic.load=0.3"),
            )
        })?;
        let path: Vec<&str> = key.trim().split('.').collect();
        if path.len() < 2 || path.iter().any(|p| p.is_empty()) {
            return Err(ConfigError::new(
                "--set",
                format!("`{}`: the key must be section.key, e.g. traffic.load=0.3", key.trim()),
            ));
        }
        let mut table = &mut *doc;
        for part in &path[..path.len() - 1] {
            let entry = table.entry(part.to_string()).or_insert_with(|| Value::Table(Table::new()));
            table = entry
                .as_table_mut()
                .ok_or_else(|| ConfigError::new(key.trim(), format!("`{part}` is not a table")))?;
        }
        table.insert(path[path.len() - 1].to_string(), parse_value(key.trim(), value.trim())?);
    }
    Ok(())
}

impl Config {
    /// Parses and validates a configuration with optional overrides.
    pub fn parse(text: &str, overrides: &[String]) -> Result<Config, ConfigError> {
        let mut doc: Table =
            toml::from_str(text).map_err(|e| ConfigError::new("config", e.to_string().trim()))?;
        apply_overrides(&mut doc, overrides)?;
        for key in doc.keys() {
            if !["simulation", "topology", "router", "routing", "traffic"].contains(&key.as_str()) {
                return Err(ConfigError::new(
                    key.clone(),
                    "unknown section; allowed: simulation, topology, router, routing, traffic",
                ));
            }
        }
        let simulation: SimulationSection = section(&doc, "simulation", None)?;
        let router: RouterSection = section(&doc, "router", Some(RouterSection::default()))?;
        let routing: RoutingSection = section(&doc, "routing", None)?;
        let topology = match doc.get("topology") {
            Some(Value::Table(t)) => t.clone(),
            Some(_) => return Err(ConfigError::new("topology", "must be a table")),
            None => return Err(ConfigError::new("topology", "missing section")),
        };
        let traffic = parse_traffic(&doc)?;
        let text = toml::to_string(&doc).map_err(|e| ConfigError::new("config", e.to_string()))?;
        let cfg = Config { simulation, topology, router, routing, traffic, text };
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
        ] {
            let (lo, hi) = integer_range(&format!("router.{key}")).expect("listed in INTEGER_RANGES");
            range(key, value, lo, hi)?;
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
        if !ROUTINGS.iter().any(|(n, _)| *n == self.routing.algorithm) {
            return Err(ConfigError::new(
                "routing.algorithm",
                format!("unknown `{}`; known: {}", self.routing.algorithm, names(ROUTINGS)),
            ));
        }
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
                    serde_plain_name(self.routing.selection)
                ),
            ));
        }
        Ok(())
    }

    /// Sampling period in cycles.
    pub fn sample_period(&self) -> u64 {
        self.simulation.sample_period.unwrap_or((self.simulation.cycles / 100).max(1))
    }

    /// Router parameters.
    pub fn router_params(&self) -> RouterParams {
        let r = &self.router;
        RouterParams {
            vcs: r.vcs,
            input_buffer: r.input_buffer,
            output_buffer: r.output_buffer,
            packet_size: r.packet_size,
            speedup: r.speedup,
            router_delay: r.router_delay,
        }
    }

    /// Builds the network described by `[topology]`.
    pub fn build_network(&self) -> Result<Network, ConfigError> {
        build_topology(&self.topology, self.simulation.seed)
    }

    /// The counts of the network described by `[topology]`, checked, without building it
    /// (instant even for networks too large to build).
    pub fn network_size(&self) -> Result<NetworkSize, ConfigError> {
        TopologySpec::parse(&self.topology, self.simulation.seed)?.size()
    }
}

fn serde_plain_name(s: Selection) -> &'static str {
    match s {
        Selection::First => "first",
        Selection::Random => "random",
        Selection::Adaptive => "adaptive",
    }
}

fn names(list: &[(&str, &str)]) -> String {
    list.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

fn parse_traffic(doc: &Table) -> Result<TrafficSection, ConfigError> {
    let mut t = match doc.get("traffic") {
        Some(Value::Table(t)) => t.clone(),
        Some(_) => return Err(ConfigError::new("traffic", "must be a table")),
        None => return Err(ConfigError::new("traffic", "missing section")),
    };
    let number = |v: &Value, key: &str| -> Result<f64, ConfigError> {
        let x = match v {
            Value::Float(f) => *f,
            Value::Integer(i) => *i as f64,
            other => {
                return Err(ConfigError::new(key, format!("must be a number, got {}", other.type_str())))
            }
        };
        if !(0.0..=1.0).contains(&x) {
            return Err(ConfigError::new(key, format!("must be in [0, 1] phits/cycle/endpoint, got {x}")));
        }
        Ok(x)
    };
    let load = match t.remove("load") {
        Some(v) => number(&v, "traffic.load")?,
        None => {
            return Err(ConfigError::new(
                "traffic.load",
                "missing; give the offered load in phits/cycle/endpoint",
            ))
        }
    };
    let loads = match t.remove("loads") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| number(v, &format!("traffic.loads[{i}]")))
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(ConfigError::new(
                "traffic.loads",
                format!("must be an array, got {}", other.type_str()),
            ))
        }
    };
    match t.get("pattern") {
        Some(Value::String(p)) if !PATTERNS.iter().any(|(n, _)| n == p) => {
            return Err(ConfigError::new(
                "traffic.pattern",
                format!("unknown `{p}`; known: {}", names(PATTERNS)),
            ))
        }
        None => {
            return Err(ConfigError::new("traffic.pattern", format!("missing; known: {}", names(PATTERNS))))
        }
        _ => {}
    }
    let pattern: PatternSpec = typed("traffic", &t)?;
    // Unit variants (e.g. `uniform`) ignore extra keys: compare with what was understood.
    let understood = Value::try_from(&pattern).ok().and_then(|v| v.as_table().cloned()).unwrap_or_default();
    if let Some(extra) = t.keys().find(|k| !understood.contains_key(*k)) {
        let name = understood.get("pattern").and_then(Value::as_str).unwrap_or("?");
        let mut allowed: Vec<&str> = vec!["pattern", "load", "loads"];
        allowed.extend(understood.keys().map(String::as_str).filter(|k| *k != "pattern"));
        return Err(ConfigError::new(
            format!("traffic.{extra}"),
            format!("unknown key for pattern `{name}`; allowed: {}", allowed.join(", ")),
        ));
    }
    Ok(TrafficSection { pattern, load, loads })
}

fn params<T: DeserializeOwned>(table: &Table) -> Result<T, ConfigError> {
    typed("topology", table)
}

/// Builds a network from a `[topology]` table; `seed` is the default for random graphs.
pub fn build_topology(table: &Table, seed: u64) -> Result<Network, ConfigError> {
    TopologySpec::parse(table, seed)?.build()
}

/// A `[topology]` table, checked: its family's parameters and the faults to inject.
struct TopologySpec {
    family: Family,
    failed_links: u32,
    fault_seed: u64,
    /// Default seed of random graphs.
    seed: u64,
}

/// The parameters of one topology family.
enum Family {
    HyperX(hyperx::HyperXParams),
    Dragonfly(dragonfly::DragonflyParams),
    /// Tori, meshes (all `wrap` false) and mixed grids.
    Torus(torus::TorusParams),
    FatTree(fattree::FatTreeParams),
    Rrg(rrg::RrgParams),
}

impl TopologySpec {
    fn parse(table: &Table, seed: u64) -> Result<Self, ConfigError> {
        let mut t = table.clone();
        let failed_links = match t.remove("failed_links") {
            None => 0,
            Some(Value::Integer(n)) if (0..=u32::MAX as i64).contains(&n) => n as u32,
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.failed_links",
                    format!("must be a count >= 0, got {other}"),
                ))
            }
        };
        let fault_seed = match t.remove("fault_seed") {
            None => seed,
            Some(Value::Integer(n)) if n >= 0 => n as u64,
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.fault_seed",
                    format!("must be an integer >= 0, got {other}"),
                ))
            }
        };
        Ok(Self { family: Family::parse(&mut t)?, failed_links, fault_seed, seed })
    }

    /// The network's counts, checked, without building it.
    fn size(&self) -> Result<NetworkSize, ConfigError> {
        Ok(match &self.family {
            Family::HyperX(p) => hyperx::size(p)?,
            Family::Dragonfly(p) => dragonfly::size(p)?,
            Family::Torus(p) => torus::size(p)?,
            Family::FatTree(p) => fattree::size(p)?,
            Family::Rrg(p) => rrg::size(p)?,
        })
    }

    fn build(&self) -> Result<Network, ConfigError> {
        let mut net = match &self.family {
            Family::HyperX(p) => hyperx::build(p)?,
            Family::Dragonfly(p) => dragonfly::build(p)?,
            Family::Torus(p) => torus::build(p)?,
            Family::FatTree(p) => fattree::build(p)?,
            Family::Rrg(p) => rrg::build(p, self.seed)?,
        };
        if self.failed_links > 0 {
            fail_random_links(&mut net, self.failed_links, self.fault_seed)?;
            net.name = format!("{} with {} failed links", net.name, self.failed_links);
            net.failed_links = self.failed_links;
        }
        Ok(net)
    }
}

impl Family {
    fn parse(t: &mut Table) -> Result<Self, ConfigError> {
        let kind = match t.remove("kind") {
            Some(Value::String(k)) => k,
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.kind",
                    format!("must be a string, got {}", other.type_str()),
                ))
            }
            None => {
                return Err(ConfigError::new(
                    "topology.kind",
                    format!("missing; known: {}", names(TOPOLOGIES)),
                ))
            }
        };
        Ok(match kind.as_str() {
            "hyperx" => Family::HyperX(params(t)?),
            "dragonfly" => Family::Dragonfly(params(t)?),
            "torus" => Family::Torus(params(t)?),
            "mesh" => {
                if t.contains_key("wrap") {
                    return Err(ConfigError::new(
                        "topology.wrap",
                        "not allowed for a mesh (use kind = \"torus\" with wrap)",
                    ));
                }
                let sides = t.get("sides").and_then(Value::as_array).map_or(0, Vec::len);
                t.insert("wrap".into(), Value::Array(vec![Value::Boolean(false); sides]));
                Family::Torus(params(t)?)
            }
            "fat_tree" => Family::FatTree(params(t)?),
            "random_regular" => Family::Rrg(params(t)?),
            other => {
                return Err(ConfigError::new(
                    "topology.kind",
                    format!("unknown `{other}`; known: {}", names(TOPOLOGIES)),
                ))
            }
        })
    }
}

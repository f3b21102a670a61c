//! Configuration: TOML text in, validated parameters out.
//!
//! Two stages: the text is parsed into a TOML table (syntax errors carry line numbers),
//! `--set key=value` overrides are applied to the table, then every section is checked
//! and turned into typed parameters. Unknown keys, wrong types and values out of range are
//! errors that name the key and what is allowed. Nothing here reads files or builds
//! anything: names and per-entry settings are checked against the registries (see
//! `registry`), and the topology is only parsed here (`topology::TopologySpec` builds it).

use crate::router::{Allocator, Arbitration, CreditCheck, Crossbar, EjectionVc, InjectionVc, RouterParams};
use crate::traffic::PatternSpec;
use crate::workload::WorkloadSection;
use base::settings::{names, typed_with_ranges, unknown};
pub use base::settings::{typed, ConfigError};
use routing::{RoutingEntry, Selection, VcPolicy};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use std::collections::BTreeMap;
use toml::{Table, Value};
use topology::{Network, NetworkSize, TopologySpec};

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
    /// Output buffer per VC in phits, `packet_size..=65535`. Default 512: deep output
    /// queues, as BookSim2's (unbounded) ones, so that they do not limit throughput.
    #[serde(default = "d_out")]
    pub output_buffer: u32,
    /// Packet length in phits, 1..=4096. Default 16.
    #[serde(default = "d_size")]
    pub packet_size: u16,
    /// Crossbar speedup, 1..=16. Default 2 (BookSim2's Dragonfly example, the SurePath
    /// seed's Table 2).
    #[serde(default = "d_speedup")]
    pub speedup: u16,
    /// Router pipeline delay in cycles, 0..=1000. Default 2.
    #[serde(default = "d_delay")]
    pub router_delay: u64,
    /// Which VC of the router's input an endpoint injects into (see
    /// [`INJECTION_VCS`](crate::router::INJECTION_VCS)). Default `any`.
    #[serde(default)]
    pub injection_vc: InjectionVc,
    /// Packets an endpoint's source queue holds; a packet generated while it is full is
    /// refused and counted (`refused_load`). 0 (default): unbounded.
    #[serde(default)]
    pub source_queue: u32,
    /// A head that was not granted chooses again every cycle among the candidates whose
    /// output VC has room, as CAMINOS's routers do; `false` (default): it keeps its first
    /// choice until granted.
    #[serde(default)]
    pub reselect: bool,
    /// The crossbar's ports (see [`CROSSBARS`](crate::router::CROSSBARS)). Default `port`.
    #[serde(default)]
    pub crossbar: Crossbar,
    /// How the allocator's arbiters choose (see
    /// [`ARBITRATIONS`](crate::router::ARBITRATIONS)). Default `round_robin`.
    #[serde(default)]
    pub arbitration: Arbitration,
    /// Which output VC of a terminal port packets for an endpoint take (see
    /// [`EJECTION_VCS`](crate::router::EJECTION_VCS)). Default `any`.
    #[serde(default)]
    pub ejection_vc: EjectionVc,
    /// The separable allocator's order (see [`ALLOCATORS`](crate::router::ALLOCATORS)).
    /// Default `input_first`.
    #[serde(default)]
    pub allocator: Allocator,
    /// Passes of the allocator per allocation, 1..=8. Default 1.
    #[serde(default = "d_iterations")]
    pub allocator_iterations: u8,
    /// Where a packet for a switch needs downstream credits (see
    /// [`CREDIT_CHECKS`](crate::router::CREDIT_CHECKS)). Default `link`.
    #[serde(default)]
    pub credit_check: CreditCheck,
    /// The preset whose values fill the keys not given (see
    /// [`PRESETS`](crate::router::PRESETS)); already expanded into the other fields.
    #[serde(default)]
    pub preset: Option<String>,
}

fn d_vcs() -> u8 {
    2
}
fn d_in() -> u32 {
    64
}
fn d_out() -> u32 {
    512
}
fn d_size() -> u16 {
    16
}
fn d_speedup() -> u16 {
    2
}
fn d_delay() -> u64 {
    2
}
fn d_iterations() -> u8 {
    1
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
            injection_vc: InjectionVc::default(),
            source_queue: 0,
            reselect: false,
            crossbar: Crossbar::default(),
            arbitration: Arbitration::default(),
            ejection_vc: EjectionVc::default(),
            allocator: Allocator::default(),
            allocator_iterations: d_iterations(),
            credit_check: CreditCheck::default(),
            preset: None,
        }
    }
}

/// `[routing]`: the keys every routing shares, and the `[routing.NAME]` settings tables.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutingSection {
    /// Routing algorithm; see `xnet list` (checked against the registry).
    pub algorithm: String,
    /// How to choose among candidates: `first`, `random` or `adaptive` (default).
    pub selection: Selection,
    /// The VC policy (default `routing`: the routing's own, see [`RoutingEntry`]).
    pub vc_policy: VcPolicy,
    /// SurePath escape subnetwork: VCs reserved for it at the top of `router.vcs`
    /// (0 = none, default).
    pub escape_vcs: u8,
    /// The escape subnetwork's root switch. Default: the least eccentric switch.
    pub escape_root: Option<u32>,
    /// Which horizontal links the escape takes as shortcuts.
    pub escape_shortcuts: routing::escape::Shortcuts,
    /// `[routing.NAME]` tables by routing name, each checked against its entry's settings.
    /// Tables of routings other than `algorithm` may be given (a config that switches
    /// algorithm with `--set` keeps them) and are checked but not used.
    pub settings: BTreeMap<String, Table>,
}

/// The keys of `[routing]` shared by every routing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoutingKeys {
    algorithm: String,
    #[serde(default)]
    selection: Selection,
    #[serde(default)]
    vc_policy: VcPolicy,
    #[serde(default)]
    escape_vcs: u8,
    #[serde(default)]
    escape_root: Option<u32>,
    #[serde(default)]
    escape_shortcuts: routing::escape::Shortcuts,
}

const ROUTING_KEYS: &str = "algorithm, selection, vc_policy, escape_vcs, escape_root, escape_shortcuts";

/// Where the flat per-algorithm keys of earlier versions went.
fn moved_routing_key(key: &str) -> Option<&'static str> {
    Some(match key {
        "ugal_threshold" => {
            "moved to the settings of `dragonfly_ugal`: write `[routing.dragonfly_ugal]` with `threshold = N` \
             (--set routing.dragonfly_ugal.threshold=N)"
        }
        "allpath_k" => "moved to the settings of `allpath`: write `[routing.allpath]` with `k = N` (--set routing.allpath.k=N)",
        "nue_order" => {
            "moved to the settings of `nue`: write `[routing.nue]` with `order = \"...\"` (--set routing.nue.order=...)"
        }
        "root" => {
            "moved to each routing's settings: write `[routing.up_down]` with `root = N` (likewise \
             `[routing.mud]`, `[routing.tor]`, `[routing.lash_tor]`; --set routing.up_down.root=N); the \
             escape subnetwork's root is `routing.escape_root`"
        }
        _ => return None,
    })
}

fn parse_routing(doc: &Table) -> Result<RoutingSection, ConfigError> {
    let table = match doc.get("routing") {
        Some(Value::Table(t)) => t,
        Some(other) => {
            return Err(ConfigError::new("routing", format!("must be a table, got {}", other.type_str())))
        }
        None => return Err(ConfigError::new("routing", "missing section")),
    };
    let mut shared = Table::new();
    let mut settings = BTreeMap::new();
    for (key, value) in table {
        if let Some(how) = moved_routing_key(key) {
            return Err(ConfigError::new(format!("routing.{key}"), how));
        }
        if let Some(entry) = routing::find(key) {
            let Value::Table(t) = value else {
                return Err(ConfigError::new(
                    format!("routing.{key}"),
                    format!(
                        "must be a table ([routing.{key}]) of the settings of routing `{key}`, got {}",
                        value.type_str()
                    ),
                ));
            };
            entry.check_settings(t)?;
            settings.insert(key.clone(), t.clone());
        } else if ROUTING_KEYS.split(", ").any(|k| k == key) {
            shared.insert(key.clone(), value.clone());
        } else {
            return Err(ConfigError::new(
                format!("routing.{key}"),
                format!(
                    "unknown key; allowed: {ROUTING_KEYS}, and a table [routing.NAME] of settings per routing \
                     (NAME one of: {})",
                    names(routing::ROUTINGS.iter().map(|r| r.name))
                ),
            ));
        }
    }
    let k: RoutingKeys = typed("routing", &shared)?;
    if routing::find(&k.algorithm).is_none() {
        return Err(unknown("routing.algorithm", &k.algorithm, routing::ROUTINGS.iter().map(|r| r.name)));
    }
    Ok(RoutingSection {
        algorithm: k.algorithm,
        selection: k.selection,
        vc_policy: k.vc_policy,
        escape_vcs: k.escape_vcs,
        escape_root: k.escape_root,
        escape_shortcuts: k.escape_shortcuts,
        settings,
    })
}

/// `[traffic]`.
#[derive(Clone, Debug)]
pub struct TrafficSection {
    /// Destination pattern.
    pub pattern: PatternSpec,
    /// Offered load in phits per cycle per endpoint, in `[0, 1]`.
    pub load: f64,
    /// Loads for `xnet sweep` (each in `[0, 1]`).
    pub loads: Vec<f64>,
    /// Completion-time mode: every endpoint generates this many phits (at the offered
    /// load) and the run ends once all of them are delivered. 0: generate until the end.
    pub phits_per_endpoint: u64,
}

/// Writes the values of `router.preset`, if any, into `[router]` wherever the config does
/// not set the key itself, so that the stored config text spells out the router it ran.
fn expand_router_preset(doc: &mut Table) -> Result<(), ConfigError> {
    let Some(Value::Table(router)) = doc.get_mut("router") else {
        return Ok(());
    };
    let Some(given) = router.get("preset") else {
        return Ok(());
    };
    let Value::String(name) = given else {
        return Err(ConfigError::new("router.preset", format!("must be a string, got {}", given.type_str())));
    };
    let presets = crate::router::PRESETS;
    let preset = presets
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| unknown("router.preset", name, presets.iter().map(|p| p.name)))?;
    for setting in preset.settings {
        let value = parse_value(&format!("router.{}", setting.key), setting.default)?;
        router.entry(setting.key.to_string()).or_insert(value);
    }
    Ok(())
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
    /// The final TOML text (after overrides), stored in the output for reproducibility.
    pub text: String,
}

/// Allowed ranges of the integer keys whose range is narrower than their type's, checked
/// by `Config::validate` and named when a value does not even fit the type.
const INTEGER_RANGES: &[(&str, u64, u64)] = &[
    ("router.vcs", 1, 64),
    ("router.packet_size", 1, 4096),
    ("router.speedup", 1, 16),
    ("router.router_delay", 0, 1000),
    ("router.allocator_iterations", 1, 8),
];

/// The allowed range of `key`, if [`INTEGER_RANGES`] lists it.
fn integer_range(key: &str) -> Option<(u64, u64)> {
    INTEGER_RANGES.iter().find(|(k, _, _)| *k == key).map(|&(_, lo, hi)| (lo, hi))
}

fn section<T: DeserializeOwned>(doc: &Table, name: &str, default: Option<T>) -> Result<T, ConfigError> {
    match doc.get(name) {
        None => default.ok_or_else(|| ConfigError::new(name, "missing section")),
        Some(Value::Table(t)) => typed_with_ranges(name, t, INTEGER_RANGES),
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
        read: &dyn Fn(&str) -> Result<String, String>,
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
            if !["simulation", "topology", "router", "routing", "traffic", "workload"].contains(&key.as_str())
            {
                return Err(ConfigError::new(
                    key.clone(),
                    "unknown section; allowed: simulation, topology, router, routing, traffic, workload",
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
            Some(Value::Table(t)) => Some(WorkloadSection::parse(t)?),
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
        let cfg = Config { simulation, topology, router, routing, traffic, workload, text };
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
            injection_vc: r.injection_vc,
            source_queue: r.source_queue,
            reselect: r.reselect,
            crossbar: r.crossbar,
            arbitration: r.arbitration,
            ejection_vc: r.ejection_vc,
            allocator: r.allocator,
            allocator_iterations: r.allocator_iterations,
            credit_check: r.credit_check,
        }
    }

    /// Builds the network described by `[topology]`.
    pub fn build_network(&self) -> Result<Network, ConfigError> {
        TopologySpec::parse(&self.topology, self.simulation.seed)?.build()
    }

    /// The registry entry of `routing.algorithm` (checked when the config was parsed).
    pub fn routing_entry(&self) -> &'static RoutingEntry {
        routing::find(&self.routing.algorithm).expect("routing.algorithm was checked against the registry")
    }

    /// The counts of the network described by `[topology]`, checked, without building it
    /// (instant even for networks too large to build).
    pub fn network_size(&self) -> Result<NetworkSize, ConfigError> {
        TopologySpec::parse(&self.topology, self.simulation.seed)?.size()
    }
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
    let phits_per_endpoint = match t.remove("phits_per_endpoint") {
        None => 0,
        Some(Value::Integer(n)) if n >= 0 => n as u64,
        Some(other) => {
            return Err(ConfigError::new(
                "traffic.phits_per_endpoint",
                format!("must be a whole number of phits >= 0, got {other}"),
            ))
        }
    };
    let pattern = PatternSpec::parse(&t, &["load", "loads", "phits_per_endpoint"])?;
    Ok(TrafficSection { pattern, load, loads, phits_per_endpoint })
}

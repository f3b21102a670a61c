//! The sections of a configuration other than `[routing]`: `[simulation]`, `[router]`
//! (with its preset expanded into the keys the config does not set, and the allowed ranges
//! of its integer keys) and `[traffic]`.

use super::overrides::parse_value;
use crate::traffic::{PacketSizes, Pattern, PatternError, PatternSpec};
use base::settings::{unknown, ConfigError};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};
use topology::Network;

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
    /// Seed of every random stream, any `u64` (from 2^63 on as a string of digits, past
    /// TOML's integers). Default 1.
    #[serde(default = "default_seed", deserialize_with = "base::settings::deserialize_seed")]
    pub seed: u64,
    /// Cycles between time-series samples. Default: `cycles / 100`, at least 1.
    #[serde(default)]
    pub sample_period: Option<u64>,
    /// Stop with status "deadlock" when packets are in flight but none has moved for
    /// this many cycles. Default 10,000; 0 disables.
    #[serde(default = "default_watchdog")]
    pub watchdog: u64,
    /// Measure reordering at the endpoints: per flow (source, destination), the packets
    /// that arrive after one the source sent later (RFC 4737's reordered packets) and by
    /// how much (its late-time offset). Default false: it keeps a record per source at
    /// every destination.
    #[serde(default)]
    pub reordering: bool,
}

fn default_watchdog() -> u64 {
    10_000
}

/// `[router]`: switch and NIC parameters, read straight into the router's own parameters
/// (declared once, in `router/options.rs`).
pub type RouterSection = crate::router::RouterParams;

/// Allowed ranges of the integer keys whose range is narrower than their type's, checked
/// by `Config::validate` and named when a value does not even fit the type.
pub(super) const INTEGER_RANGES: &[(&str, u64, u64)] = &[
    ("router.vcs", 1, 64),
    ("router.packet_size", 1, 4096),
    ("router.speedup", 1, 16),
    ("router.router_delay", 0, 1000),
    ("router.allocator_iterations", 1, 8),
];

/// The allowed range of `key`, if [`INTEGER_RANGES`] lists it.
pub(super) fn integer_range(key: &str) -> Option<(u64, u64)> {
    INTEGER_RANGES.iter().find(|(k, _, _)| *k == key).map(|&(_, lo, hi)| (lo, hi))
}

/// Writes the values of `router.preset`, if any, into `[router]` wherever the config does
/// not set the key itself, so that the stored config text spells out the router it ran.
pub(super) fn expand_router_preset(doc: &mut Table) -> Result<(), ConfigError> {
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
    /// A transient: from cycle `change_at` on, packets follow the pattern `change_to` (with
    /// its default settings) instead.
    pub change: Option<(u64, PatternSpec)>,
    /// Packet lengths drawn per packet (`packet_sizes`); `None`: every packet is
    /// `router.packet_size` long.
    pub packet_sizes: Option<PacketSizes>,
    /// The configuration has this section: false for a workload's jobs running alone
    /// (no background traffic, whatever the load).
    pub given: bool,
}

impl TrafficSection {
    /// The destination pattern for `net`, with its change at `change_at` if any.
    pub fn build_pattern(&self, net: &Network, seed: u64) -> Result<Pattern, PatternError> {
        let before = self.pattern.build(net, seed)?;
        match &self.change {
            None => Ok(before),
            Some((at, spec)) => Ok(Pattern::Phased {
                at: *at,
                before: Box::new(before),
                after: Box::new(spec.build(net, seed).map_err(|e| {
                    PatternError::new("change_to", format!("pattern `{}`: {}", spec.entry().name, e.message))
                })?),
            }),
        }
    }
}

pub(super) fn parse_traffic(doc: &Table) -> Result<TrafficSection, ConfigError> {
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
    let change = parse_change(&mut t)?;
    let packet_sizes = t.remove("packet_sizes").map(|v| PacketSizes::parse(&v)).transpose()?;
    let pattern = PatternSpec::parse(
        &t,
        &["load", "loads", "phits_per_endpoint", "change_at", "change_to", "packet_sizes"],
    )?;
    Ok(TrafficSection { pattern, load, loads, phits_per_endpoint, change, packet_sizes, given: true })
}

/// `traffic.change_at` and `traffic.change_to`, taken out of `t`.
fn parse_change(t: &mut Table) -> Result<Option<(u64, PatternSpec)>, ConfigError> {
    let at = t.remove("change_at");
    let to = t.remove("change_to");
    let (at, to) = match (at, to) {
        (None, None) => return Ok(None),
        (Some(_), None) => {
            return Err(ConfigError::new(
                "traffic.change_to",
                "missing: `change_at` needs the pattern to change to",
            ))
        }
        (None, Some(_)) => {
            return Err(ConfigError::new(
                "traffic.change_at",
                "missing: `change_to` needs the cycle to change at",
            ))
        }
        (Some(at), Some(to)) => (at, to),
    };
    let at = match at {
        Value::Integer(n) if n >= 1 => n as u64,
        other => {
            return Err(ConfigError::new("traffic.change_at", format!("must be a cycle >= 1, got {other}")));
        }
    };
    let mut table = Table::new();
    table.insert("pattern".into(), to);
    let spec = PatternSpec::parse(&table, &[]).map_err(|e| {
        let message = if e.key == "traffic.pattern" {
            e.message
        } else {
            format!("{} (the pattern changed to takes its default settings)", e.message)
        };
        ConfigError::new("traffic.change_to", message)
    })?;
    Ok(Some((at, spec)))
}

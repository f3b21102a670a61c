//! Traffic: Bernoulli open-loop injection and destination patterns.
//!
//! Every endpoint generates a packet in each cycle with probability `load / packet_size`
//! (load in phits per cycle per endpoint; with `traffic.packet_sizes`, packets of lengths
//! drawn with their weights, `load` over their mean length); the gaps are drawn from the geometric
//! distribution, so a generation costs one event however light the load. Packets wait in
//! an unbounded source queue, so the offered load is honest past saturation.
//!
//! The destination patterns are a registry, like the routings and the topologies: a
//! pattern is a [`PatternEntry`] (name, doc, documented keys, the parser of its typed
//! settings, which build the pattern: [`PatternParams`]) in the file of its family, and one
//! line of the `pattern_registry!` list below declares the file and puts the entry in
//! [`PATTERNS`] (ARCHITECTURE.md, "Adding a routing, a topology, a pattern"). The
//! `[traffic]` table is read into a [`PatternSpec`], which builds the [`Pattern`] the
//! endpoints draw destinations from. Each family's file cites where its patterns come from.

mod pattern;
mod sizes;
#[cfg(test)]
mod testing;

pub use pattern::{hot_spot_strength, parse_as, Pattern, PatternEntry, PatternError, PatternParams};
pub use sizes::PacketSizes;

use base::rng::{unit, Rng};
use base::settings::{names, unknown, ConfigError};
use std::fmt;
use std::sync::Arc;
use toml::{Table, Value};
use topology::Network;

/// Declares each family's module and lists the patterns it defines in [`PATTERNS`]:
/// adding a pattern is its entry in a family's file (or a new file) plus its name here.
macro_rules! pattern_registry {
    ($($module:ident => [$($entry:ident),+],)+) => {
        $(pub mod $module;)+

        /// Every pattern `traffic.pattern` accepts, in the order `xnet list` shows them.
        pub const PATTERNS: &[PatternEntry] = &[$($($module::$entry,)+)+];
    };
}

pattern_registry! {
    random => [UNIFORM, RANDOM_PERMUTATION],
    group => [GROUP_SHIFT],
    bits => [BIT_REVERSAL, TRANSPOSE],
    coordinates => [TORNADO, DIMENSION_COMPLEMENT_REVERSE, REGULAR_PERMUTATION_TO_NEIGHBOUR],
    hot_spot => [HOT_SPOT],
}

/// The pattern named `name`.
pub fn find(name: &str) -> Option<&'static PatternEntry> {
    PATTERNS.iter().find(|p| p.name == name)
}

/// The destination pattern of a `[traffic]` table: its entry and its checked settings.
#[derive(Clone)]
pub struct PatternSpec {
    entry: &'static PatternEntry,
    params: Arc<dyn PatternParams>,
}

impl PatternSpec {
    /// Reads `traffic.pattern` and the pattern's keys from `table`, the `[traffic]` table
    /// without `others`, the keys the caller reads itself (named in the error for a key
    /// that nobody reads). Unknown names, keys and wrong types are errors naming the key.
    pub fn parse(table: &Table, others: &[&str]) -> Result<Self, ConfigError> {
        let known = || PATTERNS.iter().map(|p| p.name);
        let entry = match table.get("pattern") {
            Some(Value::String(name)) => {
                find(name).ok_or_else(|| unknown("traffic.pattern", name, known()))?
            }
            Some(other) => {
                return Err(ConfigError::new(
                    "traffic.pattern",
                    format!("must be a string, got {}", other.type_str()),
                ))
            }
            None => {
                return Err(ConfigError::new(
                    "traffic.pattern",
                    format!("missing; known: {}", names(known())),
                ))
            }
        };
        let settings: Table =
            table.iter().filter(|(k, _)| *k != "pattern").map(|(k, v)| (k.clone(), v.clone())).collect();
        if let Some(extra) = settings.keys().next().filter(|_| entry.settings.is_empty()) {
            // Said in the words of `[traffic]` rather than serde's "there are no fields".
            let allowed: Vec<&str> = std::iter::once("pattern").chain(others.iter().copied()).collect();
            return Err(ConfigError::new(
                format!("traffic.{extra}"),
                format!("unknown key for pattern `{}`; allowed: {}", entry.name, allowed.join(", ")),
            ));
        }
        Ok(Self { entry, params: (entry.parse)(&settings)? })
    }

    /// Uniform traffic, the pattern of a run whose `[workload]` stands alone (it injects
    /// nothing: only the jobs do).
    pub fn uniform() -> Self {
        let entry = &random::UNIFORM;
        Self { entry, params: (entry.parse)(&Table::new()).expect("uniform has no settings") }
    }

    /// The pattern's entry.
    pub fn entry(&self) -> &'static PatternEntry {
        self.entry
    }

    /// `(the hot endpoint, the fraction sent to it)` of a hot spot pattern.
    pub fn hot_spot(&self) -> Option<(u32, f64)> {
        self.params.hot_spot()
    }

    /// Builds the pattern for `net`; random patterns are drawn from `seed`. A fixed map
    /// that sends every endpoint to itself (tornado on sides of 2, bit reversal on 2
    /// endpoints) is refused, naming the pattern and the network.
    pub fn build(&self, net: &Network, seed: u64) -> Result<Pattern, PatternError> {
        if net.num_endpoints() < 2 {
            return Err(PatternError::new("pattern", "needs at least 2 endpoints"));
        }
        let pattern = self.params.build(net, seed)?;
        if let Pattern::Map(map) = &pattern {
            if map.iter().enumerate().all(|(e, &d)| e as u32 == d) {
                let needs = match self.entry.name {
                    "tornado" => {
                        "a side of at least 3: a coordinate advances by ceil(k/2) - 1, which is 0 for k = 2"
                    }
                    "bit_reversal" | "transpose" => "at least 4 endpoints",
                    _ => "a larger network",
                };
                return Err(PatternError::new(
                    "pattern",
                    format!(
                        "`{}` on {} ({} endpoints) sends every endpoint to itself, so no packet would \
                         cross the network; it needs {needs}",
                        self.entry.name,
                        net.name,
                        net.num_endpoints()
                    ),
                ));
            }
        }
        Ok(pattern)
    }
}

impl fmt::Debug for PatternSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PatternSpec")
            .field("pattern", &self.entry.name)
            .field("settings", &self.params)
            .finish()
    }
}

/// Cycles until the next Bernoulli success with probability `p` per cycle, counting the
/// current cycle as 0 (so 0 means "now"). `None` if `p == 0`.
#[inline]
pub fn geometric_gap(rng: &mut Rng, p: f64) -> Option<u64> {
    if p <= 0.0 {
        return None;
    }
    if p >= 1.0 {
        return Some(0);
    }
    // Inversion: floor(ln(U) / ln(1 - p)) with U in (0, 1].
    let u = 1.0 - unit(rng);
    Some((u.ln() / (-p).ln_1p()).floor() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::rng::Purpose;

    #[test]
    fn geometric_gaps_have_the_bernoulli_mean() {
        let mut rng = base::rng::stream(3, Purpose::Traffic, 0);
        let p = 0.05;
        let n = 20_000;
        let total: u64 = (0..n).map(|_| geometric_gap(&mut rng, p).unwrap() + 1).sum();
        let mean = total as f64 / n as f64;
        assert!((mean - 1.0 / p).abs() < 0.5, "{mean}");
        assert_eq!(geometric_gap(&mut rng, 0.0), None);
        assert_eq!(geometric_gap(&mut rng, 1.0), Some(0));
    }
}

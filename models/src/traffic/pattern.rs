//! What a traffic pattern is: its entry in the registry ([`PatternEntry`]: name, doc,
//! documented keys and the parser of its typed settings), the settings once parsed
//! ([`PatternParams`], which build the pattern for a network), and the built [`Pattern`]
//! that endpoints draw every packet's destination from.

use base::rng::{below, unit, Rng};
use base::settings::{typed, ConfigError, EntryDoc, Setting};
use serde::de::DeserializeOwned;
use std::fmt;
use std::sync::Arc;
use toml::Table;
use topology::{EndpointId, Network};

/// One traffic pattern in the registry.
#[derive(Clone, Copy, Debug)]
pub struct PatternEntry {
    /// Name in `traffic.pattern`.
    pub name: &'static str,
    /// What it does.
    pub doc: &'static str,
    /// Its keys in `[traffic]`, documented.
    pub settings: &'static [Setting],
    /// Reads the pattern's keys: `[traffic]` without `pattern`, `load`, `loads` and
    /// `phits_per_endpoint` ([`parse_as`] for a settings type).
    pub parse: fn(&Table) -> Result<Arc<dyn PatternParams>, ConfigError>,
}

impl PatternEntry {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: self.settings }
    }
}

/// A pattern's settings, checked: they build the pattern for a network.
pub trait PatternParams: fmt::Debug + Send + Sync {
    /// Builds the pattern for `net` (at least 2 endpoints); random patterns are drawn from
    /// `seed`. A pattern that does not fit the network is an error naming the key.
    fn build(&self, net: &Network, seed: u64) -> Result<Pattern, PatternError>;

    /// For a pattern that sends a fraction of every endpoint's packets to one endpoint:
    /// `(that endpoint, the fraction)`.
    fn hot_spot(&self) -> Option<(u32, f64)> {
        None
    }
}

/// The hot spot's strength: the rate offered to the hot endpoint's link, as a multiple of
/// the link's rate (one phit a cycle), when `endpoints` endpoints offer `load` phits a cycle
/// each and send `fraction` of it to the hot endpoint (the rest uniformly to the others):
/// `load x (fraction x (endpoints - 1) + 1 - fraction)`. Above 1 the hot link cannot keep
/// up and a congestion tree grows behind it.
pub fn hot_spot_strength(fraction: f64, load: f64, endpoints: u64) -> f64 {
    load * (fraction * endpoints.saturating_sub(1) as f64 + 1.0 - fraction)
}

/// The parser of a pattern whose settings are `T` (a struct with `deny_unknown_fields`,
/// empty for a pattern without settings): errors name `traffic.key`.
pub fn parse_as<T: PatternParams + DeserializeOwned + 'static>(
    table: &Table,
) -> Result<Arc<dyn PatternParams>, ConfigError> {
    Ok(Arc::new(typed::<T>("traffic", table)?))
}

/// A built destination pattern.
#[derive(Clone, Debug)]
pub enum Pattern {
    /// Uniform over the other endpoints.
    Uniform {
        /// Number of endpoints.
        n: u32,
    },
    /// A fixed map from source to destination.
    Map(Vec<EndpointId>),
    /// A fixed map for a fraction of the packets, uniform for the others (a mix).
    PartMap {
        /// Number of endpoints.
        n: u32,
        /// Probability that a packet follows the map.
        fraction: f64,
        /// Source to destination.
        map: Vec<EndpointId>,
    },
    /// One pattern until cycle `at`, another from then on (a transient).
    Phased {
        /// First cycle of the second pattern.
        at: u64,
        /// The pattern before.
        before: Box<Pattern>,
        /// The pattern from `at` on.
        after: Box<Pattern>,
    },
    /// Hot spot.
    HotSpot {
        /// Number of endpoints.
        n: u32,
        /// Probability of the hot destination.
        fraction: f64,
        /// The hot destination.
        hot: EndpointId,
    },
}

impl Pattern {
    /// The fixed map in which each of the `n` endpoints `e` sends to `f(e)`.
    pub fn map(n: u32, f: impl Fn(EndpointId) -> EndpointId) -> Self {
        Pattern::Map((0..n).map(f).collect())
    }

    /// Destination of the next packet from `src`, generated at cycle `now`.
    #[inline]
    pub fn destination(&self, src: EndpointId, now: u64, rng: &mut Rng) -> EndpointId {
        let uniform = |n: u32, rng: &mut Rng| {
            let d = below(rng, n as u64 - 1) as u32;
            if d >= src {
                d + 1
            } else {
                d
            }
        };
        match self {
            Pattern::Uniform { n } => uniform(*n, rng),
            Pattern::Map(m) => m[src as usize],
            Pattern::PartMap { n, fraction, map } => {
                if unit(rng) < *fraction {
                    map[src as usize]
                } else {
                    uniform(*n, rng)
                }
            }
            Pattern::Phased { at, before, after } => {
                if now < *at {
                    before.destination(src, now, rng)
                } else {
                    after.destination(src, now, rng)
                }
            }
            Pattern::HotSpot { n, fraction, hot } => {
                if unit(rng) < *fraction {
                    *hot
                } else {
                    uniform(*n, rng)
                }
            }
        }
    }
}

/// A pattern that does not fit the network; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("traffic.{key}: {message}")]
pub struct PatternError {
    /// The offending key.
    pub key: String,
    /// What is wrong.
    pub message: String,
}

impl PatternError {
    /// The error naming `traffic.key`.
    pub fn new(key: &str, message: impl Into<String>) -> Self {
        PatternError { key: key.into(), message: message.into() }
    }
}

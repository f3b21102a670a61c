//! What a topology family is: parameters that size and build a network ([`Family`]), and
//! its entry in the registry ([`TopologyEntry`]: name, doc, documented keys, parser).

use crate::network::{Network, NetworkSize, TopologyError};
use base::settings::{typed, ConfigError, EntryDoc, FileKey, Setting};
use serde::de::DeserializeOwned;
use toml::Table;

/// A topology family's checked parameters.
pub trait Family: Send + Sync {
    /// The network's counts, checked, without building it (instant even for networks too
    /// large to build).
    fn size(&self) -> Result<NetworkSize, TopologyError>;
    /// Builds the network; `seed` is the run's seed (random families' default).
    fn build(&self, seed: u64) -> Result<Network, TopologyError>;
}

/// Implements [`Family`] for a family's parameters whose module has `size(&P)` and
/// `build(&P)` (built without the seed): the families' shared forwarding, written once.
macro_rules! family_from_fns {
    ($params:ty) => {
        impl $crate::family::Family for $params {
            fn size(&self) -> Result<$crate::NetworkSize, $crate::TopologyError> {
                size(self)
            }
            fn build(&self, _seed: u64) -> Result<$crate::Network, $crate::TopologyError> {
                build(self)
            }
        }
    };
}
pub(crate) use family_from_fns;

/// One topology family in the registry.
#[derive(Clone, Copy)]
pub struct TopologyEntry {
    /// Name in `topology.kind`.
    pub name: &'static str,
    /// What it is.
    pub doc: &'static str,
    /// Its keys in `[topology]`, documented (besides [`COMMON_KEYS`](crate::registry::COMMON_KEYS)).
    pub settings: &'static [Setting],
    /// The keys among `settings` that name a file, and the keys that take its text (`&[]`
    /// for families built from parameters alone): the `xnet` command reads each file into
    /// its contents key when this family is selected.
    pub files: &'static [FileKey],
    /// Parses `[topology]` without `kind` and the common keys.
    pub parse: fn(&Table) -> Result<Box<dyn Family>, ConfigError>,
}

impl TopologyEntry {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc { name: self.name, doc: self.doc, details: Vec::new(), settings: self.settings }
    }
}

/// The parser of a family whose parameters are `T`: errors name `topology.key`.
pub fn parse_as<T: Family + DeserializeOwned + 'static>(
    table: &Table,
) -> Result<Box<dyn Family>, ConfigError> {
    Ok(Box::new(typed::<T>("topology", table)?))
}

/// The keys every family with switches in a grid or graph shares.
pub(crate) const LATENCY: Setting =
    Setting { key: "link_latency", default: "1", doc: "cycles of a switch-to-switch link, >= 1" };
/// The latency of endpoint links.
pub(crate) const TERMINAL_LATENCY: Setting =
    Setting { key: "terminal_latency", default: "1", doc: "cycles of an endpoint-to-switch link, >= 1" };
/// Endpoints per switch.
pub(crate) const ENDPOINTS_PER_SWITCH: Setting = Setting {
    key: "endpoints_per_switch",
    default: "required",
    doc: "endpoints attached to every switch, >= 1",
};

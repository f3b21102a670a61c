//! The routing registry: every routing's name, doc, typed settings, constructor, default
//! VC policy, whether it needs the intact topology, and its memory model.
//!
//! A routing lives in one file that defines its [`RoutingEntry`] (a `pub const`), and
//! one line of the `routing_registry!` list in the crate root (`lib.rs`) declares the module and
//! puts its entries in [`ROUTINGS`](crate::ROUTINGS): adding a routing is that file plus that line (see
//! ARCHITECTURE.md, "Adding a routing"). Config validation, `xnet list`, the errors that
//! name known routings and docs/configuration.md's tables are generated from the list.
//!
//! What the deadlock verifier needs from a routing is declared by the built routing itself
//! ([`Routing::reads`] and [`Routing::initial_states`]), since it may depend on what was
//! built.

use crate::route::{Routing, VcPolicy};
use crate::RoutingError;
use base::rng::{stream, Purpose, Rng};
use base::settings::ConfigError;
use base::settings::{EntryDoc, FileKey, Setting};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use std::sync::Arc;
use toml::Table;
use topology::{Network, SwitchId};

/// One routing in the registry.
#[derive(Clone, Copy)]
pub struct RoutingEntry {
    /// Name in `routing.algorithm`.
    pub name: &'static str,
    /// What it does, in a sentence or two.
    pub doc: &'static str,
    /// The topologies it runs on, for the docs (`any`, `dragonfly`, ...).
    pub topologies: &'static str,
    /// The VCs its own VC assignment needs, for the docs.
    pub vcs: &'static str,
    /// Its settings: the keys of `[routing.NAME]`.
    pub settings: Settings,
    /// The VC policy used when the config says `routing` (the default): the routing's
    /// own assignment, or the ladder for routings whose own single VC is not deadlock-free
    /// on an arbitrary graph.
    pub default_vc_policy: VcPolicy,
    /// Computed from the topology's shape (coordinates, groups) rather than from its
    /// links: refuses networks with failed links.
    pub needs_intact_topology: bool,
    /// Bytes of routing state on a rank, at the peak of the build (see [`StateSize`]).
    pub state_bytes: fn(&StateSize) -> u64,
    /// Builds the routing; errors name the configuration key to change.
    pub build: fn(&BuildContext<'_>) -> Result<Arc<dyn Routing>, RoutingError>,
}

/// Entries are one per name in the registry: two are the same routing when their names are.
impl PartialEq for RoutingEntry {
    fn eq(&self, other: &RoutingEntry) -> bool {
        self.name == other.name
    }
}

/// A routing entry is known by its name (a configuration holds its entry).
impl std::fmt::Debug for RoutingEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RoutingEntry({})", self.name)
    }
}

impl RoutingEntry {
    /// As users see it.
    pub fn doc(&self) -> EntryDoc {
        EntryDoc {
            name: self.name,
            doc: self.doc,
            details: vec![("topologies", self.topologies), ("VCs (own assignment)", self.vcs)],
            settings: self.settings.keys,
        }
    }

    /// Checks a `[routing.NAME]` table: unknown keys and wrong types are errors naming
    /// `routing.NAME.key`.
    pub fn check_settings(&self, table: &Table) -> Result<(), ConfigError> {
        (self.settings.check)(table, &format!("routing.{}", self.name))
    }
}

/// The typed settings of an entry: documented keys, the keys among them that name files
/// (none unless declared with [`Settings::with_files`]), and the check of a table against
/// the type that the constructor reads (through [`BuildContext::settings`]).
#[derive(Clone, Copy)]
pub struct Settings {
    /// The keys, documented.
    pub keys: &'static [Setting],
    /// The keys that name a file and the keys that take its text: the `xnet` command reads
    /// the file into the contents key when this routing is selected, and the constructor
    /// reads the contents key from its settings.
    pub files: &'static [FileKey],
    check: fn(&Table, &str) -> Result<(), ConfigError>,
}

/// The settings type of entries that have none: any key is unknown.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoSettings {}

impl Settings {
    /// No settings: `[routing.NAME]`, if given, must be empty.
    pub const NONE: Settings = Settings { keys: &[], files: &[], check: check_as::<NoSettings> };

    /// Settings of type `T` (a struct with `deny_unknown_fields` and defaults for every
    /// key), documented by `keys`.
    pub const fn typed<T: DeserializeOwned>(keys: &'static [Setting]) -> Settings {
        Settings { keys, files: &[], check: check_as::<T> }
    }

    /// These settings, of which `files` name files (each key documented in `keys`).
    pub const fn with_files(self, files: &'static [FileKey]) -> Settings {
        Settings { files, ..self }
    }
}

fn check_as<T: DeserializeOwned>(table: &Table, prefix: &str) -> Result<(), ConfigError> {
    base::settings::typed::<T>(prefix, table).map(drop)
}

/// What a routing's memory model sees of a run (all counts for the whole network unless
/// said otherwise).
#[derive(Clone, Copy, Debug)]
pub struct StateSize {
    /// Switches.
    pub switches: u64,
    /// Network ports per switch (terminal ports excluded), rounded up.
    pub degree: u64,
    /// Switch hops of the longest minimal route.
    pub hops: u64,
    /// `router.vcs`.
    pub vcs: u64,
    /// Switches whose decisions this rank takes.
    pub own_switches: u64,
    /// The network is a HyperX, torus or mesh without failed links: minimal next hops come
    /// from coordinates.
    pub coordinates: bool,
    /// Endpoints.
    pub endpoints: u64,
    /// The routing's tables have a column per destination endpoint (its `destinations`
    /// setting is `endpoints`, [`crate::layered::Destinations`]), not per switch.
    pub per_endpoint: bool,
}

impl StateSize {
    /// A small record per switch: algorithmic routings.
    pub fn per_switch(&self) -> u64 {
        self.switches * 64
    }

    /// Ordered switch pairs.
    pub fn pairs(&self) -> u64 {
        self.switches.saturating_mul(self.switches)
    }

    /// Entries of a table engine's tables: switches x destinations (endpoints where the
    /// routing routes each on its own, [`StateSize::per_endpoint`], else switches).
    pub fn table_entries(&self) -> u64 {
        self.switches.saturating_mul(if self.per_endpoint { self.endpoints } else { self.switches })
    }

    /// A table-based engine's peak while building: bytes per table entry (a switch and a
    /// destination, [`StateSize::table_entries`]), per entry and hop of the longest minimal
    /// route (engines that keep every pair's path or its channel dependencies), and per
    /// entry and VC (one instance per VC). Measured on 8x8x8 and 16x16x8 tori (BENCHMARKS.md,
    /// "Memory estimate"). Saturating: a table of billions of switches is beyond any
    /// machine anyway.
    pub fn table(&self, per_pair: u64, per_pair_hop: u64, per_pair_vc: u64) -> u64 {
        self.table_entries()
            .saturating_mul(per_pair + per_pair_hop * self.hops + per_pair_vc * self.vcs)
            .saturating_add(self.per_switch())
    }
}

/// The state of an algorithmic routing: a record per switch.
pub fn per_switch_state(size: &StateSize) -> u64 {
    size.per_switch()
}

/// The state of a routing over exact distances ([`super::minimal::Minimal`] with exact
/// distances): coordinates, or a byte per switch pair.
pub fn exact_distance_state(size: &StateSize) -> u64 {
    if size.coordinates {
        size.per_switch()
    } else {
        size.pairs().saturating_add(size.per_switch())
    }
}

/// What a routing's constructor gets.
pub struct BuildContext<'a> {
    /// The entry being built.
    pub entry: &'static RoutingEntry,
    /// The network.
    pub net: &'a Network,
    /// Each endpoint's switch.
    pub endpoint_switch: &'a Arc<Vec<SwitchId>>,
    /// A rank's own switches: routings with per-switch state may build only what
    /// decisions there need (`None`: every switch).
    pub switches: Option<&'a [SwitchId]>,
    /// The VCs the routing may use: `router.vcs` less the escape VCs.
    pub vcs: u8,
    /// The VC policy in force.
    pub vc_policy: VcPolicy,
    /// The run's seed.
    pub seed: u64,
    /// `[routing.NAME]` (empty when not given).
    pub settings: &'a Table,
    /// The escape VCs, for error messages.
    pub escape_vcs: u8,
    /// `routing.selection`: with `balanced`, routings that pick one of several equal paths
    /// when building may list them all, for the selection to balance per pair.
    pub selection: super::Selection,
}

impl BuildContext<'_> {
    /// The entry's settings as `T`; errors name `routing.NAME.key`.
    pub fn settings<T: DeserializeOwned>(&self) -> Result<T, RoutingError> {
        Ok(base::settings::typed(&format!("routing.{}", self.entry.name), self.settings)?)
    }

    /// A `root` setting checked against the network: the switch must exist.
    pub fn root(&self, root: Option<u32>) -> Result<Option<SwitchId>, RoutingError> {
        check_root(self.net, root, &format!("routing.{}.root", self.entry.name))
    }

    /// The error for a topology the routing does not handle (named under
    /// `routing.algorithm`).
    pub fn needs(&self, what: &str) -> RoutingError {
        RoutingError::algorithm(format!("`{}` needs a {what} topology", self.entry.name))
    }

    /// A layered routing's layers must fit in the VCs when it assigns the VCs itself.
    pub fn check_layers(&self, layers: u8) -> Result<(), RoutingError> {
        if self.vc_policy == VcPolicy::Routing && layers > self.vcs {
            return Err(RoutingError::new(
                "router.vcs",
                format!(
                    "{} needs {layers} layers, {} available (one VC per layer){}",
                    self.entry.name,
                    self.vcs,
                    escape_note(self.escape_vcs)
                ),
            ));
        }
        Ok(())
    }

    /// The error of a first-fit layering that stopped at the `placed + 1`-th of `total`
    /// units (`what`: pair or path), which fitted none of `limit` layers.
    pub fn too_many_layers(&self, limit: usize, what: &str, placed: usize, total: usize) -> RoutingError {
        RoutingError::new(
            "router.vcs",
            format!(
                "{} needs more than {limit} layers, {} available (one VC per layer): {what} {} of {total} \
                 fitted none of them (the search stops there)",
                self.entry.name,
                self.vcs,
                placed + 1
            ),
        )
    }

    /// The routing's random stream (for random choices made while building).
    pub fn rng(&self) -> Rng {
        stream(self.seed, Purpose::Routing, u64::MAX)
    }
}

/// `root`, if given, must be a switch of `net`; errors name `key`.
pub fn check_root(net: &Network, root: Option<u32>, key: &str) -> Result<Option<SwitchId>, RoutingError> {
    if let Some(r) = root.filter(|&r| r as usize >= net.num_switches()) {
        return Err(RoutingError::new(
            key,
            format!("switch {r} does not exist ({} switches)", net.num_switches()),
        ));
    }
    Ok(root)
}

/// Explains a VC count reduced by the escape subnetwork.
pub fn escape_note(escape_vcs: u8) -> String {
    match escape_vcs {
        0 => String::new(),
        e => format!(" after the {e} escape VCs (routing.escape_vcs)"),
    }
}

/// The `root` setting shared by the Up*/Down*-based routings.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootSetting {
    /// Root switch; `None`: the least eccentric switch, ties to the lowest id.
    #[serde(default)]
    pub root: Option<u32>,
}

/// The documentation of [`RootSetting`]'s key, for entries whose root is the BFS levels'.
pub const ROOT_KEYS: &[Setting] = &[Setting {
    key: "root",
    default: "least eccentric switch (lowest id on ties)",
    doc: "switch id of the root of the BFS levels",
}];

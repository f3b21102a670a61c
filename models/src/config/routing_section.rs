//! `[routing]`: the keys every routing shares, and the `[routing.NAME]` settings tables,
//! each checked against its routing's registry entry; the flat keys of earlier versions
//! are refused with their new spelling.

use base::settings::{names, typed, unknown, ConfigError};
use routing::{Selection, VcPolicy};
use serde::Deserialize;
use std::collections::BTreeMap;
use toml::{Table, Value};

/// `[routing]`: the keys every routing shares, and the `[routing.NAME]` settings tables.
#[derive(Clone, Debug, PartialEq)]
pub struct RoutingSection {
    /// Routing algorithm; see `xnet list` (checked against the registry).
    pub algorithm: String,
    /// How to choose among candidates: `first`, `random` or `adaptive` (default).
    pub selection: Selection,
    /// The VC policy (default `routing`: the routing's own, see [`RoutingEntry`](crate::routing::RoutingEntry)).
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

pub(super) fn parse_routing(doc: &Table) -> Result<RoutingSection, ConfigError> {
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

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
    /// The routing `algorithm` names, its registry entry (see `xnet list routings`).
    pub algorithm: &'static routing::RoutingEntry,
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
    /// ECMP's flows per pair of endpoints for an application's messages: message `k`
    /// from one rank to another hashes as flow `k mod ecmp_flows` of the pair (NCCL's
    /// channels and queue pairs per connection, each its own 5-tuple in RoCE). 1 (the
    /// default): one flow per pair.
    pub ecmp_flows: u32,
    /// `[routing.NAME]` tables by routing name, each checked against its entry's settings.
    /// Tables of routings other than `algorithm` may be given (a config that switches
    /// algorithm with `--set` keeps them) and are checked but not used.
    pub settings: BTreeMap<String, Table>,
}

/// Declares the keys of `[routing]` shared by every routing once: the struct they are
/// read into and the list of their names (for "allowed: ..." and for telling them from
/// the per-routing tables).
macro_rules! routing_keys {
    ($($(#[$attr:meta])* $name:ident: $ty:ty,)+) => {
        /// The keys of `[routing]` shared by every routing.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RoutingKeys {
            $($(#[$attr])* $name: $ty,)+
        }

        /// Their names, in declaration order.
        const ROUTING_KEYS: &[&str] = &[$(stringify!($name)),+];
    };
}

routing_keys! {
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
    #[serde(default = "one_flow")]
    ecmp_flows: u32,
}

fn one_flow() -> u32 {
    1
}

/// The most `routing.ecmp_flows` (NCCL's channels times queue pairs stay well below).
const MAX_ECMP_FLOWS: u32 = 1024;

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
        } else if ROUTING_KEYS.contains(&key.as_str()) {
            shared.insert(key.clone(), value.clone());
        } else {
            return Err(ConfigError::new(
                format!("routing.{key}"),
                format!(
                    "unknown key; allowed: {}, and a table [routing.NAME] of settings per routing \
                     (NAME one of: {})",
                    ROUTING_KEYS.join(", "),
                    names(routing::ROUTINGS.iter().map(|r| r.name))
                ),
            ));
        }
    }
    let k: RoutingKeys = typed("routing", &shared)?;
    let Some(algorithm) = routing::find(&k.algorithm) else {
        return Err(unknown("routing.algorithm", &k.algorithm, routing::ROUTINGS.iter().map(|r| r.name)));
    };
    if k.ecmp_flows == 0 || k.ecmp_flows > MAX_ECMP_FLOWS {
        return Err(ConfigError::new(
            "routing.ecmp_flows",
            format!("must be in 1..={MAX_ECMP_FLOWS}, got {}", k.ecmp_flows),
        ));
    }
    if k.ecmp_flows > 1 && k.selection != Selection::Ecmp {
        return Err(ConfigError::new(
            "routing.ecmp_flows",
            format!(
                "flows per pair are hashed by selection = \"ecmp\" only, and routing.selection is \"{}\" \
                 (set ecmp_flows = 1, or selection = \"ecmp\")",
                k.selection.name()
            ),
        ));
    }
    Ok(RoutingSection {
        algorithm,
        selection: k.selection,
        ecmp_flows: k.ecmp_flows,
        vc_policy: k.vc_policy,
        escape_vcs: k.escape_vcs,
        escape_root: k.escape_root,
        escape_shortcuts: k.escape_shortcuts,
        settings,
    })
}

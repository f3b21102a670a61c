//! DL: Descending Layers routing. Koibuchi, Jouraku, Watanabe, Amano, "Descending Layers
//! Routing: A Deadlock-Free Deterministic Routing Using Virtual Channels in System Area
//! Networks with Irregular Topologies", ICPP 2003, as the routing survey describes it
//! (Flich et al., IEEE TPDS 23(3), 2012, sections 2, 5.2 and 7): like TOR, a packet moves
//! to the next virtual channel layer whenever its route takes a turn that a base rule-
//! driven routing forbids, but the base may be Up*/Down* (DL-UD) or L-turn (DL-LTURN).
//!
//! * Layers: up to `router.vcs` of them (the escape VCs excepted); DL reports as needed
//!   the layers its shortest routes reach, which may be fewer. Within a layer only the base
//!   routing's allowed turns are taken, so each layer's dependencies are acyclic, and a
//!   packet only climbs: deadlock-free. In the top layer no forbidden turn is left, so the
//!   routes there are the base routing's legal (possibly non-minimal) ones: DL is TOR
//!   bounded by the VCs, where xnet's `tor` refuses a network whose minimal routes need
//!   more layers than there are VCs.
//! * Routes: for each pair, the shortest routes over the states (channel, layer), all
//!   listed as candidates (`turns.rs`); on the survey's meshes and tori they are minimal
//!   with 2 VCs, as in its Table 5.
//! * Path selection: the survey notes that DL's own traffic balancing makes a large
//!   difference (its Table 4, DL against DL*); the paper's method is not described there,
//!   so `routing.selection = "balanced"` (`balanced.rs`) stands in for it.
//!
//! The base turns: Up*/Down* over BFS levels from the root (a channel is up when it leads
//! to a smaller `(level, id)`; no down -> up turn), or L-turn's (`lturn.rs`). As the survey
//! observes, DL-UD allows the same routes as TOR; the two differ in path selection.

use super::lturn::lturn_turns;
use super::registry::{RoutingEntry, Settings};
use super::turns::{terminals, Channels, TurnRouting};
use super::updown::root_or_central;
use super::VcPolicy;
use crate::RoutingError;
use base::settings::Setting;
use serde::Deserialize;
use std::sync::Arc;
use topology::metrics::bfs;
use topology::{Network, SwitchId};

/// The rule-driven routing whose forbidden turns move a packet up a layer.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Base {
    /// Up*/Down* over BFS levels (DL-UD).
    #[default]
    UpDown,
    /// L-turn (DL-LTURN).
    Lturn,
}

impl Base {
    fn name(self) -> &'static str {
        match self {
            Base::UpDown => "up_down",
            Base::Lturn => "lturn",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DlSettings {
    #[serde(default)]
    base: Base,
    #[serde(default)]
    root: Option<u32>,
}

/// DL on `net` with `layers` layers over `base` from `root` (default: least eccentric).
pub fn build(
    net: &Network,
    base: Base,
    root: Option<SwitchId>,
    layers: u8,
    endpoint_switch: &[SwitchId],
) -> Result<TurnRouting, RoutingError> {
    let root = root_or_central(net, root)?;
    let channels = Channels::new(net);
    let allowed = match base {
        Base::UpDown => {
            let level = bfs(net, root);
            channels.up_down_turns(|s| (level[s as usize], s))
        }
        Base::Lturn => lturn_turns(net, &channels, root),
    };
    let forbidden = channels.forbidden(&allowed);
    let terminals = terminals(endpoint_switch);
    let summary =
        format!("dl over {}: {layers} layers, {forbidden} turns move up a layer, root {root}", base.name());
    TurnRouting::layered(net, channels, &allowed, layers, &terminals, summary)
}

/// `dl` in the routing registry.
pub const DL: RoutingEntry = RoutingEntry {
    name: "dl",
    doc: "DL (Descending Layers): shortest routes where a turn the base routing (Up*/Down* or L-turn) forbids moves the packet up one VC layer; router.vcs layers, the top one the base's legal routes only",
    topologies: "any",
    vcs: "the layers its shortest routes reach, at most router.vcs (1: the base routing itself)",
    settings: Settings::typed::<DlSettings>(&[
        Setting {
            key: "base",
            default: "up_down",
            doc: "the rule-driven routing whose forbidden turns change layer: up_down (DL-UD) or lturn (DL-LTURN)",
        },
        Setting { key: "root", default: "least eccentric switch (lowest id on ties)", doc: "switch id of the root of the base routing's BFS tree" },
    ]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| super::turns::state_bytes(size, size.vcs),
    build: |ctx| {
        let s: DlSettings = ctx.settings()?;
        let layers = ctx.vcs.max(1);
        Ok(Arc::new(build(ctx.net, s.base, ctx.root(s.root)?, layers, ctx.endpoint_switch)?))
    },
};

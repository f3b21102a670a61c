//! LTURN: L-turn routing. Koibuchi, Funahashi, Jouraku, Amano, "L-Turn Routing: An
//! Adaptive Routing in Irregular Networks", ICPP 2001, as the routing survey describes it
//! (Flich et al., IEEE TPDS 23(3), 2012, sections 2 and 4.1): a breadth-first spanning
//! tree is drawn as a two-dimensional "left-right" graph, every link gets a left/right and
//! an up/down direction, and turns between those directions are forbidden as in the turn
//! model.
//!
//! The coordinates (the survey's Fig. 3): `y` is a switch's BFS level from the root and
//! `x` its position in a preorder walk of the BFS tree (each switch's parent is its first
//! neighbour one level up; children in id order), so a tree link always leads left-up to
//! the parent and right-down to a child. A channel `a -> b` is *left* when `x(b) < x(a)`,
//! else *right*; *up* when `(y(b), x(b)) < (y(a), x(a))`, else *down*: a link between two
//! switches of one level (a horizontal link) is directed by `x`, which is how the left-
//! right graph extends the up-down tree. Four classes: left-up, left-down, right-up and
//! right-down.
//!
//! Our reading of the rule, which the survey only names ("left-up first"): no turn from a
//! right channel to a left one (so only the left/right component enters it; it is
//! Up*/Down* over the tree's preorder rather than over BFS levels). Left channels first,
//! then right ones:
//! each phase moves `x` one way, so no cycle can form on any network, and a tree path
//! (left-up to the common ancestor, then right-down) is always legal. We chose it over
//! the alternatives we measured on the survey's meshes and tori and on random regular
//! graphs:
//! * Up first (no down -> up turn: Up*/Down* with `x` breaking level ties) gives the
//!   survey's UD distances (8x8 torus 5.50, 16x8 8.13); left first gives 5.39 and 8.01.
//! * Rules that forbid fewer class turns (for example only RU->LU, RD->LU and RD->LD,
//!   routes 5.39 on the 8x8 torus as well) left cycles on random regular graphs: the
//!   coordinates alone cannot make a four-direction turn model safe on an irregular graph.
//! * The L-turn paper then *releases* forbidden turns that close no dependency cycle. With
//!   this rule none can be released: a forbidden turn `a -> b -> c` always closes a cycle
//!   through the legal tree route from `c` back to `a` (0 released on every network we
//!   tried), so there is no release step.
//!
//! The survey's LTURN is shorter on tori (8x4: 4.14, 8x8: 5.32, 16x8: 7.47, against 4.25,
//! 5.39 and 8.01 here) and not minimal on the 8x8 mesh (6.27; minimal here), so its rule
//! is not this one; docs/studies/survey.md has the rows. Routes are the shortest legal
//! ones, all listed as candidates (`turns.rs`); the survey balances them with a path
//! selection, here `routing.selection = "balanced"`. `dl` uses these turns as its base.

use super::registry::{RootSetting, RoutingEntry, Settings, ROOT_KEYS};
use super::turns::{terminals, Channels, TurnRouting};
use super::updown::root_or_central;
use super::VcPolicy;
use crate::RoutingError;
use std::sync::Arc;
use topology::metrics::bfs;
use topology::{Network, SwitchId};

/// The `x` coordinate of every switch: its position in a preorder walk of the BFS tree
/// from `root` (children in id order; `u32::MAX` where unreachable).
fn preorder(net: &Network, channels: &Channels, root: SwitchId) -> Vec<u32> {
    let n = net.num_switches();
    let mut children: Vec<Vec<SwitchId>> = vec![Vec::new(); n];
    for (s, up) in channels.tree_up(&bfs(net, root)).into_iter().enumerate() {
        if let Some(c) = up {
            children[channels.head(c) as usize].push(s as SwitchId);
        }
    }
    let mut x = vec![u32::MAX; n];
    let mut next = 0;
    let mut stack = vec![root];
    while let Some(s) = stack.pop() {
        x[s as usize] = next;
        next += 1;
        stack.extend(children[s as usize].iter().rev());
    }
    x
}

/// The allowed turns of the L-turn rule (no right -> left turn) on `channels` from `root`:
/// Up*/Down* over the preorder, a left channel being an up one. Only the left/right
/// component of a channel's direction enters the rule.
pub(crate) fn lturn_turns(net: &Network, channels: &Channels, root: SwitchId) -> Vec<bool> {
    let x = preorder(net, channels, root);
    channels.up_down_turns(|s| x[s as usize])
}

/// LTURN on `net` from `root` (default: least eccentric switch).
pub fn build(
    net: &Network,
    root: Option<SwitchId>,
    endpoint_switch: &[SwitchId],
) -> Result<TurnRouting, RoutingError> {
    let root = root_or_central(net, root)?;
    let channels = Channels::new(net);
    let allowed = lturn_turns(net, &channels, root);
    let forbidden = channels.forbidden(&allowed);
    let terminals = terminals(endpoint_switch);
    let summary = format!("lturn: {forbidden} turns forbidden (right -> left), root {root}");
    TurnRouting::new(net, channels, &allowed, &terminals, summary)
}

/// `lturn` in the routing registry.
pub const LTURN: RoutingEntry = RoutingEntry {
    name: "lturn",
    doc: "LTURN (L-turn), our reading: no turn from a right channel to a left one, left and right by a BFS tree's preorder (the left-right graph); shortest legal routes, 1 VC",
    topologies: "any",
    vcs: "1",
    settings: Settings::typed::<RootSetting>(ROOT_KEYS),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| super::turns::state_bytes(size, 1),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        Ok(Arc::new(build(ctx.net, ctx.root(s.root)?, ctx.endpoint_switch)?))
    },
};

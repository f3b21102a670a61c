//! SMART routing: deadlock freedom by cutting the channel dependency graph where the cut
//! costs least. Cherkasova, Kotov, Rokicki, "Fibre Channel Fabrics: Evaluation and
//! Design", HICSS 1996, as the routing survey describes it (Flich et al., IEEE TPDS 23(3),
//! 2012, section 4.4, "iteration-driven" routing):
//!
//! * Every turn is allowed at first (U-turns never are); routes are the shortest legal
//!   paths (`turns.rs`).
//! * While the channel dependency graph (the allowed turns) has a cycle, every dependency
//!   of the cycle is tried as the cut, and the one after which the average legal route
//!   length (over all pairs of switches with endpoints) is smallest is forbidden. A cut
//!   that leaves a pair without a legal route is not a candidate.
//! * If every cut of some cycle would disconnect a pair, earlier cuts were poor: SMART
//!   restarts in tree mode, where the turns between links of a spanning tree (a BFS tree
//!   from the least eccentric switch) are essential and never cut. Tree mode always
//!   succeeds: a tree path needs no other turn, and the tree's turns alone form no cycle
//!   (a tree path that goes down never goes up again without a U-turn).
//!
//! Our choices where the survey is silent: the cycle cut next is the shortest cycle
//! through the first channel (in channel order) that a depth-first search finds on a
//! cycle; ties between cuts go to the first in that cycle.
//!
//! The cost is a backward BFS per destination for every candidate cut, so networks are
//! limited to [`MAX_SWITCHES`]. The survey balances SMART's paths with its own path
//! selection; here `routing.selection = "balanced"` does that.

use super::registry::{RoutingEntry, Settings};
use super::turns::{terminals, total_length, Channels, TurnRouting};
use super::VcPolicy;
use crate::RoutingError;
use base::cancel::Interrupted;
use rayon::prelude::*;
use std::sync::Arc;
use topology::metrics::{bfs, DistanceTable};
use topology::{Network, SwitchId};

/// Largest network SMART builds for.
pub const MAX_SWITCHES: usize = 256;

/// Cuts turns until the dependency graph is acyclic; `essential` turns are never cut.
/// `Ok(None)` when a cycle has no cut that keeps every pair connected. Every candidate cut
/// is a search per destination, so a stop asked for ([`base::cancel`]) is checked before
/// each candidate (the rest of the cycle's candidates are then skipped) and after each cut.
fn cut_cycles(
    channels: &Channels,
    terminals: &[SwitchId],
    essential: &[bool],
) -> Result<Option<(Vec<bool>, usize)>, Interrupted> {
    const WHAT: &str = "cutting the SMART dependency cycles";
    let mut allowed = channels.all_turns();
    let mut cuts = 0;
    while let Some(cycle) = channels.find_cycle(&allowed) {
        let best = cycle
            .par_iter()
            .enumerate()
            .filter(|&(_, &t)| !essential[t] && !base::cancel::requested())
            .filter_map(|(i, &t)| total_length(channels, &allowed, Some(t), terminals).map(|sum| (sum, i, t)))
            .min();
        base::cancel::check(WHAT)?;
        let Some(best) = best else { return Ok(None) };
        allowed[best.2] = false;
        cuts += 1;
    }
    Ok(Some((allowed, cuts)))
}

/// SMART on `net`; `endpoint_switch` gives the switches whose pairs are routed.
pub fn build(net: &Network, endpoint_switch: &[SwitchId]) -> Result<TurnRouting, RoutingError> {
    let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
    let root = super::updown::central_switch(net, &dist)?;
    let channels = Channels::new(net);
    let terminals = terminals(endpoint_switch);
    let none = vec![false; channels.turns()];
    let (allowed, cuts, mode) = match cut_cycles(&channels, &terminals, &none)? {
        Some((allowed, cuts)) => (allowed, cuts, "cuts"),
        None => {
            let essential = tree_turns(net, &channels, root);
            let (allowed, cuts) = cut_cycles(&channels, &terminals, &essential)?.ok_or_else(|| {
                RoutingError::algorithm("smart: tree mode left a pair of switches without a legal route")
            })?;
            (allowed, cuts, "cuts in tree mode (the first pass disconnected a pair)")
        }
    };
    let summary = format!(
        "smart: {cuts} dependencies {mode}, of {}",
        channels.all_turns().iter().filter(|&&a| a).count()
    );
    TurnRouting::new(net, channels, &allowed, &terminals, summary)
}

/// The turns between links of a BFS spanning tree from `root` (each switch's parent: its
/// first neighbour one level up).
fn tree_turns(net: &Network, channels: &Channels, root: SwitchId) -> Vec<bool> {
    let mut tree = vec![false; channels.len()];
    for c in channels.tree_up(&bfs(net, root)).into_iter().flatten() {
        tree[c as usize] = true;
        tree[channels.reverse(c) as usize] = true;
    }
    let mut essential = vec![false; channels.turns()];
    for c in (0..channels.len() as u32).filter(|&c| tree[c as usize]) {
        for x in channels.turns_from(c).filter(|&x| tree[x as usize]) {
            essential[channels.turn(c, x)] = true;
        }
    }
    essential
}

/// `smart` in the routing registry.
pub const SMART: RoutingEntry = RoutingEntry {
    name: "smart",
    doc: "SMART: cuts the channel dependency graph's cycles one at a time where the average legal route grows least (tree mode if a cut would disconnect); shortest legal routes, 1 VC; slow (an RRG of 128 switches of degree 8: 200 s), up to 256 switches",
    topologies: "any",
    vcs: "1",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| super::turns::state_bytes(size, 1),
    build: |ctx| {
        let n = ctx.net.num_switches();
        if n > MAX_SWITCHES {
            return Err(RoutingError::new(
                "routing.algorithm",
                format!("smart evaluates every cut of every cycle: at most {MAX_SWITCHES} switches, this network has {n}"),
            ));
        }
        Ok(Arc::new(build(ctx.net, ctx.endpoint_switch)?))
    },
};

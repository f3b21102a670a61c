//! DFS: Up*/Down*'s rule over a depth-first spanning tree. Sancho, Robles, Duato, "A New
//! Methodology to Compute Deadlock-Free Routing Tables for Irregular Networks", CANPC
//! 2000, as the routing survey describes it (Flich et al., IEEE TPDS 23(3), 2012, section
//! 5.1.1): the spanning tree comes from a depth-first search instead of a breadth-first
//! one, which leaves fewer down->up restrictions; the order in which children are explored
//! follows a heuristic that makes more minimal paths legal; and every switch is tried as
//! the root, the best kept.
//!
//! Our reading of the heuristics, which the survey does not spell out:
//! * Switches are numbered in DFS preorder; a link is up when it leads to a smaller
//!   number (tree links point up to the parent, every other link up to the switch
//!   visited first). A legal route never takes an up link after a down link.
//! * From the switch at the top of the DFS stack, the next switch visited is the
//!   unvisited neighbour with the most links to switches already visited (its links to
//!   them will all be up links, usable at the start of any route), ties to the lowest id.
//! * Every switch is tried as the root (networks of up to [`ROOT_SEARCH`] switches; above,
//!   the least eccentric), and the one with the smallest sum of shortest legal distances
//!   over the pairs of switches with endpoints is kept (ties: lowest id).
//!
//! Routes are the shortest legal ones, all listed as candidates as in `up_down`; the
//! survey balances them with a path selection (`routing.selection = "balanced"`).

use super::registry::{RootSetting, RoutingEntry, Settings};
use super::updown::{central_switch, UpDown};
use super::VcPolicy;
use crate::RoutingError;
use base::settings::Setting;
use rayon::prelude::*;
use std::sync::Arc;
use topology::metrics::DistanceTable;
use topology::{Network, SwitchId};

/// Networks up to this many switches try every root.
pub const ROOT_SEARCH: usize = 256;

/// The DFS preorder number of every switch from `root`, with the heuristic above.
fn dfs_order(net: &Network, root: SwitchId) -> Vec<u32> {
    let n = net.num_switches();
    let mut label = vec![u32::MAX; n];
    // Links from each switch to visited switches.
    let mut to_visited = vec![0u32; n];
    let mut next = 0u32;
    let mut visit = |s: SwitchId, label: &mut [u32], to_visited: &mut [u32]| {
        label[s as usize] = next;
        next += 1;
        for (_, x) in net.neighbours(s) {
            to_visited[x as usize] += 1;
        }
    };
    visit(root, &mut label, &mut to_visited);
    let mut stack = vec![root];
    while let Some(&top) = stack.last() {
        let pick = net
            .neighbours(top)
            .filter(|&(_, x)| label[x as usize] == u32::MAX)
            .map(|(_, x)| x)
            .min_by_key(|&x| (std::cmp::Reverse(to_visited[x as usize]), x));
        match pick {
            Some(x) => {
                visit(x, &mut label, &mut to_visited);
                stack.push(x);
            }
            None => {
                stack.pop();
            }
        }
    }
    label
}

/// DFS routing on `net` rooted at `root`, or at the best root (see the module docs).
pub fn build(
    net: &Network,
    root: Option<SwitchId>,
    endpoint_switch: &[SwitchId],
) -> Result<UpDown, RoutingError> {
    let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
    let central = central_switch(net, &dist)?;
    let mut terminals: Vec<SwitchId> = endpoint_switch.to_vec();
    terminals.sort_unstable();
    terminals.dedup();
    let roots: Vec<SwitchId> = match root {
        Some(r) => vec![r],
        None if net.num_switches() <= ROOT_SEARCH => (0..net.num_switches() as SwitchId).collect(),
        None => vec![central],
    };
    let scored: Vec<(u64, SwitchId)> = roots
        .par_iter()
        .map(|&r| {
            base::cancel::check("choosing the DFS root")?;
            let ud = UpDown::with_order(net, r, dfs_order(net, r))?;
            Ok((ud.total_distance(&terminals), r))
        })
        .collect::<Result<_, RoutingError>>()?;
    let (_, best) = scored.into_iter().min().expect("a root");
    UpDown::with_order(net, best, dfs_order(net, best))
}

/// `dfs` in the routing registry.
pub const DFS: RoutingEntry = RoutingEntry {
    name: "dfs",
    doc: "DFS (Sancho, Robles, Duato): Up*/Down*'s rule over a depth-first spanning tree (links up towards the switch visited first; the next switch visited is the neighbour with the most links to visited ones), the root with the shortest legal routes among all switches; shortest legal routes",
    topologies: "any",
    vcs: "1",
    settings: Settings::typed::<RootSetting>(&[Setting {
        key: "root",
        default: "the best of every switch (up to 256 switches), else the least eccentric",
        doc: "switch id of the root of the depth-first search",
    }]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    // Legal distances per pair and phase; the root search holds one per thread.
    state_bytes: |size| size.table(4, 0, 0),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        Ok(Arc::new(build(ctx.net, ctx.root(s.root)?, ctx.endpoint_switch)?))
    },
};

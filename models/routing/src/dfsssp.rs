//! DFSSSP, deadlock-free single-source shortest path routing: Domke, Hoefler, Nagel,
//! "Deadlock-Free Oblivious Routing for Arbitrary Topologies", IPDPS 2011 (as in OpenSM's
//! `dfsssp`).
//!
//! Routes: one Dijkstra per destination switch, in id order, towards it. Every directed
//! link starts with the same weight; after each destination `d` the weight of each link
//! grows by the number of (source endpoint, endpoint of `d`) pairs routed over it, so later
//! destinations avoid busy links. The original starts the weights at P^2 (P = endpoints)
//! so that balancing never lengthens a path; here the Dijkstra compares (hops, weight)
//! lexicographically, which is that rule made exact (an infinite base weight): every route
//! is a shortest path, and among those the lightest (ties: the lower switch id first).
//! The weight updates make each Dijkstra depend on all earlier ones, so the Dijkstras run
//! sequentially, as in the original. The result is a next-hop table, one port per
//! (switch, destination).
//!
//! Layers, two methods (`[routing.dfsssp] layers`):
//!
//! * `first_fit` (default): each path between switches with endpoints, in (source,
//!   destination) order, goes into the first layer whose channel dependency graph (CDG)
//!   stays acyclic with it, checked incrementally (Pearce and Kelly's dynamic topological
//!   order, `DynDag`); a new layer is opened when none does, and with a limit (the VCs,
//!   when the routing assigns them) the search stops at the first path that fits none.
//!   This is LASH's layering (Skeie, Lysne, Theiss, IPDPS'02) applied per path to
//!   DFSSSP's balanced paths. It needs about half the layers of the paper's method: 9, 17
//!   and 27 on 6^3, 8^3 and 10^3 tori against 15, 35 and 62; 6 against 9 on RRG(876, 17).
//! * `cycle_cut`: the paper's method, and OpenSM's. Every path goes into layer 0's CDG.
//!   While the layer has a cycle, a deterministic DFS (channels and dependencies in a
//!   fixed order) finds one, the cycle's dependency carried by the fewest paths is cut
//!   (the first of the cycle's lightest), and those paths move to the next layer, which is
//!   processed the same way once the current one is acyclic.
//!
//! A packet keeps its pair's layer as its VC on every hop. Spare VCs then split the
//! fullest layers (`Layered::spread_over`).

use super::graph::connected_diameter;
use super::layered::{endpoints_per_switch, first_fit_each, FirstFit, LayerOf, Layered, Tables};
use super::registry::{BuildContext, RoutingEntry, Settings};
use super::VcPolicy;
use crate::RoutingError;
use base::settings::Setting;
use serde::Deserialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use topology::metrics::DistanceTable;
use topology::{Network, PortTarget, SwitchId};

/// How DFSSSP assigns its paths to layers (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerMethod {
    /// First fit per path, stopping at the first path that fits none of `limit` layers.
    FirstFit {
        /// The most layers (`None`: as many as it takes, up to 255).
        limit: Option<usize>,
    },
    /// The paper's cycle cutting.
    CycleCut,
}

/// Builds the DFSSSP tables for `net` (first fit, no layer limit).
pub fn build(net: &Network, endpoint_switch: &[SwitchId]) -> Result<Layered, RoutingError> {
    let built = build_with(net, endpoint_switch, LayerMethod::FirstFit { limit: None })?;
    Ok(built.unwrap_or_else(|_| unreachable!("without a limit every path gets a layer")))
}

/// Builds the DFSSSP tables with `method`; `Ok(Err((limit, placed, paths)))` when a path
/// fitted none of the first-fit limit's layers.
pub fn build_with(
    net: &Network,
    endpoint_switch: &[SwitchId],
    method: LayerMethod,
) -> Result<Result<Layered, (usize, usize, usize)>, RoutingError> {
    let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
    connected_diameter(&dist)?;
    let mut t = Tables::new(net, endpoint_switch);
    let n = t.n;
    route(net, &mut t, &endpoints_per_switch(n, endpoint_switch))?;
    let (layer, layers, max_hops) = match method {
        LayerMethod::FirstFit { limit } => match layer_first_fit(&t, limit)? {
            Ok(found) => found,
            Err(stop) => return Ok(Err(stop)),
        },
        LayerMethod::CycleCut => layer_paths(&t)?,
    };
    Ok(Ok(t.finish("dfsssp", LayerOf::Pair(layer), layers, max_hops)?))
}

/// The balanced shortest-path next-hop table.
pub(crate) fn route(net: &Network, t: &mut Tables, endpoints: &[u64]) -> Result<(), RoutingError> {
    let n = t.n;
    let mut weight = vec![0u64; t.num_channels()];
    let mut key = vec![(u32::MAX, u64::MAX); n];
    let mut done = vec![false; n];
    let mut order: Vec<SwitchId> = Vec::with_capacity(n);
    let mut flow = vec![0u64; n];
    let mut heap = BinaryHeap::new();
    for d in 0..n as SwitchId {
        base::cancel::check("building the DFSSSP tables")?;
        key.fill((u32::MAX, u64::MAX));
        done.fill(false);
        order.clear();
        key[d as usize] = (0, 0);
        heap.push(Reverse((0u32, 0u64, d)));
        while let Some(Reverse((h, w, v))) = heap.pop() {
            if done[v as usize] {
                continue;
            }
            done[v as usize] = true;
            order.push(v);
            for p in net.ports(v) {
                // The link x -> v is the reverse of v's port towards x.
                let PortTarget::Switch { switch: x, port: q } = p.target else { continue };
                if done[x as usize] {
                    continue;
                }
                let c = t.channel(x, q);
                let k = (h + 1, w + weight[c as usize]);
                if k < key[x as usize] {
                    key[x as usize] = k;
                    t.next[d as usize * n + x as usize] = q;
                    heap.push(Reverse((k.0, k.1, x)));
                }
            }
        }
        // Balance: the endpoints of every switch flow towards d; settled farthest last.
        let ed = endpoints[d as usize];
        if ed == 0 {
            continue;
        }
        for &s in &order {
            flow[s as usize] = endpoints[s as usize];
        }
        for &s in order.iter().rev() {
            if s == d {
                continue;
            }
            let (c, next) = t.step(s, d);
            flow[next as usize] += flow[s as usize];
            weight[c as usize] += flow[s as usize] * ed;
        }
    }
    Ok(())
}

/// Per-path layers, their number and the longest path; or (limit, paths placed, paths)
/// when a path fits none of `limit` layers.
type Layering = Result<(Vec<u8>, usize, u32), (usize, usize, usize)>;

/// First fit: each path, in pair order, into the first layer whose CDG stays acyclic.
fn layer_first_fit(t: &Tables, limit: Option<usize>) -> Result<Layering, RoutingError> {
    let n = t.n;
    let mut layer = vec![0u8; n * n];
    let mut fit = FirstFit::new(t.num_channels(), limit);
    let mut max_hops = 0;
    let terminals = &t.terminals;
    let paths: Vec<(SwitchId, SwitchId)> = terminals
        .iter()
        .flat_map(|&s| terminals.iter().filter(move |&&d| d != s).map(move |&d| (s, d)))
        .collect();
    let mut placed = 0;
    let path_deps = |&(s, d): &(SwitchId, SwitchId), deps: &mut Vec<(u32, u32)>| t.deps(s, d, deps);
    let finished =
        first_fit_each(&mut fit, &paths, "assigning the DFSSSP layers", path_deps, |&(s, d), l, hops| {
            max_hops = max_hops.max(hops);
            let Some(l) = l else { return false };
            // Beyond 255 layers `finish` fails; the stored value is then irrelevant.
            layer[s as usize * n + d as usize] = l.min(255) as u8;
            placed += 1;
            true
        })?;
    if !finished {
        return Ok(Err((fit.layers(), placed, paths.len())));
    }
    Ok(Ok((layer, fit.layers(), max_hops)))
}

/// Splits the paths into layers by cutting cycles (the paper's method); returns the layer
/// per pair (`src * n + dst`), the layer count and the longest path.
fn layer_paths(t: &Tables) -> Result<(Vec<u8>, usize, u32), RoutingError> {
    let n = t.n;
    let c = t.num_channels();
    let mut pairs = Vec::new();
    for &s in &t.terminals {
        for &d in &t.terminals {
            if s != d {
                pairs.push((s, d));
            }
        }
    }
    let mut path_layer = vec![0u32; pairs.len()];
    let mut max_hops = 0;
    let mut deps = Vec::new();
    let mut current: Vec<u32> = (0..pairs.len() as u32).collect();
    let mut l = 0u32;
    while !current.is_empty() {
        base::cancel::check("breaking the DFSSSP cycles")?;
        // This layer's CDG: dependency -> (paths still carrying it, every path that did).
        let mut edges: HashMap<(u32, u32), (u32, Vec<u32>)> = HashMap::new();
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); c];
        for &p in &current {
            deps.clear();
            let (s, d) = pairs[p as usize];
            max_hops = max_hops.max(t.deps(s, d, &mut deps));
            for &e in &deps {
                let entry = edges.entry(e).or_insert_with(|| {
                    succ[e.0 as usize].push(e.1);
                    (0, Vec::new())
                });
                entry.0 += 1;
                entry.1.push(p);
            }
        }
        // Channels fully explored without a cycle stay so as dependencies are removed.
        let mut colour = vec![0u8; c]; // 0 white, 1 on the DFS stack, 2 done
        while let Some(cycle) = find_cycle(&succ, &mut colour) {
            base::cancel::check("breaking the DFSSSP cycles")?;
            let mut cut = (cycle[cycle.len() - 1], cycle[0]);
            let mut fewest = edges[&cut].0;
            for w in cycle.windows(2) {
                let e = (w[0], w[1]);
                if edges[&e].0 < fewest {
                    fewest = edges[&e].0;
                    cut = e;
                }
            }
            let moved: Vec<u32> =
                edges[&cut].1.iter().copied().filter(|&p| path_layer[p as usize] == l).collect();
            for p in moved {
                path_layer[p as usize] = l + 1;
                deps.clear();
                let (s, d) = pairs[p as usize];
                t.deps(s, d, &mut deps);
                for e in &deps {
                    let entry = edges.get_mut(e).expect("dependency of a path in the layer");
                    entry.0 -= 1;
                    if entry.0 == 0 {
                        succ[e.0 as usize].retain(|&x| x != e.1);
                    }
                }
            }
            for x in colour.iter_mut().filter(|x| **x == 1) {
                *x = 0;
            }
        }
        l += 1;
        current = (0..pairs.len() as u32).filter(|&p| path_layer[p as usize] == l).collect();
    }
    let mut layer = vec![0u8; n * n];
    for (p, &(s, d)) in pairs.iter().enumerate() {
        layer[s as usize * n + d as usize] = path_layer[p].min(255) as u8;
    }
    Ok((layer, l as usize, max_hops))
}

/// A cycle of the graph `succ` as its nodes in order (the last depends on the first), by
/// an iterative DFS from the nodes in id order, skipping those coloured done (2).
fn find_cycle(succ: &[Vec<u32>], colour: &mut [u8]) -> Option<Vec<u32>> {
    let mut stack: Vec<(u32, usize)> = Vec::new();
    for start in 0..succ.len() as u32 {
        if colour[start as usize] != 0 {
            continue;
        }
        colour[start as usize] = 1;
        stack.push((start, 0));
        while let Some(top) = stack.last_mut() {
            let (v, i) = *top;
            if let Some(&w) = succ[v as usize].get(i) {
                top.1 += 1;
                match colour[w as usize] {
                    0 => {
                        colour[w as usize] = 1;
                        stack.push((w, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(x, _)| x == w).expect("on the stack");
                        return Some(stack[from..].iter().map(|&(x, _)| x).collect());
                    }
                    _ => {}
                }
            } else {
                colour[v as usize] = 2;
                stack.pop();
            }
        }
    }
    None
}

/// `[routing.dfsssp]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DfssspSettings {
    #[serde(default)]
    layers: LayerChoice,
}

/// `[routing.dfsssp] layers` (see [`LayerMethod`]).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum LayerChoice {
    #[default]
    FirstFit,
    CycleCut,
}

fn build_entry(ctx: &BuildContext<'_>) -> Result<std::sync::Arc<dyn super::Routing>, RoutingError> {
    let settings: DfssspSettings = ctx.settings()?;
    let method = match settings.layers {
        LayerChoice::FirstFit => {
            LayerMethod::FirstFit { limit: (ctx.vc_policy == VcPolicy::Routing).then_some(ctx.vcs as usize) }
        }
        LayerChoice::CycleCut => LayerMethod::CycleCut,
    };
    match build_with(ctx.net, ctx.endpoint_switch, method)? {
        Ok(r) => super::layered::fit(ctx, r),
        Err((limit, placed, paths)) => Err(ctx.too_many_layers(limit, "path", placed, paths)),
    }
}

/// `dfsssp` in the routing registry.
pub const DFSSSP: RoutingEntry = RoutingEntry {
    name: "dfsssp",
    doc: "DFSSSP: balanced shortest paths (a Dijkstra per destination, link weights grow with the endpoint pairs routed over them), each path into the first layer whose CDG stays acyclic (or the paper's cycle cutting); spare VCs then split the fullest layers",
    topologies: "any",
    vcs: "one VC per layer (reported; fewer router.vcs is an error; all router.vcs are used)",
    settings: Settings::typed::<DfssspSettings>(&[Setting {
        key: "layers",
        default: "first_fit",
        doc: "first_fit: each path into the first layer whose CDG stays acyclic, stopping once the layers would exceed the VCs (about half the layers of cycle_cut); cycle_cut: the paper's and OpenSM's, cut the dependency carried by the fewest paths of each cycle and move those paths up a layer",
    }]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(0, 4, 0),
    build: build_entry,
};

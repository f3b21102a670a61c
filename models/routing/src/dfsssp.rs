//! DFSSSP, deadlock-free single-source shortest path routing: Domke, Hoefler, Nagel,
//! "Deadlock-Free Oblivious Routing for Arbitrary Topologies", IPDPS 2011 (as in OpenSM's
//! `dfsssp`).
//!
//! Routes (`[routing.dfsssp] destinations`):
//!
//! * `endpoints` (default): as OpenSM 3.3's `dfsssp` engine (`osm_ucast_dfsssp.c`) routes,
//!   one Dijkstra per destination endpoint (an HCA port's LID), so that the endpoints of one
//!   switch are reached over different links, with the tables OpenSM computes entry for
//!   entry on the same fabric (scripts/validation/opensm_per_lid.py). The endpoints go
//!   switch by switch, the switches in OpenSM's order (`IbView::opensm_switch_order`)
//!   sorted by their endpoints + 1, most first (stable), a switch's endpoints in port order.
//!   Each Dijkstra grows from the destination over the switches, every directed link
//!   weighing P^2 (P = endpoints + switches) plus the routes over it so far, relaxing on a
//!   strictly smaller sum, its ties those of OpenSM's 4-ary heap (`opensm`). After each
//!   destination every switch adds its endpoints + 1 (OpenSM counts the switch's own LID)
//!   to each link of its route. P^2 per hop keeps the routes shortest. OpenSM stops where
//!   the weights would pass 2^31 (and falls back to MinHop); xnet goes on.
//! * `switches`: one Dijkstra per destination switch, in id order, towards it; after each
//!   destination `d` the weight of each link grows by the number of (source endpoint,
//!   endpoint of `d`) pairs routed over it. The Dijkstra compares (hops, weight)
//!   lexicographically, the paper's P^2 base made exact (an infinite base weight): every
//!   route is a shortest path, and among those the lightest (ties: the lower switch id
//!   first). Tables of switches x switches, for networks too large for the other.
//!
//! The weight updates make each Dijkstra depend on all earlier ones, so the Dijkstras run
//! sequentially, as in the original. The result is a next-hop table, one port per
//! (switch, destination).
//!
//! Layers, two methods (`[routing.dfsssp] layers`), over the paths from every switch with
//! endpoints to every destination (switch or endpoint) elsewhere:
//!
//! * `first_fit` (default): each path, in (source, destination) order, goes into the
//!   first layer whose channel dependency graph (CDG)
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
//! OpenSM cuts cycles over the paths between every pair of LIDs, switches' own included, in
//! its destination order; xnet over the paths endpoint traffic takes. A packet keeps its
//! path's layer as its VC on every hop. Spare VCs then split the fullest layers
//! (`Layered::spread_over`).

use super::graph::connected_diameter;
use super::layered::{
    endpoints_per_switch, first_fit_each, Destinations, FirstFit, LayerOf, Layered, Tables,
    DESTINATIONS_SETTING,
};
use super::opensm::QuaternaryHeap;
use super::registry::{BuildContext, RoutingEntry, Settings};
use super::VcPolicy;
use crate::RoutingError;
use base::settings::Setting;
use serde::Deserialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use topology::ib::IbView;
use topology::metrics::DistanceTable;
use topology::{Network, PortId, PortTarget, SwitchId};

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

/// Builds the DFSSSP tables for `net` (first fit, no layer limit) per `destinations`.
pub fn build(
    net: &Network,
    endpoint_switch: &[SwitchId],
    destinations: Destinations,
) -> Result<Layered, RoutingError> {
    let built = build_with(net, endpoint_switch, LayerMethod::FirstFit { limit: None }, destinations)?;
    Ok(built.unwrap_or_else(|_| unreachable!("without a limit every path gets a layer")))
}

/// Builds the DFSSSP tables with `method`; `Ok(Err((limit, placed, paths)))` when a path
/// fitted none of the first-fit limit's layers.
pub fn build_with(
    net: &Network,
    endpoint_switch: &[SwitchId],
    method: LayerMethod,
    destinations: Destinations,
) -> Result<Result<Layered, (usize, usize, usize)>, RoutingError> {
    let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
    connected_diameter(&dist)?;
    let mut t = Tables::with(net, endpoint_switch, destinations);
    let n = t.n;
    match destinations {
        Destinations::Switches => route(net, &mut t, &endpoints_per_switch(n, endpoint_switch))?,
        Destinations::Endpoints => route_endpoints(net, &mut t)?,
    }
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
            let (c, next) = t.step(s, d as usize);
            flow[next as usize] += flow[s as usize];
            weight[c as usize] += flow[s as usize] * ed;
        }
    }
    Ok(())
}

/// A link of OpenSM's DFSSSP graph as seen from the switch a Dijkstra settles first: the
/// switch at its other end, that switch's port back, and the channel from there (whose
/// weight the link carries).
#[derive(Clone, Copy)]
struct Offer {
    to: u32,
    port: PortId,
    channel: u32,
}

/// OpenSM's per-LID DFSSSP routes (see the module docs), into `t`'s endpoint columns.
fn route_endpoints(net: &Network, t: &mut Tables) -> Result<(), RoutingError> {
    let n = t.n;
    let view = IbView::of(net);
    let order = IbView::opensm_switch_order(net);
    // Vertex 0 stands for the destination endpoint; vertex i + 1 is order[i].
    let mut vertex = vec![0u32; n];
    for (i, &s) in order.iter().enumerate() {
        vertex[s as usize] = i as u32 + 1;
    }
    let mut endpoints_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut offers: Vec<Vec<Offer>> = vec![Vec::new(); n + 1];
    for &s in &order {
        for p in view.ports_in_ib_order(net, s) {
            match net.ports(s)[p as usize].target {
                PortTarget::Endpoint(e) => endpoints_of[s as usize].push(e),
                PortTarget::Switch { switch, port } if switch != s => offers[vertex[s as usize] as usize]
                    .push(Offer { to: vertex[switch as usize], port, channel: t.channel(switch, port) }),
                _ => {}
            }
        }
    }
    // A switch's LIDs: its endpoints and its own.
    let lids = |s: SwitchId| endpoints_of[s as usize].len() as u64 + 1;
    let base = (net.num_endpoints() as u64 + n as u64).pow(2);
    let mut weight = vec![base; t.num_channels()];
    let mut by_load = order.clone();
    by_load.sort_by_key(|&s| Reverse(lids(s)));
    // OpenSM's infinity is 2^31 - 1; a larger one only lets xnet go on where OpenSM stops.
    const INF: u64 = u64::MAX >> 2;
    let mut dist = vec![INF; n + 1];
    let mut done = vec![false; n + 1];
    // Per vertex, the link it was settled over: the vertex it leads to and its port there.
    let mut pred: Vec<Option<(u32, PortId, u32)>> = vec![None; n + 1];
    let mut heap = QuaternaryHeap::new(n + 1);
    for &d in &by_load {
        base::cancel::check("building the DFSSSP tables")?;
        for &e in &endpoints_of[d as usize] {
            dist.fill(INF);
            done.fill(false);
            pred.fill(None);
            for v in 1..=n as u32 {
                heap.insert(INF, v);
            }
            heap.insert(INF, 0);
            dist[0] = 0;
            done[0] = true;
            heap.change_key(0, 0);
            let (home, terminal) = net.endpoint_location[e as usize];
            while let Some((_, u)) = heap.pop() {
                done[u as usize] = true;
                let du = dist[u as usize];
                let mut offer = |o: Offer, w: u64| {
                    let x = o.to as usize;
                    if !done[x] && du + w < dist[x] {
                        dist[x] = du + w;
                        pred[x] = Some((u, o.port, o.channel));
                        heap.change_key(o.to, dist[x]);
                    }
                };
                if u == 0 {
                    // The endpoint's one link, to its switch, of weight 1.
                    offer(Offer { to: vertex[home as usize], port: terminal, channel: u32::MAX }, 1);
                } else {
                    for &o in &offers[u as usize] {
                        offer(o, weight[o.channel as usize]);
                    }
                }
            }
            let column = &mut t.next[e as usize * n..(e as usize + 1) * n];
            for (i, &s) in order.iter().enumerate() {
                let Some((_, port, _)) = pred[i + 1] else {
                    return Err(RoutingError::disconnected(s, home));
                };
                column[s as usize] = port;
            }
            for (i, &s) in order.iter().enumerate() {
                let mut at = pred[i + 1];
                while let Some((from, _, channel)) = at {
                    if channel == u32::MAX {
                        break;
                    }
                    weight[channel as usize] += lids(s);
                    at = pred[from as usize];
                }
            }
        }
    }
    Ok(())
}

/// Per-path layers, their number and the longest path; or (limit, paths placed, paths)
/// when a path fits none of `limit` layers.
type Layering = Result<(Vec<u8>, usize, u32), (usize, usize, usize)>;

/// The paths to layer: from every switch with endpoints to every column's destination
/// on another switch, in (source, column) order.
fn paths(t: &Tables) -> Vec<(SwitchId, u32)> {
    let columns = &t.columns.switch;
    t.terminals
        .iter()
        .flat_map(|&s| {
            (0..columns.len() as u32).filter(move |&c| columns[c as usize] != s).map(move |c| (s, c))
        })
        .collect()
}

/// First fit: each path, in pair order, into the first layer whose CDG stays acyclic.
fn layer_first_fit(t: &Tables, limit: Option<usize>) -> Result<Layering, RoutingError> {
    let cols = t.columns.len();
    let mut layer = vec![0u8; t.n * cols];
    let mut fit = FirstFit::new(t.num_channels(), limit);
    let mut max_hops = 0;
    let paths = paths(t);
    let mut placed = 0;
    let path_deps = |&(s, c): &(SwitchId, u32), deps: &mut Vec<(u32, u32)>| t.deps(s, c as usize, deps);
    let finished =
        first_fit_each(&mut fit, &paths, "assigning the DFSSSP layers", path_deps, |&(s, c), l, hops| {
            max_hops = max_hops.max(hops);
            let Some(l) = l else { return false };
            // Beyond 255 layers `finish` fails; the stored value is then irrelevant.
            layer[s as usize * cols + c as usize] = l.min(255) as u8;
            placed += 1;
            true
        })?;
    if !finished {
        return Ok(Err((fit.layers(), placed, paths.len())));
    }
    Ok(Ok((layer, fit.layers(), max_hops)))
}

/// Splits the paths into layers by cutting cycles (the paper's method); returns the layer
/// per path (`src * columns + column`), the layer count and the longest path.
fn layer_paths(t: &Tables) -> Result<(Vec<u8>, usize, u32), RoutingError> {
    let cols = t.columns.len();
    let c = t.num_channels();
    let pairs = paths(t);
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
            max_hops = max_hops.max(t.deps(s, d as usize, &mut deps));
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
                t.deps(s, d as usize, &mut deps);
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
    let mut layer = vec![0u8; t.n * cols];
    for (p, &(s, d)) in pairs.iter().enumerate() {
        layer[s as usize * cols + d as usize] = path_layer[p].min(255) as u8;
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
    #[serde(default)]
    destinations: Destinations,
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
    match build_with(ctx.net, ctx.endpoint_switch, method, settings.destinations)? {
        Ok(r) => super::layered::fit(ctx, r),
        Err((limit, placed, paths)) => Err(ctx.too_many_layers(limit, "path", placed, paths)),
    }
}

/// `dfsssp` in the routing registry.
pub const DFSSSP: RoutingEntry = RoutingEntry {
    name: "dfsssp",
    doc: "DFSSSP: balanced shortest paths (a Dijkstra per destination endpoint, as OpenSM's tables, or per switch; link weights grow with the routes over them), each path into the first layer whose CDG stays acyclic (or the paper's cycle cutting); spare VCs then split the fullest layers",
    topologies: "any",
    vcs: "one VC per layer (reported; fewer router.vcs is an error; all router.vcs are used)",
    settings: Settings::typed::<DfssspSettings>(&[
        Setting {
            key: "layers",
            default: "first_fit",
            doc: "first_fit: each path into the first layer whose CDG stays acyclic, stopping once the layers would exceed the VCs (about half the layers of cycle_cut); cycle_cut: the paper's and OpenSM's, cut the dependency carried by the fewest paths of each cycle and move those paths up a layer",
        },
        DESTINATIONS_SETTING,
    ]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(0, 4, 0),
    build: build_entry,
};

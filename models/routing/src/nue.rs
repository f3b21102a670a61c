//! Nue routing: Domke, Hoefler, Matsuoka, "Routing on the Dependency Graph: A New Approach
//! to Deadlock-Free High-Performance Routing", HPDC'16.
//!
//! One file: one algorithm (the steps below) whose parts share private state (the channel
//! graph, the escape tree, the search state of its Dijkstra) and read in the order of its
//! steps.
//!
//! Destination-based routing in `k >= 1` virtual layers (one VC each) that is deadlock-free
//! by construction and never runs out of layers. A destination is an endpoint (the
//! default, as OpenSM 3.3's `nue` routes each LID: the endpoints of a switch get routes of
//! their own) or a switch (`[routing.nue] destinations`):
//!
//! 1. The destination switches (those with endpoints) are split into `k` sets, one per
//!    layer, with the multilevel graph partitioner so that each set is a compact region
//!    (the paper uses METIS; OpenSM without METIS deals the LIDs out round robin); a packet
//!    travels in the layer of its destination.
//! 2. Each layer owns a channel dependency graph (CDG) that is kept acyclic at every step
//!    (`DynDag`). First it receives the dependencies of the layer's *escape paths*: a BFS
//!    spanning tree rooted at a central switch of the layer's destinations, routed
//!    up-then-down (`EscapeTurns`: the turns towards the layer's destinations, as the
//!    paper and OpenSM, or all the tree's turns). Tree routes never turn from down to up,
//!    so these dependencies are acyclic and every later destination can fall back to them.
//! 3. For each destination of the layer (a layer's switches in `DestinationOrder`, each
//!    switch's endpoints in id order), a Dijkstra grows backwards from its switch over the
//!    channels: a switch `v` adopts the channel `v -> x` towards an already routed switch
//!    `x` only if the dependency (`v -> x`, `x`'s channel) is already in the layer's CDG or
//!    closes no cycle there; otherwise that dependency is marked blocked for the layer.
//!    Candidates are compared by (hops, channel weight), so routes are as short as the
//!    CDG allows and, among those, the least used (OpenSM compares a weight sum whose
//!    links start at the square of the LIDs, the same order in practice).
//! 4. Impasse (a switch with endpoints left unrouted): local backtracking re-routes a
//!    routed neighbour `x` of a stuck switch `v` through another routed switch so that
//!    `v -> x` becomes usable (the paper backtracks up to two hops; here one). If that fails
//!    too, the destination is routed entirely over the escape tree and the dependencies
//!    its Dijkstra added are removed.
//! 5. After each destination, the channels' weights grow: per endpoint as OpenSM's (every
//!    other switch adds its endpoints + 1 to each channel of its route), per switch by the
//!    endpoint pairs routed over each, so later destinations avoid busy channels.
//!
//! The layers are routed one after another on the same weights, as OpenSM routes them, so
//! that every layer balances against the routes of all earlier ones. Cost: one Dijkstra per
//! destination plus incremental cycle checks (Pearce-Kelly), near the paper's
//! O(n^2 log n) in practice.

use super::layered::{
    endpoints_per_switch, Added, Destinations, DynDag, LayerOf, Layered, Tables, DESTINATIONS_SETTING,
};
use super::registry::{RoutingEntry, Settings};
use super::VcPolicy;
use crate::RoutingError;
use base::settings::Setting;
use partitioner::{partition, Method, PartGraph};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::sync::Arc;
use topology::metrics::bfs;
use topology::{Network, PortId, PortTarget, SwitchId};

/// The order in which a layer's destinations are routed. Each destination's search is
/// constrained by the dependencies the earlier ones added, so the order shapes the routes
/// (the paper leaves it open).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DestinationOrder {
    /// Switch id order.
    #[default]
    Id,
    /// Farthest from the layer's escape-tree root first (ties by id). On a healthy
    /// 10x10x10 torus it removes the hot spot the id order leaves on some rings (see
    /// docs/studies/nue.md); on RRGs the id order does better.
    FarthestFirst,
}

/// Which turns of its escape tree a layer reserves before its destinations are routed
/// (`[routing.nue] escape`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EscapeTurns {
    /// The paper's and OpenSM's: every switch's route up to the root, and the turns down
    /// the tree only towards the layer's destinations (with every turn at the root). A
    /// destination can always fall back to them, and nothing else is reserved: on a fat
    /// tree the tree's other turns (down a leaf and up again) would block minimal routes.
    #[default]
    Destinations,
    /// Every turn of the tree's up-then-down routes, towards destinations or not: the
    /// searches then grow along one order, which on tori avoids most impasses (10x10x10
    /// torus, 8 layers: no fallback, where `destinations` routes 644 of 4,000 endpoints
    /// over the tree; docs/studies/nue.md).
    AllTurns,
}

/// What a Nue build takes besides the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NueOptions {
    /// Virtual layers (`1..=255`), a VC each.
    pub layers: usize,
    /// The order of each layer's destination switches.
    pub order: DestinationOrder,
    /// Whether each endpoint is a destination of its own, or each switch.
    pub destinations: Destinations,
    /// The escape tree's reserved turns.
    pub escape: EscapeTurns,
}

/// How the destinations were routed, summed over the layers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NueStats {
    /// Destination switches routed.
    pub destinations: u64,
    /// Impasses resolved by local backtracking.
    pub backtracks: u64,
    /// Destinations routed over the escape tree after an unresolved impasse.
    pub fallbacks: u64,
}

/// Builds Nue tables for `net` with `options`.
pub fn build(
    net: &Network,
    endpoint_switch: &[SwitchId],
    options: NueOptions,
) -> Result<(Layered, NueStats), RoutingError> {
    let NueOptions { layers, destinations, .. } = options;
    if layers == 0 || layers > super::layered::MAX_LAYERS {
        return Err(RoutingError::new(
            "router.vcs",
            format!("nue needs 1 to {} layers (one VC each), got {layers}", super::layered::MAX_LAYERS),
        ));
    }
    let n = net.num_switches();
    let from0 = bfs(net, 0);
    if let Some(s) = from0.iter().position(|&d| d == u32::MAX) {
        return Err(RoutingError::disconnected(0, s as SwitchId));
    }
    let mut t = Tables::with(net, endpoint_switch, destinations);
    let graph = ChannelGraph::new(net, &t, endpoint_switch);
    let part = destination_layers(&graph, layers);
    let mut endpoints_of: Vec<Vec<u32>> = vec![Vec::new(); n];
    if destinations == Destinations::Endpoints {
        for (e, &s) in endpoint_switch.iter().enumerate() {
            endpoints_of[s as usize].push(e as u32);
        }
    }
    // The layers one after another, as OpenSM routes them: the weights of the routes of
    // every earlier layer stay, so each layer balances against all traffic (in parallel,
    // each layer on its own, the links of one layer's routes were loaded blind to the
    // others': on a 10x10x10 torus the hottest link carried 3.3 times more).
    let mut weight = vec![0u64; graph.num_channels()];
    let per_endpoint = (destinations == Destinations::Endpoints).then_some(&endpoints_of[..]);
    let mut results = Vec::with_capacity(layers);
    for l in 0..layers {
        let dests: Vec<SwitchId> =
            t.terminals.iter().copied().filter(|&d| part[d as usize] as usize == l).collect();
        results.push(route_layer(net, &graph, &dests, options, per_endpoint, &mut weight));
    }
    base::cancel::check("building the Nue layers")?;
    let mut stats = NueStats::default();
    let mut max_hops = 0;
    for r in results {
        stats.destinations += r.columns.len() as u64;
        stats.backtracks += r.backtracks;
        stats.fallbacks += r.fallbacks;
        max_hops = max_hops.max(r.max_hops);
        for (c, column) in r.columns {
            t.next[c as usize * n..(c as usize + 1) * n].copy_from_slice(&column);
        }
    }
    let layer_of_dst = t.columns.switch.iter().map(|&d| part[d as usize] as u8).collect();
    let mut routing = t.finish("nue", LayerOf::Destination(layer_of_dst), layers, max_hops)?;
    routing.set_summary(format!(
        "{} destinations in {layers} layers: {} impasses resolved by local backtracking, {} destinations \
         routed over the escape tree",
        stats.destinations, stats.backtracks, stats.fallbacks
    ));
    Ok((routing, stats))
}

/// The switch graph with channel ids (global port numbers, see [`Tables::channel`]), both
/// directions.
struct ChannelGraph<'a> {
    /// Channel numbering, switches with endpoints.
    tables: &'a Tables,
    /// `out[s]`: `(port, neighbour, channel s -> neighbour)`.
    out: Vec<Vec<(PortId, SwitchId, u32)>>,
    /// `inbound[s]`: `(neighbour, its port, channel neighbour -> s)`.
    inbound: Vec<Vec<(SwitchId, PortId, u32)>>,
    /// Endpoints per switch.
    endpoints: Vec<u64>,
}

impl<'a> ChannelGraph<'a> {
    fn new(net: &Network, t: &'a Tables, endpoint_switch: &[SwitchId]) -> Self {
        let n = net.num_switches();
        let mut out = vec![Vec::new(); n];
        let mut inbound = vec![Vec::new(); n];
        for s in 0..n as SwitchId {
            for (q, p) in net.ports(s).iter().enumerate() {
                if let PortTarget::Switch { switch: x, port: xq } = p.target {
                    out[s as usize].push((q as PortId, x, t.channel(s, q as PortId)));
                    inbound[s as usize].push((x, xq, t.channel(x, xq)));
                }
            }
        }
        let endpoints = endpoints_per_switch(n, endpoint_switch);
        Self { tables: t, out, inbound, endpoints }
    }

    fn num_switches(&self) -> usize {
        self.out.len()
    }

    fn terminals(&self) -> &[SwitchId] {
        &self.tables.terminals
    }

    fn num_channels(&self) -> usize {
        self.tables.num_channels()
    }
}

/// The layer of every switch as a destination: a multilevel partition of the switch graph
/// into compact regions (round robin over the switches with endpoints if the partitioner
/// cannot split it that finely).
fn destination_layers(g: &ChannelGraph, layers: usize) -> Vec<u32> {
    let n = g.num_switches();
    if layers == 1 {
        return vec![0; n];
    }
    let round_robin = || {
        let mut part = vec![0u32; n];
        for (i, &d) in g.terminals().iter().enumerate() {
            part[d as usize] = (i % layers) as u32;
        }
        part
    };
    if g.terminals().len() < layers * 2 {
        return round_robin();
    }
    let graph = PartGraph {
        vertex_weight: (0..n).map(|s| g.endpoints[s].max(1)).collect(),
        edges: (0..n as SwitchId)
            .flat_map(|s| g.out[s as usize].iter().map(move |&(_, x, _)| (s, x, 1)))
            .collect(),
        blocks: None,
    };
    match partition(&graph, layers as u32, Method::Multilevel) {
        Ok(plan) => {
            // Every layer must get destinations; otherwise spread them round robin.
            let mut count = vec![0usize; layers];
            for &d in g.terminals() {
                count[plan.assignment[d as usize] as usize] += 1;
            }
            if count.contains(&0) {
                round_robin()
            } else {
                plan.assignment
            }
        }
        Err(_) => round_robin(),
    }
}

/// Routes of one layer's destinations.
struct LayerResult {
    /// `(column, port per switch towards its destination)`; `PortId::MAX` at the
    /// destination's switch.
    columns: Vec<(u32, Vec<PortId>)>,
    backtracks: u64,
    fallbacks: u64,
    max_hops: u32,
}

/// The escape spanning tree of a layer.
struct EscapeTree {
    root: SwitchId,
    parent: Vec<SwitchId>,
    /// Port of each switch towards its parent (`PortId::MAX` at the root).
    up_port: Vec<PortId>,
    /// Port of each switch's parent towards it.
    down_port: Vec<PortId>,
}

impl EscapeTree {
    /// BFS tree rooted at a central switch of `dests`; inserts the escape dependencies
    /// (`escape`'s turns) into `dag`.
    fn new(
        net: &Network,
        g: &ChannelGraph,
        dests: &[SwitchId],
        escape: EscapeTurns,
        dag: &mut DynDag,
    ) -> Self {
        let n = g.num_switches();
        let root = central_switch(net, dests);
        let mut parent = vec![u32::MAX; n];
        let mut up_port = vec![PortId::MAX; n];
        let mut down_port = vec![PortId::MAX; n];
        let mut order = Vec::with_capacity(n);
        parent[root as usize] = root;
        order.push(root);
        let mut head = 0;
        while head < order.len() {
            let x = order[head];
            head += 1;
            for &(q, y, _) in &g.out[x as usize] {
                if parent[y as usize] == u32::MAX {
                    parent[y as usize] = x;
                    down_port[y as usize] = q;
                    let PortTarget::Switch { port: back, .. } = net.ports(x)[q as usize].target else {
                        unreachable!("channels lead to switches")
                    };
                    up_port[y as usize] = back;
                    order.push(y);
                }
            }
        }
        let tree = EscapeTree { root, parent, up_port, down_port };
        let mut children: Vec<Vec<SwitchId>> = vec![Vec::new(); n];
        for &x in &order[1..] {
            children[tree.parent[x as usize] as usize].push(x);
        }
        // Every turn of the tree's up-then-down routes: up-up, up-down into a sibling,
        // down-down. (Only the turns towards the layer's destinations are needed, but
        // reserving all of them gives the searches a consistent order to grow along: on a
        // 10x10x10 torus with 1 % faults and 8 layers, impasses fell from 1,199 to 13 and
        // the average routing distance from 9.30 to 8.84.)
        // Whether each switch's subtree holds a destination of the layer.
        let mut holds = vec![false; n];
        for &d in dests {
            holds[d as usize] = true;
        }
        for &x in order.iter().rev() {
            if holds[x as usize] && x != root {
                holds[tree.parent[x as usize] as usize] = true;
            }
        }
        let all = escape == EscapeTurns::AllTurns;
        let mut deps = Vec::new();
        for &p in &order {
            for &c in &children[p as usize] {
                let up_c = tree.up_channel(g, c);
                if p != root {
                    // Up-up: every switch's route to the root.
                    deps.push((up_c, tree.up_channel(g, p)));
                    if all || holds[c as usize] {
                        deps.push((tree.down_channel(g, p), tree.down_channel(g, c)));
                    }
                }
                // Up-down into a sibling: at the root between every two children.
                for &c2 in &children[p as usize] {
                    if c2 != c && (all || holds[c2 as usize] || p == root) {
                        deps.push((up_c, tree.down_channel(g, c2)));
                    }
                }
            }
        }
        for (u, v) in deps {
            let added = dag.add(u, v);
            assert_ne!(added, Added::Cycle, "Nue: escape tree dependencies form a cycle");
        }
        tree
    }

    fn up_channel(&self, g: &ChannelGraph, x: SwitchId) -> u32 {
        channel_of(g, x, self.up_port[x as usize])
    }

    fn down_channel(&self, g: &ChannelGraph, x: SwitchId) -> u32 {
        channel_of(g, self.parent[x as usize], self.down_port[x as usize])
    }

    /// Fills `column` with the tree route of every switch towards `d`.
    fn route(&self, d: SwitchId, column: &mut [PortId]) {
        // Up towards the root, except that the ancestors of d go down towards it.
        column.copy_from_slice(&self.up_port);
        let mut x = d;
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            column[p as usize] = self.down_port[x as usize];
            x = p;
        }
        column[d as usize] = PortId::MAX;
    }
}

fn channel_of(g: &ChannelGraph, s: SwitchId, port: PortId) -> u32 {
    g.tables.channel(s, port)
}

/// A switch near the middle of `dests`: two BFS sweeps find distant destinations `a` and
/// `b`; the switch minimising its larger distance to them (then `a` + `b`, then id) wins.
fn central_switch(net: &Network, dests: &[SwitchId]) -> SwitchId {
    let Some(&first) = dests.first() else { return 0 };
    let farthest =
        |dist: &[u32]| *dests.iter().max_by_key(|&&d| (dist[d as usize], Reverse(d))).unwrap_or(&first);
    let a = farthest(&bfs(net, first));
    let from_a = bfs(net, a);
    let b = farthest(&from_a);
    let from_b = bfs(net, b);
    (0..net.num_switches() as SwitchId)
        .min_by_key(|&s| {
            let (x, y) = (from_a[s as usize], from_b[s as usize]);
            (x.max(y), x + y, s)
        })
        .unwrap_or(0)
}

/// `(hops, weight, switch v, v's port, switch x)`: `v` may forward to the routed `x`.
type Offer = (u32, u64, SwitchId, PortId, SwitchId);

/// Per-destination search state of one layer, reused across destinations.
struct Search {
    settled: Vec<bool>,
    hops: Vec<u32>,
    weight_to: Vec<u64>,
    port: Vec<PortId>,
    chan: Vec<u32>,
    next: Vec<SwitchId>,
    heap: BinaryHeap<Reverse<Offer>>,
    /// Dependencies this destination added to the layer's CDG (removed on fallback).
    added: Vec<(u32, u32)>,
}

/// Routes the destinations of one layer: its switches `dests`, in `order`; with
/// `per_endpoint` (each switch's endpoints), each endpoint of each switch in turn, as
/// OpenSM routes each LID, the weights growing after each as OpenSM's grow (every other
/// switch adds its endpoints + 1 along its route); else each switch, the weights growing by
/// the endpoint pairs of each route.
fn route_layer(
    net: &Network,
    g: &ChannelGraph,
    dests: &[SwitchId],
    options: NueOptions,
    per_endpoint: Option<&[Vec<u32>]>,
    weight: &mut [u64],
) -> LayerResult {
    let n = g.num_switches();
    let mut result =
        LayerResult { columns: Vec::with_capacity(dests.len()), backtracks: 0, fallbacks: 0, max_hops: 0 };
    if dests.is_empty() {
        return result;
    }
    let mut dag = DynDag::new(g.num_channels());
    let tree = EscapeTree::new(net, g, dests, options.escape, &mut dag);
    let all: Vec<SwitchId> = (0..n as SwitchId).collect();
    let mut blocked: HashSet<(u32, u32)> = HashSet::new();
    let mut s = Search {
        settled: vec![false; n],
        hops: vec![0; n],
        weight_to: vec![0; n],
        port: vec![PortId::MAX; n],
        chan: vec![u32::MAX; n],
        next: vec![u32::MAX; n],
        heap: BinaryHeap::new(),
        added: Vec::new(),
    };
    let mut switches = dests.to_vec();
    if options.order == DestinationOrder::FarthestFirst {
        let dist = bfs(net, tree.root);
        switches.sort_by_key(|&d| (Reverse(dist[d as usize]), d));
    }
    // (destination switch, column).
    let sequence: Vec<(SwitchId, u32)> = match per_endpoint {
        None => switches.iter().map(|&d| (d, d)).collect(),
        Some(of) => switches.iter().flat_map(|&d| of[d as usize].iter().map(move |&e| (d, e))).collect(),
    };
    for &(d, c) in &sequence {
        if base::cancel::requested() {
            break; // `build` reports the interruption
        }
        let mut column = vec![PortId::MAX; n];
        if route_destination(g, d, &mut dag, &mut blocked, weight, &mut s, &mut result.backtracks) {
            // Unrouted switches without endpoints lie on no route; give them the tree's
            // port so the table has no holes.
            let mut escape = vec![PortId::MAX; n];
            tree.route(d, &mut escape);
            for x in 0..n {
                column[x] = if s.settled[x] { s.port[x] } else { escape[x] };
            }
            column[d as usize] = PortId::MAX;
        } else {
            for &(u, v) in s.added.iter().rev() {
                dag.remove(u, v);
            }
            result.fallbacks += 1;
            tree.route(d, &mut column);
        }
        // Balance: per switch, every endpoint pair routed over a channel adds to its weight;
        // per endpoint, each switch its endpoints and itself (OpenSM's sources), so that
        // switches without endpoints weigh too.
        let ed = g.endpoints[d as usize];
        let sources: &[SwitchId] = if per_endpoint.is_some() { &all } else { g.terminals() };
        for &src in sources {
            let add = match per_endpoint {
                None => g.endpoints[src as usize] * ed,
                Some(_) => g.endpoints[src as usize] + 1,
            };
            let mut x = src;
            let mut hops = 0u32;
            while x != d {
                let ch = g.tables.channel(x, column[x as usize]);
                let y = g.tables.channel_target(ch);
                weight[ch as usize] += add;
                x = y;
                hops += 1;
                assert!(hops as usize <= n, "Nue: route from switch {src} to {d} loops");
            }
            if g.endpoints[src as usize] > 0 {
                result.max_hops = result.max_hops.max(hops);
            }
        }
        result.columns.push((c, column));
    }
    result
}

/// Dijkstra over the channels towards `d` with local backtracking; false on an impasse it
/// could not resolve.
fn route_destination(
    g: &ChannelGraph,
    d: SwitchId,
    dag: &mut DynDag,
    blocked: &mut HashSet<(u32, u32)>,
    weight: &[u64],
    s: &mut Search,
    backtracks: &mut u64,
) -> bool {
    s.settled.fill(false);
    s.added.clear();
    s.heap.clear();
    s.settled[d as usize] = true;
    s.hops[d as usize] = 0;
    s.weight_to[d as usize] = 0;
    s.next[d as usize] = d;
    push_predecessors(g, d, weight, s);
    loop {
        while let Some(Reverse((h, w, v, q, x))) = s.heap.pop() {
            if s.settled[v as usize] {
                continue;
            }
            let c = channel_of(g, v, q);
            if x != d {
                let dep = (c, s.chan[x as usize]);
                if blocked.contains(&dep) {
                    continue;
                }
                match dag.add(dep.0, dep.1) {
                    Added::New => s.added.push(dep),
                    Added::Existing => {}
                    Added::Cycle => {
                        blocked.insert(dep);
                        continue;
                    }
                }
            }
            settle(s, v, q, c, x, h, w);
            push_predecessors(g, v, weight, s);
        }
        if g.terminals().iter().all(|&t| s.settled[t as usize]) {
            return true;
        }
        if !backtrack(g, d, dag, blocked, weight, s) {
            return false;
        }
        *backtracks += 1;
    }
}

fn settle(s: &mut Search, v: SwitchId, q: PortId, c: u32, x: SwitchId, hops: u32, weight: u64) {
    s.settled[v as usize] = true;
    s.port[v as usize] = q;
    s.chan[v as usize] = c;
    s.next[v as usize] = x;
    s.hops[v as usize] = hops;
    s.weight_to[v as usize] = weight;
}

fn push_predecessors(g: &ChannelGraph, x: SwitchId, weight: &[u64], s: &mut Search) {
    for &(v, q, c) in &g.inbound[x as usize] {
        if !s.settled[v as usize] {
            let key = (s.hops[x as usize] + 1, s.weight_to[x as usize] + weight[c as usize]);
            s.heap.push(Reverse((key.0, key.1, v, q, x)));
        }
    }
}

/// Whether the route from `y` towards the destination passes through `x`.
fn route_contains(s: &Search, mut y: SwitchId, x: SwitchId) -> bool {
    loop {
        if y == x {
            return true;
        }
        let next = s.next[y as usize];
        if next == y {
            return false;
        }
        y = next;
    }
}

/// Adds all of `deps` to `dag`, recording the new ones in `added`; on a cycle rolls this
/// call's additions back and returns false.
fn add_all_tracked(dag: &mut DynDag, deps: &[(u32, u32)], added: &mut Vec<(u32, u32)>) -> bool {
    let start = added.len();
    for &(u, v) in deps {
        match dag.add(u, v) {
            Added::New => added.push((u, v)),
            Added::Existing => {}
            Added::Cycle => {
                for &(a, b) in added[start..].iter().rev() {
                    dag.remove(a, b);
                }
                added.truncate(start);
                return false;
            }
        }
    }
    true
}

/// Local backtracking: for an unrouted switch `v` next to a routed switch `x`, re-route
/// `x` over another routed neighbour `y` so that `v -> x` closes no cycle. On success `v`
/// is routed over `x` and its predecessors are queued.
fn backtrack(
    g: &ChannelGraph,
    d: SwitchId,
    dag: &mut DynDag,
    blocked: &HashSet<(u32, u32)>,
    weight: &[u64],
    s: &mut Search,
) -> bool {
    let n = g.num_switches();
    let mut deps = Vec::new();
    for v in 0..n as SwitchId {
        if s.settled[v as usize] {
            continue;
        }
        for &(vq, x, c_vx) in &g.out[v as usize] {
            if !s.settled[x as usize] || x == d {
                continue;
            }
            for &(xq, y, c_xy) in &g.out[x as usize] {
                if !s.settled[y as usize] || y == v || c_xy == s.chan[x as usize] || route_contains(s, y, x) {
                    continue;
                }
                deps.clear();
                deps.push((c_vx, c_xy));
                for &(u, _, c_ux) in &g.inbound[x as usize] {
                    if s.settled[u as usize] && s.next[u as usize] == x && u != x {
                        deps.push((c_ux, c_xy));
                    }
                }
                if y != d {
                    deps.push((c_xy, s.chan[y as usize]));
                }
                if deps.iter().any(|dep| blocked.contains(dep)) {
                    continue;
                }
                if add_all_tracked(dag, &deps, &mut s.added) {
                    let (hy, wy) = (s.hops[y as usize], s.weight_to[y as usize]);
                    settle(s, x, xq, c_xy, y, hy + 1, wy + weight[c_xy as usize]);
                    let (hx, wx) = (s.hops[x as usize], s.weight_to[x as usize]);
                    settle(s, v, vq, c_vx, x, hx + 1, wx + weight[c_vx as usize]);
                    push_predecessors(g, v, weight, s);
                    return true;
                }
            }
        }
    }
    false
}

/// `nue` in the routing registry.
pub const NUE: RoutingEntry = RoutingEntry {
    name: "nue",
    doc: "Nue: destination-based routes grown on the channel dependency graph, one layer (VC) per destination region (multilevel partitioner), escape spanning tree per layer, local backtracking, balancing weights; routes around faults",
    topologies: "any",
    vcs: "1 (uses all router.vcs as layers; deadlock-free with any number)",
    settings: Settings::typed::<NueSettings>(&[
        Setting {
            key: "order",
            default: "`id`",
            doc: "the order in which each layer's destination switches are routed: `id`, or `farthest_first` (farthest from the layer's escape-tree root first); earlier destinations constrain later ones (docs/studies/nue.md)",
        },
        DESTINATIONS_SETTING,
        Setting {
            key: "escape",
            default: "`destinations`",
            doc: "the escape tree's turns each layer reserves: `destinations` (the paper's and OpenSM's: routes up to the root, and down only towards the layer's destinations; best on fat trees) or `all_turns` (every up-then-down turn of the tree: far fewer impasses and fallbacks on tori; docs/studies/nue.md)",
        },
    ]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(5, 0, 0),
    build: |ctx| {
        let s: NueSettings = ctx.settings()?;
        // Nue uses every VC as a layer and always fits: no layer check needed.
        let options =
            NueOptions { layers: ctx.vcs as usize, order: s.order, destinations: s.destinations, escape: s.escape };
        let (mut r, _stats) = build(ctx.net, ctx.endpoint_switch, options)?;
        r.merge_identical_columns();
        Ok(Arc::new(r))
    },
};

/// `[routing.nue]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NueSettings {
    #[serde(default)]
    order: DestinationOrder,
    #[serde(default)]
    destinations: Destinations,
    #[serde(default)]
    escape: EscapeTurns,
}

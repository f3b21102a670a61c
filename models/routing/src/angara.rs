//! Angara routing-graph tables for n-D tori and meshes, `angara_bfs` and `angara_sssp`:
//! Mukosey, Semenov, Tretiakov, "Optimized Graph Based Routing Algorithm for the Angara
//! Interconnect", arXiv:2110.00851, 2021 (section 3: the routing graph and its
//! deadlock-free extension; section 4: the BFS and SSSP table generators).
//!
//! One file because the routing graph (`Rg`), its deadlock check and both table
//! generators share the private vertex numbering, and read in the paper's order.
//!
//! # Rules
//! Directions in the order `+X +Y +Z ... -X -Y -Z ...`. A route uses its directions in that
//! order, each in one contiguous segment (direction order routing), and never both signs of
//! a dimension (the direction-bit rule). Two exceptions relax this, as in the Angara
//! router: a First Step (one positive hop at the start) and a Last Step (one negative hop
//! at the end). Order-preserving First/Last Steps are always allowed (they may break the
//! direction-bit rule); order-violating ones are added where they keep the channel
//! dependency graph acyclic (the paper's section 3.2).
//!
//! # Routing graph
//! Per switch: `begin`, `end`, `FS_d` (arrived by a positive First Step in dimension `d`),
//! `LS_d` (arrived by a negative Last Step in `d`), and one vertex per non-empty
//! direction-bit set (a sign or nothing per dimension, `3^n - 1` of them; the set's last
//! direction is its largest in the order) and dateline bit (below). An edge is a legal hop;
//! a path `begin(s) -> end(d)` is exactly a legal route from `s` to `d` (the paper's
//! Theorem 1), `3^n + 2n + 1` vertices per switch before the dateline bit.
//!
//! # Deviation: datelines instead of the bubble rule
//! Angara keeps a ring (a segment in one direction) deadlock-free with bubble flow control,
//! which xnet does not model. Here a ring uses two VCs with a dateline at its wrap-around
//! link, as `dor` does on tori: a segment travels on VC 0 until it crosses its ring's
//! wrap-around link, and on VC 1 from that hop to its end; a segment crosses it at most
//! once. The dateline bit (crossed or not) is part of the direction-bit vertices, so the VC
//! of every hop is known from the routing graph. Meshes and mesh dimensions need 1 VC, tori
//! 2. Each channel `(link, VC)` is a vertex of the channel dependency graph; the base rules
//! are acyclic (directions only increase; within a ring, VC 0 never takes the wrap-around
//! link and VC 1 never crosses it again). The order-violating First and Last Steps are then
//! tried switch by switch (First Steps, then Last Steps, in direction order) and each kept
//! only if its dependency closes no cycle, checked exactly with an incremental topological
//! order instead of the paper's used-direction sets (its Theorem 2 is a sufficient test for
//! the same property). The deadlock verifier confirms the result.
//!
//! # Tables
//! Angara routes are source routes (the header carries the route): here one route per
//! ordered switch pair, stored hop by hop (port and VC), looked up by the packet's source
//! switch and hops taken.
//! * BFS (the paper's Algorithms 1 and 2): sources in the order: switch 0, then each time the
//!   unprocessed switch farthest (in route length) from the last source. One BFS over the
//!   routing graph per source; each level's vertices are expanded in ascending order of the
//!   summed weight of their outgoing links (ties by vertex id), the first to reach a vertex
//!   is its parent. After each source, every link of its routes gains 1 weight.
//! * SSSP (the paper's Algorithms 3 and 4): first the pairs with a single shortest path in the
//!   routing graph are fixed (counted over routing-graph paths, so a route reachable via a
//!   First Step vertex and a direction-bit vertex counts twice, which only sends more pairs
//!   to the next stage). The others are sorted by (dimensions to correct, route length,
//!   source) and grouped by those keys; per group, a level-synchronous shortest-path search
//!   from the source (hop count first, then summed link weight: the paper's `|N|^2` base
//!   weight) gives routes to the group's destinations; the routes sharing no link with one
//!   accepted before (in destination order) are applied, their links gain 1 weight, and the
//!   rest are searched again.
//!
//! Both are minimal on intact tori. Failed links (`topology.failed_links`) are simply
//! missing edges; a pair without a legal route is a configuration error naming it.

use super::genetic;
use super::layered::{Added, DynDag};
use super::turns::Channels;
use super::registry::{BuildContext, RoutingEntry, Settings};
use base::settings::Setting;
use serde::Deserialize;
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::Packet;
use base::rng::Rng;
use topology::shape::TorusShape;
use topology::Shape;
use topology::{Network, PortId, PortTarget, SwitchId};
use crate::RoutingError;
use std::sync::Arc;

/// Most dimensions (3^6 direction-bit sets per switch).
pub const MAX_DIMS: usize = 6;

/// Table generation method.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// Breadth-first search (the paper's Algorithm 1).
    Bfs,
    /// Single-source shortest paths with link-load weights (the paper's Algorithm 3).
    Sssp,
    /// The genetic search over every pair's shortest routes (the paper's section 4.2).
    Genetic(genetic::Params),
}

/// Most shortest routes a pair offers the genetic search (the first found, in a fixed order).
pub const MAX_VARIANTS: usize = 32;

/// A routing-graph edge.
#[derive(Clone, Copy)]
struct Edge {
    to: u32,
    /// Global port id of the link (`u32::MAX`: the edge to `end`).
    link: u32,
    vc: u8,
}

/// The torus and its routing graph.
struct Rg<'a> {
    net: &'a Network,
    shape: &'a TorusShape,
    nd: usize,
    pow3: Vec<u32>,
    per: usize,
    offsets: Vec<u32>,
    edges: Vec<Edge>,
}

const BEGIN: usize = 0;
const END: usize = 1;

impl<'a> Rg<'a> {
    fn fs(&self, d: usize) -> usize {
        2 + d
    }
    fn ls(&self, d: usize) -> usize {
        2 + self.nd + d
    }
    fn dirbit(&self, code: u32, crossed: bool) -> usize {
        2 + 2 * self.nd + 2 * code as usize + crossed as usize
    }
    fn opposite(&self, o: usize) -> usize {
        (o + self.nd) % (2 * self.nd)
    }
    fn digit(&self, code: u32, dim: usize) -> u32 {
        code / self.pow3[dim] % 3
    }
    /// Largest direction (in the order) of a direction-bit set.
    fn last(&self, code: u32) -> usize {
        (0..self.nd)
            .filter_map(|d| match self.digit(code, d) {
                1 => Some(d),
                2 => Some(self.nd + d),
                _ => None,
            })
            .max()
            .expect("non-empty set")
    }
    fn single(&self, o: usize) -> u32 {
        let d = o % self.nd;
        self.pow3[d] * if o < self.nd { 1 } else { 2 }
    }

    /// The hop from `u` in direction `o`: next switch, link, whether it is the wrap-around.
    fn hop(&self, u: SwitchId, o: usize) -> Option<(SwitchId, u32, bool)> {
        let (dim, pos) = (o % self.nd, o < self.nd);
        let port = self.shape.port(dim, pos);
        let PortTarget::Switch { switch, .. } = self.net.ports(u)[port as usize].target else {
            return None;
        };
        let (c, k) = (self.shape.coord(u, dim), self.shape.sides[dim]);
        let wrap = self.shape.wrap[dim] && if pos { c == k - 1 } else { c == 0 };
        Some((switch, self.net.port_offsets[u as usize] + port as u32, wrap))
    }

    /// The hop arriving at `u` in direction `o`: link and whether it is the wrap-around.
    fn arrival(&self, u: SwitchId, o: usize) -> Option<(u32, bool)> {
        let (dim, pos) = (o % self.nd, o < self.nd);
        let port = self.shape.port(dim, !pos);
        let PortTarget::Switch { switch: w, .. } = self.net.ports(u)[port as usize].target else {
            return None;
        };
        self.hop(w, o).map(|(_, link, wrap)| (link, wrap))
    }

    /// Dateline bits a segment in direction `o` may have at `u` after arriving by a hop that
    /// is (`wrap`) or is not the wrap-around.
    fn crossed_states(&self, o: usize, wrap: bool) -> &'static [bool] {
        if wrap {
            &[true]
        } else if self.shape.wrap[o % self.nd] {
            &[false, true]
        } else {
            &[false]
        }
    }
}

fn ch(link: u32, vc: bool) -> u32 {
    link * 2 + vc as u32
}

/// Order-violating First and Last Steps accepted at each switch.
struct Exceptions {
    /// `fs[(u * nd + l) * 2nd + o]`: after a First Step `+l` into `u`, direction `o < l`.
    fs: Vec<bool>,
    /// `ls[((u * 2nd + last) * 2 + crossed) * 2nd + o]`: a Last Step `o < last`.
    ls: Vec<bool>,
}

impl<'a> Rg<'a> {
    fn new(net: &'a Network, shape: &'a TorusShape) -> Self {
        let nd = shape.sides.len();
        let pow3: Vec<u32> = (0..=nd).map(|d| 3u32.pow(d as u32)).collect();
        let per = 2 + 2 * nd + 2 * pow3[nd] as usize;
        Self { net, shape, nd, pow3, per, offsets: Vec::new(), edges: Vec::new() }
    }

    /// The channel dependencies of the base rules; then the exceptions that keep them acyclic.
    fn exceptions(&self) -> Exceptions {
        let (nd, n) = (self.nd, self.net.num_switches());
        let mut dag = DynDag::new(self.net.ports.len() * 2);
        let add = |dag: &mut DynDag, a: u32, b: u32| {
            assert!(dag.add(a, b) != Added::Cycle, "angara: base rules form a cycle");
        };
        for u in 0..n as SwitchId {
            for l in 0..nd {
                let Some((inl, w)) = self.arrival(u, l) else { continue };
                for o in (l + 1..2 * nd).filter(|&o| o != nd + l) {
                    if let Some((_, link, wo)) = self.hop(u, o) {
                        add(&mut dag, ch(inl, w), ch(link, wo));
                    }
                }
            }
            for last in 0..2 * nd {
                let Some((inl, w)) = self.arrival(u, last) else { continue };
                for &c in self.crossed_states(last, w) {
                    for o in last..2 * nd {
                        let Some((_, link, wo)) = self.hop(u, o) else { continue };
                        if o == last {
                            if !(c && wo) {
                                add(&mut dag, ch(inl, c), ch(link, c || wo));
                            }
                        } else if o != self.opposite(last) {
                            add(&mut dag, ch(inl, c), ch(link, wo));
                        }
                    }
                }
            }
        }
        let mut ex =
            Exceptions { fs: vec![false; n * nd * 2 * nd], ls: vec![false; n * 2 * nd * 2 * 2 * nd] };
        for u in 0..n as SwitchId {
            for l in 0..nd {
                let Some((inl, w)) = self.arrival(u, l) else { continue };
                for o in 0..l {
                    if let Some((_, link, wo)) = self.hop(u, o) {
                        ex.fs[(u as usize * nd + l) * 2 * nd + o] =
                            dag.add(ch(inl, w), ch(link, wo)) != Added::Cycle;
                    }
                }
            }
            for last in nd..2 * nd {
                let Some((inl, w)) = self.arrival(u, last) else { continue };
                for &c in self.crossed_states(last, w) {
                    for o in nd..last {
                        if let Some((_, link, wo)) = self.hop(u, o) {
                            let i = ((u as usize * 2 * nd + last) * 2 + c as usize) * 2 * nd + o;
                            ex.ls[i] = dag.add(ch(inl, c), ch(link, wo)) != Added::Cycle;
                        }
                    }
                }
            }
        }
        ex
    }

    /// Builds the edges (CSR).
    fn build_edges(&mut self, ex: &Exceptions) {
        let (nd, n) = (self.nd, self.net.num_switches());
        let mut offsets = Vec::with_capacity(n * self.per + 1);
        let mut edges = Vec::new();
        offsets.push(0u32);
        for u in 0..n as SwitchId {
            let base = u as usize * self.per;
            let vertex = |v: SwitchId, local: usize| (v as usize * self.per + local) as u32;
            let end = Edge { to: (base + END) as u32, link: u32::MAX, vc: 0 };
            for local in 0..self.per {
                if local == BEGIN {
                    for o in 0..2 * nd {
                        let Some((v, link, w)) = self.hop(u, o) else { continue };
                        if o < nd {
                            edges.push(Edge { to: vertex(v, self.fs(o)), link, vc: w as u8 });
                        }
                        edges.push(Edge { to: vertex(v, self.dirbit(self.single(o), w)), link, vc: w as u8 });
                    }
                } else if local == END {
                } else if local < self.fs(nd) {
                    let l = local - 2;
                    edges.push(end);
                    for o in 0..2 * nd {
                        let ok = if o > l {
                            o != nd + l
                        } else {
                            o < l && ex.fs[(u as usize * nd + l) * 2 * nd + o]
                        };
                        if let (true, Some((v, link, w))) = (ok, self.hop(u, o)) {
                            edges.push(Edge {
                                to: vertex(v, self.dirbit(self.single(o), w)),
                                link,
                                vc: w as u8,
                            });
                        }
                    }
                } else if local < self.dirbit(0, false) {
                    edges.push(end);
                } else {
                    let k = local - self.dirbit(0, false);
                    let (code, c) = ((k / 2) as u32, k % 2 == 1);
                    if code == 0 {
                        offsets.push(edges.len() as u32);
                        continue;
                    }
                    edges.push(end);
                    let last = self.last(code);
                    for o in 0..2 * nd {
                        let Some((v, link, w)) = self.hop(u, o) else { continue };
                        let (dim, sign) = (o % nd, if o < nd { 1 } else { 2 });
                        if o == last {
                            if !(c && w) {
                                edges.push(Edge {
                                    to: vertex(v, self.dirbit(code, c || w)),
                                    link,
                                    vc: (c || w) as u8,
                                });
                            }
                            continue;
                        }
                        if o > last && self.digit(code, dim) == 0 {
                            let next = code + sign * self.pow3[dim];
                            edges.push(Edge { to: vertex(v, self.dirbit(next, w)), link, vc: w as u8 });
                        }
                        let ls = o >= nd
                            && if o > last {
                                o != self.opposite(last)
                            } else {
                                ex.ls[((u as usize * 2 * nd + last) * 2 + c as usize) * 2 * nd + o]
                            };
                        if ls {
                            edges.push(Edge { to: vertex(v, self.ls(dim)), link, vc: w as u8 });
                        }
                    }
                }
                offsets.push(edges.len() as u32);
            }
        }
        self.offsets = offsets;
        self.edges = edges;
    }

    fn out(&self, v: u32) -> &[Edge] {
        &self.edges[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }

    fn begin(&self, s: SwitchId) -> u32 {
        (s as usize * self.per + BEGIN) as u32
    }

    fn end(&self, s: SwitchId) -> u32 {
        (s as usize * self.per + END) as u32
    }
}

/// Per-search state over the routing graph's vertices.
struct Search {
    level: Vec<u32>,
    weight: Vec<u64>,
    /// Edge index by which a vertex was reached.
    parent: Vec<u32>,
    paths: Vec<u64>,
    queue: Vec<u32>,
    next: Vec<u32>,
    touched: Vec<u32>,
}

impl Search {
    fn new(vertices: usize) -> Self {
        Self {
            level: vec![u32::MAX; vertices],
            weight: vec![0; vertices],
            parent: vec![u32::MAX; vertices],
            paths: vec![0; vertices],
            queue: Vec::new(),
            next: Vec::new(),
            touched: Vec::new(),
        }
    }

    fn reset(&mut self) {
        for &v in &self.touched {
            self.level[v as usize] = u32::MAX;
            self.parent[v as usize] = u32::MAX;
            self.paths[v as usize] = 0;
            self.weight[v as usize] = 0;
        }
        self.touched.clear();
    }

    fn reach(&mut self, v: u32, level: u32, weight: u64, edge: u32, paths: u64) {
        self.level[v as usize] = level;
        self.weight[v as usize] = weight;
        self.parent[v as usize] = edge;
        self.paths[v as usize] = paths;
        self.touched.push(v);
        self.next.push(v);
    }
}

/// Angara routing: a source route per switch pair.
pub struct Angara {
    n: usize,
    /// `route_offsets[src * n + dst]..[+1]` indexes `hops`.
    route_offsets: Vec<u32>,
    hops: Vec<(PortId, u8)>,
    vcs: u8,
    max_hops: u32,
    endpoint_switch: Vec<SwitchId>,
    /// Order-violating First/Last Steps kept (for reports and tests).
    pub exceptions: usize,
    /// What the genetic search did (`angara_genetic` only).
    pub genetic: Option<GeneticSummary>,
}

/// The genetic search's report.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeneticSummary {
    /// Pairs with more than one shortest route (the genes).
    pub genes: usize,
    /// The search's outcome.
    pub outcome: genetic::Outcome,
}

impl Angara {
    /// Tables for the torus or mesh `net` (shape `shape`) by `method`.
    pub fn new(
        net: &Network,
        shape: &TorusShape,
        method: Method,
        endpoint_switch: &[SwitchId],
    ) -> Result<Self, RoutingError> {
        let nd = shape.sides.len();
        if nd > MAX_DIMS {
            return Err(RoutingError::algorithm(format!(
                "the Angara routings run on tori and meshes of at most {MAX_DIMS} dimensions, this one has {nd}"
            )));
        }
        let n = net.num_switches();
        let mut rg = Rg::new(net, shape);
        let ex = rg.exceptions();
        let exceptions = ex.fs.iter().chain(&ex.ls).filter(|&&x| x).count();
        rg.build_edges(&ex);
        let mut routes: Vec<Vec<(PortId, u8)>> = vec![Vec::new(); n * n];
        let mut weight = vec![0u64; net.ports.len()];
        let mut search = Search::new(rg.offsets.len() - 1);
        let mut genetic = None;
        match method {
            Method::Bfs => bfs_tables(&rg, &mut search, &mut weight, &mut routes)?,
            Method::Sssp => sssp_tables(&rg, &mut search, &mut weight, &mut routes)?,
            Method::Genetic(params) => {
                genetic = Some(genetic_tables(&rg, &mut search, &params, endpoint_switch, &mut routes)?)
            }
        }
        let mut route_offsets = Vec::with_capacity(n * n + 1);
        let mut hops = Vec::new();
        route_offsets.push(0u32);
        for r in &routes {
            hops.extend_from_slice(r);
            route_offsets.push(hops.len() as u32);
        }
        let vcs = hops.iter().map(|&(_, vc)| vc + 1).max().unwrap_or(1);
        let max_hops = routes.iter().map(|r| r.len() as u32).max().unwrap_or(0);
        Ok(Self {
            n,
            route_offsets,
            hops,
            vcs,
            max_hops,
            endpoint_switch: endpoint_switch.to_vec(),
            exceptions,
            genetic,
        })
    }

    /// The route from `src` to `dst` as `(port, vc)` per hop.
    pub fn route(&self, src: SwitchId, dst: SwitchId) -> &[(PortId, u8)] {
        let i = src as usize * self.n + dst as usize;
        &self.hops[self.route_offsets[i] as usize..self.route_offsets[i + 1] as usize]
    }
}

/// Walks the parents from `end(dst)` back to the source: the route's `(link, vc)` hops.
fn extract(rg: &Rg<'_>, search: &Search, dst: SwitchId, out: &mut Vec<(u32, u8)>) {
    out.clear();
    let mut v = rg.end(dst);
    loop {
        let e = search.parent[v as usize];
        if e == u32::MAX {
            break;
        }
        let edge = rg.edges[e as usize];
        if edge.link != u32::MAX {
            out.push((edge.link, edge.vc));
        }
        // The edge's source vertex: the one whose CSR range holds `e`.
        v = (rg.offsets.partition_point(|&o| o <= e) - 1) as u32;
    }
    out.reverse();
}

fn store(rg: &Rg<'_>, src: SwitchId, dst: SwitchId, hops: &[(u32, u8)], routes: &mut [Vec<(PortId, u8)>]) {
    let n = rg.net.num_switches();
    let mut at = src;
    let r = &mut routes[src as usize * n + dst as usize];
    r.clear();
    for &(link, vc) in hops {
        let port = (link - rg.net.port_offsets[at as usize]) as PortId;
        r.push((port, vc));
        let PortTarget::Switch { switch, .. } = rg.net.ports(at)[port as usize].target else {
            unreachable!("routes follow links")
        };
        at = switch;
    }
    debug_assert_eq!(at, dst);
}

fn no_route(src: SwitchId, dst: SwitchId) -> RoutingError {
    RoutingError::new(
        "topology.failed_links",
        format!(
            "the Angara routing graph has no legal route from switch {src} to {dst} around the failed links \
             (direction order, direction bits and First/Last Steps); use fewer faults or a table-based routing"
        ),
    )
}

/// The paper's Algorithms 1 and 2.
fn bfs_tables(
    rg: &Rg<'_>,
    search: &mut Search,
    weight: &mut [u64],
    routes: &mut [Vec<(PortId, u8)>],
) -> Result<(), RoutingError> {
    let n = rg.net.num_switches();
    let mut processed = vec![false; n];
    let mut src = 0 as SwitchId;
    let mut hops = Vec::new();
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    for _ in 0..n {
        processed[src as usize] = true;
        search.reset();
        search.next.clear();
        search.reach(rg.begin(src), 0, 0, u32::MAX, 1);
        let mut level = 0;
        while !search.next.is_empty() {
            std::mem::swap(&mut search.queue, &mut search.next);
            search.next.clear();
            keyed.clear();
            keyed.extend(search.queue.iter().map(|&v| {
                (
                    rg.out(v)
                        .iter()
                        .filter(|e| e.link != u32::MAX)
                        .map(|e| weight[e.link as usize])
                        .sum::<u64>(),
                    v,
                )
            }));
            keyed.sort_unstable();
            level += 1;
            for &(_, u) in &keyed {
                for e in rg.offsets[u as usize]..rg.offsets[u as usize + 1] {
                    let to = rg.edges[e as usize].to;
                    if search.level[to as usize] == u32::MAX {
                        search.reach(to, level, 0, e, 1);
                    }
                }
            }
        }
        let mut farthest = (0, src);
        let mut used = Vec::new();
        for dst in (0..n as SwitchId).filter(|&d| d != src) {
            if search.level[rg.end(dst) as usize] == u32::MAX {
                return Err(no_route(src, dst));
            }
            extract(rg, search, dst, &mut hops);
            used.extend(hops.iter().map(|&(l, _)| l));
            store(rg, src, dst, &hops, routes);
            if !processed[dst as usize] && hops.len() > farthest.0 {
                farthest = (hops.len(), dst);
            }
        }
        for l in used {
            weight[l as usize] += 1;
        }
        if farthest.1 == src {
            // Every switch at distance 0 or processed: take the lowest unprocessed one.
            match processed.iter().position(|&p| !p) {
                Some(s) => src = s as SwitchId,
                None => break,
            }
        } else {
            src = farthest.1;
        }
    }
    Ok(())
}

/// Level-synchronous search from `src` until every switch of `targets` is reached;
/// `weighted`: among equally short paths the lightest (the paper's Algorithm 4), else counts
/// the shortest paths.
fn search_from(
    rg: &Rg<'_>,
    search: &mut Search,
    weight: &[u64],
    src: SwitchId,
    targets: &[SwitchId],
    weighted: bool,
) {
    search.reset();
    search.next.clear();
    search.reach(rg.begin(src), 0, 0, u32::MAX, 1);
    let mut missing: usize = targets.len();
    let mut level = 0;
    while !search.next.is_empty() && missing > 0 {
        std::mem::swap(&mut search.queue, &mut search.next);
        search.next.clear();
        level += 1;
        for i in 0..search.queue.len() {
            let u = search.queue[i];
            let (wu, pu) = (search.weight[u as usize], search.paths[u as usize]);
            for e in rg.offsets[u as usize]..rg.offsets[u as usize + 1] {
                let edge = rg.edges[e as usize];
                let w = wu + if edge.link == u32::MAX { 0 } else { weight[edge.link as usize] };
                let to = edge.to as usize;
                if search.level[to] == u32::MAX {
                    search.reach(edge.to, level, w, e, pu);
                } else if search.level[to] == level {
                    search.paths[to] = search.paths[to].saturating_add(pu);
                    if weighted && w < search.weight[to] {
                        search.weight[to] = w;
                        search.parent[to] = e;
                    }
                }
            }
        }
        missing = targets.iter().filter(|&&d| search.level[rg.end(d) as usize] == u32::MAX).count();
    }
}

/// The paper's Algorithm 3.
fn sssp_tables(
    rg: &Rg<'_>,
    search: &mut Search,
    weight: &mut [u64],
    routes: &mut [Vec<(PortId, u8)>],
) -> Result<(), RoutingError> {
    let n = rg.net.num_switches();
    let nd = rg.nd;
    let all: Vec<SwitchId> = (0..n as SwitchId).collect();
    let mut hops = Vec::new();
    // 1) Unique routes.
    let mut rest: Vec<(u32, u32, SwitchId, SwitchId)> = Vec::new();
    for src in 0..n as SwitchId {
        search_from(rg, search, weight, src, &all, false);
        for dst in (0..n as SwitchId).filter(|&d| d != src) {
            let end = rg.end(dst) as usize;
            if search.level[end] == u32::MAX {
                return Err(no_route(src, dst));
            }
            if search.paths[end] == 1 {
                extract(rg, search, dst, &mut hops);
                for &(l, _) in &hops {
                    weight[l as usize] += 1;
                }
                store(rg, src, dst, &hops, routes);
            } else {
                let dims =
                    (0..nd).filter(|&d| rg.shape.coord(src, d) != rg.shape.coord(dst, d)).count() as u32;
                rest.push((dims, search.level[end], src, dst));
            }
        }
    }
    // 2) Sort and group.
    rest.sort_unstable();
    let mut used = vec![false; weight.len()];
    let mut i = 0;
    while i < rest.len() {
        let key = (rest[i].0, rest[i].1, rest[i].2);
        let j = i + rest[i..].iter().take_while(|r| (r.0, r.1, r.2) == key).count();
        let src = key.2;
        let mut dsts: Vec<SwitchId> = rest[i..j].iter().map(|r| r.3).collect();
        while !dsts.is_empty() {
            search_from(rg, search, weight, src, &dsts, true);
            let mut applied: Vec<u32> = Vec::new();
            dsts.retain(|&dst| {
                extract(rg, search, dst, &mut hops);
                if hops.iter().any(|&(l, _)| used[l as usize]) {
                    return true;
                }
                for &(l, _) in &hops {
                    used[l as usize] = true;
                    applied.push(l);
                }
                store(rg, src, dst, &hops, routes);
                false
            });
            for l in applied {
                used[l as usize] = false;
                weight[l as usize] += 1;
            }
        }
        i = j;
    }
    Ok(())
}

/// The routing graph's edges into each vertex (CSR): `edges[offsets[v]..offsets[v + 1]]`
/// are `(source vertex, edge index)`.
struct InEdges {
    offsets: Vec<u32>,
    edges: Vec<(u32, u32)>,
}

fn in_edges(rg: &Rg<'_>) -> InEdges {
    let vertices = rg.offsets.len() - 1;
    let mut offsets = vec![0u32; vertices + 1];
    for e in &rg.edges {
        offsets[e.to as usize + 1] += 1;
    }
    for v in 0..vertices {
        offsets[v + 1] += offsets[v];
    }
    let mut fill = offsets.clone();
    let mut into = vec![(0, 0); rg.edges.len()];
    for u in 0..vertices {
        for e in rg.offsets[u]..rg.offsets[u + 1] {
            let to = rg.edges[e as usize].to as usize;
            into[fill[to] as usize] = (u as u32, e);
            fill[to] += 1;
        }
    }
    InEdges { offsets, edges: into }
}

/// The distinct shortest routes from the search's source to `dst` (at most
/// [`MAX_VARIANTS`]), as `(link, vc)` hops: a walk back from `end(dst)` over the edges
/// whose source is one level up, which always leads back to the source.
fn shortest_routes(
    rg: &Rg<'_>,
    search: &Search,
    into: &InEdges,
    dst: SwitchId,
    out: &mut Vec<Vec<(u32, u8)>>,
) {
    out.clear();
    let (offsets, edges) = (&into.offsets, &into.edges);
    // Walks of the routing graph may give one route twice (a First Step vertex and a
    // direction-bit vertex); the walk count is bounded so that such repeats stay cheap.
    let mut walks = 0;
    // Frames: vertex, next in-edge to try, whether entering it pushed a hop.
    let mut stack: Vec<(u32, u32, bool)> = vec![(rg.end(dst), offsets[rg.end(dst) as usize], false)];
    let mut hops: Vec<(u32, u8)> = Vec::new();
    while let Some(frame) = stack.last_mut() {
        let v = frame.0;
        let mut step = None;
        if search.level[v as usize] == 0 {
            let route: Vec<(u32, u8)> = hops.iter().rev().copied().collect();
            if !out.contains(&route) {
                out.push(route);
            }
            walks += 1;
            if out.len() == MAX_VARIANTS || walks == 8 * MAX_VARIANTS {
                return;
            }
        } else {
            while frame.1 < offsets[v as usize + 1] {
                let (u, e) = edges[frame.1 as usize];
                frame.1 += 1;
                let lu = search.level[u as usize];
                if lu != u32::MAX && lu + 1 == search.level[v as usize] {
                    step = Some((u, e));
                    break;
                }
            }
        }
        match step {
            Some((u, e)) => {
                let edge = rg.edges[e as usize];
                let hop = edge.link != u32::MAX;
                if hop {
                    hops.push((edge.link, edge.vc));
                }
                stack.push((u, offsets[u as usize], hop));
            }
            None => {
                if stack.pop().is_some_and(|f| f.2) {
                    hops.pop();
                }
            }
        }
    }
}

/// The paper's Genetic algorithm (section 4.2): the shortest routes of every pair of
/// switches with endpoints are its alternatives (at most [`MAX_VARIANTS`]), and the
/// genetic search ([`genetic`]) picks one per pair. Other pairs take their first route.
fn genetic_tables(
    rg: &Rg<'_>,
    search: &mut Search,
    params: &genetic::Params,
    endpoint_switch: &[SwitchId],
    routes: &mut [Vec<(PortId, u8)>],
) -> Result<GeneticSummary, RoutingError> {
    let net = rg.net;
    let n = net.num_switches();
    let all: Vec<SwitchId> = (0..n as SwitchId).collect();
    let mut terminal = vec![false; n];
    for &s in endpoint_switch {
        terminal[s as usize] = true;
    }
    // The seed's sigma counts the switch-to-switch links: the search numbers them densely.
    let channels = Channels::new(net);
    let into = in_edges(rg);
    let zero = vec![0u64; net.ports.len()];
    let mut problem = genetic::Problem::new(channels.len());
    // Per gene: source, destination, and its routes as `(link, vc)` hops.
    type Gene = (SwitchId, SwitchId, Vec<Vec<(u32, u8)>>);
    let mut genes: Vec<Gene> = Vec::new();
    let mut alternatives = Vec::new();
    for src in 0..n as SwitchId {
        search_from(rg, search, &zero, src, &all, false);
        for dst in (0..n as SwitchId).filter(|&d| d != src) {
            if search.level[rg.end(dst) as usize] == u32::MAX {
                return Err(no_route(src, dst));
            }
            shortest_routes(rg, search, &into, dst, &mut alternatives);
            store(rg, src, dst, &alternatives[0], routes);
            if !(terminal[src as usize] && terminal[dst as usize]) {
                continue;
            }
            let crossed: Vec<Vec<u32>> = alternatives
                .iter()
                .map(|r| r.iter().map(|&(l, _)| channels.of_link(l).expect("routes cross links")).collect())
                .collect();
            problem.add_pair(crossed.iter().map(Vec::as_slice));
            if alternatives.len() > 1 {
                genes.push((src, dst, std::mem::take(&mut alternatives)));
            }
        }
    }
    let (choice, outcome) = genetic::evolve(&problem, params);
    for ((src, dst, alternatives), &c) in genes.iter().zip(&choice) {
        store(rg, *src, *dst, &alternatives[c as usize], routes);
    }
    Ok(GeneticSummary { genes: genes.len(), outcome })
}

impl Routing for Angara {
    fn vcs_required(&self) -> u8 {
        self.vcs
    }

    fn reads(&self) -> Reads {
        // Source routes: the table is indexed by the packet's source switch.
        Reads { source: true, ..Reads::NOTHING }
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn build_summary(&self) -> Option<String> {
        self.genetic.map(|g| {
            format!(
                "genetic search: {} pairs with several shortest routes, {} generations, sigma(4, R) {:.3} (best of the first generation) -> {:.3}",
                g.genes, g.outcome.generations, g.outcome.first_sigma, g.outcome.sigma
            )
        })
    }

    fn candidates(
        &self,
        _at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let src = self.endpoint_switch[packet.src() as usize];
        let (port, vc) = self.route(src, dst)[packet.hops as usize];
        out.push(Candidate { port, vc, penalty: 0 });
    }
}

/// `angara_bfs` in the routing registry.
pub const ANGARA_BFS: RoutingEntry = RoutingEntry {
    name: "angara_bfs",
    doc: "Angara routing graph (direction order +X+Y..-X-Y.., direction bits, First/Last Steps; datelines instead of bubbles) with one BFS source route per pair, load-sorted levels; faults allowed where every pair keeps a legal route",
    topologies: "torus, mesh (<= 6 dimensions)",
    vcs: "2 on tori (datelines replace Angara's bubble rule), 1 on meshes",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(0, 8, 0),
    build: |ctx| build_angara(ctx, Method::Bfs),
};

/// `angara_sssp` in the routing registry.
pub const ANGARA_SSSP: RoutingEntry = RoutingEntry {
    name: "angara_sssp",
    doc: "the Angara routing graph with load-balancing SSSP source routes (unique routes first, then level-synchronous shortest paths weighted by link load): a lower edge-forwarding index than angara_bfs",
    build: |ctx| build_angara(ctx, Method::Sssp),
    ..ANGARA_BFS
};

/// `angara_genetic` in the routing registry.
pub const ANGARA_GENETIC: RoutingEntry = RoutingEntry {
    name: "angara_genetic",
    doc: "the Angara routing graph with the seed's Genetic search: one of each pair's shortest routes (up to 32) per gene, 2-point crossover, random parents, per-gene mutation, fitness sigma(4, R); slow, for small tori",
    settings: Settings::typed::<GeneticSettings>(&[
        Setting { key: "population", default: "100", doc: "chromosomes per generation (the seed: 100)" },
        Setting { key: "mutation", default: "0.02", doc: "probability that a child's gene mutates, in [0, 1] (the seed: 2 %)" },
        Setting {
            key: "patience",
            default: "30",
            doc: "stop after this many generations without a better best table (the seed: 30)",
        },
        Setting { key: "generations", default: "2000", doc: "stop after this many generations in any case" },
    ]),
    // Parents and children, 2 bytes per pair each, and up to 32 alternative routes per pair
    // kept twice: 6x6x6 peaks at 60 MiB against 28 MiB for angara_bfs (37 MiB estimated).
    state_bytes: |size| size.table(400, 44, 0),
    build: |ctx| {
        let s: GeneticSettings = ctx.settings()?;
        let key = |k: &str| format!("routing.angara_genetic.{k}");
        if s.population < 2 {
            return Err(RoutingError::new(key("population"), format!("must be at least 2, got {}", s.population)));
        }
        if !(0.0..=1.0).contains(&s.mutation) {
            return Err(RoutingError::new(key("mutation"), format!("must be in [0, 1], got {}", s.mutation)));
        }
        let params = genetic::Params {
            population: s.population,
            mutation: s.mutation,
            patience: s.patience,
            generations: s.generations,
            seed: ctx.seed,
        };
        build_angara(ctx, Method::Genetic(params))
    },
    ..ANGARA_BFS
};

/// `[routing.angara_genetic]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GeneticSettings {
    #[serde(default = "GeneticSettings::population")]
    population: usize,
    #[serde(default = "GeneticSettings::mutation")]
    mutation: f64,
    #[serde(default = "GeneticSettings::patience")]
    patience: u32,
    #[serde(default = "GeneticSettings::generations")]
    generations: u32,
}

impl GeneticSettings {
    fn population() -> usize {
        100
    }
    fn mutation() -> f64 {
        0.02
    }
    fn patience() -> u32 {
        30
    }
    fn generations() -> u32 {
        2000
    }
}

fn build_angara(ctx: &BuildContext<'_>, method: Method) -> Result<Arc<dyn Routing>, RoutingError> {
    let Shape::Torus(t) = &ctx.net.shape else {
        return Err(ctx.needs("torus or mesh"));
    };
    Ok(Arc::new(Angara::new(ctx.net, t, method, ctx.endpoint_switch)?))
}

//! Angara routing-graph tables for n-D tori and meshes, `angara_bfs` and `angara_sssp`:
//! Mukosey, Semenov, Tretiakov, "Optimized Graph Based Routing Algorithm for the Angara
//! Interconnect", arXiv:2110.00851, 2021 (section 3: the routing graph and its
//! deadlock-free extension; section 4: the BFS and SSSP table generators).
//!
//! The files, in the paper's order: `routing_graph.rs`, the routing graph (`Rg`: its
//! vertex numbering, the order-violating First and Last Steps kept by the deadlock check,
//! the edges); `search.rs`, the searches over it and the BFS and SSSP table builders;
//! `variants.rs`, the Genetic builder (each pair's shortest routes, one picked by the
//! genetic search); and this file, the tables as a [`Routing`] and the registry entries.
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

mod routing_graph;
mod search;
mod variants;

use super::genetic;
use super::registry::{BuildContext, RoutingEntry, Settings};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::Packet;
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use routing_graph::Rg;
use search::{bfs_tables, sssp_tables, Search};
use serde::Deserialize;
use std::sync::Arc;
use topology::shape::TorusShape;
use topology::Shape;
use topology::{Network, PortId, SwitchId};
use variants::genetic_tables;

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
    doc: "the Angara routing graph with the paper's Genetic search: one of each pair's shortest routes (up to 32) per gene, 2-point crossover, random parents, per-gene mutation, fitness sigma(4, R); slow, for small tori",
    settings: Settings::typed::<GeneticSettings>(&[
        Setting { key: "population", default: "100", doc: "chromosomes per generation (the paper: 100)" },
        Setting { key: "mutation", default: "0.02", doc: "probability that a child's gene mutates, in [0, 1] (the paper: 2 %)" },
        Setting {
            key: "patience",
            default: "30",
            doc: "stop after this many generations without a better best table (the paper: 30)",
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

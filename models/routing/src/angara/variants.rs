//! The Genetic table builder (the paper's section 4.2): the shortest routes of every pair
//! (at most [`MAX_VARIANTS`]) found by walking the routing graph back from the destination,
//! one picked per pair by the genetic search.

use super::routing_graph::Rg;
use super::search::{no_route, search_from, store, Search};
use super::{GeneticSummary, MAX_VARIANTS};
use crate::genetic;
use crate::turns::Channels;
use crate::RoutingError;
use topology::{PortId, SwitchId};

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
pub(super) fn genetic_tables(
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
    // The paper's sigma counts the switch-to-switch links: the search numbers them densely.
    let channels = Channels::new(net);
    let into = in_edges(rg);
    let zero = vec![0u64; net.ports.len()];
    let mut problem = genetic::Problem::new(channels.len());
    // Per gene: source, destination, and its routes as `(link, vc)` hops.
    type Gene = (SwitchId, SwitchId, Vec<Vec<(u32, u8)>>);
    let mut genes: Vec<Gene> = Vec::new();
    let mut alternatives = Vec::new();
    for src in 0..n as SwitchId {
        base::cancel::check("finding the Angara routes for the genetic search")?;
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
    base::cancel::check("running the genetic search")?;
    for ((src, dst, alternatives), &c) in genes.iter().zip(&choice) {
        store(rg, *src, *dst, &alternatives[c as usize], routes);
    }
    Ok(GeneticSummary { genes: genes.len(), outcome })
}

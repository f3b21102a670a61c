//! Searches over the routing graph and the BFS and SSSP table builders (the module docs,
//! "Tables"; the paper's Algorithms 1 to 4).

use super::routing_graph::Rg;
use crate::RoutingError;
use topology::{PortId, PortTarget, SwitchId};

/// Per-search state over the routing graph's vertices.
pub(super) struct Search {
    pub(super) level: Vec<u32>,
    weight: Vec<u64>,
    /// Edge index by which a vertex was reached.
    parent: Vec<u32>,
    paths: Vec<u64>,
    queue: Vec<u32>,
    next: Vec<u32>,
    touched: Vec<u32>,
}

impl Search {
    pub(super) fn new(vertices: usize) -> Self {
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

pub(super) fn store(
    rg: &Rg<'_>,
    src: SwitchId,
    dst: SwitchId,
    hops: &[(u32, u8)],
    routes: &mut [Vec<(PortId, u8)>],
) {
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

pub(super) fn no_route(src: SwitchId, dst: SwitchId) -> RoutingError {
    RoutingError::new(
        "topology.failed_links",
        format!(
            "the Angara routing graph has no legal route from switch {src} to {dst} around the failed links \
             (direction order, direction bits and First/Last Steps); use fewer faults or a table-based routing"
        ),
    )
}
/// The paper's Algorithms 1 and 2.
pub(super) fn bfs_tables(
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
        base::cancel::check("building the Angara BFS tables")?;
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
pub(super) fn search_from(
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
pub(super) fn sssp_tables(
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
        base::cancel::check("building the Angara SSSP tables")?;
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
        base::cancel::check("building the Angara SSSP tables")?;
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

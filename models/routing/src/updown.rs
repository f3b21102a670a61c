//! Up*/Down* routing for any topology, deadlock-free with one VC: Schroeder et al.,
//! "Autonet: A High-Speed, Self-Configuring Local Area Network Using Point-to-Point Links",
//! IEEE JSAC 9(8), 1991.
//!
//! BFS levels from a root switch order the switches by `(level, id)`; a link is "up" when
//! it leads to a smaller `(level, id)`. A legal route never takes an up link after a down
//! link. The candidates are the next hops on the shortest legal routes, from a table of
//! legal distances over the states `(switch, phase)` (phase up: down links not yet taken;
//! phase down), computed per destination by a backward BFS, in parallel.

use super::graph::SwitchGraph;
use super::registry::{RootSetting, RoutingEntry, Settings, ROOT_KEYS};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::Packet;
use crate::RoutingError;
use base::rng::Rng;
use rayon::prelude::*;
use std::sync::Arc;
use topology::metrics::{bfs, DistanceTable};
use topology::{Network, PortId, SwitchId};

/// Packet phase once it has taken a down link.
pub(crate) const DOWN: u8 = 1;

/// Up*/Down* routing.
pub struct UpDown {
    graph: SwitchGraph,
    legal: UdLegal,
}

/// The Up*/Down* order of one root and its legal-distance table: shared by `up_down`,
/// `mud` (one per VC), `tor` and `lash_tor`.
pub(crate) struct UdLegal {
    n: usize,
    level: Vec<u32>,
    /// Whether links between switches of equal level are up/down links (ordered by id, as
    /// in Autonet) or left out ("horizontal", as in SurePath's escape subnetwork).
    ties_by_id: bool,
    root: SwitchId,
    /// Per destination `d`: `2n` legal distances, `[d * 2n + s]` from `(s, up)` and
    /// `[d * 2n + n + s]` from `(s, down)`; `u8::MAX` when no legal route exists.
    dist: Vec<u8>,
    max_hops: u32,
}

/// The least eccentric switch (lowest id on ties); an error if `net` is disconnected.
pub(crate) fn central_switch(net: &Network, dist: &DistanceTable) -> Result<SwitchId, RoutingError> {
    super::graph::connected_diameter(dist)?;
    let n = net.num_switches();
    Ok((0..n as SwitchId)
        .min_by_key(|&s| ((0..n as SwitchId).map(|t| dist.get(s, t)).max().unwrap_or(0), s))
        .unwrap_or(0))
}

/// `root`, or the least eccentric switch when it is `None`; an error if `net` is
/// disconnected.
pub(crate) fn root_or_central(net: &Network, root: Option<SwitchId>) -> Result<SwitchId, RoutingError> {
    let Some(r) = root else {
        return central_switch(net, &DistanceTable::compute_unless_stopped::<RoutingError>(net)?);
    };
    if let Some(far) = bfs(net, r).iter().position(|&l| l == u32::MAX) {
        return Err(RoutingError::disconnected(r, far as SwitchId));
    }
    Ok(r)
}

impl UdLegal {
    /// BFS levels from `root` and the legal distances of every state to every switch.
    pub(crate) fn new(graph: &SwitchGraph, net: &Network, root: SwitchId) -> Result<Self, RoutingError> {
        Self::build(graph, net, root, true)
    }

    /// Like [`UdLegal::new`], but links between switches at the same BFS level are neither
    /// up nor down and no legal route uses them (SurePath's "black" links only).
    pub(crate) fn without_horizontal(
        graph: &SwitchGraph,
        net: &Network,
        root: SwitchId,
    ) -> Result<Self, RoutingError> {
        Self::build(graph, net, root, false)
    }

    fn build(
        graph: &SwitchGraph,
        net: &Network,
        root: SwitchId,
        ties_by_id: bool,
    ) -> Result<Self, RoutingError> {
        Self::with_levels(graph, net, root, ties_by_id, bfs(net, root))
    }

    /// The legal distances for the order `(level, id)` of the switches (a link is up when
    /// it leads to a smaller one): BFS levels for Up*/Down*, DFS labels for `dfs`.
    pub(crate) fn with_levels(
        graph: &SwitchGraph,
        net: &Network,
        root: SwitchId,
        ties_by_id: bool,
        level: Vec<u32>,
    ) -> Result<Self, RoutingError> {
        let n = net.num_switches();
        if let Some(s) = level.iter().position(|&l| l == u32::MAX) {
            return Err(RoutingError::disconnected(root, s as SwitchId));
        }
        let mut dist = vec![u8::MAX; n * 2 * n];
        let rows = dist.par_chunks_mut((2 * n).max(1)).enumerate();
        rows.try_for_each_init(Vec::new, |queue: &mut Vec<u32>, (d, row)| {
            base::cancel::check("computing the Up*/Down* legal distances")?;
            legal_distances(graph, &level, ties_by_id, d as SwitchId, row, queue)
        })?;
        let max_hops = (0..n).flat_map(|d| dist[d * 2 * n..d * 2 * n + n].iter()).map(|&x| x as u32).max();
        Ok(Self { n, level, ties_by_id, root, dist, max_hops: max_hops.unwrap_or(0) })
    }

    /// The root switch.
    pub(crate) fn root(&self) -> SwitchId {
        self.root
    }

    /// Longest shortest legal route from an up state.
    pub(crate) fn max_hops(&self) -> u32 {
        self.max_hops
    }

    /// Whether the link from `a` to its neighbour `b` is an up link.
    pub(crate) fn is_up(&self, a: SwitchId, b: SwitchId) -> bool {
        link_is_up(&self.level, self.ties_by_id, a, b)
    }

    /// BFS level (distance to the root) of `s`.
    pub(crate) fn level(&self, s: SwitchId) -> u32 {
        self.level[s as usize]
    }

    /// Hops of the shortest legal route from `s` in `phase` (0 up, 1 down) to `dst`.
    pub(crate) fn legal(&self, dst: SwitchId, s: SwitchId, phase: u8) -> u32 {
        self.dist[dst as usize * 2 * self.n + phase as usize * self.n + s as usize] as u32
    }

    /// Appends the ports of `at` on shortest legal routes to `dst` from `phase`.
    pub(crate) fn next_ports(
        &self,
        graph: &SwitchGraph,
        at: SwitchId,
        dst: SwitchId,
        phase: u8,
        mut push: impl FnMut(PortId),
    ) {
        let here = self.legal(dst, at, phase);
        for &(port, n) in graph.neighbours(at) {
            let up = self.is_up(at, n);
            if up && phase == DOWN {
                continue;
            }
            if self.legal(dst, n, if up { 0 } else { DOWN }) + 1 == here {
                push(port);
            }
        }
    }
}

impl UpDown {
    /// Up*/Down* on `net` rooted at `root` (default: smallest eccentricity, lowest id).
    pub fn new(net: &Network, root: Option<SwitchId>) -> Result<Self, RoutingError> {
        let root = match root {
            Some(r) => r,
            None => central_switch(net, &DistanceTable::compute_unless_stopped::<RoutingError>(net)?)?,
        };
        let graph = SwitchGraph::new(net);
        let legal = UdLegal::new(&graph, net, root)?;
        Ok(Self { graph, legal })
    }

    /// Up*/Down*'s rule over a given order of the switches (see [`UdLegal::with_levels`]).
    pub(crate) fn with_order(net: &Network, root: SwitchId, order: Vec<u32>) -> Result<Self, RoutingError> {
        let graph = SwitchGraph::new(net);
        let legal = UdLegal::with_levels(&graph, net, root, true, order)?;
        Ok(Self { graph, legal })
    }

    /// Sum of the shortest legal distances over ordered pairs of `switches`.
    pub(crate) fn total_distance(&self, switches: &[SwitchId]) -> u64 {
        let mut sum = 0;
        for &d in switches {
            for &s in switches {
                sum += self.legal.legal(d, s, 0) as u64;
            }
        }
        sum
    }

    /// The root switch.
    pub fn root(&self) -> SwitchId {
        self.legal.root()
    }

    /// Whether the link from `a` to its neighbour `b` is an up link.
    pub fn is_up(&self, a: SwitchId, b: SwitchId) -> bool {
        self.legal.is_up(a, b)
    }
}

fn link_is_up(level: &[u32], ties_by_id: bool, a: SwitchId, b: SwitchId) -> bool {
    if ties_by_id {
        (level[b as usize], b) < (level[a as usize], a)
    } else {
        level[b as usize] < level[a as usize]
    }
}

/// Backward BFS over `(switch, phase)` states from `d`: fills `row` (`2n` entries).
fn legal_distances(
    graph: &SwitchGraph,
    level: &[u32],
    ties_by_id: bool,
    d: SwitchId,
    row: &mut [u8],
    queue: &mut Vec<u32>,
) -> Result<(), RoutingError> {
    let n = graph.num_switches();
    let is_up = |a: SwitchId, b: SwitchId| link_is_up(level, ties_by_id, a, b);
    queue.clear();
    row[d as usize] = 0;
    row[n + d as usize] = 0;
    queue.push(d);
    queue.push(n as u32 + d);
    let mut head = 0;
    while head < queue.len() {
        let state = queue[head];
        head += 1;
        let (x, phase) = ((state as usize % n) as SwitchId, state as usize / n);
        let next = row[state as usize] as u32 + 1;
        if next >= u8::MAX as u32 {
            return Err(RoutingError::algorithm(format!(
                "an Up*/Down* route to switch {d} is longer than 254 hops, the most its tables hold"
            )));
        }
        for &(_, s) in graph.neighbours(x) {
            if !ties_by_id && level[s as usize] == level[x as usize] {
                continue;
            }
            // Predecessor states (s, p) with a legal move s -> x landing in `phase`.
            let preds: &[usize] = if is_up(s, x) {
                if phase == 0 {
                    &[0]
                } else {
                    &[]
                }
            } else if phase == 1 {
                &[0, 1]
            } else {
                &[]
            };
            for &p in preds {
                let idx = p * n + s as usize;
                if row[idx] == u8::MAX {
                    row[idx] = next as u8;
                    queue.push(idx as u32);
                }
            }
        }
    }
    Ok(())
}

impl Routing for UpDown {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.legal.max_hops()
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let phase = packet.route.phase.min(DOWN);
        self.legal
            .next_ports(&self.graph, at, dst, phase, |port| out.push(Candidate { port, vc: 0, penalty: 0 }));
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        if !self.is_up(at, self.graph.next_switch(at, chosen.port)) {
            packet.route.phase = DOWN;
        }
    }
}

/// `up_down` in the routing registry.
pub const UP_DOWN: RoutingEntry = RoutingEntry {
    name: "up_down",
    doc: "Up*/Down*: shortest legal routes (never up after down) over BFS levels from a root",
    topologies: "any",
    vcs: "1",
    settings: Settings::typed::<RootSetting>(ROOT_KEYS),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(2, 0, 0),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        Ok(Arc::new(UpDown::new(ctx.net, ctx.root(s.root)?)?))
    },
};

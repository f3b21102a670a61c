//! TOR, Transition Oriented Routing: minimal routes on any topology, deadlock-free by
//! moving to the next VC at every turn that Up*/Down* forbids. Sancho, Robles, Flich,
//! López, Duato, "Effective Methodology for Deadlock-Free Minimal Routing in InfiniBand
//! Networks", ICPP'02, as described in Flich et al., "A Survey and Evaluation of
//! Topology-Agnostic Deterministic Routing Algorithms", IEEE TPDS 23(3), 2012 (the survey
//! below), sections 3 and 5.2.
//!
//! One Up*/Down* order (BFS levels from `routing.root`, default the least eccentric switch,
//! as `up_down`): a link is up when it leads to a smaller `(level, id)`. Every packet starts
//! in layer (VC) 0; whenever its route takes an up link right after a down link (a
//! forbidden down->up transition) it moves to the next layer, where it starts afresh. Each
//! layer thus carries only legal Up*/Down* route segments (acyclic), and packets only move
//! to higher layers: deadlock-free.
//!
//! Route selection. Among all minimal paths of a pair, TOR takes one with the fewest
//! forbidden transitions. The fewest transitions from a state `(switch, phase)` (phase: the
//! last link was down) to a destination depend only on that state, so they are computed
//! per destination by one pass over the switches in order of distance. A destination-based
//! table then gives, per `(switch, destination, phase)`, one minimal next hop achieving the
//! fewest transitions; among ties the link carrying the fewest (source, destination) paths
//! so far (ties: the lowest port), with link weights growing after each destination as in
//! DFSSSP's balancing. This replaces the survey's DFS path-removal balancing with a greedy
//! one-pass variant; the layer balancing step of the original (moving whole paths to
//! spare upper layers) is not done: spare VCs stay unused.
//!
//! With `routing.selection = "balanced"` a state lists, after the table's hop, every other
//! minimal next hop whose path can stay within the VCs (its layer plus the fewest
//! transitions left from there at most `router.vcs - 1`), and the balanced selection
//! (`balanced.rs`) picks one path per pair among them: the survey's per-pair balancing
//! rather than the per-destination table (on the survey's 16x8 torus, link-weight std
//! 64.6 against the survey's 78.3, where the table gives 109.4).
//!
//! Layers needed = largest number of forbidden transitions on a chosen path + 1; this is
//! the unbounded TOR of the survey (not the bounded DL variant): with fewer `router.vcs`
//! the configuration is refused. Route state: `phase = 2 * layer + down`.

use super::graph::{connected_diameter, SwitchGraph};
use super::registry::{RootSetting, RoutingEntry, Settings, ROOT_KEYS};
use super::updown::central_switch;
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use std::sync::Arc;
use topology::metrics::{bfs, DistanceTable};
use topology::{Network, PortId, SwitchId};

/// Most layers TOR may need (the layer and the phase share a `u8`).
pub const MAX_LAYERS: u32 = 127;

/// Transition Oriented Routing.
pub struct Tor {
    graph: SwitchGraph,
    n: usize,
    level: Vec<u32>,
    /// `next[(dst * n + at) * 2 + down]`: the port towards `dst` from `at` in that phase.
    next: Vec<PortId>,
    layers: u8,
    max_hops: u32,
    /// What listing every tie needs (`routing.selection = "balanced"`).
    ties: Option<Ties>,
}

/// The distances, per `(dst * n + at) * 2 + down` the fewest transitions left, and the
/// highest layer a listed tie may need (`router.vcs - 1`, at least the layers needed).
struct Ties {
    dist: DistanceTable,
    fewest: Vec<u8>,
    top_layer: u8,
}

impl Tor {
    /// TOR on `net` with the Up*/Down* order rooted at `root` (default: least eccentric);
    /// `endpoint_switch` gives the switches that are sources and destinations.
    pub fn new(
        net: &Network,
        root: Option<SwitchId>,
        endpoint_switch: &[SwitchId],
    ) -> Result<Self, RoutingError> {
        Self::build(net, root, endpoint_switch, None)
    }

    /// [`Tor::new`], listing with `ties_up_to` every tie whose path needs layers up to it
    /// (the balanced selection).
    fn build(
        net: &Network,
        root: Option<SwitchId>,
        endpoint_switch: &[SwitchId],
        ties_up_to: Option<u8>,
    ) -> Result<Self, RoutingError> {
        let n = net.num_switches();
        let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
        connected_diameter(&dist)?;
        let root = match root {
            Some(r) => r,
            None => central_switch(net, &dist)?,
        };
        let level = bfs(net, root);
        let graph = SwitchGraph::new(net);
        let mut tor =
            Self { graph, n, level, next: vec![PortId::MAX; n * n * 2], layers: 1, max_hops: 0, ties: None };
        let mut fewest = Vec::new();
        let mut terminal = vec![false; n];
        for &s in endpoint_switch {
            terminal[s as usize] = true;
        }
        let offsets = &net.port_offsets;
        let mut weight = vec![0u64; net.ports.len()];
        // Fewest transitions from (s, phase) to the current destination.
        let mut cost = vec![[0u32; 2]; n];
        let mut order: Vec<SwitchId> = Vec::with_capacity(n);
        let mut max_transitions = 0;
        for d in 0..n as SwitchId {
            base::cancel::check("building the TOR routes")?;
            order.clear();
            order.extend(0..n as SwitchId);
            order.sort_by_key(|&s| (dist.get(d, s), s));
            for &s in &order {
                if s == d {
                    cost[s as usize] = [0, 0];
                    continue;
                }
                let here = dist.get(d, s);
                for phase in 0..2u8 {
                    let mut best = (u32::MAX, u64::MAX, PortId::MAX);
                    for &(port, x) in tor.graph.neighbours(s) {
                        if dist.get(d, x) + 1 != here {
                            continue;
                        }
                        let up = tor.is_up(s, x);
                        let c = cost[x as usize][usize::from(!up)] + u32::from(phase == 1 && up);
                        let key = (c, weight[offsets[s as usize] as usize + port as usize], port);
                        if key < best {
                            best = key;
                        }
                    }
                    cost[s as usize][phase as usize] = best.0;
                    tor.next[(d as usize * n + s as usize) * 2 + phase as usize] = best.2;
                }
            }
            if ties_up_to.is_some() {
                fewest.extend(cost.iter().flat_map(|c| c.map(|t| t.min(u8::MAX as u32) as u8)));
            }
            if !terminal[d as usize] {
                continue;
            }
            for s in (0..n as SwitchId).filter(|&s| s != d && terminal[s as usize]) {
                max_transitions = max_transitions.max(cost[s as usize][0]);
                tor.max_hops = tor.max_hops.max(dist.get(d, s) as u32);
                let (mut at, mut phase) = (s, 0u8);
                while at != d {
                    let port = tor.port(at, d, phase);
                    weight[offsets[at as usize] as usize + port as usize] += 1;
                    let x = tor.graph.next_switch(at, port);
                    phase = u8::from(!tor.is_up(at, x));
                    at = x;
                }
            }
        }
        if max_transitions + 1 > MAX_LAYERS {
            return Err(RoutingError::algorithm(format!(
                "tor needs {} layers on this network, more than the {MAX_LAYERS} its tables hold",
                max_transitions + 1
            )));
        }
        tor.layers = (max_transitions + 1) as u8;
        if let Some(top) = ties_up_to {
            tor.ties = Some(Ties { dist, fewest, top_layer: top.max(tor.layers - 1) });
        }
        Ok(tor)
    }

    /// Layers (VCs) used.
    pub fn layers(&self) -> u8 {
        self.layers
    }

    fn is_up(&self, a: SwitchId, b: SwitchId) -> bool {
        (self.level[b as usize], b) < (self.level[a as usize], a)
    }

    fn port(&self, at: SwitchId, dst: SwitchId, down: u8) -> PortId {
        self.next[(dst as usize * self.n + at as usize) * 2 + down as usize]
    }

    /// The layer after the hop `at -> x` for a packet in `phase`, and its new phase.
    fn after(&self, at: SwitchId, x: SwitchId, phase: u8) -> (u8, u8) {
        let (layer, down) = (phase / 2, phase % 2);
        let up = self.is_up(at, x);
        (layer + u8::from(down == 1 && up), u8::from(!up))
    }
}

impl Routing for Tor {
    fn vcs_required(&self) -> u8 {
        self.layers
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn init(&self, _src: SwitchId, _dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.phase = 0;
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
        let phase = packet.route.phase;
        let port = self.port(at, dst, phase % 2);
        let (vc, _) = self.after(at, self.graph.next_switch(at, port), phase);
        out.push(Candidate { port, vc, penalty: 0 });
        if let Some(Ties { dist, fewest, top_layer }) = &self.ties {
            // Every other minimal next hop whose path can stay within the layers.
            let n = self.n;
            let left = |s: SwitchId, down: u8| fewest[(dst as usize * n + s as usize) * 2 + down as usize];
            let here = dist.get(dst, at);
            for &(p, x) in self.graph.neighbours(at) {
                if p == port || dist.get(dst, x) + 1 != here {
                    continue;
                }
                let (vc, down) = self.after(at, x, phase);
                if vc as u32 + left(x, down) as u32 <= *top_layer as u32 {
                    out.push(Candidate { port: p, vc, penalty: 0 });
                }
            }
        }
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        let (layer, down) = self.after(at, self.graph.next_switch(at, chosen.port), packet.route.phase);
        packet.route.phase = 2 * layer + down;
    }
}

/// `tor` in the routing registry.
pub const TOR: RoutingEntry = RoutingEntry {
    name: "tor",
    doc: "TOR: balanced minimal paths with the fewest forbidden Up*/Down* down->up turns (one order from a root); the VC goes up by one at each such turn",
    topologies: "any",
    vcs: "forbidden turns on the worst path + 1 (reported; fewer router.vcs is an error)",
    settings: Settings::typed::<RootSetting>(ROOT_KEYS),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(4, 0, 0),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        let ties_up_to = (ctx.selection == super::Selection::Balanced).then(|| ctx.vcs.saturating_sub(1));
        let r = Tor::build(ctx.net, ctx.root(s.root)?, ctx.endpoint_switch, ties_up_to)?;
        ctx.check_layers(r.layers())?;
        Ok(Arc::new(r))
    },
};

//! LASH-TOR: LASH whose paths may move to the next layer mid-route, with an Up*/Down* last
//! layer so that any number of VCs suffices. Skeie, Lysne, Flich, López, Robles, Duato,
//! "LASH-TOR: A Generic Transition-Oriented Routing Algorithm", ICPADS'04, as described in
//! Flich et al., "A Survey and Evaluation of Topology-Agnostic Deterministic Routing
//! Algorithms", IEEE TPDS 23(3), 2012 (the survey below), section 5.2.2.
//!
//! Paths: one shortest path per switch pair from a destination-based next-hop table,
//! balanced as in `dfsssp` (one Dijkstra per destination, link weights growing with the
//! pairs routed over them; the survey's evaluation drew the minimal path at random).
//!
//! Layers: `L = router.vcs`. Every layer's channel dependency graph is kept acyclic
//! incrementally (`DynDag`). The paths are laid out in order (switches with endpoints
//! `a < b`: `a -> b`, then `b -> a`), each starting in layer 0. In a layer below the last,
//! hop by hop, the dependency (arrival channel, next channel) is added to the layer's graph;
//! if it would close a cycle, the path moves to the next layer at that switch (the next
//! channel is taken on the next VC) and continues there.
//!
//! The last layer `L - 1` must never fail, so it is prepared first with the dependencies of
//! Up*/Down* routes (root `routing.root`, default the least eccentric switch) from every
//! switch to every destination: shortest legal up*-then-down* routes that keep to the
//! table path where the rest of it is legal. These are legal Up*/Down* turns only, hence
//! acyclic. A path entering the last layer at switch `x` (or starting there when `L = 1`)
//! tries to add all dependencies of its remaining table path from `x` at once; if they fit,
//! it follows the table to the end (minimal), otherwise it follows the prepared Up*/Down*
//! route from `x` (whose dependencies are already in the graph: it always fits, but may be
//! non-minimal). The outcome depends only on `(x, destination)` and is remembered. Every
//! layer is acyclic and packets only move up, so the routing is deadlock-free and always
//! fits in the given VCs. This last-layer rule is this implementation's reading of the
//! survey's "the last layer follows Up*/Down*" bound (as in DL): Up*/Down* is the fallback,
//! not a restriction on every last-layer path.
//!
//! Switch lookup (O(radix)): the route state carries `phase = 4 * layer + 2 * ud + down`
//! (`ud`: the packet follows the Up*/Down* route of the last layer; `down`: it took a down
//! link there) and the channel it arrived on (`intermediate`, a global port id; `u32::MAX`
//! at the source). In a layer below the last, the packet stays if (arrival channel, table
//! channel) is in the layer's final dependency set, else it moves up. Dependencies only
//! ever join a layer, so one that closed a cycle when a path was laid out never joins
//! later: the lookup reproduces the construction exactly, and the verifier (which replays
//! the route state) sees exactly the dependencies used.

use super::dfsssp;
use super::graph::{connected_diameter, SwitchGraph};
use super::layered::{endpoints_per_switch, Added, DynDag, Tables};
use super::registry::{RootSetting, RoutingEntry, Settings};
use super::updown::{central_switch, UdLegal, DOWN};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use std::sync::Arc;
use topology::metrics::DistanceTable;
use topology::{Network, PortId, SwitchId};

/// Most layers (the layer shares the `u8` phase with two flags).
pub const MAX_LAYERS: u8 = 63;

/// Whether a path entering the last layer at a switch keeps to its table path.
const UNKNOWN: u8 = 0;
const TABLE: u8 = 1;
const UPDOWN: u8 = 2;

/// LASH-TOR routing.
pub struct LashTor {
    t: Tables,
    graph: SwitchGraph,
    ud: UdLegal,
    /// `last[(dst * n + at) * 2 + down]`: the port of the last layer's Up*/Down* routes.
    last: Vec<PortId>,
    /// `entry[x * n + dst]`: TABLE or UPDOWN for paths entering the last layer at `x`.
    entry: Vec<u8>,
    /// Per free layer `l < L - 1`: `dep_offsets[l * (channels + 1) + c]..[.. + c + 1]`
    /// indexes the sorted channels that `c` may be followed by in that layer.
    dep_offsets: Vec<u32>,
    dep_targets: Vec<u32>,
    /// Layers available (`router.vcs`).
    available: u8,
    /// Layers used.
    used: u8,
    max_hops: u32,
    /// Switch of every endpoint (a packet's destination switch).
    endpoint_switch: Vec<SwitchId>,
}

/// What a hop's decision asks the layers.
enum Ask {
    /// Does free layer `.0` take the dependency `.1 -> .2`?
    Keep(u8, u32, u32),
    /// Does a path entering the last layer at `.0` towards `.1` keep to its table path?
    Enter(SwitchId, SwitchId),
}

impl LashTor {
    /// LASH-TOR on `net` with `layers` layers (>= 1) and the Up*/Down* order of the last layer
    /// rooted at `root` (default: least eccentric switch).
    pub fn new(
        net: &Network,
        endpoint_switch: &[SwitchId],
        layers: u8,
        root: Option<SwitchId>,
    ) -> Result<Self, RoutingError> {
        let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
        connected_diameter(&dist)?;
        let root = match root {
            Some(r) => r,
            None => central_switch(net, &dist)?,
        };
        let mut t = Tables::new(net, endpoint_switch);
        let n = t.n;
        dfsssp::route(net, &mut t, &endpoints_per_switch(n, endpoint_switch))?;
        let graph = SwitchGraph::new(net);
        let ud = UdLegal::new(&graph, net, root)?;
        let channels = t.num_channels();
        let available = layers.clamp(1, MAX_LAYERS);
        let mut r = Self {
            t,
            graph,
            ud,
            last: vec![PortId::MAX; n * n * 2],
            entry: vec![UNKNOWN; n * n],
            dep_offsets: Vec::new(),
            dep_targets: Vec::new(),
            available,
            used: 1,
            max_hops: 0,
            endpoint_switch: endpoint_switch.to_vec(),
        };
        r.last_layer_table(&dist);

        // The last layer starts with the dependencies of its Up*/Down* routes.
        let free = available as usize - 1;
        let mut dags: Vec<DynDag> = (0..=free).map(|_| DynDag::new(channels)).collect();
        r.seed_last_layer(&mut dags[free])?;
        let deps = r.lay_out(&mut dags)?;
        r.index_dependencies(deps, channels);
        Ok(r)
    }

    /// Adds the dependencies of the last layer's Up*/Down* routes (every switch to every
    /// destination) to its graph `dag`.
    fn seed_last_layer(&self, dag: &mut DynDag) -> Result<(), RoutingError> {
        let n = self.t.n;
        for d in 0..n as SwitchId {
            base::cancel::check("seeding the LASH-TOR Up*/Down* layer")?;
            for x in (0..n as SwitchId).filter(|&x| x != d) {
                let (mut at, mut down, mut prev) = (x, 0u8, u32::MAX);
                while at != d {
                    let port = self.last[(d as usize * n + at as usize) * 2 + down as usize];
                    let c = self.t.channel(at, port);
                    if prev != u32::MAX {
                        assert!(dag.add(prev, c) != Added::Cycle, "lash_tor: Up*/Down* routes cycle");
                    }
                    let nx = self.graph.next_switch(at, port);
                    down = u8::from(!self.ud.is_up(at, nx));
                    (prev, at) = (c, nx);
                }
            }
        }
        Ok(())
    }

    /// Lays the paths out (the module docs), each layer's dependencies kept acyclic in
    /// `dags` (the last one seeded by [`LashTor::seed_last_layer`]); records the layers
    /// used, the longest route and the last layer's entries. Returns the dependencies that
    /// joined each free layer.
    fn lay_out(&mut self, dags: &mut [DynDag]) -> Result<Vec<Vec<(u32, u32)>>, RoutingError> {
        let n = self.t.n;
        let free = dags.len() - 1;
        let mut deps: Vec<Vec<(u32, u32)>> = vec![Vec::new(); free];
        let mut rest = Vec::new();
        let terminals = self.t.terminals.clone();
        let mut entry = std::mem::take(&mut self.entry);
        for (i, &a) in terminals.iter().enumerate() {
            base::cancel::check("laying out the LASH-TOR paths")?;
            for &b in &terminals[i + 1..] {
                for (s, d) in [(a, b), (b, a)] {
                    let (mut at, mut phase, mut prev, mut hops) = (s, 0u8, u32::MAX, 0u32);
                    while at != d {
                        let (port, next_phase) = self.step(at, d, phase, prev, &mut |ask| match ask {
                            Ask::Keep(layer, c_in, c_out) => match dags[layer as usize].add(c_in, c_out) {
                                Added::New => {
                                    deps[layer as usize].push((c_in, c_out));
                                    true
                                }
                                Added::Existing => true,
                                Added::Cycle => false,
                            },
                            Ask::Enter(x, d) => {
                                let e = &mut entry[x as usize * n + d as usize];
                                if *e == UNKNOWN {
                                    rest.clear();
                                    self.t.deps(x, d as usize, &mut rest);
                                    *e = if dags[free].add_all(&rest) { TABLE } else { UPDOWN };
                                }
                                *e == TABLE
                            }
                        });
                        self.used = self.used.max(next_phase / 4 + 1);
                        prev = self.t.channel(at, port);
                        phase = next_phase;
                        at = self.graph.next_switch(at, port);
                        hops += 1;
                        assert!(hops as usize <= 2 * n + 2, "lash_tor: route from {s} to {d} loops");
                    }
                    self.max_hops = self.max_hops.max(hops);
                }
            }
        }
        self.entry = entry;
        Ok(deps)
    }

    /// The final dependency sets `deps` of the free layers as the lookup reads them
    /// (`dep_offsets`, `dep_targets`).
    fn index_dependencies(&mut self, mut deps: Vec<Vec<(u32, u32)>>, channels: usize) {
        let free = deps.len();
        self.dep_offsets = Vec::with_capacity(free * (channels + 1));
        for layer in deps.iter_mut() {
            layer.sort_unstable();
            let base = self.dep_targets.len();
            let mut k = 0;
            for c in 0..=channels as u32 {
                self.dep_offsets.push((base + k) as u32);
                while k < layer.len() && layer[k].0 == c {
                    k += 1;
                }
            }
            self.dep_targets.extend(layer.iter().map(|&(_, c)| c));
        }
    }

    /// Layers available (`router.vcs`, at most [`MAX_LAYERS`]).
    pub fn layers_available(&self) -> u8 {
        self.available
    }

    /// Layers used by some path.
    pub fn layers(&self) -> u8 {
        self.used
    }

    /// The last layer's Up*/Down* ports: the table's while the rest of the table path is
    /// legal Up*/Down*, else a shortest legal next hop (preferring one from which the table
    /// path is legal again; else the lowest port).
    fn last_layer_table(&mut self, dist: &DistanceTable) {
        let n = self.t.n;
        let mut legal = vec![[false; 2]; n];
        let mut order: Vec<SwitchId> = (0..n as SwitchId).collect();
        for d in 0..n as SwitchId {
            order.sort_by_key(|&s| (dist.get(d, s), s));
            for &s in &order {
                if s == d {
                    legal[s as usize] = [true, true];
                    continue;
                }
                let (_, x) = self.t.step(s, d as usize);
                let up = self.ud.is_up(s, x);
                let rest = legal[x as usize][usize::from(!up)];
                legal[s as usize] = [rest, rest && !up];
            }
            for s in (0..n as SwitchId).filter(|&s| s != d) {
                for down in 0..2u8 {
                    let idx = (d as usize * n + s as usize) * 2 + down as usize;
                    if legal[s as usize][down as usize] {
                        self.last[idx] = self.t.next[d as usize * n + s as usize];
                        continue;
                    }
                    if self.ud.legal(d, s, down) >= u8::MAX as u32 {
                        continue; // no legal route: a state no packet is in
                    }
                    let (mut first, mut back) = (PortId::MAX, PortId::MAX);
                    self.ud.next_ports(&self.graph, s, d, down, |port| {
                        if first == PortId::MAX {
                            first = port;
                        }
                        let x = self.graph.next_switch(s, port);
                        if back == PortId::MAX && legal[x as usize][usize::from(!self.ud.is_up(s, x))] {
                            back = port;
                        }
                    });
                    self.last[idx] = if back != PortId::MAX { back } else { first };
                }
            }
        }
    }

    /// The port from `at` towards `dst` in route state `phase`, having arrived on channel
    /// `prev` (`u32::MAX` at the source), and the route state after the hop.
    fn step(
        &self,
        at: SwitchId,
        dst: SwitchId,
        phase: u8,
        prev: u32,
        ask: &mut dyn FnMut(Ask) -> bool,
    ) -> (PortId, u8) {
        let n = self.t.n;
        let last = self.available - 1;
        let (mut layer, mut ud, mut down) = (phase / 4, (phase / 2) % 2, phase % 2);
        let table = self.t.next[dst as usize * n + at as usize];
        if layer < last {
            if prev == u32::MAX || ask(Ask::Keep(layer, prev, self.t.channel(at, table))) {
                return (table, 4 * layer);
            }
            layer += 1;
            if layer < last {
                return (table, 4 * layer);
            }
        }
        if layer == last && (prev == u32::MAX || phase / 4 < last) {
            // Entering the last layer here.
            ud = u8::from(!ask(Ask::Enter(at, dst)));
            down = 0;
        }
        if ud == 0 {
            return (table, 4 * layer);
        }
        let port = self.last[(dst as usize * n + at as usize) * 2 + down as usize];
        debug_assert!(port != PortId::MAX, "lash_tor: no Up*/Down* port at {at} to {dst}");
        let up = self.ud.is_up(at, self.graph.next_switch(at, port));
        (port, 4 * layer + 2 + if up { 0 } else { DOWN })
    }

    /// Whether free layer `layer` holds the dependency `c_in -> c_out`.
    fn holds(&self, layer: u8, c_in: u32, c_out: u32) -> bool {
        let base = layer as usize * (self.t.num_channels() + 1) + c_in as usize;
        let (a, b) = (self.dep_offsets[base] as usize, self.dep_offsets[base + 1] as usize);
        self.dep_targets[a..b].contains(&c_out)
    }

    /// Answers a hop's question from the finished tables.
    fn lookup(&self, ask: Ask) -> bool {
        match ask {
            Ask::Keep(layer, c_in, c_out) => self.holds(layer, c_in, c_out),
            Ask::Enter(x, d) => self.entry[x as usize * self.t.n + d as usize] == TABLE,
        }
    }
}

impl Routing for LashTor {
    fn vcs_required(&self) -> u8 {
        self.used
    }

    fn reads(&self) -> Reads {
        // `on_forward` reads the packet's destination endpoint, not its source.
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn init(&self, _src: SwitchId, _dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.phase = 0;
        state.intermediate = u32::MAX;
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
        let r = packet.route;
        let (port, phase) = self.step(at, dst, r.phase, r.intermediate, &mut |ask| self.lookup(ask));
        out.push(Candidate { port, vc: phase / 4, penalty: 0 });
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        // Replays the decision (the VC of `chosen` may have been rewritten by a VC policy).
        let dst = self.endpoint_switch[packet.dst as usize];
        let r = packet.route;
        let (port, phase) = self.step(at, dst, r.phase, r.intermediate, &mut |ask| self.lookup(ask));
        debug_assert_eq!(port, chosen.port);
        packet.route.phase = phase;
        packet.route.intermediate = self.t.channel(at, port);
    }
}

/// `lash_tor` in the routing registry.
pub const LASH_TOR: RoutingEntry = RoutingEntry {
    name: "lash_tor",
    doc: "LASH-TOR: one balanced shortest path per pair laid into layers, moving to the next layer where a dependency would close a cycle; the last layer falls back to Up*/Down*, so it fits any router.vcs",
    topologies: "any",
    vcs: "<= router.vcs (the layers used are reported)",
    settings: Settings::typed::<RootSetting>(&[Setting {
        key: "root",
        default: "least eccentric switch (lowest id on ties)",
        doc: "switch id of the root of the last layer's Up*/Down* levels",
    }]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(9, 0, 0),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        Ok(Arc::new(LashTor::new(ctx.net, ctx.endpoint_switch, ctx.vcs, ctx.root(s.root)?)?))
    },
};

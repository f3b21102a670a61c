//! Route verification and analysis without simulating: the channel dependency graph (CDG)
//! of everything a configuration's routing can do, its acyclicity, reachability of every
//! destination, and the path metrics of the routing survey and the Angara seed.
//!
//! # What is enumerated
//! The verifier asks the routing exactly what the router asks it: [`next_hops`] with the
//! configuration's VC policy applied, under a [`LoadView`] that reports empty buffers.
//! For every destination switch `d` (in parallel) and every source switch, it explores all
//! states reachable from injection. A state is `(source, switch, input port, VC, hops,
//! route state)`; the source is part of it because a routing may read the packet's source
//! (torus DOR places its dateline relative to it). From a state, every candidate `(port,
//! vc)` is a channel use, and a dependency goes from the channel the packet arrived on to
//! it. The packet is updated as the router does on a grant: `on_forward`, `hops += 1`,
//! `vc = chosen.vc`.
//!
//! * Multipath and adaptive routings list all their candidates (the selection happens
//!   after `next_hops`), so all of them are followed.
//! * Random choices at injection ([`Routing::init`]): for the Dragonfly Valiant and UGAL
//!   routings every intermediate group is enumerated exactly (every group but the source's
//!   and the destination's, or the minimal state when the routing itself picks none). For
//!   other routings `init` is called with the configuration's RNG stream and 31 further
//!   seeds, and the distinct states are kept (a sample, not a proof, for routings with
//!   many random states).
//! * Load-dependent decisions at the source switch (UGAL choosing between the minimal and
//!   the Valiant path): at hop 0 the routing is asked again with each port it proposed
//!   under zero load reported as heavily loaded, and every outcome is followed. Decisions
//!   after the first hop must show up as candidates, as the [`Routing`] contract asks.
//!
//! Only switches with endpoints are sources and destinations (a packet needs a source
//! endpoint): for meshes, tori, HyperX, Dragonfly and RRG that is every switch.
//!
//! A pair fails to reach its destination when a state has no candidate, a candidate leads
//! to a port without a switch behind it, or a route grows longer than the number of
//! switches plus the routing's `max_hops` (a loop).
//!
//! # Path metrics
//! Average routing distance, link weights and sigma use one path per ordered pair: the
//! path taken when the first candidate is always chosen (like `selection = "first"`, with
//! zero load), starting from the route state that `init` draws from the configuration's
//! routing stream of the source switch. The longest path, in contrast, is over all routes
//! the verifier explored.
//!
//! * ARD (survey, section 6.2): switches visited summed over all `N^2` ordered pairs of
//!   switches, a self pair counting 1, divided by `N^2` (pairs that fail are left out).
//! * Link weight: number of those paths crossing each directed switch-to-switch link;
//!   average, sample standard deviation (over `|C| - 1`, which reproduces
//!   the survey's Table 3) and maximum (the edge-forwarding index of the
//!   Angara seed) over all directed links, unused ones included.
//! * `sigma(k, R)` (Angara seed): `(1/|C| sum_c |gamma_perfect - gamma_c|^k)^(1/k)` with
//!   `gamma_c` the link weight and `gamma_perfect` the average channel load of a routing
//!   whose every route is minimal, i.e. the sum of shortest distances over the ordered
//!   pairs divided by `|C|` (the number of directed links). `k = 4`, as the seed uses.
//!
//! # Determinism
//! Destinations are processed with rayon; the CDG is a set of edges (union is order
//! independent) sorted before use, counters are integer sums, failure lists are sorted, and
//! the cycle search walks nodes in sorted order. The report (but its time) is the same for
//! any number of threads.
//!
//! # Escape subnetworks (Duato)
//! With `routing.escape_vcs > 0` the whole CDG may be cyclic (the routing VCs need not be
//! deadlock-free on their own). Deadlock freedom then follows from Duato's condition for
//! VCT: every state in the routing VCs is offered an escape channel (checked at every
//! explored state; a miss counts as an unreachable pair), the escape channels'
//! dependencies among themselves are acyclic, and no dependency leads from an escape
//! channel back to a routing one (packets never leave the escape). `acyclic` reports that
//! check, `full_cdg_acyclic` the whole graph, and a witness cycle lists escape channels.
//! Escape reachability is part of the exploration: escape states are explored like any
//! other, so an escape route that cannot reach its destination is reported.

mod cdg;

pub use cdg::Channel;

use crate::packet::{Packet, RouteState};
use crate::rng::{stream, Purpose, Rng};
use crate::routing::{Candidate, Hop, LoadView, Routes, Routing, VcPolicy};
use crate::sim::Simulation;
use crate::topology::metrics::bfs;
use crate::topology::{EndpointId, Network, PortId, PortTarget, Shape, SwitchId};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::HashSet;
use std::time::Instant;

/// The exponent `k` of the reported `sigma(k, R)`.
pub const SIGMA_K: u32 = 4;
/// At most this many failing pairs are listed (all are counted).
pub const MAX_LISTED_FAILURES: usize = 100;
/// `init` calls per pair for routings whose random states are sampled.
const INIT_SAMPLES: u64 = 32;
/// The occupancy a probed port reports.
const LOADED: u32 = 1 << 24;

/// A source-destination pair whose packets may not arrive.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Unreachable {
    /// Source switch.
    pub src: SwitchId,
    /// Destination switch.
    pub dst: SwitchId,
    /// Where it went wrong.
    pub at: SwitchId,
    /// What went wrong.
    pub reason: String,
}

/// Paths crossing one directed link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LinkWeight {
    /// The switch the link leaves.
    pub switch: SwitchId,
    /// Its output port.
    pub port: PortId,
    /// Number of source-destination paths crossing it.
    pub weight: u64,
}

/// Everything `xnet routes` reports for one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoutesReport {
    /// The network's description.
    pub network: String,
    /// The routing's name.
    pub routing: String,
    /// The VC policy in force.
    pub vc_policy: VcPolicy,
    /// VCs per port in the configuration.
    pub vcs: u8,
    /// Source/destination switches (those with endpoints).
    pub switches: usize,
    /// Destination switches whose routes were checked: all of them unless sampled
    /// ([`analyse_sampled`]).
    pub destinations_checked: usize,
    /// Directed switch-to-switch links.
    pub links: usize,
    /// VCs reserved for the escape subnetwork (0: none).
    pub escape_vcs: u8,
    /// Deadlock-free by the check that applies: without an escape subnetwork, the channel
    /// dependency graph is acyclic; with one (Duato), the escape channels' dependencies
    /// among themselves are acyclic, no dependency leads out of the escape, and every
    /// state in the routing VCs was offered an escape channel (else it counts as
    /// unreachable).
    pub acyclic: bool,
    /// A cycle when there is one (of the escape channels, with an escape subnetwork): each
    /// channel's packets wait for the next one's, and the last one's for the first.
    pub cycle: Vec<Channel>,
    /// Whether the whole CDG, routing VCs included, is acyclic (with an escape subnetwork
    /// it need not be).
    pub full_cdg_acyclic: bool,
    /// Dependencies from an escape channel to a routing channel (must be 0).
    pub escape_back_dependencies: u64,
    /// Channels `(link, VC)` used by some route.
    pub channels: usize,
    /// Dependencies between channels.
    pub dependencies: usize,
    /// Routing states explored.
    pub states: u64,
    /// Ordered pairs (distinct switches) that may fail to reach their destination.
    pub unreachable_pairs: u64,
    /// The first [`MAX_LISTED_FAILURES`] of those, sorted.
    pub unreachable: Vec<Unreachable>,
    /// Average routing distance in switches visited (survey definition).
    pub average_routing_distance: f64,
    /// Average link weight.
    pub link_weight_avg: f64,
    /// Standard deviation of the link weight (sample: divided by `links - 1`, as the survey's).
    pub link_weight_std: f64,
    /// Largest link weight: the edge-forwarding index.
    pub link_weight_max: u64,
    /// `sigma(k, R)` of the Angara seed with `k = SIGMA_K`.
    pub sigma: f64,
    /// `gamma_perfect`: average link weight of a routing with all routes minimal.
    pub perfect_channel_load: f64,
    /// Longest route in switch-to-switch hops, over all routes explored.
    pub longest_path: u32,
    /// Longest first-candidate path.
    pub longest_first_path: u32,
    /// Largest VC index used plus one.
    pub vcs_used: u32,
    /// Weight of every directed link, in `(switch, port)` order.
    pub link_weights: Vec<LinkWeight>,
    /// Wall-clock seconds of the analysis (the only non-deterministic field).
    pub seconds: f64,
}

/// Analyses the routes of `sim`'s configuration on the current rayon pool.
pub fn analyse(sim: &Simulation) -> RoutesReport {
    analyse_with(&sim.net, &sim.routes(), sim.config.router.vcs, sim.config.simulation.seed, None)
}

/// Like [`analyse`], but only for `destinations` evenly spaced destination switches (all
/// sources): a cycle or an unreachable pair it finds is real, but an acyclic verdict
/// covers only the routes towards those destinations. For networks too large to verify
/// whole; the path metrics are over the same pairs.
pub fn analyse_sampled(sim: &Simulation, destinations: usize) -> RoutesReport {
    analyse_with(
        &sim.net,
        &sim.routes(),
        sim.config.router.vcs,
        sim.config.simulation.seed,
        Some(destinations),
    )
}

/// Analyses `routes` (routing, VC policy, escape subnetwork) with `vcs` VCs per port on
/// `net`; `seed` picks the RNG streams given to `init` (as the simulation's
/// `simulation.seed`); `sample`: only that many evenly spaced destinations.
pub fn analyse_with(
    net: &Network,
    routes: &Routes,
    vcs: u8,
    seed: u64,
    sample: Option<usize>,
) -> RoutesReport {
    let t0 = Instant::now();
    let routing = &*routes.routing;
    let ctx = Ctx::new(net, routes, vcs, seed);
    let destinations: Vec<SwitchId> = match sample {
        Some(k) if k < ctx.terminals.len() => {
            let n = ctx.terminals.len();
            (0..k.max(1)).map(|i| ctx.terminals[i * n / k.max(1)]).collect()
        }
        _ => ctx.terminals.clone(),
    };
    let acc = destinations
        .par_iter()
        .fold(
            || Acc::new(net),
            |mut acc, &d| {
                ctx.explore(d, &mut acc);
                ctx.first_paths(d, &mut acc);
                acc
            },
        )
        .reduce(|| Acc::new(net), Acc::merge);
    let mut edges: Vec<(u64, u64)> = acc.edges.into_iter().collect();
    edges.sort_unstable();
    let is_escape = |k: u64| routes.is_escape((k & 0xff) as u8);
    let to_channels = |keys: Vec<u64>| -> Vec<Channel> {
        keys.into_iter().map(|k| Channel { escape: is_escape(k), ..cdg::channel(net, k) }).collect()
    };
    let graph = cdg::Cdg::new(acc.nodes.into_iter().collect(), &edges);
    let full_cycle = graph.find_cycle();
    let full_cdg_acyclic = full_cycle.is_none();
    // Duato: with an escape subnetwork, what must be acyclic is the escape channels'
    // dependencies among themselves, and no packet may leave the escape.
    let (cycle, escape_back_dependencies) = if routes.escape.is_some() {
        let escape_edges: Vec<(u64, u64)> =
            edges.iter().copied().filter(|&(a, b)| is_escape(a) && is_escape(b)).collect();
        let back = edges.iter().filter(|&&(a, b)| is_escape(a) && !is_escape(b)).count() as u64;
        let escape_nodes = graph.nodes.iter().copied().filter(|&k| is_escape(k)).collect();
        (to_channels(cdg::Cdg::new(escape_nodes, &escape_edges).find_cycle().unwrap_or_default()), back)
    } else {
        (to_channels(full_cycle.unwrap_or_default()), 0)
    };
    let vcs_used = graph.nodes.iter().map(|&k| (k & 0xff) as u32 + 1).max().unwrap_or(0);

    let mut failures = acc.failures;
    failures.sort();
    failures.dedup_by(|a, b| (a.src, a.dst) == (b.src, b.dst));
    let unreachable_pairs = failures.len() as u64;
    failures.truncate(MAX_LISTED_FAILURES);

    let n = destinations.len() as f64;
    let mut link_weights = Vec::new();
    for s in 0..net.num_switches() as SwitchId {
        let base = net.port_offsets[s as usize] as usize;
        for (port, _) in net.neighbours(s) {
            link_weights.push(LinkWeight { switch: s, port, weight: acc.link_counts[base + port as usize] });
        }
    }
    let links = link_weights.len();
    let c = links.max(1) as f64;
    let total: u64 = link_weights.iter().map(|l| l.weight).sum();
    let avg = total as f64 / c;
    let var = link_weights.iter().map(|l| (l.weight as f64 - avg).powi(2)).sum::<f64>() / (c - 1.0).max(1.0);
    // Links are bidirectional, so a BFS from each destination gives every source's distance.
    let shortest_total: u64 = destinations
        .par_iter()
        .map(|&d| {
            let dist = bfs(net, d);
            ctx.terminals
                .iter()
                .map(|&s| dist[s as usize] as u64)
                .filter(|&x| x != u32::MAX as u64)
                .sum::<u64>()
        })
        .sum();
    let perfect = shortest_total as f64 / c;
    let sigma =
        (link_weights.iter().map(|l| (perfect - l.weight as f64).abs().powi(SIGMA_K as i32)).sum::<f64>()
            / c)
            .powf(1.0 / SIGMA_K as f64);
    RoutesReport {
        network: net.name.clone(),
        routing: routing.name().to_string(),
        vc_policy: routes.vc_policy,
        vcs,
        escape_vcs: routes.escape.as_ref().map_or(0, |e| vcs - e.first_vc()),
        switches: ctx.terminals.len(),
        destinations_checked: destinations.len(),
        links,
        acyclic: cycle.is_empty() && escape_back_dependencies == 0,
        cycle,
        full_cdg_acyclic,
        escape_back_dependencies,
        channels: graph.nodes.len(),
        dependencies: graph.num_edges(),
        states: acc.states,
        unreachable_pairs,
        unreachable: failures,
        average_routing_distance: if acc.pairs == 0 {
            0.0
        } else {
            (acc.visited + destinations.len() as u64) as f64 / (acc.pairs as f64 + n)
        },
        link_weight_avg: avg,
        link_weight_std: var.sqrt(),
        link_weight_max: link_weights.iter().map(|l| l.weight).max().unwrap_or(0),
        sigma,
        perfect_channel_load: perfect,
        longest_path: acc.longest,
        longest_first_path: acc.longest_first,
        vcs_used,
        link_weights,
        seconds: t0.elapsed().as_secs_f64(),
    }
}

/// A load view with every buffer empty but (optionally) one port's.
struct Probe(Option<PortId>);

impl LoadView for Probe {
    fn vc_occupancy(&self, port: PortId, _vc: u8) -> u32 {
        self.port_occupancy(port)
    }
    fn port_occupancy(&self, port: PortId) -> u32 {
        if self.0 == Some(port) {
            LOADED
        } else {
            0
        }
    }
}

/// A routing state: what the routing's decisions may depend on.
#[derive(Clone, Copy, PartialEq, Eq)]
struct State {
    src: SwitchId,
    at: SwitchId,
    in_port: PortId,
    vc: u8,
    hops: u16,
    route: RouteState,
}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // Equal states hash equal: the route state is hashed through some of its fields.
        (self.src, self.at, self.in_port, self.vc, self.hops, route_key(&self.route)).hash(h);
    }
}

fn route_key(r: &RouteState) -> (u8, u8, u32) {
    (r.phase, r.global_hops, r.intermediate)
}

/// Per-thread results, merged in any order with an order-independent result.
struct Acc {
    edges: HashSet<(u64, u64)>,
    nodes: HashSet<u64>,
    failures: Vec<Unreachable>,
    states: u64,
    longest: u32,
    longest_first: u32,
    link_counts: Vec<u64>,
    /// Switches visited summed over the reached ordered pairs of distinct switches.
    visited: u64,
    pairs: u64,
}

impl Acc {
    fn new(net: &Network) -> Self {
        Acc {
            edges: HashSet::new(),
            nodes: HashSet::new(),
            failures: Vec::new(),
            states: 0,
            longest: 0,
            longest_first: 0,
            link_counts: vec![0; net.ports.len()],
            visited: 0,
            pairs: 0,
        }
    }

    fn merge(mut self, mut other: Self) -> Self {
        if self.edges.len() < other.edges.len() {
            std::mem::swap(&mut self.edges, &mut other.edges);
        }
        self.edges.extend(other.edges);
        if self.nodes.len() < other.nodes.len() {
            std::mem::swap(&mut self.nodes, &mut other.nodes);
        }
        self.nodes.extend(other.nodes);
        self.failures.append(&mut other.failures);
        self.states += other.states;
        self.longest = self.longest.max(other.longest);
        self.longest_first = self.longest_first.max(other.longest_first);
        for (a, b) in self.link_counts.iter_mut().zip(&other.link_counts) {
            *a += b;
        }
        self.visited += other.visited;
        self.pairs += other.pairs;
        self
    }
}

struct Ctx<'a> {
    net: &'a Network,
    routing: &'a dyn Routing,
    routes: &'a Routes,
    vcs: u8,
    seed: u64,
    /// Switches with endpoints, in order.
    terminals: Vec<SwitchId>,
    /// First endpoint and its port, per switch (`None` without endpoints).
    endpoint: Vec<Option<(EndpointId, PortId)>>,
    /// Hops beyond which a route is taken for a loop.
    bound: u32,
}

impl<'a> Ctx<'a> {
    fn new(net: &'a Network, routes: &'a Routes, vcs: u8, seed: u64) -> Self {
        let routing = &*routes.routing;
        let mut endpoint = vec![None; net.num_switches()];
        for (e, &(s, p)) in net.endpoint_location.iter().enumerate().rev() {
            endpoint[s as usize] = Some((e as EndpointId, p));
        }
        let terminals =
            (0..net.num_switches() as SwitchId).filter(|&s| endpoint[s as usize].is_some()).collect();
        let escape_hops = routes.escape.as_ref().map_or(0, |e| e.max_hops());
        let bound = (net.num_switches() as u32)
            .saturating_add(routing.max_hops())
            .saturating_add(escape_hops)
            .min(u16::MAX as u32 - 1);
        Ctx { net, routing, routes, vcs, seed, terminals, endpoint, bound }
    }

    fn packet(&self, src: SwitchId, dst: SwitchId, hops: u16, vc: u8, route: RouteState) -> Packet {
        let src = self.endpoint[src as usize].expect("source endpoint").0;
        let dst = self.endpoint[dst as usize].expect("destination endpoint").0;
        Packet { hops, vc, route, ..Packet::new(src, 0, dst, 1, 0) }
    }

    /// The route state `init` gives at `src` with the configuration's stream.
    fn default_init(&self, src: SwitchId, dst: SwitchId) -> RouteState {
        let mut r = RouteState::default();
        self.routing.init(src, dst, &mut r, &mut stream(self.seed, Purpose::Routing, src as u64));
        r
    }

    /// Every route state a packet from `src` to `dst` may start with.
    fn init_states(&self, src: SwitchId, dst: SwitchId) -> Vec<RouteState> {
        let base = self.default_init(src, dst);
        let mut states = match (&self.net.shape, self.routing.name()) {
            (Shape::Dragonfly(df), "dragonfly_valiant" | "dragonfly_ugal") => {
                if base.intermediate == u32::MAX {
                    vec![base]
                } else {
                    let (gs, gd) = (df.group(src), df.group(dst));
                    (0..df.groups)
                        .filter(|&g| g != gs && g != gd)
                        .map(|g| {
                            let mut r = base;
                            r.intermediate = g;
                            r
                        })
                        .collect()
                }
            }
            _ => {
                let mut v = vec![base];
                for i in 1..INIT_SAMPLES {
                    let mut r = RouteState::default();
                    let id = (src as u64) << 32 | i;
                    self.routing.init(
                        src,
                        dst,
                        &mut r,
                        &mut stream(self.seed ^ 0x5eed_1e55, Purpose::Routing, id),
                    );
                    v.push(r);
                }
                v
            }
        };
        states.sort_by_key(route_key);
        states.dedup();
        states
    }

    fn fail(&self, acc: &mut Acc, st: &State, dst: SwitchId, reason: String) {
        acc.failures.push(Unreachable { src: st.src, dst, at: st.at, reason });
    }

    /// Whether the routing itself offers no candidate to `packet` in state `st` (packets in
    /// an escape subnetwork are not the routing's); records the failure. `next_hops` would
    /// panic on such a routing bug, so the verifier asks first.
    #[allow(clippy::too_many_arguments)]
    fn routing_offers_nothing(
        &self,
        acc: &mut Acc,
        st: &State,
        d: SwitchId,
        packet: &Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        scratch: &mut Vec<Candidate>,
    ) -> bool {
        if self.routes.is_escape(packet.vc) {
            return false;
        }
        scratch.clear();
        self.routing.candidates(st.at, d, &mut packet.clone(), load, rng, scratch);
        if !scratch.is_empty() {
            return false;
        }
        let reason = format!("no candidate at switch {} (hop {}, VC {})", st.at, packet.hops, packet.vc);
        self.fail(acc, st, d, reason);
        true
    }

    /// Explores every state of packets to `d` from every source, into `acc`.
    fn explore(&self, d: SwitchId, acc: &mut Acc) {
        let net = self.net;
        let mut rng: Rng = stream(self.seed, Purpose::Routing, d as u64 | 1 << 40);
        let mut visited: HashSet<State> = HashSet::new();
        let mut stack: Vec<State> = Vec::new();
        let mut cands: Vec<Candidate> = Vec::new();
        let mut scratch: Vec<Candidate> = Vec::new();
        let mut probes: Vec<Option<PortId>> = Vec::new();
        for &s in &self.terminals {
            if s == d {
                continue;
            }
            visited.clear();
            let in_port = self.endpoint[s as usize].expect("endpoint").1;
            for r in self.init_states(s, d) {
                let st = State { src: s, at: s, in_port, vc: 0, hops: 0, route: r };
                if visited.insert(st) {
                    stack.push(st);
                }
            }
            while let Some(st) = stack.pop() {
                acc.states += 1;
                let hop =
                    Hop { ports: net.ports(st.at), at: st.at, in_port: st.in_port, dst: d, vcs: self.vcs };
                let packet = self.packet(st.src, d, st.hops, st.vc, st.route);
                let arrival = if st.hops > 0 {
                    match net.ports(st.at)[st.in_port as usize].target {
                        PortTarget::Switch { switch, port } => {
                            Some(cdg::key(net.port_offsets[switch as usize] as usize + port as usize, st.vc))
                        }
                        _ => None,
                    }
                } else {
                    None
                };
                probes.clear();
                probes.push(None);
                let mut i = 0;
                while i < probes.len() {
                    let load = Probe(probes[i]);
                    i += 1;
                    if self.routing_offers_nothing(acc, &st, d, &packet, &load, &mut rng, &mut scratch) {
                        continue;
                    }
                    let mut p = packet;
                    self.routes.next_hops(&hop, &mut p, &load, &mut rng, &mut cands);
                    if self.routes.escape.is_some()
                        && !self.routes.is_escape(st.vc)
                        && !cands.iter().any(|c| self.routes.is_escape(c.vc))
                    {
                        self.fail(acc, &st, d, format!("no escape candidate at switch {}", st.at));
                    }
                    if st.hops == 0 && load.0.is_none() {
                        // Source decisions may depend on load: ask again with each
                        // proposed port loaded.
                        for c in &cands {
                            if !probes.contains(&Some(c.port)) {
                                probes.push(Some(c.port));
                            }
                        }
                    }
                    for &c in &cands {
                        self.step(d, &st, &p, c, arrival, acc, &mut visited, &mut stack);
                    }
                }
            }
        }
    }

    /// Follows candidate `c` of state `st` (packet `p` after the routing's decision).
    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        d: SwitchId,
        st: &State,
        p: &Packet,
        c: Candidate,
        arrival: Option<u64>,
        acc: &mut Acc,
        visited: &mut HashSet<State>,
        stack: &mut Vec<State>,
    ) {
        let net = self.net;
        let Some(port) = net.ports(st.at).get(c.port as usize) else {
            self.fail(acc, st, d, format!("candidate port {} of switch {} does not exist", c.port, st.at));
            return;
        };
        let PortTarget::Switch { switch: next, port: next_in } = port.target else {
            self.fail(
                acc,
                st,
                d,
                format!("candidate port {} of switch {} leads to no switch", c.port, st.at),
            );
            return;
        };
        let k = cdg::key(net.port_offsets[st.at as usize] as usize + c.port as usize, c.vc);
        acc.nodes.insert(k);
        if let Some(a) = arrival {
            acc.edges.insert((a, k));
        }
        let mut q = *p;
        self.routes.on_forward(st.at, c, &mut q);
        q.hops += 1;
        q.vc = c.vc;
        if next == d {
            acc.longest = acc.longest.max(q.hops as u32);
            return;
        }
        if q.hops as u32 >= self.bound {
            self.fail(acc, st, d, format!("route longer than {} hops (a loop?)", self.bound));
            return;
        }
        let ns = State { src: st.src, at: next, in_port: next_in, vc: q.vc, hops: q.hops, route: q.route };
        if visited.insert(ns) {
            stack.push(ns);
        }
    }

    /// The first-candidate path of every source to `d`, into the path metrics of `acc`.
    fn first_paths(&self, d: SwitchId, acc: &mut Acc) {
        let net = self.net;
        let mut rng: Rng = stream(self.seed, Purpose::Routing, d as u64 | 2 << 40);
        let mut cands = Vec::new();
        let load = Probe(None);
        'sources: for &s in &self.terminals {
            if s == d {
                continue;
            }
            let mut p = self.packet(s, d, 0, 0, self.default_init(s, d));
            let mut at = s;
            let mut in_port = self.endpoint[s as usize].expect("endpoint").1;
            let mut used = Vec::new();
            while at != d {
                let hop = Hop { ports: net.ports(at), at, in_port, dst: d, vcs: self.vcs };
                let st = State { src: s, at, in_port, vc: p.vc, hops: p.hops, route: p.route };
                if self.routing_offers_nothing(acc, &st, d, &p, &load, &mut rng, &mut cands) {
                    continue 'sources;
                }
                self.routes.next_hops(&hop, &mut p, &load, &mut rng, &mut cands);
                let c = cands[0];
                let target = net.ports(at).get(c.port as usize).map(|x| x.target);
                let Some(PortTarget::Switch { switch, port }) = target else {
                    self.fail(
                        acc,
                        &st,
                        d,
                        format!("candidate port {} of switch {at} leads to no switch", c.port),
                    );
                    continue 'sources;
                };
                used.push(net.port_offsets[at as usize] as usize + c.port as usize);
                self.routes.on_forward(at, c, &mut p);
                p.hops += 1;
                p.vc = c.vc;
                if p.hops as u32 >= self.bound {
                    self.fail(acc, &st, d, format!("route longer than {} hops (a loop?)", self.bound));
                    continue 'sources;
                }
                at = switch;
                in_port = port;
            }
            for u in used {
                acc.link_counts[u] += 1;
            }
            acc.visited += p.hops as u64 + 1;
            acc.pairs += 1;
            acc.longest_first = acc.longest_first.max(p.hops as u32);
        }
    }
}

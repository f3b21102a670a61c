//! Route verification and analysis without simulating: the channel dependency graph (CDG)
//! of everything a configuration's routing can do, its acyclicity, reachability of every
//! destination, and the path metrics of the routing survey and the Angara paper.
//!
//! Sources: an acyclic CDG means deadlock freedom (Dally and Seitz, "Deadlock-Free Message
//! Routing in Multiprocessor Interconnection Networks", IEEE Trans. Computers C-36(5),
//! 1987); with an escape subnetwork, Duato's condition ("A Necessary and Sufficient
//! Condition for Deadlock-Free Routing in Cut-Through and Store-and-Forward Networks", IEEE
//! TPDS 7(8), 1996). The survey is Flich et al., "A Survey and Evaluation of
//! Topology-Agnostic Deterministic Routing Algorithms", IEEE TPDS 23(3), 2012, section 6.2;
//! the Angara paper is Mukosey, Semenov, Tretiakov, "Optimized Graph Based Routing
//! Algorithm for the Angara Interconnect", arXiv:2110.00851, 2021, section 1.1.
//!
//! # What is enumerated
//! The verifier asks the routing exactly what the router asks it: [`Routes::next_hops`]
//! with the configuration's VC policy applied, under a [`LoadView`] that reports empty
//! buffers. For every destination switch `d` (in parallel) it explores all routing states
//! of packets towards `d` reachable from injection at any source. A state is `(switch, VC,
//! hops, route state)`, plus
//!
//! * the packet's **source** when the routing reads it ([`Routing::reads`]: torus DOR
//!   places its dateline relative to it, Angara's source routes are indexed by it);
//! * the **input port** when the VC policy reads it (the DAVC policies, through
//!   [`Hop::in_port`](crate::Hop::in_port); routings are never given it).
//!
//! Packets go to the destination switch's first endpoint; a routing that reads the
//! destination endpoint ([`Routing::destination_class`]: tables per endpoint, as OpenSM
//! routes each LID on its own) is explored once more per further class of `d`'s endpoints,
//! adding dependencies, failures and paths (each class's paths weighted by its share of
//! `d`'s endpoints, so that a pair of switches still counts one path in the metrics).
//!
//! Where they are not read, packets from different sources, or arriving through different
//! ports, in the same state get the same candidates and move to the same states: they
//! are one state. Its candidates are computed once, and each of the channels it is entered
//! by (its *arrivals*: the links into its switch through the recorded input ports, on the
//! state's VC) depends on each candidate channel. States are explored level by level,
//! a level being the hops taken (every move adds one), so the arrivals of a level's
//! states are all known when the level is expanded. The CDG is the same as that of the
//! exploration per source and input port ([`Options::exhaustive`], tested): only the
//! number of states differs. Following a candidate updates the packet as the router does
//! on a grant: `on_forward`, `hops += 1`, `vc = chosen.vc`.
//!
//! * Multipath and adaptive routings list all their candidates (the selection happens
//!   after `next_hops`), so all of them are followed.
//! * Random choices at injection ([`Routing::init`]): for the Dragonfly Valiant and UGAL
//!   routings every intermediate group is enumerated exactly (every group but the source's
//!   and the destination's, or the minimal state when the routing itself picks none). For
//!   other routings whose `init` draws from its stream ([`Reads::random_init`]) `init` is
//!   called with the configuration's RNG stream and 31 further seeds, and the distinct
//!   states are kept (a sample, not a proof, for routings with many random states); one
//!   call suffices for the others.
//! * Load-dependent decisions at the source switch (UGAL choosing between the minimal and
//!   the Valiant path, [`Reads::load`]): at hop 0 the routing is asked again with each port
//!   it proposed under zero load reported as heavily loaded, and every outcome is followed.
//!   Decisions after the first hop must show up as candidates, as the [`Routing`] contract
//!   asks.
//!
//! Only switches with endpoints are sources and destinations (a packet needs a source
//! endpoint): for meshes, tori, HyperX, Dragonfly and RRG that is every switch.
//!
//! A pair fails to reach its destination when a state has no candidate, a candidate leads
//! to a port without a switch behind it, or a route grows longer than the number of
//! switches plus the routing's `max_hops` (a loop). When a destination has a failing
//! route and states merged sources, that destination is explored again per source, to
//! name every failing pair exactly.
//!
//! # Path metrics
//! Average routing distance, link weights and sigma use one path per ordered pair: the
//! path taken when the first candidate is always chosen (like `selection = "first"`, with
//! zero load), starting from the route state that `init` draws from the configuration's
//! routing stream of the source switch. Per destination, the exploration carries the
//! number of such paths passing through each state to the state its first candidate leads
//! to, and adds it to that link's weight (a walk per pair where a route fails). The
//! longest path, in contrast, is over all routes the verifier explored.
//!
//! * ARD (survey, section 6.2): switches visited summed over all `N^2` ordered pairs of
//!   switches, a self pair counting 1, divided by `N^2` (pairs that fail are left out).
//! * Link weight: number of those paths crossing each directed switch-to-switch link (a
//!   routing that routes the endpoints of a destination switch apart shares the pair's
//!   path among them: 1/8 on each of 8 links to 8 endpoints);
//!   average, sample standard deviation (over `|C| - 1`, which reproduces
//!   the survey's Table 3) and maximum (the edge-forwarding index of the
//!   Angara paper) over all directed links, unused ones included.
//! * Spread link weights: the same paths with every state's share split evenly over all
//!   its candidates (the expected link load of a uniformly random selection at zero load),
//!   carried as a fraction per state next to the count, summed per link in fixed point.
//! * `sigma(k, R)` (Angara paper): `(1/|C| sum_c |gamma_perfect - gamma_c|^k)^(1/k)` with
//!   `gamma_c` the link weight and `gamma_perfect` the average channel load of a routing
//!   whose every route is minimal, i.e. the sum of shortest distances over the ordered
//!   pairs divided by `|C|` (the number of directed links). `k = 4`, as the Angara paper uses.
//!
//! # Memory
//! The CDG is a bit matrix per switch, input `(port, VC)` by output `(port, VC)` over its
//! network ports (`cdg`): 252 MB for the 65,536-switch RRG of degree 32 with 5 VCs. An
//! analysis whose bitmaps would exceed [`Options::memory_limit`] is refused with an error.
//! The exploration holds two levels of one destination per thread.
//!
//! # Determinism
//! Destinations are processed with rayon; the CDG bits are set with atomic ORs (order
//! independent), counters are integer sums, failure lists are sorted, and the cycle search
//! walks channels and dependencies in key order. The report (but its time) is the same for
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
mod explore;
mod paths;
mod report;

pub use cdg::Channel;
pub use paths::path_tables;
pub use report::{
    AnalysisError, LinkWeight, Options, RoutesReport, Unreachable, MAX_LISTED_FAILURES, SIGMA_K,
};

use crate::packet::{Packet, RouteState};
use crate::{LoadView, Reads, Routes, Routing};
use base::rng::{stream, Purpose, Rng};
use cdg::CdgBits;
use explore::Explorer;
use paths::PathMetrics;
use rayon::prelude::*;
use std::cell::RefCell;
use std::time::Instant;
use topology::{EndpointId, Network, PortId, SwitchId};

/// Fixed-point unit of the spread link weights (2^24 per path).
const SPREAD_UNIT: f64 = (1u64 << 24) as f64;

/// Fixed-point unit of the paths counted per link, of the switches visited and of the
/// pairs (2^24 per path): a destination class's share of its switch's endpoints is a
/// fraction, and integer sums keep the totals independent of the threads. A whole path is
/// exactly one unit, so routings per switch count as they would in integers.
const PATH_UNIT: u64 = 1 << 24;

/// A destination class's share of its switch's paths: `members` of `total` endpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Share {
    members: u64,
    total: u64,
}

impl Share {
    /// `count` paths of this class in [`PATH_UNIT`]s.
    fn of(self, count: u64) -> u64 {
        (count as u128 * self.members as u128 * PATH_UNIT as u128 / self.total as u128) as u64
    }

    /// The fraction as a factor.
    fn fraction(self) -> f64 {
        self.members as f64 / self.total as f64
    }
}

/// `init` calls per pair for routings whose random states are sampled.
const INIT_SAMPLES: u64 = 32;
/// The occupancy a probed port reports.
const LOADED: u32 = 1 << 24;

/// Every dependency of the CDG of `routes` on `net` (arguments as [`analyse_with`]),
/// sorted, and the states explored: for tests and tools comparing explorations.
pub fn dependencies(
    net: &Network,
    routes: &Routes,
    vcs: u8,
    seed: u64,
    options: Options,
) -> Result<(Vec<(Channel, Channel)>, u64), AnalysisError> {
    let (run, _) = run(net, routes, vcs, seed, options)?;
    let edges =
        run.cdg.edge_keys().into_iter().map(|(a, b)| (cdg::channel(net, a), cdg::channel(net, b))).collect();
    Ok((edges, run.acc.states))
}

/// The explored routes: the CDG and the accumulated counts.
struct Run {
    cdg: cdg::Cdg,
    acc: Acc,
    destinations: Vec<SwitchId>,
}

/// Explores the routes towards the checked destinations.
fn run<'a>(
    net: &'a Network,
    routes: &'a Routes,
    vcs: u8,
    seed: u64,
    options: Options,
) -> Result<(Run, Ctx<'a>), AnalysisError> {
    let bytes = cdg::bitmap_bytes(net, vcs);
    let limit = options.memory_limit.unwrap_or(isize::MAX as u64);
    if bytes.is_none_or(|b| b > limit) {
        let ports = (0..net.num_switches() as SwitchId)
            .map(|s| net.radix(s) - net.terminals[s as usize] as usize)
            .max()
            .unwrap_or(0);
        return Err(AnalysisError(format!(
            "the channel dependency graph of {} switches with up to {ports} network ports and {vcs} VCs \
             needs {} as bitmaps ((ports x VCs)^2 bits per switch), more than the {:.1} GiB available",
            net.num_switches(),
            bytes.map_or("more than 2^64 bytes".into(), |b| format!(
                "{:.1} GiB",
                b as f64 / (1u64 << 30) as f64
            )),
            limit as f64 / (1u64 << 30) as f64
        )));
    }
    let ctx = Ctx::new(net, routes, vcs, seed, options.exhaustive);
    let destinations: Vec<SwitchId> = match options.destinations {
        Some(k) if k < ctx.terminals.len() => {
            let n = ctx.terminals.len();
            (0..k.max(1)).map(|i| ctx.terminals[i * n / k.max(1)]).collect()
        }
        _ => ctx.terminals.clone(),
    };
    let bits = CdgBits::new(net, vcs);
    // Chunks of destinations, several per thread so that threads finish together.
    let chunk = destinations.len().div_ceil(rayon::current_num_threads() * 16).max(1);
    let acc = destinations
        .par_chunks(chunk)
        .map(|chunk| {
            let mut acc = Acc::new(net);
            let mut explorer = Explorer::new(&ctx, &bits);
            for &d in chunk {
                if base::cancel::requested() {
                    break;
                }
                ctx.destination(d, &mut explorer, &mut acc);
            }
            acc
        })
        .reduce(|| Acc::new(net), Acc::merge);
    if base::cancel::requested() {
        return Err(AnalysisError("interrupted while verifying the routes".into()));
    }
    Ok((Run { cdg: bits.freeze(net), acc, destinations }, ctx))
}

/// Analyses `routes` (routing, VC policy, escape subnetwork) with `vcs` VCs per port on
/// `net`; `seed` picks the RNG streams given to `init` (as the simulation's
/// `simulation.seed`).
pub fn analyse_with(
    net: &Network,
    routes: &Routes,
    vcs: u8,
    seed: u64,
    options: Options,
) -> Result<RoutesReport, AnalysisError> {
    let t0 = Instant::now();
    let (Run { cdg: graph, acc, destinations }, ctx) = run(net, routes, vcs, seed, options)?;
    let is_escape = |vc: u8| routes.is_escape(vc);
    let to_channels = |keys: Vec<u64>| -> Vec<Channel> {
        keys.into_iter()
            .map(|k| Channel { escape: is_escape((k & 0xff) as u8), ..cdg::channel(net, k) })
            .collect()
    };
    let full_cycle = graph.find_cycle(|_| true);
    let full_cdg_acyclic = full_cycle.is_none();
    // Duato: with an escape subnetwork, what must be acyclic is the escape channels'
    // dependencies among themselves, and no packet may leave the escape.
    let (cycle, escape_back_dependencies) = if routes.escape.is_some() {
        (to_channels(graph.find_cycle(is_escape).unwrap_or_default()), graph.count_leaving(is_escape))
    } else {
        (to_channels(full_cycle.unwrap_or_default()), 0)
    };
    let vcs_used = graph.vcs_used();
    let metrics = PathMetrics::new(net, &acc, &ctx.terminals, &destinations);
    let mut failures = acc.failures;
    failures.sort();
    failures.dedup_by(|a, b| (a.src, a.dst) == (b.src, b.dst));
    let unreachable_pairs = failures.len() as u64;
    failures.truncate(MAX_LISTED_FAILURES);
    Ok(RoutesReport {
        network: net.name.clone(),
        routing: routes.name.to_string(),
        vc_policy: routes.vc_policy,
        vcs,
        escape_vcs: routes.escape.as_ref().map_or(0, |e| vcs - e.first_vc()),
        switches: ctx.terminals.len(),
        destinations_checked: destinations.len(),
        links: metrics.link_weights.len(),
        acyclic: cycle.is_empty() && escape_back_dependencies == 0,
        cycle,
        full_cdg_acyclic,
        escape_back_dependencies,
        channels: graph.num_nodes(),
        dependencies: graph.num_edges(),
        states: acc.states,
        unreachable_pairs,
        unreachable: failures,
        average_routing_distance: metrics.average_routing_distance,
        link_weight_avg: metrics.link_weight_avg,
        link_weight_std: metrics.link_weight_std,
        link_weight_max: metrics.link_weight_max,
        spread_link_weight_avg: metrics.spread_link_weight_avg,
        spread_link_weight_std: metrics.spread_link_weight_std,
        spread_link_weight_max: metrics.spread_link_weight_max,
        spread_destinations: acc.spread_destinations as usize,
        sigma: metrics.sigma,
        perfect_channel_load: metrics.perfect_channel_load,
        longest_path: acc.longest,
        longest_first_path: acc.longest_first,
        vcs_used,
        link_weights: metrics.link_weights,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// What a [`Probe`] reports full: an output port of the deciding switch, or one byte of
/// what the neighbour across a port reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Probed {
    Port(PortId),
    Reported(PortId, usize),
}

/// A load view with every buffer empty and every report zero but (optionally) one port or
/// reported byte, which reads full. It notes the reported bytes a decision read, so that
/// the explorer can ask again with each of them full.
struct Probe<'r> {
    loaded: Option<Probed>,
    reads: &'r RefCell<Vec<Probed>>,
}

impl LoadView for Probe<'_> {
    fn vc_occupancy(&self, port: PortId, _vc: u8) -> u32 {
        self.port_occupancy(port)
    }
    fn port_occupancy(&self, port: PortId) -> u32 {
        if self.loaded == Some(Probed::Port(port)) {
            LOADED
        } else {
            0
        }
    }
    fn reported(&self, port: PortId, index: usize) -> u8 {
        let key = Probed::Reported(port, index);
        let mut reads = self.reads.borrow_mut();
        if !reads.contains(&key) {
            reads.push(key);
        }
        if self.loaded == Some(key) {
            u8::MAX
        } else {
            0
        }
    }
    fn exploring(&self) -> bool {
        true
    }
}

/// Per-thread results, merged in any order with an order-independent result.
struct Acc {
    failures: Vec<Unreachable>,
    states: u64,
    longest: u32,
    longest_first: u32,
    /// First-candidate paths per link, in [`PATH_UNIT`]s.
    link_counts: Vec<u64>,
    /// Spread paths per link ([`explore::Found::spread`]) in fixed point, units of
    /// [`SPREAD_UNIT`]: integer sums, so the totals do not depend on the threads.
    spread: Vec<u64>,
    /// Destinations whose routes all succeeded (their spread paths are counted).
    spread_destinations: u64,
    /// Switches visited summed over the reached ordered pairs of distinct switches, and
    /// those pairs, in [`PATH_UNIT`]s.
    visited: u64,
    pairs: u64,
}

impl Acc {
    fn new(net: &Network) -> Self {
        Acc {
            failures: Vec::new(),
            states: 0,
            longest: 0,
            longest_first: 0,
            link_counts: vec![0; net.ports.len()],
            spread: vec![0; net.ports.len()],
            spread_destinations: 0,
            visited: 0,
            pairs: 0,
        }
    }

    fn merge(mut self, mut other: Self) -> Self {
        self.failures.append(&mut other.failures);
        self.states += other.states;
        self.longest = self.longest.max(other.longest);
        self.longest_first = self.longest_first.max(other.longest_first);
        for (a, b) in self.link_counts.iter_mut().zip(&other.link_counts) {
            *a += b;
        }
        for (a, b) in self.spread.iter_mut().zip(&other.spread) {
            *a += b;
        }
        self.spread_destinations += other.spread_destinations;
        self.visited += other.visited;
        self.pairs += other.pairs;
        self
    }
}

struct Ctx<'a> {
    net: &'a Network,
    routing: &'a dyn Routing,
    routes: &'a Routes,
    reads: Reads,
    /// States keep the packet's source / input port.
    keep_src: bool,
    keep_in: bool,
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
    fn new(net: &'a Network, routes: &'a Routes, vcs: u8, seed: u64, exhaustive: bool) -> Self {
        let routing = &*routes.routing;
        let endpoint: Vec<_> = net
            .first_endpoints()
            .into_iter()
            .map(|f| f.map(|e| (e, net.endpoint_location[e as usize].1)))
            .collect();
        let terminals =
            (0..net.num_switches() as SwitchId).filter(|&s| endpoint[s as usize].is_some()).collect();
        let escape_hops = routes.escape.as_ref().map_or(0, |e| e.max_hops());
        let bound = (net.num_switches() as u32)
            .saturating_add(routing.max_hops())
            .saturating_add(escape_hops)
            .min(u16::MAX as u32 - 1);
        let reads = routing.reads();
        Ctx {
            net,
            routing,
            routes,
            reads,
            keep_src: exhaustive || reads.source,
            keep_in: exhaustive || routes.vc_policy.is_davc(),
            vcs,
            seed,
            terminals,
            endpoint,
            bound,
        }
    }

    /// The packet the verifier asks about: from (the first endpoint of) switch `src` to
    /// endpoint `dst`, with `hops`, `vc` and `route`. Every packet of the verifier is made
    /// here.
    fn packet(&self, src: SwitchId, dst: EndpointId, hops: u16, vc: u8, route: RouteState) -> Packet {
        let src = self.endpoint[src as usize].expect("source endpoint").0;
        Packet { hops, vc, route, ..Packet::new(src, 0, dst, 1, 0) }
    }

    /// The route state `init` gives at `src` with the configuration's stream (`unused`
    /// stands in for it when `init` draws nothing).
    fn default_init(&self, src: SwitchId, dst: SwitchId, unused: &mut Rng) -> RouteState {
        let mut r = RouteState::default();
        if self.reads.random_init {
            self.routing.init(src, dst, &mut r, &mut stream(self.seed, Purpose::Routing, src as u64));
        } else {
            self.routing.init(src, dst, &mut r, unused);
        }
        r
    }

    /// Every route state a packet from `src` to `dst` may start with, `base` being the
    /// default one, into `states`.
    fn init_states(&self, src: SwitchId, dst: SwitchId, base: RouteState, states: &mut Vec<RouteState>) {
        states.clear();
        if !self.routing.initial_states(src, dst, base, states) {
            states.push(base);
            if self.reads.random_init {
                for i in 1..INIT_SAMPLES {
                    let mut r = RouteState::default();
                    let id = (src as u64) << 32 | i;
                    self.routing.init(
                        src,
                        dst,
                        &mut r,
                        &mut stream(self.seed ^ 0x5eed_1e55, Purpose::Routing, id),
                    );
                    states.push(r);
                }
            }
        }
        states.sort_by_key(route_key);
        states.dedup();
    }

    /// The endpoints of switch `d` grouped by destination class, each group led by the
    /// endpoint the verifier explores: one group of all of them, unless the routing reads
    /// the destination endpoint ([`Routing::destination_class`]).
    fn destination_groups(&self, d: SwitchId) -> Vec<Vec<EndpointId>> {
        let first = self.endpoint[d as usize].expect("destination endpoint").0;
        let all = first..first + self.net.terminals[d as usize] as EndpointId;
        if self.routing.destination_class(first).is_none() {
            return vec![all.collect()];
        }
        let mut groups: Vec<(Option<u32>, Vec<EndpointId>)> = Vec::new();
        for e in all {
            let class = self.routing.destination_class(e);
            match groups.iter_mut().find(|(c, _)| *c == class) {
                Some((_, members)) => members.push(e),
                None => groups.push((class, vec![e])),
            }
        }
        groups.into_iter().map(|(_, members)| members).collect()
    }

    /// Explores destination `d` into `explorer`'s CDG and `acc`: merged states first; when
    /// a route fails, states keeping the source name every failing pair, and the
    /// first-candidate paths are walked per source. Every destination class adds its
    /// dependencies, failures and paths, the paths weighted by its share of `d`'s
    /// endpoints.
    fn destination(&self, d: SwitchId, explorer: &mut Explorer<'_>, acc: &mut Acc) {
        let groups = self.destination_groups(d);
        let total = groups.iter().map(Vec::len).sum::<usize>() as u64;
        for (k, group) in groups.iter().enumerate() {
            let share = Share { members: group.len() as u64, total };
            self.destination_endpoint(d, group[0], share, k == 0, explorer, acc);
        }
    }

    /// Explores destination `d` through its endpoint `e`, whose class holds `share` of
    /// `d`'s endpoints; `first`: the first class of `d` (counted once among the
    /// destinations of the spread link weights).
    fn destination_endpoint(
        &self,
        d: SwitchId,
        e: EndpointId,
        share: Share,
        first: bool,
        explorer: &mut Explorer<'_>,
        acc: &mut Acc,
    ) {
        let found = explorer.explore(d, e, self.keep_src, self.keep_in);
        acc.states += found.states;
        acc.longest = acc.longest.max(found.longest);
        if !found.failed && !found.first_path_failed {
            for (link, count) in found.links {
                acc.link_counts[link as usize] += share.of(count as u64);
            }
            // Summed per link in the exploration's order, then rounded once.
            for (link, x) in found.spread {
                acc.spread[link as usize] += (x * share.fraction() * SPREAD_UNIT).round() as u64;
            }
            acc.spread_destinations += first as u64;
            acc.visited += share.of(found.visited);
            acc.pairs += share.of(found.pairs);
            acc.longest_first = acc.longest_first.max(found.longest_first);
            return;
        }
        let failures = if found.failed && !self.keep_src {
            let exact = explorer.explore(d, e, true, self.keep_in);
            acc.states += exact.states;
            exact.failures
        } else {
            found.failures
        };
        acc.failures.extend(failures);
        self.first_paths(d, e, share, acc);
    }
}

fn route_key(r: &RouteState) -> (u8, u8, u32) {
    (r.phase, r.global_hops, r.intermediate)
}

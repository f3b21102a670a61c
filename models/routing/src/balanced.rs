//! `routing.selection = "balanced"`: one path per pair of switches, chosen when the routes
//! are built, among the paths the routing offers, to balance the number of paths crossing
//! each link (the link weight of the routing survey, Flich et al., IEEE TPDS 23(3), 2012).
//!
//! The survey's rule-driven and path-driven routings leave several legal paths per pair
//! and select one with a traffic-balancing step (its section 5.1.2): Sancho and Robles'
//! removal of paths from the most loaded link until one is left per pair (the DFS
//! balancing, also TOR's), or the choice that minimises the deviation of link weights.
//! Here the selection is greedy with one improvement pass, as OpenSM's MinHop balancing is
//! greedy over its port counters:
//!
//! 1. Pairs in order (source, then destination switch), each takes, among the routing's
//!    paths with the fewest hops, one whose most loaded link is least loaded, found by a
//!    search over the routing's states level by level (every hop is a level; each state
//!    keeps its best way in by the most loaded link so far, then the sum of the loads so
//!    far, then the first candidates, so the sum is a tie-break rather than minimised
//!    exactly). Its links' weights go up by one.
//! 2. Every pair again, in the same order, with its own path taken out of the weights.
//!
//! The routing's own rules still decide what is legal (Up*/Down*'s turns, MUD's and TOR's
//! layers), so deadlock freedom is the routing's: the selection keeps a subset of its
//! routes, and a subset of an acyclic dependency graph is acyclic. At run time a packet
//! takes, at each hop, the candidate its pair's path recorded: the decision reads the
//! packet's source switch, and the verifier explores per source.

use super::{Candidate, LoadView, Reads, Routing, ZeroLoad};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::{stream, Purpose, Rng};
use std::collections::HashMap;
use std::sync::Arc;
use topology::{EndpointId, Network, PortTarget, SwitchId};

/// Most switches the balanced selection takes (it walks the pairs one at a time).
pub const MAX_SWITCHES: usize = 4096;

/// A routing restricted to one balanced path per switch pair (see the module docs).
pub struct Balanced {
    inner: Arc<dyn Routing>,
    n: usize,
    /// Hops recorded per pair.
    stride: usize,
    /// `choice[(src * n + dst) * stride + hop]`: the index, among the inner routing's
    /// candidates, of the one the pair's path takes at hop `hop`.
    choice: Vec<u8>,
    endpoint_switch: Arc<Vec<SwitchId>>,
    longest: u32,
    /// VCs the chosen paths use (TOR's may use more layers than its fewest).
    vcs_used: u8,
    summary: String,
}

/// A state of the search: where the packet is and what the routing knows of it.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    at: SwitchId,
    vc: u8,
    route: RouteState,
}

/// A state's best way in.
#[derive(Clone, Copy)]
struct Best {
    packet: Packet,
    /// Most loaded link so far, and the sum of the loads.
    cost: (u32, u64),
    /// The state it came from (in the previous level), the candidate index and the link.
    from: u32,
    candidate: u8,
    link: u32,
}

/// A chosen path: (link, candidate index, VC) per hop.
type Path = Vec<(u32, u8, u8)>;

/// The search over one pair's paths, with buffers kept between pairs.
struct Search<'a> {
    net: &'a Network,
    inner: &'a dyn Routing,
    /// First endpoint of every switch.
    endpoint: Vec<Option<EndpointId>>,
    levels: Vec<Vec<Best>>,
    index: HashMap<Key, u32>,
    cands: Vec<Candidate>,
    bound: usize,
}

impl Search<'_> {
    /// The best path from `s` to `d` under `weights`: (link, candidate index, VC) per hop.
    fn path(&mut self, s: SwitchId, d: SwitchId, weights: &[u32]) -> Result<Vec<(u32, u8, u8)>, String> {
        let net = self.net;
        let (src, dst) =
            (self.endpoint[s as usize].expect("source"), self.endpoint[d as usize].expect("dest"));
        let mut packet = Packet::new(src, 0, dst, 1, 0);
        let mut rng: Rng = stream(0, Purpose::Routing, s as u64);
        self.inner.init(s, d, &mut packet.route, &mut rng);
        self.levels.clear();
        self.levels.push(vec![Best { packet, cost: (0, 0), from: u32::MAX, candidate: 0, link: u32::MAX }]);
        let mut at_level = vec![s];
        loop {
            let level = self.levels.len() - 1;
            if level > self.bound {
                return Err(format!(
                    "a route from switch {s} to switch {d} is longer than {} hops",
                    self.bound
                ));
            }
            self.index.clear();
            let mut next: Vec<Best> = Vec::new();
            let mut next_at = Vec::new();
            let mut arrived: Option<usize> = None;
            for (i, b) in self.levels[level].iter().enumerate() {
                let at = at_level[i];
                self.cands.clear();
                let mut p = b.packet;
                self.inner.candidates(at, d, &mut p, &ZeroLoad, &mut rng, &mut self.cands);
                for (k, c) in self.cands.iter().enumerate() {
                    let Some(PortTarget::Switch { switch, .. }) =
                        net.ports(at).get(c.port as usize).map(|x| x.target)
                    else {
                        return Err(format!("candidate port {} of switch {at} leads to no switch", c.port));
                    };
                    let link = net.port_offsets[at as usize] + c.port as u32;
                    let w = weights[link as usize];
                    let cost = (b.cost.0.max(w), b.cost.1 + w as u64);
                    let mut q = p;
                    self.inner.on_forward(at, *c, &mut q);
                    q.hops += 1;
                    q.vc = c.vc;
                    let key = Key { at: switch, vc: q.vc, route: q.route };
                    let candidate =
                        u8::try_from(k).map_err(|_| format!("more than 255 candidates at switch {at}"))?;
                    let best = Best { packet: q, cost, from: i as u32, candidate, link };
                    match self.index.get(&key) {
                        Some(&j) => {
                            if cost < next[j as usize].cost {
                                next[j as usize] = best;
                            }
                        }
                        None => {
                            self.index.insert(key, next.len() as u32);
                            next.push(best);
                            next_at.push(switch);
                        }
                    }
                    if switch == d {
                        let j = self.index[&key] as usize;
                        if arrived.is_none_or(|a| next[j].cost < next[a].cost) {
                            arrived = Some(j);
                        }
                    }
                }
            }
            if next.is_empty() {
                return Err(format!("no route from switch {s} to switch {d}"));
            }
            self.levels.push(next);
            at_level = next_at;
            if let Some(mut j) = arrived {
                // Walk back from the arrival.
                let mut path = Vec::with_capacity(self.levels.len() - 1);
                for l in (1..self.levels.len()).rev() {
                    let b = self.levels[l][j];
                    path.push((b.link, b.candidate, b.packet.vc));
                    j = b.from as usize;
                }
                path.reverse();
                return Ok(path);
            }
        }
    }
}

impl Balanced {
    /// `inner` restricted to balanced paths on `net` (see the module docs). Refuses
    /// routings whose candidates read the load or a random initial state (the paths would
    /// not be the same at run time), and networks of more than [`MAX_SWITCHES`].
    pub fn build(
        inner: Arc<dyn Routing>,
        name: &str,
        net: &Network,
        endpoint_switch: Arc<Vec<SwitchId>>,
    ) -> Result<Self, RoutingError> {
        let reads = inner.reads();
        if reads.load || reads.random_init {
            return Err(RoutingError::new(
                "routing.selection",
                format!(
                    "`balanced` fixes one path per pair when the routes are built; routing `{name}` decides by {} \
                     at run time (use first, random or adaptive)",
                    if reads.load { "the load" } else { "a random initial state" }
                ),
            ));
        }
        let n = net.num_switches();
        if n > MAX_SWITCHES {
            return Err(RoutingError::new(
                "routing.selection",
                format!(
                    "`balanced` chooses the paths of the {n} x {n} switch pairs one at a time; it is meant for \
                     networks of at most {MAX_SWITCHES} switches"
                ),
            ));
        }
        let endpoint = net.first_endpoints();
        let terminals: Vec<SwitchId> =
            (0..n as SwitchId).filter(|&s| endpoint[s as usize].is_some()).collect();
        let mut search = Search {
            net,
            inner: &*inner,
            endpoint,
            levels: Vec::new(),
            index: HashMap::new(),
            cands: Vec::new(),
            bound: n + inner.max_hops() as usize,
        };
        let fail = |e: String| RoutingError::new("routing.selection", format!("`balanced` on `{name}`: {e}"));
        let mut weights = vec![0u32; net.ports.len()];
        let pairs =
            || terminals.iter().flat_map(|&s| terminals.iter().map(move |&d| (s, d))).filter(|(s, d)| s != d);
        let mut paths: Vec<Path> = vec![Vec::new(); pairs().count()];
        // Pass 0 is greedy; pass 1 takes each pair's path out and chooses again. (More
        // passes change little: 16x8 torus TOR, std 91.8 after two, 91.5 after four.)
        let mut first_max = 0;
        for pass in 0..2 {
            for (k, (s, d)) in pairs().enumerate() {
                for &(link, ..) in &paths[k] {
                    weights[link as usize] -= 1;
                }
                let path = search.path(s, d, &weights).map_err(fail)?;
                for &(link, ..) in &path {
                    weights[link as usize] += 1;
                }
                paths[k] = path;
                base::cancel::check("choosing balanced paths")?;
            }
            if pass == 0 {
                first_max = weights.iter().copied().max().unwrap_or(0);
            }
        }
        let longest = paths.iter().map(Vec::len).max().unwrap_or(0);
        let stride = longest.max(1);
        let mut choice = vec![0u8; n * n * stride];
        for (k, (s, d)) in pairs().enumerate() {
            let base = (s as usize * n + d as usize) * stride;
            for (h, &(_, c, _)) in paths[k].iter().enumerate() {
                choice[base + h] = c;
            }
        }
        let summary = format!(
            "balanced: one path per pair of {} switches, most loaded link {} after the greedy pass, {} after the second",
            terminals.len(),
            first_max,
            weights.iter().copied().max().unwrap_or(0)
        );
        let top_vc = paths.iter().flatten().map(|&(.., vc)| vc).max().unwrap_or(0);
        let vcs_used = inner.vcs_required().max(top_vc + 1);
        Ok(Balanced { inner, n, stride, choice, endpoint_switch, longest: longest as u32, vcs_used, summary })
    }
}

impl Routing for Balanced {
    fn vcs_required(&self) -> u8 {
        self.vcs_used
    }

    fn max_hops(&self) -> u32 {
        self.longest
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        self.inner.init(src, dst, state, rng);
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let start = out.len();
        self.inner.candidates(at, dst, packet, load, rng, out);
        let src = self.endpoint_switch[packet.src() as usize];
        let hop = (packet.hops as usize).min(self.stride - 1);
        let k = self.choice[(src as usize * self.n + dst as usize) * self.stride + hop] as usize;
        // The routing offers at run time what it offered while choosing (its candidates
        // read neither load nor random state), so the recorded index is there.
        debug_assert!(start + k < out.len(), "balanced replay at switch {at} towards {dst}");
        if let Some(&c) = out.get(start + k) {
            out.truncate(start);
            out.push(c);
        }
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        self.inner.on_forward(at, chosen, packet);
    }

    fn prefetch(&self, at: SwitchId, dst: SwitchId) {
        self.inner.prefetch(at, dst);
    }

    fn reads(&self) -> Reads {
        Reads { source: true, ..self.inner.reads() }
    }

    fn initial_states(
        &self,
        src: SwitchId,
        dst: SwitchId,
        base: RouteState,
        out: &mut Vec<RouteState>,
    ) -> bool {
        self.inner.initial_states(src, dst, base, out)
    }

    fn build_summary(&self) -> Option<String> {
        Some(match self.inner.build_summary() {
            Some(inner) => format!("{inner}; {}", self.summary),
            None => self.summary.clone(),
        })
    }

    fn destination_class(&self, endpoint: EndpointId) -> Option<u32> {
        self.inner.destination_class(endpoint)
    }
}

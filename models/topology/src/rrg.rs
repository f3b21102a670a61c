//! Random regular graph (Jellyfish: Singla, Hong, Popa, Godfrey, "Jellyfish: Networking
//! Data Centers Randomly", NSDI'12).
//!
//! Port layout: terminals `0..T`, then the `degree` network ports sorted by neighbour id.
//!
//! Construction (deterministic from the seed): join random pairs of switches that have free
//! ports and are not yet adjacent; when no such pair remains and a switch `s` still has at
//! least two free ports, remove a random link `(x, y)` with `x`, `y` not adjacent to `s`
//! and add `(s, x)`, `(s, y)`. If the only switches left with a free port are pairwise
//! adjacent and have one free port each, two of them `s`, `t` take over a random link
//! `(x, y)` as `(s, x)`, `(t, y)`. A disconnected result is joined by swapping a link on a
//! cycle of one component with a link of another (regularity and simplicity are kept).
//! If construction still fails, it is retried with a derived seed, recorded in
//! [`RrgShape::seed_used`]; building with that seed reproduces the graph at once.
use super::{
    check_latency, check_size, link_classes, ports_from_sorted_adjacency, Network, NetworkSize, Shape,
    TopologyError,
};
use crate::family::{parse_as, Family, TopologyEntry, ENDPOINTS_PER_SWITCH, LATENCY, TERMINAL_LATENCY};
use crate::shape::RrgShape;
use base::rng::{below, stream, Purpose, Rng};
use base::settings::Setting;
use rand_core::Rng as _;
use serde::{Deserialize, Serialize};

/// Configuration of a random regular graph (the `[topology]` table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RrgParams {
    /// Number of switches, > `degree`; must fit in `u32`.
    pub switches: u32,
    /// Network ports (neighbours) per switch, `2..switches`; `switches * degree` must be even.
    pub degree: u32,
    /// Endpoints attached to every switch, >= 1.
    pub endpoints_per_switch: u32,
    /// Seed of the random construction (any `u64`; from 2^63 on as a string of digits);
    /// absent means the run's seed.
    #[serde(default, deserialize_with = "base::settings::deserialize_optional_seed")]
    pub seed: Option<u64>,
    /// Latency of endpoint-to-switch links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub terminal_latency: u64,
    /// Latency of switch-to-switch links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub link_latency: u64,
}

/// Construction attempts (seeds) tried before giving up.
const MAX_ATTEMPTS: u64 = 32;

/// Random edges sampled before falling back to an exhaustive scan.
const SAMPLES: u32 = 64;

/// Checks the parameters and returns the network's counts without building it.
pub fn size(p: &RrgParams) -> Result<NetworkSize, TopologyError> {
    if p.degree < 2 {
        return Err(TopologyError::new("degree", format!("must be >= 2, got {}", p.degree)));
    }
    if p.degree >= p.switches {
        return Err(TopologyError::new(
            "degree",
            format!("must be < switches ({}), got {}", p.switches, p.degree),
        ));
    }
    if (p.switches as u64 * p.degree as u64) & 1 == 1 {
        return Err(TopologyError::new(
            "degree",
            format!("switches * degree must be even, got {} * {}", p.switches, p.degree),
        ));
    }
    if p.endpoints_per_switch == 0 {
        return Err(TopologyError::new("endpoints_per_switch", "must be >= 1, got 0"));
    }
    check_latency("terminal_latency", p.terminal_latency)?;
    check_latency("link_latency", p.link_latency)?;
    let t = p.endpoints_per_switch as u128;
    // The Moore bound: the fewest hops within which `degree`-regular graphs can reach
    // every switch; random regular graphs need about one more.
    let (mut reached, mut frontier, mut hops) = (1u64, p.degree as u64, 0u32);
    while reached < p.switches as u64 {
        reached += frontier;
        frontier = frontier.saturating_mul(p.degree as u64 - 1);
        hops += 1;
    }
    hops += 1;
    Ok(check_size("switches", p.switches as u128, t, t + p.degree as u128)?
        .with_route(hops, 2 * p.terminal_latency + hops as u64 * p.link_latency))
}

/// Builds a random regular graph. `default_seed` is used when `p.seed` is absent.
/// Link classes: 0 `terminal`, 1 `network`.
pub fn build(p: &RrgParams, default_seed: u64) -> Result<Network, TopologyError> {
    size(p)?;

    let seed = p.seed.unwrap_or(default_seed);
    for attempt in 0..MAX_ATTEMPTS {
        let seed_used = if attempt == 0 { seed } else { stream(seed, Purpose::Topology, attempt).next_u64() };
        let mut rng = stream(seed_used, Purpose::Topology, 0);
        let mut g = Graph::new(p.switches, p.degree);
        if !g.construct(&mut rng) || !g.connect(&mut rng) || !g.verify() {
            continue;
        }
        return Ok(g.into_network(p, seed_used));
    }
    Err(TopologyError::new(
        "seed",
        format!(
            "no connected {}-regular graph on {} switches found in {MAX_ATTEMPTS} attempts from seed {seed}",
            p.degree, p.switches
        ),
    ))
}

/// A graph under construction: sorted adjacency lists and the switches with free ports.
struct Graph {
    degree: usize,
    adj: Vec<Vec<u32>>,
    /// Switches with at least one free port (any order).
    open: Vec<u32>,
    /// Position of each switch in `open`, or `u32::MAX`.
    pos: Vec<u32>,
}

impl Graph {
    fn new(n: u32, degree: u32) -> Self {
        Graph {
            degree: degree as usize,
            adj: (0..n).map(|_| Vec::with_capacity(degree as usize)).collect(),
            open: (0..n).collect(),
            pos: (0..n).collect(),
        }
    }

    fn n(&self) -> usize {
        self.adj.len()
    }

    fn adjacent(&self, u: u32, v: u32) -> bool {
        self.adj[u as usize].binary_search(&v).is_ok()
    }

    fn free(&self, u: u32) -> usize {
        self.degree - self.adj[u as usize].len()
    }

    fn close(&mut self, u: u32) {
        let i = self.pos[u as usize] as usize;
        self.open.swap_remove(i);
        if let Some(&moved) = self.open.get(i) {
            self.pos[moved as usize] = i as u32;
        }
        self.pos[u as usize] = u32::MAX;
    }

    fn reopen(&mut self, u: u32) {
        self.pos[u as usize] = self.open.len() as u32;
        self.open.push(u);
    }

    fn insert_edge(&mut self, u: u32, v: u32) {
        debug_assert!(u != v && !self.adjacent(u, v));
        for (x, y) in [(u, v), (v, u)] {
            let list = &mut self.adj[x as usize];
            let i = list.binary_search(&y).unwrap_err();
            list.insert(i, y);
            if list.len() == self.degree {
                self.close(x);
            }
        }
    }

    fn remove_edge(&mut self, u: u32, v: u32) {
        for (x, y) in [(u, v), (v, u)] {
            let list = &mut self.adj[x as usize];
            let was_full = list.len() == self.degree;
            let i = list.binary_search(&y).expect("edge exists");
            list.remove(i);
            if was_full {
                self.reopen(x);
            }
        }
    }

    /// Two distinct non-adjacent open switches, or `None` if every pair is adjacent.
    fn open_pair(&self, rng: &mut Rng) -> Option<(u32, u32)> {
        let m = self.open.len();
        if m < 2 {
            return None;
        }
        for _ in 0..SAMPLES {
            let u = self.open[below(rng, m as u64) as usize];
            let v = self.open[below(rng, m as u64) as usize];
            if u != v && !self.adjacent(u, v) {
                return Some((u, v));
            }
        }
        // Exhaustive scan from a random start. When it fails, the open switches form a
        // clique (at most degree + 1 of them), so this is cheap; otherwise it stops early.
        let start = below(rng, m as u64) as usize;
        for i in 0..m {
            let u = self.open[(start + i) % m];
            for j in i + 1..m {
                let v = self.open[(start + j) % m];
                if !self.adjacent(u, v) {
                    return Some((u, v));
                }
            }
        }
        None
    }

    /// An existing link `(x, y)` (either orientation) with `ok(x, y)`, sampled at random,
    /// then by an exhaustive scan from a random start.
    fn find_edge(&self, rng: &mut Rng, ok: impl Fn(u32, u32) -> bool) -> Option<(u32, u32)> {
        let n = self.n() as u64;
        for _ in 0..SAMPLES {
            let x = below(rng, n) as u32;
            let list = &self.adj[x as usize];
            if list.is_empty() {
                continue;
            }
            let y = list[below(rng, list.len() as u64) as usize];
            if ok(x, y) {
                return Some((x, y));
            }
            if ok(y, x) {
                return Some((y, x));
            }
        }
        let start = below(rng, n) as usize;
        for i in 0..self.n() {
            let x = ((start + i) % self.n()) as u32;
            for &y in &self.adj[x as usize] {
                if ok(x, y) {
                    return Some((x, y));
                }
            }
        }
        None
    }

    /// Fills every port (Jellyfish with link swaps). False if it got stuck.
    fn construct(&mut self, rng: &mut Rng) -> bool {
        while let Some((u, v)) = self.open_pair(rng) {
            self.insert_edge(u, v);
        }
        while !self.open.is_empty() {
            if let Some(s) = self.open.iter().copied().find(|&s| self.free(s) >= 2) {
                let found = self
                    .find_edge(rng, |x, y| x != s && y != s && !self.adjacent(s, x) && !self.adjacent(s, y));
                let Some((x, y)) = found else {
                    return false;
                };
                self.remove_edge(x, y);
                self.insert_edge(s, x);
                self.insert_edge(s, y);
            } else {
                // Every open switch has exactly one free port; the total is even.
                if self.open.len() < 2 {
                    return false;
                }
                let (s, t) = (self.open[0], self.open[1]);
                if !self.adjacent(s, t) {
                    self.insert_edge(s, t);
                    continue;
                }
                let found = self
                    .find_edge(rng, |x, y| x != s && y != t && !self.adjacent(s, x) && !self.adjacent(t, y));
                let Some((x, y)) = found else {
                    return false;
                };
                self.remove_edge(x, y);
                self.insert_edge(s, x);
                self.insert_edge(t, y);
            }
        }
        true
    }

    /// Joins all components into one by link swaps. False if some component has no cycle.
    fn connect(&mut self, rng: &mut Rng) -> bool {
        let n = self.n();
        let mut seen = vec![false; n];
        let mut parent = vec![u32::MAX; n];
        let mut order: Vec<u32> = Vec::with_capacity(n);
        // Per component: end of its slice of `order` and a link on a cycle.
        let mut comps: Vec<(usize, Option<(u32, u32)>)> = Vec::new();
        for root in 0..n as u32 {
            if seen[root as usize] {
                continue;
            }
            seen[root as usize] = true;
            let start = order.len();
            order.push(root);
            let mut head = start;
            let mut cycle_edge = None;
            while head < order.len() {
                let v = order[head];
                head += 1;
                for &u in &self.adj[v as usize] {
                    if !seen[u as usize] {
                        seen[u as usize] = true;
                        parent[u as usize] = v;
                        order.push(u);
                    } else if u != parent[v as usize] && cycle_edge.is_none() {
                        cycle_edge = Some((v, u));
                    }
                }
            }
            comps.push((order.len(), cycle_edge));
        }
        for i in 1..comps.len() {
            let Some((a, b)) = comps[i].1 else {
                return false;
            };
            let merged = comps[i - 1].0;
            let c = order[below(rng, merged as u64) as usize];
            let list = &self.adj[c as usize];
            let d = list[below(rng, list.len() as u64) as usize];
            self.remove_edge(a, b);
            self.remove_edge(c, d);
            self.insert_edge(c, a);
            self.insert_edge(d, b);
        }
        true
    }

    /// Regular, simple, symmetric and connected.
    fn verify(&self) -> bool {
        let n = self.n();
        for (s, list) in self.adj.iter().enumerate() {
            if list.len() != self.degree
                || list.windows(2).any(|w| w[0] >= w[1])
                || list.iter().any(|&v| v as usize == s || v as usize >= n)
                || list.iter().any(|&v| !self.adjacent(v, s as u32))
            {
                return false;
            }
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0u32];
        seen[0] = true;
        let mut count = 1;
        while let Some(v) = stack.pop() {
            for &u in &self.adj[v as usize] {
                if !seen[u as usize] {
                    seen[u as usize] = true;
                    count += 1;
                    stack.push(u);
                }
            }
        }
        count == n
    }

    fn into_network(self, p: &RrgParams, seed_used: u64) -> Network {
        let lists = ports_from_sorted_adjacency(&self.adj, p.endpoints_per_switch as usize);
        let name =
            format!("rrg({}, d={}, t={}, seed={seed_used})", p.switches, p.degree, p.endpoints_per_switch);
        Network::from_port_lists(
            name,
            lists,
            link_classes(&[("terminal", p.terminal_latency), ("network", p.link_latency)]),
            Shape::RandomRegular(RrgShape {
                switches: p.switches,
                degree: p.degree,
                endpoints_per_switch: p.endpoints_per_switch,
                seed_used,
            }),
        )
    }
}

/// `random_regular` in the topology registry.
pub const RANDOM_REGULAR: TopologyEntry = TopologyEntry {
    name: "random_regular",
    doc: "random regular graph of switches (Jellyfish, Singla et al., NSDI'12)",
    settings: &[
        Setting { key: "switches", default: "required", doc: "number of switches, > degree" },
        Setting {
            key: "degree",
            default: "required",
            doc: "network ports per switch, 2..switches, switches·degree even",
        },
        ENDPOINTS_PER_SWITCH,
        Setting { key: "seed", default: "`simulation.seed`", doc: "seed of the random construction" },
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[],
    parse: parse_as::<RrgParams>,
};

impl Family for RrgParams {
    fn size(&self) -> Result<NetworkSize, TopologyError> {
        size(self)
    }
    fn build(&self, seed: u64) -> Result<Network, TopologyError> {
        build(self, seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summarize;
    use crate::testutil::check_network;
    use proptest::prelude::*;

    fn params(switches: u32, degree: u32, t: u32, seed: Option<u64>) -> RrgParams {
        RrgParams { switches, degree, endpoints_per_switch: t, seed, terminal_latency: 1, link_latency: 1 }
    }

    /// Neighbour lists (network ports only), asserting regular, simple, sorted ports.
    fn check_regular(net: &Network, degree: usize) -> Vec<Vec<u32>> {
        check_network(net);
        (0..net.num_switches() as u32)
            .map(|s| {
                let nbrs: Vec<u32> = net.neighbours(s).map(|(_, v)| v).collect();
                assert_eq!(nbrs.len(), degree, "switch {s}");
                assert!(nbrs.windows(2).all(|w| w[0] < w[1]), "switch {s}: {nbrs:?}");
                assert!(!nbrs.contains(&s));
                let t = net.terminals[s as usize] as usize;
                assert_eq!(net.radix(s), t + degree);
                nbrs
            })
            .collect()
    }

    #[test]
    fn rrg_876_17_6() {
        let net = build(&params(876, 17, 6, Some(42)), 0).unwrap();
        let adj = check_regular(&net, 17);
        let sum = summarize(&net);
        assert!(sum.connected);
        assert_eq!(sum.switches, 876);
        assert_eq!(sum.endpoints, 5256);
        assert_eq!(sum.network_links, 876 * 17 / 2);
        assert_eq!((sum.min_radix, sum.max_radix), (23, 23));
        assert_eq!(sum.unconnected_ports, 0);
        assert!(sum.diameter <= 4, "{}", sum.diameter);
        let Shape::RandomRegular(shape) = &net.shape else { panic!("wrong shape") };
        // Same seed: same graph; another seed: another graph.
        let again = build(&params(876, 17, 6, Some(42)), 0).unwrap();
        assert_eq!(again.ports, net.ports);
        let other = build(&params(876, 17, 6, Some(43)), 0).unwrap();
        assert_ne!(check_regular(&other, 17), adj);
        // The recorded seed reproduces the graph.
        let replay = build(&params(876, 17, 6, Some(shape.seed_used)), 0).unwrap();
        assert_eq!(replay.ports, net.ports);
    }

    #[test]
    fn default_seed_is_used_when_absent() {
        let a = build(&params(50, 4, 1, None), 9).unwrap();
        let b = build(&params(50, 4, 1, Some(9)), 123).unwrap();
        assert_eq!(a.ports, b.ports);
        let c = build(&params(50, 4, 1, None), 10).unwrap();
        assert_ne!(a.ports, c.ports);
    }

    #[test]
    fn complete_graph_and_cycles() {
        // Degree n - 1 forces the link-swap steps; degree 2 usually needs joining cycles.
        for n in [3, 4, 5, 8, 17] {
            let net = build(&params(n, n - 1, 1, Some(1)), 0).unwrap();
            check_regular(&net, n as usize - 1);
            assert_eq!(summarize(&net).diameter, 1);
        }
        for seed in 0..20 {
            let net = build(&params(200, 2, 1, Some(seed)), 0).unwrap();
            check_regular(&net, 2);
            let sum = summarize(&net);
            assert!(sum.connected);
            assert_eq!(sum.diameter, 100);
        }
    }

    #[test]
    fn large_sparse_graph_builds() {
        // The largest size the simulator targets: 65,536 switches of degree 16.
        let net = build(&params(65_536, 16, 1, Some(5)), 0).unwrap();
        check_regular(&net, 16);
        assert!(crate::metrics::bfs(&net, 0).iter().all(|&d| d != u32::MAX));
    }

    #[test]
    fn config_parses_with_defaults() {
        let p: RrgParams = toml::from_str("switches = 10\ndegree = 3\nendpoints_per_switch = 2").unwrap();
        assert_eq!(p, params(10, 3, 2, None));
        assert!(toml::from_str::<RrgParams>(
            "switches = 10\ndegree = 3\nendpoints_per_switch = 2\nseeds = 1"
        )
        .is_err());
    }

    #[test]
    fn error_degree_too_small() {
        let e = build(&params(10, 1, 1, None), 0).unwrap_err();
        assert_eq!(e.to_string(), "topology.degree: must be >= 2, got 1");
    }

    #[test]
    fn error_degree_too_large() {
        let e = build(&params(10, 10, 1, None), 0).unwrap_err();
        assert_eq!(e.key, "degree");
        assert!(e.message.contains("< switches"), "{e}");
    }

    #[test]
    fn error_odd_port_count() {
        let e = build(&params(11, 3, 1, None), 0).unwrap_err();
        assert_eq!(e.key, "degree");
        assert!(e.message.contains("even"), "{e}");
    }

    #[test]
    fn error_no_endpoints_or_latency() {
        let e = build(&params(10, 3, 0, None), 0).unwrap_err();
        assert_eq!(e.key, "endpoints_per_switch");
        let mut p = params(10, 3, 1, None);
        p.link_latency = 0;
        assert_eq!(build(&p, 0).unwrap_err().key, "link_latency");
    }

    #[test]
    fn error_too_large() {
        let e = build(&params(u32::MAX - 1, 4, 2, None), 0).unwrap_err();
        assert_eq!(e.key, "switches");
        assert!(e.message.contains("u32"), "{e}");
        let e = build(&params(100_000, 65_535, 1, None), 0).unwrap_err();
        assert!(e.message.contains("radix"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn random_small_rrgs_are_regular_simple_connected(
            n in 3u32..60,
            d_frac in 0.0f64..1.0,
            t in 1u32..3,
            seed in any::<u64>(),
        ) {
            let mut d = 2 + ((n - 3) as f64 * d_frac) as u32; // 2..=n-1
            if (n * d) & 1 == 1 {
                d -= 1;
            }
            prop_assume!(d >= 2);
            let net = build(&params(n, d, t, Some(seed)), 0).unwrap();
            check_regular(&net, d as usize);
            let sum = summarize(&net);
            prop_assert!(sum.connected);
            prop_assert_eq!(sum.network_links, (n * d / 2) as usize);
        }
    }
}

//! Distances, diameter and average distance.
//!
//! All computations run breadth-first searches over switch-to-switch links (terminal and
//! unconnected ports are ignored), in parallel with rayon over source switches. Reductions
//! use integer sums, so results do not depend on the number of threads.

use super::{Network, PortTarget, SwitchId, TopologyError};
use rayon::prelude::*;
use serde::Serialize;

/// Switch adjacency in compressed form (neighbour lists, parallel links repeated).
struct Adjacency {
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
}

impl Adjacency {
    fn new(net: &Network) -> Self {
        let n = net.num_switches();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut neighbours = Vec::with_capacity(net.num_network_links());
        offsets.push(0);
        for s in 0..n as SwitchId {
            neighbours.extend(net.neighbours(s).map(|(_, v)| v));
            offsets.push(neighbours.len() as u32);
        }
        Adjacency { offsets, neighbours }
    }

    fn of(&self, s: u32) -> &[u32] {
        &self.neighbours[self.offsets[s as usize] as usize..self.offsets[s as usize + 1] as usize]
    }

    /// BFS from `src` into `dist` (length n, overwritten) using `queue` as scratch.
    fn bfs_into(&self, src: SwitchId, dist: &mut [u32], queue: &mut Vec<u32>) {
        dist.fill(u32::MAX);
        queue.clear();
        dist[src as usize] = 0;
        queue.push(src);
        let mut head = 0;
        while head < queue.len() {
            let v = queue[head];
            head += 1;
            let next = dist[v as usize] + 1;
            for &u in self.of(v) {
                if dist[u as usize] == u32::MAX {
                    dist[u as usize] = next;
                    queue.push(u);
                }
            }
        }
    }
}

/// Switch hops from `src` to every switch; `u32::MAX` where unreachable.
pub fn bfs(net: &Network, src: SwitchId) -> Vec<u32> {
    let adj = Adjacency::new(net);
    let mut dist = vec![0; net.num_switches()];
    adj.bfs_into(src, &mut dist, &mut Vec::new());
    dist
}

/// All-pairs switch distances, one byte each (`255` = unreachable): `n^2` bytes.
#[derive(Clone, Debug)]
pub struct DistanceTable {
    n: usize,
    dist: Vec<u8>,
}

impl DistanceTable {
    /// Value stored for unreachable pairs.
    pub const UNREACHABLE: u8 = u8::MAX;

    /// Computes the table (one BFS per source, in parallel). Fails if some finite distance
    /// is 255 or more, or if the table would not fit in memory addressing.
    pub fn compute(net: &Network) -> Result<Self, TopologyError> {
        let n = net.num_switches();
        let Some(size) = n.checked_mul(n) else {
            return Err(TopologyError::new(
                "switches",
                format!("a distance table for {n} switches does not fit in memory"),
            ));
        };
        let adj = Adjacency::new(net);
        let mut dist = vec![Self::UNREACHABLE; size];
        if n == 0 {
            return Ok(DistanceTable { n, dist });
        }
        dist.par_chunks_mut(n).enumerate().try_for_each_init(
            || (vec![0u32; n], Vec::with_capacity(n)),
            |(d, queue), (src, row)| {
                adj.bfs_into(src as SwitchId, d, queue);
                for (cell, &x) in row.iter_mut().zip(d.iter()) {
                    *cell = match x {
                        u32::MAX => Self::UNREACHABLE,
                        x if x < Self::UNREACHABLE as u32 => x as u8,
                        x => {
                            return Err(TopologyError::new(
                                "switches",
                                format!(
                                    "switch distance {x} from switch {src} does not fit the \
                                         distance table (max 254)"
                                ),
                            ))
                        }
                    };
                }
                Ok(())
            },
        )?;
        Ok(DistanceTable { n, dist })
    }

    /// Hops from switch `a` to switch `b` (`255` if unreachable).
    pub fn get(&self, a: SwitchId, b: SwitchId) -> u8 {
        self.dist[a as usize * self.n + b as usize]
    }

    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.n
    }

    /// Memory used by the table in bytes.
    pub fn bytes(&self) -> usize {
        self.dist.len()
    }
}

/// Size and distance figures of a network.
#[derive(Clone, Debug, Serialize)]
pub struct TopologySummary {
    /// Number of switches.
    pub switches: usize,
    /// Number of endpoints.
    pub endpoints: usize,
    /// Bidirectional links between switches (parallel links counted separately).
    pub network_links: usize,
    /// Ports left unconnected.
    pub unconnected_ports: usize,
    /// Smallest switch radix (ports, terminal ports included).
    pub min_radix: usize,
    /// Largest switch radix.
    pub max_radix: usize,
    /// Largest switch-to-switch distance in hops over reachable pairs.
    pub diameter: u32,
    /// Mean switch-to-switch hops over ordered pairs of distinct switches (reachable pairs
    /// only when the network is disconnected; 0 with a single switch).
    pub average_distance: f64,
    /// Mean switch hops over ordered pairs of distinct endpoints (two endpoints on the
    /// same switch count 0; reachable pairs only when disconnected; 0 with < 2 endpoints).
    pub endpoint_average_distance: f64,
    /// Whether every switch reaches every other.
    pub connected: bool,
}

/// Per-source partial sums of [`summarize`].
#[derive(Clone, Copy, Default)]
struct Partial {
    /// Sum of distances to reachable switches.
    dist_sum: u64,
    /// Reachable ordered pairs of distinct switches.
    pairs: u64,
    /// Sum over reachable switch pairs of `t_a * t_b * d(a, b)`.
    ep_dist_sum: u128,
    /// Ordered pairs of distinct endpoints whose switches reach each other.
    ep_pairs: u128,
    diameter: u32,
    unreachable: u64,
}

impl Partial {
    fn merge(self, o: Partial) -> Partial {
        Partial {
            dist_sum: self.dist_sum + o.dist_sum,
            pairs: self.pairs + o.pairs,
            ep_dist_sum: self.ep_dist_sum + o.ep_dist_sum,
            ep_pairs: self.ep_pairs + o.ep_pairs,
            diameter: self.diameter.max(o.diameter),
            unreachable: self.unreachable + o.unreachable,
        }
    }
}

/// Counts, radix range, diameter and average distances (parallel BFS from every switch,
/// `O(n)` memory per thread).
pub fn summarize(net: &Network) -> TopologySummary {
    let n = net.num_switches();
    let adj = Adjacency::new(net);
    let terminals: Vec<u64> = net.terminals.iter().map(|&t| t as u64).collect();
    let total = (0..n as SwitchId)
        .into_par_iter()
        .map_init(
            || (vec![0u32; n], Vec::with_capacity(n)),
            |(dist, queue), src| {
                adj.bfs_into(src, dist, queue);
                let ts = terminals[src as usize] as u128;
                let mut p = Partial {
                    // Endpoint pairs on the same switch: distance 0.
                    ep_pairs: ts * ts.saturating_sub(1),
                    ..Partial::default()
                };
                for (b, &d) in dist.iter().enumerate() {
                    if b == src as usize {
                        continue;
                    }
                    if d == u32::MAX {
                        p.unreachable += 1;
                        continue;
                    }
                    let w = ts * terminals[b] as u128;
                    p.dist_sum += d as u64;
                    p.pairs += 1;
                    p.ep_dist_sum += w * d as u128;
                    p.ep_pairs += w;
                    p.diameter = p.diameter.max(d);
                }
                p
            },
        )
        .reduce(Partial::default, Partial::merge);
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
    let radix = (0..n as SwitchId).map(|s| net.radix(s));
    TopologySummary {
        switches: n,
        endpoints: net.num_endpoints(),
        network_links: net.num_network_links() / 2,
        unconnected_ports: net.ports.iter().filter(|p| p.target == PortTarget::Unconnected).count(),
        min_radix: radix.clone().min().unwrap_or(0),
        max_radix: radix.max().unwrap_or(0),
        diameter: total.diameter,
        average_distance: ratio(total.dist_sum as f64, total.pairs as f64),
        endpoint_average_distance: ratio(total.ep_dist_sum as f64, total.ep_pairs as f64),
        connected: total.unreachable == 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{dragonfly, fattree, hyperx, link_classes, rrg, terminal_port, torus, Port, Shape};

    fn small_networks() -> Vec<Network> {
        vec![
            hyperx::build(&hyperx::HyperXParams {
                sides: vec![3, 4],
                endpoints_per_switch: 2,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap(),
            torus::build(&torus::TorusParams {
                sides: vec![5, 3],
                wrap: Some(vec![true, false]),
                endpoints_per_switch: 3,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap(),
            dragonfly::build(&dragonfly::DragonflyParams {
                p: 2,
                a: 4,
                h: 2,
                groups: Some(6),
                arrangement: dragonfly::Arrangement::Palmtree,
                terminal_latency: 1,
                local_latency: 1,
                global_latency: 1,
            })
            .unwrap(),
            fattree::build(&fattree::FatTreeParams { k: 3, n: 3, terminal_latency: 1, link_latency: 1 })
                .unwrap(),
            rrg::build(
                &rrg::RrgParams {
                    switches: 30,
                    degree: 3,
                    endpoints_per_switch: 2,
                    seed: None,
                    terminal_latency: 1,
                    link_latency: 1,
                },
                7,
            )
            .unwrap(),
        ]
    }

    /// Two switches with one endpoint each and no link between them.
    fn disconnected() -> Network {
        let lists = vec![
            vec![terminal_port(), Port { target: PortTarget::Unconnected, class: 1 }],
            vec![terminal_port()],
        ];
        Network::from_port_lists(
            "two islands".into(),
            lists,
            link_classes(&[("terminal", 1), ("network", 1)]),
            Shape::RandomRegular(rrg::RrgShape {
                switches: 2,
                degree: 0,
                endpoints_per_switch: 1,
                seed_used: 0,
            }),
        )
    }

    #[test]
    fn summary_agrees_with_distance_table() {
        for net in small_networks() {
            let table = DistanceTable::compute(&net).unwrap();
            let n = net.num_switches();
            assert_eq!(table.num_switches(), n);
            assert_eq!(table.bytes(), n * n);
            let (mut sum, mut max) = (0u64, 0u8);
            let (mut ep_sum, mut ep_pairs) = (0u64, 0u64);
            for a in 0..n as u32 {
                assert_eq!(table.get(a, a), 0);
                let row = bfs(&net, a);
                for b in 0..n as u32 {
                    let d = table.get(a, b);
                    assert_eq!(d as u32, row[b as usize]);
                    assert_eq!(d, table.get(b, a), "{}: not symmetric", net.name);
                    sum += d as u64;
                    max = max.max(d);
                }
            }
            for &(sa, _) in &net.endpoint_location {
                for &(sb, _) in &net.endpoint_location {
                    ep_sum += table.get(sa, sb) as u64;
                    ep_pairs += 1;
                }
            }
            let e = net.num_endpoints() as u64;
            ep_pairs -= e; // self pairs (distance 0) are excluded
            let s = summarize(&net);
            assert!(s.connected, "{}", net.name);
            assert_eq!(s.diameter, max as u32, "{}", net.name);
            let avg = sum as f64 / (n * (n - 1)) as f64;
            assert!((s.average_distance - avg).abs() < 1e-12, "{}", net.name);
            let ep_avg = ep_sum as f64 / ep_pairs as f64;
            assert!((s.endpoint_average_distance - ep_avg).abs() < 1e-12, "{}", net.name);
            assert_eq!(s.endpoints, net.num_endpoints());
            assert_eq!(s.network_links * 2, net.num_network_links());
        }
    }

    #[test]
    fn summary_is_independent_of_thread_count() {
        let net = &small_networks()[4];
        let run = |threads| {
            rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(|| summarize(net))
        };
        let (a, b) = (run(1), run(3));
        assert_eq!(a.average_distance.to_bits(), b.average_distance.to_bits());
        assert_eq!(a.endpoint_average_distance.to_bits(), b.endpoint_average_distance.to_bits());
        assert_eq!(a.diameter, b.diameter);
    }

    #[test]
    fn unreachable_switches_are_reported() {
        let net = disconnected();
        assert_eq!(bfs(&net, 0), vec![0, u32::MAX]);
        let table = DistanceTable::compute(&net).unwrap();
        assert_eq!(table.get(0, 1), DistanceTable::UNREACHABLE);
        let s = summarize(&net);
        assert!(!s.connected);
        assert_eq!(s.unconnected_ports, 1);
        assert_eq!((s.min_radix, s.max_radix), (1, 2));
        assert_eq!(s.network_links, 0);
        assert_eq!(s.diameter, 0);
        assert_eq!(s.average_distance, 0.0);
    }

    #[test]
    fn distance_table_rejects_long_paths() {
        let ring = torus::build(&torus::TorusParams {
            sides: vec![600],
            wrap: Some(vec![false]),
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap();
        assert_eq!(summarize(&ring).diameter, 599);
        let e = DistanceTable::compute(&ring).unwrap_err();
        assert!(e.message.contains("254"), "{e}");
    }
}

//! Size and distance figures of a network ([`summarize`]).

use super::multi_bfs::{all_pairs, and, count, single, Bits, BATCH};
use super::Adjacency;
use crate::{Network, PortTarget, SwitchId};
use serde::Serialize;

/// Size and distance figures of a network.
#[derive(Clone, Debug, Serialize)]
pub struct TopologySummary {
    /// Number of switches.
    pub switches: usize,
    /// Number of endpoints.
    pub endpoints: usize,
    /// Bidirectional links between switches (parallel links counted separately).
    pub network_links: usize,
    /// Links beside another between the same two switches (each pair's extra links: 1
    /// for a pair joined twice). A fabric may have them on purpose; in an edge list they
    /// come from a line given twice.
    pub parallel_links: usize,
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

/// Per-batch partial sums of [`summarize`].
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
}

impl Partial {
    fn merge(self, o: Partial) -> Partial {
        Partial {
            dist_sum: self.dist_sum + o.dist_sum,
            pairs: self.pairs + o.pairs,
            ep_dist_sum: self.ep_dist_sum + o.ep_dist_sum,
            ep_pairs: self.ep_pairs + o.ep_pairs,
        }
    }
}

/// Links beside another between the same two switches: per switch, the neighbours that
/// appear more than once among its ports (counted from the lower-numbered end).
fn parallel_links(net: &Network) -> usize {
    let mut seen = Vec::new();
    (0..net.num_switches() as SwitchId)
        .map(|s| {
            seen.clear();
            seen.extend(net.neighbours(s).map(|(_, v)| v).filter(|&v| v > s));
            seen.sort_unstable();
            seen.windows(2).filter(|w| w[0] == w[1]).count()
        })
        .sum()
}

/// Counts, radix range, diameter and average distances (multi-source bit-parallel BFS
/// from every switch, batches in parallel, `O(n)` memory per thread).
pub fn summarize(net: &Network) -> TopologySummary {
    let n = net.num_switches();
    let adj = Adjacency::new(net);
    let sources: Vec<SwitchId> = (0..n as SwitchId).collect();
    let terminals: Vec<u64> = net.terminals.iter().map(|&t| t as u64).collect();
    // Per batch: the sources grouped by endpoint count, so the endpoint-weighted sums over
    // a set of sources are a few popcounts.
    let batches = sources.len().div_ceil(BATCH);
    let (partials, stats) = all_pairs(
        &adj,
        &sources,
        vec![(); batches],
        |b, ()| {
            let src = &sources[b * BATCH..((b + 1) * BATCH).min(n)];
            let mut classes: Vec<(u64, Bits)> = Vec::new();
            let mut p = Partial::default();
            for (i, &s) in src.iter().enumerate() {
                let t = terminals[s as usize];
                // Endpoint pairs on the same switch: distance 0.
                p.ep_pairs += (t * t.saturating_sub(1)) as u128;
                match classes.iter_mut().find(|(c, _)| *c == t) {
                    Some((_, m)) => m[i / 64] |= 1 << (i % 64),
                    None => classes.push((t, single(i))),
                }
            }
            (p, classes)
        },
        |(p, classes), level, v, new| {
            if level == 0 {
                return;
            }
            let k = count(new) as u64;
            let ts: u128 = classes.iter().map(|(t, m)| *t as u128 * count(&and(new, m)) as u128).sum();
            let w = ts * terminals[v as usize] as u128;
            p.dist_sum += level as u64 * k;
            p.pairs += k;
            p.ep_dist_sum += w * level as u128;
            p.ep_pairs += w;
        },
        |(p, _)| p,
    );
    let total = partials.into_iter().fold(Partial::default(), Partial::merge);
    let ratio = |num: f64, den: f64| if den > 0.0 { num / den } else { 0.0 };
    let radix = (0..n as SwitchId).map(|s| net.radix(s));
    TopologySummary {
        switches: n,
        endpoints: net.num_endpoints(),
        network_links: net.num_network_links() / 2,
        parallel_links: parallel_links(net),
        unconnected_ports: net.ports.iter().filter(|p| p.target == PortTarget::Unconnected).count(),
        min_radix: radix.clone().min().unwrap_or(0),
        max_radix: radix.max().unwrap_or(0),
        diameter: stats.diameter,
        average_distance: ratio(total.dist_sum as f64, total.pairs as f64),
        endpoint_average_distance: ratio(total.ep_dist_sum as f64, total.ep_pairs as f64),
        connected: stats.unreachable == 0,
    }
}

//! Slim Fly: the McKay-Miller-Širáň (MMS) graphs as Besta and Hoefler use them ("Slim Fly:
//! A Cost Effective Low-Diameter Network Topology", SC'14): diameter 2 with close to the
//! most switches that degree allows (the Moore bound).
//!
//! For a prime `q = 4w + δ` with `δ = ±1`, and `ξ` a primitive element of GF(q), there are
//! `2q²` routers `(0, x, y)` and `(1, m, c)` (`x, y, m, c` in GF(q)):
//!
//! * `(0, x, y) ~ (0, x, y')` iff `y - y'` is in `X`;
//! * `(1, m, c) ~ (1, m, c')` iff `c - c'` is in `X'`;
//! * `(0, x, y) ~ (1, m, c)` iff `y = m·x + c`.
//!
//! `δ = 1`: `X` holds the even powers of `ξ` (`1, ξ², ..., ξ^(q-3)`), `X'` the odd ones.
//! `δ = -1`: `X = {1, ξ², ..., ξ^(2w-2)} ∪ {ξ^(2w-1), ξ^(2w+1), ..., ξ^(4w-3)}` and
//! `X' = {ξ, ξ³, ..., ξ^(2w-1)} ∪ {ξ^(2w), ξ^(2w+2), ..., ξ^(4w-2)}`. Both sets are closed
//! under negation, so the graph is undirected, and every router has `(3q - δ) / 2`
//! network ports: `(q - δ) / 2` in its own subgraph and `q` to the other. With `q = 5` it
//! is the Hoffman-Singleton graph. (`δ = 0`, `q` a power of two, needs GF(2^n) arithmetic
//! and is not built here.)
//!
//! Numbering: router `(0, x, y)` is `x·q + y`, `(1, m, c)` is `q² + m·q + c`. Ports:
//! terminals, then the neighbours in id order. Endpoints per router default to
//! `ceil(k'/2)` for network radix `k'`, the paper's choice for full global bandwidth.

use super::{
    check_latency, check_size, link_classes, ports_from_sorted_adjacency, Network, NetworkSize, Shape,
    TopologyError,
};
use crate::family::{parse_as, Family, TopologyEntry, LATENCY, TERMINAL_LATENCY};
use crate::shape::SlimFlyShape;
use base::settings::Setting;
use serde::{Deserialize, Serialize};

/// The `[topology]` table of a Slim Fly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlimFlyParams {
    /// A prime with `q mod 4` = 1 or 3.
    pub q: u32,
    /// Endpoints per router (default: half the network radix, rounded up).
    #[serde(default)]
    pub endpoints_per_switch: Option<u32>,
    /// Latency of endpoint links in cycles (default 1).
    #[serde(default = "super::one")]
    pub terminal_latency: u64,
    /// Latency of router links in cycles (default 1).
    #[serde(default = "super::one")]
    pub link_latency: u64,
}

fn is_prime(q: u32) -> bool {
    q >= 2 && (2..).take_while(|d| d * d <= q).all(|d| !q.is_multiple_of(d))
}

/// The smallest primitive element of GF(q) (`q` prime).
fn primitive_element(q: u32) -> u32 {
    let order = |g: u32| {
        let (mut x, mut k) = (g, 1);
        while x != 1 {
            x = x * g % q;
            k += 1;
        }
        k
    };
    (2..q).find(|&g| order(g) == q - 1).unwrap_or(1)
}

/// `δ` of `q = 4w + δ`, and the network radix `(3q - δ) / 2`.
fn delta_and_radix(q: u32) -> (i64, u32) {
    let delta: i64 = if q % 4 == 1 { 1 } else { -1 };
    (delta, ((3 * q as i64 - delta) / 2) as u32)
}

fn check(p: &SlimFlyParams) -> Result<(u32, u32), TopologyError> {
    // Every odd prime is 4w + 1 or 4w - 1.
    if !is_prime(p.q) || p.q < 5 || p.q > 46_337 {
        return Err(TopologyError::new(
            "q",
            format!(
                "must be a prime of the form 4w ± 1, at least 5 (5, 7, 11, 13, 17, 19, 23, 29, ...), got {}",
                p.q
            ),
        ));
    }
    let (_, radix) = delta_and_radix(p.q);
    let t = p.endpoints_per_switch.unwrap_or(radix.div_ceil(2));
    if t == 0 {
        return Err(TopologyError::new("endpoints_per_switch", "must be >= 1, got 0"));
    }
    check_latency("terminal_latency", p.terminal_latency)?;
    check_latency("link_latency", p.link_latency)?;
    Ok((radix, t))
}

/// The generator sets `X` and `X'` (as a membership table over GF(q)).
fn generator_sets(q: u32) -> (Vec<bool>, Vec<bool>) {
    let (delta, _) = delta_and_radix(q);
    let xi = primitive_element(q);
    let mut power = vec![1u32; q as usize - 1];
    for k in 1..power.len() {
        power[k] = power[k - 1] * xi % q;
    }
    let (mut x, mut x2) = (vec![false; q as usize], vec![false; q as usize]);
    if delta == 1 {
        for (k, &v) in power.iter().enumerate() {
            if k % 2 == 0 {
                x[v as usize] = true;
            } else {
                x2[v as usize] = true;
            }
        }
    } else {
        let w = (q as usize + 1) / 4;
        for k in (0..=2 * w - 2).step_by(2).chain((2 * w - 1..=4 * w - 3).step_by(2)) {
            x[power[k % power.len()] as usize] = true;
        }
        for k in (1..=2 * w - 1).step_by(2).chain((2 * w..=4 * w - 2).step_by(2)) {
            x2[power[k % power.len()] as usize] = true;
        }
    }
    (x, x2)
}

impl Family for SlimFlyParams {
    fn size(&self) -> Result<NetworkSize, TopologyError> {
        let (radix, t) = check(self)?;
        let switches = 2 * self.q as u128 * self.q as u128;
        Ok(check_size("q", switches, t as u128, t as u128 + radix as u128)?
            .with_route(2, 2 * self.terminal_latency + 2 * self.link_latency))
    }

    fn build(&self, _seed: u64) -> Result<Network, TopologyError> {
        let (radix, t) = check(self)?;
        self.size()?;
        let q = self.q;
        let (x, x2) = generator_sets(q);
        let n = (2 * q * q) as usize;
        let id0 = |a: u32, b: u32| a * q + b;
        let id1 = |m: u32, c: u32| q * q + m * q + c;
        let mut adj: Vec<Vec<u32>> = vec![Vec::with_capacity(radix as usize); n];
        for a in 0..q {
            for b in 0..q {
                for b2 in 0..q {
                    let d = ((b + q - b2) % q) as usize;
                    if x[d] {
                        adj[id0(a, b) as usize].push(id0(a, b2));
                    }
                    if x2[d] {
                        adj[id1(a, b) as usize].push(id1(a, b2));
                    }
                }
            }
        }
        // (0, x, y) ~ (1, m, c) iff y = m x + c.
        for xx in 0..q {
            for m in 0..q {
                for c in 0..q {
                    let y = (m * xx + c) % q;
                    adj[id0(xx, y) as usize].push(id1(m, c));
                    adj[id1(m, c) as usize].push(id0(xx, y));
                }
            }
        }
        for list in &mut adj {
            list.sort_unstable();
            debug_assert_eq!(list.len(), radix as usize);
        }
        let lists = ports_from_sorted_adjacency(&adj, t as usize);
        Ok(Network::from_port_lists(
            format!("slim_fly(q={q}, k'={radix}, t={t})"),
            lists,
            link_classes(&[("terminal", self.terminal_latency), ("network", self.link_latency)]),
            Shape::SlimFly(SlimFlyShape { q }),
        ))
    }
}

/// `slim_fly` in the topology registry.
pub const SLIM_FLY: TopologyEntry = TopologyEntry {
    name: "slim_fly",
    doc: "Slim Fly (Besta and Hoefler, SC'14): the MMS graph of a prime q = 4w ± 1, 2q² routers of network radix (3q ∓ 1)/2, diameter 2",
    settings: &[
        Setting { key: "q", default: "required", doc: "a prime of the form 4w ± 1, >= 5 (5: the Hoffman-Singleton graph)" },
        Setting {
            key: "endpoints_per_switch",
            default: "ceil(k'/2)",
            doc: "endpoints per router; by default half the network radix k', rounded up (the paper's full-bandwidth choice)",
        },
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[],
    parse: parse_as::<SlimFlyParams>,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::DistanceTable;

    fn build(q: u32) -> Network {
        SlimFlyParams { q, endpoints_per_switch: Some(1), terminal_latency: 1, link_latency: 1 }
            .build(0)
            .unwrap()
    }

    #[test]
    fn slim_flies_are_regular_with_diameter_two() {
        // (q, routers, network radix): the paper's Table 2 sizes.
        for (q, routers, radix) in [(5, 50, 7), (7, 98, 11), (11, 242, 17), (13, 338, 19)] {
            let net = build(q);
            assert_eq!(net.num_switches(), routers, "q = {q}");
            for s in 0..routers as u32 {
                assert_eq!(net.neighbours(s).count(), radix, "q = {q}, router {s}");
            }
            net.check_symmetric().unwrap();
            let dist = DistanceTable::compute(&net).unwrap();
            let diameter = (0..routers as u32)
                .flat_map(|a| (0..routers as u32).map(move |b| (a, b)))
                .map(|(a, b)| dist.get(a, b))
                .max()
                .unwrap();
            assert_eq!(diameter, 2, "q = {q}");
        }
    }

    #[test]
    fn q5_is_the_hoffman_singleton_graph() {
        // 50 vertices, 7-regular, girth 5: no triangles and no 4-cycles, so any two
        // vertices share at most one neighbour, and non-adjacent ones exactly one.
        let net = build(5);
        let nb: Vec<Vec<u32>> = (0..50).map(|s| net.neighbours(s).map(|(_, v)| v).collect()).collect();
        for a in 0..50usize {
            for b in a + 1..50 {
                let common = nb[a].iter().filter(|v| nb[b].contains(v)).count();
                let adjacent = nb[a].contains(&(b as u32));
                assert_eq!(common, usize::from(!adjacent), "{a} {b}");
            }
        }
    }

    #[test]
    fn bad_q_is_refused_naming_it() {
        for q in [4, 9, 3, 17 * 2] {
            let p = SlimFlyParams { q, endpoints_per_switch: None, terminal_latency: 1, link_latency: 1 };
            let e = p.size().unwrap_err();
            assert_eq!(e.key, "q", "{q}");
        }
        let p = SlimFlyParams { q: 7, endpoints_per_switch: None, terminal_latency: 1, link_latency: 1 };
        assert_eq!(p.size().unwrap().endpoints, 98 * 6);
    }
}

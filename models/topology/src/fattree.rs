//! k-ary n-tree (Petrini and Vanneschi, "k-ary n-trees: High Performance Networks for
//! Massively Parallel Architectures", IPPS 1997): `k^n` endpoints, `n` levels of `k^(n-1)`
//! switches.
//!
//! Switch id `level * k^(n-1) + w`, level 0 at the leaves. Leaves have terminal ports
//! `0..k`; other switches have down ports `0..k`; all but the top level have up ports
//! `k..2k`. Up port `j` of `<w, l>` reaches `<w with digit l set to j, l + 1>` at its down
//! port `w_l` (digits of `w` in base `k`, digit 0 least significant).

use super::{
    check_latency, check_size, link_classes, terminal_port, Network, NetworkSize, Port, PortId, PortTarget,
    Shape, TopologyError,
};
use crate::family::{parse_as, TopologyEntry, LATENCY, TERMINAL_LATENCY};
use crate::shape::FatTreeShape;
use base::settings::Setting;
use serde::{Deserialize, Serialize};

/// Configuration of a k-ary n-tree (the `[topology]` table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeParams {
    /// Arity: down ports (and up ports) per switch, >= 2. Leaves have `k` endpoints.
    pub k: u32,
    /// Number of switch levels, >= 1 (`n = 1` is a single switch with `k` endpoints).
    /// `k^n` (the endpoint count) must fit in `u32`.
    pub n: u32,
    /// Latency of endpoint-to-switch links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub terminal_latency: u64,
    /// Latency of switch-to-switch links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub link_latency: u64,
}

/// Checks the parameters and returns the network's counts without building it.
pub fn size(p: &FatTreeParams) -> Result<NetworkSize, TopologyError> {
    if p.k < 2 {
        return Err(TopologyError::new("k", format!("must be >= 2, got {}", p.k)));
    }
    if p.n == 0 {
        return Err(TopologyError::new("n", "must be >= 1, got 0"));
    }
    check_latency("terminal_latency", p.terminal_latency)?;
    check_latency("link_latency", p.link_latency)?;
    let radix = p.k as u128 * if p.n == 1 { 1 } else { 2 };
    check_size("k", 1, 0, radix)?;
    let endpoints =
        (0..p.n).try_fold(1u128, |acc, _| acc.checked_mul(p.k as u128).filter(|&e| e <= u64::MAX as u128));
    let Some(endpoints) = endpoints else {
        return Err(TopologyError::new("n", format!("k^n = {}^{} endpoints must fit in u32", p.k, p.n)));
    };
    let per_level = endpoints / p.k as u128;
    let switches = per_level * p.n as u128;
    let size = check_size("n", switches, 0, radix)?;
    if endpoints > u32::MAX as u128 {
        return Err(TopologyError::new(
            "n",
            format!(
                "the network would have {endpoints} endpoints; the total must fit in u32 (<= {})",
                u32::MAX
            ),
        ));
    }
    // Up to a common ancestor and down again.
    let hops = 2 * (p.n - 1);
    Ok(NetworkSize { endpoints: endpoints as u64, ..size }
        .with_route(hops, 2 * p.terminal_latency + hops as u64 * p.link_latency))
}

/// Builds a k-ary n-tree. Link classes: 0 `terminal`, 1 `network`.
pub fn build(p: &FatTreeParams) -> Result<Network, TopologyError> {
    let switches = size(p)?.switches;
    let radix = p.k as usize * if p.n == 1 { 1 } else { 2 };
    let per_level = switches / p.n as u64;
    let shape = FatTreeShape { k: p.k, n: p.n };
    let k = p.k;
    let per_level = per_level as u32;
    let mut lists = Vec::with_capacity(switches as usize);
    for s in 0..switches as u32 {
        let (l, w) = (shape.level(s), shape.index(s));
        let mut ports = Vec::with_capacity(radix);
        if l == 0 {
            ports.resize(k as usize, terminal_port());
        } else {
            // Down port d reaches <w with digit l-1 set to d, l-1> at its up port k + w_{l-1}.
            let stride = shape.stride(l - 1);
            let own = shape.digit(w, l - 1);
            for d in 0..k {
                let w2 = w - own * stride + d * stride;
                ports.push(Port {
                    target: PortTarget::Switch {
                        switch: (l - 1) * per_level + w2,
                        port: (k + own) as PortId,
                    },
                    class: 1,
                });
            }
        }
        if l + 1 < p.n {
            let stride = shape.stride(l);
            let own = shape.digit(w, l);
            for j in 0..k {
                let w2 = w - own * stride + j * stride;
                ports.push(Port {
                    target: PortTarget::Switch { switch: (l + 1) * per_level + w2, port: own as PortId },
                    class: 1,
                });
            }
        }
        lists.push(ports);
    }
    let name = format!("fattree(k={}, n={})", p.k, p.n);
    Ok(Network::from_port_lists(
        name,
        lists,
        link_classes(&[("terminal", p.terminal_latency), ("network", p.link_latency)]),
        Shape::FatTree(shape),
    ))
}

/// `fat_tree` in the topology registry.
pub const FAT_TREE: TopologyEntry = TopologyEntry {
    name: "fat_tree",
    doc: "k-ary n-tree (Petrini and Vanneschi, 1997): n levels of switches with k down and k up ports, k^n endpoints",
    settings: &[
        Setting { key: "k", default: "required", doc: "arity, >= 2" },
        Setting { key: "n", default: "required", doc: "switch levels, >= 1" },
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[],
    parse: parse_as::<FatTreeParams>,
};

crate::family::family_from_fns!(FatTreeParams);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{summarize, DistanceTable};
    use crate::testutil::check_network;

    fn params(k: u32, n: u32) -> FatTreeParams {
        FatTreeParams { k, n, terminal_latency: 1, link_latency: 1 }
    }

    #[test]
    fn fattree_4_3_counts() {
        let net = build(&params(4, 3)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!(sum.endpoints, 64);
        assert_eq!(sum.switches, 48);
        assert_eq!(sum.network_links, 2 * 64);
        assert_eq!((sum.min_radix, sum.max_radix), (4, 8));
        assert_eq!(sum.unconnected_ports, 0);
        assert_eq!(sum.diameter, 4);
        assert!(sum.connected);
        // Leaves have terminals, upper levels none.
        assert_eq!(net.terminals.iter().filter(|&&t| t == 4).count(), 16);
        assert_eq!(net.terminals.iter().filter(|&&t| t == 0).count(), 32);
    }

    #[test]
    fn single_switch() {
        let net = build(&params(5, 1)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!((sum.switches, sum.endpoints, sum.network_links), (1, 5, 0));
        assert_eq!((sum.min_radix, sum.max_radix), (5, 5));
        assert_eq!(sum.endpoint_average_distance, 0.0);
    }

    #[test]
    fn leaf_distance_is_twice_the_common_ancestor_level() {
        let net = build(&params(3, 3)).unwrap();
        check_network(&net);
        let Shape::FatTree(shape) = &net.shape else { panic!("wrong shape") };
        let table = DistanceTable::compute(&net).unwrap();
        for a in 0..9 {
            for b in 0..9 {
                let ancestor = (0..2)
                    .filter(|&l| shape.digit(a, l) != shape.digit(b, l))
                    .map(|l| l + 1)
                    .max()
                    .unwrap_or(0);
                assert_eq!(table.get(a, b) as u32, 2 * ancestor, "{a} {b}");
            }
        }
    }

    #[test]
    fn wiring_follows_the_documented_layout() {
        let net = build(&params(3, 4)).unwrap();
        check_network(&net);
        let Shape::FatTree(shape) = &net.shape else { panic!("wrong shape") };
        let k = 3;
        for s in 0..net.num_switches() as u32 {
            let (l, w) = (shape.level(s), shape.index(s));
            assert_eq!(s, l * 27 + w);
            if l + 1 < 4 {
                for j in 0..k {
                    let PortTarget::Switch { switch, port } = net.ports(s)[(k + j) as usize].target else {
                        panic!("up port unconnected")
                    };
                    assert_eq!(shape.level(switch), l + 1);
                    let w2 = shape.index(switch);
                    assert_eq!(shape.digit(w2, l), j);
                    for other in (0..3).filter(|&d| d != l) {
                        assert_eq!(shape.digit(w2, other), shape.digit(w, other));
                    }
                    assert_eq!(port as u32, shape.digit(w, l));
                }
            } else {
                assert_eq!(net.radix(s), k as usize);
            }
        }
        assert_eq!(shape.digit(5, 0), 2);
        assert_eq!(shape.digit(5, 1), 1);
    }

    #[test]
    fn config_parses_with_defaults() {
        let p: FatTreeParams = toml::from_str("k = 4\nn = 3").unwrap();
        assert_eq!(p, params(4, 3));
        assert!(toml::from_str::<FatTreeParams>("k = 4\nn = 3\nm = 1").is_err());
    }

    #[test]
    fn error_arity() {
        let e = build(&params(1, 3)).unwrap_err();
        assert_eq!(e.to_string(), "topology.k: must be >= 2, got 1");
    }

    #[test]
    fn error_levels() {
        assert_eq!(build(&params(4, 0)).unwrap_err().key, "n");
    }

    #[test]
    fn error_too_large() {
        for (k, n) in [(2, 40), (2, 200), (32_767, 3), (2, u32::MAX)] {
            let e = build(&params(k, n)).unwrap_err();
            assert_eq!(e.key, "n");
            assert!(e.message.contains("u32"), "{e}");
        }
        assert_eq!(build(&params(u32::MAX, 1)).unwrap_err().key, "k");
        let e = build(&params(40_000, 2)).unwrap_err();
        assert_eq!(e.key, "k");
        assert!(e.message.contains("radix"), "{e}");
    }

    #[test]
    fn error_zero_latency() {
        let mut p = params(2, 2);
        p.terminal_latency = 0;
        assert_eq!(build(&p).unwrap_err().key, "terminal_latency");
    }
}

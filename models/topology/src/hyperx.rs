//! HyperX (Ahn, Binkert, Davis, McLaren, Schreiber, "HyperX: Topology, Routing, and
//! Packaging of Efficient Large-Scale Networks", SC'09): `L` dimensions of `S_k` switches,
//! every dimension a complete graph, `T` endpoints per switch; radix `T + sum(S_k - 1)`.
//!
//! Switch ids are mixed-radix numbers with dimension 0 varying fastest. Port layout of a
//! switch: terminals `0..T`, then for each dimension in order the `S_k - 1` ports to the
//! other switches of that dimension, in increasing coordinate order.

use super::{
    check_latency, check_size, link_classes, terminal_port, Network, NetworkSize, Port, PortTarget, Shape,
    TopologyError,
};
use crate::family::{parse_as, TopologyEntry, ENDPOINTS_PER_SWITCH, LATENCY, TERMINAL_LATENCY};
use crate::shape::HyperXShape;
use base::settings::Setting;
use serde::{Deserialize, Serialize};

/// Configuration of a HyperX (the `[topology]` table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HyperXParams {
    /// Switches per dimension (dimension 0 first); at least one dimension, each side >= 2.
    /// The product (the switch count) must fit in `u32`.
    pub sides: Vec<u32>,
    /// Endpoints attached to every switch, >= 1.
    pub endpoints_per_switch: u32,
    /// Latency of endpoint-to-switch links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub terminal_latency: u64,
    /// Latency of switch-to-switch links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub link_latency: u64,
}

/// Checks the parameters and returns the network's counts without building it.
pub fn size(p: &HyperXParams) -> Result<NetworkSize, TopologyError> {
    if p.sides.is_empty() {
        return Err(TopologyError::new("sides", "needs at least one dimension, got an empty list"));
    }
    for (i, &side) in p.sides.iter().enumerate() {
        if side < 2 {
            return Err(TopologyError::new(format!("sides[{i}]"), format!("must be >= 2, got {side}")));
        }
    }
    if p.endpoints_per_switch == 0 {
        return Err(TopologyError::new("endpoints_per_switch", "must be >= 1, got 0"));
    }
    check_latency("terminal_latency", p.terminal_latency)?;
    check_latency("link_latency", p.link_latency)?;
    let switches = p.sides.iter().try_fold(1u128, |acc, &s| acc.checked_mul(s as u128)).unwrap_or(u128::MAX);
    let radix = p.endpoints_per_switch as u128 + p.sides.iter().map(|&s| s as u128 - 1).sum::<u128>();
    let hops = p.sides.len() as u32;
    Ok(check_size("sides", switches, p.endpoints_per_switch as u128, radix)?
        .with_route(hops, 2 * p.terminal_latency + hops as u64 * p.link_latency))
}

/// Builds a HyperX. Link classes: 0 `terminal`, 1 `network`.
pub fn build(p: &HyperXParams) -> Result<Network, TopologyError> {
    let n = size(p)?.switches as u32;
    let radix = p.endpoints_per_switch + p.sides.iter().map(|&s| s - 1).sum::<u32>();
    let shape = HyperXShape { sides: p.sides.clone(), endpoints_per_switch: p.endpoints_per_switch };
    let t = p.endpoints_per_switch as usize;
    let mut lists = Vec::with_capacity(n as usize);
    for s in 0..n {
        let mut ports = Vec::with_capacity(radix as usize);
        ports.resize(t, terminal_port());
        for (dim, &side) in p.sides.iter().enumerate() {
            let own = shape.coord(s, dim);
            for to in (0..side).filter(|&c| c != own) {
                ports.push(Port {
                    target: PortTarget::Switch {
                        switch: shape.neighbour(s, dim, to),
                        port: shape.port_to(dim, to, own),
                    },
                    class: 1,
                });
            }
        }
        lists.push(ports);
    }
    let dims: Vec<String> = p.sides.iter().map(|s| s.to_string()).collect();
    let name = format!("hyperx({}, t={})", dims.join("x"), p.endpoints_per_switch);
    Ok(Network::from_port_lists(
        name,
        lists,
        link_classes(&[("terminal", p.terminal_latency), ("network", p.link_latency)]),
        Shape::HyperX(shape),
    ))
}

/// `hyperx` in the topology registry.
pub const HYPERX: TopologyEntry = TopologyEntry {
    name: "hyperx",
    doc: "HyperX (Ahn et al., SC'09): switches on a grid, each dimension a complete graph",
    settings: &[
        Setting {
            key: "sides",
            default: "required",
            doc: "switches per dimension `[S1, S2, ...]`, each >= 2",
        },
        ENDPOINTS_PER_SWITCH,
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[],
    parse: parse_as::<HyperXParams>,
};

crate::family::family_from_fns!(HyperXParams);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{summarize, DistanceTable};
    use crate::testutil::check_network;

    fn params(sides: &[u32], t: u32) -> HyperXParams {
        HyperXParams { sides: sides.to_vec(), endpoints_per_switch: t, terminal_latency: 1, link_latency: 1 }
    }

    /// Mean switch distance of an `L`-dimensional HyperX of equal sides `s` over ordered
    /// pairs of distinct switches: `L (s-1) s^(L-1) / (s^L - 1)`.
    fn expected_average(l: u32, s: u64) -> f64 {
        (l as u64 * (s - 1) * s.pow(l - 1)) as f64 / (s.pow(l) - 1) as f64
    }

    #[test]
    fn hyperx_2d_16_counts() {
        let net = build(&params(&[16, 16], 16)).unwrap();
        check_network(&net);
        assert_eq!(net.name, "hyperx(16x16, t=16)");
        let sum = summarize(&net);
        assert_eq!(sum.switches, 256);
        assert_eq!(sum.endpoints, 4096);
        assert_eq!((sum.min_radix, sum.max_radix), (46, 46));
        assert_eq!(sum.network_links, 3840);
        assert_eq!(sum.unconnected_ports, 0);
        assert_eq!(sum.diameter, 2);
        assert!(sum.connected);
        // Per source: 2(s-1) switches at 1 hop, (s-1)^2 at 2 hops: 2 s (s-1) hops in all.
        assert!((sum.average_distance - 32.0 / 17.0).abs() < 1e-12);
        assert!((sum.average_distance - expected_average(2, 16)).abs() < 1e-12);
        let ep = (16.0 * 16.0 * 256.0 * 2.0 * 16.0 * 15.0) / (4096.0 * 4095.0);
        assert!((sum.endpoint_average_distance - ep).abs() < 1e-12);
        assert_eq!(net.link_classes[1].name, "network");
    }

    #[test]
    fn hyperx_3d_8_counts() {
        let net = build(&params(&[8, 8, 8], 8)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!(sum.switches, 512);
        assert_eq!(sum.endpoints, 4096);
        assert_eq!((sum.min_radix, sum.max_radix), (29, 29));
        assert_eq!(sum.network_links, 5376);
        assert_eq!(sum.diameter, 3);
        assert!((sum.average_distance - expected_average(3, 8)).abs() < 1e-12);
    }

    #[test]
    fn distance_is_number_of_differing_coordinates() {
        let net = build(&params(&[3, 4, 2], 1)).unwrap();
        check_network(&net);
        let Shape::HyperX(shape) = &net.shape else { panic!("wrong shape") };
        let table = DistanceTable::compute(&net).unwrap();
        for a in 0..24 {
            for b in 0..24 {
                let differ = (0..3).filter(|&d| shape.coord(a, d) != shape.coord(b, d)).count();
                assert_eq!(table.get(a, b) as usize, differ, "{a} -> {b}");
            }
        }
    }

    #[test]
    fn ports_follow_the_documented_layout() {
        let net = build(&params(&[3, 5], 2)).unwrap();
        let Shape::HyperX(shape) = &net.shape else { panic!("wrong shape") };
        for s in 0..15 {
            assert_eq!(net.radix(s), 2 + 2 + 4);
            for dim in 0..2 {
                let own = shape.coord(s, dim);
                for to in (0..shape.sides[dim]).filter(|&c| c != own) {
                    let port = shape.port_to(dim, own, to);
                    assert_eq!(
                        net.ports(s)[port as usize].target,
                        PortTarget::Switch {
                            switch: shape.neighbour(s, dim, to),
                            port: shape.port_to(dim, to, own),
                        }
                    );
                }
            }
        }
        assert_eq!(net.latency(0, 0), 1);
    }

    #[test]
    fn one_dimension_is_a_complete_graph() {
        let net = build(&params(&[5], 1)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!(sum.network_links, 10);
        assert_eq!(sum.diameter, 1);
    }

    #[test]
    fn config_parses_with_defaults() {
        let p: HyperXParams = toml::from_str("sides = [4, 4]\nendpoints_per_switch = 2").unwrap();
        assert_eq!(p, params(&[4, 4], 2));
        let p: HyperXParams =
            toml::from_str("sides = [4]\nendpoints_per_switch = 2\nlink_latency = 7").unwrap();
        assert_eq!(build(&p).unwrap().link_classes[1].latency, 7);
        assert!(toml::from_str::<HyperXParams>("sides = [4]\nendpoints_per_switch = 2\nfoo = 1").is_err());
    }

    #[test]
    fn error_no_dimensions() {
        let e = build(&params(&[], 1)).unwrap_err();
        assert_eq!(e.key, "sides");
        assert!(e.to_string().starts_with("topology.sides:"), "{e}");
    }

    #[test]
    fn error_side_too_small() {
        let e = build(&params(&[4, 1], 1)).unwrap_err();
        assert_eq!(e.key, "sides[1]");
        assert_eq!(e.to_string(), "topology.sides[1]: must be >= 2, got 1");
    }

    #[test]
    fn error_no_endpoints() {
        assert_eq!(build(&params(&[4], 0)).unwrap_err().key, "endpoints_per_switch");
    }

    #[test]
    fn error_zero_latency() {
        let mut p = params(&[4], 1);
        p.link_latency = 0;
        assert_eq!(build(&p).unwrap_err().key, "link_latency");
        let mut p = params(&[4], 1);
        p.terminal_latency = 0;
        assert_eq!(build(&p).unwrap_err().key, "terminal_latency");
    }

    #[test]
    fn error_too_large() {
        let e = build(&params(&[65536, 65536, 2], 1)).unwrap_err();
        assert_eq!(e.key, "sides");
        assert!(e.message.contains("u32"), "{e}");
        let e = build(&params(&[4096, 4096], 1024)).unwrap_err();
        assert!(e.message.contains("endpoints"), "{e}");
        let e = build(&params(&[70000], 1)).unwrap_err();
        assert!(e.message.contains("radix"), "{e}");
    }
}

//! n-dimensional torus or mesh with per-dimension wrap-around (the k-ary n-cube and mesh of
//! Dally and Towles, "Principles and Practices of Interconnection Networks", Morgan
//! Kaufmann, 2004).
//!
//! Switch ids are mixed-radix with dimension 0 varying fastest. Port layout: terminals
//! `0..T`, then two ports per dimension: `T + 2*dim` goes to coordinate `+1` and
//! `T + 2*dim + 1` to coordinate `-1`. On a mesh the ports at the edges stay unconnected.

use super::{
    check_latency, check_size, link_classes, terminal_port, Network, NetworkSize, Port, PortTarget, Shape,
    TopologyError,
};
use crate::family::{parse_as, Family, TopologyEntry, ENDPOINTS_PER_SWITCH, LATENCY, TERMINAL_LATENCY};
use crate::shape::TorusShape;
use base::settings::ConfigError;
use base::settings::Setting;
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

/// Configuration of a torus or mesh (the `[topology]` table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TorusParams {
    /// Switches per dimension (dimension 0 first); at least one dimension, each side >= 2.
    /// The product (the switch count) must fit in `u32`.
    pub sides: Vec<u32>,
    /// Whether each dimension wraps around (`true`: ring, `false`: line). Absent means
    /// every dimension wraps (a torus); if given, its length must equal that of `sides`.
    #[serde(default)]
    pub wrap: Option<Vec<bool>>,
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
pub fn size(p: &TorusParams) -> Result<NetworkSize, TopologyError> {
    if p.sides.is_empty() {
        return Err(TopologyError::new("sides", "needs at least one dimension, got an empty list"));
    }
    for (i, &side) in p.sides.iter().enumerate() {
        if side < 2 {
            return Err(TopologyError::new(format!("sides[{i}]"), format!("must be >= 2, got {side}")));
        }
    }
    if let Some(w) = p.wrap.as_ref().filter(|w| w.len() != p.sides.len()) {
        return Err(TopologyError::new(
            "wrap",
            format!("must have one entry per dimension ({}), got {}", p.sides.len(), w.len()),
        ));
    }
    if p.endpoints_per_switch == 0 {
        return Err(TopologyError::new("endpoints_per_switch", "must be >= 1, got 0"));
    }
    check_latency("terminal_latency", p.terminal_latency)?;
    check_latency("link_latency", p.link_latency)?;
    let switches = p.sides.iter().try_fold(1u128, |acc, &s| acc.checked_mul(s as u128)).unwrap_or(u128::MAX);
    let radix = p.endpoints_per_switch as u128 + 2 * p.sides.len() as u128;
    let wraps = |i: usize| p.wrap.as_ref().is_none_or(|w| w[i]);
    let hops: u32 =
        p.sides.iter().enumerate().map(|(i, &side)| if wraps(i) { side / 2 } else { side - 1 }).sum();
    Ok(check_size("sides", switches, p.endpoints_per_switch as u128, radix)?
        .with_route(hops, 2 * p.terminal_latency + hops as u64 * p.link_latency))
}

/// Builds a torus, mesh or mixed grid. Link classes: 0 `terminal`, 1 `network`.
///
/// On a wrapping dimension of side 2 the `+1` and `-1` ports of a switch both lead to the
/// same neighbour (two parallel links): the `+` port of one end pairs with the `-` port of
/// the other.
pub fn build(p: &TorusParams) -> Result<Network, TopologyError> {
    let switches = size(p)?.switches;
    let wrap = p.wrap.clone().unwrap_or_else(|| vec![true; p.sides.len()]);
    let radix = p.endpoints_per_switch as usize + 2 * p.sides.len();
    let shape = TorusShape { sides: p.sides.clone(), wrap, endpoints_per_switch: p.endpoints_per_switch };
    let n = switches as u32;
    let mut lists = Vec::with_capacity(n as usize);
    let mut stride = Vec::with_capacity(p.sides.len());
    let mut acc = 1u32;
    for &side in &p.sides {
        stride.push(acc);
        acc = acc.wrapping_mul(side);
    }
    for s in 0..n {
        let mut ports = Vec::with_capacity(radix);
        ports.resize(p.endpoints_per_switch as usize, terminal_port());
        for (dim, &side) in p.sides.iter().enumerate() {
            let c = shape.coord(s, dim);
            let base = s - c * stride[dim];
            for positive in [true, false] {
                let next = if positive {
                    (c + 1 < side).then_some(c + 1).or(shape.wrap[dim].then_some(0))
                } else {
                    c.checked_sub(1).or(shape.wrap[dim].then_some(side - 1))
                };
                let target = match next {
                    Some(nc) => PortTarget::Switch {
                        switch: base + nc * stride[dim],
                        port: shape.port(dim, !positive),
                    },
                    None => PortTarget::Unconnected,
                };
                ports.push(Port { target, class: 1 });
            }
        }
        lists.push(ports);
    }
    let dims: Vec<String> = p.sides.iter().map(|s| s.to_string()).collect();
    let kind = if shape.wrap.iter().all(|&w| w) {
        "torus".to_string()
    } else if shape.wrap.iter().all(|&w| !w) {
        "mesh".to_string()
    } else {
        let w: Vec<&str> = shape.wrap.iter().map(|&w| if w { "t" } else { "m" }).collect();
        format!("grid[{}]", w.join(""))
    };
    let name = format!("{kind}({}, t={})", dims.join("x"), p.endpoints_per_switch);
    Ok(Network::from_port_lists(
        name,
        lists,
        link_classes(&[("terminal", p.terminal_latency), ("network", p.link_latency)]),
        Shape::Torus(shape),
    ))
}

const SIDES: Setting =
    Setting { key: "sides", default: "required", doc: "switches per dimension `[S1, S2, ...]`, each >= 2" };

/// `torus` in the topology registry.
pub const TORUS: TopologyEntry = TopologyEntry {
    name: "torus",
    doc: "torus: a grid whose dimensions wrap around (rings), or not where `wrap` says so",
    settings: &[
        SIDES,
        Setting {
            key: "wrap",
            default: "all true",
            doc: "whether each dimension wraps, `[true, false, ...]`, one per side",
        },
        ENDPOINTS_PER_SWITCH,
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[],
    parse: parse_as::<TorusParams>,
};

/// `mesh` in the topology registry: a torus without wrap-around links.
pub const MESH: TopologyEntry = TopologyEntry {
    name: "mesh",
    doc: "mesh: a torus without wrap-around links",
    settings: &[SIDES, ENDPOINTS_PER_SWITCH, TERMINAL_LATENCY, LATENCY],
    files: &[],
    parse: parse_mesh,
};

fn parse_mesh(table: &Table) -> Result<Box<dyn Family>, ConfigError> {
    if table.contains_key("wrap") {
        return Err(ConfigError::new(
            "topology.wrap",
            "not allowed for a mesh (use kind = \"torus\" with wrap)",
        ));
    }
    let mut t = table.clone();
    let sides = t.get("sides").and_then(Value::as_array).map_or(0, Vec::len);
    t.insert("wrap".into(), Value::Array(vec![Value::Boolean(false); sides]));
    parse_as::<TorusParams>(&t)
}

crate::family::family_from_fns!(TorusParams);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{summarize, DistanceTable};
    use crate::testutil::check_network;

    fn params(sides: &[u32], wrap: Option<Vec<bool>>, t: u32) -> TorusParams {
        TorusParams {
            sides: sides.to_vec(),
            wrap,
            endpoints_per_switch: t,
            terminal_latency: 1,
            link_latency: 1,
        }
    }

    #[test]
    fn torus_4d_counts() {
        let net = build(&params(&[4, 4, 4, 4], None, 2)).unwrap();
        check_network(&net);
        assert_eq!(net.name, "torus(4x4x4x4, t=2)");
        let sum = summarize(&net);
        assert_eq!(sum.switches, 256);
        assert_eq!(sum.endpoints, 512);
        assert_eq!((sum.min_radix, sum.max_radix), (10, 10));
        assert_eq!(sum.network_links, 1024);
        assert_eq!(sum.unconnected_ports, 0);
        assert_eq!(sum.diameter, 8);
        // Ring of 4: distances 1, 2, 1 from each node; 4 independent dimensions.
        let total = 4.0 * 256.0 * 4.0 / 4.0; // per source: sum over dims of 256/4 * 4
        assert!((sum.average_distance - total / 255.0).abs() < 1e-12);
    }

    #[test]
    fn mesh_8x8_counts() {
        let net = build(&params(&[8, 8], Some(vec![false, false]), 1)).unwrap();
        check_network(&net);
        assert_eq!(net.name, "mesh(8x8, t=1)");
        let sum = summarize(&net);
        assert_eq!(sum.switches, 64);
        assert_eq!(sum.network_links, 2 * 8 * 7);
        assert_eq!(sum.unconnected_ports, 4 * 8);
        assert_eq!(sum.diameter, 14);
        assert!(sum.connected);
        let table = DistanceTable::compute(&net).unwrap();
        let Shape::Torus(shape) = &net.shape else { panic!("wrong shape") };
        for a in 0..64 {
            for b in 0..64 {
                let manhattan: u32 = (0..2).map(|d| shape.coord(a, d).abs_diff(shape.coord(b, d))).sum();
                assert_eq!(table.get(a, b) as u32, manhattan);
            }
        }
    }

    #[test]
    fn ports_follow_the_documented_layout() {
        let net = build(&params(&[5, 3], Some(vec![true, false]), 1)).unwrap();
        check_network(&net);
        assert_eq!(net.name, "grid[tm](5x3, t=1)");
        let Shape::Torus(shape) = &net.shape else { panic!("wrong shape") };
        for s in 0..15u32 {
            for port in 1..5 {
                let (dim, positive) = shape.port_direction(port).unwrap();
                assert_eq!(shape.port(dim, positive), port);
                let c = shape.coord(s, dim) as i64;
                let side = shape.sides[dim] as i64;
                let next = c + if positive { 1 } else { -1 };
                let target = net.ports(s)[port as usize].target;
                if dim == 1 && !(0..side).contains(&next) {
                    assert_eq!(target, PortTarget::Unconnected);
                    continue;
                }
                let next = next.rem_euclid(side) as u32;
                let PortTarget::Switch { switch, port: back } = target else {
                    panic!("switch {s} port {port} unconnected")
                };
                assert_eq!(shape.coord(switch, dim), next);
                assert_eq!(shape.coord(switch, 1 - dim), shape.coord(s, 1 - dim));
                assert_eq!(back, shape.port(dim, !positive));
            }
        }
        assert_eq!(shape.port_direction(0), None);
    }

    #[test]
    fn side_two_with_wrap_has_parallel_links() {
        let net = build(&params(&[2, 2], None, 1)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!(sum.network_links, 8);
        assert_eq!(sum.diameter, 2);
        // + port of switch 0 in dimension 0 pairs with the - port of switch 1.
        assert_eq!(net.ports(0)[1].target, PortTarget::Switch { switch: 1, port: 2 });
        assert_eq!(net.ports(0)[2].target, PortTarget::Switch { switch: 1, port: 1 });
        let mesh = build(&params(&[2], Some(vec![false]), 1)).unwrap();
        check_network(&mesh);
        assert_eq!(summarize(&mesh).network_links, 1);
    }

    #[test]
    fn ring_average_distance() {
        let net = build(&params(&[5], None, 3)).unwrap();
        let sum = summarize(&net);
        assert!((sum.average_distance - 1.5).abs() < 1e-12);
        // Endpoint pairs: 9 * 5 * 6 hops over 15 * 14 ordered pairs.
        assert!((sum.endpoint_average_distance - 270.0 / 210.0).abs() < 1e-12);
    }

    #[test]
    fn config_parses_with_defaults() {
        let p: TorusParams = toml::from_str("sides = [4, 4]\nendpoints_per_switch = 1").unwrap();
        assert_eq!(p, params(&[4, 4], None, 1));
        let p: TorusParams =
            toml::from_str("sides = [4, 4]\nwrap = [false, true]\nendpoints_per_switch = 1").unwrap();
        assert_eq!(p.wrap, Some(vec![false, true]));
        assert!(toml::from_str::<TorusParams>("sides = [4]\nendpoints_per_switch = 1\nx = 1").is_err());
    }

    #[test]
    fn error_wrap_length() {
        let e = build(&params(&[4, 4], Some(vec![true]), 1)).unwrap_err();
        assert_eq!(e.key, "wrap");
    }

    #[test]
    fn error_side_too_small() {
        assert_eq!(build(&params(&[1], None, 1)).unwrap_err().key, "sides[0]");
        assert_eq!(build(&params(&[], None, 1)).unwrap_err().key, "sides");
    }

    #[test]
    fn error_no_endpoints_or_latency() {
        assert_eq!(build(&params(&[4], None, 0)).unwrap_err().key, "endpoints_per_switch");
        let mut p = params(&[4], None, 1);
        p.link_latency = 0;
        assert_eq!(build(&p).unwrap_err().key, "link_latency");
    }

    #[test]
    fn error_too_large() {
        let e = build(&params(&[1 << 16, 1 << 16], None, 1)).unwrap_err();
        assert_eq!(e.key, "sides");
        assert!(e.message.contains("u32"), "{e}");
    }
}

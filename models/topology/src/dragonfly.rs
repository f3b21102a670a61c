//! Dragonfly (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable Dragonfly
//! Topology", ISCA'08): `p` endpoints, `a` routers and `h` global ports per router; groups
//! are complete graphs of `a` routers; `g <= a*h + 1` groups with (at most) one global link
//! per group pair.
//!
//! Switch `s` is router `s % a` of group `s / a`. Port layout: terminals `0..p`, local
//! ports `p..p+a-1` (to the other routers of the group in increasing order), global ports
//! `p+a-1..p+a-1+h`. Global link `j` of a group (`0 <= j < a*h`) is port `j % h` of router
//! `j / h`. Arrangements say which group link `j` of group `G` reaches:
//! absolute `j < G ? j : j + 1`; relative `(G + j + 1) mod g`; palmtree `(G - j - 1) mod g`
//! (palmtree as described by Camarero, Vallejo, Beivide, "Topological Characterization of
//! Hamming and Dragonfly Networks and Its Implications on Routing", ACM TACO 11(4), 2014).
//! Links `j >= g - 1` are left unconnected.

use super::{
    check_latency, check_size, link_classes, terminal_port, Network, NetworkSize, Port, PortTarget, Shape,
    TopologyError,
};
use crate::family::{parse_as, TopologyEntry, TERMINAL_LATENCY};
use crate::shape::{Arrangement, DragonflyShape};
use base::settings::Setting;
use serde::{Deserialize, Serialize};

/// Configuration of a Dragonfly (the `[topology]` table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DragonflyParams {
    /// Endpoints per router, >= 1.
    pub p: u32,
    /// Routers per group, >= 1 (`a = 1` means no local links).
    pub a: u32,
    /// Global ports per router, >= 1.
    pub h: u32,
    /// Number of groups, `2..=a*h + 1`; absent means `a*h + 1` (one global link per group
    /// pair, every global port used). With fewer groups some global ports stay unconnected.
    #[serde(default)]
    pub groups: Option<u32>,
    /// Global wiring: `absolute` (default), `relative` or `palmtree`.
    #[serde(default)]
    pub arrangement: Arrangement,
    /// Latency of endpoint-to-router links in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub terminal_latency: u64,
    /// Latency of links between routers of a group in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub local_latency: u64,
    /// Latency of links between groups in cycles, >= 1 (default 1).
    #[serde(default = "super::one")]
    pub global_latency: u64,
}

/// Checks the parameters and returns the network's counts without building it.
pub fn size(prm: &DragonflyParams) -> Result<NetworkSize, TopologyError> {
    for (key, v) in [("p", prm.p), ("a", prm.a), ("h", prm.h)] {
        if v == 0 {
            return Err(TopologyError::new(key, "must be >= 1, got 0"));
        }
    }
    let max_groups = prm.a as u64 * prm.h as u64 + 1;
    let groups = match prm.groups {
        None => max_groups,
        Some(g) if (2..=max_groups).contains(&(g as u64)) => g as u64,
        Some(g) => {
            return Err(TopologyError::new(
                "groups",
                format!("must be in 2..={max_groups} (2..=a*h+1), got {g}"),
            ))
        }
    };
    check_latency("terminal_latency", prm.terminal_latency)?;
    check_latency("local_latency", prm.local_latency)?;
    check_latency("global_latency", prm.global_latency)?;
    let switches = groups as u128 * prm.a as u128;
    let radix = prm.p as u128 + prm.a as u128 - 1 + prm.h as u128;
    let key = if prm.groups.is_some() { "groups" } else { "a" };
    let size = check_size(key, switches, prm.p as u128, radix)?;
    if groups > u32::MAX as u64 {
        return Err(TopologyError::new(key, format!("{groups} groups do not fit in u32")));
    }
    // Minimal routes: local, global, local.
    let locals = if prm.a > 1 { 2 } else { 0 };
    Ok(size.with_route(
        locals + 1,
        2 * prm.terminal_latency + locals as u64 * prm.local_latency + prm.global_latency,
    ))
}

/// Builds a Dragonfly. Link classes: 0 `terminal`, 1 `local`, 2 `global`.
pub fn build(prm: &DragonflyParams) -> Result<Network, TopologyError> {
    let switches = size(prm)?.switches;
    let groups = prm.groups.map_or(prm.a as u64 * prm.h as u64 + 1, u64::from);
    let shape =
        DragonflyShape { p: prm.p, a: prm.a, h: prm.h, groups: groups as u32, arrangement: prm.arrangement };
    let (a, h) = (prm.a, prm.h);
    let mut lists = Vec::with_capacity(switches as usize);
    for s in 0..switches as u32 {
        let (g, r) = (shape.group(s), shape.router_in_group(s));
        let mut ports = Vec::with_capacity((prm.p + a - 1 + h) as usize);
        ports.resize(prm.p as usize, terminal_port());
        for other in (0..a).filter(|&o| o != r) {
            ports.push(Port {
                target: PortTarget::Switch { switch: g * a + other, port: shape.local_port(other, r) },
                class: 1,
            });
        }
        for k in 0..h {
            let j = r * h + k;
            let target = match shape.global_target(g, j) {
                Some(t) => {
                    let (switch, port) = shape.gateway(t, g);
                    PortTarget::Switch { switch, port }
                }
                None => PortTarget::Unconnected,
            };
            ports.push(Port { target, class: 2 });
        }
        lists.push(ports);
    }
    let arr = match prm.arrangement {
        Arrangement::Absolute => "absolute",
        Arrangement::Relative => "relative",
        Arrangement::Palmtree => "palmtree",
    };
    let name = format!("dragonfly(p={}, a={}, h={}, g={}, {arr})", prm.p, prm.a, prm.h, groups);
    Ok(Network::from_port_lists(
        name,
        lists,
        link_classes(&[
            ("terminal", prm.terminal_latency),
            ("local", prm.local_latency),
            ("global", prm.global_latency),
        ]),
        Shape::Dragonfly(shape),
    ))
}

/// `dragonfly` in the topology registry.
pub const DRAGONFLY: TopologyEntry = TopologyEntry {
    name: "dragonfly",
    doc: "Dragonfly (Kim, Dally, Scott, Abts, ISCA'08): groups of a routers fully connected, p endpoints and h global links per router",
    settings: &[
        Setting { key: "p", default: "required", doc: "endpoints per router, >= 1" },
        Setting { key: "a", default: "required", doc: "routers per group, >= 1" },
        Setting { key: "h", default: "required", doc: "global ports per router, >= 1" },
        Setting { key: "groups", default: "a·h+1", doc: "number of groups, 2..=a·h+1 (fewer leave global ports unconnected)" },
        Setting { key: "arrangement", default: "`absolute`", doc: "global wiring: `absolute`, `relative` or `palmtree`" },
        TERMINAL_LATENCY,
        Setting { key: "local_latency", default: "1", doc: "cycles of a link within a group, >= 1" },
        Setting { key: "global_latency", default: "1", doc: "cycles of a link between groups, >= 1" },
    ],
    files: &[],
    parse: parse_as::<DragonflyParams>,
};

crate::family::family_from_fns!(DragonflyParams);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::summarize;
    use crate::testutil::check_network;
    use crate::PortId;

    fn params(p: u32, a: u32, h: u32, groups: Option<u32>, arr: Arrangement) -> DragonflyParams {
        DragonflyParams {
            p,
            a,
            h,
            groups,
            arrangement: arr,
            terminal_latency: 1,
            local_latency: 2,
            global_latency: 10,
        }
    }

    const ALL: [Arrangement; 3] = [Arrangement::Absolute, Arrangement::Relative, Arrangement::Palmtree];

    /// Global links per unordered group pair.
    fn group_pair_links(net: &Network, shape: &DragonflyShape) -> Vec<Vec<u32>> {
        let g = shape.groups as usize;
        let mut count = vec![vec![0u32; g]; g];
        for s in 0..net.num_switches() as u32 {
            for (i, port) in net.ports(s).iter().enumerate() {
                let global = shape.is_global_port(i as PortId);
                assert_eq!(global, port.class == 2, "switch {s} port {i}");
                if let PortTarget::Switch { switch, .. } = port.target {
                    let (a, b) = (shape.group(s), shape.group(switch));
                    assert_eq!(global, a != b);
                    if global {
                        count[a as usize][b as usize] += 1;
                    }
                }
            }
        }
        count
    }

    #[test]
    fn dragonfly_6_12_6_counts() {
        for arr in ALL {
            let net = build(&params(6, 12, 6, None, arr)).unwrap();
            check_network(&net);
            let Shape::Dragonfly(shape) = &net.shape else { panic!("wrong shape") };
            assert_eq!(shape.groups, 73);
            let sum = summarize(&net);
            assert_eq!(sum.switches, 876);
            assert_eq!(sum.endpoints, 5256);
            assert_eq!((sum.min_radix, sum.max_radix), (23, 23));
            assert_eq!(sum.unconnected_ports, 0);
            assert_eq!(sum.diameter, 3);
            assert!(sum.connected);
            let links = group_pair_links(&net, shape);
            let global: u32 = links.iter().flatten().sum::<u32>() / 2;
            assert_eq!(global, 2628);
            assert_eq!(sum.network_links, 2628 + 876 * 11 / 2);
            for (a, row) in links.iter().enumerate() {
                for (b, &c) in row.iter().enumerate() {
                    assert_eq!(c, u32::from(a != b), "groups {a} and {b} ({arr:?})");
                }
            }
            let names: Vec<&str> = net.link_classes.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, ["terminal", "local", "global"]);
            assert_eq!(net.latency(0, 6), 2);
            assert_eq!(net.latency(0, 6 + 11), 10);
        }
    }

    #[test]
    fn fewer_groups_leave_ports_unconnected() {
        for arr in ALL {
            let net = build(&params(2, 4, 2, Some(5), arr)).unwrap();
            check_network(&net);
            let Shape::Dragonfly(shape) = &net.shape else { panic!("wrong shape") };
            let sum = summarize(&net);
            assert_eq!(sum.switches, 20);
            assert_eq!(sum.unconnected_ports, 5 * (8 - 4));
            assert_eq!(sum.diameter, 3);
            assert!(sum.connected);
            for (a, row) in group_pair_links(&net, shape).iter().enumerate() {
                for (b, &c) in row.iter().enumerate() {
                    assert_eq!(c, u32::from(a != b), "groups {a} and {b} ({arr:?})");
                }
            }
            for s in 0..20 {
                for (i, port) in net.ports(s).iter().enumerate() {
                    if port.target == PortTarget::Unconnected {
                        assert_eq!(port.class, 2);
                        assert!(shape.is_global_port(i as PortId));
                    }
                }
            }
        }
    }

    #[test]
    fn two_groups() {
        let net = build(&params(1, 2, 1, Some(2), Arrangement::Palmtree)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!(sum.switches, 4);
        assert_eq!(sum.network_links, 2 + 1);
        assert_eq!(sum.unconnected_ports, 2);
    }

    #[test]
    fn gateway_matches_wiring() {
        let net = build(&params(2, 3, 2, None, Arrangement::Relative)).unwrap();
        let Shape::Dragonfly(shape) = &net.shape else { panic!("wrong shape") };
        for from in 0..shape.groups {
            for to in (0..shape.groups).filter(|&t| t != from) {
                let (s, port) = shape.gateway(from, to);
                let PortTarget::Switch { switch, .. } = net.ports(s)[port as usize].target else {
                    panic!("gateway port unconnected")
                };
                assert_eq!(shape.group(switch), to);
            }
        }
        for s in 0..net.num_switches() as u32 {
            let r = shape.router_in_group(s);
            for other in (0..3).filter(|&o| o != r) {
                let PortTarget::Switch { switch, .. } =
                    net.ports(s)[shape.local_port(r, other) as usize].target
                else {
                    panic!()
                };
                assert_eq!(switch, shape.group(s) * 3 + other);
            }
        }
    }

    #[test]
    fn one_router_per_group() {
        let net = build(&params(2, 1, 3, None, Arrangement::Absolute)).unwrap();
        check_network(&net);
        let sum = summarize(&net);
        assert_eq!(sum.switches, 4);
        assert_eq!((sum.min_radix, sum.max_radix), (5, 5));
        assert_eq!(sum.network_links, 6);
        assert_eq!(sum.diameter, 1);
    }

    #[test]
    fn config_parses_with_defaults() {
        let p: DragonflyParams = toml::from_str("p = 2\na = 4\nh = 2").unwrap();
        assert_eq!(p.groups, None);
        assert_eq!(p.arrangement, Arrangement::Absolute);
        assert_eq!((p.terminal_latency, p.local_latency, p.global_latency), (1, 1, 1));
        let p: DragonflyParams =
            toml::from_str("p = 2\na = 4\nh = 2\ngroups = 3\narrangement = \"palmtree\"").unwrap();
        assert_eq!(p.arrangement, Arrangement::Palmtree);
        assert_eq!(build(&p).unwrap().num_switches(), 12);
        assert!(toml::from_str::<DragonflyParams>("p = 2\na = 4\nh = 2\nq = 1").is_err());
    }

    #[test]
    fn error_zero_sizes() {
        for (p, a, h, key) in [(0, 4, 2, "p"), (2, 0, 2, "a"), (2, 4, 0, "h")] {
            let e = build(&params(p, a, h, None, Arrangement::Absolute)).unwrap_err();
            assert_eq!(e.key, key);
        }
    }

    #[test]
    fn error_groups_out_of_range() {
        for g in [0, 1, 10] {
            let e = build(&params(2, 4, 2, Some(g), Arrangement::Absolute)).unwrap_err();
            assert_eq!(e.key, "groups");
            assert!(e.message.contains("2..=9"), "{e}");
        }
    }

    #[test]
    fn error_zero_latency() {
        let mut p = params(2, 4, 2, None, Arrangement::Absolute);
        p.global_latency = 0;
        assert_eq!(build(&p).unwrap_err().key, "global_latency");
        p.global_latency = 1;
        p.local_latency = 0;
        assert_eq!(build(&p).unwrap_err().key, "local_latency");
    }

    #[test]
    fn error_too_large() {
        let e = build(&params(1, 70_000, 70_000, None, Arrangement::Absolute)).unwrap_err();
        assert_eq!(e.key, "a");
        assert!(e.message.contains("u32"), "{e}");
        let e = build(&params(1, 2, 65_535, Some(3), Arrangement::Absolute)).unwrap_err();
        assert_eq!(e.key, "groups");
        assert!(e.message.contains("radix"), "{e}");
    }
}

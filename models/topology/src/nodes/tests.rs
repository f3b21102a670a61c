use super::*;
use crate::clos::{build as clos, ClosParams};
use crate::fattree::{build as fat_tree, FatTreeParams};
use crate::network::testutil::check_network;

fn tree(k: u32, n: u32) -> Network {
    fat_tree(&FatTreeParams { k, n, terminal_latency: 3, link_latency: 5 }).unwrap()
}

fn params(gpus: u32, planes: u32, scale_up: ScaleUp, placement: Placement) -> NodesParams {
    NodesParams {
        gpus,
        planes,
        dual_tor: false,
        scale_up,
        placement,
        rails: None,
        pxn: false,
        nvlink_latency: 1,
        gpu_latency: 1,
        scale_up_packet: None,
    }
}

#[test]
fn counts_follow_the_definition() {
    // A 16-ary 2-tree: 256 endpoints, 16 leaves + 16 spines of radix 32.
    for (planes, scale_up) in
        [(1, ScaleUp::Switch), (2, ScaleUp::Switch), (1, ScaleUp::Full), (2, ScaleUp::None)]
    {
        let p = params(8, planes, scale_up, Placement::Rail);
        let net = build(tree(16, 2), &p).unwrap();
        check_network(&net);
        let nodes = 256 / 8;
        let nvswitches = if scale_up == ScaleUp::Switch { nodes } else { 0 };
        assert_eq!(net.num_endpoints(), 256);
        assert_eq!(net.num_switches(), 256 + nvswitches + planes as usize * 32);
        let scale_up_links = match scale_up {
            ScaleUp::Switch => 256,
            ScaleUp::Full => nodes * 8 * 7 / 2,
            ScaleUp::None => 0,
        };
        // Directed switch-to-switch links: NIC links both ways, the fabric's own, the
        // scale-up links both ways.
        let fabric_links = 16 * 16 * 2;
        assert_eq!(
            net.num_network_links(),
            planes as usize * (2 * 256 + fabric_links) + 2 * scale_up_links,
            "{planes} planes, {scale_up:?}"
        );
        // The fabric's ports exactly (16 leaves of 32, 16 spines of 16): the count of the
        // network of nodes is then exact too.
        let fabric = NetworkSize {
            switches: 32,
            endpoints: 256,
            ports: 16 * 32 + 16 * 16,
            hops: 2,
            route_latency: 11,
        };
        let sized = size(&p, fabric).unwrap();
        assert_eq!(sized.switches, net.num_switches() as u64);
        assert_eq!(sized.ports, net.ports.len() as u64);
        assert_eq!((sized.hops, sized.route_latency), (4, 13));
        let names: Vec<&str> = net.link_classes.iter().map(|c| c.name.as_str()).collect();
        let expected: &[&str] = if scale_up == ScaleUp::None {
            &["terminal", "nic", "network"]
        } else {
            &["terminal", "nic", "network", "nvlink"]
        };
        assert_eq!(names, expected);
    }
}

#[test]
fn rail_placement_puts_gpu_g_of_each_node_on_rail_leaf_g() {
    let net = build(tree(16, 2), &params(8, 1, ScaleUp::Switch, Placement::Rail)).unwrap();
    let layout = net.nodes.as_ref().unwrap();
    for gpu in 0..256 {
        let (leaf, port) = layout.attachment(gpu);
        let (n, g) = (gpu / 8, gpu % 8);
        // Nodes 0..16 on leaves 0..8, nodes 16..32 on leaves 8..16; GPU g on leaf g.
        assert_eq!((leaf, port as u32), ((n / 16) * 8 + g, n % 16), "GPU {gpu}");
        assert_eq!(layout.gpu_of_fabric_endpoint(layout.fabric_endpoint(gpu)), gpu);
        // The GPU's NIC port leads there, and back.
        let nic = net.ports(gpu)[1].target;
        assert_eq!(nic, PortTarget::Switch { switch: layout.fabric_switch(0, leaf), port });
    }
    let node = build(tree(16, 2), &params(8, 1, ScaleUp::Switch, Placement::Node)).unwrap();
    let layout = node.nodes.as_ref().unwrap();
    assert_eq!(layout.attachment(8 * 3 + 5), (1, 8 + 5));
}

#[test]
fn fewer_rails_than_gpus_put_gpu_g_on_rail_g_mod_rails() {
    // 16 nodes of 16 GPUs on 4 rails, 16-ary 2-tree (16 leaves of 16 NIC ports): 4 GPUs
    // of a node on each rail's leaf, 4 nodes a group of 4 leaves.
    let p = NodesParams { rails: Some(4), ..params(16, 1, ScaleUp::Switch, Placement::Rail) };
    let net = build(tree(16, 2), &p).unwrap();
    let layout = net.nodes.as_ref().unwrap();
    let mut seen = vec![false; 256];
    for gpu in 0..256 {
        let (leaf, port) = layout.attachment(gpu);
        let (n, g) = (gpu / 16, gpu % 16);
        assert_eq!(leaf, (n / 4) * 4 + g % 4, "GPU {gpu}: its group's leaf of rail g mod 4");
        assert_eq!(port as u32, (n % 4) * 4 + g / 4, "GPU {gpu}");
        assert_eq!(layout.gpu_of_fabric_endpoint(layout.fabric_endpoint(gpu)), gpu);
        assert!(!std::mem::replace(&mut seen[layout.fabric_endpoint(gpu) as usize], true));
    }
    assert!(net.name.contains("on 4 rails"), "{}", net.name);
    // Rails must divide the GPUs, and a rail's GPUs of a node the ports of a leaf.
    let odd = NodesParams { rails: Some(3), ..p.clone() };
    let e = build(tree(16, 2), &odd).unwrap_err().to_string();
    assert!(e.contains("topology.nodes.rails") && e.contains("divide the node's 16 GPUs"), "{e}");
    let e = build(tree(16, 2), &NodesParams { placement: Placement::Node, ..p.clone() }).unwrap_err();
    assert!(e.to_string().contains("topology.nodes.rails"), "{e}");
    let e = build(tree(4, 2), &NodesParams { rails: Some(2), ..p }).unwrap_err().to_string();
    assert!(e.contains("topology.nodes.rails") && e.contains("8 GPUs on each of its 2 rails"), "{e}");
}

#[test]
fn scale_up_links_join_a_node_and_nothing_else() {
    for scale_up in [ScaleUp::Switch, ScaleUp::Full] {
        let net = build(tree(4, 2), &params(4, 1, scale_up, Placement::Rail)).unwrap();
        let layout = net.nodes.clone().unwrap();
        let nvlink = net.link_classes.iter().position(|c| c.name == "nvlink").unwrap() as u8;
        for gpu in 0..16 {
            let peers: Vec<u32> = net
                .ports(gpu)
                .iter()
                .filter(|p| p.class == nvlink)
                .map(|p| match p.target {
                    PortTarget::Switch { switch, .. } => switch,
                    _ => unreachable!(),
                })
                .collect();
            match scale_up {
                ScaleUp::Switch => assert_eq!(peers, vec![16 + gpu / 4]),
                _ => {
                    let node: Vec<u32> = (gpu / 4 * 4..gpu / 4 * 4 + 4).filter(|&q| q != gpu).collect();
                    assert_eq!(peers, node);
                    for &q in &node {
                        let port = layout.scale_up_port(gpu, q);
                        assert_eq!(
                            net.ports(gpu)[port as usize].target,
                            PortTarget::Switch { switch: q, port: layout.scale_up_port(q, gpu) }
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn bad_nodes_name_the_key() {
    let e = build(tree(4, 2), &params(3, 1, ScaleUp::Switch, Placement::Node)).unwrap_err();
    assert!(e.to_string().contains("topology.nodes.gpus") && e.to_string().contains("16 endpoints"), "{e}");
    // 4 leaves cannot hold 8 rails.
    let e = build(tree(4, 2), &params(8, 1, ScaleUp::Switch, Placement::Rail)).unwrap_err();
    assert!(e.to_string().contains("topology.nodes.placement"), "{e}");
    let e = build(tree(4, 2), &params(4, 0, ScaleUp::Switch, Placement::Rail)).unwrap_err();
    assert!(e.to_string().contains("topology.nodes.planes"), "{e}");
}

/// A two-tier Clos of `leaves` leaves of `t` endpoints under `spines` spines.
fn leaf_spine(leaves: u32, t: u32, spines: u32) -> Network {
    clos(&ClosParams {
        leaves,
        endpoints_per_leaf: t,
        spines,
        pods: 1,
        spine_uplinks: None,
        terminal_latency: 3,
        link_latency: 5,
    })
    .unwrap()
}

#[test]
fn dual_tor_puts_a_nics_two_ports_on_the_two_leaves_of_a_pair() {
    // 16 leaves of 16 ports under 8 spines: 8 pairs, 128 NICs of two ports. Rail
    // placement on 8 rails: GPU g of node n on pair g, port p on leaf 2g + p, slot n.
    let p = NodesParams { dual_tor: true, ..params(8, 1, ScaleUp::Switch, Placement::Rail) };
    let net = build(leaf_spine(16, 16, 8), &p).unwrap();
    check_network(&net);
    let layout = net.nodes.clone().unwrap();
    assert!(net.name.contains("dual-tor"), "{}", net.name);
    assert_eq!(net.num_endpoints(), 128);
    assert_eq!(net.num_switches(), 128 + 16 + 24);
    // Directed links: two NIC links per GPU both ways, the leaf-spine links, NVLink.
    assert_eq!(net.num_network_links(), 128 * 2 * 2 + 16 * 8 * 2 + 128 * 2);
    let fabric =
        NetworkSize { switches: 24, endpoints: 256, ports: 16 * 24 + 8 * 16, hops: 2, route_latency: 11 };
    let sized = size(&p, fabric).unwrap();
    assert_eq!((sized.switches, sized.ports, sized.endpoints), (168, net.ports.len() as u64, 128));
    let mut seen = vec![false; 256];
    for gpu in 0..128 {
        let (n, g) = (gpu / 8, gpu % 8);
        for side in 0..2 {
            let (leaf, port) = layout.attachment_on(gpu, side);
            assert_eq!((leaf, port as u32), (2 * g + side, n), "GPU {gpu} port {side}");
            let e = layout.fabric_endpoint_on(gpu, side);
            assert!(!std::mem::replace(&mut seen[e as usize], true), "endpoint {e} taken twice");
            assert_eq!(layout.gpu_of_fabric_endpoint(e), gpu);
            assert_eq!(layout.nic_port_of_fabric_endpoint(e), side);
            // The GPU's NIC port leads there, and the leaf's port back to it.
            let nic = NodeLayout::nic_port(side);
            let at = layout.fabric_switch(0, leaf);
            assert_eq!(net.ports(gpu)[nic as usize].target, PortTarget::Switch { switch: at, port });
            assert_eq!(net.ports(at)[port as usize].target, PortTarget::Switch { switch: gpu, port: nic });
        }
    }
    // The NVSwitch port follows the two NIC ports.
    assert_eq!(layout.scale_up_port(0, 1), 3);
    // Node placement: node n's GPUs on pair n / 2, slots (n mod 2) * 8 ..
    let node = build(leaf_spine(16, 16, 8), &NodesParams { placement: Placement::Node, ..p }).unwrap();
    let layout = node.nodes.as_ref().unwrap();
    assert_eq!(layout.attachment_on(8 * 3 + 5, 1), (3, 8 + 5));
}

#[test]
fn dual_tor_needs_leaf_pairs_of_a_clos_and_one_plane() {
    let p = NodesParams { dual_tor: true, ..params(4, 1, ScaleUp::Switch, Placement::Node) };
    let e = build(tree(4, 2), &p).unwrap_err().to_string();
    assert!(e.contains("topology.nodes.dual_tor") && e.contains("clos"), "{e}");
    let e = build(leaf_spine(3, 8, 2), &p).unwrap_err().to_string();
    assert!(e.contains("topology.nodes.dual_tor") && e.contains("even"), "{e}");
    let e = build(leaf_spine(4, 4, 2), &NodesParams { planes: 2, ..p.clone() }).unwrap_err().to_string();
    assert!(e.contains("topology.nodes.dual_tor") && e.contains("planes = 1"), "{e}");
    // 6 leaves are 3 pairs: not whole groups of 2 rails.
    let rail = NodesParams { placement: Placement::Rail, rails: Some(2), ..p };
    let e = build(leaf_spine(6, 4, 2), &rail).unwrap_err().to_string();
    assert!(e.contains("topology.nodes.placement") && e.contains("multiple of 4"), "{e}");
}

//! Link faults: remove random switch-to-switch links, keeping the network connected.
//!
//! Faults are drawn from a seed, so a faulty network is reproducible. A link whose removal
//! would disconnect the switches is skipped and the next candidate taken, as fault studies
//! assume a connected network: the 1/3/5 % random link faults of Flich et al., "A Survey
//! and Evaluation of Topology-Agnostic Deterministic Routing Algorithms", IEEE TPDS 23(3),
//! 2012, section 6.5, and the random fault sequences of Camarero et al., "Achieving
//! High-Performance Fault-Tolerant Routing in HyperX Interconnection Networks",
//! arXiv:2404.04315, 2024, section 6. Both ends of a failed link become `Unconnected`
//! ports. The same paper's named fault shapes on HyperX (Row, Subplane, Cross, Subcube,
//! Star) are [`FAULT_SHAPES`].

use super::{metrics::bfs, Network, PortId, PortTarget, Shape, SwitchId, TopologyError};
use base::rng::{shuffle, stream, Purpose};

/// Removes `count` random bidirectional switch-to-switch links of `net` (seeded), never
/// disconnecting it. Returns the removed links as `(switch, port)` of their lower end.
pub fn fail_random_links(
    net: &mut Network,
    count: u32,
    seed: u64,
) -> Result<Vec<(SwitchId, PortId)>, TopologyError> {
    fail_random_links_of_class(net, count, seed, None)
}

/// [`fail_random_links`] among the links of the class named `class` only (a Dragonfly's
/// `global` cables, say); `None`: any link.
pub fn fail_random_links_of_class(
    net: &mut Network,
    count: u32,
    seed: u64,
    class: Option<&str>,
) -> Result<Vec<(SwitchId, PortId)>, TopologyError> {
    let class_index = match class {
        None => None,
        Some(name) => Some(net.link_classes.iter().position(|c| c.name == name).ok_or_else(|| {
            let known: Vec<&str> = net.link_classes.iter().map(|c| c.name.as_str()).collect();
            TopologyError::new(
                "failed_link_class",
                format!("no link class `{name}` in this network; its classes: {}", known.join(", ")),
            )
        })? as u8),
    };
    let mut links: Vec<(SwitchId, PortId)> = Vec::new();
    for s in 0..net.num_switches() as SwitchId {
        for (p, n) in net.neighbours(s) {
            if s < n && class_index.is_none_or(|c| net.ports(s)[p as usize].class == c) {
                links.push((s, p));
            }
        }
    }
    if count as usize > links.len() {
        return Err(TopologyError::new(
            "failed_links",
            format!(
                "{count} is more than the {} switch-to-switch links{}",
                links.len(),
                class.map_or(String::new(), |c| format!(" of class `{c}`"))
            ),
        ));
    }
    let mut rng = stream(seed, Purpose::Topology, 0xFA17);
    shuffle(&mut rng, &mut links);
    let mut failed = Vec::new();
    for &(s, p) in &links {
        if failed.len() == count as usize {
            break;
        }
        let saved = cut(net, s, p);
        if bfs(net, s).iter().all(|&d| d != u32::MAX) {
            failed.push((s, p));
        } else {
            restore(net, s, p, saved);
        }
    }
    if failed.len() < count as usize {
        return Err(TopologyError::new(
            "failed_links",
            format!("only {} links can fail without disconnecting the network, {count} asked", failed.len()),
        ));
    }
    failed.sort_unstable();
    Ok(failed)
}

/// A named fault shape of the SurePath seed (section 6, Figure 7 and its 3D
/// counterparts), on a HyperX, built around switch 0 (every switch of a HyperX is alike).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultShape {
    /// Name in `topology.fault_shape`.
    pub name: &'static str,
    /// The HyperX dimensions it is defined for (0: any).
    pub dims: usize,
    /// Its `fault_size` when not given: the paper's, for sides 16 (2D) and 8 (3D).
    pub default_size: u32,
    /// Which links fail.
    kind: ShapeKind,
    /// What it is.
    pub doc: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ShapeKind {
    /// The first `size` switches of the line along dimension 0 through the root.
    Row,
    /// The `size` x ... x `size` corner subgrid.
    Subgrid,
    /// The first `size` switches of the line through the root in every dimension.
    Segments,
}

/// The fault shapes `topology.fault_shape` accepts.
pub const FAULT_SHAPES: &[FaultShape] = &[
    FaultShape {
        name: "row",
        dims: 0,
        default_size: 0,
        kind: ShapeKind::Row,
        doc: "every link among the switches of one row (dimension 0): K_k, 120 links at side 16, 28 at side 8; fault_size: the row's first switches taken (default: all)",
    },
    FaultShape {
        name: "subplane",
        dims: 2,
        default_size: 5,
        kind: ShapeKind::Subgrid,
        doc: "2D: every link among a fault_size x fault_size square of switches (K_5^2: 100 links)",
    },
    FaultShape {
        name: "cross",
        dims: 2,
        default_size: 11,
        kind: ShapeKind::Segments,
        doc: "2D: a row and a column segment of fault_size switches crossing at the root (two K_11: 110 links; the root keeps a third of its links)",
    },
    FaultShape {
        name: "subcube",
        dims: 3,
        default_size: 3,
        kind: ShapeKind::Subgrid,
        doc: "3D: every link among a fault_size^3 cube of switches (K_3^3: 81 links)",
    },
    FaultShape {
        name: "star",
        dims: 3,
        default_size: 7,
        kind: ShapeKind::Segments,
        doc: "3D: a segment of fault_size switches through the root in each dimension (three K_7: 63 links; the root keeps 3 links at side 8)",
    },
];

/// Fails the links of `shape` (with `size`, or its default) on a HyperX `net`, rooted at
/// switch 0; returns how many links failed. The network must stay connected.
pub fn fail_shape(net: &mut Network, shape: &FaultShape, size: Option<u32>) -> Result<u32, TopologyError> {
    let Shape::HyperX(h) = net.shape.clone() else {
        return Err(TopologyError::new("fault_shape", format!("{} needs a hyperx topology", shape.name)));
    };
    let dims = h.sides.len();
    if shape.dims != 0 && shape.dims != dims {
        let fits: Vec<&str> =
            FAULT_SHAPES.iter().filter(|f| f.dims == 0 || f.dims == dims).map(|f| f.name).collect();
        return Err(TopologyError::new(
            "fault_shape",
            format!(
                "{} is for {}D HyperX, this one has {dims} dimensions; fitting shapes: {}",
                shape.name,
                shape.dims,
                fits.join(", ")
            ),
        ));
    }
    // The longest side the shape may take: its row's, or the shortest side for the others.
    let smallest =
        if shape.kind == ShapeKind::Row { h.sides[0] } else { *h.sides.iter().min().expect("a dimension") };
    let size = size.unwrap_or(if shape.kind == ShapeKind::Row { smallest } else { shape.default_size });
    if size < 2 || size > smallest {
        return Err(TopologyError::new(
            "fault_size",
            format!("must be in 2..={smallest} for {}, got {size}", shape.name),
        ));
    }
    let coords = |s: SwitchId| (0..dims).map(|d| h.coord(s, d)).collect::<Vec<u32>>();
    let mut links = Vec::new();
    for s in 0..net.num_switches() as SwitchId {
        for (p, n) in net.neighbours(s) {
            if s > n {
                continue;
            }
            let (a, b) = (coords(s), coords(n));
            let Some(d) = (0..dims).find(|&d| a[d] != b[d]) else { continue };
            let in_segment = a[d] < size && b[d] < size && (0..dims).all(|e| e == d || a[e] == 0);
            let fails = match shape.kind {
                ShapeKind::Row => d == 0 && in_segment,
                ShapeKind::Subgrid => a.iter().chain(&b).all(|&c| c < size),
                ShapeKind::Segments => in_segment,
            };
            if fails {
                links.push((s, p));
            }
        }
    }
    for &(s, p) in &links {
        cut(net, s, p);
    }
    if bfs(net, 0).contains(&u32::MAX) {
        return Err(TopologyError::new(
            "fault_shape",
            format!("{} with fault_size {size} disconnects the network", shape.name),
        ));
    }
    net.fault_root = Some(0);
    Ok(links.len() as u32)
}

fn port_index(net: &Network, s: SwitchId, p: PortId) -> usize {
    net.port_offsets[s as usize] as usize + p as usize
}

/// Disconnects the link at `(s, p)` on both ends; returns the far end for `restore`.
fn cut(net: &mut Network, s: SwitchId, p: PortId) -> (SwitchId, PortId) {
    let PortTarget::Switch { switch, port } = net.ports[port_index(net, s, p)].target else {
        unreachable!("only connected links are cut")
    };
    let (a, b) = (port_index(net, s, p), port_index(net, switch, port));
    net.ports[a].target = PortTarget::Unconnected;
    net.ports[b].target = PortTarget::Unconnected;
    (switch, port)
}

fn restore(net: &mut Network, s: SwitchId, p: PortId, (t, q): (SwitchId, PortId)) {
    let (a, b) = (port_index(net, s, p), port_index(net, t, q));
    net.ports[a].target = PortTarget::Switch { switch: t, port: q };
    net.ports[b].target = PortTarget::Switch { switch: s, port: p };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{rrg, torus};

    fn mesh() -> Network {
        torus::build(&torus::TorusParams {
            sides: vec![6, 6],
            wrap: Some(vec![false, false]),
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap()
    }

    #[test]
    fn faults_remove_links_symmetrically_and_keep_the_network_connected() {
        let mut net = mesh();
        let before = net.num_network_links();
        let failed = fail_random_links(&mut net, 12, 3).unwrap();
        assert_eq!(failed.len(), 12);
        assert_eq!(net.num_network_links(), before - 24);
        net.check_symmetric().unwrap();
        assert!(bfs(&net, 0).iter().all(|&d| d != u32::MAX));
        // Reproducible from the seed, different for another.
        let mut again = mesh();
        assert_eq!(fail_random_links(&mut again, 12, 3).unwrap(), failed);
        let mut other = mesh();
        assert_ne!(fail_random_links(&mut other, 12, 4).unwrap(), failed);
    }

    fn hyperx(sides: Vec<u32>) -> Network {
        crate::hyperx::build(&crate::hyperx::HyperXParams {
            sides,
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap()
    }

    fn shape(name: &str) -> &'static FaultShape {
        FAULT_SHAPES.iter().find(|f| f.name == name).unwrap()
    }

    #[test]
    fn the_seeds_fault_shapes_have_its_link_counts_and_keep_the_network_connected() {
        // (shape, sides, links the seed gives, links the root keeps of its own)
        for (name, sides, links, root_keeps) in [
            ("row", vec![16, 16], 120, 15),
            ("subplane", vec![16, 16], 100, 22),
            ("cross", vec![16, 16], 110, 10),
            ("row", vec![8, 8, 8], 28, 14),
            ("subcube", vec![8, 8, 8], 81, 15),
            ("star", vec![8, 8, 8], 63, 3),
        ] {
            let mut net = hyperx(sides.clone());
            let before = net.num_network_links();
            assert_eq!(fail_shape(&mut net, shape(name), None).unwrap(), links, "{name} {sides:?}");
            assert_eq!(net.num_network_links(), before - 2 * links as usize, "{name}");
            net.check_symmetric().unwrap();
            assert!(bfs(&net, 0).iter().all(|&d| d != u32::MAX), "{name}: connected");
            assert_eq!(net.fault_root, Some(0));
            assert_eq!(net.neighbours(0).count(), root_keeps, "{name}: the root's links left");
        }
        // A smaller shape on request.
        assert_eq!(fail_shape(&mut hyperx(vec![8, 8]), shape("cross"), Some(4)).unwrap(), 12);
    }

    #[test]
    fn fault_shapes_refuse_the_wrong_dimensions_sizes_and_topologies() {
        let e = fail_shape(&mut hyperx(vec![8, 8, 8]), shape("subplane"), None).unwrap_err();
        assert_eq!(e.key, "fault_shape");
        assert!(e.message.contains("fitting shapes: row, subcube, star"), "{}", e.message);
        let e = fail_shape(&mut hyperx(vec![8, 8]), shape("cross"), None).unwrap_err();
        assert_eq!(e.key, "fault_size");
        assert!(e.message.contains("2..=8"), "{}", e.message);
        let e = fail_shape(&mut mesh(), shape("row"), None).unwrap_err();
        assert!(e.message.contains("needs a hyperx"), "{}", e.message);
        // The whole plane of a 2D HyperX would cut every switch off.
        let e = fail_shape(&mut hyperx(vec![4, 4]), shape("subplane"), Some(4)).unwrap_err();
        assert!(e.message.contains("disconnects"), "{}", e.message);
    }

    #[test]
    fn more_faults_from_the_same_seed_extend_the_same_sequence() {
        // A curve over the fault count is one growing sequence (the SurePath paper's (Camarero et al., FTXS'24)
        // random-fault figure): each set contains the smaller ones.
        let mut previous: Vec<(SwitchId, PortId)> = Vec::new();
        for count in [0, 5, 12, 20, 25] {
            let failed = fail_random_links(&mut mesh(), count, 8).unwrap();
            assert!(previous.iter().all(|l| failed.contains(l)), "{count} faults drop one of the first");
            previous = failed;
        }
    }

    #[test]
    fn too_many_faults_are_refused_with_the_key() {
        // A 6x6 mesh has 60 links and needs 35 to stay connected (a spanning tree).
        let e = fail_random_links(&mut mesh(), 40, 1).unwrap_err();
        assert_eq!(e.key, "failed_links");
        assert!(e.message.contains("without disconnecting"), "{}", e.message);
        let e = fail_random_links(&mut mesh(), 61, 1).unwrap_err();
        assert!(e.message.contains("more than the 60"), "{}", e.message);
        let mut net = rrg::build(
            &rrg::RrgParams {
                switches: 20,
                degree: 4,
                endpoints_per_switch: 1,
                seed: None,
                terminal_latency: 1,
                link_latency: 1,
            },
            1,
        )
        .unwrap();
        assert_eq!(fail_random_links(&mut net, 5, 1).unwrap().len(), 5);
    }
}

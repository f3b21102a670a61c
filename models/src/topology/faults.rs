//! Link faults: remove random switch-to-switch links, keeping the network connected.
//!
//! Faults are drawn from a seed, so a faulty network is reproducible. A link whose removal
//! would disconnect the switches is skipped and the next candidate taken, as fault studies
//! assume a connected network: the 1/3/5 % random link faults of Flich et al., "A Survey
//! and Evaluation of Topology-Agnostic Deterministic Routing Algorithms", IEEE TPDS 23(3),
//! 2012, section 6.5, and the random fault sequences of Camarero et al., "Achieving
//! High-Performance Fault-Tolerant Routing in HyperX Interconnection Networks",
//! arXiv:2404.04315, 2024, section 6. Both ends of a failed link become `Unconnected`
//! ports.

use super::{metrics::bfs, Network, PortId, PortTarget, SwitchId, TopologyError};
use crate::rng::{shuffle, stream, Purpose};

/// Removes `count` random bidirectional switch-to-switch links of `net` (seeded), never
/// disconnecting it. Returns the removed links as `(switch, port)` of their lower end.
pub fn fail_random_links(
    net: &mut Network,
    count: u32,
    seed: u64,
) -> Result<Vec<(SwitchId, PortId)>, TopologyError> {
    let mut links: Vec<(SwitchId, PortId)> = Vec::new();
    for s in 0..net.num_switches() as SwitchId {
        for (p, n) in net.neighbours(s) {
            if s < n {
                links.push((s, p));
            }
        }
    }
    if count as usize > links.len() {
        return Err(TopologyError::new(
            "failed_links",
            format!("{count} is more than the {} switch-to-switch links", links.len()),
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
    use crate::topology::{rrg, torus};

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

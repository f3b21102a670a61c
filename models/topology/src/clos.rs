//! Folded Clos networks of two or three tiers with oversubscription, as data centres and
//! AI clusters build them (leaf-spine; Al-Fares et al., SIGCOMM'08, for the three-tier
//! form; Meta's RoCE AI zones, Gangidi et al., SIGCOMM'24; Alibaba HPN, Qian et al.,
//! SIGCOMM'24).
//!
//! `leaves` leaves of `endpoints_per_leaf` endpoints each. Two tiers (`pods = 1`): every
//! leaf has one link to each of `spines` spines, so a leaf's oversubscription is
//! `endpoints_per_leaf : spines`. Three tiers (`pods > 1`): the leaves form `pods` pods of
//! `leaves / pods`, each pod with `spines` spines of its own linked to every leaf of the
//! pod; spine `j` of every pod has `spine_uplinks` links to the cores of plane `j`
//! (cores `j * spine_uplinks ..`), each core one link to spine `j` of every pod. A spine's
//! oversubscription is `leaves / pods : spine_uplinks`.
//!
//! Switch ids: leaves (pod by pod), then spines (pod by pod), then cores. Ports: a leaf's
//! endpoints, then its spines in order; a spine's leaves of its pod, then its cores; a
//! core's pods in order.

use super::{
    check_latency, check_size, link_classes, terminal_port, Network, NetworkSize, Port, PortId, PortTarget,
    Shape, TopologyError,
};
use crate::family::{parse_as, TopologyEntry, LATENCY, TERMINAL_LATENCY};
use crate::shape::ClosShape;
use base::settings::Setting;
use serde::{Deserialize, Serialize};

/// Configuration of a folded Clos (the `[topology]` table).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClosParams {
    /// Leaves (switches with endpoints), >= 1.
    pub leaves: u32,
    /// Endpoints per leaf, >= 1.
    pub endpoints_per_leaf: u32,
    /// Spines per pod; each leaf links once to each spine of its pod.
    pub spines: u32,
    /// Pods (1: two tiers; more: three tiers, `leaves` a multiple of it).
    #[serde(default = "one32")]
    pub pods: u32,
    /// Three tiers: each spine's links to the cores (default: the leaves of a pod, no
    /// oversubscription).
    #[serde(default)]
    pub spine_uplinks: Option<u32>,
    /// Latency of endpoint-to-switch links in cycles (default 1).
    #[serde(default = "super::one")]
    pub terminal_latency: u64,
    /// Latency of switch-to-switch links in cycles (default 1).
    #[serde(default = "super::one")]
    pub link_latency: u64,
}

fn one32() -> u32 {
    1
}

impl ClosParams {
    /// The shape these parameters describe, checked.
    fn shape(&self) -> Result<ClosShape, TopologyError> {
        for (key, value) in [
            ("leaves", self.leaves),
            ("endpoints_per_leaf", self.endpoints_per_leaf),
            ("spines", self.spines),
            ("pods", self.pods),
        ] {
            if value == 0 {
                return Err(TopologyError::new(key, "must be >= 1, got 0"));
            }
        }
        if !self.leaves.is_multiple_of(self.pods) {
            return Err(TopologyError::new(
                "pods",
                format!("the {} leaves must split into {} pods of equal size", self.leaves, self.pods),
            ));
        }
        let leaves_per_pod = self.leaves / self.pods;
        let spine_uplinks = match (self.pods, self.spine_uplinks) {
            (1, Some(_)) => {
                return Err(TopologyError::new("spine_uplinks", "only with pods > 1 (three tiers)"));
            }
            (1, None) => 0,
            (_, Some(0)) => return Err(TopologyError::new("spine_uplinks", "must be >= 1, got 0")),
            (_, Some(u)) => u,
            (_, None) => leaves_per_pod,
        };
        Ok(ClosShape { leaves: self.leaves, spines: self.spines, pods: self.pods, spine_uplinks })
    }
}

/// Checks the parameters and returns the network's counts without building it.
pub fn size(p: &ClosParams) -> Result<NetworkSize, TopologyError> {
    let s = p.shape()?;
    check_latency("terminal_latency", p.terminal_latency)?;
    check_latency("link_latency", p.link_latency)?;
    let leaf_radix = p.endpoints_per_leaf as u128 + p.spines as u128;
    let spine_radix = (s.leaves / s.pods) as u128 + s.spine_uplinks as u128;
    let radix = leaf_radix.max(spine_radix).max(s.pods as u128);
    let switches = s.leaves as u128 + s.spines_total() as u128 + s.cores() as u128;
    let size = check_size("leaves", switches, 0, radix)?;
    let endpoints = s.leaves as u128 * p.endpoints_per_leaf as u128;
    if endpoints > u32::MAX as u128 {
        return Err(TopologyError::new(
            "endpoints_per_leaf",
            format!("{endpoints} endpoints must fit in u32"),
        ));
    }
    let ports = s.leaves as u128 * leaf_radix
        + s.spines_total() as u128 * spine_radix
        + s.cores() as u128 * s.pods as u128;
    let hops = if s.pods > 1 { 4 } else { 2 };
    Ok(NetworkSize { endpoints: endpoints as u64, ports: ports as u64, ..size }
        .with_route(hops, 2 * p.terminal_latency + hops as u64 * p.link_latency))
}

/// Builds the Clos. Link classes: 0 `terminal`, 1 `network`.
pub fn build(p: &ClosParams) -> Result<Network, TopologyError> {
    size(p)?;
    let s = p.shape()?;
    let per_pod = s.leaves / s.pods;
    let link = |switch: u32, port: u32| Port {
        target: PortTarget::Switch { switch, port: port as PortId },
        class: 1,
    };
    let mut lists = Vec::with_capacity((s.leaves + s.spines_total() + s.cores()) as usize);
    for leaf in 0..s.leaves {
        let (pod, i) = (leaf / per_pod, leaf % per_pod);
        let mut ports = vec![terminal_port(); p.endpoints_per_leaf as usize];
        // Spine j of the pod: its port i is this leaf.
        ports.extend((0..s.spines).map(|j| link(s.spine(pod, j), i)));
        lists.push(ports);
    }
    for pod in 0..s.pods {
        for j in 0..s.spines {
            let mut ports: Vec<Port> =
                (0..per_pod).map(|i| link(pod * per_pod + i, p.endpoints_per_leaf + j)).collect();
            // Core c of plane j: its port `pod` is this spine.
            ports.extend((0..s.spine_uplinks).map(|c| link(s.core(j, c), pod)));
            lists.push(ports);
        }
    }
    for core in 0..s.cores() {
        let (j, c) = (core / s.spine_uplinks, core % s.spine_uplinks);
        lists.push((0..s.pods).map(|pod| link(s.spine(pod, j), per_pod + c)).collect());
    }
    let name = if s.pods == 1 {
        format!("clos({} leaves x {} endpoints, {} spines)", s.leaves, p.endpoints_per_leaf, s.spines)
    } else {
        format!(
            "clos({} pods of {} leaves x {} endpoints and {} spines, {} cores)",
            s.pods,
            per_pod,
            p.endpoints_per_leaf,
            s.spines,
            s.cores()
        )
    };
    Ok(Network::from_port_lists(
        name,
        lists,
        link_classes(&[("terminal", p.terminal_latency), ("network", p.link_latency)]),
        Shape::Clos(s),
    ))
}

/// `clos` in the topology registry.
pub const CLOS: TopologyEntry = TopologyEntry {
    name: "clos",
    doc: "folded Clos of two tiers (leaf-spine) or three (pods of leaves and spines under cores), with oversubscription: the data-centre and AI-cluster fabric (Al-Fares et al., SIGCOMM'08)",
    settings: &[
        Setting { key: "leaves", default: "required", doc: "leaves, the switches with endpoints (a multiple of pods)" },
        Setting { key: "endpoints_per_leaf", default: "required", doc: "endpoints per leaf" },
        Setting { key: "spines", default: "required", doc: "spines per pod; every leaf links once to each spine of its pod (a leaf's oversubscription: endpoints_per_leaf : spines)" },
        Setting { key: "pods", default: "1", doc: "pods: 1 for two tiers; more for three, each pod with its own spines, spine j of every pod linked to the cores of plane j" },
        Setting { key: "spine_uplinks", default: "leaves per pod", doc: "three tiers: links from each spine to its plane's cores (a spine's oversubscription: leaves per pod : spine_uplinks)" },
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[],
    parse: parse_as::<ClosParams>,
};

crate::family::family_from_fns!(ClosParams);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::testutil::check_network;

    fn params(leaves: u32, endpoints: u32, spines: u32, pods: u32, spine_uplinks: Option<u32>) -> ClosParams {
        ClosParams {
            leaves,
            endpoints_per_leaf: endpoints,
            spines,
            pods,
            spine_uplinks,
            terminal_latency: 1,
            link_latency: 1,
        }
    }

    #[test]
    fn two_tiers_count_as_defined() {
        // 32 leaves of 32 endpoints under 16 spines: 2:1 oversubscribed, 1,024 endpoints.
        let net = build(&params(32, 32, 16, 1, None)).unwrap();
        check_network(&net);
        assert_eq!((net.num_switches(), net.num_endpoints()), (48, 1024));
        assert_eq!(net.num_network_links(), 2 * 32 * 16);
        assert!((0..32).all(|l| net.radix(l) == 48) && (32..48).all(|s| net.radix(s) == 32));
        let sized = size(&params(32, 32, 16, 1, None)).unwrap();
        assert_eq!((sized.switches, sized.endpoints, sized.ports), (48, 1024, net.ports.len() as u64));
        // Every leaf reaches every other in two hops, through any spine.
        let d = crate::metrics::bfs(&net, 0);
        assert!((1..32).all(|l| d[l] == 2) && (32..48).all(|s| d[s] == 1));
    }

    #[test]
    fn three_tiers_count_as_defined() {
        // 4 pods of 8 leaves (16 endpoints each) with 8 spines; each spine 4 uplinks (2:1):
        // 32 cores of 4 ports.
        let p = params(32, 16, 8, 4, Some(4));
        let net = build(&p).unwrap();
        check_network(&net);
        assert_eq!((net.num_switches(), net.num_endpoints()), (32 + 32 + 32, 512));
        assert_eq!(net.num_network_links(), 2 * (32 * 8 + 32 * 4));
        let sized = size(&p).unwrap();
        assert_eq!((sized.switches, sized.ports), (96, net.ports.len() as u64));
        let d = crate::metrics::bfs(&net, 0);
        // Same pod: 2 hops; another pod: up to a core and down, 4.
        assert!((1..8).all(|l| d[l] == 2) && (8..32).all(|l| d[l] == 4));
        // Without spine_uplinks a spine has as many up as down (no oversubscription).
        let full = build(&params(32, 16, 8, 4, None)).unwrap();
        assert_eq!(full.num_switches(), 32 + 32 + 8 * 8);
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let e = |p: ClosParams| build(&p).unwrap_err().to_string();
        assert!(e(params(30, 16, 8, 4, None)).contains("topology.pods"));
        assert!(e(params(32, 16, 8, 1, Some(2))).contains("topology.spine_uplinks"));
        assert!(e(params(32, 0, 8, 1, None)).contains("topology.endpoints_per_leaf"));
    }
}

//! GPU nodes on a fabric (`[topology.nodes]`): each endpoint of the fabric becomes a NIC
//! port of a GPU, and the GPUs of a node are joined by a scale-up domain of their own.
//!
//! A node of `gpus` GPUs is what AI clusters are built of (a DGX or HGX server: 8 GPUs on
//! NVSwitch, a NIC per GPU). In the network each GPU is a small switch of its own (a "GPU
//! switch") with:
//! - port 0, a terminal port to the GPU's endpoint (class `terminal`): what the rank
//!   injects and receives;
//! - ports `1..=planes`, its NIC's ports, one into each copy ("plane") of the fabric, where
//!   the fabric had an endpoint (class `nic`, at the fabric's `terminal_latency`); or with
//!   `dual_tor`, ports 1 and 2 into one fabric, on the two leaves of a pair;
//! - then its scale-up links (class `nvlink`): one to the node's NVSwitch (`scale_up =
//!   "switch"`), or one to each other GPU of the node (`"full"`, as NVLink meshes of 4 or 8
//!   GPUs without a switch), or none.
//!
//! GPU switches come first (switch `i` is GPU `i`, whose endpoint is endpoint `i`: ranks
//! placed in order fill node 0's GPUs first), then the NVSwitches (one per node), then the
//! fabric's switches, plane after plane, each plane's ports numbered as in the fabric.
//!
//! `placement` says which fabric endpoint each GPU's NIC takes. `node`: node `n`'s GPUs
//! take the fabric's endpoints `n * gpus ..`, so they share a leaf (a ToR design).
//! `rail`: the rail-optimized design (NVIDIA's DGX SuperPOD; Meta's RoCE AI zones,
//! Gangidi et al., SIGCOMM'24): with `t` endpoints per leaf, `t` nodes share `gpus`
//! consecutive leaves, GPU `g` of each on leaf `g` of the group (its rail), so that GPU
//! `g` of those `t` nodes meet one hop apart. With `rails` fewer than the GPUs (a large
//! scale-up domain), GPU `g` is on rail `g mod rails` and a node's GPUs of one rail take
//! consecutive ports of its leaf.
//!
//! `dual_tor`: the two-tier dual-ToR form of Alibaba's HPN (Qian et al., SIGCOMM'24). The
//! fabric's leaves come in pairs (leaves `2k` and `2k + 1`), and a NIC's two ports take the
//! same place on both leaves of a pair: the fabric's endpoint `j` of leaf `2k` and of leaf
//! `2k + 1` are the two ports of one NIC. Placement then counts a pair as one leaf. A
//! fabric of `L` leaves of `t` endpoints holds `L * t / 2` NICs, each with two ports (as
//! `planes = 2` on a fabric of half the leaves, but both ports under the same spines).
//!
//! GPU switches never forward: a route starts or ends at one. Routings route the fabric as
//! built on its own (`Network::nodes` keeps it) and the routing crate's `nodes` wrapper
//! adds the hops into and out of the GPUs.

use crate::ids::{EndpointId, PortId, SwitchId};
use crate::network::{LinkClass, Network, NetworkSize, Port, PortTarget, TopologyError};
pub use crate::network::{NodeLayout, Placement, ScaleUp};
use crate::shape::Shape;
use crate::speed::LinkSpeed;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// `[topology.nodes]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodesParams {
    /// GPUs per node, each an endpoint with its own NIC.
    pub gpus: u32,
    /// Ports of each NIC, each in its own copy of the fabric (a multi-plane fabric).
    #[serde(default = "one32")]
    pub planes: u32,
    /// Each NIC's two ports on the two leaves of a pair of one fabric (the dual-ToR form;
    /// a `clos` fabric of an even number of leaves per pod).
    #[serde(default)]
    pub dual_tor: bool,
    /// How the GPUs of a node are joined.
    #[serde(default)]
    pub scale_up: ScaleUp,
    /// Which fabric endpoint each GPU's NIC takes.
    #[serde(default)]
    pub placement: Placement,
    /// Rails of the `rail` placement (default: one per GPU): GPU `g`'s NIC is on rail
    /// `g mod rails`, as a rack-scale domain of 72 GPUs on a few rails.
    #[serde(default)]
    pub rails: Option<u32>,
    /// NCCL's PXN: traffic to another node's GPU on another rail crosses the scale-up
    /// domain to the GPU of its own node on the destination's rail, and leaves by that
    /// GPU's NIC.
    #[serde(default)]
    pub pxn: bool,
    /// Cycles of a scale-up link.
    #[serde(default = "crate::one")]
    pub nvlink_latency: u64,
    /// Cycles of the link between a GPU and its NIC and scale-up ports.
    #[serde(default = "crate::one")]
    pub gpu_latency: u64,
    /// Phits of a full packet between GPUs of one node, over the scale-up links (default:
    /// `router.packet_size`): a coarser grain for NVLink's traffic.
    #[serde(default)]
    pub scale_up_packet: Option<u16>,
}

fn one32() -> u32 {
    1
}

impl NodesParams {
    /// Fabric endpoints each NIC takes: 2 with `dual_tor` (a leaf of the pair each), 1
    /// otherwise (its planes are copies of one fabric).
    pub fn endpoints_per_nic(&self) -> u32 {
        if self.dual_tor {
            2
        } else {
            1
        }
    }

    /// Ports of each NIC: one per plane, or two with `dual_tor`.
    pub fn nic_ports(&self) -> u32 {
        self.planes * self.endpoints_per_nic()
    }
}

impl NodeLayout {
    /// GPU switches (= GPUs = endpoints).
    pub fn num_gpus(&self) -> u32 {
        self.nodes * self.gpus
    }

    /// Ports of each NIC: one per plane, or two with `dual_tor`.
    #[inline]
    pub fn nic_ports(&self) -> u32 {
        self.planes * self.endpoints_per_nic()
    }

    /// Fabric endpoints each NIC takes: 2 with `dual_tor`, 1 otherwise.
    #[inline]
    pub fn endpoints_per_nic(&self) -> u32 {
        if self.dual_tor {
            2
        } else {
            1
        }
    }

    /// The first NVSwitch (with `scale_up = "switch"`; otherwise the first fabric switch).
    pub fn first_nvswitch(&self) -> SwitchId {
        self.num_gpus()
    }

    /// The first switch of plane 0 of the fabric.
    pub fn first_fabric(&self) -> SwitchId {
        self.num_gpus() + if self.scale_up == ScaleUp::Switch { self.nodes } else { 0 }
    }

    /// Whether switch `s` is a GPU.
    #[inline]
    pub fn is_gpu(&self, s: SwitchId) -> bool {
        s < self.num_gpus()
    }

    /// The node of GPU `gpu`.
    #[inline]
    pub fn node_of(&self, gpu: u32) -> u32 {
        gpu / self.gpus
    }

    /// The rail of GPU `gpu`'s NIC (`rail` placement; with `node` placement every GPU
    /// is its own rail).
    #[inline]
    pub fn rail_of(&self, gpu: u32) -> u32 {
        (gpu % self.gpus) % self.rails
    }

    /// The GPU whose NIC traffic from GPU `src` to GPU `dst` leaves by: `src`'s, or with
    /// PXN, for a GPU of another node on another rail, the GPU of `src`'s node with
    /// `dst`'s place in its node (on `dst`'s rail).
    #[inline]
    pub fn exit_gpu(&self, src: u32, dst: u32) -> u32 {
        if self.pxn && self.node_of(src) != self.node_of(dst) && self.rail_of(src) != self.rail_of(dst) {
            self.node_of(src) * self.gpus + dst % self.gpus
        } else {
            src
        }
    }

    /// Switch hops from GPU `src` to the GPU its traffic to `dst` leaves by: 0, or
    /// [`NodeLayout::scale_up_hops`] where PXN takes it across the node.
    #[inline]
    pub fn hops_to_exit(&self, src: u32, dst: u32) -> u16 {
        if self.exit_gpu(src, dst) == src {
            0
        } else {
            self.scale_up_hops()
        }
    }

    /// The scale-up hops from one GPU of a node to another: 2 through an NVSwitch, 1 over
    /// a direct link (0 without scale-up links).
    pub fn scale_up_hops(&self) -> u16 {
        match self.scale_up {
            ScaleUp::Switch => 2,
            ScaleUp::Full => 1,
            ScaleUp::None => 0,
        }
    }

    /// The fabric switch `s` is, as `(plane, switch of the fabric)`; `None` for GPUs and
    /// NVSwitches.
    #[inline]
    pub fn in_fabric(&self, s: SwitchId) -> Option<(u32, SwitchId)> {
        let first = self.first_fabric();
        if s < first {
            return None;
        }
        let per_plane = self.fabric.num_switches() as u32;
        Some(((s - first) / per_plane, (s - first) % per_plane))
    }

    /// Switch `s` of the fabric in plane `plane`, as a switch of the whole network.
    #[inline]
    pub fn fabric_switch(&self, plane: u32, s: SwitchId) -> SwitchId {
        self.first_fabric() + plane * self.fabric.num_switches() as u32 + s
    }

    /// The fabric endpoint GPU `gpu`'s NIC takes (in every plane; with `dual_tor`, its
    /// port 0's, on the first leaf of its pair).
    #[inline]
    pub fn fabric_endpoint(&self, gpu: u32) -> EndpointId {
        self.fabric_endpoint_on(gpu, 0)
    }

    /// The fabric endpoint of port `port` of GPU `gpu`'s NIC: with `dual_tor`, on leaf
    /// `2k + port` of its pair `k`; otherwise [`NodeLayout::fabric_endpoint`] (the planes
    /// are copies of the fabric).
    #[inline]
    pub fn fabric_endpoint_on(&self, gpu: u32, port: u32) -> EndpointId {
        let slot = self.nic_slot(gpu);
        if !self.dual_tor {
            return slot;
        }
        let t = self.leaf_endpoints;
        (2 * (slot / t) + port) * t + slot % t
    }

    /// The NIC port whose fabric endpoint is `e`: with `dual_tor`, the side of its leaf
    /// in its pair; otherwise 0.
    #[inline]
    pub fn nic_port_of_fabric_endpoint(&self, e: EndpointId) -> u32 {
        if self.dual_tor {
            (e / self.leaf_endpoints) % 2
        } else {
            0
        }
    }

    /// GPU `gpu`'s place among the NICs: its fabric endpoint, counting a pair of leaves
    /// as one with `dual_tor`.
    #[inline]
    fn nic_slot(&self, gpu: u32) -> EndpointId {
        match self.placement {
            Placement::Node => gpu,
            Placement::Rail => {
                // A group of `rails` leaves holds `t / per_rail` nodes; GPU `g` of node `i`
                // of a group takes slot `i * per_rail + g / rails` of leaf `g mod rails`.
                let (n, g, t, r) = (gpu / self.gpus, gpu % self.gpus, self.leaf_endpoints, self.rails);
                let per_rail = self.gpus / r;
                let nodes_per_group = t / per_rail;
                (n / nodes_per_group) * t * r + (g % r) * t + (n % nodes_per_group) * per_rail + g / r
            }
        }
    }

    /// The GPU whose NIC takes fabric endpoint `e`.
    #[inline]
    pub fn gpu_of_fabric_endpoint(&self, e: EndpointId) -> u32 {
        let e = if self.dual_tor {
            let t = self.leaf_endpoints;
            (e / t / 2) * t + e % t
        } else {
            e
        };
        match self.placement {
            Placement::Node => e,
            Placement::Rail => {
                let (t, r) = (self.leaf_endpoints, self.rails);
                let per_rail = self.gpus / r;
                let (group, at) = (e / (t * r), e % (t * r));
                let (rail, slot) = (at / t, at % t);
                let node = group * (t / per_rail) + slot / per_rail;
                node * self.gpus + (slot % per_rail) * r + rail
            }
        }
    }

    /// The fabric switch (of the fabric alone) and its port where GPU `gpu`'s NIC attaches
    /// (its port 0, with `dual_tor`).
    #[inline]
    pub fn attachment(&self, gpu: u32) -> (SwitchId, PortId) {
        self.attachment_on(gpu, 0)
    }

    /// The fabric switch and its port where port `port` of GPU `gpu`'s NIC attaches.
    #[inline]
    pub fn attachment_on(&self, gpu: u32, port: u32) -> (SwitchId, PortId) {
        self.fabric.endpoint_location[self.fabric_endpoint_on(gpu, port) as usize]
    }

    /// A GPU switch's port into plane `plane`.
    #[inline]
    pub fn nic_port(plane: u32) -> PortId {
        1 + plane as PortId
    }

    /// GPU `from`'s scale-up port towards GPU `to` of its node.
    #[inline]
    pub fn scale_up_port(&self, from: u32, to: u32) -> PortId {
        let first = 1 + self.nic_ports() as PortId;
        match self.scale_up {
            ScaleUp::Full => {
                let (f, t) = (from % self.gpus, to % self.gpus);
                first + (if t < f { t } else { t - 1 }) as PortId
            }
            _ => first,
        }
    }
}

/// Checks `p` against a fabric of `fabric.endpoints` endpoints and `fabric.switches`
/// switches (`terminals`: endpoints per fabric switch when uniform) and returns the counts
/// of the network of nodes.
pub fn size(p: &NodesParams, fabric: NetworkSize) -> Result<NetworkSize, TopologyError> {
    if p.gpus == 0 {
        return Err(TopologyError::new("nodes.gpus", "must be >= 1, got 0"));
    }
    if p.planes == 0 || p.planes > 16 {
        return Err(TopologyError::new("nodes.planes", format!("must be in 1..=16, got {}", p.planes)));
    }
    if p.dual_tor && p.planes > 1 {
        return Err(TopologyError::new(
            "nodes.dual_tor",
            "a NIC's two ports go to the two leaves of a pair in one fabric: set planes = 1 (two planes of \
             single-homed leaves is `planes = 2` without dual_tor)",
        ));
    }
    crate::check_latency("nodes.nvlink_latency", p.nvlink_latency)?;
    crate::check_latency("nodes.gpu_latency", p.gpu_latency)?;
    if p.scale_up_packet == Some(0) {
        return Err(TopologyError::new("nodes.scale_up_packet", "must be in 1..=65535 phits, got 0"));
    }
    if let Some(rails) = p.rails {
        if p.placement != Placement::Rail {
            return Err(TopologyError::new("nodes.rails", "only with placement = \"rail\""));
        }
        if rails == 0 || !p.gpus.is_multiple_of(rails) {
            return Err(TopologyError::new(
                "nodes.rails",
                format!("must divide the node's {} GPUs, got {rails}", p.gpus),
            ));
        }
    }
    // With dual_tor, two fabric endpoints are one NIC.
    let per_nic = p.endpoints_per_nic() as u64;
    if fabric.endpoints == 0 || !fabric.endpoints.is_multiple_of(p.gpus as u64 * per_nic) {
        return Err(TopologyError::new(
            "nodes.gpus",
            format!(
                "the fabric has {} endpoints, which must be a whole number of nodes of {} GPUs{}",
                fabric.endpoints,
                p.gpus,
                if p.dual_tor { " with two ports each (dual_tor)" } else { "" }
            ),
        ));
    }
    let gpus = fabric.endpoints / per_nic;
    let nic_ports = p.nic_ports() as u64;
    let nodes = gpus / p.gpus as u64;
    let nvswitches = if p.scale_up == ScaleUp::Switch { nodes } else { 0 };
    let scale_up_ports = match p.scale_up {
        ScaleUp::Switch => 1,
        ScaleUp::Full => p.gpus as u64 - 1,
        ScaleUp::None => 0,
    };
    let switches = gpus + nvswitches + p.planes as u64 * fabric.switches;
    let ports =
        gpus * (1 + nic_ports + scale_up_ports) + nvswitches * p.gpus as u64 + p.planes as u64 * fabric.ports;
    if switches > u32::MAX as u64 || ports > u32::MAX as u64 {
        return Err(TopologyError::new(
            "nodes.planes",
            format!("the network would have {switches} switches and {ports} ports; each must fit in u32"),
        ));
    }
    Ok(NetworkSize {
        switches,
        endpoints: gpus,
        ports,
        // Into the fabric and out of it: two more hops.
        hops: fabric.hops + 2,
        route_latency: fabric.route_latency + 2 * p.gpu_latency,
    })
}

/// The network of GPU nodes on `fabric` (its class 0 the fabric's endpoint links).
/// Link classes: `terminal` (GPU to its switch), `nic`, the fabric's other classes, then
/// `nvlink` (unless `scale_up = "none"`).
pub fn build(fabric: Network, p: &NodesParams) -> Result<Network, TopologyError> {
    let fabric_size = NetworkSize {
        switches: fabric.num_switches() as u64,
        endpoints: fabric.num_endpoints() as u64,
        ports: fabric.ports.len() as u64,
        hops: 0,
        route_latency: 0,
    };
    size(p, fabric_size)?;
    if p.dual_tor {
        check_leaf_pairs(&fabric)?;
    }
    let rails = p.rails.unwrap_or(p.gpus);
    let leaf_endpoints = match p.placement {
        Placement::Rail => rail_leaf_endpoints(&fabric, rails, p.gpus / rails, p.dual_tor)?,
        // A Clos has the same endpoints on every leaf.
        Placement::Node if p.dual_tor => fabric.terminals[0] as u32,
        Placement::Node => 0,
    };
    let gpus = fabric.num_endpoints() as u32 / p.endpoints_per_nic();
    let layout = NodeLayout {
        gpus: p.gpus,
        nodes: gpus / p.gpus,
        planes: p.planes,
        dual_tor: p.dual_tor,
        scale_up: p.scale_up,
        placement: p.placement,
        rails,
        pxn: p.pxn && p.scale_up != ScaleUp::None,
        scale_up_packet: p.scale_up_packet.filter(|_| p.scale_up != ScaleUp::None),
        leaf_endpoints,
        fabric: Arc::new(fabric),
    };
    let fabric = &layout.fabric;
    let nvlink_class = fabric.link_classes.len() as u8 + 1;
    let mut lists: Vec<Vec<Port>> = Vec::with_capacity(layout.first_fabric() as usize);
    for gpu in 0..gpus {
        let mut ports = vec![crate::terminal_port()];
        if p.dual_tor {
            for side in 0..2 {
                let (fs, fport) = layout.attachment_on(gpu, side);
                let target = PortTarget::Switch { switch: layout.fabric_switch(0, fs), port: fport };
                ports.push(Port { target, class: 1 });
            }
        } else {
            let (fs, fport) = layout.attachment(gpu);
            for plane in 0..p.planes {
                let target = PortTarget::Switch { switch: layout.fabric_switch(plane, fs), port: fport };
                ports.push(Port { target, class: 1 });
            }
        }
        let node_first = layout.node_of(gpu) * p.gpus;
        match p.scale_up {
            ScaleUp::Switch => ports.push(Port {
                target: PortTarget::Switch {
                    switch: layout.first_nvswitch() + layout.node_of(gpu),
                    port: (gpu % p.gpus) as PortId,
                },
                class: nvlink_class,
            }),
            ScaleUp::Full => {
                for peer in (node_first..node_first + p.gpus).filter(|&q| q != gpu) {
                    let target = PortTarget::Switch { switch: peer, port: layout.scale_up_port(peer, gpu) };
                    ports.push(Port { target, class: nvlink_class });
                }
            }
            ScaleUp::None => {}
        }
        lists.push(ports);
    }
    if p.scale_up == ScaleUp::Switch {
        let port = NodeLayout::nic_port(layout.nic_ports());
        for n in 0..layout.nodes {
            lists.push(
                (0..p.gpus)
                    .map(|g| Port {
                        target: PortTarget::Switch { switch: n * p.gpus + g, port },
                        class: nvlink_class,
                    })
                    .collect(),
            );
        }
    }
    for plane in 0..p.planes {
        for s in 0..fabric.num_switches() as SwitchId {
            let ports = fabric.ports(s).iter().map(|q| match q.target {
                PortTarget::Endpoint(e) => Port {
                    target: PortTarget::Switch {
                        switch: layout.gpu_of_fabric_endpoint(e),
                        port: NodeLayout::nic_port(plane + layout.nic_port_of_fabric_endpoint(e)),
                    },
                    class: 1,
                },
                PortTarget::Switch { switch, port } => Port {
                    target: PortTarget::Switch { switch: layout.fabric_switch(plane, switch), port },
                    class: q.class + 1,
                },
                PortTarget::Unconnected => Port { target: PortTarget::Unconnected, class: q.class + 1 },
            });
            lists.push(ports.collect());
        }
    }
    let mut classes = vec![
        LinkClass { name: "terminal".into(), latency: p.gpu_latency, speed: LinkSpeed::ONE },
        LinkClass { name: "nic".into(), ..fabric.link_classes[0].clone() },
    ];
    classes.extend(fabric.link_classes[1..].iter().cloned());
    if p.scale_up != ScaleUp::None {
        classes.push(LinkClass { name: "nvlink".into(), latency: p.nvlink_latency, speed: LinkSpeed::ONE });
    }
    let name = format!(
        "{} nodes of {} GPUs ({:?} scale-up, {:?} placement{}{}{}{}) on {}",
        layout.nodes,
        p.gpus,
        p.scale_up,
        p.placement,
        if rails != p.gpus { format!(" on {rails} rails") } else { String::new() },
        if layout.pxn { ", pxn" } else { "" },
        if p.dual_tor { ", dual-tor" } else { "" },
        if p.planes > 1 { format!(", {} planes", p.planes) } else { String::new() },
        fabric.name
    )
    .to_lowercase();
    let mut net = Network::from_port_lists(name, lists, classes, Shape::Nodes);
    net.failed_links = fabric.failed_links;
    net.fault_root = fabric.fault_root.map(|r| layout.fabric_switch(0, r));
    net.nodes = Some(Arc::new(layout));
    Ok(net)
}

/// With `dual_tor`: a `clos` fabric whose pods have an even number of leaves, so that
/// leaves `2k` and `2k + 1` share their spines.
fn check_leaf_pairs(fabric: &Network) -> Result<(), TopologyError> {
    match &fabric.shape {
        Shape::Clos(c) if (c.leaves / c.pods).is_multiple_of(2) => Ok(()),
        Shape::Clos(c) => Err(TopologyError::new(
            "nodes.dual_tor",
            format!(
                "pairs leaves 2k and 2k + 1 of a pod: the pods' {} leaves each must be an even number",
                c.leaves / c.pods
            ),
        )),
        _ => Err(TopologyError::new(
            "nodes.dual_tor",
            format!("pairs the leaves of a `clos` fabric (kind = \"clos\"), not of {}", fabric.name),
        )),
    }
}

/// With `rail` placement: the fabric's endpoints per leaf, the same on every switch that
/// has any, and leaves that come in whole groups of `rails` (of `rails` pairs with
/// `dual_tor`), each leaf holding whole nodes' `per_rail` GPUs of its rail.
fn rail_leaf_endpoints(
    fabric: &Network,
    rails: u32,
    per_rail: u32,
    dual_tor: bool,
) -> Result<u32, TopologyError> {
    let mut per_leaf = fabric.terminals.iter().filter(|&&t| t > 0);
    let t = per_leaf.next().copied().unwrap_or(0) as u32;
    let leaves = fabric.terminals.iter().filter(|&&t| t > 0).count() as u32;
    // Leaves (switches with endpoints) must be consecutive from switch 0, as every family
    // numbers them.
    let consecutive = fabric.terminals[..leaves as usize].iter().all(|&x| x > 0);
    if t == 0 || per_leaf.any(|&x| x as u32 != t) || !consecutive {
        return Err(TopologyError::new(
            "nodes.placement",
            "`rail` needs the same number of endpoints on every leaf, leaves first (use `node`)",
        ));
    }
    let leaves_per_rail = if dual_tor { 2 } else { 1 };
    if !leaves.is_multiple_of(rails * leaves_per_rail) {
        let per = if dual_tor { "pair of leaves" } else { "leaf" };
        return Err(TopologyError::new(
            "nodes.placement",
            format!(
                "`rail` puts a node's GPUs on {rails} rails, a {per} each: the fabric's {leaves} leaves must be a multiple of {} (or use `node`)",
                rails * leaves_per_rail
            ),
        ));
    }
    if !t.is_multiple_of(per_rail) {
        return Err(TopologyError::new(
            "nodes.rails",
            format!(
                "a node has {per_rail} GPUs on each of its {rails} rails, which must divide the {t} endpoints of a leaf"
            ),
        ));
    }
    Ok(t)
}

#[cfg(test)]
mod tests;

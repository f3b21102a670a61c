//! A built network: switches with their ports in CSR form, terminal ports first, link
//! classes with latencies, where the endpoints are, its [`Shape`], and the checks and
//! helpers the families share when they build one.

use crate::ids::{EndpointId, PortId, SwitchId};
use crate::shape::Shape;
pub use crate::speed::LinkSpeed;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// What a port connects to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum PortTarget {
    /// A terminal port attached to an endpoint.
    Endpoint(EndpointId),
    /// A network port attached to `port` of `switch`.
    Switch {
        /// The neighbouring switch.
        switch: SwitchId,
        /// The port on the neighbour that this link arrives at.
        port: PortId,
    },
    /// A port left unconnected (e.g. a Dragonfly with fewer groups than a*h+1).
    Unconnected,
}

/// One port of a switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    /// Where the port leads.
    pub target: PortTarget,
    /// Index into [`Network::link_classes`]: decides the latency of the link.
    pub class: u8,
}

/// A named class of links with a shared latency in cycles and speed (e.g. "terminal",
/// "global").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkClass {
    /// Name used in configs and output.
    pub name: String,
    /// Latency in cycles, at least 1.
    pub latency: u64,
    /// Phits a cycle its links carry ([`LinkSpeed::ONE`] unless `topology.link_speeds`
    /// says otherwise).
    pub speed: LinkSpeed,
}

/// The first endpoint of every switch with `terminals[s]` endpoints, and the total at the
/// end: a switch's endpoints are consecutive from its first, on its terminal ports in
/// order.
pub fn endpoint_offsets(terminals: &[u16]) -> Vec<EndpointId> {
    let mut first = Vec::with_capacity(terminals.len() + 1);
    let mut at = 0;
    for &t in terminals {
        first.push(at);
        at += t as EndpointId;
    }
    first.push(at);
    first
}

/// Where every endpoint is, computed instead of stored: the endpoints of a switch are
/// consecutive and in terminal-port order, so the first endpoint of each switch (or, when
/// every switch has the same number, that number) says it all. 4 bytes per switch at most,
/// against 8 per endpoint for a table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointMap {
    /// Endpoints per switch when all switches have the same number.
    uniform: Option<u32>,
    /// First endpoint of every switch and the total at the end (empty when uniform).
    first: Vec<EndpointId>,
    endpoints: u32,
}

impl EndpointMap {
    /// The map of a network with `terminals[s]` endpoints on switch `s`.
    pub fn new(terminals: &[u16]) -> Self {
        let endpoints = terminals.iter().map(|&t| t as u32).sum();
        match terminals.first() {
            Some(&t) if t > 0 && terminals.iter().all(|&x| x == t) => {
                EndpointMap { uniform: Some(t as u32), first: Vec::new(), endpoints }
            }
            _ => EndpointMap { uniform: None, first: endpoint_offsets(terminals), endpoints },
        }
    }

    /// Number of endpoints.
    pub fn len(&self) -> usize {
        self.endpoints as usize
    }

    /// Whether there are no endpoints.
    pub fn is_empty(&self) -> bool {
        self.endpoints == 0
    }

    /// Switch and terminal port of endpoint `e` (`e` < [`len`](Self::len)).
    #[inline]
    pub fn locate(&self, e: EndpointId) -> (SwitchId, PortId) {
        debug_assert!(e < self.endpoints, "endpoint {e} of {}", self.endpoints);
        match self.uniform {
            Some(t) => (e / t, (e % t) as PortId),
            None => {
                // The last switch whose first endpoint is <= e (switches without endpoints
                // share their successor's first endpoint and are skipped).
                let s = self.first.partition_point(|&f| f <= e) - 1;
                (s as SwitchId, (e - self.first[s]) as PortId)
            }
        }
    }
}

/// A built network: switches, ports, endpoints and link classes.
#[derive(Clone, Debug)]
pub struct Network {
    /// Short description, e.g. `hyperx(16x16, t=16)`.
    pub name: String,
    /// `ports[port_offsets[s]..port_offsets[s + 1]]` are the ports of switch `s`.
    pub port_offsets: Vec<u32>,
    /// All ports, switch by switch.
    pub ports: Vec<Port>,
    /// Number of terminal ports per switch (they come first).
    pub terminals: Vec<u16>,
    /// `(switch, port)` of every endpoint.
    pub endpoint_location: Vec<(SwitchId, PortId)>,
    /// Link classes; `Port::class` indexes this.
    pub link_classes: Vec<LinkClass>,
    /// Topology-specific structure.
    pub shape: Shape,
    /// Bidirectional switch-to-switch links removed by `topology.failed_links` (their
    /// ports are `Unconnected`); algorithmic routings that assume the full shape refuse
    /// a network with faults.
    pub failed_links: u32,
    /// The switch a named fault shape (`topology.fault_shape`) is built around; the escape
    /// subnetwork's default root, since the SurePath seed roots it among the faults.
    pub fault_root: Option<SwitchId>,
    /// With `[topology.nodes]`: where the GPUs, their scale-up switches and the fabric's
    /// planes are, and the fabric itself, which routings route (`None` otherwise).
    pub nodes: Option<Arc<NodeLayout>>,
}

impl Network {
    /// Number of switches.
    pub fn num_switches(&self) -> usize {
        self.port_offsets.len() - 1
    }

    /// Number of endpoints.
    pub fn num_endpoints(&self) -> usize {
        self.endpoint_location.len()
    }

    /// The first endpoint of every switch (`None` without endpoints); a switch's endpoints
    /// are consecutive from it, on its terminal ports in order.
    pub fn first_endpoints(&self) -> Vec<Option<EndpointId>> {
        let offsets = endpoint_offsets(&self.terminals);
        self.terminals.iter().zip(offsets).map(|(&t, first)| (t > 0).then_some(first)).collect()
    }

    /// Ports of switch `s`.
    pub fn ports(&self, s: SwitchId) -> &[Port] {
        &self.ports[self.port_offsets[s as usize] as usize..self.port_offsets[s as usize + 1] as usize]
    }

    /// Radix (port count) of switch `s`.
    pub fn radix(&self, s: SwitchId) -> usize {
        (self.port_offsets[s as usize + 1] - self.port_offsets[s as usize]) as usize
    }

    /// Largest radix over all switches.
    pub fn max_radix(&self) -> usize {
        (0..self.num_switches() as u32).map(|s| self.radix(s)).max().unwrap_or(0)
    }

    /// Latency of the link leaving port `port` of switch `s`.
    pub fn latency(&self, s: SwitchId, port: PortId) -> u64 {
        self.link_classes[self.ports(s)[port as usize].class as usize].latency
    }

    /// The speed `traffic.load` is stated against: the NICs' (class `nic`) on GPU nodes,
    /// otherwise the endpoints' links (class 0, `terminal`).
    pub fn load_speed(&self) -> LinkSpeed {
        let class = match self.nodes {
            Some(_) => self.link_classes.iter().find(|c| c.name == "nic"),
            None => self.link_classes.first(),
        };
        class.map_or(LinkSpeed::ONE, |c| c.speed)
    }

    /// Whether every link class sends one phit a cycle (the routers then skip all speed
    /// arithmetic).
    pub fn uniform_speed(&self) -> bool {
        self.link_classes.iter().all(|c| c.speed == LinkSpeed::ONE)
    }

    /// Neighbouring switches of `s` with the local port leading to each (network ports only).
    pub fn neighbours(&self, s: SwitchId) -> impl Iterator<Item = (PortId, SwitchId)> + '_ {
        self.ports(s).iter().enumerate().filter_map(|(i, p)| match p.target {
            PortTarget::Switch { switch, .. } => Some((i as PortId, switch)),
            _ => None,
        })
    }

    /// Where every endpoint is, in compact form.
    pub fn endpoint_map(&self) -> EndpointMap {
        EndpointMap::new(&self.terminals)
    }

    /// The topology's natural blocks, a block id per switch, for the partitioner: Dragonfly
    /// groups and fat-tree pods (`None` for the other families).
    pub fn blocks(&self) -> Option<Vec<u32>> {
        match &self.shape {
            Shape::Dragonfly(d) => Some((0..self.num_switches() as u32).map(|s| d.group(s)).collect()),
            // Pods of a k-ary n-tree: below the top level, links between levels l and l+1
            // change digit l of the switch index, so the highest digit (n-2) names the pod;
            // top-level switches join the pod of their own highest digit.
            Shape::Clos(c) if c.pods > 1 => Some((0..self.num_switches() as u32).map(|s| c.pod(s)).collect()),
            Shape::FatTree(f) if f.n >= 2 => {
                Some((0..self.num_switches() as u32).map(|s| f.digit(f.index(s), f.n - 2)).collect())
            }
            _ => None,
        }
    }

    /// Number of directed switch-to-switch links.
    pub fn num_network_links(&self) -> usize {
        self.ports.iter().filter(|p| matches!(p.target, PortTarget::Switch { .. })).count()
    }

    /// Builds the network from per-switch port lists and fills in the endpoint numbering.
    /// Each inner list must put its `Endpoint` ports first; their ids are assigned here
    /// in switch order, so builders may put any placeholder id in them.
    pub fn from_port_lists(
        name: String,
        port_lists: Vec<Vec<Port>>,
        link_classes: Vec<LinkClass>,
        shape: Shape,
    ) -> Self {
        let mut port_offsets = Vec::with_capacity(port_lists.len() + 1);
        let mut ports = Vec::new();
        let mut terminals = Vec::with_capacity(port_lists.len());
        let mut endpoint_location = Vec::new();
        port_offsets.push(0);
        for (s, list) in port_lists.into_iter().enumerate() {
            let mut t = 0u16;
            for (i, mut p) in list.into_iter().enumerate() {
                if let PortTarget::Endpoint(_) = p.target {
                    debug_assert_eq!(i as u16, t, "terminal ports must come first");
                    p.target = PortTarget::Endpoint(endpoint_location.len() as EndpointId);
                    endpoint_location.push((s as SwitchId, i as PortId));
                    t += 1;
                }
                ports.push(p);
            }
            terminals.push(t);
            port_offsets.push(ports.len() as u32);
        }
        Network {
            name,
            port_offsets,
            ports,
            terminals,
            endpoint_location,
            link_classes,
            shape,
            failed_links: 0,
            fault_root: None,
            nodes: None,
        }
    }

    /// Checks the wiring is consistent: every network port's peer points back at it.
    pub fn check_symmetric(&self) -> Result<(), String> {
        for s in 0..self.num_switches() as SwitchId {
            for (i, p) in self.ports(s).iter().enumerate() {
                if let PortTarget::Switch { switch, port } = p.target {
                    let back = self.ports(switch).get(port as usize).map(|q| q.target);
                    if back != Some(PortTarget::Switch { switch: s, port: i as PortId }) {
                        return Err(format!(
                            "switch {s} port {i} -> switch {switch} port {port} does not point back"
                        ));
                    }
                    if self.ports(switch)[port as usize].class != p.class {
                        return Err(format!("switch {s} port {i}: link classes differ at its two ends"));
                    }
                }
            }
        }
        Ok(())
    }
}

// GPU nodes on a fabric (`[topology.nodes]`): the layout a network of nodes keeps, here
// because a `Network` holds it; `nodes.rs` builds it and gives its methods.

/// How the GPUs of a node are joined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScaleUp {
    /// Every GPU links to the node's one scale-up switch (NVSwitch).
    #[default]
    Switch,
    /// Every GPU links to every other GPU of the node.
    Full,
    /// No scale-up links: GPUs of a node talk over the fabric.
    None,
}

/// Which fabric endpoint each GPU's NIC takes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// GPU `g` of `t` consecutive nodes on leaf `g` of a group of `gpus` leaves.
    #[default]
    Rail,
    /// A node's GPUs on consecutive fabric endpoints.
    Node,
}

/// Where the parts of a network of GPU nodes are, and the fabric they sit on
/// ([`Network::nodes`]).
#[derive(Clone, Debug)]
pub struct NodeLayout {
    /// GPUs per node.
    pub gpus: u32,
    /// Nodes.
    pub nodes: u32,
    /// Fabric planes (NIC ports per GPU, without `dual_tor`).
    pub planes: u32,
    /// Each NIC's two ports on the two leaves of a pair of one fabric.
    pub dual_tor: bool,
    /// How a node's GPUs are joined.
    pub scale_up: ScaleUp,
    /// Which fabric endpoint each NIC takes.
    pub placement: Placement,
    /// Rails of the `rail` placement: GPU `g`'s NIC on rail `g mod rails` (`gpus` by
    /// default).
    pub rails: u32,
    /// NCCL's PXN: traffic to a GPU of another node on another rail leaves by the NIC of
    /// its node's GPU on that rail ([`NodeLayout::exit_gpu`]).
    pub pxn: bool,
    /// Fabric endpoints per leaf (`rail` placement or `dual_tor`; 0 otherwise).
    pub(crate) leaf_endpoints: u32,
    /// Phits of a full packet between GPUs of a node (`None`: `router.packet_size`).
    pub scale_up_packet: Option<u16>,
    /// One plane of the fabric, as built (its faults included): what routings route.
    pub fabric: Arc<Network>,
}

/// A topology parameter out of range or inconsistent. The message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("topology.{key}: {message}")]
pub struct TopologyError {
    /// The offending configuration key (e.g. `sides[1]`).
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl TopologyError {
    /// Builds an error naming `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        Self { key: key.into(), message: message.into() }
    }
}

impl From<TopologyError> for base::settings::ConfigError {
    fn from(e: TopologyError) -> Self {
        base::settings::ConfigError::new(format!("topology.{}", e.key), e.message)
    }
}

/// Serde default for latencies: one cycle.
pub(crate) fn one() -> u64 {
    1
}

/// A terminal port; `from_port_lists` assigns the endpoint id.
pub(crate) fn terminal_port() -> Port {
    Port { target: PortTarget::Endpoint(0), class: 0 }
}

/// The port lists of a graph given as sorted adjacency lists (`adj[s]`: the neighbours of
/// `s` in id order, symmetric): `terminals` terminal ports on every switch, then one
/// network port of link class 1 per neighbour, in id order.
pub(crate) fn ports_from_sorted_adjacency(adj: &[Vec<u32>], terminals: usize) -> Vec<Vec<Port>> {
    (0..adj.len())
        .map(|s| {
            let mut ports = Vec::with_capacity(terminals + adj[s].len());
            ports.resize(terminals, terminal_port());
            for &v in &adj[s] {
                let back = adj[v as usize].binary_search(&(s as u32)).expect("symmetric adjacency");
                ports.push(Port {
                    target: PortTarget::Switch { switch: v, port: (terminals + back) as PortId },
                    class: 1,
                });
            }
            ports
        })
        .collect()
}

/// Checks a latency parameter is at least one cycle and fits 32 bits (the engine keeps
/// latencies in 32 bits).
pub(crate) fn check_latency(key: &str, value: u64) -> Result<(), TopologyError> {
    if value == 0 || value > u32::MAX as u64 {
        return Err(TopologyError::new(key, format!("must be in 1..={} cycles, got {value}", u32::MAX)));
    }
    Ok(())
}

/// What is known of a network from its parameters before it is built: its counts and its
/// longest minimal route, the memory estimate's inputs (`xnet-models`' `memory`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkSize {
    /// Switches.
    pub switches: u64,
    /// Endpoints.
    pub endpoints: u64,
    /// Ports of all switches (terminal, network and unconnected), at most: switches x radix.
    pub ports: u64,
    /// Switch-to-switch hops of the longest minimal route (the diameter; for random graphs
    /// an estimate from the Moore bound).
    pub hops: u32,
    /// Cycles a packet's head spends on links along that route, terminal links included.
    pub route_latency: u64,
}

impl NetworkSize {
    /// The same counts, with the longest minimal route: `hops` hops taking `route_latency`
    /// cycles on links.
    pub(crate) fn with_route(self, hops: u32, route_latency: u64) -> Self {
        Self { hops, route_latency, ..self }
    }
}

/// Checks that a network of `switches` switches, each with `endpoints_per_switch`
/// endpoints and at most `radix` ports, fits the id types: switch and endpoint ids and the
/// total port count in `u32`, port ids in `u16`. `key` names the parameter to blame.
pub(crate) fn check_size(
    key: &str,
    switches: u128,
    endpoints_per_switch: u128,
    radix: u128,
) -> Result<NetworkSize, TopologyError> {
    let max = u32::MAX as u128;
    if switches > max {
        return Err(TopologyError::new(
            key,
            format!("the network would have {switches} switches; the total must fit in u32 (<= {max})"),
        ));
    }
    let endpoints = switches * endpoints_per_switch;
    if endpoints > max {
        return Err(TopologyError::new(
            key,
            format!("the network would have {endpoints} endpoints; the total must fit in u32 (<= {max})"),
        ));
    }
    if radix > u16::MAX as u128 {
        return Err(TopologyError::new(
            key,
            format!("switches would have {radix} ports; the radix must fit in u16 (<= {})", u16::MAX),
        ));
    }
    let ports = switches * radix;
    if ports > max {
        return Err(TopologyError::new(
            key,
            format!("the network would have {ports} ports; the total must fit in u32 (<= {max})"),
        ));
    }
    Ok(NetworkSize {
        switches: switches as u64,
        endpoints: endpoints as u64,
        ports: ports as u64,
        hops: 0,
        route_latency: 0,
    })
}

/// Link classes from `(name, latency)` pairs, in order.
pub(crate) fn link_classes(list: &[(&str, u64)]) -> Vec<LinkClass> {
    list.iter()
        .map(|&(name, latency)| LinkClass { name: name.to_string(), latency, speed: LinkSpeed::ONE })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_map_agrees_with_the_endpoint_table() {
        for terminals in [vec![3u16, 3, 3, 3], vec![2, 0, 0, 5, 1, 0], vec![0, 4, 4], vec![1]] {
            let lists: Vec<Vec<Port>> =
                terminals.iter().map(|&t| (0..t).map(|_| terminal_port()).collect()).collect();
            let net = Network::from_port_lists(
                "test".into(),
                lists,
                link_classes(&[("terminal", 1)]),
                Shape::RandomRegular(crate::shape::RrgShape {
                    switches: terminals.len() as u32,
                    degree: 0,
                    endpoints_per_switch: 0,
                    seed_used: 0,
                }),
            );
            let map = net.endpoint_map();
            assert_eq!(map.len(), net.num_endpoints());
            for (e, &at) in net.endpoint_location.iter().enumerate() {
                assert_eq!(map.locate(e as EndpointId), at, "{terminals:?}, endpoint {e}");
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Structural invariants every builder must satisfy.
    pub(crate) fn check_network(net: &Network) {
        net.check_symmetric().unwrap();
        assert_eq!(net.terminals.len(), net.num_switches());
        for s in 0..net.num_switches() as SwitchId {
            let t = net.terminals[s as usize] as usize;
            for (i, p) in net.ports(s).iter().enumerate() {
                match p.target {
                    PortTarget::Endpoint(e) => {
                        assert!(i < t, "switch {s}: terminal port {i} after network ports");
                        assert_eq!(p.class, 0);
                        assert_eq!(net.endpoint_location[e as usize], (s, i as PortId));
                    }
                    PortTarget::Switch { switch, .. } => {
                        assert!(i >= t);
                        assert_ne!(switch, s, "self loop at switch {s}");
                        assert_ne!(p.class, 0);
                    }
                    PortTarget::Unconnected => assert!(i >= t),
                }
                assert!((p.class as usize) < net.link_classes.len());
            }
        }
        assert_eq!(net.link_classes[0].name, "terminal");
    }
}

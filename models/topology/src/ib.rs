//! How a network looks to InfiniBand tools: node names, IB port numbers and the `.net`
//! text that ibsim reads and `ibnetdiscover` prints.
//!
//! A fabric read from a `.net` file keeps its own names and port numbers (the switch and
//! HCA names, the IB port behind each xnet port), so tables written for it, or read from
//! OpenSM's dumps of it, name the same nodes and ports. Any other network gets synthetic
//! ones: switch `s` is `S<s>`, its port `p` is IB port `p + 1`, and the endpoint on its
//! terminal port `p` is the one-port HCA `H<s>_<p>`.

use super::{EndpointId, Network, PortId, PortTarget, Shape, SwitchId};
use crate::shape::FileShape;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// IB names and port numbers of a network's nodes (see the module doc).
#[derive(Clone, Debug)]
pub struct IbView {
    /// Switch node names, by switch id.
    pub switch_names: Vec<String>,
    /// Per endpoint: the HCA's node name and the HCA port it is.
    pub hcas: Vec<(String, u16)>,
    /// The IB port number of every port, indexed like [`Network::ports`].
    pub ib_ports: Vec<u16>,
}

impl IbView {
    /// The view of `net`: its file's names and ports, or synthetic ones.
    pub fn of(net: &Network) -> IbView {
        if let Shape::File(FileShape { names, ib: Some(ib), .. }) = &net.shape {
            return IbView { switch_names: names.clone(), hcas: ib.hcas.clone(), ib_ports: ib.ports.clone() };
        }
        let switch_names = match &net.shape {
            Shape::File(FileShape { names, .. }) => names.clone(),
            _ => (0..net.num_switches()).map(|s| format!("S{s}")).collect(),
        };
        let hcas = net.endpoint_location.iter().map(|&(s, p)| (format!("H{s}_{p}"), 1)).collect();
        let mut ib_ports = Vec::with_capacity(net.ports.len());
        for s in 0..net.num_switches() as SwitchId {
            ib_ports.extend(1..=net.radix(s) as u16);
        }
        IbView { switch_names, hcas, ib_ports }
    }

    /// The IB port number of port `port` of switch `s`.
    pub fn ib_port(&self, net: &Network, s: SwitchId, port: PortId) -> u16 {
        self.ib_ports[net.port_offsets[s as usize] as usize + port as usize]
    }

    /// The port of switch `s` that is IB port `ib`, if any is.
    pub fn port_of(&self, net: &Network, s: SwitchId, ib: u16) -> Option<PortId> {
        let (a, b) = (net.port_offsets[s as usize] as usize, net.port_offsets[s as usize + 1] as usize);
        self.ib_ports[a..b].iter().position(|&p| p == ib).map(|p| p as PortId)
    }

    /// The ports of switch `s` in IB port order: the order in which OpenSM's routing
    /// engines visit them.
    pub fn ports_in_ib_order(&self, net: &Network, s: SwitchId) -> Vec<PortId> {
        let mut ports: Vec<PortId> = (0..net.ports(s).len() as PortId).collect();
        ports.sort_by_key(|&p| self.ib_port(net, s, p));
        ports
    }

    /// The switches in the order OpenSM's switch table holds them on a fabric that ibsim
    /// simulates from this network's `.net` text: ibsim gives the `i`-th switch record GUID
    /// `0x200000 + i`, and OpenSM's maps compare GUIDs byte-swapped (on x86), so the order
    /// is by id below 256 switches and interleaved by the id's low byte above (0, 256, 1,
    /// 257, ...). OpenSM breaks ties in this order; a real fabric's own GUIDs may order
    /// its switches otherwise (the `.net` files xnet reads carry none).
    pub fn opensm_switch_order(net: &Network) -> Vec<SwitchId> {
        let mut order: Vec<SwitchId> = (0..net.num_switches() as SwitchId).collect();
        order.sort_by_key(|&s| (0x20_0000u64 + s as u64).swap_bytes());
        order
    }

    /// The node GUID xnet gives switch `s` in the dumps it writes (synthetic: the files
    /// xnet reads carry none).
    pub fn switch_guid(s: SwitchId) -> u64 {
        0x0002_c900_a000_0000 | s as u64
    }

    /// The port GUID xnet gives endpoint `e`.
    pub fn hca_guid(e: EndpointId) -> u64 {
        0x0002_c900_b000_0000 | e as u64
    }

    /// The fabric as a `.net` file: a `Switch` record per switch (its connected ports, by
    /// IB port), then an `Hca` record per HCA, in endpoint order.
    pub fn net_text(&self, net: &Network) -> String {
        let mut out = format!("# {} (written by xnet topo --export)\n\n", net.name);
        for s in 0..net.num_switches() as SwitchId {
            let ports = net.ports(s);
            let top = (0..ports.len()).map(|p| self.ib_port(net, s, p as PortId)).max().unwrap_or(0);
            let _ = writeln!(out, "Switch\t{top} \"{}\"", self.switch_names[s as usize]);
            let mut lines: Vec<(u16, String)> = Vec::new();
            for (p, port) in ports.iter().enumerate() {
                let ib = self.ib_port(net, s, p as PortId);
                match port.target {
                    PortTarget::Endpoint(e) => {
                        let (name, hca_port) = &self.hcas[e as usize];
                        lines.push((ib, format!("\"{name}\"[{hca_port}]")));
                    }
                    PortTarget::Switch { switch, port: back } => {
                        let far = self.ib_port(net, switch, back);
                        lines.push((ib, format!("\"{}\"[{far}]", self.switch_names[switch as usize])));
                    }
                    PortTarget::Unconnected => {}
                }
            }
            lines.sort();
            for (ib, far) in lines {
                let _ = writeln!(out, "[{ib}]\t{far}");
            }
            out.push('\n');
        }
        // HCAs in order of their first endpoint; their ports in HCA port order.
        type Record = (usize, Vec<(u16, EndpointId)>);
        let mut hcas: BTreeMap<&str, Record> = BTreeMap::new();
        for (e, (name, hca_port)) in self.hcas.iter().enumerate() {
            hcas.entry(name).or_insert((e, Vec::new())).1.push((*hca_port, e as EndpointId));
        }
        let mut records: Vec<_> = hcas.into_iter().collect();
        records.sort_by_key(|(_, (first, _))| *first);
        for (name, (_, mut ports)) in records {
            ports.sort();
            let top = ports.iter().map(|&(p, _)| p).max().unwrap_or(1);
            let _ = writeln!(out, "Hca\t{top} \"{name}\"");
            for (hca_port, e) in ports {
                let (s, p) = net.endpoint_location[e as usize];
                let _ = writeln!(
                    out,
                    "[{hca_port}]\t\"{}\"[{}]",
                    self.switch_names[s as usize],
                    self.ib_port(net, s, p)
                );
            }
            out.push('\n');
        }
        out
    }
}

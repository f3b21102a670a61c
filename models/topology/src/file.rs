//! A fabric read from a file (`topology.kind = "file"`): an InfiniBand fabric as
//! `ibnetdiscover` prints it or ibsim reads it (`.net`), or a plain edge list. This is how
//! a production fabric, or one another tool routes (OpenSM on ibsim), is simulated.
//!
//! The models crate reads no files: the entry declares `path` as a file key, so the front
//! end reads `topology.path` and passes the text as `topology.contents` (a config that
//! gives `contents` itself needs no file), and the fabric is part of the configuration
//! recorded with the results.
//!
//! **`.net` (`format = "ibnet"`)**: records of a header line `Switch N "name"` or
//! `Hca|Ca N "name"`, then one line per connected port, `[p] "remote"[rp]`, anything after
//! that (GUIDs, `# comments`, speeds) ignored, as are `vendid=`-style lines. Switches are
//! numbered in file order; every HCA port cabled to a switch is an endpoint on that switch.
//! A switch's ports become its terminal ports (in IB port order) then its switch-to-switch
//! ports (in IB port order); unconnected ports are dropped. Both ends of every link must
//! name each other.
//!
//! **Edge list (`format = "edges"`)**: one link per line, `a b` (switch names, any tokens),
//! `#` comments; switches numbered by first appearance, network ports in line order, after
//! `endpoints_per_switch` terminal ports on every switch.

use super::{
    check_latency, check_size, link_classes, terminal_port, Network, NetworkSize, Port, PortId, PortTarget,
    Shape, TopologyError,
};
use crate::family::{Family, TopologyEntry, LATENCY, TERMINAL_LATENCY};
use crate::shape::{FileIb, FileShape};
use base::settings::{typed, ConfigError};
use base::settings::{FileForm, FileKey, Setting};
use serde::Deserialize;
use std::collections::HashMap;
use toml::Table;

/// The `[topology]` table of a fabric read from a file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileParams {
    /// The file (read by the front end, relative to the working directory).
    #[serde(default)]
    path: Option<String>,
    /// The file's text (filled in from `path`).
    #[serde(default)]
    contents: Option<String>,
    /// `auto`, `ibnet` or `edges`.
    #[serde(default = "auto")]
    format: String,
    /// Edge lists: endpoints on every switch.
    #[serde(default)]
    endpoints_per_switch: Option<u32>,
    #[serde(default = "super::one")]
    terminal_latency: u64,
    #[serde(default = "super::one")]
    link_latency: u64,
}

fn auto() -> String {
    "auto".into()
}

/// A parsed fabric: per switch its name, endpoints (terminal ports) and links in port
/// order as `(neighbour, index of this link among the neighbour's links)`.
#[derive(Debug)]
struct Fabric {
    names: Vec<String>,
    endpoints: Vec<u32>,
    links: Vec<Vec<(u32, u32)>>,
    /// `.net` fabrics: per switch, the IB ports of its terminal ports then of its links,
    /// and the `(HCA name, HCA port)` on each terminal port.
    ib: Option<Vec<SwitchIb>>,
}

/// A `.net` switch's IB port per xnet port, and the `(HCA name, HCA port)` on each of its
/// terminal ports.
type SwitchIb = (Vec<u16>, Vec<(String, u16)>);

/// The checked parameters with the fabric parsed.
struct FileFamily {
    params: FileParams,
    fabric: Fabric,
    /// A bound on the diameter: twice the eccentricity of switch 0 (the memory estimate's
    /// longest route, before the network is built and searched).
    hops_bound: u32,
}

/// Twice the largest BFS distance from switch 0 (at least 1): no two switches are further
/// apart. Unreached switches are left to the build's connectivity check.
fn diameter_bound(links: &[Vec<(u32, u32)>]) -> u32 {
    let mut dist = vec![u32::MAX; links.len()];
    let mut queue = std::collections::VecDeque::from([0u32]);
    dist[0] = 0;
    let mut far = 0;
    while let Some(s) = queue.pop_front() {
        far = far.max(dist[s as usize]);
        for &(v, _) in &links[s as usize] {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[s as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    (2 * far).max(1)
}

/// One `[p] "remote"[rp]` line of a `.net` record.
fn port_line(line: &str) -> Option<(u32, String, u32)> {
    let bracket = |s: &str| -> Option<(u32, usize)> {
        let open = s.find('[')?;
        let close = open + s[open..].find(']')?;
        Some((s[open + 1..close].trim().parse().ok()?, close + 1))
    };
    let (local, after) = bracket(line)?;
    let rest = &line[after..];
    // ibnetdiscover puts the port GUID in parentheses before the remote name.
    let q1 = rest.find('"')?;
    let q2 = q1 + 1 + rest[q1 + 1..].find('"')?;
    let remote = rest[q1 + 1..q2].to_string();
    let (remote_port, _) = bracket(&rest[q2 + 1..])?;
    Some((local, remote, remote_port))
}

/// An InfiniBand fabric as `ibnetdiscover` writes it (`.net`): its node records and port
/// lines, every cable named from both ends; switches in file order, HCAs as endpoints.
fn parse_ibnet(text: &str) -> Result<Fabric, TopologyError> {
    let nodes = ib_records(text)?;
    let cables = IbCables::resolve(&nodes)?;
    Ok(cables.fabric())
}

/// A node record of a `.net` file.
#[derive(Clone, Copy, PartialEq)]
enum IbKind {
    Switch,
    Hca,
}

/// A node of a `.net` file: its kind, name and port lines.
struct IbNode {
    kind: IbKind,
    name: String,
    cables: Vec<IbCable>,
}

/// A port line: the local IB port, the remote node's name and IB port, the line number.
struct IbCable {
    local: u32,
    remote: String,
    remote_port: u32,
    line: usize,
}

/// The node records of a `.net` file in file order, each with its port lines, checked line
/// by line (ports 1 to 254, no port cabled twice or to its own node).
fn ib_records(text: &str) -> Result<Vec<IbNode>, TopologyError> {
    let mut nodes: Vec<IbNode> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        let lineno = number + 1;
        if line.is_empty() {
            continue;
        }
        let word = line.split_whitespace().next().unwrap_or("");
        let kind = match word.to_ascii_lowercase().as_str() {
            "switch" => Some(IbKind::Switch),
            "hca" | "ca" => Some(IbKind::Hca),
            _ => None,
        };
        if let Some(kind) = kind {
            let name = line.split('"').nth(1).ok_or_else(|| {
                TopologyError::new("contents", format!("line {lineno}: `{word}` without a \"name\""))
            })?;
            nodes.push(IbNode { kind, name: name.to_string(), cables: Vec::new() });
        } else if line.starts_with('[') {
            let (local, remote, remote_port) = port_line(line).ok_or_else(|| {
                TopologyError::new(
                    "contents",
                    format!("line {lineno}: cannot read `{line}` as a port line `[p] \"remote\"[rp]`"),
                )
            })?;
            // IB ports are 1 to 254 (port 0 is a switch's own management port).
            if let Some(bad) = [local, remote_port].into_iter().find(|&p| p == 0 || p > 254) {
                return Err(TopologyError::new(
                    "contents",
                    format!("line {lineno}: IB port {bad}; cabled ports are 1 to 254"),
                ));
            }
            let node = nodes.last_mut().ok_or_else(|| {
                TopologyError::new("contents", format!("line {lineno}: a port line before any Switch or Hca"))
            })?;
            if let Some(first) = node.cables.iter().find(|c| c.local == local) {
                return Err(TopologyError::new(
                    "contents",
                    format!(
                        "line {lineno}: \"{}\" port {local} is cabled twice (first on line {})",
                        node.name, first.line
                    ),
                ));
            }
            if remote == node.name {
                return Err(TopologyError::new(
                    "contents",
                    format!("line {lineno}: \"{}\" port {local} is cabled to its own node", node.name),
                ));
            }
            node.cables.push(IbCable { local, remote, remote_port, line: lineno });
        }
        // Other lines (vendid=, devid=, sysimgguid=, ...) describe the node: ignored.
    }
    Ok(nodes)
}

/// The cables of a `.net` fabric per switch, both ends checked.
struct IbCables {
    /// Switch names, in switch id (file) order.
    names: Vec<String>,
    /// Per switch: its HCA ports.
    endpoints: Vec<u32>,
    /// Per switch, its switch-to-switch ports: (local IB port, remote switch, remote IB port).
    cabled: Vec<Vec<(u32, u32, u32)>>,
    /// Per switch, its terminal ports: (local IB port, HCA name, HCA port).
    attached: Vec<Vec<(u32, String, u32)>>,
}

impl IbCables {
    /// Resolves every cable of `nodes` to its far end, which must exist and name it back;
    /// switches are numbered in file order.
    fn resolve(nodes: &[IbNode]) -> Result<Self, TopologyError> {
        let mut index: HashMap<&str, usize> = HashMap::new();
        for (k, node) in nodes.iter().enumerate() {
            if index.insert(node.name.as_str(), k).is_some() {
                return Err(TopologyError::new(
                    "contents",
                    format!("node \"{}\" is described twice", node.name),
                ));
            }
        }
        let switch_ids: Vec<Option<u32>> = {
            let mut next = 0u32;
            nodes
                .iter()
                .map(|node| {
                    (node.kind == IbKind::Switch).then(|| {
                        next += 1;
                        next - 1
                    })
                })
                .collect()
        };
        let switches = switch_ids.iter().flatten().count();
        if switches == 0 {
            return Err(TopologyError::new("contents", "no Switch records"));
        }
        let mut out = IbCables {
            names: Vec::with_capacity(switches),
            endpoints: vec![0u32; switches],
            cabled: vec![Vec::new(); switches],
            attached: vec![Vec::new(); switches],
        };
        for (k, node) in nodes.iter().enumerate() {
            let name = &node.name;
            for cable in &node.cables {
                let (local, remote, rport, lineno) =
                    (cable.local, &cable.remote, cable.remote_port, cable.line);
                let Some(&r) = index.get(remote.as_str()) else {
                    return Err(TopologyError::new(
                        "contents",
                        format!(
                            "line {lineno}: \"{name}\" port {local} leads to \"{remote}\", which has no record"
                        ),
                    ));
                };
                // The far end must name this port back.
                let back = nodes[r]
                    .cables
                    .iter()
                    .any(|c| c.local == rport && &c.remote == name && c.remote_port == local);
                if !back {
                    return Err(TopologyError::new(
                        "contents",
                        format!(
                            "line {lineno}: \"{name}\"[{local}] -> \"{remote}\"[{rport}], but \"{remote}\" port \
                             {rport} does not lead back to \"{name}\"[{local}]"
                        ),
                    ));
                }
                match (node.kind, nodes[r].kind) {
                    (IbKind::Switch, IbKind::Switch) => out.cabled[switch_ids[k].expect("a switch") as usize]
                        .push((local, switch_ids[r].expect("a switch"), rport)),
                    (IbKind::Hca, IbKind::Switch) => {
                        let s = switch_ids[r].expect("a switch") as usize;
                        out.endpoints[s] += 1;
                        out.attached[s].push((rport, name.clone(), local));
                    }
                    (IbKind::Switch, IbKind::Hca) => {}
                    (IbKind::Hca, IbKind::Hca) => {
                        return Err(TopologyError::new(
                            "contents",
                            format!(
                            "line {lineno}: \"{name}\" is cabled to another HCA, \"{remote}\": not supported"
                        ),
                        ))
                    }
                }
            }
            if node.kind == IbKind::Switch {
                out.names.push(name.clone());
            }
        }
        Ok(out)
    }

    /// The fabric: network ports in IB port order (a link's index at its far end is found by
    /// the far end's IB port among that switch's sorted ports), terminal ports by IB port.
    fn fabric(self) -> Fabric {
        let IbCables { names, endpoints, mut cabled, attached } = self;
        for list in &mut cabled {
            list.sort_unstable();
        }
        let links = cabled
            .iter()
            .map(|list| {
                list.iter()
                    .map(|&(_, r, rport)| {
                        let at = cabled[r as usize].partition_point(|&(p, _, _)| p < rport) as u32;
                        (r, at)
                    })
                    .collect()
            })
            .collect();
        // Checked to be 1 to 254 when read.
        let ib_port = |p: u32| p as u16;
        let ib = attached
            .into_iter()
            .zip(&cabled)
            .map(|(mut hcas, list)| {
                hcas.sort_unstable();
                let ports =
                    hcas.iter().map(|h| ib_port(h.0)).chain(list.iter().map(|c| ib_port(c.0))).collect();
                (ports, hcas.into_iter().map(|(_, name, p)| (name, ib_port(p))).collect())
            })
            .collect();
        Fabric { names, endpoints, links, ib: Some(ib) }
    }
}

fn parse_edges(text: &str, endpoints_per_switch: u32) -> Result<Fabric, TopologyError> {
    let mut index: HashMap<String, u32> = HashMap::new();
    let mut names = Vec::new();
    let mut links: Vec<Vec<(u32, u32)>> = Vec::new();
    let mut id = |name: &str, names: &mut Vec<String>, links: &mut Vec<Vec<(u32, u32)>>| -> u32 {
        *index.entry(name.to_string()).or_insert_with(|| {
            names.push(name.to_string());
            links.push(Vec::new());
            names.len() as u32 - 1
        })
    };
    for (number, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [a, b] = words[..] else {
            return Err(TopologyError::new(
                "contents",
                format!("line {}: an edge is two switch names, got `{line}`", number + 1),
            ));
        };
        if a == b {
            return Err(TopologyError::new(
                "contents",
                format!("line {}: a link from `{a}` to itself", number + 1),
            ));
        }
        let (a, b) = (id(a, &mut names, &mut links), id(b, &mut names, &mut links));
        let (ia, ib) = (links[a as usize].len() as u32, links[b as usize].len() as u32);
        links[a as usize].push((b, ib));
        links[b as usize].push((a, ia));
    }
    if names.is_empty() {
        return Err(TopologyError::new("contents", "no edges"));
    }
    Ok(Fabric { endpoints: vec![endpoints_per_switch; names.len()], names, links, ib: None })
}

impl FileFamily {
    fn parse(table: &Table) -> Result<Box<dyn Family>, ConfigError> {
        let params: FileParams = typed("topology", table)?;
        let text = params.contents.as_deref().ok_or_else(|| {
            ConfigError::new(
                "topology.path",
                match &params.path {
                    Some(p) => format!("`{p}` was not read (only the xnet command reads files)"),
                    None => {
                        "missing: the fabric file to read (.net from ibnetdiscover or ibsim, or an edge list)"
                            .to_string()
                    }
                },
            )
        })?;
        let format = match params.format.as_str() {
            "auto" => {
                let first = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
                let word = first.and_then(|l| l.split_whitespace().next()).unwrap_or("").to_ascii_lowercase();
                let header = ["switch", "hca", "ca"].contains(&word.as_str());
                let attribute = ["vendid=", "devid=", "sysimgguid=", "switchguid=", "caguid="]
                    .iter()
                    .any(|w| word.starts_with(w));
                if header || attribute {
                    "ibnet"
                } else {
                    "edges"
                }
            }
            f @ ("ibnet" | "edges") => f,
            other => {
                return Err(ConfigError::new(
                    "topology.format",
                    base::settings::unknown_message(other, ["auto", "ibnet", "edges"].into_iter()),
                ))
            }
        };
        let fabric = match format {
            "ibnet" => {
                if params.endpoints_per_switch.is_some() {
                    return Err(ConfigError::new(
                        "topology.endpoints_per_switch",
                        "an ibnet fabric has its own endpoints (its HCAs); remove the key",
                    ));
                }
                parse_ibnet(text)?
            }
            _ => {
                let t = params.endpoints_per_switch.ok_or_else(|| {
                    ConfigError::new("topology.endpoints_per_switch", "missing: an edge list needs it (>= 1)")
                })?;
                if t == 0 {
                    return Err(ConfigError::new("topology.endpoints_per_switch", "must be >= 1, got 0"));
                }
                parse_edges(text, t)?
            }
        };
        if fabric.endpoints.iter().all(|&e| e == 0) {
            return Err(ConfigError::new("topology.contents", "the fabric has no endpoints (HCAs)"));
        }
        let hops_bound = diameter_bound(&fabric.links);
        Ok(Box::new(FileFamily { params, fabric, hops_bound }))
    }
}

impl Family for FileFamily {
    fn size(&self) -> Result<NetworkSize, TopologyError> {
        check_latency("terminal_latency", self.params.terminal_latency)?;
        check_latency("link_latency", self.params.link_latency)?;
        let f = &self.fabric;
        let radix =
            (0..f.names.len()).map(|s| f.endpoints[s] as u128 + f.links[s].len() as u128).max().unwrap_or(0);
        let most = f.endpoints.iter().copied().max().unwrap_or(0) as u128;
        let mut size = check_size("contents", f.names.len() as u128, most, radix)?;
        size.endpoints = f.endpoints.iter().map(|&e| e as u64).sum();
        size.ports = (0..f.names.len()).map(|s| f.endpoints[s] as u64 + f.links[s].len() as u64).sum();
        let hops = self.hops_bound;
        Ok(size.with_route(hops, 2 * self.params.terminal_latency + hops as u64 * self.params.link_latency))
    }

    fn build(&self, _seed: u64) -> Result<Network, TopologyError> {
        self.size()?;
        let f = &self.fabric;
        let lists = (0..f.names.len())
            .map(|s| {
                let t = f.endpoints[s] as usize;
                let mut ports = vec![terminal_port(); t];
                for &(r, at) in &f.links[s] {
                    let port = (f.endpoints[r as usize] + at) as PortId;
                    ports.push(Port { target: PortTarget::Switch { switch: r, port }, class: 1 });
                }
                ports
            })
            .collect();
        let path = self.params.path.clone().unwrap_or_else(|| "inline".into());
        let name = format!(
            "file({path}: {} switches, {} endpoints)",
            f.names.len(),
            f.endpoints.iter().sum::<u32>()
        );
        let net = Network::from_port_lists(
            name,
            lists,
            link_classes(&[
                ("terminal", self.params.terminal_latency),
                ("network", self.params.link_latency),
            ]),
            Shape::File(FileShape {
                path,
                names: f.names.clone(),
                ib: f.ib.as_ref().map(|ib| FileIb {
                    ports: ib.iter().flat_map(|(ports, _)| ports.iter().copied()).collect(),
                    hcas: ib.iter().flat_map(|(_, hcas)| hcas.iter().cloned()).collect(),
                }),
            }),
        );
        net.check_symmetric().map_err(|e| TopologyError::new("contents", e))?;
        Ok(net)
    }
}

/// `file` in the topology registry.
pub const FILE: TopologyEntry = TopologyEntry {
    name: "file",
    doc: "a fabric read from a file: InfiniBand `.net` as ibnetdiscover prints it or ibsim reads it (switches in file order, HCAs as endpoints), or an edge list `a b` per line with endpoints_per_switch",
    settings: &[
        Setting { key: "path", default: "required", doc: "the fabric file, relative to the working directory (the xnet command reads it into `contents`)" },
        Setting { key: "contents", default: "from path", doc: "the fabric's text: filled in from `path` by the xnet command (and so recorded with the results); give it instead of `path` to inline a fabric" },
        Setting { key: "format", default: "auto", doc: "auto (a first word Switch, Hca, Ca or vendid= means ibnet), ibnet or edges" },
        Setting { key: "endpoints_per_switch", default: "edge lists: required", doc: "endpoints on every switch of an edge list (an ibnet fabric has its HCAs)" },
        TERMINAL_LATENCY,
        LATENCY,
    ],
    files: &[FileKey { path: "path", contents: "contents", what: "the fabric file", form: FileForm::Text }],
    parse: FileFamily::parse,
};

#[cfg(test)]
mod tests {
    use super::*;

    const NET: &str = r#"
# two switches, two parallel links, an HCA on each
Switch	8 "S1"
[1]	"H1"[1]
[3]	"S2"[5]	# a comment
[5]	"S2"[3]

Switch 8 "S2"
[3]	"S1"[5]
[5]	"S1"[3]
[7]	"H2"[1]

Hca	1 "H1"
[1](2c9030000a0b1) 	"S1"[1]		# "host one" lid 3 4xQDR
Hca	1 "H2"
[1]	"S2"[7]
"#;

    fn family(text: &str, extra: &str) -> Result<Box<dyn Family>, ConfigError> {
        let mut t: Table = toml::from_str(extra).unwrap();
        t.insert("contents".into(), toml::Value::String(text.into()));
        FileFamily::parse(&t)
    }

    #[test]
    fn an_ibnet_fabric_keeps_its_switches_hcas_and_port_order() {
        let net = family(NET, "").unwrap().build(0).unwrap();
        assert_eq!(net.num_switches(), 2);
        assert_eq!(net.num_endpoints(), 2);
        // S1: terminal port 0, then IB ports 3 and 5 -> S2's IB ports 5 and 3, which are
        // S2's network ports 1 and 0 (after its terminal port: 2 and 1).
        let ports = net.ports(0);
        assert_eq!(ports[1].target, PortTarget::Switch { switch: 1, port: 2 });
        assert_eq!(ports[2].target, PortTarget::Switch { switch: 1, port: 1 });
        net.check_symmetric().unwrap();
        let summary = crate::metrics::summarize(&net);
        assert_eq!((summary.network_links, summary.parallel_links), (2, 1));
    }

    #[test]
    fn an_edge_list_numbers_switches_by_first_appearance() {
        let net = family("a b\nb c # x\n\nc a\n", "endpoints_per_switch = 2").unwrap().build(0).unwrap();
        assert_eq!((net.num_switches(), net.num_endpoints()), (3, 6));
        assert_eq!(net.ports(1)[2].target, PortTarget::Switch { switch: 0, port: 2 });
        assert_eq!(net.ports(1)[3].target, PortTarget::Switch { switch: 2, port: 2 });
        assert_eq!(crate::metrics::summarize(&net).parallel_links, 0);
        // A line given twice, or reversed, is a second link between the same switches.
        let twice =
            family("a b\nb c\nc a\nb a\na b\n", "endpoints_per_switch = 1").unwrap().build(0).unwrap();
        assert_eq!(crate::metrics::summarize(&twice).parallel_links, 2);
    }

    #[test]
    fn bad_fabrics_are_refused_with_the_line() {
        let err =
            |text: &str, extra: &str| family(text, extra).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err("Switch 4 \"S\"\n[1] \"X\"[1]\n", "").contains("line 2"));
        assert!(err("Switch 4 \"S\"\n[1] \"H\"[2]\nHca 1 \"H\"\n[1] \"S\"[1]\n", "")
            .contains("does not lead back"));
        assert!(err("a b c\n", "endpoints_per_switch = 1").contains("line 1"));
        assert!(err("a b\n", "").contains("endpoints_per_switch"));
        assert!(err("Switch 4 \"S\"\n", "").contains("no endpoints"));
        assert!(err("Switch 4 \"S\"\n[1] \"H\"[1]\n[1] \"H\"[1]\nHca 1 \"H\"\n[1] \"S\"[1]\n", "")
            .contains("port 1 is cabled twice (first on line 2)"));
        assert!(err("Switch 4 \"S\"\n[2] \"S\"[3]\n[3] \"S\"[2]\n", "").contains("its own node"));
        // An edge list whose names look like node kinds is still an edge list.
        assert!(family("switch1 switch2\n", "endpoints_per_switch = 1").is_ok());
        let mut none = Table::new();
        none.insert("path".into(), toml::Value::String("x.net".into()));
        assert!(FileFamily::parse(&none).err().unwrap().to_string().contains("was not read"));
    }
}

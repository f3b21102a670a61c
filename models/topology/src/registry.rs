//! The topology registry: each family's name, doc, documented keys and parser, and the
//! keys every family shares (`failed_links`, `fault_seed`, `fault_shape`, `fault_size`,
//! `link_speeds`, and the `[topology.nodes]` table of GPU nodes on the fabric).
//!
//! A family lives in one file that defines its parameters (a struct with
//! `deny_unknown_fields`), implements [`Family`] for them and defines its
//! [`TopologyEntry`] (see [`crate::family`]); [`TOPOLOGIES`] lists the entries.

use super::faults::{fail_random_links_of_class, fail_shape, FaultShape, FAULT_SHAPES};
use crate::family::{Family, TopologyEntry};
use crate::network::{LinkSpeed, Network, NetworkSize};
use crate::nodes::NodesParams;
use base::settings::ConfigError;
use base::settings::{names, unknown, Setting};
use toml::{Table, Value};

/// Every family `topology.kind` accepts, in the order `xnet list` shows them.
pub const TOPOLOGIES: &[TopologyEntry] = &[
    super::hyperx::HYPERX,
    super::dragonfly::DRAGONFLY,
    super::torus::TORUS,
    super::torus::MESH,
    super::fattree::FAT_TREE,
    super::clos::CLOS,
    super::rrg::RANDOM_REGULAR,
    super::slimfly::SLIM_FLY,
    super::file::FILE,
];

/// The keys every family takes besides its own.
pub const COMMON_KEYS: &[Setting] = &[
    Setting {
        key: "failed_links",
        default: "0",
        doc: "random bidirectional switch-to-switch links that fail, never disconnecting the network (a link whose loss would is skipped; too many is an error)",
    },
    Setting {
        key: "failed_link_class",
        default: "any",
        doc: "draw the failed links among the links of this class only (a Dragonfly's `global` cables: its routings route around failed global links, not local ones)",
    },
    Setting { key: "fault_seed", default: "`simulation.seed`", doc: "seed of the faults' draw" },
    Setting {
        key: "fault_shape",
        default: "none",
        doc: "HyperX: a named shape of failed links around switch 0, the escape subnetwork's default root (the SurePath paper's (Camarero et al., FTXS'24)): row, subplane, cross (2D), subcube, star (3D); failed_links adds random faults to it",
    },
    Setting {
        key: "fault_size",
        default: "the paper's: row all, subplane 5, cross 11, subcube 3, star 7",
        doc: "switches along each side of the shape",
    },
    Setting {
        key: "link_speeds",
        default: "every class 1",
        doc: "phits a cycle of each link class, by the class's name (`xnet topo` lists them): a number from 1/1024 to 1024 or a fraction as a string (`{ terminal = 1, global = \"1/2\" }`); a packet of S phits holds a link ceil(S / speed) cycles and crosses a switch cut-through at the slowest link's pace; a port's buffers scale with its speed above 1; `traffic.load` is against the terminal links' speed (the NICs' on GPU nodes)",
    },
];

/// A `[topology]` table, checked: its family's parameters and the faults to inject.
pub struct TopologySpec {
    family: Box<dyn Family>,
    failed_links: u32,
    failed_link_class: Option<String>,
    fault_seed: u64,
    fault_shape: Option<&'static FaultShape>,
    fault_size: Option<u32>,
    /// `link_speeds`: the speed of each named link class, in the table's order.
    link_speeds: Vec<(String, LinkSpeed)>,
    /// `[topology.nodes]`: GPU nodes on the fabric.
    nodes: Option<NodesParams>,
    /// Default seed of random graphs.
    seed: u64,
}

impl TopologySpec {
    /// Checks `table`; `seed` is the run's seed (default of random graphs and faults).
    pub fn parse(table: &Table, seed: u64) -> Result<Self, ConfigError> {
        let mut t = table.clone();
        let failed_links = match t.remove("failed_links") {
            None => 0,
            Some(Value::Integer(n)) if (0..=u32::MAX as i64).contains(&n) => n as u32,
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.failed_links",
                    format!("must be a count >= 0, got {other}"),
                ))
            }
        };
        let failed_link_class = match t.remove("failed_link_class") {
            None => None,
            Some(Value::String(name)) => Some(name),
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.failed_link_class",
                    format!("must be a link class's name, got {}", other.type_str()),
                ))
            }
        };
        let fault_seed = match t.remove("fault_seed") {
            None => seed,
            Some(value) => {
                base::settings::seed_of(&value).map_err(|e| ConfigError::new("topology.fault_seed", e))?
            }
        };
        let fault_shape = match t.remove("fault_shape") {
            None => None,
            Some(Value::String(name)) => {
                Some(FAULT_SHAPES.iter().find(|f| f.name == name).ok_or_else(|| {
                    unknown("topology.fault_shape", &name, FAULT_SHAPES.iter().map(|f| f.name))
                })?)
            }
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.fault_shape",
                    format!("must be a string, got {}", other.type_str()),
                ))
            }
        };
        let fault_size = match t.remove("fault_size") {
            None => None,
            Some(Value::Integer(n)) if (2..=u32::MAX as i64).contains(&n) => Some(n as u32),
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.fault_size",
                    format!("must be an integer >= 2, got {other}"),
                ))
            }
        };
        let link_speeds = match t.remove("link_speeds") {
            None => Vec::new(),
            Some(Value::Table(speeds)) => speeds
                .iter()
                .map(|(class, value)| {
                    LinkSpeed::parse(value)
                        .map(|speed| (class.clone(), speed))
                        .map_err(|e| ConfigError::new(format!("topology.link_speeds.{class}"), e))
                })
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.link_speeds",
                    format!(
                        "must be a table of link class names to speeds ({{ terminal = 1, global = 0.5 }}), got {}",
                        other.type_str()
                    ),
                ))
            }
        };
        let nodes = match t.remove("nodes") {
            None => None,
            Some(Value::Table(nodes)) => {
                Some(base::settings::typed::<NodesParams>("topology.nodes", &nodes)?)
            }
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.nodes",
                    format!("must be a table ([topology.nodes] gpus = 8), got {}", other.type_str()),
                ))
            }
        };
        if fault_size.is_some() && fault_shape.is_none() {
            return Err(ConfigError::new("topology.fault_size", "needs topology.fault_shape"));
        }
        let known = || TOPOLOGIES.iter().map(|e| e.name);
        let entry = match t.remove("kind") {
            Some(Value::String(k)) => TOPOLOGIES
                .iter()
                .find(|e| e.name == k)
                .ok_or_else(|| unknown("topology.kind", &k, known()))?,
            Some(other) => {
                return Err(ConfigError::new(
                    "topology.kind",
                    format!("must be a string, got {}", other.type_str()),
                ))
            }
            None => {
                return Err(ConfigError::new("topology.kind", format!("missing; known: {}", names(known()))))
            }
        };
        Ok(Self {
            family: (entry.parse)(&t)?,
            failed_links,
            failed_link_class,
            fault_seed,
            fault_shape,
            fault_size,
            link_speeds,
            nodes,
            seed,
        })
    }

    /// The network's counts, checked, without building it.
    pub fn size(&self) -> Result<NetworkSize, ConfigError> {
        let fabric = self.family.size()?;
        Ok(match &self.nodes {
            None => fabric,
            Some(nodes) => crate::nodes::size(nodes, fabric)?,
        })
    }

    /// Builds the network, fails its links, puts GPU nodes on it and sets its link classes'
    /// speeds.
    pub fn build(&self) -> Result<Network, ConfigError> {
        let mut net = self.family.build(self.seed)?;
        self.fail_links(&mut net)?;
        if let Some(nodes) = &self.nodes {
            net = crate::nodes::build(net, nodes)?;
        }
        for (class, speed) in &self.link_speeds {
            let Some(c) = net.link_classes.iter_mut().find(|c| &c.name == class) else {
                let names = net.link_classes.iter().map(|c| c.name.as_str());
                return Err(ConfigError::new(
                    format!("topology.link_speeds.{class}"),
                    format!(
                        "this network has no link class `{class}`; its classes: {}",
                        names.collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            c.speed = *speed;
        }
        if let Some(layout) = net.nodes.clone() {
            if !self.link_speeds.iter().any(|(class, _)| class == "terminal") {
                // A GPU's own link carries what its NIC ports and scale-up link carry together.
                let speed_of = |name: &str| net.link_classes.iter().find(|c| c.name == name).map(|c| c.speed);
                let nic = speed_of("nic").unwrap_or(LinkSpeed::ONE);
                let mut sum = nic;
                for _ in 1..layout.nic_ports() {
                    sum = sum.plus(nic);
                }
                if let Some(nvlink) = speed_of("nvlink") {
                    sum = sum.plus(nvlink);
                }
                net.link_classes[0].speed = sum;
            }
        }
        Ok(net)
    }

    /// Fails the fabric's links: a named fault shape, then random faults.
    fn fail_links(&self, net: &mut Network) -> Result<(), ConfigError> {
        if let Some(shape) = self.fault_shape {
            let failed = fail_shape(net, shape, self.fault_size)?;
            net.name = format!("{} with {} faults ({failed} links)", net.name, shape.name);
            net.failed_links = failed;
        }
        if self.failed_links > 0 {
            let class = self.failed_link_class.as_deref();
            fail_random_links_of_class(net, self.failed_links, self.fault_seed, class)?;
            let which = class.map_or(String::new(), |c| format!(" {c}"));
            net.name = format!("{} with {}{which} failed links", net.name, self.failed_links);
            net.failed_links += self.failed_links;
        }
        Ok(())
    }
}

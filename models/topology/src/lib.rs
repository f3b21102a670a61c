//! # xnet-topology: the static graph of switches, ports, endpoints and link classes
//!
//! The lowest model layer above `xnet-base`: it knows graphs, ids, link faults and fabric
//! files, and nothing of packets, routings or routers (the crates that do depend on it,
//! never the reverse).
//!
//! Every topology builds a [`Network`]: switches numbered `0..num_switches`, each with a
//! list of ports. By convention a switch's terminal ports (to its endpoints) come first,
//! numbered `0..endpoints_on_switch`, then its network ports. Endpoints are numbered so that
//! the endpoints of switch `s` are consecutive and in terminal-port order.
//!
//! A [`Shape`] keeps the parameters that algorithmic routings need (coordinates, groups),
//! so routing state for HyperX, tori and Dragonfly stays algorithmic rather than tabular.
//!
//! The modules, lowest layer first (ARCHITECTURE.md, "Layers"): the ids; the shapes; the
//! [`Network`]; what is computed on a network (metrics, faults, its InfiniBand view); what
//! a family is ([`family`]); the families, one file each; the [`registry`] of all of them.
//! This file is only the table of contents.

#![warn(missing_docs, unreachable_pub)]

pub mod family;
pub mod faults;
pub mod ib;
pub mod ids;
pub mod metrics;
pub mod network;
pub mod nodes;
pub mod registry;
pub mod shape;
pub mod speed;

pub mod clos;
pub mod dragonfly;
pub mod fattree;
pub mod file;
pub mod hyperx;
pub mod rrg;
pub mod slimfly;
pub mod torus;

pub use family::{Family, TopologyEntry};
pub use ids::{EndpointId, PortId, SwitchId};
pub(crate) use network::{
    check_latency, check_size, link_classes, one, ports_from_sorted_adjacency, terminal_port,
};
pub use network::{
    endpoint_offsets, EndpointMap, LinkClass, LinkSpeed, Network, NetworkSize, Port, PortTarget,
    TopologyError,
};
pub use registry::{TopologySpec, TOPOLOGIES};
pub use shape::Shape;

#[cfg(test)]
pub(crate) use network::testutil;

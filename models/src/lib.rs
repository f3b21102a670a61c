//! # xnet-models: the simulation model
//!
//! The top model layer: the router and endpoint (NIC) models, traffic, application
//! workloads, the configuration file as a whole, statistics and the per-rank simulation.
//! It builds on `xnet-routing` (routings, the verifier), `xnet-topology` (networks) and
//! `xnet-base` (settings, random streams, the stop flag), which it re-exports under their
//! old paths (`models::topology`, `models::routing`, `models::packet`, `models::rng`,
//! `models::cancel`) so that its users name one crate. This crate never touches threads or
//! MPI: it describes logical processes that the `xnet-engine` crate runs.
#![warn(missing_docs, unreachable_pub)]

pub mod analysis;
pub mod config;
pub mod congestion;
pub mod files;
pub mod memory;
pub mod registry;
pub mod router;
pub mod sim;
pub mod stats;
pub mod traffic;
pub mod transport;
pub mod workload;

pub use base::{cancel, rng};
pub use routing::packet;
pub use {routing, schedule, topology};

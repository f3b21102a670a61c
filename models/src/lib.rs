//! # xnet-models: what is simulated
//!
//! Topologies, the router and endpoint (NIC) models, traffic, routing and statistics.
//! This crate never touches threads or MPI: it describes logical processes that the
//! `xnet-engine` crate runs.
#![warn(missing_docs, unreachable_pub)]

pub mod analysis;
pub mod cancel;
pub mod config;
pub mod memory;
pub mod packet;
pub mod registry;
pub mod rng;
pub mod router;
pub mod routing;
pub mod sim;
pub mod stats;
pub mod topology;
pub mod traffic;
pub mod workload;

//! # xnet-routing: which output ports and virtual channels a packet may take at a switch
//!
//! The layer above `xnet-topology`: a packet's route state ([`packet`]), the routings and
//! their registry, the VC policies, the escape subnetwork, and the deadlock verifier and
//! path metrics over them ([`analysis`]). It knows nothing of routers, traffic, workloads
//! or the configuration file as a whole (a routing reads only its own `[routing.NAME]`
//! settings, given by its [`BuildContext`](registry::BuildContext)).
//!
//! A [`Routing`] lists candidate `(port, vc)` pairs for a packet at a switch; the router
//! picks one with a [`Selection`] policy, optionally after a [`VcPolicy`] rewrote the VCs.
//! Ejection at the destination switch is handled by the router, so routings only deal
//! with switch-to-switch hops.
//!
//! Each routing is one file ending with its [`RoutingEntry`] (see [`registry`]); the
//! `routing_registry!` list below declares the files and gathers the entries into
//! [`ROUTINGS`]. [`SELECTIONS`] and [`VC_POLICIES`] name the selections and VC policies.
//!
//! The modules, lowest layer first (ARCHITECTURE.md, "Layers"): why a routing cannot be
//! built ([`RoutingError`], naming the configuration key to change) and the packet's route
//! state; what a routing is ([`route`]); the registry entry and the shared engines (distance
//! rows, turn rules, layered tables, the genetic search); the routings, one file each; the
//! escape subnetwork and the balanced wrapper; [`Routes`], the bundle the router and the
//! verifier call; the verifier ([`analysis`]); and this file, which lists every routing.

#![warn(missing_docs, unreachable_pub)]

pub mod analysis;
pub mod error;
pub mod packet;
pub mod route;
pub mod routes;

pub mod escape;
pub mod genetic;
pub mod graph;
pub mod layered;
pub(crate) mod opensm;
pub mod registry;
pub mod turns;

/// Declares each routing's module and lists the entries it defines in [`ROUTINGS`]: adding
/// a routing is its file plus one line here.
macro_rules! routing_registry {
    ($($module:ident => [$($entry:ident),+],)+) => {
        $(pub mod $module;)+

        /// Every routing `routing.algorithm` accepts, in the order `xnet list` shows them.
        pub const ROUTINGS: &[RoutingEntry] = &[$($($module::$entry,)+)+];
    };
}

pub mod balanced;
pub mod nodes;

routing_registry! {
    minimal => [MINIMAL, SHORTEST_PATH],
    dor => [DOR],
    dragonfly => [DRAGONFLY_MIN, DRAGONFLY_VALIANT, DRAGONFLY_UGAL, DRAGONFLY_UGAL_G, DRAGONFLY_PB, DRAGONFLY_PAR, DRAGONFLY_IMB, DRAGONFLY_OFAR, DRAGONFLY_Q],
    allpath => [ALLPATH],
    valiant => [VALIANT],
    omni => [OMNIWAR, DAL],
    polarized => [POLARIZED],
    updown => [UP_DOWN],
    dfs => [DFS],
    lturn => [LTURN],
    sr => [SR],
    smart => [SMART],
    dfsssp => [DFSSSP],
    minhop => [MINHOP],
    ftree => [FTREE],
    lash => [LASH],
    nue => [NUE],
    mud => [MUD],
    tor => [TOR],
    dl => [DL],
    lash_tor => [LASH_TOR],
    angara => [ANGARA_BFS, ANGARA_SSSP, ANGARA_GENETIC],
    spda => [SPDA],
    tables => [TABLES],
}

pub use error::RoutingError;
pub use registry::RoutingEntry;
pub(crate) use route::ZeroLoad;
pub use route::{
    decode_occupancy, ecmp_flow_hash, ecmp_hash, encode_occupancy, Candidate, Feedback, Hop, LoadView, Reads,
    Report, Routing, Selection, Sharing, VcPolicy, REPORT_BYTES, SELECTIONS, VC_POLICIES,
};
pub use routes::{next_hops, Routes};

/// The entry named `name`.
pub fn find(name: &str) -> Option<&'static RoutingEntry> {
    ROUTINGS.iter().find(|r| r.name == name)
}

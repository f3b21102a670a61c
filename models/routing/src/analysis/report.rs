//! What `xnet routes` reports ([`RoutesReport`]) and how to ask for it ([`Options`]).

use super::Channel;
use crate::VcPolicy;
use serde::Serialize;
use topology::{PortId, SwitchId};

/// The exponent `k` of the reported `sigma(k, R)`.
pub const SIGMA_K: u32 = 4;
/// At most this many failing pairs are listed (all are counted).
pub const MAX_LISTED_FAILURES: usize = 100;

/// A source-destination pair whose packets may not arrive.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Unreachable {
    /// Source switch.
    pub src: SwitchId,
    /// Destination switch.
    pub dst: SwitchId,
    /// Where it went wrong.
    pub at: SwitchId,
    /// What went wrong.
    pub reason: String,
}

/// Paths crossing one directed link.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LinkWeight {
    /// The switch the link leaves.
    pub switch: SwitchId,
    /// Its output port.
    pub port: PortId,
    /// Number of source-destination paths crossing it: one per ordered pair of switches,
    /// shared among the destination's endpoints where a routing routes them apart (a
    /// switch of 8 endpoints routed over 8 links puts 1/8 on each).
    pub weight: f64,
}

/// Everything `xnet routes` reports for one configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RoutesReport {
    /// The network's description.
    pub network: String,
    /// The routing's name.
    pub routing: String,
    /// The VC policy in force.
    pub vc_policy: VcPolicy,
    /// VCs per port in the configuration.
    pub vcs: u8,
    /// Source/destination switches (those with endpoints).
    pub switches: usize,
    /// Destination switches whose routes were checked: all of them unless sampled
    /// ([`Options::destinations`](super::Options::destinations)).
    pub destinations_checked: usize,
    /// Directed switch-to-switch links.
    pub links: usize,
    /// VCs reserved for the escape subnetwork (0: none).
    pub escape_vcs: u8,
    /// Deadlock-free by the check that applies: without an escape subnetwork, the channel
    /// dependency graph is acyclic; with one (Duato), the escape channels' dependencies
    /// among themselves are acyclic, no dependency leads out of the escape, and every
    /// state in the routing VCs was offered an escape channel (else it counts as
    /// unreachable).
    pub acyclic: bool,
    /// A cycle when there is one (of the escape channels, with an escape subnetwork): each
    /// channel's packets wait for the next one's, and the last one's for the first.
    pub cycle: Vec<Channel>,
    /// Whether the whole CDG, routing VCs included, is acyclic (with an escape subnetwork
    /// it need not be).
    pub full_cdg_acyclic: bool,
    /// Dependencies from an escape channel to a routing channel (must be 0).
    pub escape_back_dependencies: u64,
    /// Channels `(link, VC)` used by some route.
    pub channels: usize,
    /// Dependencies between channels.
    pub dependencies: usize,
    /// Routing states explored.
    pub states: u64,
    /// Ordered pairs (distinct switches) that may fail to reach their destination.
    pub unreachable_pairs: u64,
    /// The first [`MAX_LISTED_FAILURES`] of those, sorted.
    pub unreachable: Vec<Unreachable>,
    /// Average routing distance in switches visited (survey definition).
    pub average_routing_distance: f64,
    /// Average link weight.
    pub link_weight_avg: f64,
    /// Standard deviation of the link weight (sample: divided by `links - 1`, as the survey's).
    pub link_weight_std: f64,
    /// Largest link weight: the edge-forwarding index.
    pub link_weight_max: f64,
    /// Link weights with each routing state's paths spread evenly over all its candidates
    /// (a uniformly random selection at zero load, in expectation): average, sample
    /// standard deviation and maximum. Equal to the first-candidate ones for single-path
    /// routings; over the destinations whose routes all succeed.
    pub spread_link_weight_avg: f64,
    /// See `spread_link_weight_avg`.
    pub spread_link_weight_std: f64,
    /// See `spread_link_weight_avg`.
    pub spread_link_weight_max: f64,
    /// Destinations counted in the spread link weights.
    pub spread_destinations: usize,
    /// `sigma(k, R)` of the Angara paper with `k = SIGMA_K`.
    pub sigma: f64,
    /// `gamma_perfect`: average link weight of a routing with all routes minimal.
    pub perfect_channel_load: f64,
    /// Longest route in switch-to-switch hops, over all routes explored.
    pub longest_path: u32,
    /// Longest first-candidate path.
    pub longest_first_path: u32,
    /// Largest VC index used plus one.
    pub vcs_used: u32,
    /// Weight of every directed link, in `(switch, port)` order.
    pub link_weights: Vec<LinkWeight>,
    /// Wall-clock seconds of the analysis (the only non-deterministic field).
    pub seconds: f64,
}

/// How to analyse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Check only this many evenly spaced destination switches (all sources): a cycle or
    /// an unreachable pair found is real, but an acyclic verdict covers only the routes
    /// towards them. The path metrics are over the same pairs.
    pub destinations: Option<usize>,
    /// Refuse an analysis whose CDG bitmaps would take more bytes than this.
    pub memory_limit: Option<u64>,
    /// Keep the packet's source and input port in every state, even where the routing and
    /// the VC policy do not read them (the per-source exploration; for tests: same report
    /// but for the number of states).
    pub exhaustive: bool,
}

/// Why an analysis could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AnalysisError(pub String);

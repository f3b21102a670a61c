//! Packets, the unit the router model moves.

use crate::topology::EndpointId;
use serde::{Deserialize, Serialize};

/// Per-packet routing state: what multi-phase routings remember between hops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteState {
    /// Routing phase (e.g. Valiant: 0 towards the intermediate, 1 towards the destination;
    /// Up*/Down*: 1 once a down link was taken; SPDA: the spanning tree, which is the VC).
    pub phase: u8,
    /// Global (inter-group) hops taken so far, for Dragonfly VC classes.
    pub global_hops: u8,
    /// Intermediate switch or group of a non-minimal route (`u32::MAX`: none); ALLPATH:
    /// the switch-to-switch hops the packet may still take.
    pub intermediate: u32,
}

/// A packet in flight. Times are in cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Packet {
    /// Unique id: source endpoint in the high 32 bits, its packet counter in the low 32.
    pub id: u64,
    /// Source endpoint.
    pub src: EndpointId,
    /// Destination endpoint.
    pub dst: EndpointId,
    /// Length in phits.
    pub size: u16,
    /// Switch-to-switch hops taken so far.
    pub hops: u16,
    /// Virtual channel the packet occupies at the input it is travelling to or sits in.
    pub vc: u8,
    /// Routing state.
    pub route: RouteState,
    /// Cycle the packet was generated (entered the source queue).
    pub created: u64,
    /// Cycle its head left the source endpoint.
    pub injected: u64,
}

//! The switch of a router as one record: its ports and VCs, what its allocator has to
//! look at, its crossbar's busy times and its links' stalls. The endpoints are the other
//! half (`endpoints.rs`); the packet slab both use stays with the router. The endpoints'
//! files reach the switch only through the crossings below: the credits an endpoint holds
//! for the switch's input VCs (kept beside those VCs, in the cache lines the switch
//! touches when it frees them), and a terminal link's latency.

use super::buffers::{PortState, VcState};
use super::errors::Replays;
use super::flow::InputLevels;
use super::link::LinkStall;
use topology::PortId;

/// The switch of one router.
pub(super) struct Switch {
    /// Packets in input buffers.
    pub(super) waiting: u32,
    pub(super) ports: Vec<PortState>,
    /// `port * vcs + vc`.
    pub(super) channels: Vec<VcState>,
    /// Input VCs (`port * vcs + vc`) whose head packet has not been routed yet.
    pub(super) unrouted: Vec<u32>,
    /// One bit per output port with requesters: the allocator looks only at these.
    pub(super) wanted_outputs: Vec<u64>,
    pub(super) scheduled_allocations: Vec<u64>,
    /// With `crossbar = "vc"`: until when each crossbar input (`port * vcs + vc`) and
    /// output (`port * vcs + output vc`) is busy; empty otherwise (the ports' records
    /// hold the busy times of the per-port crossbar).
    pub(super) vc_in_busy: Vec<u32>,
    pub(super) vc_out_busy: Vec<u32>,
    /// `credit_check = "crossbar"`: packets in the output buffers of network ports hold
    /// their downstream credits, so those ports' occupancy is the credits in use.
    pub(super) credits_at_crossbar: bool,
    /// Each output's stalls (`link.rs`), allocated at the router's first stall.
    pub(super) stalls: Vec<LinkStall>,
    /// Under PFC or no flow control: the input VCs' levels, drops and pauses (`flow.rs`);
    /// `None` under credits.
    pub(super) levels: Option<Box<InputLevels>>,
    /// With link errors: each output's good phits left before the next bad one, and its
    /// replays (`errors.rs`); `None` otherwise.
    pub(super) replays: Option<Box<Replays>>,
    /// With congestion control: each output's congested packets left to pass before it
    /// marks the next (`cc.rs`), allocated at the first one.
    pub(super) cc_countdown: Vec<u16>,
    /// The candidates of a notice's next hop (`route.rs`), kept for their room: with
    /// acknowledgements a notice crosses every hop a packet does.
    pub(super) notice_candidates: Vec<routing::route::Candidate>,
}

impl Switch {
    /// The credits the endpoint at terminal port `port` holds for the switch's input VC
    /// `vc` (of `vcs` per port), in phits.
    #[inline]
    pub(super) fn nic_credits(&mut self, port: PortId, vc: usize, vcs: usize) -> &mut u16 {
        &mut self.channels[port as usize * vcs + vc].nic_credits
    }

    /// The lowest of the first `vcs_allowed` input VCs of terminal port `port` for which
    /// its endpoint holds credits for `size` phits (VC 0 if none).
    #[inline]
    pub(super) fn vc_with_credits(&self, port: PortId, vcs: usize, vcs_allowed: usize, size: u16) -> usize {
        let base = port as usize * vcs;
        (0..vcs_allowed).find(|&v| self.channels[base + v].nic_credits >= size).unwrap_or(0)
    }

    /// The latency of the link of port `port`.
    #[inline]
    pub(super) fn link_latency(&self, port: PortId) -> u64 {
        self.ports[port as usize].route.latency()
    }
}

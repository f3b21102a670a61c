//! [`Routes`]: a routing, the VC policy applied to its candidates and the optional escape
//! subnetwork, bundled; the one place candidates are made (`Routes::next_hops`), which the
//! router and the deadlock verifier both call.

use crate::escape::Escape;
use crate::packet::Packet;
use crate::route::{Candidate, Hop, LoadView, Routing, VcPolicy};
use base::rng::Rng;
use std::sync::Arc;
use topology::{PortTarget, SwitchId};

/// How packets are routed: a routing, the VC policy applied to its candidates, and
/// optionally an escape subnetwork on the last VCs. The router and the deadlock verifier
/// both ask it, so they see the same candidates.
#[derive(Clone)]
pub struct Routes {
    /// The routing algorithm.
    pub routing: Arc<dyn Routing>,
    /// Its name in the registry (`routing.algorithm`).
    pub name: &'static str,
    /// The VC policy in force.
    pub vc_policy: VcPolicy,
    /// SurePath's escape subnetwork, when `routing.escape_vcs > 0`.
    pub escape: Option<Arc<Escape>>,
}

impl Routes {
    /// The candidates for `packet` at `hop`: what the router chooses from, and what the
    /// verifier enumerates. Replaces `out`'s contents. With an escape subnetwork the
    /// routing's candidates are confined to the VCs below the escape set (those that do
    /// not fit are dropped) and the escape candidates are always added; a packet already
    /// in escape gets only escape candidates.
    pub fn next_hops(
        &self,
        hop: &Hop<'_>,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        if !self.try_next_hops(hop, packet, load, rng, out) {
            no_candidate(hop, packet);
        }
    }

    /// Like [`Routes::next_hops`], but returns `false` (and leaves `out` empty) instead of
    /// panicking when the routing offers no candidate and there is no escape subnetwork
    /// to take the packet: the verifier reports such states.
    pub fn try_next_hops(
        &self,
        hop: &Hop<'_>,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) -> bool {
        out.clear();
        let Some(escape) = &self.escape else {
            return candidates_with_policy(&*self.routing, self.vc_policy, hop, packet, load, rng, out, true);
        };
        if !escape.is_escape(packet.vc) {
            // A routing that offers nothing here (its routes cut by failed links) leaves
            // the packet the escape candidates alone: SurePath's forced hop.
            let confined = Hop { vcs: escape.first_vc(), ..*hop };
            candidates_with_policy(&*self.routing, self.vc_policy, &confined, packet, load, rng, out, false);
        }
        escape.candidates(hop.at, hop.dst, packet, out);
        assert!(
            !out.is_empty(),
            "no escape candidate at switch {} towards switch {} (packet {})",
            hop.at,
            hop.dst,
            packet.id
        );
        true
    }

    /// Updates the packet's routing state for the granted `chosen`, before it leaves `at`.
    pub fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        match &self.escape {
            Some(escape) if escape.is_escape(chosen.vc) => escape.on_forward(at, chosen, packet),
            _ => self.routing.on_forward(at, chosen, packet),
        }
    }

    /// Whether `vc` belongs to the escape set.
    pub fn is_escape(&self, vc: u8) -> bool {
        self.escape.as_ref().is_some_and(|e| e.is_escape(vc))
    }
}

/// The candidates for `packet` at `hop`, with the VC policy applied: what the router
/// chooses from, and what the deadlock verifier enumerates. Replaces `out`'s contents.
/// Panics if the routing offers nothing (a routing bug, not a user error).
pub fn next_hops(
    routing: &dyn Routing,
    vc_policy: VcPolicy,
    hop: &Hop<'_>,
    packet: &mut Packet,
    load: &dyn LoadView,
    rng: &mut Rng,
    out: &mut Vec<Candidate>,
) {
    out.clear();
    if !candidates_with_policy(routing, vc_policy, hop, packet, load, rng, out, true) {
        no_candidate(hop, packet);
    }
}

/// The panic of a routing that offers nothing (a routing bug, not a user error).
fn no_candidate(hop: &Hop<'_>, packet: &Packet) -> ! {
    panic!(
        "the routing offered no candidate at switch {} for packet {} to switch {}",
        hop.at, packet.id, hop.dst
    )
}

/// Fills the empty `out` with the routing's candidates, VC policy applied; `false` (and
/// `out` empty) if the routing offers none. With `strict` the configuration checks
/// guarantee the VCs suffice (running out panics with an explanation); otherwise
/// candidates whose VC would be `hop.vcs` or more are dropped.
#[allow(clippy::too_many_arguments)]
fn candidates_with_policy(
    routing: &dyn Routing,
    vc_policy: VcPolicy,
    hop: &Hop<'_>,
    packet: &mut Packet,
    load: &dyn LoadView,
    rng: &mut Rng,
    out: &mut Vec<Candidate>,
    strict: bool,
) -> bool {
    routing.candidates(hop.at, hop.dst, packet, load, rng, out);
    if out.is_empty() {
        return false;
    }
    match vc_policy {
        VcPolicy::Routing => {
            if !strict {
                out.retain(|c| c.vc < hop.vcs);
            }
        }
        VcPolicy::Folded => {
            for c in out.iter_mut() {
                c.vc = c.vc.min(hop.vcs - 1);
            }
        }
        VcPolicy::Ladder => {
            if !strict && packet.hops >= hop.vcs as u16 {
                out.clear();
            }
            for c in out.iter_mut() {
                c.vc = packet.hops as u8;
            }
        }
        VcPolicy::WideLadder => {
            let per_step = (hop.vcs as u32 / routing.max_hops().max(1)).max(1);
            let first = packet.hops as u32 * per_step;
            let last = (first + per_step).min(hop.vcs as u32);
            if first >= last {
                assert!(
                    !strict,
                    "the wide ladder ran out of VCs: packet {} took {} hops, {} VCs",
                    packet.id, packet.hops, hop.vcs
                );
                out.clear();
            }
            spread_over_vcs(out, first as u8..last as u8);
        }
        VcPolicy::Any => spread_over_vcs(out, 0..hop.vcs),
        VcPolicy::DavcNode | VcPolicy::DavcPort | VcPolicy::DavcNodePort => {
            let ports = hop.ports;
            // The inbound port in the DAVC paper's sense is the previous switch's output port,
            // which is the far end of the link the packet arrived on.
            let inbound = match ports[hop.in_port as usize].target {
                PortTarget::Switch { port, .. } => Some(port),
                _ => None,
            };
            out.retain_mut(|c| {
                let PortTarget::Switch { switch: next, .. } = ports[c.port as usize].target else {
                    panic!("the routing offered non-network port {} at switch {}", c.port, hop.at)
                };
                let vc =
                    packet.vc as u32 + u32::from(vc_policy.davc_transition(hop.at, next, inbound, c.port));
                c.vc = vc as u8;
                vc < hop.vcs as u32
            });
            assert!(
                !strict || !out.is_empty(),
                "DAVC ({vc_policy:?}) ran out of VCs: packet {} on VC {} at switch {} (to switch {}, {} hops \
                 taken) needs VC {} but only {} VCs exist; give router.vcs >= the routing's longest route",
                packet.id,
                packet.vc,
                hop.at,
                hop.dst,
                packet.hops,
                packet.vc as u32 + 1,
                hop.vcs
            );
        }
    }
    true
}

/// Offers every candidate in `out` on each VC of `vcs` (non-empty), the candidate itself
/// taking the first.
pub(crate) fn spread_over_vcs(out: &mut Vec<Candidate>, vcs: std::ops::Range<u8>) {
    let n = out.len();
    for i in 0..n {
        for vc in vcs.start + 1..vcs.end {
            let c = Candidate { vc, ..out[i] };
            out.push(c);
        }
        out[i].vc = vcs.start;
    }
}

//! Polarized routing (Camarero, Martínez, Beivide, "Polarized routing: an efficient and
//! versatile algorithm for large direct networks", HOTI 2021), as the SurePath seed
//! describes it (section 3.1.2, Table 1).
//!
//! With `s` the source switch, `t` the destination and `c` the current switch, a route
//! never decreases the weight `mu(c) = d(c, s) - d(c, t)`. A hop to a neighbour changes
//! the distances by `(Δs, Δt)`, each in `{-1, 0, 1}`, and the weight by `Δmu = Δs - Δt`.
//! The allowed hops are those with `Δmu > 0` and, to rule out cycles among hops that keep
//! the weight, the `Δmu = 0` hops that depart both ends while `c` is closer to the source
//! (`d(s, c) < d(c, t)`) or approach both once it is not: the five moves of Table 1.
//! Candidates are penalised by how far their `Δmu` falls below the best one offered:
//! 0, 64 and 80 phits (the paper's values).
//!
//! Distances come from coordinates on a HyperX, torus or mesh without failed links, else
//! from a table of one byte per switch pair. On a HyperX without failed links every
//! switch off the destination has a polarized hop (a switch whose every hop towards `t`
//! also approaches `s` is at least as far from `s` as from `t`), so the ladder (VC = hops
//! taken) suffices; its length is the longest polarized route, computed exactly. Elsewhere
//! a route can reach a switch with no polarized hop left, so other networks need the
//! escape subnetwork (`routing.escape_vcs`, SurePath's PolSP), which takes such packets.

use super::minimal::Minimal;
use super::registry::{exact_distance_state, RoutingEntry, Settings};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use serde::Deserialize;
use std::sync::Arc;
use topology::{Network, Shape, SwitchId};

/// Polarized routing over exact distances.
pub struct Polarized {
    min: Minimal,
    /// Penalty of a candidate whose `Δmu` is 0, 1 or 2 below the best offered.
    penalties: [u16; 3],
    longest: u32,
}

impl Polarized {
    /// Polarized routing on `net`, with `penalties` by `Δmu` below the best candidate.
    pub fn new(net: &Network, penalties: [u16; 3]) -> Result<Self, RoutingError> {
        let min = Minimal::with_exact_distances(net)?;
        let longest = match &net.shape {
            // A Hamming graph is vertex-transitive: the routes from switch 0 are all there is.
            Shape::HyperX(_) if net.failed_links == 0 => {
                let mut memo = vec![None; net.num_switches()];
                (0..net.num_switches() as SwitchId)
                    .filter_map(|t| longest_route(&min, 0, t, &mut memo))
                    .max()
                    .unwrap_or(0)
            }
            // The bound of the authors' implementation: 4D - 3 hops for a diameter D >= 2.
            _ => match min.diameter() {
                0 | 1 => 2,
                d => 4 * d - 3,
            },
        };
        Ok(Self { min, penalties, longest })
    }

    /// The length of the longest polarized route (the ladder's VCs).
    pub fn longest_route(&self) -> u32 {
        self.longest
    }

    /// Calls `f(port, next switch, Δmu)` for every polarized hop at `at` of a packet from
    /// switch `src` to switch `dst`.
    pub fn hops(&self, src: SwitchId, at: SwitchId, dst: SwitchId, f: impl FnMut(u16, SwitchId, u32)) {
        polarized_hops(&self.min, src, at, dst, f)
    }
}

/// The polarized hops at `c` from `s` to `t` (see the module docs), as
/// `f(port, next switch, Δmu)`.
fn polarized_hops(
    min: &Minimal,
    s: SwitchId,
    c: SwitchId,
    t: SwitchId,
    mut f: impl FnMut(u16, SwitchId, u32),
) {
    min.neighbours_with_distances(c, s, t, |port, n, (a, b), (new_a, new_b)| {
        let weight = a as i64 - b as i64;
        let delta = new_a as i64 - new_b as i64 - weight;
        let allowed = match delta {
            d if d > 0 => true,
            0 if a < b => new_a > a,
            0 => new_b < b,
            _ => false,
        };
        if allowed {
            f(port, n, delta as u32);
        }
    })
}

/// Hops of the longest polarized route from `s` to `t` (`None`: some polarized route
/// from `s` ends at a switch with no polarized hop, or none reaches `t`). Polarized hops
/// form a DAG (the weight never falls, and hops that keep it move the sum of distances one
/// way), so a memo per switch (`memo`, reset here) makes it linear in the edges.
pub fn longest_route(
    min: &Minimal,
    s: SwitchId,
    t: SwitchId,
    memo: &mut [Option<Option<u32>>],
) -> Option<u32> {
    memo.fill(None);
    fn walk(
        min: &Minimal,
        s: SwitchId,
        c: SwitchId,
        t: SwitchId,
        memo: &mut [Option<Option<u32>>],
    ) -> Option<u32> {
        if c == t {
            return Some(0);
        }
        if let Some(known) = memo[c as usize] {
            return known;
        }
        let mut next = Vec::new();
        polarized_hops(min, s, c, t, |_, n, _| next.push(n));
        // A dead end anywhere makes the whole answer `None`: the routing could strand a
        // packet there.
        let mut best = Some(0);
        let mut any = false;
        for n in next {
            any = true;
            best = match (best, walk(min, s, n, t, memo)) {
                (Some(x), Some(h)) => Some(x.max(h + 1)),
                _ => None,
            };
        }
        let best = best.filter(|_| any);
        memo[c as usize] = Some(best);
        best
    }
    walk(min, s, s, t, memo)
}

impl Routing for Polarized {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn build_summary(&self) -> Option<String> {
        Some(format!("{}; longest route {} hops", self.min.describe(), self.longest))
    }

    fn max_hops(&self) -> u32 {
        self.longest
    }

    /// The source switch rides in the route state.
    fn init(&self, src: SwitchId, _dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.intermediate = src;
    }

    fn initial_states(
        &self,
        src: SwitchId,
        _dst: SwitchId,
        mut base: RouteState,
        out: &mut Vec<RouteState>,
    ) -> bool {
        base.intermediate = src;
        out.push(base);
        true
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let first = out.len();
        let mut best = 0;
        // The penalty field holds Δmu until the best is known.
        self.hops(packet.route.intermediate, at, dst, |port, _, delta| {
            best = best.max(delta);
            out.push(Candidate { port, vc: 0, penalty: delta as u16 });
        });
        for c in &mut out[first..] {
            c.penalty = self.penalties[(best - c.penalty as u32).min(2) as usize];
        }
    }
}

/// `polarized` in the routing registry.
pub const POLARIZED: RoutingEntry = RoutingEntry {
    name: "polarized",
    doc: "Polarized routing (Camarero et al. HOTI'21): every hop that does not decrease d(c,s) - d(c,t), with the SurePath paper's (Camarero et al., FTXS'24) five moves and penalties by Δmu",
    topologies: "hyperx; any with routing.escape_vcs >= 1",
    vcs: "ladder: the longest polarized route (2 x dimensions on a HyperX)",
    settings: Settings::typed::<PolarizedSettings>(&[Setting {
        key: "penalties",
        default: "[0, 64, 80]",
        doc: "phits added to a candidate whose Δmu is 0, 1 or 2 below the best candidate's (the paper's values)",
    }]),
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    state_bytes: exact_distance_state,
    build: |ctx| {
        let s: PolarizedSettings = ctx.settings()?;
        let proven = matches!(ctx.net.shape, Shape::HyperX(_)) && ctx.net.failed_links == 0;
        if !proven && ctx.escape_vcs == 0 {
            return Err(RoutingError::new(
                "routing.escape_vcs",
                format!(
                    "`polarized` off a HyperX without failed links may strand a packet at a switch with no polarized hop; give it an escape subnetwork (routing.escape_vcs >= 1, SurePath's PolSP){}",
                    if ctx.net.failed_links > 0 { format!(" ({} failed links)", ctx.net.failed_links) } else { String::new() }
                ),
            ));
        }
        Ok(Arc::new(Polarized::new(ctx.net, s.penalties)?))
    },
};

/// `[routing.polarized]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PolarizedSettings {
    #[serde(default = "seed_penalties")]
    penalties: [u16; 3],
}

fn seed_penalties() -> [u16; 3] {
    [0, 64, 80]
}

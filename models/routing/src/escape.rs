//! SurePath's escape subnetwork, for any topology and any base routing: Camarero, Cano,
//! Martínez, Beivide, "Achieving High-Performance Fault-Tolerant Routing in HyperX
//! Interconnection Networks", arXiv:2404.04315, 2024 (FTXS workshop, SC'24), section 3.2.
//!
//! The VCs are split: the first `vcs - escape_vcs` carry the base routing (its own VCs or
//! a VC policy, confined to them), the last `escape_vcs` are the escape set. Links are
//! classified by the BFS distance of their ends to a root switch: Up/Down ("black") when
//! the distances differ, horizontal ("red") when they are equal. The Up/Down distance
//! `ud(x, t)` is the shortest route from `x` to `t` over black links going up (towards
//! the root) then down. From a switch `x` towards `t` the escape candidates are
//!
//! * black up links on a shortest Up/Down route (only before the packet went down),
//!   penalty 112 phits;
//! * black down links on a shortest Up/Down route, penalty 96;
//! * horizontal links to `y` with `ud(y, t) < ud(x, t)` (shortcuts, only before the packet
//!   went down) **and `y < x` in switch id**, penalty 80, 64 or 48 for a reduction of 1, 2
//!   or at least 3;
//!
//! each on every escape VC. A packet in the routing VCs is offered its routing candidates
//! (penalties as the routing gives them) and always the escape candidates; a packet in the
//! escape VCs only the escape candidates: never back from escape. A packet whose routing
//! candidates do not fit the routing VCs (a ladder that ran out, a DAVC function that
//! would need another VC) is forced into escape. The router then takes the candidate with
//! the least occupancy + penalty (`selection = "adaptive"`), as the paper does.
//!
//! Deviation from the paper, by default (`routing.escape_shortcuts = "descending"`):
//! shortcuts only lead to a switch with a smaller id. Taken in both directions, as the
//! paper describes (`escape_shortcuts = "both"`), shortcuts between switches of one level can
//! close a cycle of escape channels: the property tests found one on a 5x3 torus (four
//! horizontal links at the same level, each pair of consecutive ones used by a packet
//! whose Up/Down distance they shorten), and a 4x4 HyperX has the same pattern
//! ((1,1) -> (2,1) -> (2,2) -> (1,2) -> (1,1) towards the next corner each time). With the
//! id order, every escape dependency in the up phase goes to a smaller (level, id) and
//! every one in the down phase to a larger level, so the escape channel dependency graph
//! is acyclic on any network. The cost is half the shortcuts, which matters under
//! adversarial traffic (docs/studies/surepath.md). With `"both"` the verifier reports the
//! cycles and the watchdog guards the run. `"upward"` is the rule of CAMINOS, the paper's
//! simulator (`branch_crossings_upwards`): both ways, but only while the destination is
//! not below the switch. It closes the same square of shortcuts on a 4x4 HyperX.
//!
//! Deadlock freedom is Duato's condition (Duato, "A Necessary and Sufficient Condition for
//! Deadlock-Free Routing in Cut-Through and Store-and-Forward Networks", IEEE TPDS 7(8),
//! 1996): the escape channels' dependencies among themselves must be acyclic, and every
//! state in the routing VCs must offer an escape channel. `xnet routes` checks both on the
//! configuration's own routes (see `analysis`).

use super::graph::SwitchGraph;
use super::updown::{central_switch, UdLegal, DOWN};
use super::Candidate;
use crate::packet::Packet;
use crate::RoutingError;
use base::settings::Choice;
use topology::metrics::DistanceTable;
use topology::{Network, SwitchId};

/// Penalty of an escape hop up towards the root, in phits (seed: 112).
pub const PENALTY_UP: u16 = 112;
/// Penalty of an escape hop down, away from the root (seed: 96).
pub const PENALTY_DOWN: u16 = 96;
/// Penalties of horizontal shortcuts reducing the Up/Down distance by 1, 2, >= 3 (seed:
/// 80, 64, 48).
pub const PENALTY_SHORTCUT: [u16; 3] = [80, 64, 48];

/// Which horizontal links the escape may take as shortcuts (names and docs:
/// [`ESCAPE_SHORTCUTS`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shortcuts {
    /// Only towards a smaller switch id: Duato's condition holds on any network.
    #[default]
    Descending,
    /// Both ways, as the SurePath paper: more escape capacity, but the escape channels
    /// may close a cycle.
    Both,
    /// Both ways, but only while the destination is not below the switch (no route of
    /// down links alone reaches it): CAMINOS's `branch_crossings_upwards`, the rule of the
    /// paper's own simulator.
    Upward,
}

/// The values `routing.escape_shortcuts` accepts.
pub const ESCAPE_SHORTCUTS: &[Choice<Shortcuts>] = &[
    Choice {
        value: Shortcuts::Descending,
        name: "descending",
        doc: "shortcuts only towards a smaller switch id: the escape is deadlock-free on any network (default)",
    },
    Choice {
        value: Shortcuts::Both,
        name: "both",
        doc: "shortcuts both ways, as the SurePath paper: more escape capacity, but escape channels may close a cycle (xnet routes reports it; the watchdog guards runs)",
    },
    Choice {
        value: Shortcuts::Upward,
        name: "upward",
        doc: "shortcuts both ways while the destination is not below the switch (CAMINOS's branch_crossings_upwards, the paper's simulator); check it with xnet routes",
    },
];

base::named_by_registry!(Shortcuts, ESCAPE_SHORTCUTS);

/// The escape subnetwork of a network: Up/Down distances from one root plus shortcuts.
pub struct Escape {
    graph: SwitchGraph,
    legal: UdLegal,
    shortcuts: Shortcuts,
    first_vc: u8,
    vcs: u8,
}

impl Escape {
    /// The escape subnetwork of `net` rooted at `root` (default: the switch a named fault
    /// shape is built around, as the SurePath seed roots it among the faults, else the
    /// least eccentric switch) on VCs `first_vc .. first_vc + vcs`.
    pub fn new(
        net: &Network,
        root: Option<SwitchId>,
        first_vc: u8,
        vcs: u8,
        shortcuts: Shortcuts,
    ) -> Result<Self, RoutingError> {
        let root = match root.or(net.fault_root) {
            Some(r) => r,
            None => central_switch(net, &DistanceTable::compute_unless_stopped::<RoutingError>(net)?)?,
        };
        let graph = SwitchGraph::new(net);
        // What Up/Down cannot route is the escape's failing, not the routing's.
        let legal = UdLegal::without_horizontal(&graph, net, root).map_err(|e| match e.key.as_str() {
            "routing.algorithm" => RoutingError::new(
                "routing.escape_vcs",
                format!("the escape subnetwork (Up/Down) cannot run on this network: {}", e.message),
            ),
            _ => e,
        })?;
        Ok(Self { graph, legal, shortcuts, first_vc, vcs })
    }

    /// The root switch.
    pub fn root(&self) -> SwitchId {
        self.legal.root()
    }

    /// First escape VC; the routing VCs are those below it.
    pub fn first_vc(&self) -> u8 {
        self.first_vc
    }

    /// Whether `vc` belongs to the escape set.
    pub fn is_escape(&self, vc: u8) -> bool {
        vc >= self.first_vc
    }

    /// Longest shortest Up/Down route, in hops.
    pub fn max_hops(&self) -> u32 {
        self.legal.max_hops()
    }

    /// Up/Down distance from `s` to `dst`, in the up phase (`down = false`) or after the
    /// packet went down.
    pub fn distance(&self, s: SwitchId, dst: SwitchId, down: bool) -> u32 {
        self.legal.legal(dst, s, if down { DOWN } else { 0 })
    }

    /// Appends the escape candidates of `packet` at `at` towards `dst` to `out`.
    pub fn candidates(&self, at: SwitchId, dst: SwitchId, packet: &Packet, out: &mut Vec<Candidate>) {
        let down = self.is_escape(packet.vc) && packet.route.phase == DOWN;
        let here = self.distance(at, dst, down);
        let level = self.legal.level(at);
        // A destination below `at` is reached by down links alone: no shortcut then.
        let no_shortcut =
            down || (self.shortcuts == Shortcuts::Upward && self.distance(at, dst, true) < u8::MAX as u32);
        for &(port, y) in self.graph.neighbours(at) {
            let ly = self.legal.level(y);
            let penalty = if ly < level {
                (!down && self.distance(y, dst, false) + 1 == here).then_some(PENALTY_UP)
            } else if ly > level {
                (self.distance(y, dst, true) + 1 == here).then_some(PENALTY_DOWN)
            } else if no_shortcut || (y > at && self.shortcuts == Shortcuts::Descending) {
                None
            } else {
                let there = self.distance(y, dst, false);
                (there < here).then(|| PENALTY_SHORTCUT[((here - there) as usize).min(3) - 1])
            };
            if let Some(penalty) = penalty {
                for vc in self.first_vc..self.first_vc + self.vcs {
                    out.push(Candidate { port, vc, penalty });
                }
            }
        }
    }

    /// Updates the packet's escape phase for the granted escape candidate `chosen`. The
    /// phase field is the escape's own once the packet is in escape: it never goes back.
    pub fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        if !self.is_escape(packet.vc) {
            packet.route.phase = 0;
        }
        let next = self.graph.next_switch(at, chosen.port);
        if self.legal.level(next) > self.legal.level(at) {
            packet.route.phase = DOWN;
        }
    }
}

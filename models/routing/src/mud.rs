//! MUD, Multiple Up*/Down*: one Up*/Down* instance per VC, each with its own root, as
//! described in Flich et al., "A Survey and Evaluation of Topology-Agnostic Deterministic
//! Routing Algorithms", IEEE TPDS 23(3), 2012 (the survey below), section 5.1, after the
//! multiple-root schemes it cites as \[24\]-\[26\] (Lysne, Skeie, Reinemo, Theiss, "Layered
//! Routing in Irregular Networks", IEEE TPDS 17(1), 2006; Theiss and Lysne, "FROOTS",
//! HiPC'03; Flich et al., ISHPC'02).
//!
//! Instances: `m = min(router.vcs, switches)`, one per VC, as in the survey's evaluation
//! ("MUD" on 2 VCs, "MUD 3VC" on 3). The first root is `routing.root` or the least eccentric
//! switch (as `up_down`); each further root maximises its smallest hop distance to the
//! roots already chosen (survey, section 5.1.2), ties to the lowest id. Every instance is
//! the `up_down` machinery: BFS levels from its root, a link is up when it leads to a
//! smaller `(level, id)`, and a table of shortest legal (never up after down) distances.
//!
//! At its source (`init`) a packet takes the instance with the shortest legal route for
//! its (source, destination) pair; among tied instances one is picked by a hash of the
//! pair, which spreads the pairs over the VCs (and roots) deterministically. The packet
//! stays on that instance's VC and offers, at every switch, all next hops on shortest
//! legal routes of that instance (like `up_down`: adaptive within the instance,
//! deterministic with `selection = "first"`). Each VC carries only the routes of one
//! Up*/Down* instance, so each VC's dependency graph is acyclic and packets never change
//! VC: deadlock-free with any `router.vcs >= 1` (with 1 VC it is `up_down`).
//!
//! Route state: `phase = 2 * instance + down`, `down` once the packet took a down link of
//! its instance. Not minimal in general (the survey's Table 5: tori of 8 x 8 and beyond).

use super::graph::SwitchGraph;
use super::registry::{RootSetting, RoutingEntry, Settings};
use super::updown::{central_switch, UdLegal, DOWN};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use std::sync::Arc;
use topology::metrics::{bfs, DistanceTable};
use topology::{Network, SwitchId};

/// Multiple Up*/Down*.
pub struct Mud {
    graph: SwitchGraph,
    instances: Vec<UdLegal>,
    /// `choice[src * n + dst]`: the instance of the pair.
    choice: Vec<u8>,
    n: usize,
    max_hops: u32,
}

impl Mud {
    /// `instances` Up*/Down* instances (at most one per switch); the first rooted at `root`
    /// (default: least eccentric switch).
    pub fn new(net: &Network, instances: u8, root: Option<SwitchId>) -> Result<Self, RoutingError> {
        let n = net.num_switches();
        let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
        let first = match root {
            Some(r) => {
                super::graph::connected_diameter(&dist)?;
                r
            }
            None => central_switch(net, &dist)?,
        };
        let m = (instances.max(1) as usize).min(n.max(1));
        let roots = spread_roots(net, first, m);
        let graph = SwitchGraph::new(net);
        let instances = roots.iter().map(|&r| UdLegal::new(&graph, net, r)).collect::<Result<Vec<_>, _>>()?;
        let mut choice = vec![0u8; n * n];
        let mut max_hops = 0;
        let mut tied = Vec::new();
        for s in 0..n as SwitchId {
            base::cancel::check("choosing the MUD instance of every pair")?;
            for d in (0..n as SwitchId).filter(|&d| d != s) {
                let best = instances.iter().map(|i| i.legal(d, s, 0)).min().unwrap_or(0);
                tied.clear();
                tied.extend(
                    (0..instances.len() as u8).filter(|&i| instances[i as usize].legal(d, s, 0) == best),
                );
                let h = (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    ^ (d as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
                choice[s as usize * n + d as usize] = tied[((h >> 17) % tied.len() as u64) as usize];
                max_hops = max_hops.max(best);
            }
        }
        Ok(Self { graph, instances, choice, n, max_hops })
    }

    /// The roots of the instances, in VC order.
    pub fn roots(&self) -> Vec<SwitchId> {
        self.instances.iter().map(|i| i.root()).collect()
    }

    /// The instance (= VC) a packet from `src` to `dst` takes: one with the shortest legal
    /// route, among ties the one a hash of the pair picks.
    pub fn instance_of(&self, src: SwitchId, dst: SwitchId) -> u8 {
        self.choice[src as usize * self.n + dst as usize]
    }
}

/// `m` roots: `first`, then each switch maximising its smallest distance to the roots
/// chosen so far (ties: lowest id).
fn spread_roots(net: &Network, first: SwitchId, m: usize) -> Vec<SwitchId> {
    let n = net.num_switches();
    let mut roots = vec![first];
    let mut nearest: Vec<u32> = bfs(net, first);
    while roots.len() < m {
        let next = (0..n as SwitchId)
            .filter(|s| !roots.contains(s))
            .max_by_key(|&s| (nearest[s as usize], std::cmp::Reverse(s)))
            .expect("fewer roots than switches");
        roots.push(next);
        for (x, d) in nearest.iter_mut().zip(bfs(net, next)) {
            *x = (*x).min(d);
        }
    }
    roots
}

impl Routing for Mud {
    fn vcs_required(&self) -> u8 {
        self.instances.len() as u8
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.phase = 2 * self.instance_of(src, dst);
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
        let (vc, phase) = (packet.route.phase / 2, packet.route.phase % 2);
        self.instances[vc as usize]
            .next_ports(&self.graph, at, dst, phase, |port| out.push(Candidate { port, vc, penalty: 0 }));
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        let vc = packet.route.phase / 2;
        if !self.instances[vc as usize].is_up(at, self.graph.next_switch(at, chosen.port)) {
            packet.route.phase = 2 * vc + DOWN;
        }
    }
}

/// `mud` in the routing registry.
pub const MUD: RoutingEntry = RoutingEntry {
    name: "mud",
    doc: "MUD: one Up*/Down* instance per VC, roots spread apart; a packet takes the instance with the shortest legal route and stays on its VC",
    topologies: "any",
    vcs: "1 (uses min(router.vcs, switches) instances, one per VC)",
    settings: Settings::typed::<RootSetting>(&[Setting {
        key: "root",
        default: "least eccentric switch (lowest id on ties)",
        doc: "switch id of the first instance's root",
    }]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(0, 0, 2),
    build: |ctx| {
        let s: RootSetting = ctx.settings()?;
        Ok(Arc::new(Mud::new(ctx.net, ctx.vcs, ctx.root(s.root)?)?))
    },
};

//! SPDA, the spanning-tree deadlock avoidance baseline of Pascual and Navaridas,
//! "High-Performance, Low-Complexity Deadlock Avoidance for Arbitrary Topologies/Routings",
//! ICS'18, section 7.2: one BFS spanning tree per VC, each from a random root. At its
//! source a packet picks a tree at random and follows the tree path (up to the lowest
//! common ancestor, then down) on the VC of that tree. Tree paths never go down then up, so
//! each VC is deadlock-free alone.

use super::registry::{RoutingEntry, Settings};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::{below, Rng};
use std::collections::VecDeque;
use std::sync::Arc;
use topology::{Network, PortId, SwitchId};

/// One spanning tree.
struct Tree {
    parent: Vec<SwitchId>,
    depth: Vec<u32>,
    /// Port of a switch towards its parent.
    up_port: Vec<PortId>,
    /// Port of a switch's parent towards it.
    down_port: Vec<PortId>,
}

/// SPDA routing.
pub struct Spda {
    trees: Vec<Tree>,
    max_hops: u32,
}

impl Spda {
    /// `trees` BFS spanning trees of `net` from roots drawn from `rng`.
    pub fn new(net: &Network, trees: u8, rng: &mut Rng) -> Result<Self, RoutingError> {
        let n = net.num_switches();
        let mut out = Vec::with_capacity(trees as usize);
        let mut max_depth = 0;
        for _ in 0..trees.max(1) {
            base::cancel::check("building the SPDA spanning trees")?;
            let root = below(rng, n.max(1) as u64) as SwitchId;
            let mut t = Tree {
                parent: vec![u32::MAX; n],
                depth: vec![u32::MAX; n],
                up_port: vec![0; n],
                down_port: vec![0; n],
            };
            t.depth[root as usize] = 0;
            t.parent[root as usize] = root;
            let mut queue = VecDeque::from([root]);
            while let Some(s) = queue.pop_front() {
                for (port, x) in net.neighbours(s) {
                    if t.depth[x as usize] == u32::MAX {
                        t.depth[x as usize] = t.depth[s as usize] + 1;
                        t.parent[x as usize] = s;
                        t.down_port[x as usize] = port;
                        queue.push_back(x);
                    }
                }
            }
            for s in 0..n as SwitchId {
                if t.depth[s as usize] == u32::MAX {
                    return Err(RoutingError::disconnected(root, s));
                }
                if s != root {
                    let p = t.parent[s as usize];
                    t.up_port[s as usize] = net
                        .neighbours(s)
                        .find(|&(_, x)| x == p)
                        .map(|(port, _)| port)
                        .expect("links are bidirectional");
                }
                max_depth = max_depth.max(t.depth[s as usize]);
            }
            out.push(t);
        }
        Ok(Self { trees: out, max_hops: 2 * max_depth })
    }

    /// Number of trees (= VCs used).
    pub fn trees(&self) -> usize {
        self.trees.len()
    }
}

impl Routing for Spda {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn reads(&self) -> Reads {
        // The spanning tree is drawn at injection.
        Reads { random_init: true, ..Reads::NOTHING }
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn init(&self, _src: SwitchId, _dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        state.phase = below(rng, self.trees.len() as u64) as u8;
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
        let tree = packet.route.phase;
        let t = &self.trees[tree as usize];
        let depth_here = t.depth[at as usize];
        // Down if `at` is an ancestor of `dst`: `dst`'s ancestor one level below `at`
        // then has `at` as parent.
        let mut a = dst;
        while t.depth[a as usize] > depth_here + 1 {
            a = t.parent[a as usize];
        }
        let port = if t.depth[a as usize] == depth_here + 1 && t.parent[a as usize] == at {
            t.down_port[a as usize]
        } else {
            t.up_port[at as usize]
        };
        out.push(Candidate { port, vc: tree, penalty: 0 });
    }
}

/// `spda` in the routing registry.
pub const SPDA: RoutingEntry = RoutingEntry {
    name: "spda",
    doc: "SPDA: one BFS spanning tree per VC from random roots; a packet follows one tree, on its VC",
    topologies: "any",
    vcs: "1 (uses all router.vcs, one tree each)",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(1, 0, 0),
    build: |ctx| Ok(Arc::new(Spda::new(ctx.net, ctx.vcs, &mut ctx.rng())?)),
};

//! LASH, layered shortest path routing: Skeie, Lysne, Theiss, "Layered Shortest Path (LASH)
//! Routing in Irregular System Area Networks", IPDPS'02 (as in OpenSM's `lash`).
//!
//! One shortest path per switch pair, destination-based: at switch `s` towards `d` the
//! minimal next hops are those of the distance table, and one is kept by the hash of
//! `(s, d)` that `shortest_path` uses. Then, for each pair of switches with endpoints
//! (`a < b`, in id order), both directions' paths go into the first layer whose channel
//! dependency graph stays acyclic with them (an incremental cycle check, see
//! `DynDag`); a new layer is opened if none fits. A packet keeps its pair's layer as its
//! VC on every hop. Spare VCs then split the fullest layers (`Layered::spread_over`).

use super::graph::{connected_diameter, SwitchGraph};
use super::layered::{DynDag, LayerOf, Layered, Tables};
use super::registry::{RoutingEntry, Settings};
use super::VcPolicy;
use crate::topology::metrics::DistanceTable;
use crate::topology::{Network, PortId, SwitchId, TopologyError};

/// Builds the LASH tables for `net`.
pub fn build(net: &Network, endpoint_switch: &[SwitchId]) -> Result<Layered, TopologyError> {
    let dist = DistanceTable::compute(net)?;
    connected_diameter(&dist)?;
    let graph = SwitchGraph::new(net);
    let mut t = Tables::new(net, endpoint_switch);
    let n = t.n;
    let mut minimal: Vec<(PortId, SwitchId)> = Vec::new();
    for d in 0..n as SwitchId {
        for s in 0..n as SwitchId {
            if s == d {
                continue;
            }
            let here = dist.get(d, s);
            minimal.clear();
            minimal.extend(graph.neighbours(s).iter().filter(|&&(_, x)| dist.get(d, x) + 1 == here));
            let pick =
                (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(d as u64) % minimal.len() as u64;
            t.next[d as usize * n + s as usize] = minimal[pick as usize].0;
        }
    }
    let mut layer = vec![0u8; n * n];
    let mut dags: Vec<DynDag> = Vec::new();
    let mut deps = Vec::new();
    let mut max_hops = 0;
    let terminals = t.terminals.clone();
    for (i, &a) in terminals.iter().enumerate() {
        crate::cancel::check("assigning the LASH layers")?;
        for &b in &terminals[i + 1..] {
            deps.clear();
            max_hops = max_hops.max(t.deps(a, b, &mut deps));
            max_hops = max_hops.max(t.deps(b, a, &mut deps));
            let l = match dags.iter_mut().position(|g| g.add_all(&deps)) {
                Some(l) => l,
                None => {
                    let mut g = DynDag::new(t.num_channels());
                    // Two opposite shortest paths share no channel: alone they are acyclic.
                    assert!(g.add_all(&deps), "LASH: a pair's paths alone form a cycle");
                    dags.push(g);
                    dags.len() - 1
                }
            };
            // Beyond 255 layers `finish` fails; the stored value is then irrelevant.
            let l = l.min(255) as u8;
            layer[a as usize * n + b as usize] = l;
            layer[b as usize * n + a as usize] = l;
        }
    }
    let layers = dags.len();
    t.finish("lash", LayerOf::Pair(layer), layers, max_hops)
}

/// `lash` in the routing registry.
pub const LASH: RoutingEntry = RoutingEntry {
    name: "lash",
    doc: "LASH: one shortest path per switch pair; both directions go into the first layer whose CDG stays acyclic, a new layer if none; spare VCs then split the fullest layers",
    topologies: "any",
    vcs: "one VC per layer (reported; fewer router.vcs is an error; all router.vcs are used)",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(0, 10, 0),
    build: |ctx| super::layered::fit(ctx, build(ctx.net, ctx.endpoint_switch)?),
};

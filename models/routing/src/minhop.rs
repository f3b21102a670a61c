//! `minhop`: OpenSM's default routing engine (MinHop, `osm_ucast_mgr.c` and
//! `osm_switch_recommend_path` in `osm_switch.c`, OpenSM 3.3), with the tables OpenSM
//! computes entry for entry on the same fabric (scripts/validation/opensm_per_lid.py).
//!
//! Every switch routes each destination endpoint (an HCA port's LID) on its own, over one of
//! its ports on a shortest path, the one that carries the fewest endpoints so far (ties: the
//! lowest IB port). The endpoints go switch by switch, the switches in OpenSM's order
//! (`IbView::opensm_switch_order`) sorted by their endpoints, most first (stable), a
//! switch's endpoints in port order; an endpoint on the switch itself counts on its port.
//! Each switch keeps its own counts, so the switches are routed independently (in parallel
//! here). With OpenSM's defaults (LMC 0): no weighting by remote system or node, no port
//! shifting or scattering, and routes to switches' own LIDs, which carry no simulated
//! traffic, not computed (OpenSM routes them last, uncounted).
//!
//! MinHop's routes are shortest but not deadlock-free on one VC (a torus closes cycles):
//! its default VC policy is the ladder, a VC per hop of the longest route. With
//! `routing.vc_policy = "folded"` on one VC (`router.vcs = 1`) it runs as OpenSM configures
//! it, every route on VL 0, and `xnet routes` shows the cycle where there is one.

use super::graph::connected_diameter;
use super::layered::{Destinations, LayerOf, Layered, Tables};
use super::registry::{BuildContext, RoutingEntry, Settings};
use super::{Routing, VcPolicy};
use crate::RoutingError;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::sync::Arc;
use topology::ib::IbView;
use topology::metrics::DistanceTable;
use topology::{EndpointId, Network, PortId, PortTarget, SwitchId};

/// Builds OpenSM's MinHop tables for `net`: a column per endpoint.
pub fn build(net: &Network, endpoint_switch: &[SwitchId]) -> Result<Layered, RoutingError> {
    let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
    let diameter = connected_diameter(&dist)?;
    let n = net.num_switches();
    let view = IbView::of(net);
    let mut endpoints_of: Vec<Vec<EndpointId>> = vec![Vec::new(); n];
    for s in 0..n as SwitchId {
        for p in view.ports_in_ib_order(net, s) {
            if let PortTarget::Endpoint(e) = net.ports(s)[p as usize].target {
                endpoints_of[s as usize].push(e);
            }
        }
    }
    let mut order = IbView::opensm_switch_order(net);
    order.sort_by_key(|&s| Reverse(endpoints_of[s as usize].len()));
    let destinations: Vec<EndpointId> =
        order.iter().flat_map(|&s| endpoints_of[s as usize].iter().copied()).collect();
    // Per switch its column of ports, one entry per destination (in endpoint id order).
    let rows: Vec<Vec<PortId>> = (0..n as SwitchId)
        .into_par_iter()
        .map(|s| {
            base::cancel::check("building the MinHop tables")?;
            let ports = view.ports_in_ib_order(net, s);
            let mut carried = vec![0u32; net.ports(s).len()];
            let mut row = vec![PortId::MAX; endpoint_switch.len()];
            for &e in &destinations {
                let (home, terminal) = net.endpoint_location[e as usize];
                let best = if home == s {
                    terminal
                } else {
                    let shortest = dist.get(s, home) as u32;
                    let mut best: Option<PortId> = None;
                    for &p in &ports {
                        let PortTarget::Switch { switch, .. } = net.ports(s)[p as usize].target else {
                            continue;
                        };
                        if switch == s || dist.get(switch, home) as u32 + 1 != shortest {
                            continue;
                        }
                        if best.is_none_or(|b| carried[p as usize] < carried[b as usize]) {
                            best = Some(p);
                        }
                    }
                    best.expect("a connected network has a next hop on a shortest path")
                };
                carried[best as usize] += 1;
                row[e as usize] = best;
            }
            Ok(row)
        })
        .collect::<Result<_, RoutingError>>()?;
    let mut t = Tables::with(net, endpoint_switch, Destinations::Endpoints);
    for (s, row) in rows.iter().enumerate() {
        for (e, &port) in row.iter().enumerate() {
            t.next[e * n + s] = port;
        }
    }
    t.finish("minhop", LayerOf::Destination(vec![0; endpoint_switch.len()]), 1, diameter)
}

fn build_entry(ctx: &BuildContext<'_>) -> Result<Arc<dyn Routing>, RoutingError> {
    let mut r = build(ctx.net, ctx.endpoint_switch)?;
    r.merge_identical_columns();
    Ok(Arc::new(r))
}

/// `minhop` in the routing registry.
pub const MINHOP: RoutingEntry = RoutingEntry {
    name: "minhop",
    doc: "OpenSM's MinHop (its default engine): each switch routes each endpoint over the shortest-path port that carries the fewest endpoints so far, tables per endpoint equal to OpenSM 3.3's; shortest paths, not deadlock-free on one VC",
    topologies: "any",
    vcs: "ladder: as many as the longest route (vc_policy = \"folded\" on 1 VC: OpenSM's one VL, with its deadlocks)",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    // The distance table (a byte per switch pair) and a port per switch and endpoint
    // (2 bytes), built per switch.
    state_bytes: |size| {
        size.pairs().saturating_add(size.switches.saturating_mul(size.endpoints).saturating_mul(4)).saturating_add(size.per_switch())
    },
    build: build_entry,
};

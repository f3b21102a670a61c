//! The first-candidate paths, one per ordered pair of switches (the path a packet takes
//! when it always takes its first candidate at zero load; the module docs, "Path
//! metrics"): the path metrics of the report from the counts the exploration gathers,
//! the walk per source where a destination's routes fail, and the same paths as
//! forwarding tables ([`path_tables`], behind `xnet routes --dump-tables`).

use super::{Acc, AnalysisError, Ctx, LinkWeight, Share, Unreachable, PATH_UNIT, SIGMA_K, SPREAD_UNIT};
use crate::packet::Packet;
use crate::tables::{PathTables, NO_PORT};
use crate::{Hop, Routes};
use base::rng::{stream, Purpose, Rng};
use rayon::prelude::*;
use topology::metrics::{all_pairs, count, Adjacency, BATCH};
use topology::{EndpointId, Network, PortId, PortTarget, SwitchId};

/// The path metrics of the report: ARD, the link weights and their statistics, the spread
/// link weights and sigma.
pub(super) struct PathMetrics {
    pub(super) average_routing_distance: f64,
    pub(super) link_weights: Vec<LinkWeight>,
    pub(super) link_weight_avg: f64,
    pub(super) link_weight_std: f64,
    pub(super) link_weight_max: f64,
    pub(super) spread_link_weight_avg: f64,
    pub(super) spread_link_weight_std: f64,
    pub(super) spread_link_weight_max: f64,
    pub(super) sigma: f64,
    pub(super) perfect_channel_load: f64,
}

impl PathMetrics {
    /// The metrics of the first-candidate paths counted in `acc`, from the switches with
    /// endpoints (`terminals`) to the checked `destinations`.
    pub(super) fn new(net: &Network, acc: &Acc, terminals: &[SwitchId], destinations: &[SwitchId]) -> Self {
        let n = destinations.len() as f64;
        let mut link_weights = Vec::new();
        for s in 0..net.num_switches() as SwitchId {
            let base = net.port_offsets[s as usize] as usize;
            for (port, _) in net.neighbours(s) {
                link_weights.push(LinkWeight {
                    switch: s,
                    port,
                    weight: acc.link_counts[base + port as usize] as f64 / PATH_UNIT as f64,
                });
            }
        }
        let links = link_weights.len();
        let c = links.max(1) as f64;
        let total: u64 = acc.link_counts.iter().sum();
        let avg = total as f64 / PATH_UNIT as f64 / c;
        let var = link_weights.iter().map(|l| (l.weight - avg).powi(2)).sum::<f64>() / (c - 1.0).max(1.0);
        let spread: Vec<f64> = link_weights
            .iter()
            .map(|l| {
                acc.spread[net.port_offsets[l.switch as usize] as usize + l.port as usize] as f64
                    / SPREAD_UNIT
            })
            .collect();
        let spread_avg = spread.iter().sum::<f64>() / c;
        let spread_std =
            (spread.iter().map(|w| (w - spread_avg).powi(2)).sum::<f64>() / (c - 1.0).max(1.0)).sqrt();
        let spread_max = spread.iter().copied().fold(0.0, f64::max);
        let perfect = shortest_total(net, terminals, destinations) as f64 / c;
        let sigma =
            (link_weights.iter().map(|l| (perfect - l.weight).abs().powi(SIGMA_K as i32)).sum::<f64>() / c)
                .powf(1.0 / SIGMA_K as f64);
        PathMetrics {
            average_routing_distance: if acc.pairs == 0 {
                0.0
            } else {
                (acc.visited as f64 / PATH_UNIT as f64 + n) / (acc.pairs as f64 / PATH_UNIT as f64 + n)
            },
            link_weight_avg: avg,
            link_weight_std: var.sqrt(),
            link_weight_max: link_weights.iter().map(|l| l.weight).fold(0.0, f64::max),
            spread_link_weight_avg: spread_avg,
            spread_link_weight_std: spread_std,
            spread_link_weight_max: spread_max,
            sigma,
            perfect_channel_load: perfect,
            link_weights,
        }
    }
}

/// Sum of the shortest distances from every terminal switch to every destination
/// (unreachable pairs left out): bit-parallel BFS from the destinations (links are
/// bidirectional).
fn shortest_total(net: &Network, terminals: &[SwitchId], destinations: &[SwitchId]) -> u64 {
    let adj = Adjacency::new(net);
    let mut is_terminal = vec![false; net.num_switches()];
    for &s in terminals {
        is_terminal[s as usize] = true;
    }
    let mut sorted = destinations.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let (sums, _) = all_pairs(
        &adj,
        &sorted,
        vec![(); sorted.len().div_ceil(BATCH)],
        |_, ()| 0u64,
        |sum, level, v, new| {
            if is_terminal[v as usize] {
                *sum += level as u64 * count(new) as u64;
            }
        },
        |sum| sum,
    );
    sums.into_iter().sum()
}

/// The forwarding tables and path SLs of `routes` on `net` (arguments as
/// [`analyse_with`](super::analyse_with)), as `xnet routes --dump-tables` writes them:
/// the route of the first candidate from every switch with endpoints to every
/// destination, recorded per switch and destination. Errors when the routes do not fit such tables: two routes to one
/// destination leaving a switch by different ports (source-dependent or adaptive
/// routing), or a route changing VC on the way (an SL fixes one VL per route).
pub fn path_tables(net: &Network, routes: &Routes, vcs: u8, seed: u64) -> Result<PathTables, AnalysisError> {
    let ctx = Ctx::new(net, routes, vcs, seed, false);
    let n = net.num_switches();
    // Per destination switch: its columns (endpoints, ports, SLs).
    type Column = (Vec<EndpointId>, Vec<PortId>, Vec<u8>);
    let per_switch: Vec<Result<Vec<Column>, AnalysisError>> = ctx
        .terminals
        .par_iter()
        .map(|&d| {
            ctx.destination_groups(d)
                .into_iter()
                .map(|group| {
                    let (mut ports, mut sls) = (vec![NO_PORT; n], vec![0; n]);
                    ctx.column(d, group[0], &mut ports, &mut sls)?;
                    Ok((group, ports, sls))
                })
                .collect()
        })
        .collect();
    let mut column_of = vec![0u32; net.num_endpoints()];
    let (mut ports, mut sls) = (Vec::new(), Vec::new());
    let mut next = 0u32;
    for columns in per_switch {
        for (endpoints, p, l) in columns? {
            for e in endpoints {
                column_of[e as usize] = next;
            }
            ports.extend(p);
            sls.extend(l);
            next += 1;
        }
    }
    Ok(PathTables::new(n, column_of, ports, sls))
}

impl Ctx<'_> {
    /// The first-candidate routes from every source to endpoint `e` on `d`, as one column
    /// of forwarding tables (see [`path_tables`]).
    fn column(
        &self,
        d: SwitchId,
        e: EndpointId,
        ports: &mut [PortId],
        sls: &mut [u8],
    ) -> Result<(), AnalysisError> {
        let mut walk = FirstWalk::new(self, d);
        let mut from: Vec<SwitchId> = vec![SwitchId::MAX; self.net.num_switches()];
        for &s in &self.terminals {
            if s == d {
                continue;
            }
            let mut vc = None;
            walk.route(self, s, e, |at, c, _, p| {
                let slot = &mut ports[at as usize];
                if *slot != NO_PORT && *slot != c.port {
                    return Err(format!(
                        "not destination-based: towards switch {d}, switch {at} forwards the route from switch {} on port {} \
                         and the route from switch {s} on port {}; forwarding tables hold one port per destination \
                         (this routing's first candidate depends on the source)",
                        from[at as usize], *slot, c.port
                    ));
                }
                *slot = c.port;
                from[at as usize] = s;
                if *vc.get_or_insert(c.vc) != c.vc {
                    return Err(format!(
                        "the route from switch {s} to switch {d} changes VC ({} then {} at hop {}): an SL fixes one VL \
                         per route (use a layered routing with vc_policy = \"routing\")",
                        vc.unwrap_or(0),
                        c.vc,
                        p.hops
                    ));
                }
                Ok(())
            })
            .map_err(|(at, reason)| AnalysisError(format!("route from switch {s} to switch {d}, at switch {at}: {reason}")))?;
            sls[s as usize] = vc.unwrap_or(0);
        }
        Ok(())
    }

    fn fail(&self, acc: &mut Acc, src: SwitchId, at: SwitchId, dst: SwitchId, reason: String) {
        acc.failures.push(Unreachable { src, dst, at, reason });
    }

    /// The first-candidate path of every source to endpoint `e` on `d`, walked one by one,
    /// into the path metrics of `acc` (for destinations with failing routes).
    pub(super) fn first_paths(&self, d: SwitchId, e: EndpointId, share: Share, acc: &mut Acc) {
        let mut walk = FirstWalk::new(self, d);
        let mut used = Vec::new();
        for &s in &self.terminals {
            if s == d {
                continue;
            }
            used.clear();
            match walk.route(self, s, e, |_, _, link, _| {
                used.push(link);
                Ok(())
            }) {
                Err((at, reason)) => self.fail(acc, s, at, d, reason),
                Ok(hops) => {
                    for &u in &used {
                        acc.link_counts[u] += share.of(1);
                    }
                    acc.visited += share.of(hops as u64 + 1);
                    acc.pairs += share.of(1);
                    acc.longest_first = acc.longest_first.max(hops as u32);
                }
            }
        }
    }
}

/// Walks first-candidate routes towards one destination switch, as the router forwards a
/// packet that always takes its first candidate at zero load (its streams and buffers).
struct FirstWalk {
    d: SwitchId,
    rng: Rng,
    unused: Rng,
    cands: Vec<crate::Candidate>,
}

impl FirstWalk {
    fn new(ctx: &Ctx<'_>, d: SwitchId) -> Self {
        FirstWalk {
            d,
            rng: stream(ctx.seed, Purpose::Routing, d as u64 | 2 << 40),
            unused: stream(0, Purpose::Routing, 0),
            cands: Vec::new(),
        }
    }

    /// The route from switch `s` to endpoint `e`: `step(at, candidate, global port, packet
    /// before the hop)` at every hop, then its hops; or where and why it fails (no
    /// candidate, a port to no switch, a loop, or `step`'s error).
    fn route(
        &mut self,
        ctx: &Ctx<'_>,
        s: SwitchId,
        e: EndpointId,
        mut step: impl FnMut(SwitchId, crate::Candidate, usize, &Packet) -> Result<(), String>,
    ) -> Result<u16, (SwitchId, String)> {
        let (net, d) = (ctx.net, self.d);
        let mut p = ctx.packet(s, e, 0, 0, ctx.default_init(s, d, &mut self.unused));
        let mut at = s;
        let mut in_port = ctx.endpoint[s as usize].expect("endpoint").1;
        while at != d {
            let hop = Hop { ports: net.ports(at), at, in_port, dst: d, vcs: ctx.vcs };
            let (hops, vc) = (p.hops, p.vc);
            if !ctx.routes.try_next_hops(&hop, &mut p, &crate::ZeroLoad, &mut self.rng, &mut self.cands) {
                return Err((at, format!("no candidate at switch {at} (hop {hops}, VC {vc})")));
            }
            let c = self.cands[0];
            let Some(PortTarget::Switch { switch, port }) =
                net.ports(at).get(c.port as usize).map(|x| x.target)
            else {
                return Err((at, format!("candidate port {} of switch {at} leads to no switch", c.port)));
            };
            step(at, c, net.port_offsets[at as usize] as usize + c.port as usize, &p).map_err(|r| (at, r))?;
            ctx.routes.on_forward(at, c, &mut p);
            p.hops += 1;
            p.vc = c.vc;
            if p.hops as u32 >= ctx.bound {
                return Err((at, format!("route longer than {} hops (a loop?)", ctx.bound)));
            }
            at = switch;
            in_port = port;
        }
        Ok(p.hops)
    }
}

//! LASH, layered shortest path routing: Skeie, Lysne, Theiss, "Layered Shortest Path (LASH)
//! Routing in Irregular System Area Networks", IPDPS'02, as OpenSM's `lash` engine
//! (osm_ucast_lash.c) implements it.
//!
//! Paths: one shortest path per switch pair, destination-based, from breadth-first
//! spanning trees. The tree of root `r` is a BFS from `r` over the network ports in port
//! order (a switch's parent is the first switch that reached it); the next hop of `s`
//! towards `d` is taken from the first root, in id order, whose tree has `d` below `s`
//! (every switch's own tree has all others below it, so every entry is set). Sub-paths of
//! tree paths are tree paths, so the routes of one region turn alike: on a torus they
//! resolve the dimensions in a consistent order, and far fewer layers are needed than with
//! paths picked independently per pair (4x4x4 torus: 5 layers as OpenSM, against 9).
//!
//! Layers: for each pair of switches with endpoints (`a < b`, in id order), both
//! directions' paths go into the first layer whose channel dependency graph stays acyclic
//! with them (an incremental cycle check, see `DynDag`); a new layer is opened if none
//! fits. When the layers may not exceed a limit (the VCs, when the routing assigns them),
//! the search stops at the first pair that would need one more, as OpenSM does. A packet
//! keeps its pair's layer as its VC on every hop. Spare VCs then split the fullest layers
//! (`Layered::spread_over`).

use super::graph::connected_diameter;
use super::layered::{endpoints_per_switch, first_fit_each, FirstFit, LayerOf, Layered, Tables};
use super::registry::{RoutingEntry, Settings};
use super::updown::UpDown;
use super::{Candidate, LoadView, Reads, Routing, VcPolicy};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use base::settings::Setting;
use serde::Deserialize;
use std::collections::VecDeque;
use topology::metrics::DistanceTable;
use topology::{Network, PortId, SwitchId};

/// What the layer search found.
pub enum Outcome {
    /// The routing, with every pair in a layer.
    Routed(Layered),
    /// A pair needed more layers than the limit: the search stopped there.
    TooManyLayers {
        /// The limit.
        limit: usize,
        /// Pairs placed before the one that did not fit, of all pairs.
        placed: usize,
        /// All pairs of switches with endpoints.
        pairs: usize,
    },
}

/// The next hop of every switch towards every other, from the BFS spanning trees (see the
/// module docs), into `t.next`.
fn tree_paths(net: &Network, t: &mut Tables) {
    let n = t.n;
    let mut parent = vec![u32::MAX; n];
    // The port of the parent towards each switch, and the BFS order.
    let mut via = vec![PortId::MAX; n];
    let mut order = Vec::with_capacity(n);
    let mut queue = VecDeque::with_capacity(n);
    for root in 0..n as SwitchId {
        parent.fill(u32::MAX);
        parent[root as usize] = root;
        order.clear();
        queue.push_back(root);
        while let Some(s) = queue.pop_front() {
            order.push(s);
            for (port, x) in net.neighbours(s) {
                if parent[x as usize] == u32::MAX {
                    parent[x as usize] = s;
                    via[x as usize] = port;
                    queue.push_back(x);
                }
            }
        }
        // Every switch's entry towards each switch below it, where no earlier root set it:
        // walk up from `d`; the child on the way is where the entry points.
        for &d in &order[1..] {
            let row = d as usize * n;
            let mut child = d;
            while child != root {
                let up = parent[child as usize];
                let entry = &mut t.next[row + up as usize];
                if *entry == PortId::MAX {
                    *entry = via[child as usize];
                }
                child = up;
            }
        }
    }
}

/// The layer of a pair routed over Up*/Down* instead (see [`LashUpDown`]).
const UP_DOWN_PAIR: u8 = u8::MAX;

/// Builds the LASH tables for `net`, with at most `limit` layers (`None`: as many as it
/// takes, up to 255).
pub fn build(
    net: &Network,
    endpoint_switch: &[SwitchId],
    limit: Option<usize>,
) -> Result<Outcome, RoutingError> {
    let t = lash_paths(net, endpoint_switch, Paths::Trees)?;
    Ok(match assign_layers(&t, limit, false)? {
        Ok(p) => Outcome::Routed(p.finish(t)?),
        Err((limit, placed, pairs)) => Outcome::TooManyLayers { limit, placed, pairs },
    })
}

/// The shortest path of every pair that LASH layers.
fn lash_paths(net: &Network, endpoint_switch: &[SwitchId], paths: Paths) -> Result<Tables, RoutingError> {
    let dist = DistanceTable::compute_unless_stopped::<RoutingError>(net)?;
    connected_diameter(&dist)?;
    let mut t = Tables::new(net, endpoint_switch);
    match paths {
        Paths::Trees => tree_paths(net, &mut t),
        Paths::Balanced => {
            let endpoints = endpoints_per_switch(t.n, endpoint_switch);
            super::dfsssp::route(net, &mut t, &endpoints)?;
        }
    }
    Ok(t)
}

/// The layer of every pair, from [`assign_layers`].
struct PairLayers {
    layer: Vec<u8>,
    layers: usize,
    max_hops: u32,
    /// Pairs marked [`UP_DOWN_PAIR`].
    overflowed: usize,
}

impl PairLayers {
    fn finish(self, t: Tables) -> Result<Layered, RoutingError> {
        t.finish("lash", LayerOf::Pair(self.layer), self.layers, self.max_hops)
    }
}

/// Both directions of each pair into the first layer that stays acyclic, at most `limit`
/// layers. With `overflow` the pairs that fit none are marked [`UP_DOWN_PAIR`]; without,
/// the search stops at the first such pair: `(limit, pairs placed, pairs)`.
fn assign_layers(
    t: &Tables,
    limit: Option<usize>,
    overflow: bool,
) -> Result<Result<PairLayers, (usize, usize, usize)>, RoutingError> {
    let n = t.n;
    let mut layer = vec![0u8; n * n];
    let mut fit = FirstFit::new(t.num_channels(), limit);
    let mut max_hops = 0;
    let terminals = &t.terminals;
    let pairs: Vec<(SwitchId, SwitchId)> = terminals
        .iter()
        .enumerate()
        .flat_map(|(i, &a)| terminals[i + 1..].iter().map(move |&b| (a, b)))
        .collect();
    let mut placed = 0;
    let mut overflowed = 0;
    let both_ways = |&(a, b): &(SwitchId, SwitchId), deps: &mut Vec<(u32, u32)>| {
        t.deps(a, b as usize, deps).max(t.deps(b, a as usize, deps))
    };
    let finished =
        first_fit_each(&mut fit, &pairs, "assigning the LASH layers", both_ways, |&(a, b), l, hops| {
            max_hops = max_hops.max(hops);
            let l = match l {
                Some(l) => l,
                None if overflow => {
                    layer[a as usize * n + b as usize] = UP_DOWN_PAIR;
                    layer[b as usize * n + a as usize] = UP_DOWN_PAIR;
                    overflowed += 1;
                    return true;
                }
                None => return false,
            };
            // Beyond 255 layers `finish` fails; the stored value is then irrelevant.
            let l = l.min(255) as u8;
            layer[a as usize * n + b as usize] = l;
            layer[b as usize * n + a as usize] = l;
            placed += 1;
            true
        })?;
    if !finished {
        return Ok(Err((fit.layers(), placed, pairs.len())));
    }
    Ok(Ok(PairLayers { layer, layers: fit.layers(), max_hops, overflowed }))
}

/// The survey's LASH with too few VCs (Flich et al., IEEE TPDS 23(3), 2012, section 6.2):
/// the pairs that fit none of the first `router.vcs - 1` layers travel the last VC over
/// Up*/Down* routes (legal, so acyclic on their own VC, and possibly longer than the
/// shortest).
pub struct LashUpDown {
    lash: Layered,
    up_down: UpDown,
    /// The VC of the Up*/Down* pairs.
    up_down_vc: u8,
    summary: String,
}

impl Routing for LashUpDown {
    fn vcs_required(&self) -> u8 {
        self.up_down_vc + 1
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.lash.max_hops().max(self.up_down.max_hops())
    }

    fn build_summary(&self) -> Option<String> {
        Some(self.summary.clone())
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, rng: &mut Rng) {
        if self.lash.layer_of(src, dst) == UP_DOWN_PAIR {
            // `global_hops` marks the Up*/Down* pairs; `phase` is then Up*/Down*'s own.
            *state = RouteState { phase: 0, global_hops: 1, ..*state };
        } else {
            self.lash.init(src, dst, state, rng);
        }
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        packet: &mut Packet,
        load: &dyn LoadView,
        rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        if packet.route.global_hops == 1 {
            let start = out.len();
            self.up_down.candidates(at, dst, packet, load, rng, out);
            for c in &mut out[start..] {
                c.vc = self.up_down_vc;
            }
        } else {
            self.lash.candidates(at, dst, packet, load, rng, out);
        }
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        if packet.route.global_hops == 1 {
            self.up_down.on_forward(at, chosen, packet);
        }
    }
}

/// `[routing.lash]`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LashSettings {
    #[serde(default)]
    too_few_vcs: TooFewVcs,
    #[serde(default)]
    paths: Paths,
}

/// Which shortest paths LASH layers.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Paths {
    /// OpenSM's: from breadth-first spanning trees (few layers, unbalanced links).
    #[default]
    Trees,
    /// DFSSSP's balanced shortest paths (a Dijkstra per destination over link weights
    /// that grow with the routes over them): balanced links, usually more layers.
    Balanced,
}

/// What LASH does when the pairs need more layers than the VCs.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum TooFewVcs {
    /// The configuration is refused, naming the pair that fitted no layer.
    #[default]
    Refuse,
    /// The survey's LASH ([`LashUpDown`]).
    UpDown,
}

/// The registry's build: when LASH assigns the VCs, its layers may not exceed them.
fn build_entry(
    ctx: &super::registry::BuildContext<'_>,
) -> Result<std::sync::Arc<dyn super::Routing>, RoutingError> {
    let settings: LashSettings = ctx.settings()?;
    let up_down = settings.too_few_vcs == TooFewVcs::UpDown;
    let limit = (ctx.vc_policy == VcPolicy::Routing).then_some(ctx.vcs as usize);
    let t = lash_paths(ctx.net, ctx.endpoint_switch, settings.paths)?;
    match assign_layers(&t, limit, false)? {
        Ok(p) => super::layered::fit(ctx, p.finish(t)?),
        Err(_) if up_down && ctx.vcs >= 2 => {
            // The same paths again, layered into one VC fewer with the overflow kept.
            let lash_layers = ctx.vcs as usize - 1;
            let Ok(p) = assign_layers(&t, Some(lash_layers), true)? else {
                unreachable!("with overflow every pair is placed");
            };
            let overflowed = p.overflowed;
            let lash = p.finish(t)?;
            let pairs = lash.pairs();
            let summary = format!(
                "{overflowed} of {pairs} switch pairs over Up*/Down* on VC {lash_layers}, the others in LASH layers 0 to {}",
                lash_layers - 1
            );
            let up_down = UpDown::new(ctx.net, None)?;
            Ok(std::sync::Arc::new(LashUpDown { lash, up_down, up_down_vc: lash_layers as u8, summary }))
        }
        Err((limit, placed, pairs)) => Err(ctx.too_many_layers(limit, "pair", placed, pairs)),
    }
}

/// `lash` in the routing registry.
pub const LASH: RoutingEntry = RoutingEntry {
    name: "lash",
    doc: "LASH: one shortest path per switch pair from BFS spanning trees (as OpenSM); both directions go into the first layer whose CDG stays acyclic, a new layer if none, stopping once the layers would exceed the VCs; spare VCs then split the fullest layers",
    topologies: "any",
    vcs: "one VC per layer (reported; fewer router.vcs is an error; all router.vcs are used)",
    settings: Settings::typed::<LashSettings>(&[
        Setting {
            key: "too_few_vcs",
            default: "refuse",
            doc: "when the pairs need more layers than router.vcs: refuse, or up_down (the survey's LASH: pairs that fit none of the first router.vcs - 1 layers take Up*/Down* routes on the last VC)",
        },
        Setting {
            key: "paths",
            default: "trees",
            doc: "trees: OpenSM's shortest paths from BFS spanning trees (few layers); balanced: DFSSSP's balanced shortest paths (even link weights, usually more layers)",
        },
    ]),
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    state_bytes: |size| size.table(0, 10, 0),
    build: build_entry,
};

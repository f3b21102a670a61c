//! Shared machinery of the layered table routings (`dfsssp`, `lash`, `nue`, `minhop`): a
//! compact next-hop table with one column per destination (a switch, or an endpoint where
//! the engine routes each endpoint on its own, as OpenSM routes each LID), a layer (= VC)
//! per (source switch, destination) pair or per destination kept on every hop, and an
//! incrementally maintained acyclic channel dependency graph (Pearce and Kelly's dynamic
//! topological order, ACM J. Experimental Algorithmics 11, 2006: `DynDag`).
//!
//! One file: the layered routing (`Layered`), the tables it is built from (`Tables`),
//! the first-fit layering (`FirstFit`) and the acyclic channel dependency graph each
//! layer keeps (`DynDag`, also used by `nue`, `lash_tor` and `angara`) are one engine,
//! read in the order a build uses them; about 85 of its lines are tests.
//!
//! A channel is a directed switch-to-switch link, numbered by its global port index
//! (`port_offsets[switch] + port`). A path's dependencies are its consecutive channel pairs.

use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use base::settings::{Choice, Setting};
use rayon::prelude::*;
use std::collections::HashMap;
use topology::{EndpointId, Network, PortId, PortTarget, SwitchId};

/// Most layers a table can hold (the layer is stored in a `u8`).
pub const MAX_LAYERS: usize = 255;

/// What a table engine routes apart: each destination switch (all its endpoints alike), or
/// each destination endpoint on its own, as OpenSM routes each LID (`[routing.NAME]
/// destinations`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destinations {
    /// A column per endpoint (OpenSM's LIDs): the endpoints of one switch may be reached
    /// over different links. Tables of switches x endpoints.
    #[default]
    Endpoints,
    /// A column per switch: every endpoint of a switch is reached the same way. Tables of
    /// switches x switches: what a network of a million endpoints can afford.
    Switches,
}

/// The values of the `destinations` key.
pub const DESTINATIONS: &[Choice<Destinations>] = &[
    Choice {
        value: Destinations::Endpoints,
        name: "endpoints",
        doc: "a route per destination endpoint, as OpenSM routes each LID (tables of switches x endpoints)",
    },
    Choice {
        value: Destinations::Switches,
        name: "switches",
        doc: "a route per destination switch, shared by its endpoints (tables of switches x switches)",
    },
];

/// The `destinations` key of the table engines that route either way.
pub const DESTINATIONS_SETTING: Setting = Setting {
    key: "destinations",
    default: "endpoints",
    doc: "endpoints: a route per destination endpoint in the engine's order, as OpenSM routes each LID (tables of switches x endpoints); switches: one route per destination switch for all its endpoints (switches x switches: for networks too large for the other)",
};

/// Which layer (VC) a packet travels in.
pub(crate) enum LayerOf {
    /// `layer[src * columns + column]`: one layer per (source switch, destination) pair
    /// (LASH, DFSSSP).
    Pair(Vec<u8>),
    /// `layer[column]`: one layer per destination (Nue).
    Destination(Vec<u8>),
}

/// The destinations of a table's columns.
#[derive(Clone, Debug)]
pub(crate) struct Columns {
    /// The switch of each column's destination.
    pub(crate) switch: Vec<SwitchId>,
    /// Each endpoint's column where columns are endpoints; `None`: a column per switch,
    /// numbered as the switch.
    pub(crate) of_endpoint: Option<Vec<u32>>,
}

impl Columns {
    /// Number of columns.
    pub(crate) fn len(&self) -> usize {
        self.switch.len()
    }

    /// The column of a packet for endpoint `e` at switch `dst`.
    #[inline]
    fn of(&self, e: EndpointId, dst: SwitchId) -> usize {
        match &self.of_endpoint {
            Some(of) => of[e as usize] as usize,
            None => dst as usize,
        }
    }
}

/// A destination-based next-hop table with a layer per (source switch, destination) pair
/// or per destination; a destination being a switch or an endpoint ([`Destinations`]).
pub struct Layered {
    n: usize,
    /// `next[column * n + at]`: the port `at` forwards on towards the column's destination.
    next: Vec<PortId>,
    columns: Columns,
    layer: LayerOf,
    /// Layers in use (after spreading over spare VCs).
    layers: u8,
    /// Fewest layers the engine needed: the VCs a configuration must give it.
    needed: u8,
    max_hops: u32,
    summary: Option<String>,
    /// Switches with endpoints, in id order.
    terminals: Vec<SwitchId>,
}

impl Layered {
    /// Layers (VCs) used.
    pub fn layers(&self) -> u8 {
        self.layers
    }

    /// Sets what [`Routing::build_summary`] reports.
    pub(crate) fn set_summary(&mut self, summary: String) {
        self.summary = Some(summary);
    }

    /// Unordered pairs of switches with endpoints.
    pub fn pairs(&self) -> usize {
        self.terminals.len() * self.terminals.len().saturating_sub(1) / 2
    }

    /// Fewest layers (VCs) the tables need.
    pub fn layers_needed(&self) -> u8 {
        self.needed
    }

    /// Columns of the table: one per destination switch, or per destination endpoint (fewer
    /// once identical ones are merged).
    pub fn columns(&self) -> usize {
        self.columns.len()
    }

    /// Spreads per-pair layers over `vcs` VCs when there are spare ones: while a VC is
    /// free, the layer holding the most (source switch, destination) pairs gives every
    /// other pair (in pair order) to a new layer. A subset of an acyclic layer's
    /// dependencies is acyclic, so this stays deadlock-free; it splits the traffic of each
    /// VC over more VCs, as OpenSM's DFSSSP balances over spare virtual lanes. No-op for
    /// per-destination layers.
    pub(crate) fn spread_over(&mut self, vcs: u8) {
        let LayerOf::Pair(layer) = &mut self.layer else { return };
        let cols = self.columns.len();
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); self.layers as usize];
        for &s in &self.terminals {
            for (c, &d) in self.columns.switch.iter().enumerate() {
                if s != d {
                    let i = s as usize * cols + c;
                    members[layer[i] as usize].push(i);
                }
            }
        }
        while members.len() < vcs as usize {
            let (biggest, size) = members
                .iter()
                .enumerate()
                .map(|(l, m)| (l, m.len()))
                .max_by_key(|&(l, len)| (len, usize::MAX - l))
                .unwrap_or((0, 0));
            if size < 2 {
                break;
            }
            let new = members.len() as u8;
            let old = std::mem::take(&mut members[biggest]);
            let (mut stay, mut go) = (Vec::with_capacity(size / 2 + 1), Vec::with_capacity(size / 2));
            for (k, i) in old.into_iter().enumerate() {
                if k % 2 == 0 {
                    stay.push(i);
                } else {
                    layer[i] = new;
                    go.push(i);
                }
            }
            members[biggest] = stay;
            members.push(go);
        }
        self.layers = members.len() as u8;
    }

    /// Where columns are endpoints: endpoints whose columns are equal (the same port at
    /// every switch, the same layers) share one, which the deadlock verifier then explores
    /// once ([`Routing::destination_class`]) and which saves the table's memory.
    pub(crate) fn merge_identical_columns(&mut self) {
        let Some(of_endpoint) = &self.columns.of_endpoint else { return };
        let (n, cols) = (self.n, self.columns.len());
        let pair_layers = |c: usize| -> Vec<u8> {
            match &self.layer {
                LayerOf::Pair(layer) => (0..n).map(|s| layer[s * cols + c]).collect(),
                LayerOf::Destination(layer) => vec![layer[c]],
            }
        };
        let mut first: HashMap<(&[PortId], Vec<u8>), u32> = HashMap::new();
        let mut kept: Vec<usize> = Vec::new();
        let new_of: Vec<u32> = (0..cols)
            .map(|c| {
                let key = (&self.next[c * n..(c + 1) * n], pair_layers(c));
                *first.entry(key).or_insert_with(|| {
                    kept.push(c);
                    kept.len() as u32 - 1
                })
            })
            .collect();
        if kept.len() == cols {
            return;
        }
        let next: Vec<PortId> =
            kept.iter().flat_map(|&c| self.next[c * n..(c + 1) * n].iter().copied()).collect();
        let layer = match &self.layer {
            LayerOf::Pair(layer) => {
                let k = kept.len();
                let mut out = vec![0u8; n * k];
                for s in 0..n {
                    for (j, &c) in kept.iter().enumerate() {
                        out[s * k + j] = layer[s * cols + c];
                    }
                }
                LayerOf::Pair(out)
            }
            LayerOf::Destination(layer) => LayerOf::Destination(kept.iter().map(|&c| layer[c]).collect()),
        };
        let switch = kept.iter().map(|&c| self.columns.switch[c]).collect();
        let of_endpoint = of_endpoint.iter().map(|&c| new_of[c as usize]).collect();
        self.next = next;
        self.layer = layer;
        self.columns = Columns { switch, of_endpoint: Some(of_endpoint) };
    }

    /// The layer of the path from switch `src` to the destination of `column`.
    fn layer_at(&self, src: SwitchId, column: usize) -> u8 {
        match &self.layer {
            LayerOf::Pair(layer) => layer[src as usize * self.columns.len() + column],
            LayerOf::Destination(layer) => layer[column],
        }
    }

    /// The layer of the path from switch `src` to switch `dst` (tables per switch).
    pub fn layer_of(&self, src: SwitchId, dst: SwitchId) -> u8 {
        debug_assert!(self.columns.of_endpoint.is_none(), "a table per endpoint has a layer per endpoint");
        self.layer_at(src, dst as usize)
    }

    /// The port `at` forwards on towards `column`'s destination.
    pub(crate) fn next_port(&self, at: SwitchId, column: usize) -> PortId {
        self.next[column * self.n + at as usize]
    }
}

impl Routing for Layered {
    fn vcs_required(&self) -> u8 {
        self.needed
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn build_summary(&self) -> Option<String> {
        self.summary.clone()
    }

    fn destination_class(&self, e: EndpointId) -> Option<u32> {
        self.columns.of_endpoint.as_ref().map(|of| of[e as usize])
    }

    fn init(&self, src: SwitchId, dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        if self.columns.of_endpoint.is_none() {
            state.phase = self.layer_of(src, dst);
        }
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
        let column = self.columns.of(packet.dst, dst);
        if self.columns.of_endpoint.is_some() && packet.hops == 0 {
            // Per endpoint, `init` does not see the endpoint: the source switch sets the layer.
            packet.route.phase = self.layer_at(at, column);
        }
        out.push(Candidate { port: self.next_port(at, column), vc: packet.route.phase, penalty: 0 });
    }
}

/// Builder state common to the engines: the next-hop table, its columns and the channel
/// numbering.
pub(crate) struct Tables {
    pub(crate) n: usize,
    /// `next[column * n + at]`.
    pub(crate) next: Vec<PortId>,
    /// The destinations of the columns.
    pub(crate) columns: Columns,
    port_offsets: Vec<u32>,
    /// Switch behind each global port (`u32::MAX`: not a network port).
    port_next: Vec<SwitchId>,
    /// Switches with endpoints, in id order.
    pub(crate) terminals: Vec<SwitchId>,
}

impl Tables {
    /// An empty next-hop table for `net` with a column per switch; `endpoint_switch` gives
    /// the switch of each endpoint.
    pub(crate) fn new(net: &Network, endpoint_switch: &[SwitchId]) -> Self {
        Self::with(net, endpoint_switch, Destinations::Switches)
    }

    /// An empty next-hop table for `net` with a column per `destinations` (endpoints in id
    /// order, or switches).
    pub(crate) fn with(net: &Network, endpoint_switch: &[SwitchId], destinations: Destinations) -> Self {
        let n = net.num_switches();
        let mut port_next = Vec::with_capacity(net.ports.len());
        for s in 0..n as SwitchId {
            port_next.extend(net.ports(s).iter().map(|p| match p.target {
                PortTarget::Switch { switch, .. } => switch,
                _ => u32::MAX,
            }));
        }
        let mut has = vec![false; n];
        for &s in endpoint_switch {
            has[s as usize] = true;
        }
        let terminals = (0..n as SwitchId).filter(|&s| has[s as usize]).collect();
        let columns = match destinations {
            Destinations::Switches => Columns { switch: (0..n as SwitchId).collect(), of_endpoint: None },
            Destinations::Endpoints => Columns {
                switch: endpoint_switch.to_vec(),
                of_endpoint: Some((0..endpoint_switch.len() as u32).collect()),
            },
        };
        Self {
            n,
            next: vec![PortId::MAX; n * columns.len()],
            columns,
            port_offsets: net.port_offsets.clone(),
            port_next,
            terminals,
        }
    }

    /// Number of channel ids (global ports).
    pub(crate) fn num_channels(&self) -> usize {
        self.port_next.len()
    }

    /// Global id of port `port` of `s`.
    pub(crate) fn channel(&self, s: SwitchId, port: PortId) -> u32 {
        self.port_offsets[s as usize] + port as u32
    }

    /// The switch channel `c` leads to.
    pub(crate) fn channel_target(&self, c: u32) -> SwitchId {
        self.port_next[c as usize]
    }

    /// The next switch from `at` towards `column`'s destination.
    pub(crate) fn step(&self, at: SwitchId, column: usize) -> (u32, SwitchId) {
        let port = self.next[column * self.n + at as usize];
        let c = self.channel(at, port);
        (c, self.port_next[c as usize])
    }

    /// Appends the dependencies of the path from switch `src` to `column`'s destination to
    /// `out`; returns its hops.
    pub(crate) fn deps(&self, src: SwitchId, column: usize, out: &mut Vec<(u32, u32)>) -> u32 {
        let dst = self.columns.switch[column];
        let mut at = src;
        let mut prev = u32::MAX;
        let mut hops = 0;
        while at != dst {
            let (c, nxt) = self.step(at, column);
            if prev != u32::MAX {
                out.push((prev, c));
            }
            prev = c;
            at = nxt;
            hops += 1;
            assert!(hops as usize <= self.n, "routing table loops from switch {src} to column {column}");
        }
        hops
    }

    /// The finished routing.
    pub(crate) fn finish(
        self,
        name: &'static str,
        layer: LayerOf,
        layers: usize,
        max_hops: u32,
    ) -> Result<Layered, RoutingError> {
        if layers > MAX_LAYERS {
            return Err(RoutingError::algorithm(format!(
                "`{name}` needs more than {MAX_LAYERS} layers on this network, the most its tables hold"
            )));
        }
        let layers = layers.max(1) as u8;
        Ok(Layered {
            n: self.n,
            next: self.next,
            columns: self.columns,
            layer,
            layers,
            needed: layers,
            max_hops,
            summary: None,
            terminals: self.terminals,
        })
    }
}

/// First-fit layering (LASH's, also DFSSSP's default): each set of dependencies (a path,
/// or a pair's two paths) goes into the first layer whose CDG stays acyclic with it, a new
/// layer when none does, up to an optional limit.
pub(crate) struct FirstFit {
    dags: Vec<DynDag>,
    channels: usize,
    limit: Option<usize>,
}

impl FirstFit {
    /// No layers yet, over `channels` channels, with at most `limit` layers.
    pub(crate) fn new(channels: usize, limit: Option<usize>) -> Self {
        FirstFit { dags: Vec::new(), channels, limit }
    }

    /// The layer `deps` now belong to, or `None` when they fit no layer and the limit
    /// forbids another (nothing is added then).
    pub(crate) fn place(&mut self, deps: &[(u32, u32)]) -> Option<usize> {
        self.place_from(0, deps)
    }

    /// [`Self::place`] trying the layers from `start` on.
    fn place_from(&mut self, start: usize, deps: &[(u32, u32)]) -> Option<usize> {
        let start = start.min(self.dags.len());
        if let Some(l) = self.dags[start..].iter_mut().position(|g| g.add_all(deps)) {
            return Some(start + l);
        }
        if self.limit.is_some_and(|limit| self.dags.len() >= limit) {
            return None;
        }
        let mut g = DynDag::new(self.channels);
        // Shortest paths (and two opposite ones) share no channel: alone they are acyclic.
        assert!(g.add_all(deps), "a path's dependencies alone form a cycle");
        self.dags.push(g);
        Some(self.dags.len() - 1)
    }

    /// [`Self::place`] for each set of `batch` in order, with the same results, the layers
    /// each set does not fit found in parallel.
    ///
    /// Adding dependencies never makes a set that closed a cycle fit, so the lowest layer a
    /// set fits before the batch is a lower bound; each set is then placed in order from
    /// that layer, usually at the first try. With many layers most of first fit's work is
    /// the layers that fail. Those trials run as a wavefront: the batch is cut into
    /// slices, and at step `t` layer `l` tries slice `t - l` (the sets of it that failed
    /// layer `l - 1`), so different layers work at once, each on its own graph, and each
    /// still sees the sets in order. A trial adds the set and takes it out again
    /// ([`DynDag::try_fit`]), which keeps the topological order it found: later trials and
    /// the placing itself then cost less, as in the one-by-one first fit.
    ///
    /// A set equal to one of the [`LOOKBACK`] distinct sets before it lands where that one
    /// did: nothing it adds is new, and the layers before refused the same set (they have
    /// only gained dependencies since). The paths from one switch to the endpoints of
    /// another come one after another and are often equal, so tables per endpoint place
    /// each once (DFSSSP on RRG(876, 17) with 6 endpoints a switch: 42 s to 21 s).
    pub(crate) fn place_batch(&mut self, batch: &[Vec<(u32, u32)>]) -> Vec<Option<usize>> {
        let mut distinct: Vec<&Vec<(u32, u32)>> = Vec::with_capacity(batch.len());
        let mut which = Vec::with_capacity(batch.len());
        for set in batch {
            let recent = distinct.len().saturating_sub(LOOKBACK);
            match distinct[recent..].iter().rposition(|&d| d == set) {
                Some(k) => which.push(recent + k),
                None => {
                    distinct.push(set);
                    which.push(distinct.len() - 1);
                }
            }
        }
        let distinct: Vec<Vec<(u32, u32)>> = distinct.into_iter().cloned().collect();
        let placed = self.place_sliced(&distinct, SLICE);
        which.into_iter().map(|k| placed[k]).collect()
    }

    /// [`Self::place_batch`] with slices of `slice` sets.
    fn place_sliced(&mut self, batch: &[Vec<(u32, u32)>], slice: usize) -> Vec<Option<usize>> {
        let layers = self.dags.len();
        if layers < 2 {
            // Nothing to skip: at most one layer fails per set.
            return batch.iter().map(|deps| self.place(deps)).collect();
        }
        let slices = batch.len().div_ceil(slice);
        // `waiting[l][s]`: the sets of slice `s` that layer `l` tries next.
        let mut waiting: Vec<Vec<Vec<u32>>> = vec![vec![Vec::new(); slices]; layers];
        for (s, sets) in waiting[0].iter_mut().enumerate() {
            sets.extend((s * slice..((s + 1) * slice).min(batch.len())).map(|i| i as u32));
        }
        let mut lowest = vec![layers; batch.len()];
        for step in 0..slices + layers - 1 {
            let active = |l: usize| l <= step && step - l < slices;
            let work: Vec<(usize, &mut DynDag, Vec<u32>)> = self
                .dags
                .iter_mut()
                .enumerate()
                .filter(|&(l, _)| active(l))
                .map(|(l, dag)| (l, dag, std::mem::take(&mut waiting[l][step - l])))
                .collect();
            let tried: Vec<(usize, Vec<u32>, Vec<u32>)> = work
                .into_par_iter()
                .map(|(l, dag, sets)| {
                    let (fit, failed): (Vec<u32>, Vec<u32>) =
                        sets.into_iter().partition(|&i| dag.try_fit(&batch[i as usize]));
                    (l, fit, failed)
                })
                .collect();
            for (l, fit, failed) in tried {
                for i in fit {
                    lowest[i as usize] = l;
                }
                if l + 1 < layers {
                    waiting[l + 1][step - l] = failed;
                }
            }
        }
        batch.iter().zip(lowest).map(|(deps, start)| self.place_from(start, deps)).collect()
    }

    /// Layers opened.
    pub(crate) fn layers(&self) -> usize {
        self.dags.len()
    }
}

/// Sets placed per [`FirstFit::place_batch`] call: enough to keep the threads busy, few
/// enough that stopping at the first set that fits no layer wastes little.
const BATCH: usize = 2048;

/// How many distinct sets back [`FirstFit::place_batch`] looks for an equal one: more than
/// the endpoints of a switch in the networks measured.
const LOOKBACK: usize = 16;

/// Sets per slice of a batch's wavefront ([`FirstFit::place_batch`]).
const SLICE: usize = 64;

/// First fit over `items` in order, in batches: `deps` writes an item's dependencies and
/// returns its hops (it runs in parallel), and `placed` gets each item, its layer and its
/// hops in order, returning `false` to stop. `Ok(false)` when `placed` stopped; `what`
/// names the step if the run is cancelled.
pub(crate) fn first_fit_each<T: Sync>(
    fit: &mut FirstFit,
    items: &[T],
    what: &str,
    deps: impl Fn(&T, &mut Vec<(u32, u32)>) -> u32 + Sync,
    mut placed: impl FnMut(&T, Option<usize>, u32) -> bool,
) -> Result<bool, RoutingError> {
    for chunk in items.chunks(BATCH) {
        base::cancel::check(what)?;
        let (sets, hops): (Vec<Vec<(u32, u32)>>, Vec<u32>) = chunk
            .par_iter()
            .map(|item| {
                let mut out = Vec::new();
                let h = deps(item, &mut out);
                (out, h)
            })
            .unzip();
        for ((item, layer), h) in chunk.iter().zip(fit.place_batch(&sets)).zip(hops) {
            if !placed(item, layer, h) {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// What adding an edge to a [`DynDag`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Added {
    /// The edge was new and is now in the graph.
    New,
    /// The edge was already there.
    Existing,
    /// The edge would close a cycle; the graph is unchanged.
    Cycle,
}

/// A directed acyclic graph kept acyclic under edge insertions, with a dynamic topological
/// order (Pearce and Kelly, "A dynamic topological sort algorithm for directed acyclic
/// graphs", JEA 2006): an insertion `u -> v` with `ord[u] < ord[v]` costs nothing; otherwise
/// only the nodes whose order lies between `ord[v]` and `ord[u]` are searched. Removing an
/// edge never invalidates the order.
pub(crate) struct DynDag {
    succ: Vec<Vec<u32>>,
    pred: Vec<Vec<u32>>,
    ord: Vec<u32>,
    visited: Vec<bool>,
    stack: Vec<u32>,
    fwd: Vec<u32>,
    back: Vec<u32>,
}

impl DynDag {
    pub(crate) fn new(nodes: usize) -> Self {
        Self {
            succ: vec![Vec::new(); nodes],
            pred: vec![Vec::new(); nodes],
            ord: (0..nodes as u32).collect(),
            visited: vec![false; nodes],
            stack: Vec::new(),
            fwd: Vec::new(),
            back: Vec::new(),
        }
    }

    /// Adds `u -> v` unless it closes a cycle.
    pub(crate) fn add(&mut self, u: u32, v: u32) -> Added {
        if self.succ[u as usize].contains(&v) {
            return Added::Existing;
        }
        if u == v {
            return Added::Cycle;
        }
        let (lb, ub) = (self.ord[v as usize], self.ord[u as usize]);
        if lb < ub {
            // Forward search from v among the nodes ordered before u.
            self.fwd.clear();
            self.stack.clear();
            self.stack.push(v);
            self.visited[v as usize] = true;
            let mut cycle = false;
            while let Some(x) = self.stack.pop() {
                self.fwd.push(x);
                for &w in &self.succ[x as usize] {
                    let o = self.ord[w as usize];
                    if o == ub {
                        cycle = true;
                        break;
                    }
                    if !self.visited[w as usize] && o < ub {
                        self.visited[w as usize] = true;
                        self.stack.push(w);
                    }
                }
                if cycle {
                    break;
                }
            }
            if cycle {
                for &x in self.fwd.iter().chain(self.stack.iter()) {
                    self.visited[x as usize] = false;
                }
                return Added::Cycle;
            }
            // Backward search from u among the nodes ordered after v.
            self.back.clear();
            self.stack.push(u);
            self.visited[u as usize] = true;
            while let Some(x) = self.stack.pop() {
                self.back.push(x);
                for &w in &self.pred[x as usize] {
                    if !self.visited[w as usize] && self.ord[w as usize] > lb {
                        self.visited[w as usize] = true;
                        self.stack.push(w);
                    }
                }
            }
            // Reorder: the backward set, then the forward set, over their pooled positions.
            let ord = &self.ord;
            self.back.sort_unstable_by_key(|&x| ord[x as usize]);
            self.fwd.sort_unstable_by_key(|&x| ord[x as usize]);
            let mut pool: Vec<u32> =
                self.back.iter().chain(self.fwd.iter()).map(|&x| ord[x as usize]).collect();
            pool.sort_unstable();
            for (i, &x) in self.back.iter().chain(self.fwd.iter()).enumerate() {
                self.ord[x as usize] = pool[i];
                self.visited[x as usize] = false;
            }
        }
        self.succ[u as usize].push(v);
        self.pred[v as usize].push(u);
        Added::New
    }

    /// Removes `u -> v` (present).
    pub(crate) fn remove(&mut self, u: u32, v: u32) {
        self.succ[u as usize].retain(|&w| w != v);
        self.pred[v as usize].retain(|&w| w != u);
    }

    /// Whether adding all of `edges` keeps the graph acyclic; the graph's edges are as
    /// they were afterwards, but its topological order stays as the trial left it (still
    /// valid: removing edges never invalidates an order).
    pub(crate) fn try_fit(&mut self, edges: &[(u32, u32)]) -> bool {
        let Some(added) = self.add_or_none(edges) else { return false };
        for &(a, b) in &added {
            self.remove(a, b);
        }
        true
    }

    /// Adds all of `edges`, or none of them if together they would close a cycle.
    pub(crate) fn add_all(&mut self, edges: &[(u32, u32)]) -> bool {
        self.add_or_none(edges).is_some()
    }

    /// [`Self::add_all`], returning the edges that were new.
    fn add_or_none(&mut self, edges: &[(u32, u32)]) -> Option<Vec<(u32, u32)>> {
        let mut added = Vec::new();
        for &(u, v) in edges {
            match self.add(u, v) {
                Added::New => added.push((u, v)),
                Added::Existing => {}
                Added::Cycle => {
                    for &(a, b) in &added {
                        self.remove(a, b);
                    }
                    return None;
                }
            }
        }
        Some(added)
    }
}

/// A layered routing fitted to the run's VCs: its layers must fit when it assigns the VCs
/// itself, and then spare VCs split the fullest layers.
pub(super) fn fit(
    ctx: &super::registry::BuildContext<'_>,
    mut r: Layered,
) -> Result<std::sync::Arc<dyn Routing>, RoutingError> {
    ctx.check_layers(r.layers_needed())?;
    if ctx.vc_policy == super::VcPolicy::Routing {
        r.spread_over(ctx.vcs);
    }
    r.merge_identical_columns();
    Ok(std::sync::Arc::new(r))
}

/// How many endpoints each of `n` switches has, from every endpoint's switch.
pub(crate) fn endpoints_per_switch(n: usize, endpoint_switch: &[SwitchId]) -> Vec<u64> {
    let mut endpoints = vec![0u64; n];
    for &s in endpoint_switch {
        endpoints[s as usize] += 1;
    }
    endpoints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dyn_dag_refuses_cycles_and_rolls_back() {
        let mut g = DynDag::new(5);
        assert_eq!(g.add(3, 2), Added::New);
        assert_eq!(g.add(2, 1), Added::New);
        assert_eq!(g.add(3, 2), Added::Existing);
        assert_eq!(g.add(1, 3), Added::Cycle);
        assert_eq!(g.add(1, 0), Added::New);
        assert_eq!(g.add(0, 3), Added::Cycle);
        // The first edge is rolled back when the second closes a cycle.
        assert!(!g.add_all(&[(4, 0), (0, 4)]));
        assert_eq!(g.add(0, 4), Added::New);
        assert_eq!(g.add(4, 3), Added::Cycle);
        assert!(g.add_all(&[(3, 1), (2, 0)]));
    }

    proptest::proptest! {
        /// `try_fit` answers as `add_all` does and leaves the edges alone, and a batch lands every set where one-by-one
        /// first fit puts it, on random paths over a few nodes (many cycles between them).
        #[test]
        fn batches_place_as_first_fit_does(
            paths in proptest::collection::vec(proptest::collection::vec(0u32..12, 2..7), 1..120),
            limit in proptest::option::of(1usize..6),
            batch in 1usize..120,
            slice in 1usize..9,
        ) {
            // Each set is a path's dependencies: a chain of distinct nodes, acyclic alone.
            let sets: Vec<Vec<(u32, u32)>> = paths
                .into_iter()
                .map(|mut p| {
                    let mut seen = [false; 12];
                    p.retain(|&x| !std::mem::replace(&mut seen[x as usize], true));
                    p.windows(2).map(|w| (w[0], w[1])).collect()
                })
                .collect();
            let mut one = FirstFit::new(12, limit);
            let expected: Vec<Option<usize>> = sets
                .iter()
                .map(|deps| {
                    for g in &one.dags {
                        let mut copy = DynDag::new(12);
                        for (u, succ) in g.succ.iter().enumerate() {
                            for &v in succ {
                                copy.add(u as u32, v);
                            }
                        }
                        let edges = copy.succ.iter().map(Vec::len).sum::<usize>();
                        let mut trial = DynDag::new(12);
                        for (u, succ) in g.succ.iter().enumerate() {
                            for &v in succ {
                                trial.add(u as u32, v);
                            }
                        }
                        proptest::prop_assert_eq!(trial.try_fit(deps), copy.add_all(deps));
                        proptest::prop_assert_eq!(trial.succ.iter().map(Vec::len).sum::<usize>(), edges);
                    }
                    Ok(one.place(deps))
                })
                .collect::<Result<_, _>>()?;
            let mut batched = FirstFit::new(12, limit);
            let got: Vec<Option<usize>> = sets.chunks(batch).flat_map(|b| batched.place_sliced(b, slice)).collect();
            proptest::prop_assert_eq!(&got, &expected);
            // Through `first_fit_each`, stopping at the first set that fits no layer: the
            // same layers up to there, and nothing after.
            let mut each = FirstFit::new(12, limit);
            let mut seen = Vec::new();
            let items: Vec<usize> = (0..sets.len()).collect();
            let finished = first_fit_each(&mut each, &items, "test", |&i, out| { out.extend(&sets[i]); 0 }, |&i, l, _| {
                seen.push((i, l));
                l.is_some()
            })
            .expect("not cancelled");
            let stop = expected.iter().position(Option::is_none);
            proptest::prop_assert_eq!(finished, stop.is_none());
            let upto = stop.map_or(sets.len(), |s| s + 1);
            let want: Vec<(usize, Option<usize>)> = expected[..upto].iter().copied().enumerate().collect();
            proptest::prop_assert_eq!(seen, want);
        }
    }
}

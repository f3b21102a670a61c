//! Routing by allowed turns: the shortest legal paths when some turns (a channel followed
//! by another at the switch between them) are forbidden. This is how the routing survey
//! (Flich et al., IEEE TPDS 23(3), 2012, section 4) frames the engines that need no virtual
//! channels: each places routing restrictions so that the channel dependency graph, whose
//! edges are exactly the allowed turns, has no cycle; the routes are then the shortest
//! paths that take only allowed turns. `smart`, `lturn` and `sr` are built on it, and `dl`
//! on its layered form, where a forbidden turn moves the packet up a VC.
//!
//! One file: the turn rules (`Channels`: the channel numbering, the turns between
//! channels, the legal distances over them and the search for a cycle of allowed turns)
//! and `TurnRouting`, which routes by those distances, share the channel numbering and
//! the distance tables' layout; about 110 of its lines are tests.
//!
//! Channels are the directed switch-to-switch links, numbered switch by switch in port
//! order. U-turns (back over the link just taken) are never allowed. A packet's route state
//! records the channel it arrived by (`route.intermediate`; `u32::MAX` at its source),
//! since which turns are legal depends on it, and its layer (`route.phase`).

use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::{Packet, RouteState};
use crate::RoutingError;
use base::rng::Rng;
use rayon::prelude::*;
use topology::{Network, PortId, PortTarget, SwitchId};

/// No route (in distance tables).
const NONE: u8 = u8::MAX;

/// The channels of a network and the turns between them.
pub(crate) struct Channels {
    /// `first[s]..first[s + 1]`: the channels leaving switch `s`.
    first: Vec<u32>,
    /// Per channel: the switch it leaves, the switch it reaches, its port at the tail, the
    /// channel back.
    tail: Vec<SwitchId>,
    head: Vec<SwitchId>,
    port: Vec<PortId>,
    reverse: Vec<u32>,
    /// `turn_base[c] + i`: the turn from channel `c` to the `i`-th channel leaving its head.
    turn_base: Vec<u32>,
    /// The channel behind each port (`net.port_offsets[s] + port`; `u32::MAX` for terminal
    /// and unconnected ports): a lookup per hop instead of a search.
    port_offsets: Vec<u32>,
    by_port: Vec<u32>,
}

impl Channels {
    /// The channels of `net`.
    pub(crate) fn new(net: &Network) -> Self {
        let n = net.num_switches();
        let mut first = Vec::with_capacity(n + 1);
        let (mut tail, mut head, mut port) = (Vec::new(), Vec::new(), Vec::new());
        let mut peer_port = Vec::new();
        let mut by_port = vec![u32::MAX; net.ports.len()];
        for s in 0..n as SwitchId {
            first.push(tail.len() as u32);
            for (p, target) in net.ports(s).iter().enumerate() {
                if let PortTarget::Switch { switch, port: back } = target.target {
                    by_port[net.port_offsets[s as usize] as usize + p] = tail.len() as u32;
                    tail.push(s);
                    head.push(switch);
                    port.push(p as PortId);
                    peer_port.push(back);
                }
            }
        }
        first.push(tail.len() as u32);
        let port_offsets = net.port_offsets.clone();
        let mut channels = Self {
            first,
            tail,
            head,
            port,
            reverse: Vec::new(),
            turn_base: Vec::new(),
            port_offsets,
            by_port,
        };
        channels.reverse = (0..channels.len())
            .map(|c| channels.channel_at(channels.head[c], peer_port[c]).expect("links are symmetric"))
            .collect();
        let mut base = 0u32;
        channels.turn_base = (0..channels.len())
            .map(|c| {
                let b = base;
                base += channels.out(channels.head[c]).len() as u32;
                b
            })
            .collect();
        channels.turn_base.push(base);
        channels
    }

    /// Number of channels.
    pub(crate) fn len(&self) -> usize {
        self.tail.len()
    }

    /// Number of turns (U-turns included, which are never allowed).
    pub(crate) fn turns(&self) -> usize {
        *self.turn_base.last().unwrap_or(&0) as usize
    }

    /// The channels leaving `s`.
    pub(crate) fn out(&self, s: SwitchId) -> std::ops::Range<u32> {
        self.first[s as usize]..self.first[s as usize + 1]
    }

    /// The channel leaving `s` by port `port`.
    pub(crate) fn channel_at(&self, s: SwitchId, port: PortId) -> Option<u32> {
        self.of_link(self.port_offsets[s as usize] + port as u32)
    }

    /// The channel of the port with global index `link` (`net.port_offsets[s] + port`).
    pub(crate) fn of_link(&self, link: u32) -> Option<u32> {
        let c = self.by_port[link as usize];
        (c != u32::MAX).then_some(c)
    }

    /// The switch channel `c` reaches.
    pub(crate) fn head(&self, c: u32) -> SwitchId {
        self.head[c as usize]
    }

    /// The switch channel `c` leaves.
    pub(crate) fn tail(&self, c: u32) -> SwitchId {
        self.tail[c as usize]
    }

    /// The channel back over `c`'s link.
    pub(crate) fn reverse(&self, c: u32) -> u32 {
        self.reverse[c as usize]
    }

    /// The turn from `c` to `next` (a channel leaving `c`'s head).
    pub(crate) fn turn(&self, c: u32, next: u32) -> usize {
        (self.turn_base[c as usize] + next - self.first[self.head[c as usize] as usize]) as usize
    }

    /// Every turn `c -> next` that is not a U-turn, in channel order.
    pub(crate) fn turns_from(&self, c: u32) -> impl Iterator<Item = u32> + '_ {
        let back = self.reverse(c);
        self.out(self.head(c)).filter(move |&x| x != back)
    }

    /// The turns of Up*/Down* over the order `key` of the switches: a channel is *up* when
    /// it leads to a smaller key, and no turn goes from a down channel to an up one.
    pub(crate) fn up_down_turns<K: Ord>(&self, key: impl Fn(SwitchId) -> K) -> Vec<bool> {
        let up: Vec<bool> = (0..self.len() as u32).map(|c| key(self.head(c)) < key(self.tail(c))).collect();
        let mut allowed = vec![false; self.turns()];
        for c in 0..self.len() as u32 {
            for next in self.turns_from(c) {
                allowed[self.turn(c, next)] = up[c as usize] || !up[next as usize];
            }
        }
        allowed
    }

    /// The channel from each switch to its parent in the BFS tree of `level`: its first
    /// channel one level up (`None` at the root and at unreachable switches).
    pub(crate) fn tree_up(&self, level: &[u32]) -> Vec<Option<u32>> {
        (0..level.len() as SwitchId)
            .map(|s| {
                let here = level[s as usize];
                self.out(s)
                    .find(|&c| here != u32::MAX && level[self.head(c) as usize].checked_add(1) == Some(here))
            })
            .collect()
    }

    /// How many turns other than U-turns `allowed` forbids.
    pub(crate) fn forbidden(&self, allowed: &[bool]) -> usize {
        (0..self.len() as u32)
            .flat_map(|c| self.turns_from(c).map(move |x| (c, x)))
            .filter(|&(c, x)| !allowed[self.turn(c, x)])
            .count()
    }

    /// Every turn allowed except U-turns: the unrestricted routing.
    pub(crate) fn all_turns(&self) -> Vec<bool> {
        let mut allowed = vec![false; self.turns()];
        for c in 0..self.len() as u32 {
            for x in self.turns_from(c) {
                allowed[self.turn(c, x)] = true;
            }
        }
        allowed
    }

    /// Legal hops from the head of every channel (having arrived by it) to `dst`, into
    /// `dist` (one entry per channel, [`NONE`] when unreachable), with the turn `skip`
    /// treated as forbidden: a backward BFS over the allowed turns.
    pub(crate) fn legal_distances(
        &self,
        allowed: &[bool],
        skip: Option<usize>,
        dst: SwitchId,
        dist: &mut [u8],
        queue: &mut Vec<u32>,
    ) {
        self.layered_distances(allowed, skip, 1, dst, dist, queue);
    }

    /// [`Self::legal_distances`] with `layers` layers (VCs): a forbidden turn is legal when
    /// it moves the packet to the next layer, and the states are `(channel, layer)`, entry
    /// `layer * channels + channel` of `dist`. One layer: the plain legal distances.
    pub(crate) fn layered_distances(
        &self,
        allowed: &[bool],
        skip: Option<usize>,
        layers: usize,
        dst: SwitchId,
        dist: &mut [u8],
        queue: &mut Vec<u32>,
    ) {
        let m = self.len();
        dist.fill(NONE);
        queue.clear();
        for layer in 0..layers {
            for c in self.out(dst) {
                let into = layer * m + self.reverse(c) as usize;
                dist[into] = 0;
                queue.push(into as u32);
            }
        }
        let mut i = 0;
        while i < queue.len() {
            let state = queue[i] as usize;
            i += 1;
            let d = dist[state];
            if d == NONE - 1 {
                continue;
            }
            let (layer, next) = (state / m, (state % m) as u32);
            // Channels into `next`'s tail whose turn into `next` is allowed (same layer), or
            // forbidden from the layer below (the turn that moves a packet up a layer).
            for back in self.out(self.tail(next)) {
                let c = self.reverse(back);
                if c == self.reverse(next) {
                    continue;
                }
                let t = self.turn(c, next);
                let from = if allowed[t] && skip != Some(t) {
                    layer
                } else if layer > 0 {
                    layer - 1
                } else {
                    continue;
                };
                let at = from * m + c as usize;
                if dist[at] == NONE {
                    dist[at] = d + 1;
                    queue.push(at as u32);
                }
            }
        }
    }

    /// Hops of the shortest legal route from `src` (no channel taken yet) given the legal
    /// distances to its destination; `None` when there is none.
    pub(crate) fn source_hops(&self, src: SwitchId, dist: &[u8]) -> Option<u32> {
        self.out(src).map(|c| dist[c as usize]).filter(|&d| d != NONE).map(|d| d as u32 + 1).min()
    }

    /// A shortest cycle of the channel dependency graph of `allowed` (its turns in order,
    /// from the lowest channel that starts one), or `None` when it is acyclic (a
    /// depth-first search tells first).
    pub(crate) fn find_cycle(&self, allowed: &[bool]) -> Option<Vec<usize>> {
        let m = self.len();
        // 0 unvisited, 1 on the stack, 2 done.
        let mut state = vec![0u8; m];
        let mut on_cycle = None;
        'roots: for root in 0..m as u32 {
            if state[root as usize] != 0 {
                continue;
            }
            let mut stack: Vec<(u32, u32)> = vec![(root, self.first[self.head(root) as usize])];
            state[root as usize] = 1;
            while let Some(top) = stack.last_mut() {
                let c = top.0;
                let end = self.first[self.head(c) as usize + 1];
                let mut step = None;
                while top.1 < end {
                    let x = top.1;
                    top.1 += 1;
                    if allowed[self.turn(c, x)] {
                        step = Some(x);
                        break;
                    }
                }
                match step {
                    Some(x) if state[x as usize] == 1 => {
                        on_cycle = Some(x);
                        break 'roots;
                    }
                    Some(x) if state[x as usize] == 0 => {
                        state[x as usize] = 1;
                        stack.push((x, self.first[self.head(x) as usize]));
                    }
                    Some(_) => {}
                    None => {
                        state[c as usize] = 2;
                        stack.pop();
                    }
                }
            }
        }
        on_cycle?;
        // A shortest cycle of all: short cycles first gives shorter routes in the end
        // (SMART on the 8x8 torus: an average routing distance of 5.31 against 5.55 when
        // the cycle is the shortest through the first channel found on one).
        let mut parent = vec![u32::MAX; m];
        let mut queue = Vec::new();
        let mut best: Option<Vec<usize>> = None;
        for c in 0..m as u32 {
            let limit = best.as_ref().map_or(usize::MAX, |b| b.len() - 1);
            if let Some(cycle) = self.cycle_through(allowed, c, limit, &mut parent, &mut queue) {
                best = Some(cycle);
            }
        }
        best
    }

    /// The turns of a shortest cycle through channel `start`, if one has at most `limit`
    /// turns: a BFS over the allowed turns back to `start`. `parent` (all `u32::MAX`) is
    /// left as it was found; `queue` is scratch.
    fn cycle_through(
        &self,
        allowed: &[bool],
        start: u32,
        limit: usize,
        parent: &mut [u32],
        queue: &mut Vec<u32>,
    ) -> Option<Vec<usize>> {
        queue.clear();
        queue.push(start);
        let (mut i, mut level_end, mut depth) = (0, 1, 0);
        let mut found = None;
        'bfs: while i < queue.len() {
            if i == level_end {
                level_end = queue.len();
                depth += 1;
            }
            // Going on from depth `depth` closes cycles of at least `depth + 1` turns.
            if depth + 1 > limit {
                break;
            }
            let c = queue[i];
            i += 1;
            for x in self.out(self.head(c)) {
                if !allowed[self.turn(c, x)] {
                    continue;
                }
                if x == start {
                    found = Some(c);
                    break 'bfs;
                }
                if parent[x as usize] == u32::MAX {
                    parent[x as usize] = c;
                    queue.push(x);
                }
            }
        }
        let cycle = found.map(|last| {
            let mut turns = vec![self.turn(last, start)];
            let mut at = last;
            while at != start {
                let p = parent[at as usize];
                turns.push(self.turn(p, at));
                at = p;
            }
            turns.reverse();
            turns
        });
        for &c in queue.iter() {
            parent[c as usize] = u32::MAX;
        }
        cycle
    }
}

/// The memory model of a turn routing with `layers` layers: a byte per destination,
/// channel and layer, and a record per switch.
pub(crate) fn state_bytes(size: &super::registry::StateSize, layers: u64) -> u64 {
    size.pairs().saturating_mul(size.degree.max(1) * layers.max(1)).saturating_add(size.per_switch())
}

/// The switches whose pairs a turn routing serves: those with endpoints, each once, in id
/// order.
pub(crate) fn terminals(endpoint_switch: &[SwitchId]) -> Vec<SwitchId> {
    let mut terminals = endpoint_switch.to_vec();
    terminals.sort_unstable();
    terminals.dedup();
    terminals
}

/// Sum of the shortest legal route lengths over the ordered pairs of distinct `terminals`
/// with the turns of `allowed` (less `skip`), or `None` if a pair has no legal route.
pub(crate) fn total_length(
    channels: &Channels,
    allowed: &[bool],
    skip: Option<usize>,
    terminals: &[SwitchId],
) -> Option<u64> {
    terminals
        .par_iter()
        .map_init(
            || (vec![NONE; channels.len()], Vec::new()),
            |(dist, queue), &d| {
                channels.legal_distances(allowed, skip, d, dist, queue);
                terminals
                    .iter()
                    .filter(|&&s| s != d)
                    .try_fold(0u64, |sum, &s| channels.source_hops(s, dist).map(|h| sum + h as u64))
            },
        )
        .try_reduce(|| 0, |a, b| Some(a + b))
}

/// Shortest legal routes over a set of allowed turns, all listed as candidates; with more
/// than one layer, a forbidden turn is taken by moving up a layer (VC), as Descending
/// Layers routing does (`dl.rs`).
pub struct TurnRouting {
    channels: Channels,
    /// Per turn (see [`Channels::turn`]): whether routes may take it within a layer.
    allowed: Vec<bool>,
    /// Layers (VCs), at least 1.
    layers: u8,
    /// Layers some shortest route actually reaches (at most `layers`): the VCs needed.
    used: u8,
    /// `dist[(dst * layers + layer) * channels + c]`: legal hops from the head of `c` to
    /// `dst` for a packet in `layer`.
    dist: Vec<u8>,
    max_hops: u32,
    summary: String,
}

impl TurnRouting {
    /// The routes of `allowed` (turns of `channels`) in one layer; an error naming a pair
    /// of `terminals` without a legal route. `summary` is reported by `xnet routes`.
    pub(crate) fn new(
        net: &Network,
        channels: Channels,
        allowed: &[bool],
        terminals: &[SwitchId],
        summary: String,
    ) -> Result<Self, RoutingError> {
        Self::layered(net, channels, allowed, 1, terminals, summary)
    }

    /// The routes of `allowed` over `layers` layers: a packet starts in layer 0 and takes
    /// a forbidden turn only into the next layer, so each layer's dependencies are the
    /// allowed turns (acyclic) and packets only climb: deadlock-free.
    pub(crate) fn layered(
        net: &Network,
        channels: Channels,
        allowed: &[bool],
        layers: u8,
        terminals: &[SwitchId],
        summary: String,
    ) -> Result<Self, RoutingError> {
        let layers = layers.max(1);
        let (n, m) = (net.num_switches(), channels.len());
        let row_len = (m * layers as usize).max(1);
        let mut dist = vec![NONE; n * row_len];
        // Destinations that start once a stop is asked for are skipped; the check below
        // then fails the build.
        dist.par_chunks_mut(row_len).enumerate().for_each_init(Vec::new, |queue, (d, row)| {
            if !base::cancel::requested() {
                channels.layered_distances(allowed, None, layers as usize, d as SwitchId, row, queue)
            }
        });
        base::cancel::check("computing the legal distances under the turn restrictions")?;
        let mut max_hops = 0;
        for &d in terminals {
            let row = &dist[d as usize * row_len..][..m];
            for &s in terminals.iter().filter(|&&s| s != d) {
                let hops = channels.source_hops(s, row).ok_or_else(|| {
                    RoutingError::algorithm(format!(
                        "no legal route from switch {s} to {d} under the turn restrictions: this routing cannot \
                         route this network"
                    ))
                })?;
                max_hops = max_hops.max(hops);
            }
        }
        let mut routing =
            Self { channels, allowed: allowed.to_vec(), layers, used: 1, dist, max_hops, summary };
        if layers > 1 {
            routing.used = routing.deepest_layer(terminals) + 1;
            routing.summary = format!("{}; routes reach {} of them", routing.summary, routing.used);
        }
        Ok(routing)
    }

    /// The highest layer a route between `terminals` can reach: per destination, a search
    /// over the (channel, layer) states the candidates lead to from every source.
    fn deepest_layer(&self, terminals: &[SwitchId]) -> u8 {
        let m = self.channels.len();
        let ch = &self.channels;
        terminals
            .par_iter()
            .map_init(
                || (vec![false; m * self.layers as usize], Vec::new()),
                |(seen, stack), &d| {
                    seen.fill(false);
                    let mut visit = |c: u32, layer: u8, stack: &mut Vec<(u32, u8)>| {
                        if !std::mem::replace(&mut seen[layer as usize * m + c as usize], true) {
                            stack.push((c, layer));
                        }
                    };
                    for &s in terminals.iter().filter(|&&s| s != d) {
                        for (c, layer) in self.shortest_steps(d, s, u32::MAX, 0) {
                            visit(c, layer, stack);
                        }
                    }
                    let mut deepest = 0;
                    while let Some((c, layer)) = stack.pop() {
                        deepest = deepest.max(layer);
                        if self.distance(d, layer, c) > 0 {
                            for (x, next) in self.shortest_steps(d, ch.head(c), c, layer) {
                                visit(x, next, stack);
                            }
                        }
                    }
                    deepest
                },
            )
            .max()
            .unwrap_or(0)
    }

    /// The channels out of `at` on a shortest route to `dst` for a packet that arrived by
    /// `arrived` (`u32::MAX` at its source) in `layer`, each with the layer it moves to.
    fn shortest_steps(
        &self,
        dst: SwitchId,
        at: SwitchId,
        arrived: u32,
        layer: u8,
    ) -> impl Iterator<Item = (u32, u8)> + '_ {
        let ch = &self.channels;
        let (left, back) = if arrived == u32::MAX {
            // At the source: any first channel (in layer 0) on a shortest legal route.
            let best = ch.out(at).map(|c| self.distance(dst, 0, c)).min().unwrap_or(NONE);
            (best.saturating_add(1), u32::MAX)
        } else {
            (self.distance(dst, layer, arrived), ch.reverse(arrived))
        };
        ch.out(at).filter(move |&c| c != back).filter_map(move |c| {
            let vc = if arrived == u32::MAX { 0 } else { self.layer_after(arrived, c, layer)? };
            let d = self.distance(dst, vc, c);
            (d != NONE && d + 1 == left).then_some((c, vc))
        })
    }

    fn distance(&self, dst: SwitchId, layer: u8, c: u32) -> u8 {
        let m = self.channels.len();
        self.dist[(dst as usize * self.layers as usize + layer as usize) * m + c as usize]
    }

    /// The layer after the turn `arrived -> next` for a packet in `layer`; `None` when the
    /// turn is forbidden and there is no layer above.
    fn layer_after(&self, arrived: u32, next: u32, layer: u8) -> Option<u8> {
        if self.allowed[self.channels.turn(arrived, next)] {
            Some(layer)
        } else {
            (layer + 1 < self.layers).then_some(layer + 1)
        }
    }
}

impl Routing for TurnRouting {
    fn vcs_required(&self) -> u8 {
        self.used
    }

    fn max_hops(&self) -> u32 {
        self.max_hops
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn init(&self, _src: SwitchId, _dst: SwitchId, state: &mut RouteState, _rng: &mut Rng) {
        state.intermediate = u32::MAX;
        state.phase = 0;
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
        let (arrived, layer) = (packet.route.intermediate, packet.route.phase);
        for (c, vc) in self.shortest_steps(dst, at, arrived, layer) {
            out.push(Candidate { port: self.channels.port[c as usize], vc, penalty: 0 });
        }
    }

    fn on_forward(&self, at: SwitchId, chosen: Candidate, packet: &mut Packet) {
        let (arrived, layer) = (packet.route.intermediate, packet.route.phase);
        let next = self.channels.channel_at(at, chosen.port).unwrap_or(u32::MAX);
        if arrived != u32::MAX && next != u32::MAX {
            let after = self.layer_after(arrived, next, layer);
            debug_assert!(after.is_some(), "a candidate took a forbidden turn in the top layer");
            packet.route.phase = after.unwrap_or(layer);
        }
        packet.route.intermediate = next;
    }

    fn build_summary(&self) -> Option<String> {
        Some(self.summary.clone())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use topology::torus;

    /// A mesh (or torus, with `wrap`) of `sides`, one endpoint per switch.
    pub(crate) fn grid(sides: Vec<u32>, wrap: bool) -> Network {
        let wrap = Some(vec![wrap; sides.len()]);
        torus::build(&torus::TorusParams {
            sides,
            wrap,
            endpoints_per_switch: 1,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap()
    }

    /// A ring of 5: 10 channels, 10 turns besides the U-turns, and its shortest dependency
    /// cycles go once around (5 turns). Forbidding one turn per direction makes it acyclic
    /// and lengthens exactly the routes that needed those turns.
    #[test]
    fn a_ring_has_two_cycles_and_cutting_them_lengthens_routes() {
        let net = grid(vec![5], true);
        let ch = Channels::new(&net);
        assert_eq!(ch.len(), 10);
        let mut allowed = ch.all_turns();
        assert_eq!(allowed.iter().filter(|&&a| a).count(), 10);
        let terminals: Vec<SwitchId> = (0..5).collect();
        // All 20 ordered pairs at distance 1 or 2.
        assert_eq!(total_length(&ch, &allowed, None, &terminals), Some(30));
        let cycle = ch.find_cycle(&allowed).expect("the ring is a cycle");
        assert_eq!(cycle.len(), 5);
        for &t in &cycle {
            allowed[t] = false;
        }
        let cycle = ch.find_cycle(&allowed).expect("the other direction");
        assert_eq!(cycle.len(), 5);
        // Forbid one turn of it only: the direction keeps 4 turns.
        allowed[cycle[0]] = false;
        assert_eq!(ch.find_cycle(&allowed), None);
        // One direction is gone and the other lost the turn at one switch: pairs whose
        // route crosses that switch in that direction go the long way or not at all.
        assert_eq!(total_length(&ch, &allowed, None, &terminals), None);
        // Both turns through switch 0 forbidden instead: acyclic and connected; only the
        // two pairs at distance 2 whose short route crossed switch 0 go the long way (3
        // hops instead of 2).
        let mut at_zero = ch.all_turns();
        for c in ch.out(0) {
            for x in ch.turns_from(ch.reverse(c)) {
                at_zero[ch.turn(ch.reverse(c), x)] = false;
            }
        }
        assert_eq!(ch.find_cycle(&at_zero), None);
        assert_eq!(total_length(&ch, &at_zero, None, &terminals), Some(32));
        // `skip` forbids one turn without touching the set: the one pair at distance 2 whose
        // short route took it goes the long way.
        assert_eq!(total_length(&ch, &ch.all_turns(), Some(cycle[0]), &terminals), Some(31));
    }

    /// Two layers on the ring of 5 with both turns through switch 0 forbidden: a forbidden
    /// turn now moves the packet to layer 1, so every route is minimal again (30 hops over
    /// the 20 pairs against 32 with one layer), and in layer 1 the turns stay forbidden.
    #[test]
    fn a_second_layer_takes_the_forbidden_turns() {
        let net = grid(vec![5], true);
        let ch = Channels::new(&net);
        let mut allowed = ch.all_turns();
        for c in ch.out(0) {
            for x in ch.turns_from(ch.reverse(c)) {
                allowed[ch.turn(ch.reverse(c), x)] = false;
            }
        }
        let (m, mut queue) = (ch.len(), Vec::new());
        let mut sum = |layers: usize| {
            let mut total = 0;
            for d in 0..5 {
                let mut dist = vec![NONE; m * layers];
                ch.layered_distances(&allowed, None, layers, d, &mut dist, &mut queue);
                total +=
                    (0..5).filter(|&s| s != d).map(|s| ch.source_hops(s, &dist[..m]).unwrap()).sum::<u32>();
                // Through switch 0 in the top layer: the forbidden turn is not taken there.
                let into_zero = ch.reverse(ch.out(0).start);
                let past_zero = ch.turns_from(into_zero).next().unwrap();
                if layers == 2 && ch.head(past_zero) == d {
                    assert_eq!(dist[into_zero as usize], 1, "layer 0 turns up a layer");
                    assert_ne!(dist[m + into_zero as usize], 1, "layer 1 has no layer above");
                }
            }
            total
        };
        assert_eq!(sum(1), 32);
        assert_eq!(sum(2), 30);
    }

    /// The legal distances of a 3x3 mesh with every turn allowed are the hop distances.
    #[test]
    fn with_every_turn_allowed_routes_are_minimal() {
        let net = grid(vec![3, 3], false);
        let ch = Channels::new(&net);
        let allowed = ch.all_turns();
        let terminals: Vec<SwitchId> = (0..9).collect();
        // Manhattan distances over the 81 ordered pairs: per dimension 8 (a line of 3) times
        // 9 (pairs of the other coordinate), two dimensions.
        assert_eq!(total_length(&ch, &allowed, None, &terminals), Some(144));
        assert!(ch.find_cycle(&allowed).is_some(), "the mesh's squares are cycles");
    }
}

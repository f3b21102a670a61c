//! `ftree`: OpenSM's fat-tree routing (Zahavi et al., "Optimized InfiniBand fat-tree
//! routing for shift all-to-all communication patterns", CCPE 22(2), 2010; OpenSM 3.3's
//! `osm_ucast_ftree.c`), reproduced so that its forwarding tables equal OpenSM's entry for
//! entry on the same fabric (checked against OpenSM 3.3.23 under ibsim:
//! `scripts/validation/opensm_per_lid.py`).
//!
//! One file: the tree's discovery (ranks, groups, tuples, the checks) and the routes' walk
//! share one state, the groups' counters, and read in the order OpenSM runs them.
//!
//! # The tree
//! Ranks come from a breadth-first search from the switches with endpoints (HCAs), turned
//! upside down so that the switches farthest from any HCA are the roots (rank 0), then
//! searched again from those roots; the leaves are the switches of the highest rank, and
//! every HCA must hang on one. Each switch gets a tuple (its rank, then one digit per level
//! below the roots) by a breadth-first search from the first leaf: a switch reached across
//! level `l` takes the smallest free value of digit `l`. A switch's links to one neighbour
//! form a group (parallel links are one group): up (to a lower rank), down, or sibling (the
//! same rank); each switch's up and down groups are then kept in the order of their
//! neighbours' tuples, a leaf's HCAs in port order.
//!
//! # The routes
//! The HCAs are routed one by one: the leaves in tuple order, each leaf's HCAs in port
//! order (a leaf with fewer HCAs than the fullest leaf routes dummies that only move the
//! counters). For an HCA the walk starts at its leaf and climbs: at each switch the main
//! path takes the up group that has carried the fewest HCAs down so far (ties: the lowest
//! tuple) and, within it, the least loaded link (ties: the lowest port), and counts it; the
//! other up groups are climbed too, without counting. At every switch reached, every switch
//! below that has no route yet, or only a longer one, is given one up towards it, over the
//! link of its group that carries the fewest such up-routes (counted when the fill below
//! reached something). The counters are never reset, so the HCAs of a leaf spread over its
//! up links in turn, as d-mod-k does, and every switch reaches every HCA over a shortest
//! up-then-down path: one VC suffices.
//!
//! # Order
//! Where the rules compare switches, OpenSM compares node GUIDs in byte-swapped order. The
//! files xnet writes carry no GUIDs; ibsim gives the `i`-th switch of a `.net` file GUID
//! `0x200000 + i`, so switches are taken in that order (by id below 256 switches). A real
//! fabric's own GUIDs may order them differently.
//!
//! # Not modelled
//! OpenSM's options that change the routes (`root_guid_file`, `cn_guid_file`,
//! `io_guid_file` with `max_reverse_hops`, `quasi_ftree_indexing`, `connect_roots`, an LMC
//! above 0) are not read: the defaults are. Routes to switches' own LIDs, which carry no
//! simulated traffic, are not computed (they come after the HCAs' and change none of theirs).

use super::layered::{Destinations, LayerOf, Layered, Tables};
use super::registry::{BuildContext, RoutingEntry, Settings};
use super::{Routing, VcPolicy};
use crate::RoutingError;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use topology::ib::IbView;
use topology::{EndpointId, Network, PortId, PortTarget, SwitchId};

/// No rank yet.
const UNRANKED: u32 = u32::MAX;
/// Most levels OpenSM's fat-tree routing takes (its tuples have 8 bytes).
const MAX_LEVELS: u32 = 8;
/// An unset tuple digit.
const NO_DIGIT: u8 = 0xFF;

/// What a group of links leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Far {
    Switch(SwitchId),
    Endpoint(EndpointId),
}

/// One link of a group: its port at the group's switch and at the far end, and the routes
/// counted over it.
#[derive(Clone, Debug)]
struct Link {
    local: PortId,
    remote: PortId,
    /// Destinations the far switch was told to reach up through this link (down groups).
    up_load: u32,
    /// Destinations the far switch sends down through this link (up groups).
    down_load: u32,
}

/// A switch's links to one neighbour, with the routes counted over them.
#[derive(Clone, Debug)]
struct Group {
    far: Far,
    links: Vec<Link>,
    up_load: u32,
    down_load: u32,
}

impl Group {
    /// The link with the smallest `load` (the first, in port order, among equals).
    fn least(&self, load: impl Fn(&Link) -> u32) -> usize {
        let mut best = 0;
        for (i, l) in self.links.iter().enumerate().skip(1) {
            if load(l) < load(&self.links[best]) {
                best = i;
            }
        }
        best
    }
}

/// A switch of the tree.
#[derive(Clone, Debug)]
struct Node {
    rank: u32,
    tuple: [u8; 8],
    leaf: bool,
    /// Groups (indices into [`Tree::groups`]) towards lower ranks, higher ranks, the same rank.
    up: Vec<usize>,
    down: Vec<usize>,
    sib: Vec<usize>,
    /// The down groups' loads changed since they were last ordered.
    resort_down: bool,
}

/// The fat tree as OpenSM's routing sees it, and the routes of the destination being routed.
struct Tree {
    nodes: Vec<Node>,
    groups: Vec<Group>,
    /// Per switch, the hops of its route to the current destination (`u8::MAX`: none) and
    /// its port.
    hops: Vec<u8>,
    port: Vec<PortId>,
    /// The switches given a route to the current destination, to reset them.
    touched: Vec<SwitchId>,
    /// The current destination is a dummy (its routes only move the counters).
    dummy: bool,
}

/// Why a fabric is not a fat tree OpenSM's routing accepts.
fn refuse(why: impl std::fmt::Display) -> RoutingError {
    RoutingError::new(
        "routing.algorithm",
        format!("ftree: this fabric is not a fat tree OpenSM's fat-tree routing accepts: {why} (choose up_down, dfsssp or minhop instead)"),
    )
}

impl Tree {
    /// Ranks, groups, leaves and tuples of `net` (sections "The tree"), or why it is not
    /// a fat tree.
    fn build(net: &Network, view: &IbView, order: &[SwitchId]) -> Result<(Tree, u32), RoutingError> {
        let n = net.num_switches();
        if n < 2 {
            return Err(refuse(format!("it has {n} switch(es); the routing needs at least 2")));
        }
        if net.num_endpoints() < 2 {
            return Err(refuse(format!(
                "it has {} endpoint(s); the routing needs at least 2",
                net.num_endpoints()
            )));
        }
        let ranks = rank(net, order)?;
        let leaf_rank = ranks.iter().copied().filter(|&r| r != UNRANKED).max().unwrap_or(0);
        if leaf_rank + 1 < 2 || leaf_rank + 1 > MAX_LEVELS {
            return Err(refuse(format!(
                "it has {} levels of switches; the routing takes 2 to {MAX_LEVELS}",
                leaf_rank + 1
            )));
        }
        let mut nodes: Vec<Node> = ranks
            .iter()
            .map(|&rank| Node {
                rank,
                tuple: [NO_DIGIT; 8],
                leaf: false,
                up: Vec::new(),
                down: Vec::new(),
                sib: Vec::new(),
                resort_down: false,
            })
            .collect();
        let mut groups: Vec<Group> = Vec::new();
        for &s in order {
            if nodes[s as usize].rank == UNRANKED {
                continue;
            }
            // The ports in IB port order; links to one neighbour join its group.
            for p in view.ports_in_ib_order(net, s) {
                let (far, remote, list) = match net.ports(s)[p as usize].target {
                    PortTarget::Endpoint(e) => (Far::Endpoint(e), 0, 1),
                    PortTarget::Switch { switch, port } => {
                        let (mine, theirs) = (nodes[s as usize].rank, nodes[switch as usize].rank);
                        if theirs == UNRANKED {
                            continue;
                        }
                        (
                            Far::Switch(switch),
                            port,
                            if mine > theirs {
                                0
                            } else if mine < theirs {
                                1
                            } else {
                                2
                            },
                        )
                    }
                    PortTarget::Unconnected => continue,
                };
                let node = &mut nodes[s as usize];
                let list = match list {
                    0 => &mut node.up,
                    1 => &mut node.down,
                    _ => &mut node.sib,
                };
                let link = Link { local: p, remote, up_load: 0, down_load: 0 };
                match list.iter().find(|&&g| groups[g].far == far) {
                    Some(&g) => groups[g].links.push(link),
                    None => {
                        list.push(groups.len());
                        groups.push(Group { far, links: vec![link], up_load: 0, down_load: 0 });
                    }
                }
            }
        }
        for (e, &(s, _)) in net.endpoint_location.iter().enumerate() {
            let rank = nodes[s as usize].rank;
            if rank != leaf_rank {
                return Err(refuse(format!(
                    "endpoint {e} hangs on switch '{}' of level {rank}, while the leaves are at level {leaf_rank} \
                     (OpenSM: ERR AB26)",
                    view.switch_names[s as usize]
                )));
            }
            nodes[s as usize].leaf = true;
        }
        let mut tree = Tree {
            nodes,
            groups,
            hops: vec![u8::MAX; n],
            port: vec![PortId::MAX; n],
            touched: Vec::new(),
            dummy: false,
        };
        tree.index(order, leaf_rank)?;
        tree.validate(view, order, leaf_rank)?;
        Ok((tree, leaf_rank))
    }

    /// The far switch of group `g`.
    fn far_switch(&self, g: usize) -> Option<SwitchId> {
        match self.groups[g].far {
            Far::Switch(s) => Some(s),
            Far::Endpoint(_) => None,
        }
    }

    /// The tuple of the far end of group `g` (switch groups only).
    fn far_tuple(&self, g: usize) -> [u8; 8] {
        self.far_switch(g).map_or([NO_DIGIT; 8], |s| self.nodes[s as usize].tuple)
    }

    /// Tuples by a breadth-first search from the first leaf in map order; each switch's
    /// groups then ordered by their neighbours' tuples (a leaf's HCAs stay in port order).
    fn index(&mut self, order: &[SwitchId], leaf_rank: u32) -> Result<(), RoutingError> {
        let first = order.iter().copied().find(|&s| self.nodes[s as usize].leaf).expect("a leaf");
        let mut used: HashSet<[u8; 8]> = HashSet::new();
        let mut tuple = [NO_DIGIT; 8];
        tuple[0] = leaf_rank as u8;
        for d in tuple.iter_mut().skip(1).take(leaf_rank as usize) {
            *d = 0;
        }
        self.nodes[first as usize].tuple = tuple;
        used.insert(tuple);
        let mut queue = VecDeque::from([first]);
        while let Some(s) = queue.pop_front() {
            let (rank, base) = (self.nodes[s as usize].rank, self.nodes[s as usize].tuple);
            let mut expand = |tree: &mut Tree, groups: Vec<usize>, rank_there: u32, digit: usize| {
                for g in groups {
                    let Some(r) = tree.far_switch(g) else { continue };
                    if tree.nodes[r as usize].tuple[0] != NO_DIGIT {
                        continue;
                    }
                    let mut t = base;
                    t[0] = rank_there as u8;
                    let free = (0..=254u8).find(|&x| {
                        t[digit] = x;
                        !used.contains(&t)
                    });
                    let Some(x) = free else {
                        return Err(refuse("a switch has more than 255 neighbours on one level"));
                    };
                    t[digit] = x;
                    used.insert(t);
                    tree.nodes[r as usize].tuple = t;
                    queue.push_back(r);
                }
                Ok(())
            };
            if rank < leaf_rank {
                let down = self.nodes[s as usize].down.clone();
                expand(self, down, rank + 1, rank as usize + 1)?;
                let mut down = std::mem::take(&mut self.nodes[s as usize].down);
                down.sort_by_key(|&g| self.far_tuple(g));
                self.nodes[s as usize].down = down;
            }
            if rank != 0 {
                let up = self.nodes[s as usize].up.clone();
                expand(self, up, rank - 1, rank as usize)?;
                let mut up = std::mem::take(&mut self.nodes[s as usize].up);
                up.sort_by_key(|&g| self.far_tuple(g));
                self.nodes[s as usize].up = up;
            }
        }
        if let Some(s) = self.nodes.iter().position(|x| x.rank != UNRANKED && x.tuple[0] == NO_DIGIT) {
            return Err(refuse(format!(
                "switch {s} is not reached from the first leaf over up and down links"
            )));
        }
        Ok(())
    }

    /// OpenSM's check that every switch of a level looks like the first of that level in
    /// map order (as many up and down groups, as many links in a group; only the first down
    /// group is compared, as OpenSM does).
    fn validate(&self, view: &IbView, order: &[SwitchId], leaf_rank: u32) -> Result<(), RoutingError> {
        let mut reference: Vec<Option<SwitchId>> = vec![None; leaf_rank as usize + 1];
        for &s in order {
            let node = &self.nodes[s as usize];
            if node.rank == UNRANKED {
                continue;
            }
            let Some(r) = reference[node.rank as usize] else {
                reference[node.rank as usize] = Some(s);
                continue;
            };
            let refn = &self.nodes[r as usize];
            let (name, ref_name) = (&view.switch_names[s as usize], &view.switch_names[r as usize]);
            let level = node.rank;
            if node.up.len() != refn.up.len() {
                return Err(refuse(format!(
                    "switch '{name}' has {} up neighbours, '{ref_name}' of the same level {} (OpenSM: ERR AB09)",
                    node.up.len(),
                    refn.up.len()
                )));
            }
            if level != leaf_rank && node.down.len() != refn.down.len() {
                return Err(refuse(format!(
                    "switch '{name}' has {} down neighbours, '{ref_name}' of the same level {} (OpenSM: ERR AB0A)",
                    node.down.len(),
                    refn.down.len()
                )));
            }
            if let Some(&g0) = refn.up.first() {
                let want = self.groups[g0].links.len();
                if let Some(&g) = node.up.iter().find(|&&g| self.groups[g].links.len() != want) {
                    return Err(refuse(format!(
                        "switch '{name}' has {} links to one up neighbour, '{ref_name}' {want} (OpenSM: ERR AB0B)",
                        self.groups[g].links.len()
                    )));
                }
            }
            if level != leaf_rank {
                if let (Some(&g0), Some(&g)) = (refn.down.first(), node.down.first()) {
                    let (want, got) = (self.groups[g0].links.len(), self.groups[g].links.len());
                    if want != got {
                        return Err(refuse(format!(
                            "switch '{name}' has {got} links to its first down neighbour, '{ref_name}' {want} \
                             (OpenSM: ERR AB0C)"
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Gives switch `r` the route through `port` at `hops` for the current destination.
    fn set(&mut self, r: SwitchId, port: PortId, hops: u32) {
        if self.hops[r as usize] == u8::MAX {
            self.touched.push(r);
        }
        self.hops[r as usize] = hops.min(u8::MAX as u32 - 1) as u8;
        self.port[r as usize] = port;
    }

    /// Whether switch `r` already has a route of at most `hops` hops.
    fn has_within(&self, r: SwitchId, hops: u32) -> bool {
        self.hops[r as usize] != u8::MAX && hops >= self.hops[r as usize] as u32
    }

    /// The switches below `s` without a route as short route up to `s`; whether the fill
    /// reached an endpoint. `came_from`: the switch the walk came up from (not filled again).
    fn down_fill(&mut self, s: SwitchId, came_from: Option<SwitchId>, hops: u32) -> bool {
        if self.nodes[s as usize].down.is_empty() {
            return false;
        }
        if self.nodes[s as usize].resort_down {
            let mut down = std::mem::take(&mut self.nodes[s as usize].down);
            down.sort_by_key(|&g| (self.groups[g].up_load, self.far_tuple(g)));
            self.nodes[s as usize].down = down;
            self.nodes[s as usize].resort_down = false;
        }
        if !self.nodes[s as usize].sib.is_empty() {
            let mut sib = std::mem::take(&mut self.nodes[s as usize].sib);
            sib.sort_by_key(|&g| (self.groups[g].up_load, self.far_tuple(g)));
            self.nodes[s as usize].sib = sib;
        }
        let mut groups = self.nodes[s as usize].down.clone();
        if !self.dummy {
            groups.extend_from_slice(&self.nodes[s as usize].sib);
        }
        let mut reached = false;
        for g in groups {
            let Some(r) = self.far_switch(g) else {
                reached = true;
                continue;
            };
            if came_from == Some(r) || self.groups[g].links.is_empty() {
                continue;
            }
            let l = self.groups[g].least(|l| l.up_load);
            if self.has_within(r, hops + 1) {
                continue;
            }
            self.set(r, self.groups[g].links[l].remote, hops + 1);
            if self.down_fill(r, None, hops + 1) {
                reached = true;
                self.groups[g].links[l].up_load += 1;
                self.groups[g].up_load += 1;
                self.nodes[s as usize].resort_down = true;
            }
        }
        reached
    }

    /// The climb from `s` (reached from `came_from` at `hops`): fill below, then up along
    /// the main path (counted when `counted`) and every other up group.
    fn up_walk(&mut self, s: SwitchId, came_from: Option<SwitchId>, counted: bool, hops: u32) -> bool {
        let mut reached = self.down_fill(s, came_from, hops);
        if self.nodes[s as usize].rank == 0 {
            return reached;
        }
        let mut up = std::mem::take(&mut self.nodes[s as usize].up);
        up.sort_by_key(|&g| (self.groups[g].down_load, self.far_tuple(g)));
        self.nodes[s as usize].up = up.clone();
        let g0 = up[0];
        if counted {
            let l0 = self.groups[g0].least(|l| l.down_load);
            let r0 = self.far_switch(g0).expect("an up group leads to a switch");
            self.groups[g0].down_load += 1;
            self.groups[g0].links[l0].down_load += 1;
            if !self.has_within(r0, hops + 1) {
                self.set(r0, self.groups[g0].links[l0].remote, hops + 1);
            }
            reached |= self.up_walk(r0, Some(s), true, hops + 1);
        }
        for &g in &up[counted as usize..] {
            reached |= self.climb(s, g, hops).unwrap_or(false);
        }
        if !self.nodes[s as usize].sib.is_empty() {
            let mut sib = std::mem::take(&mut self.nodes[s as usize].sib);
            sib.sort_by_key(|&g| (self.groups[g].down_load, self.far_tuple(g)));
            self.nodes[s as usize].sib = sib.clone();
            for g in sib {
                let l = self.groups[g].least(|l| l.down_load);
                if let Some(true) = self.climb(s, g, hops) {
                    reached = true;
                    // As OpenSM counts it: the first up group, and the sibling link.
                    self.groups[g0].down_load += 1;
                    self.groups[g].links[l].down_load += 1;
                }
            }
        }
        reached
    }

    /// A climb from `s` through group `g` without counting: `None` when the far switch
    /// already has as short a route or the group has no link.
    fn climb(&mut self, s: SwitchId, g: usize, hops: u32) -> Option<bool> {
        let r = self.far_switch(g)?;
        if self.has_within(r, hops + 1) || self.groups[g].links.is_empty() {
            return None;
        }
        let l = self.groups[g].least(|l| l.down_load);
        self.set(r, self.groups[g].links[l].remote, hops + 1);
        Some(self.up_walk(r, Some(s), false, hops + 1))
    }

    /// Routes one destination hanging on `leaf` (a dummy when `dummy`); the routes are in
    /// `hops` and `port` until [`Tree::clear`].
    fn route(&mut self, leaf: SwitchId, local: PortId, dummy: bool) {
        self.dummy = dummy;
        self.set(leaf, local, 1);
        self.up_walk(leaf, None, true, 1);
    }

    /// Forgets the current destination's routes.
    fn clear(&mut self) {
        for &s in &self.touched {
            self.hops[s as usize] = u8::MAX;
            self.port[s as usize] = PortId::MAX;
        }
        self.touched.clear();
    }
}

/// Ranks: the distance from the switches with endpoints turned upside down, then the
/// distance from the switches that ended at rank 0 (section "The tree").
fn rank(net: &Network, order: &[SwitchId]) -> Result<Vec<u32>, RoutingError> {
    let n = net.num_switches();
    let bfs = |rank: &mut Vec<u32>, seeds: Vec<SwitchId>| -> u32 {
        let mut max = 0;
        let mut queue: VecDeque<SwitchId> = seeds.into();
        while let Some(s) = queue.pop_front() {
            for (_, r) in net.neighbours(s) {
                let next = rank[s as usize] + 1;
                if rank[r as usize] == UNRANKED || rank[r as usize] > next {
                    rank[r as usize] = next;
                    max = next;
                    queue.push_back(r);
                }
            }
        }
        max
    };
    let mut rank = vec![UNRANKED; n];
    let mut seeds = Vec::new();
    for &(s, _) in &net.endpoint_location {
        if rank[s as usize] != 0 {
            rank[s as usize] = 0;
            seeds.push(s);
        }
    }
    let max = bfs(&mut rank, seeds);
    for r in rank.iter_mut().filter(|r| **r != UNRANKED) {
        *r = max - *r;
    }
    let roots: Vec<SwitchId> = order.iter().copied().filter(|&s| rank[s as usize] == 0).collect();
    let mut again = vec![UNRANKED; n];
    for &s in &roots {
        again[s as usize] = 0;
    }
    let max = bfs(&mut again, roots);
    if max == 0 && n > 1 {
        return Err(refuse(
            "every switch is as far from the endpoints as the others, so none is a root (OpenSM: ERR AB2B; \
             a torus or a network with endpoints on every switch is not a fat tree)",
        ));
    }
    Ok(again)
}

/// Builds OpenSM's fat-tree tables for `net`: a column per endpoint.
pub fn build(net: &Network, endpoint_switch: &[SwitchId]) -> Result<Layered, RoutingError> {
    let view = IbView::of(net);
    let order = IbView::opensm_switch_order(net);
    let (mut tree, leaf_rank) = Tree::build(net, &view, &order)?;
    let n = net.num_switches();
    let mut t = Tables::with(net, endpoint_switch, Destinations::Endpoints);
    // The leaves in tuple order; each leaf's endpoints in port order (its down groups).
    let mut leaves: Vec<SwitchId> =
        (0..n as SwitchId).filter(|&s| tree.nodes[s as usize].rank == leaf_rank).collect();
    leaves.sort_by_key(|&s| tree.nodes[s as usize].tuple);
    let first = leaves.iter().position(|&s| tree.nodes[s as usize].leaf);
    let last = leaves.iter().rposition(|&s| tree.nodes[s as usize].leaf);
    let (Some(first), Some(last)) = (first, last) else { unreachable!("every endpoint hangs on a leaf") };
    if first >= last {
        return Err(refuse("it has fewer than 2 leaf switches"));
    }
    let leaves = &leaves[first..=last];
    let endpoints_of = |tree: &Tree, leaf: SwitchId| -> Vec<(EndpointId, PortId)> {
        tree.nodes[leaf as usize]
            .down
            .iter()
            .filter_map(|&g| match tree.groups[g].far {
                Far::Endpoint(e) => Some((e, tree.groups[g].links[0].local)),
                Far::Switch(_) => None,
            })
            .collect()
    };
    let most = leaves.iter().map(|&l| endpoints_of(&tree, l).len()).max().unwrap_or(0);
    for &leaf in leaves {
        base::cancel::check("building the fat-tree tables")?;
        let mine = endpoints_of(&tree, leaf);
        for &(e, local) in &mine {
            tree.route(leaf, local, false);
            let column = &mut t.next[e as usize * n..(e as usize + 1) * n];
            for &s in &tree.touched {
                column[s as usize] = tree.port[s as usize];
            }
            tree.clear();
        }
        for _ in mine.len()..most {
            tree.route(leaf, PortId::MAX, true);
            tree.clear();
        }
    }
    for e in 0..endpoint_switch.len() {
        if let Some(s) = t.next[e * n..(e + 1) * n].iter().position(|&p| p == PortId::MAX) {
            if tree.nodes[s].rank != UNRANKED {
                return Err(refuse(format!(
                    "switch '{}' was given no route to endpoint {e}",
                    view.switch_names[s]
                )));
            }
        }
    }
    let endpoints = endpoint_switch.len();
    t.finish("ftree", LayerOf::Destination(vec![0; endpoints]), 1, 2 * leaf_rank)
}

fn build_entry(ctx: &BuildContext<'_>) -> Result<Arc<dyn Routing>, RoutingError> {
    let mut r = build(ctx.net, ctx.endpoint_switch)?;
    r.merge_identical_columns();
    Ok(Arc::new(r))
}

/// `ftree` in the routing registry.
pub const FTREE: RoutingEntry = RoutingEntry {
    name: "ftree",
    doc: "OpenSM's fat-tree routing: the endpoints, leaf by leaf in tuple order, each given the least loaded up link at every level (d-mod-k), every switch routing up-then-down to each endpoint; tables per endpoint equal to OpenSM 3.3's; refuses a fabric that is not a fat tree, naming why",
    topologies: "fat trees (fat_tree, or a file of one)",
    vcs: "1",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Routing,
    needs_intact_topology: false,
    // A port per switch and endpoint (2 bytes), and as much again while building.
    state_bytes: |size| size.switches.saturating_mul(size.endpoints).saturating_mul(4).saturating_add(size.per_switch()),
    build: build_entry,
};

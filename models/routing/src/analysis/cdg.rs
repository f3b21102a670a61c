//! The channel dependency graph over `(channel, VC)` as per-switch bitmaps, and its cycle
//! search (a depth-first search). The graph is the one of Dally and Seitz, "Deadlock-Free
//! Message Routing in Multiprocessor Interconnection Networks", IEEE Trans. Computers
//! C-36(5), 1987: a routing whose graph is acyclic cannot deadlock.
//!
//! A dependency always goes from a channel arriving at a switch `s` (the link into one of
//! its network ports, on some VC) to a channel leaving `s` (one of its network ports, on
//! some VC). So the graph is stored per switch: for every pair of VCs `(a, b)` and every
//! input port `i`, the set of output ports `o` such that `(i, a)` depends on `(o, b)`, as
//! a bitset over the switch's network ports (those after its terminal ports): `V^2 P W`
//! words for `P` network ports, `V` VCs and `W = ceil(P / 64)`. The channels in use are a
//! second bitmap, `V W` words per switch. Exploring threads set bits with atomic ORs
//! (after a plain load, as most bits are set already): the result does not depend on the
//! order, so it is deterministic.
//!
//! Layout of switch `s`: word `edge_offset[s] + ((a V + b) P + i) W + o / 64`, bit `o % 64`.
//! The rows of one VC pair are contiguous, so the arrivals of one routing state (same VC,
//! several input ports, candidates on one VC) touch a few cache lines. For the
//! 65,536-switch RRG of degree 32 with 5 VCs: 800 words per switch, 420 MB.

use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use topology::{Network, PortId, PortTarget, SwitchId};

/// A node of the channel dependency graph: VC `vc` of the link leaving `port` of `switch`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Channel {
    /// The switch the link leaves.
    pub switch: SwitchId,
    /// Its output port (a network port).
    pub port: PortId,
    /// The virtual channel (at the downstream switch's input).
    pub vc: u8,
    /// Part of an escape subnetwork (Duato): its dependencies are checked separately.
    pub escape: bool,
}

/// Packs `(global port index, vc)` into one key; the order of keys is the order of
/// `(switch, port, vc)`, since global port indices grow with the switch.
pub(crate) fn key(port_index: usize, vc: u8) -> u64 {
    (port_index as u64) << 8 | vc as u64
}

/// The channel a key stands for.
pub(crate) fn channel(net: &Network, key: u64) -> Channel {
    let index = (key >> 8) as u32;
    let switch = net.port_offsets.partition_point(|&o| o <= index) as SwitchId - 1;
    Channel {
        switch,
        port: (index - net.port_offsets[switch as usize]) as PortId,
        vc: (key & 0xff) as u8,
        escape: false,
    }
}

/// Bytes of the bitmaps of `net` with `vcs` VCs, or `None` if that overflows.
pub(crate) fn bitmap_bytes(net: &Network, vcs: u8) -> Option<u64> {
    let v = vcs as u64;
    let mut words: u64 = 0;
    for s in 0..net.num_switches() as SwitchId {
        let p = (net.radix(s) - net.terminals[s as usize] as usize) as u64;
        let w = p.div_ceil(64);
        words = words.checked_add(v.checked_mul(v)?.checked_mul(p)?.checked_mul(w)?.checked_add(v * w)?)?;
    }
    words.checked_mul(8)
}

/// Per-switch geometry of the bitmaps.
struct Geometry {
    vcs: usize,
    /// First network port (the number of terminal ports) of every switch.
    first: Vec<u16>,
    /// Network ports of every switch.
    ports: Vec<u16>,
    /// Words per port bitset of every switch.
    words: Vec<u16>,
    /// First word of every switch's channel bitmap, and the total at the end.
    node_offset: Vec<u64>,
    /// First word of every switch's dependency rows, and the total at the end.
    edge_offset: Vec<u64>,
}

impl Geometry {
    fn new(net: &Network, vcs: u8) -> Self {
        let n = net.num_switches();
        let vcs = vcs as usize;
        let mut g = Geometry {
            vcs,
            first: Vec::with_capacity(n),
            ports: Vec::with_capacity(n),
            words: Vec::with_capacity(n),
            node_offset: Vec::with_capacity(n + 1),
            edge_offset: Vec::with_capacity(n + 1),
        };
        let (mut nodes, mut edges) = (0u64, 0u64);
        for s in 0..n as SwitchId {
            let t = net.terminals[s as usize] as usize;
            let p = net.radix(s) - t;
            let w = p.div_ceil(64);
            g.first.push(t as u16);
            g.ports.push(p as u16);
            g.words.push(w as u16);
            g.node_offset.push(nodes);
            g.edge_offset.push(edges);
            nodes += (vcs * w) as u64;
            edges += (vcs * vcs * p * w) as u64;
        }
        g.node_offset.push(nodes);
        g.edge_offset.push(edges);
        g
    }

    /// First word of the row of input port `i` (network port index) on VC `a` towards
    /// outputs on VC `b` at switch `s`.
    #[inline]
    fn row(&self, s: SwitchId, a: usize, b: usize, i: usize) -> usize {
        let s = s as usize;
        let (p, w) = (self.ports[s] as usize, self.words[s] as usize);
        self.edge_offset[s] as usize + ((a * self.vcs + b) * p + i) * w
    }
}

/// The channel dependency graph of a network as bitmaps (see the module documentation).
pub(crate) struct CdgBits {
    g: Geometry,
    nodes: Vec<AtomicU64>,
    edges: Vec<AtomicU64>,
}

fn zeroed(len: u64) -> Vec<AtomicU64> {
    std::iter::repeat_with(|| AtomicU64::new(0)).take(len as usize).collect()
}

/// ORs `bits` into `word` unless they are all set already.
#[inline]
fn set(word: &AtomicU64, bits: u64) {
    if word.load(Relaxed) & bits != bits {
        word.fetch_or(bits, Relaxed);
    }
}

impl CdgBits {
    /// Empty bitmaps for `net` with `vcs` VCs ([`bitmap_bytes`] must fit).
    pub(crate) fn new(net: &Network, vcs: u8) -> Self {
        let g = Geometry::new(net, vcs);
        let (nodes, edges) =
            (zeroed(g.node_offset[net.num_switches()]), zeroed(g.edge_offset[net.num_switches()]));
        CdgBits { g, nodes, edges }
    }

    /// Words of a set of output channels of `s`: [`CdgBits::mark`] fills them, one port
    /// bitset per VC.
    pub(crate) fn channel_words(&self, s: SwitchId) -> usize {
        self.g.vcs * self.g.words[s as usize] as usize
    }

    /// The first network port of `s`.
    #[inline]
    pub(crate) fn first_port(&self, s: SwitchId) -> PortId {
        self.g.first[s as usize]
    }

    /// Adds output `port` (a network port) of `s` on `vc` to the set `cols`.
    #[inline]
    pub(crate) fn mark(&self, cols: &mut [u64], s: SwitchId, port: PortId, vc: u8) {
        let i = (port - self.g.first[s as usize]) as usize;
        cols[vc as usize * self.g.words[s as usize] as usize + i / 64] |= 1 << (i % 64);
    }

    /// Marks the channels of `s` in `cols` (from [`CdgBits::mark`]) as used, and makes each
    /// input `(port, vc)` of `s` with `port` (a network port index, after the terminals)
    /// in `arrivals` depend on them.
    pub(crate) fn add(
        &self,
        s: SwitchId,
        cols: &[u64],
        vc: u8,
        arrivals: impl Iterator<Item = usize> + Clone,
    ) {
        let w = self.g.words[s as usize] as usize;
        let nodes = &self.nodes[self.g.node_offset[s as usize] as usize..][..cols.len()];
        for (word, &bits) in nodes.iter().zip(cols) {
            if bits != 0 {
                set(word, bits);
            }
        }
        for (b, out) in cols.chunks(w.max(1)).enumerate() {
            if out.iter().all(|&x| x == 0) {
                continue;
            }
            for i in arrivals.clone() {
                let row = &self.edges[self.g.row(s, vc as usize, b, i)..][..w];
                for (word, &bits) in row.iter().zip(out) {
                    if bits != 0 {
                        set(word, bits);
                    }
                }
            }
        }
    }

    /// The dependency bits, in a form the cycle search and the counts read.
    pub(crate) fn freeze(self, net: &Network) -> Cdg {
        let nodes: Vec<u64> = self.nodes.into_iter().map(AtomicU64::into_inner).collect();
        let edges: Vec<u64> = self.edges.into_iter().map(AtomicU64::into_inner).collect();
        // The far end of every network port, per switch.
        let mut far = Vec::with_capacity(net.ports.len());
        for s in 0..net.num_switches() as SwitchId {
            for p in net.ports(s) {
                far.push(match p.target {
                    PortTarget::Switch { switch, port } => (switch, port),
                    _ => (SwitchId::MAX, 0),
                });
            }
        }
        Cdg { g: self.g, nodes, edges, far, port_offsets: net.port_offsets.clone() }
    }
}

/// A finished channel dependency graph (read only).
pub(crate) struct Cdg {
    g: Geometry,
    nodes: Vec<u64>,
    edges: Vec<u64>,
    /// Far end `(switch, port)` of every port (`SwitchId::MAX`: not a network link).
    far: Vec<(SwitchId, PortId)>,
    port_offsets: Vec<u32>,
}

/// A channel: switch, network port index (after the terminals), VC.
type Node = (SwitchId, u32, u8);

impl Cdg {
    /// The channel key of a node.
    pub(crate) fn key(&self, (s, p, vc): Node) -> u64 {
        key(self.port_offsets[s as usize] as usize + self.g.first[s as usize] as usize + p as usize, vc)
    }

    /// A dense index of a node, for per-channel arrays.
    fn index(&self, (s, p, vc): Node) -> usize {
        let w = self.g.words[s as usize] as usize;
        (self.g.node_offset[s as usize] as usize + vc as usize * w) * 64 + p as usize
    }

    /// The node of a dense index.
    fn node(&self, index: usize) -> Node {
        let word = (index / 64) as u64;
        let s = self.g.node_offset.partition_point(|&o| o <= word) - 1;
        let w = self.g.words[s] as u64;
        let vc = (word - self.g.node_offset[s]) / w;
        let p = (word - self.g.node_offset[s] - vc * w) * 64 + (index % 64) as u64;
        (s as SwitchId, p as u32, vc as u8)
    }

    /// Number of dense indices.
    fn indices(&self) -> usize {
        self.nodes.len() * 64
    }

    /// The first `(port, vc)` at or after `from` (in that order) with `keep[vc]` set in
    /// the port bitsets `data[base + vc stride..][..w]`.
    fn next_in(
        data: &[u64],
        base: usize,
        stride: usize,
        w: usize,
        from: (u32, u8),
        keep: &[bool],
    ) -> Option<(u32, u8)> {
        let (mut port, mut vc) = from;
        while (port as usize) < w * 64 {
            let word = port as usize / 64;
            // Ports of this word set on some kept VC, from `port` on.
            let mut any = 0u64;
            for (b, &k) in keep.iter().enumerate() {
                if k {
                    any |= data[base + b * stride + word];
                }
            }
            any &= u64::MAX << (port % 64);
            if any == 0 {
                port = (word as u32 + 1) * 64;
                vc = 0;
                continue;
            }
            let p = word as u32 * 64 + any.trailing_zeros();
            let start = if p == port { vc as usize } else { 0 };
            for (b, &k) in keep.iter().enumerate().skip(start) {
                if k && data[base + b * stride + word] >> (p % 64) & 1 == 1 {
                    return Some((p, b as u8));
                }
            }
            port = p + 1;
            vc = 0;
        }
        None
    }

    /// The position after `(p, vc)` in `(port, vc)` order.
    fn after(&self, (p, vc): (u32, u8)) -> (u32, u8) {
        if vc as usize + 1 < self.g.vcs {
            (p, vc + 1)
        } else {
            (p + 1, 0)
        }
    }

    /// Used channels with `keep[vc]`, in key order.
    fn used<'a>(&'a self, keep: &'a [bool]) -> impl Iterator<Item = Node> + 'a {
        (0..self.g.ports.len() as SwitchId).flat_map(move |s| {
            let w = self.g.words[s as usize] as usize;
            let base = self.g.node_offset[s as usize] as usize;
            let mut at = Some((0u32, 0u8));
            std::iter::from_fn(move || {
                let found = Self::next_in(&self.nodes, base, w, w, at?, keep);
                at = found.map(|x| self.after(x));
                found.map(|(p, vc)| (s, p, vc))
            })
        })
    }

    /// The switch a channel leads to and where the dependency rows of the input it
    /// arrives at start (`(base, stride)`: output VC `b`'s port bitset at `base + b
    /// stride`), if it is a link.
    fn rows(&self, (s, p, vc): Node) -> Option<(SwitchId, usize, usize)> {
        let g = self.port_offsets[s as usize] as usize + self.g.first[s as usize] as usize + p as usize;
        let (t, q) = self.far[g];
        if t == SwitchId::MAX {
            return None;
        }
        let i = (q - self.g.first[t as usize]) as usize;
        let stride = self.g.ports[t as usize] as usize * self.g.words[t as usize] as usize;
        Some((t, self.g.row(t, vc as usize, 0, i), stride))
    }

    /// The first dependency of `v` at or after `(port, vc)` of its far switch, with
    /// `keep[vc]`.
    fn next_successor(&self, v: Node, from: (u32, u8), keep: &[bool]) -> Option<Node> {
        let (t, base, stride) = self.rows(v)?;
        let w = self.g.words[t as usize] as usize;
        Self::next_in(&self.edges, base, stride, w, from, keep).map(|(p, vc)| (t, p, vc))
    }

    /// Channels in use.
    pub(crate) fn num_nodes(&self) -> usize {
        self.nodes.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Dependencies.
    pub(crate) fn num_edges(&self) -> usize {
        self.edges.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Largest VC of a channel in use plus one (0 without channels).
    pub(crate) fn vcs_used(&self) -> u32 {
        let mut used = 0;
        for s in 0..self.g.ports.len() {
            let w = self.g.words[s] as usize;
            let sets = &self.nodes[self.g.node_offset[s] as usize..self.g.node_offset[s + 1] as usize];
            for (vc, set) in sets.chunks(w.max(1)).enumerate() {
                if set.iter().any(|&x| x != 0) {
                    used = used.max(vc as u32 + 1);
                }
            }
        }
        used
    }

    /// Every dependency `(from, to)` as channel keys, sorted.
    pub(crate) fn edge_keys(&self) -> Vec<(u64, u64)> {
        let all = vec![true; self.g.vcs];
        let mut out = Vec::new();
        for v in self.used(&all) {
            let mut from = Some((0, 0));
            while let Some(w) = from.and_then(|f| self.next_successor(v, f, &all)) {
                out.push((self.key(v), self.key(w)));
                from = Some(self.after((w.1, w.2)));
            }
        }
        out.sort_unstable();
        out
    }

    /// Dependencies from a channel with `from(vc)` to one with `!from(vc')`.
    pub(crate) fn count_leaving(&self, from: impl Fn(u8) -> bool) -> u64 {
        let mut count = 0;
        for s in 0..self.g.ports.len() as SwitchId {
            let (p, w) = (self.g.ports[s as usize] as usize, self.g.words[s as usize] as usize);
            for a in (0..self.g.vcs).filter(|&a| from(a as u8)) {
                for b in (0..self.g.vcs).filter(|&b| !from(b as u8)) {
                    let start = self.g.row(s, a, b, 0);
                    count +=
                        self.edges[start..start + p * w].iter().map(|x| x.count_ones() as u64).sum::<u64>();
                }
            }
        }
        count
    }

    /// A cycle among the channels whose VC passes `keep` (and the dependencies between
    /// them), as channel keys (each depends on the next, the last on the first), or `None`
    /// if that graph is acyclic. Iterative depth-first search from every channel in key
    /// order, following dependencies in key order: the witness is deterministic, the one
    /// a search over the sorted list of keys finds.
    pub(crate) fn find_cycle(&self, keep: impl Fn(u8) -> bool) -> Option<Vec<u64>> {
        const WHITE: u8 = 0;
        const GREY: u8 = 1;
        const BLACK: u8 = 2;
        let keep: Vec<bool> = (0..self.g.vcs).map(|vc| keep(vc as u8)).collect();
        let mut colour = vec![WHITE; self.indices()];
        assert!(self.indices() <= u32::MAX as usize, "too many channels for the cycle search");
        let mut parent: Vec<u32> = vec![0; self.indices()];
        // Stack of (node, next (port, vc) to look at among its successors).
        let mut stack: Vec<(Node, (u32, u8))> = Vec::new();
        for root in self.used(&keep) {
            if colour[self.index(root)] != WHITE {
                continue;
            }
            colour[self.index(root)] = GREY;
            stack.push((root, (0, 0)));
            while let Some(top) = stack.last_mut() {
                let v = top.0;
                let Some(w) = self.next_successor(v, top.1, &keep) else {
                    colour[self.index(v)] = BLACK;
                    stack.pop();
                    continue;
                };
                top.1 = self.after((w.1, w.2));
                match colour[self.index(w)] {
                    WHITE => {
                        colour[self.index(w)] = GREY;
                        parent[self.index(w)] = self.index(v) as u32;
                        stack.push((w, (0, 0)));
                    }
                    GREY => {
                        // Back edge v -> w: the cycle is w -> ... -> v -> w.
                        let mut cycle = vec![self.key(v)];
                        let mut x = v;
                        while x != w {
                            x = self.node(parent[self.index(x)] as usize);
                            cycle.push(self.key(x));
                        }
                        cycle.reverse();
                        return Some(cycle);
                    }
                    _ => {}
                }
            }
        }
        None
    }
}

//! The Angara routing graph of a torus or mesh (the module docs: "Rules", "Routing graph",
//! "Deviation"): its vertex numbering, the order-violating First and Last Steps that keep
//! the channel dependency graph acyclic, and its edges in CSR form.

use crate::layered::{Added, DynDag};
use topology::shape::TorusShape;
use topology::{Network, PortTarget, SwitchId};

/// A routing-graph edge.
#[derive(Clone, Copy)]
pub(super) struct Edge {
    pub(super) to: u32,
    /// Global port id of the link (`u32::MAX`: the edge to `end`).
    pub(super) link: u32,
    pub(super) vc: u8,
}

/// The torus and its routing graph.
pub(super) struct Rg<'a> {
    pub(super) net: &'a Network,
    pub(super) shape: &'a TorusShape,
    pub(super) nd: usize,
    pow3: Vec<u32>,
    per: usize,
    pub(super) offsets: Vec<u32>,
    pub(super) edges: Vec<Edge>,
}

const BEGIN: usize = 0;
const END: usize = 1;

impl<'a> Rg<'a> {
    fn fs(&self, d: usize) -> usize {
        2 + d
    }
    fn ls(&self, d: usize) -> usize {
        2 + self.nd + d
    }
    fn dirbit(&self, code: u32, crossed: bool) -> usize {
        2 + 2 * self.nd + 2 * code as usize + crossed as usize
    }
    fn opposite(&self, o: usize) -> usize {
        (o + self.nd) % (2 * self.nd)
    }
    fn digit(&self, code: u32, dim: usize) -> u32 {
        code / self.pow3[dim] % 3
    }
    /// Largest direction (in the order) of a direction-bit set.
    fn last(&self, code: u32) -> usize {
        (0..self.nd)
            .filter_map(|d| match self.digit(code, d) {
                1 => Some(d),
                2 => Some(self.nd + d),
                _ => None,
            })
            .max()
            .expect("non-empty set")
    }
    fn single(&self, o: usize) -> u32 {
        let d = o % self.nd;
        self.pow3[d] * if o < self.nd { 1 } else { 2 }
    }

    /// The hop from `u` in direction `o`: next switch, link, whether it is the wrap-around.
    fn hop(&self, u: SwitchId, o: usize) -> Option<(SwitchId, u32, bool)> {
        let (dim, pos) = (o % self.nd, o < self.nd);
        let port = self.shape.port(dim, pos);
        let PortTarget::Switch { switch, .. } = self.net.ports(u)[port as usize].target else {
            return None;
        };
        let (c, k) = (self.shape.coord(u, dim), self.shape.sides[dim]);
        let wrap = self.shape.wrap[dim] && if pos { c == k - 1 } else { c == 0 };
        Some((switch, self.net.port_offsets[u as usize] + port as u32, wrap))
    }

    /// The hop arriving at `u` in direction `o`: link and whether it is the wrap-around.
    fn arrival(&self, u: SwitchId, o: usize) -> Option<(u32, bool)> {
        let (dim, pos) = (o % self.nd, o < self.nd);
        let port = self.shape.port(dim, !pos);
        let PortTarget::Switch { switch: w, .. } = self.net.ports(u)[port as usize].target else {
            return None;
        };
        self.hop(w, o).map(|(_, link, wrap)| (link, wrap))
    }

    /// Dateline bits a segment in direction `o` may have at `u` after arriving by a hop that
    /// is (`wrap`) or is not the wrap-around.
    fn crossed_states(&self, o: usize, wrap: bool) -> &'static [bool] {
        if wrap {
            &[true]
        } else if self.shape.wrap[o % self.nd] {
            &[false, true]
        } else {
            &[false]
        }
    }
}

fn ch(link: u32, vc: bool) -> u32 {
    link * 2 + vc as u32
}

/// Order-violating First and Last Steps accepted at each switch.
pub(super) struct Exceptions {
    /// `fs[(u * nd + l) * 2nd + o]`: after a First Step `+l` into `u`, direction `o < l`.
    pub(super) fs: Vec<bool>,
    /// `ls[((u * 2nd + last) * 2 + crossed) * 2nd + o]`: a Last Step `o < last`.
    pub(super) ls: Vec<bool>,
}

impl<'a> Rg<'a> {
    pub(super) fn new(net: &'a Network, shape: &'a TorusShape) -> Self {
        let nd = shape.sides.len();
        let pow3: Vec<u32> = (0..=nd).map(|d| 3u32.pow(d as u32)).collect();
        let per = 2 + 2 * nd + 2 * pow3[nd] as usize;
        Self { net, shape, nd, pow3, per, offsets: Vec::new(), edges: Vec::new() }
    }

    /// The channel dependencies of the base rules; then the exceptions that keep them acyclic.
    pub(super) fn exceptions(&self) -> Exceptions {
        let (nd, n) = (self.nd, self.net.num_switches());
        let mut dag = DynDag::new(self.net.ports.len() * 2);
        let add = |dag: &mut DynDag, a: u32, b: u32| {
            assert!(dag.add(a, b) != Added::Cycle, "angara: base rules form a cycle");
        };
        for u in 0..n as SwitchId {
            for l in 0..nd {
                let Some((inl, w)) = self.arrival(u, l) else { continue };
                for o in (l + 1..2 * nd).filter(|&o| o != nd + l) {
                    if let Some((_, link, wo)) = self.hop(u, o) {
                        add(&mut dag, ch(inl, w), ch(link, wo));
                    }
                }
            }
            for last in 0..2 * nd {
                let Some((inl, w)) = self.arrival(u, last) else { continue };
                for &c in self.crossed_states(last, w) {
                    for o in last..2 * nd {
                        let Some((_, link, wo)) = self.hop(u, o) else { continue };
                        if o == last {
                            if !(c && wo) {
                                add(&mut dag, ch(inl, c), ch(link, c || wo));
                            }
                        } else if o != self.opposite(last) {
                            add(&mut dag, ch(inl, c), ch(link, wo));
                        }
                    }
                }
            }
        }
        let mut ex =
            Exceptions { fs: vec![false; n * nd * 2 * nd], ls: vec![false; n * 2 * nd * 2 * 2 * nd] };
        for u in 0..n as SwitchId {
            for l in 0..nd {
                let Some((inl, w)) = self.arrival(u, l) else { continue };
                for o in 0..l {
                    if let Some((_, link, wo)) = self.hop(u, o) {
                        ex.fs[(u as usize * nd + l) * 2 * nd + o] =
                            dag.add(ch(inl, w), ch(link, wo)) != Added::Cycle;
                    }
                }
            }
            for last in nd..2 * nd {
                let Some((inl, w)) = self.arrival(u, last) else { continue };
                for &c in self.crossed_states(last, w) {
                    for o in nd..last {
                        if let Some((_, link, wo)) = self.hop(u, o) {
                            let i = ((u as usize * 2 * nd + last) * 2 + c as usize) * 2 * nd + o;
                            ex.ls[i] = dag.add(ch(inl, c), ch(link, wo)) != Added::Cycle;
                        }
                    }
                }
            }
        }
        ex
    }

    /// Builds the edges (CSR).
    pub(super) fn build_edges(&mut self, ex: &Exceptions) {
        let (nd, n) = (self.nd, self.net.num_switches());
        let mut offsets = Vec::with_capacity(n * self.per + 1);
        let mut edges = Vec::new();
        offsets.push(0u32);
        for u in 0..n as SwitchId {
            let base = u as usize * self.per;
            let vertex = |v: SwitchId, local: usize| (v as usize * self.per + local) as u32;
            let end = Edge { to: (base + END) as u32, link: u32::MAX, vc: 0 };
            for local in 0..self.per {
                if local == BEGIN {
                    for o in 0..2 * nd {
                        let Some((v, link, w)) = self.hop(u, o) else { continue };
                        if o < nd {
                            edges.push(Edge { to: vertex(v, self.fs(o)), link, vc: w as u8 });
                        }
                        edges.push(Edge { to: vertex(v, self.dirbit(self.single(o), w)), link, vc: w as u8 });
                    }
                } else if local == END {
                } else if local < self.fs(nd) {
                    let l = local - 2;
                    edges.push(end);
                    for o in 0..2 * nd {
                        let ok = if o > l {
                            o != nd + l
                        } else {
                            o < l && ex.fs[(u as usize * nd + l) * 2 * nd + o]
                        };
                        if let (true, Some((v, link, w))) = (ok, self.hop(u, o)) {
                            edges.push(Edge {
                                to: vertex(v, self.dirbit(self.single(o), w)),
                                link,
                                vc: w as u8,
                            });
                        }
                    }
                } else if local < self.dirbit(0, false) {
                    edges.push(end);
                } else {
                    let k = local - self.dirbit(0, false);
                    let (code, c) = ((k / 2) as u32, k % 2 == 1);
                    if code == 0 {
                        offsets.push(edges.len() as u32);
                        continue;
                    }
                    edges.push(end);
                    let last = self.last(code);
                    for o in 0..2 * nd {
                        let Some((v, link, w)) = self.hop(u, o) else { continue };
                        let (dim, sign) = (o % nd, if o < nd { 1 } else { 2 });
                        if o == last {
                            if !(c && w) {
                                edges.push(Edge {
                                    to: vertex(v, self.dirbit(code, c || w)),
                                    link,
                                    vc: (c || w) as u8,
                                });
                            }
                            continue;
                        }
                        if o > last && self.digit(code, dim) == 0 {
                            let next = code + sign * self.pow3[dim];
                            edges.push(Edge { to: vertex(v, self.dirbit(next, w)), link, vc: w as u8 });
                        }
                        let ls = o >= nd
                            && if o > last {
                                o != self.opposite(last)
                            } else {
                                ex.ls[((u as usize * 2 * nd + last) * 2 + c as usize) * 2 * nd + o]
                            };
                        if ls {
                            edges.push(Edge { to: vertex(v, self.ls(dim)), link, vc: w as u8 });
                        }
                    }
                }
                offsets.push(edges.len() as u32);
            }
        }
        self.offsets = offsets;
        self.edges = edges;
    }

    pub(super) fn out(&self, v: u32) -> &[Edge] {
        &self.edges[self.offsets[v as usize] as usize..self.offsets[v as usize + 1] as usize]
    }

    pub(super) fn begin(&self, s: SwitchId) -> u32 {
        (s as usize * self.per + BEGIN) as u32
    }

    pub(super) fn end(&self, s: SwitchId) -> u32 {
        (s as usize * self.per + END) as u32
    }
}

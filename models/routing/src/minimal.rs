//! Minimal routing for any topology: all minimal next hops, or one per pair (the ECMP and
//! SP routings of Pascual and Navaridas, "High-Performance, Low-Complexity Deadlock
//! Avoidance for Arbitrary Topologies/Routings", ICS'18, section 7.3).
//!
//! One file: the routing itself is under 380 lines, ending with its entries; the rest are
//! its tests, which check the coordinates, the two-bit table, the byte table and a table
//! for some switches only against each other.
//!
//! The candidates at switch `s` for destination switch `d` are the neighbours `n` with
//! `dist(n, d) = dist(s, d) - 1`, in port order. In single-path mode one candidate is kept,
//! chosen by a hash of `(s, d)` so that destinations spread over the minimal ports.
//!
//! Where the minimal next hops come from:
//!
//! * HyperX, torus and mesh without failed links: from coordinates, no table (`O(dimensions)`
//!   per decision). HyperX: in every unaligned dimension, the port to the destination's
//!   coordinate. Torus: in every unaligned dimension, the direction(s) that shorten the
//!   ring distance (both at half the ring, so both ports of a side-2 ring); mesh: the one
//!   towards the destination.
//! * Any other network: a [`DistanceRows`] table of distances modulo 3 (two bits per
//!   entry), built by multi-source bit-parallel BFS, holding the entries of the switches
//!   where decisions are taken and of their neighbours ([`Minimal::for_switches`]) or of all
//!   switches ([`Minimal::new`]: 1 GiB for 65,536 switches).
//!
//! Both give the same candidates in the same order, so results do not depend on which is
//! used.

use super::graph::{DistanceRows, Encoding, SwitchGraph};
use super::registry::{BuildContext, RoutingEntry, Settings, StateSize};
use super::VcPolicy;
use super::{Candidate, LoadView, Reads, Routing};
use crate::packet::Packet;
use crate::RoutingError;
use base::rng::Rng;
use std::sync::Arc;
use topology::shape::HyperXShape;
use topology::shape::TorusShape;
use topology::{Network, Shape, SwitchId};

/// Where the minimal next hops come from.
enum Source {
    /// HyperX coordinates.
    HyperX(HyperXShape),
    /// Torus/mesh coordinates.
    Torus(TorusShape),
    /// A table of distances towards every destination.
    Table(DistanceRows),
}

/// Minimal routing over coordinates or a distance table.
pub struct Minimal {
    source: Source,
    /// Neighbours of the switches where decisions are taken; none when they come from
    /// coordinates and only some switches take decisions (a rank's).
    graph: Option<SwitchGraph>,
    single_path: bool,
    diameter: u32,
}

impl Minimal {
    /// Minimal routing on `net`, decisions at every switch. `single_path` keeps one route
    /// per switch pair.
    pub fn new(net: &Network, single_path: bool) -> Result<Self, RoutingError> {
        Self::build(net, single_path, None, Encoding::Mod3)
    }

    /// Minimal routing on `net` that only takes decisions at `switches` (e.g. a rank's
    /// own switches): a distance table holds the entries of those switches and their
    /// neighbours only, for every destination. Asking for candidates at another switch
    /// panics. HyperX, tori and meshes without failed links need no table at all.
    pub fn for_switches(
        net: &Network,
        single_path: bool,
        switches: &[SwitchId],
    ) -> Result<Self, RoutingError> {
        Self::build(net, single_path, Some(switches), Encoding::Mod3)
    }

    /// Like [`Minimal::new`] with exact distances (one byte per pair where a table is
    /// needed), for routings that read absolute distances ([`Minimal::distances_around`]).
    pub(crate) fn with_exact_distances(net: &Network) -> Result<Self, RoutingError> {
        Self::build(net, false, None, Encoding::Exact)
    }

    fn build(
        net: &Network,
        single_path: bool,
        switches: Option<&[SwitchId]>,
        encoding: Encoding,
    ) -> Result<Self, RoutingError> {
        let source = match &net.shape {
            Shape::HyperX(h) if net.failed_links == 0 => Source::HyperX(h.clone()),
            Shape::Torus(t) if net.failed_links == 0 => Source::Torus(t.clone()),
            _ => Source::Table(DistanceRows::build(net, encoding, switches)?),
        };
        let diameter = match &source {
            // Every side is at least 2: each dimension adds its longest distance.
            Source::HyperX(h) => h.sides.len() as u32,
            Source::Torus(t) => {
                t.sides.iter().zip(&t.wrap).map(|(&k, &w)| if w { k / 2 } else { k - 1 }).sum()
            }
            Source::Table(rows) => rows.diameter(),
        };
        let graph = match (&source, switches) {
            (Source::HyperX(_) | Source::Torus(_), Some(_)) => None,
            (_, Some(list)) => Some(SwitchGraph::for_switches(net, list)),
            (_, None) => Some(SwitchGraph::new(net)),
        };
        Ok(Self { source, graph, single_path, diameter })
    }

    /// Switch-to-switch distance. From coordinates or an exact table; with a modulo-3
    /// table, by following minimal next hops from `a` to `b` (`O(distance x degree)`,
    /// every switch on the way must be a decision switch).
    pub fn distance(&self, a: SwitchId, b: SwitchId) -> u32 {
        match &self.source {
            Source::HyperX(h) => {
                (0..h.sides.len()).filter(|&k| h.coord(a, k) != h.coord(b, k)).count() as u32
            }
            Source::Torus(t) => {
                (0..t.sides.len()).map(|k| torus_distance(t, k, t.coord(a, k), t.coord(b, k))).sum()
            }
            Source::Table(rows) if rows.encoding() == Encoding::Exact => rows.distance(a, b),
            Source::Table(rows) => {
                let mut at = a;
                let mut hops = 0;
                while at != b {
                    let mut next = None;
                    rows.closer_neighbours(at, b, |i| {
                        next = next.or(Some(i));
                    });
                    at = self.graph().neighbours(at)[next.expect("a connected network")].1;
                    hops += 1;
                }
                hops
            }
        }
    }

    /// `f(port, here, there)` for every network port of `at`, in port order, with `here` the
    /// distance from `at` to `dst` and `there` that from the switch behind the port. Needs
    /// exact distances: coordinates or [`Minimal::with_exact_distances`].
    pub(crate) fn distances_around(&self, at: SwitchId, dst: SwitchId, mut f: impl FnMut(u16, u32, u32)) {
        match &self.source {
            Source::Table(rows) => {
                let nbrs = self.graph().neighbours(at);
                rows.neighbour_distances(at, dst, |i, here, there| f(nbrs[i].0, here, there))
            }
            Source::HyperX(_) => {
                self.neighbours_with_distances(at, at, dst, |port, _, (_, here), (_, there)| {
                    f(port, here, there)
                })
            }
            Source::Torus(_) => {
                let here = self.distance(at, dst);
                for &(port, n) in self.graph().neighbours(at) {
                    f(port, here, self.distance(n, dst));
                }
            }
        }
    }

    /// `f(port, neighbour, (d(a, at), d(at, b)), (d(a, neighbour), d(neighbour, b)))` for
    /// every network port of `at`, in port order. Needs exact distances, like
    /// [`Minimal::distances_around`]. On a healthy HyperX the neighbours' distances follow
    /// from `at`'s by one coordinate each, which saves the divisions of
    /// [`Minimal::distance`] per neighbour (the hot loop of Polarized and ALLPATH).
    pub(crate) fn neighbours_with_distances(
        &self,
        at: SwitchId,
        a: SwitchId,
        b: SwitchId,
        mut f: impl FnMut(u16, SwitchId, (u32, u32), (u32, u32)),
    ) {
        let here = (self.distance(a, at), self.distance(at, b));
        let Source::HyperX(h) = &self.source else {
            for &(port, n) in self.graph().neighbours(at) {
                f(port, n, here, (self.distance(a, n), self.distance(n, b)));
            }
            return;
        };
        let (mut stride, mut first_port) = (1, h.endpoints_per_switch);
        for &side in &h.sides {
            let coord = |s: SwitchId| (s / stride) % side;
            let (own, ca, cb) = (coord(at), coord(a), coord(b));
            // The distances without this dimension's term: a neighbour changes only it.
            let rest_a = here.0 - u32::from(own != ca);
            let rest_b = here.1 - u32::from(own != cb);
            let base = at - own * stride;
            for to in (0..side).filter(|&to| to != own) {
                // Ports of a dimension follow the coordinate, skipping the switch's own.
                let port = first_port + if to < own { to } else { to - 1 };
                let there = (rest_a + u32::from(to != ca), rest_b + u32::from(to != cb));
                f(port as u16, base + to * stride, here, there);
            }
            stride *= side;
            first_port += side - 1;
        }
    }

    /// The network's diameter.
    pub fn diameter(&self) -> u32 {
        self.diameter
    }

    /// The switch graph (of the decision switches).
    pub fn graph(&self) -> &SwitchGraph {
        self.graph.as_ref().expect("routing from coordinates at some switches keeps no graph")
    }

    /// Memory of the distance table in bytes (0 when routing from coordinates).
    pub fn table_bytes(&self) -> usize {
        match &self.source {
            Source::Table(rows) => rows.bytes(),
            _ => 0,
        }
    }

    /// What the routing state is, for `xnet routes`: coordinates, or the table's size.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::Table(rows) => format!(
                "distance table {} ({} per entry, {} destinations x {} switches)",
                human_bytes(rows.bytes()),
                match rows.encoding() {
                    Encoding::Mod3 => "2 bits",
                    Encoding::Exact => "1 byte",
                },
                self.graph().num_switches(),
                rows.columns()
            ),
            _ => "minimal next hops from coordinates, no table".to_string(),
        }
    }

    /// Appends the minimal next hops from `at` towards `dst` (`at != dst`), in port order.
    fn minimal_ports(&self, at: SwitchId, dst: SwitchId, out: &mut Vec<Candidate>) {
        let push = |out: &mut Vec<Candidate>, port: u16| out.push(Candidate { port, vc: 0, penalty: 0 });
        match &self.source {
            Source::HyperX(h) => {
                // Ports grow with the dimension: dimensions in order give port order.
                let mut stride = 1;
                for (k, &side) in h.sides.iter().enumerate() {
                    let (own, to) = ((at / stride) % side, (dst / stride) % side);
                    if own != to {
                        push(out, h.port_to(k, own, to));
                    }
                    stride *= side;
                }
            }
            Source::Torus(t) => {
                // Per dimension the `+` port comes before the `-` port.
                let mut stride = 1;
                for (k, &side) in t.sides.iter().enumerate() {
                    let (own, to) = ((at / stride) % side, (dst / stride) % side);
                    stride *= side;
                    if own == to {
                        continue;
                    }
                    if t.wrap[k] {
                        let forward = (to + side - own) % side;
                        if 2 * forward <= side {
                            push(out, t.port(k, true));
                        }
                        if 2 * (side - forward) <= side {
                            push(out, t.port(k, false));
                        }
                    } else {
                        push(out, t.port(k, to > own));
                    }
                }
            }
            Source::Table(rows) => {
                let graph = self.graph();
                rows.closer_neighbours(at, dst, |i| push(out, graph.neighbour_port(at, i)));
            }
        }
    }
}

/// `bytes` in KiB, MiB or GiB.
fn human_bytes(bytes: usize) -> String {
    let b = bytes as f64;
    match bytes {
        _ if bytes >= 1 << 30 => format!("{:.2} GiB", b / (1u64 << 30) as f64),
        _ if bytes >= 1 << 20 => format!("{:.1} MiB", b / (1u64 << 20) as f64),
        _ => format!("{:.1} KiB", b / 1024.0),
    }
}

/// Hops between coordinates `a` and `b` of dimension `k` of a torus or mesh.
fn torus_distance(t: &TorusShape, k: usize, a: u32, b: u32) -> u32 {
    let d = a.abs_diff(b);
    if t.wrap[k] {
        d.min(t.sides[k] - d)
    } else {
        d
    }
}

impl Routing for Minimal {
    fn vcs_required(&self) -> u8 {
        1
    }

    fn max_hops(&self) -> u32 {
        self.diameter
    }

    fn reads(&self) -> Reads {
        Reads::NOTHING
    }

    fn build_summary(&self) -> Option<String> {
        Some(self.describe())
    }

    /// What the table's decision at `at` will read first (coordinates need nothing).
    #[inline]
    fn prefetch(&self, at: SwitchId, dst: SwitchId) {
        if let Source::Table(rows) = &self.source {
            rows.prefetch(at, dst);
            self.graph().prefetch_ports(at);
        }
    }

    fn candidates(
        &self,
        at: SwitchId,
        dst: SwitchId,
        _packet: &mut Packet,
        _load: &dyn LoadView,
        _rng: &mut Rng,
        out: &mut Vec<Candidate>,
    ) {
        let first = out.len();
        self.minimal_ports(at, dst, out);
        if self.single_path && out.len() > first + 1 {
            let count = (out.len() - first) as u64;
            let pick = (at as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(dst as u64) % count;
            let keep = out[first + pick as usize];
            out.truncate(first);
            out.push(keep);
        }
    }
}

/// `minimal` in the routing registry.
pub const MINIMAL: RoutingEntry = RoutingEntry {
    name: "minimal",
    doc: "all minimal next hops (ECMP; selection random or adaptive), from coordinates on intact HyperX, tori and meshes, else from a parallel-BFS distance table",
    topologies: "any",
    vcs: "ladder: the diameter",
    settings: Settings::NONE,
    default_vc_policy: VcPolicy::Ladder,
    needs_intact_topology: false,
    state_bytes: minimal_state,
    build: |ctx| build_minimal(ctx, false),
};

/// `shortest_path` in the routing registry.
pub const SHORTEST_PATH: RoutingEntry = RoutingEntry {
    name: "shortest_path",
    doc: "one minimal path per switch pair, chosen by a hash",
    build: |ctx| build_minimal(ctx, true),
    ..MINIMAL
};

fn build_minimal(ctx: &BuildContext<'_>, single_path: bool) -> Result<Arc<dyn Routing>, RoutingError> {
    Ok(Arc::new(match ctx.switches {
        Some(s) => Minimal::for_switches(ctx.net, single_path, s)?,
        None => Minimal::new(ctx.net, single_path)?,
    }))
}

/// Coordinates need nothing; a table keeps one row per destination over the decision
/// switches and their neighbours, 2 bits an entry.
fn minimal_state(size: &StateSize) -> u64 {
    if size.coordinates {
        return size.per_switch();
    }
    let columns = (size.own_switches * (size.degree + 1)).min(size.switches);
    size.switches * columns / 4 + size.per_switch()
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::rng::{below, stream, Purpose};
    use topology::faults::fail_random_links;
    use topology::metrics::DistanceTable;
    use topology::{hyperx, rrg, torus};

    use crate::ZeroLoad as Zero;

    fn candidates(r: &Minimal, at: SwitchId, dst: SwitchId) -> Vec<u16> {
        let mut p = Packet::new(0, 0, 0, 1, 0);
        let mut out = vec![Candidate { port: 999, vc: 7, penalty: 1 }];
        r.candidates(at, dst, &mut p, &Zero, &mut stream(1, Purpose::Routing, 0), &mut out);
        assert_eq!(out[0].port, 999, "candidates append");
        out[1..].iter().map(|c| c.port).collect()
    }

    /// The candidates of the former byte-table implementation: every neighbour one hop
    /// closer in the all-pairs table, in port order, then the single-path hash.
    fn reference(net: &Network, dist: &DistanceTable, at: SwitchId, dst: SwitchId, single: bool) -> Vec<u16> {
        let here = dist.get(dst, at);
        let mut v: Vec<u16> =
            net.neighbours(at).filter(|&(_, n)| dist.get(dst, n) + 1 == here).map(|(p, _)| p).collect();
        if single && v.len() > 1 {
            let pick =
                (at as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(dst as u64) % v.len() as u64;
            v = vec![v[pick as usize]];
        }
        v
    }

    fn rrg(switches: u32, degree: u32, seed: u64, faults: u32) -> Network {
        let mut net = rrg::build(
            &rrg::RrgParams {
                switches,
                degree,
                endpoints_per_switch: 1,
                seed: Some(seed),
                terminal_latency: 1,
                link_latency: 1,
            },
            seed,
        )
        .unwrap();
        if faults > 0 {
            fail_random_links(&mut net, faults, seed).unwrap();
            net.failed_links = faults;
        }
        net
    }

    fn grid(sides: &[u32], wrap: &[bool], faults: u32) -> Network {
        let mut net = torus::build(&torus::TorusParams {
            sides: sides.to_vec(),
            wrap: Some(wrap.to_vec()),
            endpoints_per_switch: 2,
            terminal_latency: 1,
            link_latency: 1,
        })
        .unwrap();
        if faults > 0 {
            fail_random_links(&mut net, faults, 3).unwrap();
            net.failed_links = faults;
        }
        net
    }

    fn check_all_pairs(net: &Network, r: &Minimal, single: bool) {
        let dist = DistanceTable::compute(net).unwrap();
        let n = net.num_switches() as SwitchId;
        let mut diameter = 0;
        for dst in 0..n {
            for at in 0..n {
                diameter = diameter.max(dist.get(at, dst) as u32);
                if at != dst {
                    assert_eq!(
                        candidates(r, at, dst),
                        reference(net, &dist, at, dst, single),
                        "{}: {at} -> {dst}",
                        net.name
                    );
                }
            }
        }
        assert_eq!(r.diameter(), diameter, "{}", net.name);
        assert_eq!(r.max_hops(), diameter);
    }

    #[test]
    fn the_two_bit_table_gives_the_byte_tables_candidates() {
        // More than one BFS batch (256 sources), faults, odd and even degrees, parallel
        // links (a torus ring of two) and long distances (a faulty mesh).
        let nets = [
            rrg(40, 3, 1, 0),
            rrg(300, 4, 2, 0),
            rrg(300, 5, 3, 40),
            rrg(520, 3, 4, 30),
            grid(&[17, 16], &[false, false], 25),
            grid(&[2, 5, 3], &[true, true, false], 4),
            // More than 64 neighbours: the rows answer even one or two hops away.
            rrg(90, 66, 5, 0),
        ];
        for net in &nets {
            assert!(matches!(net.shape, Shape::RandomRegular(_)) || net.failed_links > 0);
            for single in [false, true] {
                let r = Minimal::new(net, single).unwrap();
                assert!(r.table_bytes() > 0);
                assert!(r.describe().contains("2 bits per entry"), "{}", r.describe());
                check_all_pairs(net, &r, single);
            }
            let exact = Minimal::with_exact_distances(net).unwrap();
            assert!(exact.describe().contains("1 byte per entry"), "{}", exact.describe());
            check_all_pairs(net, &exact, false);
            let dist = DistanceTable::compute(net).unwrap();
            let r = Minimal::new(net, false).unwrap();
            let n = net.num_switches() as SwitchId;
            for (a, b) in [(0, n - 1), (n / 2, 3), (n - 2, n / 3)] {
                assert_eq!(r.distance(a, b), dist.get(a, b) as u32);
            }
        }
    }

    #[test]
    fn a_table_for_some_switches_holds_their_columns_only_and_agrees() {
        let net = rrg(600, 4, 9, 20);
        let dist = DistanceTable::compute(&net).unwrap();
        let mut rng = stream(5, Purpose::Routing, 1);
        let mut some: Vec<SwitchId> = (0..40).map(|_| below(&mut rng, 600) as SwitchId).collect();
        some.push(599);
        let full = Minimal::new(&net, false).unwrap();
        for single in [false, true] {
            let r = Minimal::for_switches(&net, single, &some).unwrap();
            assert_eq!(r.diameter(), full.diameter());
            assert!(
                r.table_bytes() < full.table_bytes() / 2,
                "{} vs {}",
                r.table_bytes(),
                full.table_bytes()
            );
            for &at in &some {
                for dst in (0..600).filter(|&d| d != at) {
                    assert_eq!(candidates(&r, at, dst), reference(&net, &dist, at, dst, single));
                }
            }
        }
        let r = Minimal::for_switches(&net, false, &some).unwrap();
        let outside = (0..600).find(|s| !some.contains(s)).unwrap();
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| candidates(&r, outside, 0)))
            .unwrap_err();
        assert!(e.downcast_ref::<String>().unwrap().contains("does not hold"));
        // Exact distances for the same columns.
        let rows = DistanceRows::build(&net, Encoding::Exact, Some(&some)).unwrap();
        for &at in &some {
            for dst in 0..600 {
                assert_eq!(rows.distance(at, dst), dist.get(at, dst) as u32);
                for (_, n) in net.neighbours(at) {
                    assert_eq!(rows.distance(n, dst), dist.get(n, dst) as u32);
                }
            }
        }
    }

    #[test]
    fn coordinates_give_the_tables_candidates() {
        let hx = |sides: &[u32]| {
            hyperx::build(&hyperx::HyperXParams {
                sides: sides.to_vec(),
                endpoints_per_switch: 3,
                terminal_latency: 1,
                link_latency: 1,
            })
            .unwrap()
        };
        let nets = [
            hx(&[5]),
            hx(&[4, 3]),
            hx(&[3, 2, 4]),
            grid(&[6], &[true], 0),
            grid(&[7, 4], &[true, true], 0),
            grid(&[2, 3, 4], &[true, true, true], 0),
            grid(&[5, 4], &[false, false], 0),
            grid(&[4, 5, 2], &[true, false, true], 0),
            grid(&[2, 2], &[false, true], 0),
        ];
        for net in &nets {
            for single in [false, true] {
                let r = Minimal::new(net, single).unwrap();
                assert_eq!(r.table_bytes(), 0, "{}: coordinates, no table", net.name);
                assert_eq!(r.build_summary().unwrap(), "minimal next hops from coordinates, no table");
                check_all_pairs(net, &r, single);
            }
            let r = Minimal::new(net, false).unwrap();
            let exact = Minimal::with_exact_distances(net).unwrap();
            let dist = DistanceTable::compute(net).unwrap();
            let n = net.num_switches() as SwitchId;
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(r.distance(a, b), dist.get(a, b) as u32, "{}", net.name);
                    let mut seen = Vec::new();
                    exact.distances_around(a, b, |port, here, there| {
                        assert_eq!(here, dist.get(a, b) as u32);
                        seen.push((port, there));
                    });
                    let want: Vec<(u16, u32)> =
                        net.neighbours(a).map(|(p, m)| (p, dist.get(m, b) as u32)).collect();
                    assert_eq!(seen, want);
                    // Distances to a pair, from coordinates where `r` has them.
                    let c = (a * 7 + b * 3) % n;
                    let mut seen = Vec::new();
                    r.neighbours_with_distances(a, c, b, |port, m, here, there| {
                        assert_eq!(here, (dist.get(c, a) as u32, dist.get(a, b) as u32));
                        seen.push((port, m, there));
                    });
                    let want: Vec<_> = net
                        .neighbours(a)
                        .map(|(p, m)| (p, m, (dist.get(c, m) as u32, dist.get(m, b) as u32)))
                        .collect();
                    assert_eq!(seen, want);
                }
            }
        }
        // A ring longer than the byte table allows routes from coordinates.
        let ring = grid(&[600], &[true], 0);
        let r = Minimal::new(&ring, false).unwrap();
        assert_eq!(r.diameter(), 300);
        assert_eq!(candidates(&r, 0, 300), vec![2, 3]);
        assert_eq!(candidates(&r, 0, 299), vec![2]);
        assert_eq!(candidates(&r, 0, 301), vec![3]);
    }

    #[test]
    fn the_table_is_the_same_on_any_number_of_threads() {
        let net = rrg(700, 5, 11, 60);
        let pools = [1, 2, 3].map(|t| rayon::ThreadPoolBuilder::new().num_threads(t).build().unwrap());
        let tables: Vec<Vec<Vec<u16>>> = pools
            .iter()
            .map(|p| {
                let r = p.install(|| Minimal::new(&net, false).unwrap());
                (0..700)
                    .step_by(7)
                    .flat_map(|d| (0..700).map(move |a| (a, d)))
                    .filter(|(a, d)| a != d)
                    .map(|(a, d)| candidates(&r, a, d))
                    .collect()
            })
            .collect();
        assert_eq!(tables[0], tables[1]);
        assert_eq!(tables[0], tables[2]);
    }
}

//! Shared tables for the table-driven routings (`minimal`, `allpath`, `valiant`,
//! `up_down`, `spda`): the switch graph in CSR form and the diameter check, and the
//! distance rows ([`DistanceRows`]), filled by the multi-source BFS of `topology::metrics`.
//!
//! One file: a routing decision reads both tables together ([`DistanceRows`] lists
//! neighbours in [`SwitchGraph::neighbours`] order), and most of its length is the
//! distance rows' layout, bit-level build and lookup, one hot path kept in one place.

use crate::RoutingError;
use topology::metrics::{
    check_too_long, note_too_long, ones, try_all_pairs, uniform_stride, Adjacency, Bits, DistanceTable,
    BATCH, LANES,
};
use topology::{Network, PortId, PortTarget, SwitchId};

/// Neighbours of every switch (or of some: [`SwitchGraph::for_switches`]) and the switch
/// behind every port.
pub struct SwitchGraph {
    /// Switches in the network.
    switches: usize,
    /// Position of every switch among those held (`u32::MAX`: not held); `None`: every
    /// switch is held at its id.
    index: Option<Vec<u32>>,
    adj_offsets: Vec<u32>,
    adj: Vec<(PortId, SwitchId)>,
    /// The common length of the neighbour lists (0: they differ), so that a lookup finds
    /// its list without reading `adj_offsets` (a cache miss saved on a hot path).
    adj_stride: u32,
    /// `Some(first)` when every held switch's `i`-th neighbour is behind port `first + i`
    /// (network ports contiguous, all connected, in the same place on every switch: a
    /// regular graph without faults), so that [`SwitchGraph::neighbour_port`] is
    /// arithmetic instead of a lookup.
    contiguous_ports: Option<PortId>,
    port_offsets: Vec<u32>,
    /// Switch behind each port, `u32::MAX` for terminal and unconnected ports.
    port_next: Vec<SwitchId>,
}

impl SwitchGraph {
    /// The graph of `net`.
    pub fn new(net: &Network) -> Self {
        Self::build(net, None)
    }

    /// The neighbours of `switches` only (a rank's own switches), for routings that take
    /// decisions there alone: a few bytes per switch for the rest. Asking about another
    /// switch panics.
    pub fn for_switches(net: &Network, switches: &[SwitchId]) -> Self {
        Self::build(net, Some(switches))
    }

    fn build(net: &Network, held: Option<&[SwitchId]>) -> Self {
        let n = net.num_switches();
        let held = held.map(|h| {
            let mut list = h.to_vec();
            list.sort_unstable();
            list.dedup();
            list
        });
        // Every switch held: positions are ids, no map to read.
        let held = held.filter(|list| list.len() < n);
        let (index, list): (Option<Vec<u32>>, Vec<SwitchId>) = match held {
            None => (None, (0..n as SwitchId).collect()),
            Some(list) => {
                let mut index = vec![u32::MAX; n];
                for (k, &s) in list.iter().enumerate() {
                    index[s as usize] = k as u32;
                }
                (Some(index), list)
            }
        };
        let mut adj_offsets = Vec::with_capacity(list.len() + 1);
        let mut port_offsets = Vec::with_capacity(list.len() + 1);
        adj_offsets.push(0u32);
        port_offsets.push(0u32);
        let mut adj = Vec::new();
        let mut port_next = Vec::new();
        for &s in &list {
            adj.extend(net.neighbours(s));
            adj_offsets.push(adj.len() as u32);
            port_next.extend(net.ports(s).iter().map(|p| match p.target {
                PortTarget::Switch { switch, .. } => switch,
                _ => u32::MAX,
            }));
            port_offsets.push(port_next.len() as u32);
        }
        let adj_stride = uniform_stride(&adj_offsets);
        let contiguous_ports = match adj.first() {
            Some(&(first, _)) if adj_stride != 0 => adj
                .chunks(adj_stride as usize)
                .all(|list| list.iter().enumerate().all(|(i, &(p, _))| p as usize == first as usize + i))
                .then_some(first),
            _ => None,
        };
        Self { switches: n, index, adj_offsets, adj, adj_stride, contiguous_ports, port_offsets, port_next }
    }

    /// Number of switches in the network.
    pub fn num_switches(&self) -> usize {
        self.switches
    }

    #[inline]
    fn position(&self, s: SwitchId) -> usize {
        match &self.index {
            None => s as usize,
            Some(index) => {
                let k = index[s as usize];
                assert!(
                    k != u32::MAX,
                    "switch {s}: this graph does not hold its neighbours (only some switches')"
                );
                k as usize
            }
        }
    }

    /// `(port, neighbour)` of every network port of `s`.
    #[inline]
    pub fn neighbours(&self, s: SwitchId) -> &[(PortId, SwitchId)] {
        let k = self.position(s);
        if self.adj_stride != 0 {
            let d = self.adj_stride as usize;
            return &self.adj[k * d..][..d];
        }
        &self.adj[self.adj_offsets[k] as usize..self.adj_offsets[k + 1] as usize]
    }

    /// The port of `s`'s `i`-th neighbour (`neighbours(s)[i].0`), without a memory access
    /// when the network ports are laid out alike on every switch.
    #[inline]
    pub fn neighbour_port(&self, s: SwitchId, i: usize) -> PortId {
        match self.contiguous_ports {
            Some(first) => first + i as PortId,
            None => self.neighbours(s)[i].0,
        }
    }

    /// Asks the memory system for what [`SwitchGraph::neighbour_port`] reads at `s`.
    #[inline]
    pub fn prefetch_ports(&self, s: SwitchId) {
        if self.contiguous_ports.is_none() {
            prefetch_slice(self.neighbours(s));
        }
    }

    /// The switch behind port `port` of `s` (`u32::MAX` if it is not a network port).
    pub fn next_switch(&self, s: SwitchId, port: PortId) -> SwitchId {
        self.port_next[self.port_offsets[self.position(s)] as usize + port as usize]
    }
}

/// The diameter of a connected network; an error naming a disconnected pair otherwise.
pub fn connected_diameter(dist: &DistanceTable) -> Result<u32, RoutingError> {
    let n = dist.num_switches();
    let mut diameter = 0;
    for a in 0..n as SwitchId {
        for b in 0..n as SwitchId {
            let d = dist.get(a, b);
            if d == DistanceTable::UNREACHABLE {
                return Err(RoutingError::disconnected(a, b));
            }
            diameter = diameter.max(d as u32);
        }
    }
    Ok(diameter)
}

/// How [`DistanceRows`] stores a distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// The distance modulo 3, two bits: enough to tell, among a switch's neighbours, those
    /// one hop closer to the destination (two switches joined by a link are at most one hop
    /// apart in distance, so `-1`, `0` and `+1` are told apart modulo 3).
    Mod3,
    /// The exact distance, one byte (at most 254).
    Exact,
}

/// Distances towards every destination switch, one row per destination, holding the
/// entries of a chosen set of switches only (the *columns*).
///
/// # Layout
/// Row `d` holds, for every column switch `s`, the distance from `s` to `d` (links are
/// bidirectional, so this is also the distance from `d` to `s`):
///
/// * [`Encoding::Mod3`]: 2 bits per entry, 32 entries per `u64` word (entry `j` in bits
///   `2 (j % 32) .. 2 (j % 32) + 2` of word `j / 32`); rows are padded to 64 entries (two
///   words). All 65,536 switches of a 65,536-switch network: 65,536 rows of 16 KiB, 1 GiB.
/// * [`Encoding::Exact`]: 1 byte per entry (4 GiB for the same network).
///
/// The columns are the *decision switches* (where routing decisions are asked) and their
/// neighbours: every switch when none are given, or e.g. a rank's own switches. Columns are
/// numbered in switch order; a dense map gives each switch its column (none when all
/// switches are columns). For every decision switch the columns of the switch and of its
/// neighbours, in port order, are listed contiguously, so a routing decision at `s`
/// towards `d` reads one short list and `degree + 1` entries of row `d`: `O(degree)`.
///
/// Built by multi-source bit-parallel BFS from every switch (`topology::metrics`),
/// batches of 256 sources in parallel; each batch fills its 256 rows. The cost does not
/// depend on how many columns are held, the memory does: `rows x columns x bits`.
pub struct DistanceRows {
    encoding: Encoding,
    /// Column of every switch (`u32::MAX`: not held); `None`: every switch, column = id.
    col_of: Option<Vec<u32>>,
    columns: usize,
    /// `u64` words per row (Mod3) or bytes per row (Exact).
    row_len: usize,
    mod3: Vec<u64>,
    exact: Vec<u8>,
    /// Decision index of every switch (`u32::MAX`: none); `None`: every switch, index = id.
    decision_of: Option<Vec<u32>>,
    /// Per decision switch `k`: `local[local_offsets[k]..local_offsets[k + 1]]` is its own
    /// column then its neighbours' (network ports in port order, as
    /// [`SwitchGraph::neighbours`]). Empty when every switch is a column at its id: the
    /// lists are then the switch and its adjacency list.
    local_offsets: Vec<u32>,
    local: Vec<u32>,
    /// The common length of the lists in `local` (0: they differ), so that a decision
    /// finds its list without reading `local_offsets`.
    local_stride: u32,
    /// Largest distance between two switches (over all pairs, not only those held).
    diameter: u32,
    /// Neighbours of every switch, for the decisions one or two hops from the destination
    /// (see [`DistanceRows::closer_neighbours`]).
    adj: Adjacency,
}

impl DistanceRows {
    /// The rows of every destination of `net` over the columns that routing decisions at
    /// `decision_switches` need (all switches when `None`). Fails if `net` is disconnected
    /// (naming the first pair without a path) or, with [`Encoding::Exact`], if a distance
    /// exceeds 254.
    pub fn build(
        net: &Network,
        encoding: Encoding,
        decision_switches: Option<&[SwitchId]>,
    ) -> Result<Self, RoutingError> {
        let n = net.num_switches();
        let Columns { decision_of, col_of, columns, local_offsets, local } =
            Columns::new(net, decision_switches);
        let column = |s: SwitchId| col_of.as_ref().map_or(s, |m| m[s as usize]);
        let adj = Adjacency::new(net);
        let sources: Vec<SwitchId> = (0..n as SwitchId).collect();
        let batches = n.div_ceil(BATCH);
        let (row_len, mod3, exact, stats) = match encoding {
            Encoding::Mod3 => {
                // Per batch, two bit-planes per column (bit `i`: source `i`'s distance
                // modulo 3), turned into the batch's rows by 64 x 64 bit transposes.
                let row_len = 2 * columns.div_ceil(64);
                let mut rows = vec![0u64; table_len(n, row_len, 8, "a Mod3 distance table")?];
                let chunks: Vec<&mut [u64]> = rows.chunks_mut((BATCH * row_len).max(1)).collect();
                let chunks = pad_chunks(chunks, batches);
                let (_, stats) = try_all_pairs(
                    "computing the distance rows",
                    &adj,
                    &sources,
                    chunks,
                    |_, chunk| (chunk, vec![[[0u64; LANES]; 2]; columns]),
                    |(_, planes), level, v, new| {
                        let c = column(v);
                        if c != NONE {
                            let r = level % 3;
                            for (bit, plane) in planes[c as usize].iter_mut().enumerate() {
                                if r >> bit & 1 == 1 {
                                    for w in 0..LANES {
                                        plane[w] |= new[w];
                                    }
                                }
                            }
                        }
                    },
                    |(chunk, planes)| write_mod3_rows(chunk, &planes, row_len),
                )?;
                (row_len, rows, Vec::new(), stats)
            }
            Encoding::Exact => {
                let row_len = columns;
                let mut rows = vec![u8::MAX; table_len(n, row_len, 1, "a distance table")?];
                let chunks: Vec<&mut [u8]> = rows.chunks_mut((BATCH * row_len).max(1)).collect();
                let chunks = pad_chunks(chunks, batches);
                let (too_long, stats) = try_all_pairs(
                    "computing the distance rows",
                    &adj,
                    &sources,
                    chunks,
                    |b, chunk| (b * BATCH, chunk, None),
                    |(first, chunk, too_long), level, v, new| {
                        let c = column(v);
                        if c == NONE {
                            return;
                        }
                        if level >= u8::MAX as u32 {
                            note_too_long(too_long, level, *first, new);
                            return;
                        }
                        for i in ones(new) {
                            chunk[i * row_len + c as usize] = level as u8;
                        }
                    },
                    |(_, _, too_long)| too_long,
                )?;
                check_too_long(too_long)?;
                (row_len, Vec::new(), rows, stats)
            }
        };
        let diameter = stats.connected_diameter()?;
        Ok(DistanceRows {
            encoding,
            col_of,
            columns,
            row_len,
            mod3,
            exact,
            decision_of,
            local_stride: uniform_stride(&local_offsets),
            local_offsets,
            local,
            diameter,
            adj,
        })
    }
}

/// Marks a switch without a decision index or a column.
const NONE: u32 = u32::MAX;

/// Which switches [`DistanceRows`] holds: the decision switches, the columns (them and
/// their neighbours) and each decision switch's list of columns (its fields of the same
/// names).
struct Columns {
    decision_of: Option<Vec<u32>>,
    col_of: Option<Vec<u32>>,
    columns: usize,
    local_offsets: Vec<u32>,
    local: Vec<u32>,
}

impl Columns {
    /// The columns of the rows for decisions at `decision_switches` (all switches when
    /// `None`).
    fn new(net: &Network, decision_switches: Option<&[SwitchId]>) -> Self {
        let n = net.num_switches();
        // Decision switches, then the columns: them and their neighbours.
        let decision_switches = decision_switches.map(|list| {
            let mut decisions: Vec<SwitchId> = list.to_vec();
            decisions.sort_unstable();
            decisions.dedup();
            decisions
        });
        // Decisions everywhere: every switch is a column at its id, and a decision's
        // columns are the switch and its adjacency list, with no map or list to read.
        let decision_switches = decision_switches.filter(|d| d.len() < n);
        let (decision_of, decisions): (Option<Vec<u32>>, Vec<SwitchId>) = match decision_switches {
            None => (None, (0..n as SwitchId).collect()),
            Some(decisions) => {
                let mut map = vec![NONE; n];
                for (k, &s) in decisions.iter().enumerate() {
                    assert!((s as usize) < n, "switch {s} does not exist ({n} switches)");
                    map[s as usize] = k as u32;
                }
                (Some(map), decisions)
            }
        };
        let col_of: Option<Vec<u32>> = decision_of.as_ref().map(|_| {
            let mut held = vec![false; n];
            for &s in &decisions {
                held[s as usize] = true;
                for (_, v) in net.neighbours(s) {
                    held[v as usize] = true;
                }
            }
            let mut next = 0u32;
            held.iter()
                .map(|&h| {
                    if h {
                        next += 1;
                        next - 1
                    } else {
                        NONE
                    }
                })
                .collect()
        });
        let column = |s: SwitchId| col_of.as_ref().map_or(s, |m| m[s as usize]);
        let columns = col_of.as_ref().map_or(n, |m| m.iter().filter(|&&c| c != NONE).count());
        let mut local_offsets = vec![0];
        let mut local = Vec::new();
        if col_of.is_some() {
            for &s in &decisions {
                local.push(column(s));
                local.extend(net.neighbours(s).map(|(_, v)| column(v)));
                local_offsets.push(local.len() as u32);
            }
        }
        Columns { decision_of, col_of, columns, local_offsets, local }
    }
}

/// Prefetches the cache lines of `s`.
#[inline]
fn prefetch_slice<T>(s: &[T]) {
    let per_line = (64 / std::mem::size_of::<T>().max(1)).max(1);
    for line in s.chunks(per_line) {
        base::cache::prefetch(line.as_ptr());
    }
    if let Some(last) = s.last() {
        base::cache::prefetch(last);
    }
}

impl DistanceRows {
    /// How entries are stored.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Switches whose entries are held (columns of every row).
    pub fn columns(&self) -> usize {
        self.columns
    }

    /// Memory of the rows and of the adjacency lists in bytes (the per-decision-switch
    /// column lists and maps aside).
    pub fn bytes(&self) -> usize {
        self.mod3.len() * 8 + self.exact.len() + self.adj.bytes()
    }

    /// Largest distance between two switches of the network.
    pub fn diameter(&self) -> u32 {
        self.diameter
    }

    /// Whether routing decisions at `s` can be read from the table.
    pub fn decides_at(&self, s: SwitchId) -> bool {
        self.decision_of.as_ref().is_none_or(|m| m.get(s as usize).is_some_and(|&k| k != u32::MAX))
    }

    /// The column of `at` and those of its neighbours, in port order.
    #[inline]
    fn columns_around(&self, at: SwitchId) -> (u32, &[u32]) {
        if self.col_of.is_none() {
            return (at, self.adj.of(at));
        }
        let list = self.local(at);
        (list[0], &list[1..])
    }

    /// The column of `s` and of its neighbours, in port order (with a column map only).
    #[inline]
    fn local(&self, at: SwitchId) -> &[u32] {
        let k = match &self.decision_of {
            None => at as usize,
            Some(m) => match m.get(at as usize) {
                Some(&k) if k != u32::MAX => k as usize,
                _ => {
                    panic!("routing decision asked at switch {at}, whose distances this table does not hold")
                }
            },
        };
        if self.local_stride != 0 {
            let d = self.local_stride as usize;
            return &self.local[k * d..][..d];
        }
        &self.local[self.local_offsets[k] as usize..self.local_offsets[k + 1] as usize]
    }

    /// The column of switch `s`, if its entries are held.
    #[inline]
    fn column(&self, s: SwitchId) -> Option<u32> {
        match &self.col_of {
            None => Some(s),
            Some(m) => m.get(s as usize).copied().filter(|&c| c != u32::MAX),
        }
    }

    #[inline]
    fn mod3_entry(&self, dst: SwitchId, col: u32) -> u64 {
        let w = self.mod3[dst as usize * self.row_len + col as usize / 32];
        (w >> (2 * (col % 32))) & 3
    }

    #[inline]
    fn exact_entry(&self, dst: SwitchId, col: u32) -> u32 {
        self.exact[dst as usize * self.row_len + col as usize] as u32
    }

    /// Asks the memory system for what [`DistanceRows::closer_neighbours`] reads first for
    /// (`at`, `dst`): the adjacency lists of both, and the entry of `at` in the row of `dst`.
    /// The neighbours' entries (one cache line each, at random in a row of 16 KiB on a
    /// 65,536-switch RRG) are not prefetched: over half of the decisions (those one or two
    /// hops from `dst`) do not read them, and prefetching them anyway saturated the core's
    /// outstanding misses (RRG 1M, 1,000 cycles on 2 threads: 82.7 s with, 73.4 s without).
    #[inline]
    pub fn prefetch(&self, at: SwitchId, dst: SwitchId) {
        prefetch_slice(self.adj.of(dst));
        prefetch_slice(self.adj.of(at));
        if self.col_of.is_some() && self.decides_at(at) {
            prefetch_slice(self.local(at));
        }
        if let Some(own) = self.column(at) {
            self.prefetch_columns(dst, &[own]);
        }
    }

    /// Prefetches the entries of `columns` in the row of `dst`.
    #[inline]
    fn prefetch_columns(&self, dst: SwitchId, local: &[u32]) {
        match self.encoding {
            Encoding::Mod3 => {
                let row = &self.mod3[dst as usize * self.row_len..][..self.row_len];
                for &c in local {
                    base::cache::prefetch(&row[c as usize / 32]);
                }
            }
            Encoding::Exact => {
                let row = &self.exact[dst as usize * self.row_len..][..self.row_len];
                for &c in local {
                    base::cache::prefetch(&row[c as usize]);
                }
            }
        }
    }

    /// Calls `f(i)` for every neighbour of the decision switch `at` one hop closer to `dst`
    /// (`i` indexes [`SwitchGraph::neighbours`] of `at`), in port order. One or two hops
    /// from `dst` the adjacency lists of `at` and `dst` answer (a few cache lines);
    /// further, `degree + 1` entries of row `dst` are read (one cache line each).
    #[inline]
    pub fn closer_neighbours(&self, at: SwitchId, dst: SwitchId, mut f: impl FnMut(usize)) {
        if self.within_two_hops(at, dst, &mut f) {
            return;
        }
        let (own, around) = self.columns_around(at);
        match self.encoding {
            Encoding::Mod3 => {
                self.prefetch_columns(dst, around);
                // A neighbour's distance differs by at most one: `-1` is `+2` modulo 3.
                let closer = (self.mod3_entry(dst, own) + 2) % 3;
                for (i, &c) in around.iter().enumerate() {
                    if self.mod3_entry(dst, c) == closer {
                        f(i);
                    }
                }
            }
            Encoding::Exact => {
                let here = self.exact_entry(dst, own);
                for (i, &c) in around.iter().enumerate() {
                    if self.exact_entry(dst, c) + 1 == here {
                        f(i);
                    }
                }
            }
        }
    }

    /// [`DistanceRows::closer_neighbours`] when `dst` is one hop from `at` (the closer
    /// neighbours are the links to `dst`) or two (the neighbours adjacent to `dst`); false,
    /// calling nothing, when it is further or `at` has more than 64 neighbours.
    #[inline]
    fn within_two_hops(&self, at: SwitchId, dst: SwitchId, f: &mut impl FnMut(usize)) -> bool {
        let mine = self.adj.of(at);
        if mine.len() > 64 || at == dst {
            return false;
        }
        let mut hits = 0u64;
        for (i, &n) in mine.iter().enumerate() {
            hits |= ((n == dst) as u64) << i;
        }
        if hits == 0 {
            let theirs = self.adj.of(dst);
            // Past 64 x 64 compares the row entries cost less.
            if mine.len() * theirs.len() > 4096 {
                return false;
            }
            for (i, &n) in mine.iter().enumerate() {
                // Branch-free so that it vectorises: a degree-32 switch costs 32 x 32 compares.
                let adjacent = theirs.iter().fold(false, |any, &m| any | (m == n));
                hits |= (adjacent as u64) << i;
            }
        }
        let found = hits != 0;
        while hits != 0 {
            f(hits.trailing_zeros() as usize);
            hits &= hits - 1;
        }
        found
    }

    /// With [`Encoding::Exact`]: `f(i, here, there)` for every neighbour `i`
    /// ([`SwitchGraph::neighbours`] order) of the decision switch `at`, `here` being the
    /// distance from `at` to `dst` and `there` the neighbour's.
    pub fn neighbour_distances(&self, at: SwitchId, dst: SwitchId, mut f: impl FnMut(usize, u32, u32)) {
        assert_eq!(self.encoding, Encoding::Exact, "absolute distances need Encoding::Exact");
        let (own, around) = self.columns_around(at);
        let here = self.exact_entry(dst, own);
        for (i, &c) in around.iter().enumerate() {
            f(i, here, self.exact_entry(dst, c));
        }
    }

    /// With [`Encoding::Exact`]: the distance from `s` (a column) to `dst`.
    pub fn distance(&self, s: SwitchId, dst: SwitchId) -> u32 {
        assert_eq!(self.encoding, Encoding::Exact, "absolute distances need Encoding::Exact");
        let c =
            self.column(s).unwrap_or_else(|| panic!("the distance table holds no entries for switch {s}"));
        self.exact_entry(dst, c)
    }
}

/// Bytes of a table of `rows` rows of `row_len` units of `unit` bytes, or an error naming
/// `what` when that does not fit in memory addressing.
fn table_len(rows: usize, row_len: usize, unit: usize, what: &str) -> Result<usize, RoutingError> {
    rows.checked_mul(row_len)
        .filter(|l| l.checked_mul(unit).is_some_and(|b| b <= isize::MAX as usize))
        .ok_or_else(|| {
            RoutingError::algorithm(format!(
                "{what} for {rows} switches does not fit in memory: this routing cannot run on a network this large"
            ))
        })
}

/// `chunks` (one per batch; fewer when the rows are empty) padded with empty slices.
fn pad_chunks<T>(mut chunks: Vec<&mut [T]>, batches: usize) -> Vec<&mut [T]> {
    while chunks.len() < batches {
        chunks.push(&mut []);
    }
    chunks.truncate(batches);
    chunks
}

/// Writes the rows of one batch (`chunk`: its rows of `row_len` words) from the bit-planes
/// of its columns (`planes[c][p]`, bit `i` of lane `i / 64`: bit `p` of the distance modulo
/// 3 from column `c` to the batch's source `i`).
fn write_mod3_rows(chunk: &mut [u64], planes: &[[Bits; 2]], row_len: usize) {
    if row_len == 0 {
        return;
    }
    let rows = chunk.len() / row_len;
    let mut a = [[0u64; 64]; 2];
    for block in 0..planes.len().div_ceil(64) {
        let cols = &planes[block * 64..((block + 1) * 64).min(planes.len())];
        for lane in 0..LANES {
            if lane * 64 >= rows {
                break;
            }
            for (p, a) in a.iter_mut().enumerate() {
                for (j, x) in a.iter_mut().enumerate() {
                    *x = cols.get(j).map_or(0, |c| c[p][lane]);
                }
                transpose64(a);
            }
            for i in 0..64.min(rows - lane * 64) {
                let row = &mut chunk[(lane * 64 + i) * row_len..][..row_len];
                let (lo, hi) = (a[0][i], a[1][i]);
                row[2 * block] = spread(lo as u32) | spread(hi as u32) << 1;
                row[2 * block + 1] = spread((lo >> 32) as u32) | spread((hi >> 32) as u32) << 1;
            }
        }
    }
}

/// Transposes a 64 x 64 bit matrix: afterwards bit `j` of `a[i]` is what bit `i` of `a[j]`
/// was (recursive block swaps, 6 rounds of 32 word operations).
fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        let mut k = 0;
        while k < 64 {
            let t = ((a[k] >> j) ^ a[k + j]) & m;
            a[k] ^= t << j;
            a[k + j] ^= t;
            k = (k + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

/// Bit `k` of `x` moved to bit `2k`.
fn spread(x: u32) -> u64 {
    let mut x = x as u64;
    x = (x | x << 16) & 0x0000_FFFF_0000_FFFF;
    x = (x | x << 8) & 0x00FF_00FF_00FF_00FF;
    x = (x | x << 4) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | x << 2) & 0x3333_3333_3333_3333;
    (x | x << 1) & 0x5555_5555_5555_5555
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transpose_and_spread() {
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut a = [0u64; 64];
        for x in a.iter_mut() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            *x = rng;
        }
        let mut t = a;
        transpose64(&mut t);
        for (i, row) in t.iter().enumerate() {
            for (j, col) in a.iter().enumerate() {
                assert_eq!(row >> j & 1, col >> i & 1, "({i}, {j})");
            }
        }
        let x = 0xdead_beefu32;
        let s = spread(x);
        for k in 0..32 {
            assert_eq!(s >> (2 * k) & 3, (x >> k & 1) as u64);
        }
    }
}

//! The exploration of the routing states towards one destination, level by level.
//!
//! A level is the set of states with the same number of hops taken (every move adds one),
//! kept in an open-addressing hash table that also records, per state, the input ports it
//! was entered through. When a level is expanded, every way into its states is known: the
//! candidates of a state are computed once and each of its arrivals depends on each of
//! them. The first-candidate path of every source flows through the levels as a count per
//! state, which gives the path metrics without walking every path.

use super::cdg::CdgBits;
use super::{Ctx, Probe, Probed, Unreachable};
use crate::packet::{Packet, RouteState};
use crate::{Candidate, Hop};
use base::rng::{stream, Purpose, Rng};
use std::cell::RefCell;
use topology::{EndpointId, PortId, PortTarget, SwitchId};

/// A field left out of a state (not read by the routing or the VC policy).
const MERGED32: u32 = u32::MAX;
const MERGED16: u16 = u16::MAX;
const EMPTY: u32 = u32::MAX;

/// A routing state: the switch, the packet's hops, VC and route state, and its source and
/// input port unless they are merged ([`MERGED32`], [`MERGED16`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Key {
    src: SwitchId,
    at: SwitchId,
    intermediate: u32,
    in_port: PortId,
    hops: u16,
    vc: u8,
    phase: u8,
    global_hops: u8,
}

impl Key {
    fn route(&self) -> RouteState {
        RouteState { phase: self.phase, global_hops: self.global_hops, intermediate: self.intermediate }
    }

    fn hash(&self) -> u64 {
        let a = self.at as u64 | (self.src as u64) << 32;
        let b = self.intermediate as u64 | (self.in_port as u64) << 32 | (self.vc as u64) << 48;
        let c = self.phase as u64 | (self.global_hops as u64) << 8 | (self.hops as u64) << 16;
        let h = (a ^ b.rotate_left(21) ^ c.rotate_left(42)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^ h >> 31
    }
}

/// One state of a level: 32 bytes, two per cache line.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Entry {
    key: Key,
    /// First-candidate paths (one per source) passing through this state.
    count: u32,
    /// Input ports it was entered through: bit `p` for port `p < 64` (further ports in
    /// `Level::extra_first` or `Level::extra_more`).
    arrivals: u64,
}

/// Where a state of a level is.
#[derive(Clone, Copy)]
enum At {
    /// The first state at a switch: `Level::first[switch]`.
    First(u32),
    /// A further one: `Level::more[index]`.
    More(u32),
}

/// The states of one level. The first state reached at a switch sits in a table indexed
/// by the switch (one memory access to find it; with merged sources most switches have
/// one state per level); further ones go to a hash table and a list per switch. The
/// level is expanded in switch order, so the network's and the CDG's data are read in
/// address order.
struct Level {
    first: Vec<Entry>,
    /// Per switch, its first state in `more` ([`EMPTY`]: none).
    first_more: Vec<u32>,
    /// Switches with states, one bit each.
    touched: Vec<u64>,
    /// Open addressing (linear probing) over `more`: index or [`EMPTY`].
    slots: Vec<u32>,
    more: Vec<Entry>,
    /// Per state of `more`: its slot and the next state at the same switch.
    more_links: Vec<(u32, u32)>,
    /// Arrival words beyond the first: `words - 1` per switch, and per state of `more`.
    extra_first: Vec<u64>,
    extra_more: Vec<u64>,
    /// Arrival words per state.
    words: usize,
    states: usize,
    /// Per state (`first` by switch, `more` by index): the paths through it when every
    /// state's flow is spread evenly over its candidates (see `Found::spread`).
    share_first: Vec<f64>,
    share_more: Vec<f64>,
}

const VACANT: Entry = Entry {
    key: Key {
        src: MERGED32,
        at: EMPTY,
        intermediate: 0,
        in_port: MERGED16,
        hops: 0,
        vc: 0,
        phase: 0,
        global_hops: 0,
    },
    count: 0,
    arrivals: 0,
};

impl Level {
    fn new(switches: usize, words: usize) -> Self {
        Level {
            first: vec![VACANT; switches],
            first_more: vec![EMPTY; switches],
            touched: vec![0; switches.div_ceil(64)],
            slots: vec![EMPTY; 1024],
            more: Vec::new(),
            more_links: Vec::new(),
            extra_first: vec![0; switches * (words - 1)],
            extra_more: Vec::new(),
            words,
            states: 0,
            share_first: vec![0.0; switches],
            share_more: Vec::new(),
        }
    }

    fn clear(&mut self) {
        let extra = self.words - 1;
        for w in 0..self.touched.len() {
            let mut x = self.touched[w];
            while x != 0 {
                let at = w * 64 + x.trailing_zeros() as usize;
                self.first[at].key.at = EMPTY;
                self.first_more[at] = EMPTY;
                self.extra_first[at * extra..(at + 1) * extra].fill(0);
                x &= x - 1;
            }
            self.touched[w] = 0;
        }
        for &(slot, _) in &self.more_links {
            self.slots[slot as usize] = EMPTY;
        }
        self.more.clear();
        self.more_links.clear();
        self.extra_more.clear();
        self.share_more.clear();
        self.states = 0;
    }

    fn share(&mut self, at: At) -> &mut f64 {
        match at {
            At::First(s) => &mut self.share_first[s as usize],
            At::More(i) => &mut self.share_more[i as usize],
        }
    }

    fn entry(&mut self, at: At) -> &mut Entry {
        match at {
            At::First(s) => &mut self.first[s as usize],
            At::More(i) => &mut self.more[i as usize],
        }
    }

    /// Where state `key` is, inserted if new.
    #[inline]
    fn insert(&mut self, key: Key) -> At {
        let at = key.at as usize;
        let head = &self.first[at];
        if head.key.at == EMPTY {
            self.first[at] = Entry { key, ..VACANT };
            self.share_first[at] = 0.0;
            self.touched[at / 64] |= 1 << (at % 64);
            self.states += 1;
            return At::First(key.at);
        }
        if head.key == key {
            return At::First(key.at);
        }
        self.insert_more(key)
    }

    fn insert_more(&mut self, key: Key) -> At {
        if 2 * (self.more.len() + 1) > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut slot = (key.hash() >> 32) as usize & mask;
        loop {
            match self.slots[slot] {
                EMPTY => break,
                i if self.more[i as usize].key == key => return At::More(i),
                _ => slot = (slot + 1) & mask,
            }
        }
        let i = self.more.len() as u32;
        self.slots[slot] = i;
        let head = &mut self.first_more[key.at as usize];
        self.more_links.push((slot as u32, *head));
        *head = i;
        self.more.push(Entry { key, ..VACANT });
        self.share_more.push(0.0);
        self.extra_more.resize(self.extra_more.len() + self.words - 1, 0);
        self.states += 1;
        At::More(i)
    }

    fn grow(&mut self) {
        let size = (self.slots.len() * 2).max(1024);
        self.slots = vec![EMPTY; size];
        let mask = size - 1;
        for (i, e) in self.more.iter().enumerate() {
            let mut slot = (e.key.hash() >> 32) as usize & mask;
            while self.slots[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            self.slots[slot] = i as u32;
            self.more_links[i].0 = slot as u32;
        }
    }

    /// Records that state `at` is entered through port `port`.
    #[inline]
    fn arrive(&mut self, at: At, port: PortId) {
        let port = port as usize;
        if port < 64 {
            self.entry(at).arrivals |= 1 << port;
            return;
        }
        let extra = self.words - 1;
        let w = port / 64 - 1;
        let word = match at {
            At::First(s) => &mut self.extra_first[s as usize * extra + w],
            At::More(i) => &mut self.extra_more[i as usize * extra + w],
        };
        *word |= 1 << (port % 64);
    }

    /// Replaces `out` with the ports state `at` was entered through, ascending.
    fn arrivals(&self, at: At, out: &mut Vec<PortId>) {
        out.clear();
        let extra = self.words - 1;
        let (first, rest) = match at {
            At::First(s) => {
                (self.first[s as usize].arrivals, &self.extra_first[s as usize * extra..][..extra])
            }
            At::More(i) => (self.more[i as usize].arrivals, &self.extra_more[i as usize * extra..][..extra]),
        };
        for (w, &x) in std::iter::once(&first).chain(rest).enumerate() {
            let mut x = x;
            while x != 0 {
                out.push((w * 64) as PortId + x.trailing_zeros() as PortId);
                x &= x - 1;
            }
        }
    }

    /// The states, in switch order.
    fn order(&self, out: &mut Vec<At>) {
        out.clear();
        for (w, &bits) in self.touched.iter().enumerate() {
            let mut x = bits;
            while x != 0 {
                let at = w * 64 + x.trailing_zeros() as usize;
                x &= x - 1;
                out.push(At::First(at as u32));
                let mut i = self.first_more[at];
                while i != EMPTY {
                    out.push(At::More(i));
                    i = self.more_links[i as usize].1;
                }
            }
        }
    }
}

/// What the exploration towards one destination found.
#[derive(Default)]
pub(super) struct Found {
    /// States explored.
    pub(super) states: u64,
    /// Longest route reaching the destination, in hops.
    pub(super) longest: u32,
    /// Some route fails (the failures are listed only when sources are kept).
    pub(super) failed: bool,
    pub(super) failures: Vec<Unreachable>,
    /// A first-candidate path reaches the destination only past the loop bound (the
    /// per-source walk reports it).
    pub(super) first_path_failed: bool,
    /// First-candidate paths: `(global port index, paths)` per link crossing.
    pub(super) links: Vec<(u32, u32)>,
    /// The same paths spread evenly over every state's candidates (the expected link load
    /// of a uniformly random selection at zero load): `(global port index, paths)`, one
    /// entry per link crossed, summed in the exploration's order.
    pub(super) spread: Vec<(u32, f64)>,
    /// Switches visited summed over the first-candidate paths, paths, longest one.
    pub(super) visited: u64,
    pub(super) pairs: u64,
    pub(super) longest_first: u32,
}

/// Per-thread scratch for exploring destinations one after another.
pub(super) struct Explorer<'a> {
    ctx: &'a Ctx<'a>,
    cdg: &'a CdgBits,
    cur: Level,
    next: Level,
    order: Vec<At>,
    arrivals: Vec<PortId>,
    cands: Vec<Candidate>,
    probes: Vec<Option<Probed>>,
    /// The reported bytes the decisions under the probes read.
    probe_reads: RefCell<Vec<Probed>>,
    inits: Vec<RouteState>,
    cols: Vec<u64>,
    /// Passed to `init` of routings that draw nothing from it.
    unused: Rng,
    /// The destination switch and endpoint the packets of the current exploration go to,
    /// and whether its states keep the source and the input port.
    dst: SwitchId,
    dst_endpoint: EndpointId,
    keep_src: bool,
    keep_in: bool,
    /// The exploration's spread paths per link (global port index), and the links with
    /// any, gathered into [`Found::spread`] at its end.
    spread: Vec<f64>,
    spread_links: Vec<u32>,
}

impl<'a> Explorer<'a> {
    pub(super) fn new(ctx: &'a Ctx<'a>, cdg: &'a CdgBits) -> Self {
        let n = ctx.net.num_switches();
        // Arrival bits per state: one per port of the largest switch.
        let words = ctx.net.max_radix().div_ceil(64).max(1);
        Explorer {
            ctx,
            cdg,
            cur: Level::new(n, words),
            next: Level::new(n, words),
            order: Vec::new(),
            arrivals: Vec::new(),
            cands: Vec::new(),
            probes: Vec::new(),
            probe_reads: RefCell::new(Vec::new()),
            inits: Vec::new(),
            cols: Vec::new(),
            unused: stream(0, Purpose::Routing, 0),
            dst: 0,
            dst_endpoint: 0,
            keep_src: false,
            keep_in: false,
            spread: vec![0.0; ctx.net.ports.len()],
            spread_links: Vec::new(),
        }
    }

    /// Explores every state of packets towards endpoint `e` on switch `d` from every
    /// source, setting the dependencies in the CDG. `keep_src`, `keep_in`: whether states
    /// keep the packet's source and input port (else states differing only in them are
    /// one).
    pub(super) fn explore(&mut self, d: SwitchId, e: EndpointId, keep_src: bool, keep_in: bool) -> Found {
        let ctx = self.ctx;
        self.dst = d;
        self.dst_endpoint = e;
        self.keep_src = keep_src;
        self.keep_in = keep_in;
        let mut found = Found::default();
        let mut rng: Rng = stream(ctx.seed, Purpose::Routing, d as u64 | 1 << 40);
        // Sources: the states at hop 0 are all distinct (one switch each), expanded as
        // they are made.
        self.next.clear();
        self.arrivals.clear();
        for (k, &s) in ctx.terminals.iter().enumerate() {
            if s == d {
                continue;
            }
            // The ports of a source two ahead: their lines arrive while this one is
            // expanded (about 10 % faster on the 65,536-switch RRG).
            if let Some(&ahead) = ctx.terminals.get(k + 2) {
                let ports = ctx.net.ports(ahead);
                for port in ports.iter().step_by(4) {
                    base::cache::prefetch(port);
                }
            }
            let in_port = ctx.endpoint[s as usize].expect("endpoint").1;
            let base = ctx.default_init(s, d, &mut self.unused);
            ctx.init_states(s, d, base, &mut self.inits);
            for k in 0..self.inits.len() {
                let r = self.inits[k];
                let key = Key {
                    src: if keep_src { s } else { MERGED32 },
                    at: s,
                    intermediate: r.intermediate,
                    in_port: if keep_in { in_port } else { MERGED16 },
                    hops: 0,
                    vc: 0,
                    phase: r.phase,
                    global_hops: r.global_hops,
                };
                let count = u32::from(r == base);
                self.expand(key, count, f64::from(count), &mut rng, &mut found);
            }
        }
        std::mem::swap(&mut self.cur, &mut self.next);
        while self.cur.states > 0 {
            self.next.clear();
            let mut order = std::mem::take(&mut self.order);
            self.cur.order(&mut order);
            for &i in &order {
                let e = *self.cur.entry(i);
                let share = *self.cur.share(i);
                self.cur.arrivals(i, &mut self.arrivals);
                self.expand(e.key, e.count, share, &mut rng, &mut found);
            }
            self.order = order;
            std::mem::swap(&mut self.cur, &mut self.next);
        }
        let spread = &mut self.spread;
        found.spread =
            self.spread_links.drain(..).map(|l| (l, std::mem::take(&mut spread[l as usize]))).collect();
        found
    }

    fn fail(&self, found: &mut Found, key: &Key, d: SwitchId, reason: impl FnOnce() -> String) {
        found.failed = true;
        if key.src != MERGED32 {
            found.failures.push(Unreachable { src: key.src, dst: d, at: key.at, reason: reason() });
        }
    }

    /// Expands state `key` (entered through `self.arrivals`, `count` first-candidate
    /// paths and `share` spread paths through it; see [`Found::spread`]) into the next
    /// level: its candidates under zero load (and, for a load-reading decision at the
    /// source, with each proposed port loaded), each followed by [`Explorer::follow`],
    /// then its dependencies into the CDG.
    fn expand(&mut self, key: Key, count: u32, share: f64, rng: &mut Rng, found: &mut Found) {
        let ctx = self.ctx;
        let net = ctx.net;
        let d = self.dst;
        let at = key.at;
        found.states += 1;
        let first_port = self.cdg.first_port(at);
        self.cols.clear();
        self.cols.resize(self.cdg.channel_words(at), 0);
        let in_port = if key.in_port != MERGED16 {
            key.in_port
        } else if key.hops == 0 {
            ctx.endpoint[at as usize].expect("endpoint").1
        } else {
            // Not read by the VC policy: any port it was entered through.
            self.arrivals[0]
        };
        let ports = net.ports(at);
        let hop = Hop { ports, at, in_port, dst: d, vcs: ctx.vcs };
        let src = if key.src != MERGED32 { key.src } else { d };
        let packet = ctx.packet(src, self.dst_endpoint, key.hops, key.vc, key.route());
        self.probes.clear();
        self.probes.push(None);
        self.probe_reads.borrow_mut().clear();
        let mut k = 0;
        while k < self.probes.len() {
            let load = Probe { loaded: self.probes[k], reads: &self.probe_reads };
            let first_probe = k == 0;
            k += 1;
            let mut p = packet;
            if !ctx.routes.try_next_hops(&hop, &mut p, &load, rng, &mut self.cands) {
                self.fail(found, &key, d, || {
                    format!("no candidate at switch {at} (hop {}, VC {})", packet.hops, packet.vc)
                });
                continue;
            }
            if ctx.routes.escape.is_some()
                && !ctx.routes.is_escape(key.vc)
                && !self.cands.iter().any(|c| ctx.routes.is_escape(c.vc))
            {
                self.fail(found, &key, d, || format!("no escape candidate at switch {at}"));
            }
            if key.hops <= ctx.reads.load_hops && load.loaded.is_none() && ctx.reads.load {
                // Decisions at the source (and, for PAR, the next switch) may depend on
                // load: ask again with each proposed port loaded, and with each reported
                // byte the decision read full (UGAL-G, piggybacking).
                let reported = self.probe_reads.borrow();
                let loaded = self.cands.iter().map(|c| Probed::Port(c.port)).chain(reported.iter().copied());
                for probe in loaded {
                    if !self.probes.contains(&Some(probe)) {
                        self.probes.push(Some(probe));
                    }
                }
            }
            // The spread paths split evenly over the zero-load candidates.
            let part = if first_probe && share > 0.0 { share / self.cands.len() as f64 } else { 0.0 };
            self.follow(&key, count, first_probe, part, &p, found);
        }
        self.cdg.add(at, &self.cols, key.vc, self.arrivals.iter().map(|&p| (p - first_port) as usize));
    }

    /// Follows the candidates in `self.cands` of state `key` (`p`: the packet as
    /// `next_hops` left it, `first_probe`: asked under zero load): each one's dependency
    /// in `self.cols`, its `part` of the spread paths and, for the first candidate, the
    /// state's `count` first-candidate paths; a route that reaches the destination ends,
    /// others enter their next state in the next level.
    fn follow(&mut self, key: &Key, count: u32, first_probe: bool, part: f64, p: &Packet, found: &mut Found) {
        let ctx = self.ctx;
        let net = ctx.net;
        let (d, keep_src, keep_in) = (self.dst, self.keep_src, self.keep_in);
        let at = key.at;
        let ports = net.ports(at);
        for ci in 0..self.cands.len() {
            let c = self.cands[ci];
            let first_path = first_probe && ci == 0 && count > 0;
            let Some(port) = ports.get(c.port as usize) else {
                self.fail(found, key, d, || {
                    format!("candidate port {} of switch {at} does not exist", c.port)
                });
                continue;
            };
            let PortTarget::Switch { switch: next, port: next_in } = port.target else {
                self.fail(found, key, d, || {
                    format!("candidate port {} of switch {at} leads to no switch", c.port)
                });
                continue;
            };
            if c.vc >= ctx.vcs {
                let vcs = ctx.vcs;
                self.fail(found, key, d, || {
                    format!("candidate VC {} at switch {at} is beyond the {vcs} VCs (hop {})", c.vc, key.hops)
                });
                continue;
            }
            self.cdg.mark(&mut self.cols, at, c.port, c.vc);
            let link = net.port_offsets[at as usize] + c.port as u32;
            let mut q = *p;
            ctx.routes.on_forward(at, c, &mut q);
            q.hops += 1;
            q.vc = c.vc;
            if part > 0.0 {
                if self.spread[link as usize] == 0.0 {
                    self.spread_links.push(link);
                }
                self.spread[link as usize] += part;
            }
            if next == d {
                found.longest = found.longest.max(q.hops as u32);
                if first_path {
                    if q.hops as u32 >= ctx.bound {
                        found.first_path_failed = true;
                    } else {
                        found.links.push((link, count));
                        found.visited += count as u64 * (q.hops as u64 + 1);
                        found.pairs += count as u64;
                        found.longest_first = found.longest_first.max(q.hops as u32);
                    }
                }
                continue;
            }
            if q.hops as u32 >= ctx.bound {
                let bound = ctx.bound;
                self.fail(found, key, d, || format!("route longer than {bound} hops (a loop?)"));
                continue;
            }
            let next_key = Key {
                src: if keep_src { key.src } else { MERGED32 },
                at: next,
                intermediate: q.route.intermediate,
                in_port: if keep_in { next_in } else { MERGED16 },
                hops: q.hops,
                vc: q.vc,
                phase: q.route.phase,
                global_hops: q.route.global_hops,
            };
            let j = self.next.insert(next_key);
            self.next.arrive(j, next_in);
            *self.next.share(j) += part;
            if first_path {
                self.next.entry(j).count += count;
                found.links.push((link, count));
            }
        }
    }
}

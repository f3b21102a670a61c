//! The collective algorithms: every rank's part pairs up, each ordered pair exchanges the
//! bytes the algorithm's definition says, and the longest chain of messages is its number
//! of rounds; the selection rule at its thresholds.

use std::collections::{BTreeMap, HashMap, VecDeque};

use xnet_schedule::collectives::*;
use xnet_schedule::{Op, Schedule, ScheduleBuilder, Source, TagMatch};

const SIZES: [usize; 10] = [1, 2, 3, 4, 5, 6, 7, 8, 12, 16];
const TAG: u32 = 9;

/// The communicators a collective is checked on: the world of each size, and ranks
/// 1, 3, 5, 7, 9 of a schedule of 10 (returned with the schedule's size).
fn comms() -> Vec<(Comm, u32)> {
    let mut v: Vec<(Comm, u32)> = SIZES.iter().map(|&p| (Comm::world(3, p as u32), p as u32)).collect();
    v.push((Comm { id: 4, ranks: vec![1, 3, 5, 7, 9] }, 10));
    v
}

/// Every rank emits its part, after a calc of its own.
fn build(c: &Collective, comm: &Comm, n: u32) -> Schedule {
    let mut b = ScheduleBuilder::new();
    for r in 0..n {
        b.add_rank();
        let before = b.calc(5);
        if let Some(me) = comm.ranks.iter().position(|&x| x == r) {
            let end = emit(&mut b, c, comm, me, TAG, Some(before));
            assert_eq!(end.is_none(), comm.size() == 1, "rank {r}: an end op iff there is work");
            if let Some(end) = end {
                assert_eq!(end, b.ops_in_rank() - 1, "the end op is the last op");
            }
        }
    }
    b.build()
}

/// Bytes per ordered pair of comm ranks, from the sends.
fn pair_bytes(s: &Schedule, comm: &Comm) -> BTreeMap<(usize, usize), u64> {
    let pos = |r: u32| comm.ranks.iter().position(|&x| x == r).expect("a member");
    let mut m = BTreeMap::new();
    for r in 0..s.num_ranks() {
        for op in s.ops(r) {
            if let Op::Send { to, bytes, tag, comm: id } = op {
                assert_eq!((tag, id), (TAG, comm.id));
                *m.entry((pos(r), pos(to))).or_insert(0) += bytes;
            }
        }
    }
    m
}

/// The longest chain of messages: the most messages a path over ops touches, where a path
/// follows dependencies and each send to its matching receive (matched in order per
/// (comm, src, dst, tag)); a send or receive touches its message, a send followed by its
/// receive touches one. So a rank's sends one after the other, or receives one after the
/// other, are as many rounds.
fn rounds(s: &Schedule) -> u64 {
    let n = s.num_ranks();
    let base: Vec<usize> = (0..=n)
        .scan(0, |acc, r| {
            let b = *acc;
            if r < n {
                *acc += s.ops_in_rank(r) as usize;
            }
            Some(b)
        })
        .collect();
    let total = base[n as usize];
    let mut edges: Vec<Vec<(usize, i64)>> = vec![Vec::new(); total];
    let mut sends: HashMap<(u32, u32, u32, u32), VecDeque<usize>> = HashMap::new();
    for r in 0..n {
        for (i, op) in s.ops(r).enumerate() {
            let g = base[r as usize] + i;
            for &d in s.after_end(r, i as u32).iter().chain(s.after_start(r, i as u32)) {
                edges[g].push((base[r as usize] + d as usize, 0));
            }
            if let Op::Send { to, tag, comm, .. } = op {
                sends.entry((comm, r, to, tag)).or_default().push_back(g);
            }
        }
    }
    for r in 0..n {
        for (i, op) in s.ops(r).enumerate() {
            if let Op::Recv { from: Source::Rank(f), tag: TagMatch::Tag(t), comm, .. } = op {
                let g = sends.get_mut(&(comm, f, r, t)).and_then(|q| q.pop_front()).expect("a matching send");
                edges[g].push((base[r as usize] + i, -1));
            }
        }
    }
    let mut indeg = vec![0; total];
    for e in edges.iter().flatten() {
        indeg[e.0] += 1;
    }
    let mut queue: VecDeque<usize> = (0..total).filter(|&g| indeg[g] == 0).collect();
    let mut weight = vec![0i64; total];
    for r in 0..n {
        for (i, op) in s.ops(r).enumerate() {
            weight[base[r as usize] + i] = i64::from(!matches!(op, Op::Calc { .. }));
        }
    }
    let mut best = weight.clone();
    let mut seen = 0;
    while let Some(g) = queue.pop_front() {
        seen += 1;
        for &(h, w) in &edges[g] {
            best[h] = best[h].max(best[g] + w + weight[h]);
            indeg[h] -= 1;
            if indeg[h] == 0 {
                queue.push_back(h);
            }
        }
    }
    assert_eq!(seen, total, "the ops with the messages form no cycle");
    best.into_iter().max().unwrap_or(0) as u64
}

fn log2_ceil(p: usize) -> u64 {
    u64::from(p.next_power_of_two().trailing_zeros())
}

fn log2_floor(p: usize) -> u64 {
    u64::from(usize::BITS - 1 - p.leading_zeros())
}

fn folded(p: usize) -> u64 {
    2 * u64::from(!p.is_power_of_two())
}

/// Checks `c` on every communicator: clean, pairs as `expect(p)` says (when given), and
/// `rounds(p)` rounds.
fn check(
    name: &str,
    make: impl Fn(usize) -> Collective,
    expect: impl Fn(usize) -> Option<BTreeMap<(usize, usize), u64>>,
    rounds_of: impl Fn(usize) -> u64,
) {
    for (comm, n) in comms() {
        let p = comm.size();
        let c = make(p);
        let s = build(&c, &comm, n);
        assert!(s.validate().is_empty(), "{name} p={p}: {:?}", s.validate());
        assert!(s.unmatched().is_empty(), "{name} p={p}: {:?}", s.unmatched());
        for r in 0..n {
            assert_chained(&s, r);
        }
        if let Some(want) = expect(p) {
            let want: BTreeMap<_, _> = want.into_iter().filter(|&((a, b), _)| a != b).collect();
            assert_eq!(pair_bytes(&s, &comm), want, "{name} p={p}: bytes per pair");
        }
        assert_eq!(rounds(&s), rounds_of(p), "{name} p={p}: rounds");
    }
}

/// Every op of `rank` after the first (the `calc` before the collective) starts after the
/// first ends, and the last (the collective's end) ends after every op.
fn assert_chained(s: &Schedule, rank: u32) {
    let n = s.ops_in_rank(rank) as usize;
    let mut fwd = vec![Vec::new(); n];
    let mut back = vec![Vec::new(); n];
    for (a, next) in fwd.iter_mut().enumerate() {
        for &b in s.after_end(rank, a as u32) {
            next.push(b as usize);
            back[b as usize].push(a);
        }
    }
    let reach = |from: usize, adj: &[Vec<usize>]| -> bool {
        let mut seen = vec![false; n];
        let mut stack = vec![from];
        seen[from] = true;
        while let Some(a) = stack.pop() {
            for &b in &adj[a] {
                if !seen[b] {
                    seen[b] = true;
                    stack.push(b);
                }
            }
        }
        seen.into_iter().all(|x| x)
    };
    if n > 1 {
        assert!(reach(0, &fwd), "rank {rank}: every op after `after`");
        assert!(reach(n - 1, &back), "rank {rank}: the end op after every op");
    }
}

/// Adds `bytes` to pair `(a, b)`.
fn add(m: &mut BTreeMap<(usize, usize), u64>, a: usize, b: usize, bytes: u64) {
    *m.entry((a, b)).or_insert(0) += bytes;
}

/// The edges of a binomial tree rooted at `root`: (child, parent, subtree size).
fn binomial_edges(p: usize, root: usize) -> Vec<(usize, usize, u64)> {
    (1..p)
        .map(|rel| {
            let low = rel & rel.wrapping_neg();
            ((rel + root) % p, ((rel & (rel - 1)) + root) % p, low.min(p - rel) as u64)
        })
        .collect()
}

fn tree(
    p: usize,
    root: usize,
    down: bool,
    bytes: impl Fn(u64) -> u64,
) -> Option<BTreeMap<(usize, usize), u64>> {
    let mut m = BTreeMap::new();
    for (child, parent, n) in binomial_edges(p, root) {
        let (a, b) = if down { (parent, child) } else { (child, parent) };
        add(&mut m, a, b, bytes(n));
    }
    Some(m)
}

fn star(p: usize, root: usize, down: bool, bytes: u64) -> Option<BTreeMap<(usize, usize), u64>> {
    let mut m = BTreeMap::new();
    for r in (0..p).filter(|&r| r != root) {
        let (a, b) = if down { (root, r) } else { (r, root) };
        add(&mut m, a, b, bytes);
    }
    Some(m)
}

fn linear_rounds(p: usize) -> u64 {
    u64::from(p > 1)
}

#[test]
fn bcast_binomial() {
    for root in [0, 2] {
        let make = |p: usize| Collective::Bcast { root: root % p, bytes: 1000, algo: BcastAlgo::Binomial };
        check("bcast binomial", make, |p| tree(p, root % p, true, |_| 1000), log2_ceil);
    }
}

#[test]
fn bcast_scatter_allgather() {
    for (algo, ring) in
        [(BcastAlgo::ScatterRingAllgather, true), (BcastAlgo::ScatterRecursiveDoublingAllgather, false)]
    {
        for (root, bytes) in [(0, 1000u64), (1, 1003), (3, 2)] {
            let make = |p: usize| Collective::Bcast { root: root % p, bytes, algo };
            let rounds = |p: usize| {
                let ag = if ring { p as u64 - 1 } else { log2_floor(p) + folded(p) };
                log2_ceil(p) + ag
            };
            check("bcast scatter+allgather", make, |_| None, rounds);
            // Every non-root rank receives the whole buffer in all (at least).
            for (comm, n) in comms() {
                let p = comm.size();
                let s = build(&make(p), &comm, n);
                let m = pair_bytes(&s, &comm);
                for r in (0..p).filter(|&r| r != root % p) {
                    let got: u64 = m.iter().filter(|((_, b), _)| *b == r).map(|(_, v)| v).sum();
                    assert!(got >= bytes, "p={p} rank {r} gets {got} of {bytes}");
                    if ring {
                        // The ring brings every chunk but its own; the scatter brought
                        // its subtree's chunks (rel..rel + lowbit(rel)).
                        let rel = (r + p - root % p) % p;
                        let chunk = |i: usize| bytes / p as u64 + u64::from((i as u64) < bytes % p as u64);
                        let low = rel & rel.wrapping_neg();
                        let subtree: u64 = (rel..(rel + low).min(p)).map(chunk).sum();
                        assert_eq!(got, bytes - chunk(rel) + subtree, "p={p} rank {r}");
                    }
                }
            }
        }
    }
}

#[test]
fn reduce_binomial() {
    for root in [0, 3] {
        let make = |p: usize| Collective::Reduce { root: root % p, bytes: 64, algo: ReduceAlgo::Binomial };
        check("reduce binomial", make, |p| tree(p, root % p, false, |_| 64), log2_ceil);
    }
}

#[test]
fn reduce_rabenseifner() {
    for root in [0, 1, 2, 5] {
        for bytes in [1024u64, 1001, 3] {
            let make = |p: usize| Collective::Reduce {
                root: root % p,
                bytes,
                algo: ReduceAlgo::ReduceScatterGather,
            };
            let expect = |p: usize| {
                // Powers of two with root 0 and even chunks: pair (r, r ^ m) carries
                // bytes / (2m) in the reduce-scatter.
                if !p.is_power_of_two() || root % p != 0 || bytes % p as u64 != 0 {
                    return None;
                }
                let mut m = BTreeMap::new();
                let mut mask = 1;
                while mask < p {
                    for r in 0..p {
                        add(&mut m, r, r ^ mask, bytes / (2 * mask as u64));
                    }
                    mask *= 2;
                }
                // The gather reverses the halving: distances p / 2 down to 1; rank r
                // sends at the distance of its highest bit h (the first where it
                // differs from the root, 0) all it holds, p / (2h) chunks, to r - h.
                for r in 1..p {
                    let h = 1 << log2_floor(r);
                    add(&mut m, r, r - h, (p / (2 * h)) as u64 * bytes / p as u64);
                }
                Some(m)
            };
            // The fold, the halving, the gather; a root folded out (odd, among the first
            // 2 rem) first receives virtual rank 0's chunk: one more.
            let rounds = |p: usize| {
                let rem = p - (1 << log2_floor(p));
                let r = root % p;
                2 * log2_floor(p) + folded(p) / 2 + u64::from(r < 2 * rem && r % 2 == 1)
            };
            check("reduce rabenseifner", make, expect, rounds);
        }
    }
}

#[test]
fn gather_scatter() {
    for root in [0, 4] {
        let g =
            |p: usize| Collective::Gather { root: root % p, bytes_per_rank: 10, algo: TreeAlgo::Binomial };
        check("gather binomial", g, |p| tree(p, root % p, false, |n| 10 * n), log2_ceil);
        let s =
            |p: usize| Collective::Scatter { root: root % p, bytes_per_rank: 10, algo: TreeAlgo::Binomial };
        check("scatter binomial", s, |p| tree(p, root % p, true, |n| 10 * n), log2_ceil);
        let g = |p: usize| Collective::Gather { root: root % p, bytes_per_rank: 10, algo: TreeAlgo::Linear };
        check("gather linear", g, |p| star(p, root % p, false, 10), linear_rounds);
        let s = |p: usize| Collective::Scatter { root: root % p, bytes_per_rank: 10, algo: TreeAlgo::Linear };
        check("scatter linear", s, |p| star(p, root % p, true, 10), linear_rounds);
    }
}

/// The survivors of the fold of `p` (odd ones of the first pairs), by virtual rank.
fn survivors(p: usize) -> Vec<usize> {
    let pof2 = 1 << log2_floor(p);
    let rem = p - pof2;
    (0..pof2).map(|v| if v < rem { 2 * v + 1 } else { v + rem }).collect()
}

#[test]
fn allreduce() {
    for bytes in [1200u64, 1000, 7] {
        let ring = |_| Collective::Allreduce { bytes, algo: AllreduceAlgo::Ring };
        let ring_expect = |p: usize| {
            let chunk = |i: usize| bytes / p as u64 + u64::from(((i % p) as u64) < bytes % p as u64);
            let mut m = BTreeMap::new();
            for r in 0..p {
                // Every chunk but r + 1's in the reduce-scatter, but r + 2's in the allgather.
                add(&mut m, r, (r + 1) % p, 2 * bytes - chunk(r + 1) - chunk(r + 2));
            }
            Some(m)
        };
        check("allreduce ring", ring, ring_expect, |p| 2 * (p as u64 - 1));
        let rd = |_| Collective::Allreduce { bytes, algo: AllreduceAlgo::RecursiveDoubling };
        let rd_expect = |p: usize| {
            let mut m = BTreeMap::new();
            let sv = survivors(p);
            for r in 0..2 * (p - sv.len()) {
                add(&mut m, r, r ^ 1, bytes);
            }
            let mut mask = 1;
            while mask < sv.len() {
                for v in 0..sv.len() {
                    add(&mut m, sv[v], sv[v ^ mask], bytes);
                }
                mask *= 2;
            }
            Some(m)
        };
        check("allreduce recursive doubling", rd, rd_expect, |p| log2_floor(p) + folded(p));
        let rsa = |_| Collective::Allreduce { bytes, algo: AllreduceAlgo::ReduceScatterAllgather };
        let rsa_expect = |p: usize| {
            // Powers of two, even chunks: pair (r, r ^ m) carries bytes / (2m) each way
            // in each half.
            if !p.is_power_of_two() || bytes % p as u64 != 0 {
                return None;
            }
            let mut m = BTreeMap::new();
            let mut mask = 1;
            while mask < p {
                for r in 0..p {
                    add(&mut m, r, r ^ mask, bytes / mask as u64);
                }
                mask *= 2;
            }
            Some(m)
        };
        check("allreduce rabenseifner", rsa, rsa_expect, |p| 2 * log2_floor(p) + folded(p));
        let rb = |_| Collective::Allreduce { bytes, algo: AllreduceAlgo::ReduceBcast };
        let rb_expect = |p: usize| {
            let mut m = BTreeMap::new();
            for (child, parent, _) in binomial_edges(p, 0) {
                add(&mut m, child, parent, bytes);
                add(&mut m, parent, child, bytes);
            }
            Some(m)
        };
        check("allreduce reduce+bcast", rb, rb_expect, |p| 2 * log2_ceil(p));
    }
}

#[test]
fn allgather() {
    let b = 100u64;
    let ring = |_| Collective::Allgather { bytes_per_rank: b, algo: AllgatherAlgo::Ring };
    let ring_expect = |p: usize| Some((0..p).map(|r| ((r, (r + 1) % p), (p as u64 - 1) * b)).collect());
    check("allgather ring", ring, ring_expect, |p| p as u64 - 1);
    let bruck = |_| Collective::Allgather { bytes_per_rank: b, algo: AllgatherAlgo::Bruck };
    let bruck_expect = |p: usize| {
        let mut m = BTreeMap::new();
        let mut d = 1;
        while d < p {
            for r in 0..p {
                add(&mut m, r, (r + p - d) % p, d.min(p - d) as u64 * b);
            }
            d *= 2;
        }
        Some(m)
    };
    check("allgather bruck", bruck, bruck_expect, log2_ceil);
    let rd = |_| Collective::Allgather { bytes_per_rank: b, algo: AllgatherAlgo::RecursiveDoubling };
    let rd_expect = |p: usize| {
        if !p.is_power_of_two() {
            return None;
        }
        let mut m = BTreeMap::new();
        let mut mask = 1;
        while mask < p {
            for r in 0..p {
                add(&mut m, r, r ^ mask, mask as u64 * b);
            }
            mask *= 2;
        }
        Some(m)
    };
    check("allgather recursive doubling", rd, rd_expect, |p| log2_floor(p) + folded(p));
    // Whatever the size, every rank receives each other rank's block exactly once.
    for (comm, n) in comms() {
        let p = comm.size();
        let m = pair_bytes(&build(&rd(p), &comm, n), &comm);
        for r in 0..p {
            let got: u64 = m.iter().filter(|((_, to), _)| *to == r).map(|(_, v)| v).sum();
            assert_eq!(got, (p as u64 - 1) * b, "p={p} rank {r}");
        }
    }
}

fn all_pairs(p: usize, b: u64) -> Option<BTreeMap<(usize, usize), u64>> {
    Some((0..p).flat_map(|a| (0..p).map(move |c| ((a, c), b))).collect())
}

#[test]
fn alltoall() {
    let b = 48u64;
    let pw = |_| Collective::Alltoall { bytes_per_pair: b, algo: AlltoallAlgo::Pairwise };
    check("alltoall pairwise", pw, |p| all_pairs(p, b), |p| p as u64 - 1);
    let lin = |_| Collective::Alltoall { bytes_per_pair: b, algo: AlltoallAlgo::Linear };
    check("alltoall linear", lin, |p| all_pairs(p, b), linear_rounds);
    let bruck = |_| Collective::Alltoall { bytes_per_pair: b, algo: AlltoallAlgo::Bruck };
    let bruck_expect = |p: usize| {
        let mut m = BTreeMap::new();
        let mut d = 1;
        while d < p {
            let blocks = (0..p).filter(|i| i & d != 0).count() as u64;
            for r in 0..p {
                add(&mut m, r, (r + d) % p, blocks * b);
            }
            d *= 2;
        }
        Some(m)
    };
    check("alltoall bruck", bruck, bruck_expect, log2_ceil);
}

#[test]
fn reduce_scatter() {
    let b = 32u64;
    let pw = |_| Collective::ReduceScatter { bytes_per_rank: b, algo: ReduceScatterAlgo::Pairwise };
    check("reduce-scatter pairwise", pw, |p| all_pairs(p, b), |p| p as u64 - 1);
    let ring = |_| Collective::ReduceScatter { bytes_per_rank: b, algo: ReduceScatterAlgo::Ring };
    let ring_expect = |p: usize| Some((0..p).map(|r| ((r, (r + 1) % p), (p as u64 - 1) * b)).collect());
    check("reduce-scatter ring", ring, ring_expect, |p| p as u64 - 1);
    let rh = |_| Collective::ReduceScatter { bytes_per_rank: b, algo: ReduceScatterAlgo::RecursiveHalving };
    let rh_expect = |p: usize| {
        // Virtual rank v stands for the ranks its survivor folded in; in the step of
        // distance m it sends the blocks of the m virtual ranks on the far side.
        let sv = survivors(p);
        let rem = p - sv.len();
        let width = |v: usize| if v < rem { 2 * b } else { b };
        let mut m = BTreeMap::new();
        for r in 0..2 * rem {
            add(&mut m, r, r ^ 1, if r % 2 == 0 { p as u64 * b } else { b });
        }
        let mut mask = sv.len() / 2;
        while mask > 0 {
            for v in 0..sv.len() {
                let w = v ^ mask;
                let far = (w & !(mask - 1))..(w & !(mask - 1)) + mask;
                add(&mut m, sv[v], sv[w], far.map(width).sum());
            }
            mask /= 2;
        }
        Some(m)
    };
    check("reduce-scatter recursive halving", rh, rh_expect, |p| log2_floor(p) + folded(p));
}

#[test]
fn barrier() {
    let c = |_| Collective::Barrier { algo: BarrierAlgo::Dissemination };
    let expect = |p: usize| {
        let mut m = BTreeMap::new();
        let mut d = 1;
        while d < p {
            for r in 0..p {
                add(&mut m, r, (r + d) % p, 0);
            }
            d *= 2;
        }
        Some(m)
    };
    check("barrier", c, expect, log2_ceil);
}

#[test]
fn select_at_thresholds() {
    use Algorithm as A;
    let t = &THRESHOLDS;
    // Bcast: binomial under 8 ranks or up to 12 288 bytes; then scatter + recursive
    // doubling up to 524 288 bytes on powers of two; else scatter + ring.
    assert_eq!(select(Kind::Bcast, 10_000_000, 7), A::Bcast(BcastAlgo::Binomial));
    assert_eq!(select(Kind::Bcast, 12_288, 8), A::Bcast(BcastAlgo::Binomial));
    assert_eq!(select(Kind::Bcast, 12_289, 8), A::Bcast(BcastAlgo::ScatterRecursiveDoublingAllgather));
    assert_eq!(select(Kind::Bcast, 524_288, 16), A::Bcast(BcastAlgo::ScatterRecursiveDoublingAllgather));
    assert_eq!(select(Kind::Bcast, 524_289, 16), A::Bcast(BcastAlgo::ScatterRingAllgather));
    assert_eq!(select(Kind::Bcast, 12_288, 12), A::Bcast(BcastAlgo::Binomial));
    assert_eq!(select(Kind::Bcast, 12_289, 12), A::Bcast(BcastAlgo::ScatterRingAllgather));
    // Allreduce: recursive doubling up to 8 bytes or under the largest power of two <= p.
    assert_eq!(select(Kind::Allreduce, 8, 4), A::Allreduce(AllreduceAlgo::RecursiveDoubling));
    assert_eq!(select(Kind::Allreduce, 9, 4), A::Allreduce(AllreduceAlgo::ReduceScatterAllgather));
    assert_eq!(select(Kind::Allreduce, 511, 1000), A::Allreduce(AllreduceAlgo::RecursiveDoubling));
    assert_eq!(select(Kind::Allreduce, 512, 1000), A::Allreduce(AllreduceAlgo::ReduceScatterAllgather));
    // Reduce: binomial up to 2048 bytes or under the largest power of two <= p.
    assert_eq!(select(Kind::Reduce, 2048, 4), A::Reduce(ReduceAlgo::Binomial));
    assert_eq!(select(Kind::Reduce, 2049, 4), A::Reduce(ReduceAlgo::ReduceScatterGather));
    assert_eq!(select(Kind::Reduce, 4095, 5000), A::Reduce(ReduceAlgo::Binomial));
    assert_eq!(select(Kind::Reduce, 4096, 5000), A::Reduce(ReduceAlgo::ReduceScatterGather));
    // Allgather: by the total p * bytes; recursive doubling under 524 288 on powers of
    // two, Bruck's under 81 920 otherwise, else ring.
    assert_eq!(select(Kind::Allgather, 524_287, 1), A::Allgather(AllgatherAlgo::RecursiveDoubling));
    assert_eq!(select(Kind::Allgather, 524_288, 1), A::Allgather(AllgatherAlgo::Ring));
    assert_eq!(select(Kind::Allgather, 65_535, 8), A::Allgather(AllgatherAlgo::RecursiveDoubling));
    assert_eq!(select(Kind::Allgather, 65_536, 8), A::Allgather(AllgatherAlgo::Ring));
    assert_eq!(select(Kind::Allgather, 16_383, 5), A::Allgather(AllgatherAlgo::Bruck));
    assert_eq!(select(Kind::Allgather, 16_384, 5), A::Allgather(AllgatherAlgo::Ring));
    // Alltoall: from 8 ranks Bruck's up to 256 bytes a pair; linear up to 32 768; pairwise.
    assert_eq!(select(Kind::Alltoall, 256, 8), A::Alltoall(AlltoallAlgo::Bruck));
    assert_eq!(select(Kind::Alltoall, 257, 8), A::Alltoall(AlltoallAlgo::Linear));
    assert_eq!(select(Kind::Alltoall, 256, 7), A::Alltoall(AlltoallAlgo::Linear));
    assert_eq!(select(Kind::Alltoall, 32_768, 7), A::Alltoall(AlltoallAlgo::Linear));
    assert_eq!(select(Kind::Alltoall, 32_769, 7), A::Alltoall(AlltoallAlgo::Pairwise));
    assert_eq!(select(Kind::Alltoall, 32_768, 64), A::Alltoall(AlltoallAlgo::Linear));
    assert_eq!(select(Kind::Alltoall, 32_769, 64), A::Alltoall(AlltoallAlgo::Pairwise));
    // Reduce-scatter: recursive halving under a total of 524 288, else pairwise.
    assert_eq!(
        select(Kind::ReduceScatter, 524_287, 1),
        A::ReduceScatter(ReduceScatterAlgo::RecursiveHalving)
    );
    assert_eq!(select(Kind::ReduceScatter, 524_288, 1), A::ReduceScatter(ReduceScatterAlgo::Pairwise));
    assert_eq!(select(Kind::ReduceScatter, 65_535, 8), A::ReduceScatter(ReduceScatterAlgo::RecursiveHalving));
    assert_eq!(select(Kind::ReduceScatter, 65_536, 8), A::ReduceScatter(ReduceScatterAlgo::Pairwise));
    // The rest have one choice.
    assert_eq!(select(Kind::Barrier, 0, 100), A::Barrier(BarrierAlgo::Dissemination));
    assert_eq!(select(Kind::Gather, 1 << 30, 100), A::Tree(TreeAlgo::Binomial));
    assert_eq!(select(Kind::Scatter, 1, 3), A::Tree(TreeAlgo::Binomial));
    // The table holds MPICH's numbers.
    assert_eq!((t.bcast_min_ranks, t.bcast_short, t.bcast_medium), (8, 12_288, 524_288));
    assert_eq!((t.allreduce_short, t.reduce_short), (8, 2048));
    assert_eq!(
        (t.allgather_pof2_total, t.allgather_total, t.reduce_scatter_total),
        (524_288, 81_920, 524_288)
    );
    assert_eq!((t.alltoall_min_ranks, t.alltoall_short, t.alltoall_medium), (8, 256, 32_768));
}

#[test]
fn whole_and_chaining() {
    // `whole` equals every rank emitting in turn; a second collective after the first
    // starts after its end.
    let c = Collective::Allreduce { bytes: 100, algo: AllreduceAlgo::Ring };
    let comm = Comm { id: 1, ranks: vec![2, 0, 1] };
    let s = whole(&c, &comm, 4, 5);
    assert_eq!(s.ops_in_rank(3), 0);
    assert!(s.validate().is_empty() && s.unmatched().is_empty());
    let mut b = ScheduleBuilder::new();
    for r in 0..3 {
        b.add_rank();
        let me = comm.ranks.iter().position(|&x| x == r).unwrap();
        let first = emit(&mut b, &c, &comm, me, 5, None);
        let bar = Collective::Barrier { algo: BarrierAlgo::Dissemination };
        emit(&mut b, &bar, &comm, me, 6, first).unwrap();
    }
    let s = b.build();
    assert!(s.validate().is_empty() && s.unmatched().is_empty());
    assert_eq!(rounds(&s), 2 * 2 + 2, "the barrier's rounds follow the allreduce's");
}

//! Allgather: ring, recursive doubling (with the fold of non-powers of two) and Bruck's.
//! The ring and recursive doubling take per-rank block sizes, so that the broadcasts
//! built from a scatter reuse them; ranks are relative to `root` (comm rank
//! `(rel + root) % p` holds block `rel`).

use super::round::{Ctx, Fold};

/// Comm rank of relative rank `rel`.
fn abs(rel: usize, root: usize, p: usize) -> usize {
    (rel + root) % p
}

/// Ring (MPICH `allgather_intra_ring`): `p - 1` steps; in step `s` relative rank `r` sends
/// block `(r - s) mod p` to `r + 1` and receives block `(r - s - 1) mod p` from `r - 1`.
pub(super) fn ring(c: &mut Ctx<'_>, blocks: &[u64], root: usize) {
    let p = c.p;
    let rel = (c.me + p - root) % p;
    let (right, left) = (abs(rel + 1, root, p), abs(rel + p - 1, root, p));
    for s in 0..p.saturating_sub(1) {
        let out = blocks[(rel + p - s) % p];
        let inc = blocks[(rel + 2 * p - s - 1) % p];
        c.sendrecv(right, out, left, inc);
    }
}

/// Recursive doubling: in step `k` virtual rank `v` exchanges all it holds (the blocks of
/// the `2^k`-aligned group of virtual ranks containing it) with `v ^ 2^k`. Sizes that are
/// not powers of two fold in first (of the first `2 * rem` ranks the even one hands its
/// block to the odd one) and out last (the odd one sends back all but the even one's
/// block): `log2(pof2) + 2` rounds. (MPICH's allgather handles them by sending the
/// missing halves down a tree instead; its default selects this algorithm for powers of
/// two only.)
pub(super) fn recursive_doubling(c: &mut Ctx<'_>, blocks: &[u64], root: usize) {
    let p = c.p;
    let rel = (c.me + p - root) % p;
    let f = Fold::new(p, true);
    let total: u64 = blocks.iter().sum();
    let Some(v) = f.virt(rel) else {
        let partner = abs(f.pair(rel).expect("a folded rank has a partner"), root, p);
        c.send(partner, blocks[rel]);
        c.recv(partner, total - blocks[rel]);
        return;
    };
    if let Some(folded) = f.pair(rel) {
        c.recv(abs(folded, root, p), blocks[folded]);
    }
    let held =
        |lo: usize, n: usize| -> u64 { (lo..lo + n).flat_map(|w| f.members(w)).map(|r| blocks[r]).sum() };
    let mut mask = 1;
    while mask < f.pof2 {
        let w = v ^ mask;
        let (mine, theirs) = (held(v & !(mask - 1), mask), held(w & !(mask - 1), mask));
        let peer = abs(f.real(w), root, p);
        c.sendrecv(peer, mine, peer, theirs);
        mask <<= 1;
    }
    if let Some(folded) = f.pair(rel) {
        c.send(abs(folded, root, p), total - blocks[folded]);
    }
}

/// Bruck's allgather (Bruck et al., IEEE TPDS 1997; MPICH `allgather_intra_brucks`): in
/// step `k` (distance `d = 2^k`) rank `r` sends the `min(d, p - d)` blocks it has to
/// `r - d` and receives as many from `r + d`; `ceil(log2 p)` rounds. The final rotation
/// into rank order is local: no message.
pub(super) fn bruck(c: &mut Ctx<'_>, block: u64) {
    let p = c.p;
    let mut d = 1;
    while d < p {
        let n = d.min(p - d) as u64;
        c.sendrecv((c.me + p - d) % p, n * block, (c.me + d) % p, n * block);
        d <<= 1;
    }
}

//! Reduce-scatter with equal blocks (`MPI_Reduce_scatter_block`): recursive halving (MPICH
//! `reduce_scatter_intra_recursive_halving`), pairwise (MPICH
//! `reduce_scatter_intra_pairwise`) and a ring.

use super::round::{Ctx, Fold};

/// Recursive halving: the fold (of the first `2 * rem` ranks the even one sends all
/// `p * block` bytes to the odd one, which then stands for both), then distances
/// `pof2 / 2` down to 1: virtual rank `v` sends the half of its range of virtual ranks
/// away from it and receives its own half; then the odd one sends the even one's block
/// back. `log2(pof2)` rounds, plus 2 when `p` is not a power of two.
pub(super) fn recursive_halving(c: &mut Ctx<'_>, block: u64) {
    let (p, me) = (c.p, c.me);
    let f = Fold::new(p, true);
    let Some(v) = f.virt(me) else {
        let partner = f.pair(me).expect("a folded rank has a partner");
        c.send(partner, p as u64 * block);
        c.recv(partner, block);
        return;
    };
    if let Some(folded) = f.pair(me) {
        c.recv(folded, p as u64 * block);
    }
    let size = |lo: usize, hi: usize| -> u64 { (lo..hi).map(|w| f.members(w).count() as u64 * block).sum() };
    let (mut lo, mut hi) = (0, f.pof2);
    let mut mask = f.pof2 / 2;
    while mask > 0 {
        let mid = lo + mask;
        let (keep, give) = if v < mid { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
        let peer = f.real(v ^ mask);
        c.sendrecv(peer, size(give.0, give.1), peer, size(keep.0, keep.1));
        (lo, hi) = keep;
        mask /= 2;
    }
    if let Some(folded) = f.pair(me) {
        c.send(folded, block);
    }
}

/// Pairwise: `p - 1` steps; in step `i` rank `r` sends block `r + i` to `r + i` and
/// receives its own block's contribution from `r - i` (mod `p`).
pub(super) fn pairwise(c: &mut Ctx<'_>, block: u64) {
    let (p, me) = (c.p, c.me);
    for i in 1..p {
        c.sendrecv((me + i) % p, block, (me + p - i) % p, block);
    }
}

/// Ring: `p - 1` steps; in step `s` rank `r` sends the partial sum of block
/// `(r - s - 1) mod p` to `r + 1` and receives that of block `(r - s - 2) mod p` from
/// `r - 1`, so that it ends with its own block reduced.
pub(super) fn ring(c: &mut Ctx<'_>, block: u64) {
    let (p, me) = (c.p, c.me);
    for _ in 1..p {
        c.sendrecv((me + 1) % p, block, (me + p - 1) % p, block);
    }
}

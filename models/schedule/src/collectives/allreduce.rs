//! Allreduce: ring (MPICH `allreduce_intra_ring`), recursive doubling (MPICH
//! `allreduce_intra_recursive_doubling`), Rabenseifner's reduce-scatter + allgather (MPICH
//! `allreduce_intra_reduce_scatter_allgather`) and a binomial reduce followed by a binomial
//! broadcast. The fold of non-powers of two: of the first `2 * rem` ranks the even one
//! sends all to the odd one, which takes part and sends the result back at the end.

use super::bcast;
use super::reduce::{self, halving, pof2_chunks};
use super::round::{chunk, Ctx, Fold};

/// Ring: `bytes` cut into `p` chunks; `p - 1` reduce-scatter steps (in step `s` rank `r`
/// sends chunk `(r - s) mod p` right and receives chunk `(r - s - 1) mod p` from the
/// left), then `p - 1` allgather steps (sends chunk `(r + 1 - s) mod p`, receives chunk
/// `(r - s) mod p`): `2 (p - 1)` rounds.
pub(super) fn ring(c: &mut Ctx<'_>, bytes: u64) {
    let (p, me) = (c.p, c.me);
    let (right, left) = ((me + 1) % p, (me + p - 1) % p);
    let at = |i: usize| chunk(bytes, p, i % p);
    for s in 0..p.saturating_sub(1) {
        c.sendrecv(right, at(me + p - s), left, at(me + 2 * p - s - 1));
    }
    for s in 0..p.saturating_sub(1) {
        c.sendrecv(right, at(me + p + 1 - s), left, at(me + p - s));
    }
}

/// Recursive doubling: the fold, then `log2(pof2)` exchanges of all `bytes` with
/// `v ^ 2^k`, then the unfold: `log2(pof2)`, plus 2 when `p` is not a power of two.
pub(super) fn recursive_doubling(c: &mut Ctx<'_>, bytes: u64) {
    let f = Fold::new(c.p, true);
    let Some(v) = fold_in(c, &f, bytes) else { return };
    let mut mask = 1;
    while mask < f.pof2 {
        let peer = f.real(v ^ mask);
        c.sendrecv(peer, bytes, peer, bytes);
        mask <<= 1;
    }
    fold_out(c, &f, bytes);
}

/// The fold's first step for this rank: a folded rank sends all and waits for the result
/// (returns `None`); a survivor of a pair receives its partner's data.
fn fold_in(c: &mut Ctx<'_>, f: &Fold, bytes: u64) -> Option<usize> {
    let me = c.me;
    match f.virt(me) {
        None => {
            let partner = f.pair(me).expect("a folded rank has a partner");
            c.send(partner, bytes);
            c.recv(partner, bytes);
            None
        }
        Some(v) => {
            if let Some(folded) = f.pair(me) {
                c.recv(folded, bytes);
            }
            Some(v)
        }
    }
}

/// The fold's last step: a survivor of a pair sends the result to its partner.
fn fold_out(c: &mut Ctx<'_>, f: &Fold, bytes: u64) {
    if let Some(folded) = f.pair(c.me) {
        c.send(folded, bytes);
    }
}

/// Rabenseifner: the fold, recursive halving of `pof2` chunks (see [`halving`]), recursive
/// doubling of the reduced chunks (distances `pof2 / 2` down to 1, each side sending all
/// it holds), the unfold: `2 log2(pof2)`, plus 2 when `p` is not a power of two.
pub(super) fn reduce_scatter_allgather(c: &mut Ctx<'_>, bytes: u64) {
    let f = Fold::new(c.p, true);
    let Some(v) = fold_in(c, &f, bytes) else { return };
    let cnts = pof2_chunks(bytes, f.pof2);
    let (mut lo, mut hi) = halving(c, &f, v, &cnts);
    let mut mask = f.pof2 / 2;
    while mask > 0 {
        let w = v ^ mask;
        let len = hi - lo;
        let (plo, phi) = if v < w { (hi, hi + len) } else { (lo - len, lo) };
        let peer = f.real(w);
        c.sendrecv(peer, cnts[lo..hi].iter().sum(), peer, cnts[plo..phi].iter().sum());
        (lo, hi) = (lo.min(plo), hi.max(phi));
        mask /= 2;
    }
    fold_out(c, &f, bytes);
}

/// Binomial reduce to comm rank 0, then binomial broadcast from it: `2 ceil(log2 p)` rounds.
pub(super) fn reduce_bcast(c: &mut Ctx<'_>, bytes: u64) {
    reduce::binomial(c, bytes, 0);
    bcast::binomial(c, bytes, 0);
}

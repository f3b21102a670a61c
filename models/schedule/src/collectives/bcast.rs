//! Broadcast: binomial tree (MPICH `bcast_intra_binomial`) and van de Geijn's scatter
//! followed by an allgather, by recursive doubling or by a ring (MPICH
//! `bcast_intra_scatter_recursive_doubling_allgather`, `..._scatter_ring_allgather`).

use super::allgather;
use super::gather;
use super::round::{chunk, Ctx};

/// Binomial tree: relative rank `r > 0` receives all `bytes` from `r - lowbit(r)`, then
/// sends them to each child `r + m` (`m` a power of two below `lowbit(r)`; below `p` for
/// the root), the farthest first, one after the other (MPICH's blocking sends);
/// `ceil(log2 p)` rounds.
pub(super) fn binomial(c: &mut Ctx<'_>, bytes: u64, root: usize) {
    let p = c.p;
    let rel = (c.me + p - root) % p;
    let top = if rel == 0 { p.next_power_of_two() } else { 1 << rel.trailing_zeros() };
    if rel > 0 {
        c.recv((rel - top + root) % p, bytes);
    }
    let mut m = top / 2;
    while m > 0 {
        if rel + m < p {
            c.send((rel + m + root) % p, bytes);
        }
        m /= 2;
    }
}

/// The chunks of the scatter: relative rank `r` gets chunk `r` of `bytes` cut into `p`.
fn chunks(bytes: u64, p: usize) -> Vec<u64> {
    (0..p).map(|r| chunk(bytes, p, r)).collect()
}

/// Binomial scatter of the `p` chunks, then a recursive-doubling allgather of them.
pub(super) fn scatter_rd_allgather(c: &mut Ctx<'_>, bytes: u64, root: usize) {
    let blocks = chunks(bytes, c.p);
    gather::scatter_binomial(c, &blocks, root);
    allgather::recursive_doubling(c, &blocks, root);
}

/// Binomial scatter of the `p` chunks, then a ring allgather of them.
pub(super) fn scatter_ring_allgather(c: &mut Ctx<'_>, bytes: u64, root: usize) {
    let blocks = chunks(bytes, c.p);
    gather::scatter_binomial(c, &blocks, root);
    allgather::ring(c, &blocks, root);
}

//! Gather and scatter: binomial trees (MPICH `gather_intra_binomial`,
//! `scatter_intra_binomial`) and linear (the root talks to every rank at once). Ranks are
//! relative to the root; relative rank `r > 0` hangs below `r - lowbit(r)` and its subtree
//! is `r..min(r + lowbit(r), p)`.

use super::round::{sum, Ctx};

fn rel_of(c: &Ctx<'_>, root: usize) -> usize {
    (c.me + c.p - root) % c.p
}

fn abs(rel: usize, root: usize, p: usize) -> usize {
    (rel + root) % p
}

/// The lowest set bit of `rel`, or for the root the smallest power of two `>= p`.
fn span(rel: usize, p: usize) -> usize {
    if rel == 0 {
        p.next_power_of_two()
    } else {
        1 << rel.trailing_zeros()
    }
}

/// Binomial gather: each rank receives its children's subtrees one after the other (the
/// nearest first), then sends its whole subtree to its parent; `ceil(log2 p)` rounds.
pub(super) fn gather_binomial(c: &mut Ctx<'_>, block: u64, root: usize) {
    let (p, rel) = (c.p, rel_of(c, root));
    let mut mask = 1;
    while mask < p {
        if rel & mask == 0 {
            let child = rel | mask;
            if child < p {
                let n = (mask.min(p - child)) as u64;
                c.recv(abs(child, root, p), n * block);
            }
        } else {
            let n = (mask.min(p - rel)) as u64;
            c.send(abs(rel - mask, root, p), n * block);
            break;
        }
        mask <<= 1;
    }
}

/// Binomial scatter of per-relative-rank blocks: a rank receives its subtree's blocks from
/// its parent, then sends each child its subtree's blocks (the farthest child first, one
/// after the other: MPICH's blocking sends); `ceil(log2 p)` rounds.
pub(super) fn scatter_binomial(c: &mut Ctx<'_>, blocks: &[u64], root: usize) {
    let (p, rel) = (c.p, rel_of(c, root));
    let top = span(rel, p);
    if rel > 0 {
        c.recv(abs(rel - top, root, p), sum(blocks, rel, rel + top));
    }
    let mut m = top / 2;
    while m > 0 {
        if rel + m < p {
            c.send(abs(rel + m, root, p), sum(blocks, rel + m, rel + 2 * m));
        }
        m /= 2;
    }
}

/// Linear gather: every rank sends its block to the root, which posts all receives at
/// once; one round.
pub(super) fn gather_linear(c: &mut Ctx<'_>, block: u64, root: usize) {
    if c.me == root {
        let recvs: Vec<_> = (0..c.p).filter(|&r| r != root).map(|r| (r, block)).collect();
        c.round(&recvs, &[]);
    } else {
        c.send(root, block);
    }
}

/// Linear scatter: the root posts a send of each rank's block at once; one round.
pub(super) fn scatter_linear(c: &mut Ctx<'_>, block: u64, root: usize) {
    if c.me == root {
        let sends: Vec<_> = (0..c.p).filter(|&r| r != root).map(|r| (r, block)).collect();
        c.round(&[], &sends);
    } else {
        c.recv(root, block);
    }
}

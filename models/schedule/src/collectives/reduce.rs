//! Reduce: binomial tree (MPICH `reduce_intra_binomial`) and Rabenseifner's reduce-scatter
//! followed by a binomial gather (MPICH `reduce_intra_reduce_scatter_gather`), with the
//! recursive halving both Rabenseifner algorithms share. Only messages are emitted: the
//! local reductions take no time here.

use super::round::{chunk, sum, Ctx, Fold};

/// Binomial reduce: relative rank `r` receives `bytes` from each child `r | m` (`m` a
/// power of two below `r`'s lowest set bit), one after the other, reducing each, then
/// sends to its parent `r - lowbit(r)`; `ceil(log2 p)` rounds.
pub(super) fn binomial(c: &mut Ctx<'_>, bytes: u64, root: usize) {
    let p = c.p;
    let rel = (c.me + p - root) % p;
    let mut mask = 1;
    while mask < p {
        if rel & mask == 0 {
            if rel | mask < p {
                c.recv(((rel | mask) + root) % p, bytes);
            }
        } else {
            c.send((rel - mask + root) % p, bytes);
            break;
        }
        mask <<= 1;
    }
}

/// Rabenseifner's chunks: `bytes` cut into `pof2` chunks (see [`chunk`]).
pub(super) fn pof2_chunks(bytes: u64, pof2: usize) -> Vec<u64> {
    (0..pof2).map(|i| chunk(bytes, pof2, i)).collect()
}

/// Reduce-scatter by recursive halving among the virtual ranks of `f`: in the step of
/// distance `m = 1, 2, ..., pof2 / 2` virtual rank `v` keeps the half of its chunk range
/// on its side (the lower half if `v < v ^ m`), sends the other half to `v ^ m` and
/// receives its own half from it. Returns `v`'s final chunk range.
pub(super) fn halving(c: &mut Ctx<'_>, f: &Fold, v: usize, cnts: &[u64]) -> (usize, usize) {
    let (mut lo, mut hi) = (0, f.pof2);
    let mut mask = 1;
    while mask < f.pof2 {
        let w = v ^ mask;
        let mid = lo + (hi - lo) / 2;
        let (keep, give) = if v < w { ((lo, mid), (mid, hi)) } else { ((mid, hi), (lo, mid)) };
        let peer = f.real(w);
        c.sendrecv(peer, sum(cnts, give.0, give.1), peer, sum(cnts, keep.0, keep.1));
        (lo, hi) = keep;
        mask <<= 1;
    }
    (lo, hi)
}

/// Rabenseifner's reduce: the fold (of the first `2 * rem` ranks the odd one sends all
/// `bytes` to the even one, which takes part), recursive halving, then the chunks go up a
/// binomial tree to the root, halving by halving in reverse. A root folded out first
/// takes over virtual rank 0's part (one more message of chunk 0) before the gather.
pub(super) fn reduce_scatter_gather(c: &mut Ctx<'_>, bytes: u64, root: usize) {
    let (p, me) = (c.p, c.me);
    let f = Fold::new(p, false);
    let cnts = pof2_chunks(bytes, f.pof2);
    let mut state = match f.virt(me) {
        None => {
            c.send(f.pair(me).expect("a folded rank has a partner"), bytes);
            None
        }
        Some(v) => {
            if let Some(folded) = f.pair(me) {
                c.recv(folded, bytes);
            }
            let (lo, hi) = halving(c, &f, v, &cnts);
            Some((v, lo, hi))
        }
    };
    let root_folded = f.virt(root).is_none();
    if root_folded {
        if me == root {
            c.recv(f.real(0), cnts[0]);
            state = Some((0, 0, 1));
        } else if matches!(state, Some((0, _, _))) {
            c.send(root, cnts[0]);
            state = None;
        }
    }
    let newroot = f.virt(root).unwrap_or(0);
    if let Some((v, lo, hi)) = state {
        gather_up(c, &f, (v, lo, hi), &cnts, newroot, root_folded.then_some(root));
    }
}

/// The gather of Rabenseifner's reduce: distances `pof2 / 2` down to 1; the one of a pair
/// on the far side from the root's half sends all it holds and is done, the other receives
/// and doubles its range. `zero` is the rank standing in for virtual rank 0, if not its own.
fn gather_up(
    c: &mut Ctx<'_>,
    f: &Fold,
    at: (usize, usize, usize),
    cnts: &[u64],
    newroot: usize,
    zero: Option<usize>,
) {
    let (v, mut lo, mut hi) = at;
    let mut mask = f.pof2 / 2;
    while mask > 0 {
        let w = v ^ mask;
        let dst = match zero {
            Some(r) if w == 0 => r,
            _ => f.real(w),
        };
        if w / mask == newroot / mask {
            c.send(dst, sum(cnts, lo, hi));
            return;
        }
        let len = hi - lo;
        if v < w {
            c.recv(dst, sum(cnts, hi, hi + len));
            hi += len;
        } else {
            c.recv(dst, sum(cnts, lo - len, lo));
            lo -= len;
        }
        mask /= 2;
    }
}

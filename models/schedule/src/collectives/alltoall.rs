//! All-to-all: pairwise exchange (MPICH `alltoall_intra_pairwise`), linear (every receive
//! and send posted at once, MPICH `alltoall_intra_scattered` without its throttle) and
//! Bruck's (MPICH `alltoall_intra_brucks`).

use super::round::Ctx;

/// Pairwise: `p - 1` steps; in step `i` rank `r` sends its block for `dst` and receives
/// from `src`, with `dst = src = r ^ i` when `p` is a power of two, else `dst = r + i`,
/// `src = r - i` (mod `p`).
pub(super) fn pairwise(c: &mut Ctx<'_>, block: u64) {
    let (p, me) = (c.p, c.me);
    for i in 1..p {
        let (dst, src) =
            if p.is_power_of_two() { (me ^ i, me ^ i) } else { ((me + i) % p, (me + p - i) % p) };
        c.sendrecv(dst, block, src, block);
    }
}

/// Linear: all `p - 1` receives and sends posted together; one round.
pub(super) fn linear(c: &mut Ctx<'_>, block: u64) {
    let (p, me) = (c.p, c.me);
    let peers: Vec<(usize, u64)> = (1..p).map(|i| ((me + i) % p, block)).collect();
    let recvs: Vec<(usize, u64)> = (1..p).map(|i| ((me + p - i) % p, block)).collect();
    c.round(&recvs, &peers);
}

/// Bruck's: after a local rotation, in step `k` (distance `d = 2^k`) rank `r` sends to
/// `r + d` the blocks whose index has bit `k` set and receives as many from `r - d`;
/// `ceil(log2 p)` rounds; the final rotation is local.
pub(super) fn bruck(c: &mut Ctx<'_>, block: u64) {
    let (p, me) = (c.p, c.me);
    let mut d = 1;
    while d < p {
        let n = (0..p).filter(|i| i & d != 0).count() as u64;
        c.sendrecv((me + d) % p, n * block, (me + p - d) % p, n * block);
        d <<= 1;
    }
}

//! Barrier: dissemination (Hensgen, Finkel, Manber 1988; MPICH
//! `barrier_intra_k_dissemination` with `k = 2`).

use super::round::Ctx;

/// Dissemination: in round `k` (distance `d = 2^k < p`) rank `r` sends an empty message to
/// `r + d` and receives one from `r - d`; `ceil(log2 p)` rounds.
pub(super) fn dissemination(c: &mut Ctx<'_>) {
    let (p, me) = (c.p, c.me);
    let mut d = 1;
    while d < p {
        c.sendrecv((me + d) % p, 0, (me + p - d) % p, 0);
        d <<= 1;
    }
}

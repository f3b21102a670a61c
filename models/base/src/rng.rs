//! Deterministic random streams.
//!
//! Every consumer of randomness (an endpoint's traffic, a router's adaptive choices, a
//! topology generator) gets its own stream derived from `(seed, purpose, id)`, so results
//! never depend on which thread or rank runs it. The generator is Xoshiro256++ from the
//! pinned `rand_xoshiro` crate, seeded through SplitMix64.

use rand_core::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The random generator used everywhere in xnet.
pub type Rng = Xoshiro256PlusPlus;

/// Purposes of random streams; distinct purposes give independent streams for one id.
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum Purpose {
    /// Building a random topology.
    Topology = 1,
    /// An endpoint's packet generation and destinations.
    Traffic = 2,
    /// A router's routing decisions.
    Routing = 3,
    /// Building a traffic pattern (e.g. a random permutation).
    Pattern = 4,
    /// Building a workload (random rank mappings and permutations).
    Workload = 5,
    /// Building routing tables (e.g. the Angara genetic search).
    RoutingBuild = 6,
    /// A router's link errors: where on its output links bits go wrong.
    LinkErrors = 7,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The stream for `(seed, purpose, id)`.
pub fn stream(seed: u64, purpose: Purpose, id: u64) -> Rng {
    let key = splitmix(splitmix(seed) ^ splitmix((purpose as u64) << 56 ^ id));
    Rng::seed_from_u64(key)
}

/// Uniform integer in `0..n` (`n > 0`), without modulo bias (Lemire's method).
#[inline]
pub fn below(rng: &mut Rng, n: u64) -> u64 {
    debug_assert!(n > 0);
    let mut m = (rng.next_u64() as u128) * (n as u128);
    if (m as u64) < n {
        let threshold = n.wrapping_neg() % n;
        while (m as u64) < threshold {
            m = (rng.next_u64() as u128) * (n as u128);
        }
    }
    (m >> 64) as u64
}

/// Uniform float in `[0, 1)` with 53 random bits.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Shuffles `items` in place (Fisher-Yates).
pub fn shuffle<T>(rng: &mut Rng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = below(rng, i as u64 + 1) as usize;
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| below(&mut stream(7, Purpose::Traffic, 3), 1000)).collect();
        let b: Vec<u64> = (0..4).map(|_| below(&mut stream(7, Purpose::Traffic, 3), 1000)).collect();
        assert_eq!(a, b);
        let mut x = stream(7, Purpose::Traffic, 3);
        let mut y = stream(7, Purpose::Traffic, 4);
        let xs: Vec<u64> = (0..8).map(|_| x.next_u64()).collect();
        let ys: Vec<u64> = (0..8).map(|_| y.next_u64()).collect();
        assert_ne!(xs, ys);
    }

    #[test]
    fn below_is_in_range_and_roughly_uniform() {
        let mut r = stream(1, Purpose::Routing, 0);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[below(&mut r, 6) as usize] += 1;
        }
        for c in counts {
            assert!((9_000..11_000).contains(&c), "{counts:?}");
        }
    }
}

//! Random destinations: `uniform` (a new draw per packet) and `random_permutation` (one
//! draw per run), the random server permutation of Camarero et al., "Achieving
//! High-Performance Fault-Tolerant Routing in HyperX Interconnection Networks",
//! arXiv:2404.04315, 2024, section 4 (here without fixed points).

use super::{parse_as, Pattern, PatternEntry, PatternError, PatternParams};
use base::rng::{shuffle, stream, Purpose};
use serde::Deserialize;
use topology::Network;

/// `uniform` in the pattern registry.
pub const UNIFORM: PatternEntry = PatternEntry {
    name: "uniform",
    doc: "a uniformly random destination other than the source",
    settings: &[],
    parse: parse_as::<Uniform>,
};

/// `random_permutation` in the pattern registry.
pub const RANDOM_PERMUTATION: PatternEntry = PatternEntry {
    name: "random_permutation",
    doc: "a fixed random permutation of the endpoints without fixed points",
    settings: &[],
    parse: parse_as::<RandomPermutation>,
};

/// Uniformly random destination other than the source.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Uniform {}

impl PatternParams for Uniform {
    fn build(&self, net: &Network, _seed: u64) -> Result<Pattern, PatternError> {
        Ok(Pattern::Uniform { n: net.num_endpoints() as u32 })
    }
}

/// A random permutation of the endpoints without fixed points, fixed for the run.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomPermutation {}

impl PatternParams for RandomPermutation {
    fn build(&self, net: &Network, seed: u64) -> Result<Pattern, PatternError> {
        let n = net.num_endpoints() as u32;
        let mut rng = stream(seed, Purpose::Pattern, 0);
        let mut perm: Vec<u32> = (0..n).collect();
        shuffle(&mut rng, &mut perm);
        // A random cyclic order: each endpoint sends to the next one. No fixed points.
        let mut dst = vec![0; n as usize];
        for i in 0..n as usize {
            dst[perm[i] as usize] = perm[(i + 1) % n as usize];
        }
        Ok(Pattern::Map(dst))
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{hyperx, map};
    use super::*;

    #[test]
    fn random_permutation_is_a_derangement() {
        let net = hyperx(vec![4, 4], 2);
        let m = map(&RandomPermutation {}, &net);
        let mut seen = m.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..32).collect::<Vec<_>>());
        assert!(m.iter().enumerate().all(|(i, &d)| d != i as u32));
    }

    #[test]
    fn uniform_never_picks_the_source_and_covers_the_rest() {
        let net = hyperx(vec![2, 2], 2);
        let p = Uniform {}.build(&net, 1).unwrap();
        let mut rng = stream(1, Purpose::Traffic, 0);
        let mut counts = [0u32; 8];
        for _ in 0..7000 {
            counts[p.destination(5, 0, &mut rng) as usize] += 1;
        }
        assert_eq!(counts[5], 0);
        assert!(counts.iter().enumerate().all(|(i, &c)| i == 5 || (850..1150).contains(&c)), "{counts:?}");
    }
}

//! A genetic search for balanced routing tables: Mukosey, Semenov and Tretiakov's (arXiv:2110.00851) Genetic algorithm
//! (Mukosey, Semenov, Tretiakov, arXiv:2110.00851, section 4.2), over any set of pairs with
//! alternative routes.
//!
//! * A chromosome holds one gene per pair with more than one route: the index of the
//!   route it takes (pairs with one route are fixed and only add their load).
//! * The first generation is `population` random chromosomes.
//! * Each generation breeds `population` children: two parents drawn uniformly at random
//!   (panmixia), a two-point crossover (the child is the first parent with the genes
//!   between two random points taken from the second), then every gene of the child
//!   mutates (a uniformly random route of its pair) with probability `mutation`.
//! * Fitness is the paper's `sigma(4, R)`: the 4th-power mean of the channel loads'
//!   deviations from their average (every route is minimal, so the average is the
//!   paper's perfect channel load). Parents and children together are ranked by fitness
//!   (lower is better, ties: parents first, then by index) and the best `population` are
//!   the next generation.
//! * The search stops after `patience` consecutive generations without a better best
//!   chromosome (the paper: 30), or after `generations`. The paper names a second stopping
//!   test, "the fitness value of next best solution less than 0.05 of the fitness value of
//!   the global best", whose reading is unclear; it is not applied.
//!
//! Deterministic: child `c` of generation `g` draws from its own stream
//! `(seed, RoutingBuild, g * population + c)`, and children are bred in parallel, so the
//! result does not depend on the number of threads.

use base::rng::{below, stream, unit, Purpose, Rng};
use rayon::prelude::*;

/// The genetic search's parameters (`[routing.angara_genetic]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// Chromosomes per generation (the paper: 100).
    pub population: usize,
    /// Probability that a child's gene mutates (the paper: 2 %).
    pub mutation: f64,
    /// Generations without improvement before stopping (the paper: 30).
    pub patience: u32,
    /// Most generations bred.
    pub generations: u32,
    /// Seed of the random streams.
    pub seed: u64,
}

/// The pairs to route: fixed load plus the alternatives of each gene.
pub struct Problem {
    /// Channels (directed links), numbered `0..channels`.
    pub channels: usize,
    /// Load of the pairs with a single route.
    pub base: Vec<u32>,
    /// `routes[genes[g]..genes[g + 1]]` are gene `g`'s alternatives.
    pub genes: Vec<u32>,
    /// `hops[routes[r]..routes[r + 1]]` are the channels route `r` crosses.
    pub routes: Vec<u32>,
    /// Channel ids.
    pub hops: Vec<u32>,
}

impl Problem {
    /// An empty problem over `channels` channels.
    pub fn new(channels: usize) -> Self {
        Self { channels, base: vec![0; channels], genes: vec![0], routes: vec![0], hops: Vec::new() }
    }

    /// Adds a pair with the routes `alternatives` (each the channels it crosses): a gene
    /// when there are several, fixed load when there is one.
    pub fn add_pair<'r>(&mut self, alternatives: impl ExactSizeIterator<Item = &'r [u32]>) {
        if alternatives.len() == 1 {
            for r in alternatives {
                for &c in r {
                    self.base[c as usize] += 1;
                }
            }
            return;
        }
        for r in alternatives {
            self.hops.extend_from_slice(r);
            self.routes.push(self.hops.len() as u32);
        }
        self.genes.push(self.routes.len() as u32 - 1);
    }

    /// Number of genes.
    pub fn num_genes(&self) -> usize {
        self.genes.len() - 1
    }

    fn alternatives(&self, gene: usize) -> u32 {
        self.genes[gene + 1] - self.genes[gene]
    }

    fn route(&self, gene: usize, choice: u16) -> &[u32] {
        let r = self.genes[gene] as usize + choice as usize;
        &self.hops[self.routes[r] as usize..self.routes[r + 1] as usize]
    }

    fn apply(&self, loads: &mut [u32], gene: usize, from: u16, to: u16) {
        for &c in self.route(gene, from) {
            loads[c as usize] -= 1;
        }
        for &c in self.route(gene, to) {
            loads[c as usize] += 1;
        }
    }

    /// The paper's `sigma(4, R)` of channel loads `loads`.
    pub fn sigma(&self, loads: &[u32]) -> f64 {
        let c = loads.len().max(1) as f64;
        let avg = loads.iter().map(|&l| l as u64).sum::<u64>() as f64 / c;
        (loads.iter().map(|&l| (l as f64 - avg).powi(4)).sum::<f64>() / c).powf(0.25)
    }
}

/// One candidate table.
#[derive(Clone)]
struct Chromosome {
    genes: Vec<u16>,
    loads: Vec<u32>,
    sigma: f64,
}

/// What the search did, for `xnet routes`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    /// Generations bred.
    pub generations: u32,
    /// Best `sigma(4, R)` of the first generation.
    pub first_sigma: f64,
    /// Best `sigma(4, R)` found.
    pub sigma: f64,
}

/// Runs the search: the chosen route of every gene, and what it took.
pub fn evolve(problem: &Problem, params: &Params) -> (Vec<u16>, Outcome) {
    let num_genes = problem.num_genes();
    let pop = params.population.max(2);
    let rng_for = |id: u64| stream(params.seed, Purpose::RoutingBuild, id);
    let mut population: Vec<Chromosome> = (0..pop)
        .into_par_iter()
        .map(|i| {
            let mut rng = rng_for(i as u64);
            let genes: Vec<u16> =
                (0..num_genes).map(|g| below(&mut rng, problem.alternatives(g) as u64) as u16).collect();
            let mut loads = problem.base.clone();
            for (g, &choice) in genes.iter().enumerate() {
                for &c in problem.route(g, choice) {
                    loads[c as usize] += 1;
                }
            }
            let sigma = problem.sigma(&loads);
            Chromosome { genes, loads, sigma }
        })
        .collect();
    rank(&mut population);
    let first_sigma = population[0].sigma;
    let (mut best, mut stale, mut generation) = (first_sigma, 0, 0);
    while generation < params.generations && stale < params.patience && num_genes > 0 && best > 0.0 {
        // A stop request ends the search early; the caller fails the build.
        if base::cancel::requested() {
            break;
        }
        generation += 1;
        let parents = &population;
        let children: Vec<Chromosome> = (0..pop)
            .into_par_iter()
            .map(|c| {
                let mut rng = rng_for(generation as u64 * pop as u64 + c as u64);
                breed(problem, parents, params.mutation, &mut rng)
            })
            .collect();
        population.extend(children);
        rank(&mut population);
        population.truncate(pop);
        if population[0].sigma < best {
            best = population[0].sigma;
            stale = 0;
        } else {
            stale += 1;
        }
    }
    let outcome = Outcome { generations: generation, first_sigma, sigma: best };
    (population.swap_remove(0).genes, outcome)
}

/// Best first; a stable sort keeps parents ahead of equally fit children.
fn rank(population: &mut [Chromosome]) {
    population.sort_by(|a, b| a.sigma.total_cmp(&b.sigma));
}

/// One child: two-point crossover of two random parents, then mutation.
fn breed(problem: &Problem, parents: &[Chromosome], mutation: f64, rng: &mut Rng) -> Chromosome {
    let n = problem.num_genes();
    let a = &parents[below(rng, parents.len() as u64) as usize];
    let b = &parents[below(rng, parents.len() as u64) as usize];
    let (mut lo, mut hi) = (below(rng, n as u64 + 1) as usize, below(rng, n as u64 + 1) as usize);
    if lo > hi {
        std::mem::swap(&mut lo, &mut hi);
    }
    let mut child = Chromosome { genes: a.genes.clone(), loads: a.loads.clone(), sigma: 0.0 };
    for g in lo..hi {
        let (from, to) = (a.genes[g], b.genes[g]);
        if from != to {
            problem.apply(&mut child.loads, g, from, to);
            child.genes[g] = to;
        }
    }
    // Mutations: the gap to the next mutated gene is geometric, one draw per mutation.
    if mutation > 0.0 {
        let log_keep = (1.0 - mutation.min(1.0)).ln();
        let mut g = 0usize;
        loop {
            let gap =
                if log_keep == f64::NEG_INFINITY { 0.0 } else { ((1.0 - unit(rng)).ln() / log_keep).floor() };
            if gap >= (n - g) as f64 {
                break;
            }
            g += gap as usize;
            let to = below(rng, problem.alternatives(g) as u64) as u16;
            let from = child.genes[g];
            if from != to {
                problem.apply(&mut child.loads, g, from, to);
                child.genes[g] = to;
            }
            g += 1;
        }
    }
    child.sigma = problem.sigma(&child.loads);
    child
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four channels, two pairs each choosing channel 0/1 or 2/3: the balanced choice puts
    /// one load on every channel (sigma 0) and the search finds it.
    #[test]
    fn finds_a_perfect_balance() {
        let mut p = Problem::new(4);
        p.add_pair([&[0u32][..], &[1u32][..]].into_iter());
        p.add_pair([&[0u32][..], &[1u32][..]].into_iter());
        p.add_pair([&[2u32][..], &[3u32][..]].into_iter());
        p.add_pair([&[2u32][..], &[3u32][..]].into_iter());
        p.add_pair([&[3u32][..]].into_iter());
        assert_eq!(p.num_genes(), 4);
        assert_eq!(p.base, vec![0, 0, 0, 1]);
        let params = Params { population: 10, mutation: 0.02, patience: 30, generations: 500, seed: 3 };
        let (genes, out) = evolve(&p, &params);
        let mut loads = p.base.clone();
        for (g, &c) in genes.iter().enumerate() {
            for &ch in p.route(g, c) {
                loads[ch as usize] += 1;
            }
        }
        assert_eq!(&loads[..2], &[1, 1]);
        assert_eq!(loads[2] + loads[3], 3);
        assert!((out.sigma - p.sigma(&loads)).abs() < 1e-12);
        assert!(out.sigma <= out.first_sigma);
    }

    /// Mutation with probability 1 rewrites every gene; 0 none.
    #[test]
    fn mutation_rate_bounds() {
        let mut p = Problem::new(2);
        for _ in 0..50 {
            p.add_pair([&[0u32][..], &[1u32][..]].into_iter());
        }
        let parents = vec![Chromosome { genes: vec![0; 50], loads: vec![50, 0], sigma: 25.0 }];
        let mut rng = stream(1, Purpose::RoutingBuild, 0);
        let child = breed(&p, &parents, 0.0, &mut rng);
        assert_eq!(child.genes, vec![0; 50]);
        let child = breed(&p, &parents, 1.0, &mut rng);
        let ones = child.genes.iter().filter(|&&g| g == 1).count();
        assert!((10..=40).contains(&ones), "{ones}");
        assert_eq!(child.loads, vec![50 - ones as u32, ones as u32]);
    }
}

//! The deadlock verifier and path metrics of `xnet-routing` (`routing::analysis`, all
//! re-exported here), applied to a [`Simulation`]'s configuration: its network, its routes
//! with the VC policy and escape in force, its VCs and seed.

pub use routing::analysis::*;

use crate::sim::Simulation;

/// Analyses the routes of `sim`'s configuration on the current rayon pool. Panics if the
/// CDG would not fit in memory addressing (see [`try_analyse`]).
pub fn analyse(sim: &Simulation) -> RoutesReport {
    try_analyse(sim, Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// Like [`analyse`], but only for `destinations` evenly spaced destination switches (see
/// [`Options::destinations`]).
pub fn analyse_sampled(sim: &Simulation, destinations: usize) -> RoutesReport {
    try_analyse(sim, Options { destinations: Some(destinations), ..Options::default() })
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Analyses the routes of `sim`'s configuration with `options`.
pub fn try_analyse(sim: &Simulation, options: Options) -> Result<RoutesReport, AnalysisError> {
    analyse_with(&sim.net, &sim.routes(), sim.config.router.vcs, sim.config.simulation.seed, options)
}

//! The partitioning methods of the command line (`--partition-method`, `xnet partition
//! --method`, `--census-method`), and `--census`: the partitionings a run is counted for
//! (docs/scaling.md), from the partition counts and methods given.

use anyhow::Result;
use models::config::Config;
use models::sim::partition::{census, CensusSpec};
use models::topology::Network;
use std::time::Instant;

/// Partitioning methods (see the partitioner crate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MethodArg {
    /// Dragonfly groups when there are enough to balance, else the better of linear and
    /// multilevel.
    Auto,
    /// Contiguous ranges of switch ids (slabs of HyperX and tori).
    Linear,
    /// Whole natural blocks (Dragonfly groups).
    Blocks,
    /// Multilevel graph partitioning (METIS-style), cutting the longest links first.
    Multilevel,
}

impl From<MethodArg> for partitioner::Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Auto => partitioner::Method::Auto,
            MethodArg::Linear => partitioner::Method::Linear,
            MethodArg::Blocks => partitioner::Method::Blocks,
            MethodArg::Multilevel => partitioner::Method::Multilevel,
        }
    }
}

/// The partitionings `--census` and `--census-method` ask to count (none without them).
pub(crate) fn specs(
    cfg: &Config,
    net: &Network,
    parts: &[u32],
    methods: &[MethodArg],
    quiet: bool,
) -> Result<Vec<CensusSpec>> {
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let methods: Vec<partitioner::Method> = if methods.is_empty() {
        vec![partitioner::Method::Linear, partitioner::Method::Multilevel, partitioner::Method::Blocks]
    } else {
        methods.iter().map(|&m| m.into()).collect()
    };
    let started = Instant::now();
    let (specs, notes) = census(cfg, net, parts, &methods).map_err(anyhow::Error::msg)?;
    if !quiet {
        for note in notes {
            eprintln!("{note}");
        }
        let names: Vec<String> =
            specs.iter().map(|s| format!("{} (window {})", s.name(), s.layout.window)).collect();
        eprintln!("census: {} ({:.1} s to partition)", names.join(", "), started.elapsed().as_secs_f64());
    }
    Ok(specs)
}

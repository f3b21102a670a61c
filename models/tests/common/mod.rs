//! Shared helpers for the scenario tests.
#![allow(dead_code)]

use xnet_models::config::Config;
use xnet_models::sim::{RunResult, Simulation};

/// Builds a simulation from TOML text with overrides.
pub fn build(text: &str, overrides: &[&str]) -> Simulation {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let cfg = Config::parse(text, &o).unwrap_or_else(|e| panic!("config error: {e}"));
    Simulation::build(cfg).unwrap_or_else(|e| panic!("build error: {e}"))
}

/// Runs on `parts` partitions (threads) at the configured load.
pub fn run(sim: &Simulation, parts: u32) -> RunResult {
    let plan = sim.plan(parts).expect("partition");
    sim.run(sim.config.traffic.load, &plan.assignment, &mut |_| {}, None).expect("run")
}

// The configurations the tests share: the workspace's one set.
include!("../../../tests/fixtures/configs.rs");

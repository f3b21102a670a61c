//! Shared helpers for the scenario tests.
#![allow(dead_code)]

use xnet_models::config::Config;
use xnet_models::router::Delivery;
use xnet_models::sim::{RunResult, Simulation};

/// Builds a simulation from TOML text with overrides.
pub fn build(text: &str, overrides: &[&str]) -> Simulation {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let cfg = Config::parse(text, &o).unwrap_or_else(|e| panic!("config error: {e}"));
    Simulation::build(cfg).unwrap_or_else(|e| panic!("build error: {e}"))
}

/// The error of parsing or building `text` with `overrides`; panics if both succeed.
pub fn build_error(text: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match Config::parse(text, &o) {
        Err(e) => e.to_string(),
        Ok(cfg) => match Simulation::build(cfg) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{overrides:?} was accepted"),
        },
    }
}

/// Runs on `parts` partitions (threads) at the configured load.
pub fn run(sim: &Simulation, parts: u32) -> RunResult {
    let plan = sim.plan(parts).expect("partition");
    sim.run(sim.config.traffic.load, &plan.assignment, &mut |_| {}, None).expect("run")
}

/// Runs on `parts` partitions recording every delivered packet.
pub fn run_recorded(sim: &mut Simulation, parts: u32) -> RunResult {
    sim.record_deliveries = true;
    run(sim, parts)
}

/// Checks every delivery against `expected(d)` = (hops, zero-load latency). Contention can
/// only add delay, so none may be faster; at a light load nearly all must match exactly.
pub fn check_zero_load(result: &RunResult, expected: impl Fn(&Delivery) -> (u16, u64)) {
    assert!(result.deliveries.len() > 200, "too few packets: {}", result.deliveries.len());
    let mut exact = 0;
    for d in &result.deliveries {
        let (hops, latency) = expected(d);
        assert_eq!(d.hops, hops, "hop count of {d:?}");
        let got = d.delivered - d.injected;
        assert!(got >= latency, "{d:?} took {got} cycles, faster than the zero-load {latency}");
        exact += usize::from(got == latency);
    }
    let share = exact as f64 / result.deliveries.len() as f64;
    assert!(share > 0.97, "only {:.1} % of packets had the zero-load latency", share * 100.0);
}

/// The cycles beyond latencies and router delays that a lone packet takes over links of
/// serializations `s` (cycles a packet holds each), in path order: a wait wherever a
/// link is faster than the one before, and the last link's serialization less one
/// (docs/router.md, "Links of different speeds").
pub fn speed_cost(s: &[u64]) -> u64 {
    let waits: u64 = s.windows(2).map(|w| w[0].saturating_sub(w[1])).sum();
    waits + s.last().unwrap() - 1
}

// The configurations the tests share: the workspace's one set.
include!("../../../tests/fixtures/configs.rs");

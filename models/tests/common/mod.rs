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

pub const HYPERX: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 7
[topology]
kind = "hyperx"
sides = [4, 4]
endpoints_per_switch = 4
[router]
vcs = 2
packet_size = 8
input_buffer = 32
output_buffer = 16
router_delay = 2
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.3
"#;

pub const DRAGONFLY: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 3
[topology]
kind = "dragonfly"
p = 2
a = 4
h = 2
local_latency = 2
global_latency = 10
[router]
vcs = 3
packet_size = 8
input_buffer = 64
output_buffer = 16
[routing]
algorithm = "dragonfly_ugal"
[traffic]
pattern = "uniform"
load = 0.3
"#;

pub const RRG: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 11
[topology]
kind = "random_regular"
switches = 32
degree = 5
endpoints_per_switch = 3
link_latency = 3
[router]
vcs = 4
packet_size = 4
input_buffer = 16
output_buffer = 8
[routing]
algorithm = "minimal"
selection = "adaptive"
[traffic]
pattern = "uniform"
load = 0.4
"#;

pub const TORUS: &str = r#"
[simulation]
cycles = 3000
warmup = 500
[topology]
kind = "torus"
sides = [5, 4]
endpoints_per_switch = 2
link_latency = 2
[router]
vcs = 2
packet_size = 4
input_buffer = 16
output_buffer = 8
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.2
"#;

/// A complete graph of 8 switches (1D HyperX), one endpoint each: every pair of ranks is
/// one hop apart over its own link, so messages never meet. Terminal links of 3 cycles,
/// switch links of 5, router delay 2, 4-phit packets: a packet of `s` phits takes
/// 2 x 3 + 5 + 2 x 2 + s - 1 cycles over one switch-to-switch hop, head injected to tail
/// delivered. A run with a workload ends when its jobs do (`cycles` is a deadline).
pub const CLIQUE: &str = r#"
[simulation]
cycles = 100000
warmup = 0
sample_period = 100
[topology]
kind = "hyperx"
sides = [8]
endpoints_per_switch = 1
terminal_latency = 3
link_latency = 5
[router]
vcs = 1
packet_size = 4
input_buffer = 16
output_buffer = 16
router_delay = 2
[routing]
algorithm = "dor"
"#;

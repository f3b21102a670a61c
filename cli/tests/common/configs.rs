//! Small configurations the test files share.

pub const DRAGONFLY: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 7
sample_period = 100

[topology]
kind = "dragonfly"
p = 2
a = 4
h = 2
local_latency = 2
global_latency = 10

[router]
vcs = 3

[routing]
algorithm = "dragonfly_ugal"

[traffic]
pattern = "uniform"
load = 0.4
"#;

pub const RANDOM_REGULAR: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 3
sample_period = 100

[topology]
kind = "random_regular"
switches = 32
degree = 5
endpoints_per_switch = 3

[router]
vcs = 4
packet_size = 4
input_buffer = 16
output_buffer = 8

[routing]
algorithm = "minimal"

[traffic]
pattern = "uniform"
load = 0.4
"#;

/// A 1D ring with one VC and DOR without datelines: deadlocks at full load.
pub const DEADLOCKING_RING: &str = r#"
[simulation]
cycles = 50000
warmup = 0
sample_period = 100
watchdog = 1000

[topology]
kind = "torus"
sides = [8]
endpoints_per_switch = 2

[router]
vcs = 1
packet_size = 4
input_buffer = 4
output_buffer = 4

[routing]
algorithm = "dor"
vc_policy = "any"

[traffic]
pattern = "uniform"
load = 1.0
"#;

/// A 2x2 HyperX of 4 endpoints per switch (16 endpoints), adaptive minimal routing,
/// uniform traffic. Each directed link carries 32/15 of an endpoint's load (16/15 for its
/// neighbour switch, 8/15 for the diagonal's first hops and 8/15 for the other
/// neighbour's second hops), so it saturates at a load of at most 15/32.
pub const HYPERX_2X2: &str = r#"
[simulation]
cycles = 10000
warmup = 2000
seed = 1
sample_period = 500
[topology]
kind = "hyperx"
sides = [2, 2]
endpoints_per_switch = 4
[router]
vcs = 2
packet_size = 16
input_buffer = 64
[routing]
algorithm = "minimal"
selection = "adaptive"
[traffic]
pattern = "uniform"
load = 0.1
loads = [0.1, 0.3, 0.5, 0.7, 0.9]
"#;

/// The channel bound of [`HYPERX_2X2`] under uniform traffic.
pub const HYPERX_2X2_BOUND: f64 = 15.0 / 32.0;

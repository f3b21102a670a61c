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

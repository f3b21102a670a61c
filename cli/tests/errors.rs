//! `xnet` end to end: bad input gives a one-line error and exit code 1, and the limits
//! validation allows are the limits the router holds.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.

mod common;

use common::*;
use tempfile::TempDir;

#[test]
fn bad_input_gives_a_clear_error_and_exit_code_1() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "df.toml", DRAGONFLY);
    let cfg = s(&cfg);
    let bad_key = write(d, "bad_key.toml", &DRAGONFLY.replace("vcs = 3", "vcs = 3\nbogus_knob = 1"));
    expect_error(d, &["run", s(&bad_key)], &["router", "bogus_knob"]);
    expect_error(d, &["run", cfg, "--set", "simulation.cycles=-3"], &["simulation.cycles", "-3"]);
    expect_error(d, &["run", cfg, "--set", "router.vcs=\"two\""], &["router.vcs", "two"]);
    expect_error(d, &["run", cfg, "--set", "router.vcs=0"], &["router.vcs", "0"]);
    expect_error(
        d,
        &["run", cfg, "--set", "topology.kind=banana"],
        &["topology.kind", "banana", "hyperx", "dragonfly", "torus", "mesh", "fat_tree", "random_regular"],
    );
    expect_error(
        d,
        &["run", cfg, "--set", "routing.algorithm=teleport"],
        &["routing.algorithm", "teleport", "minimal", "dragonfly_ugal"],
    );
    expect_error(
        d,
        &["run", cfg, "--set", "routing.algorithm=dragonfly_valiant", "--set", "router.vcs=2"],
        &["router.vcs", "dragonfly_valiant", "needs 3"],
    );
    expect_error(d, &["run", "does-not-exist.toml"], &["does-not-exist.toml", "cannot read"]);
    expect_error(d, &["run", cfg, "--set", "nonsense"], &["nonsense", "section.key=value"]);
    expect_error(d, &["sweep", cfg, "--loads", "0.1,1.5"], &["--loads", "1.5"]);
    expect_error(d, &["run", cfg, "--set", "traffic.load=1.5"], &["traffic.load", "1.5"]);
    // Integers that do not fit their type get the allowed range, not the type's name.
    for (set, expected) in [
        ("router.vcs=1000", "router.vcs: must be in 1..=64, got 1000"),
        ("router.packet_size=100000", "router.packet_size: must be in 1..=4096, got 100000"),
        ("topology.local_latency=-3", "topology.local_latency: must be a non-negative integer, got -3"),
    ] {
        expect_error(d, &["run", cfg, "--set", set], &[expected]);
    }
    // An unknown traffic key lists the allowed ones; a value that is neither TOML nor a
    // bare word is an error, not a string.
    expect_error(
        d,
        &["run", cfg, "--set", "traffic.lod=0.3"],
        &["traffic.lod", "allowed: pattern, load, loads"],
    );
    expect_error(d, &["run", cfg, "--set", "traffic.load=[0.3"], &["traffic.load", "cannot read `[0.3`"]);
}

#[test]
fn the_limits_validation_allows_are_the_limits_the_router_holds() {
    // Every router key at the edge of its allowed range runs (no assert deep inside), and
    // one past it is refused by validation, naming the range.
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let quick = workspace().join("configs/quick.toml");
    let short = ["--set", "simulation.cycles=1500", "--set", "simulation.warmup=100"];
    for edge in [
        vec!["router.vcs=64"],
        vec!["router.packet_size=4096", "router.input_buffer=65535", "router.output_buffer=65535"],
        vec!["router.packet_size=1", "router.input_buffer=1", "router.output_buffer=1"],
        vec!["router.speedup=16", "traffic.load=1.0"],
        vec!["router.router_delay=1000"],
    ] {
        let mut args = vec!["run", s(&quick), "-q", "-t", "2", "-o", "edge.h5"];
        args.extend(short);
        for set in &edge {
            args.extend(["--set", set]);
        }
        let o = xnet_expect(d, &args, 0);
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"), "{}", describe(&o));
    }
    for (set, expected) in [
        ("router.input_buffer=1048576", "router.input_buffer: must be in 16..=65535, got 1048576"),
        ("router.output_buffer=65536", "router.output_buffer: must be in 16..=65535, got 65536"),
        ("router.speedup=17", "router.speedup: must be in 1..=16, got 17"),
        ("router.router_delay=1001", "router.router_delay: must be in 0..=1000, got 1001"),
    ] {
        expect_error(d, &["run", s(&quick), "--set", set], &[expected]);
    }
}

#[test]
fn thread_and_rank_counts_are_checked_before_any_thread_starts() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "df.toml", DRAGONFLY);
    let cfg = s(&cfg);
    // Before the check, rayon's pool tried to start this many threads and hung.
    expect_error(d, &["run", cfg, "-t", "4294967295"], &["--threads 4294967295", "1 to 4096"]);
    expect_error(d, &["sweep", cfg, "--loads", "0.1", "-t", "0"], &["--threads 0", "1 to 4096"]);
    let o = xnet_expect(d, &["routes", cfg, "-t", "5000", "-o", "never.h5"], 1);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.starts_with("error: --threads 5000: allowed values are 1 to 4096"), "{}", describe(&o));
    // ranks x threads overflowed 32 bits and the report said "partitions 1".
    let o = xnet_expect(d, &["partition", cfg, "--ranks", "4294967295", "-t", "4294967295"], 1);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("error: --threads 4294967295: allowed values are 1 to 4096"),
        "{}",
        describe(&o)
    );
    let o = xnet_expect(d, &["partition", cfg, "--ranks", "4294967295", "-t", "2"], 1);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.starts_with("error: --ranks 4294967295 for 36 switches"), "{}", describe(&o));
    let o = xnet_expect(d, &["partition", cfg, "--ranks", "8", "-t", "4000"], 1);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("--ranks 8 x --threads 4000 = 32000 partitions for 36 switches"),
        "{}",
        describe(&o)
    );
}

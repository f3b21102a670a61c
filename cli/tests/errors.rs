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
    let cfg = write(d, "df.toml", DRAGONFLY_UGAL);
    let cfg = s(&cfg);
    let bad_key = write(d, "bad_key.toml", &DRAGONFLY_UGAL.replace("vcs = 3", "vcs = 3\nbogus_knob = 1"));
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
        &["run", cfg, "--set", "routing.algorithm=minimial"],
        &["routing.algorithm: unknown `minimial`; did you mean `minimal`? known: "],
    );
    expect_error(
        d,
        &["run", cfg, "--set", "routing.algorithm=dragonfly_valiant", "--set", "router.vcs=2"],
        &["router.vcs", "dragonfly_valiant", "needs 3"],
    );
    expect_error(d, &["run", "does-not-exist.toml"], &["does-not-exist.toml", "cannot read"]);
    expect_error(d, &["run", cfg, "--set", "nonsense"], &["nonsense", "section.key=value"]);
    expect_error(d, &["sweep", cfg, "--loads", "0.1,1.5"], &["--loads", "1.5"]);
    for bad in ["0", "-0.1", "0.7", "NaN", "1e-300"] {
        let tolerance = format!("--tolerance={bad}");
        expect_error(
            d,
            &["sweep", cfg, "--find-saturation", &tolerance],
            &["--tolerance", bad, "at least 0.0001 and at most 0.5"],
        );
    }
    // A negative value is a value, not a flag.
    expect_error(
        d,
        &["sweep", cfg, "--find-saturation", "--tolerance", "-0.1"],
        &["--tolerance: -0.1 is not allowed"],
    );
    expect_error(d, &["sweep", cfg, "--loads", "-0.1"], &["--loads: -0.1 is outside [0, 1]"]);
    // A sweep of jobs without [traffic] would add background traffic the configuration
    // does not show.
    let jobs = write(
        d,
        "jobs.toml",
        "[simulation]\ncycles = 3000\n[topology]\nkind = \"hyperx\"\nsides = [4, 4]\nendpoints_per_switch = 2\n\
         [routing]\nalgorithm = \"minimal\"\n[workload]\n[[workload.jobs]]\nkind = \"allreduce\"\nranks = 8\nbytes = 64\n",
    );
    expect_error(d, &["sweep", s(&jobs), "--loads", "0,0.3"], &["jobs.toml", "has no [traffic] section"]);
    // A job too large to hold is refused before anything is built (it aborted allocating).
    let huge = write(
        d,
        "huge.toml",
        "[simulation]\ncycles = 1000\n[topology]\nkind = \"hyperx\"\nsides = [32, 32]\nendpoints_per_switch = 64\n[routing]\nalgorithm = \"minimal\"\n\
         [workload]\n[[workload.jobs]]\nkind = \"alltoall\"\nranks = 65536\nmessage_bytes = 64\nalgorithm = \"linear\"\n",
    );
    expect_error(d, &["run", s(&huge)], &["operations 1.3 TiB", "every rank holds all of them"]);
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
fn numbers_are_read_as_meant_and_a_seed_takes_any_u64() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "df.toml",
        &DRAGONFLY_UGAL.replace("cycles = 3000", "cycles = 600").replace("warmup = 500", "warmup = 100"),
    );
    let cfg = s(&cfg);
    // Past TOML's integers: the key's range, not a string nor the name of a Rust type.
    expect_error(
        d,
        &["run", cfg, "--set", "router.vcs=99999999999999999999"],
        &["router.vcs: must be in 1..=64, got 99999999999999999999"],
    );
    expect_error(
        d,
        &["run", cfg, "--set", "simulation.seed=99999999999999999999"],
        &["simulation.seed", "must be in 0..=18446744073709551615, got 99999999999999999999"],
    );
    expect_error(
        d,
        &["run", cfg, "--set", "simulation.seed=-1"],
        &["simulation.seed", "-1", "as a string of digits"],
    );
    // `.5` is a half, on the command line as in the summary.
    let o = xnet_expect(d, &["run", cfg, "-t", "1", "--set", "traffic.load=.5", "-o", "half.h5"], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let row = out.lines().skip_while(|l| !l.starts_with("   load")).nth(1).unwrap_or("");
    assert!(row.trim_start().starts_with("0.500"), "{}", describe(&o));
    // Seeds from 2^63 on: bare on the command line, a string of digits in the file.
    xnet_expect(
        d,
        &["run", cfg, "-q", "-t", "1", "--set", "simulation.seed=18446744073709551615", "-o", "a.h5"],
        0,
    );
    let quoted = write(
        d,
        "quoted.toml",
        &std::fs::read_to_string(cfg).unwrap().replace("seed = 7", "seed = \"18446744073709551615\""),
    );
    xnet_expect(d, &["run", s(&quoted), "-q", "-t", "1", "-o", "b.h5"], 0);
    for file in ["a.h5", "b.h5"] {
        assert_eq!(attr_u64(&open(&d.join(file)), "seed"), u64::MAX, "{file}");
    }
    let diff = differences(&dump(&d.join("a.h5")), &dump(&d.join("b.h5")));
    assert!(diff.iter().all(|l| l.contains("config")), "the same run both ways: {diff:?}");
}

#[test]
fn a_routing_that_cannot_avoid_failed_links_suggests_those_that_can_on_that_topology() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let torus = workspace().join("configs/torus-4d.toml");
    let args = ["run", s(&torus), "--set", "routing.algorithm=dor", "--set", "topology.failed_links=3"];
    let o = xnet(d, &[&args[..], &["-q", "-o", "never.h5"]].concat());
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let list = err.split("routings that can, on a torus: ").nth(1).unwrap_or_else(|| panic!("{err}"));
    let names: Vec<&str> = list.trim().split(", ").collect();
    for name in ["minimal", "up_down", "lash", "nue", "angara_bfs"] {
        assert!(names.contains(&name), "{name} missing: {err}");
    }
    // HyperX's own routings (and a HyperX-first one) are no help on a torus.
    for name in ["omniwar", "dal", "polarized", "dor"] {
        assert!(!names.contains(&name), "{name} offered for a torus: {err}");
    }
    expect_error(d, &args, &["routing.algorithm: `dor` follows the intact topology", "3 failed links"]);
}

#[test]
fn a_pattern_that_would_send_every_endpoint_to_itself_is_refused() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let network = |topology: &str, pattern: &str| {
        format!(
            "[simulation]\ncycles = 200\n[topology]\n{topology}\nendpoints_per_switch = 1\n[router]\nvcs = 4\n\
             [routing]\nalgorithm = \"minimal\"\n[traffic]\npattern = \"{pattern}\"\nload = 0.3\n"
        )
    };
    let torus = write(d, "torus.toml", &network("kind = \"torus\"\nsides = [2, 2]", "tornado"));
    expect_error(
        d,
        &["run", s(&torus)],
        &[
            "traffic.pattern: `tornado` on torus(2x2",
            "(4 endpoints) sends every endpoint to itself",
            "a side of at least 3",
        ],
    );
    let pair = write(d, "pair.toml", &network("kind = \"hyperx\"\nsides = [2]", "bit_reversal"));
    expect_error(
        d,
        &["run", s(&pair)],
        &["`bit_reversal` on hyperx(2", "(2 endpoints)", "at least 4 endpoints"],
    );
    // A side of 2 beside a longer one still moves every endpoint: it runs.
    let mixed = write(d, "mixed.toml", &network("kind = \"torus\"\nsides = [2, 4]", "tornado"));
    xnet_expect(d, &["run", s(&mixed), "-q", "-t", "1", "-o", "mixed.h5"], 0);
}

#[test]
fn a_job_name_with_the_comma_that_separates_job_names_is_refused() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let text = std::fs::read_to_string(workspace().join("configs/workload-stencil.toml")).unwrap();
    assert!(text.contains("name = \"fft\""), "the example changed: {text}");
    let cfg = write(d, "jobs.toml", &text.replace("name = \"fft\"", "name = \"fft,all\""));
    expect_error(
        d,
        &["run", s(&cfg)],
        &["workload.jobs[1].name: must not contain a comma, got \"fft,all\"", "job_names"],
    );
}

#[test]
fn thread_and_rank_counts_are_checked_before_any_thread_starts() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "df.toml", DRAGONFLY_UGAL);
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

#[test]
fn a_progress_file_replaces_only_a_progress_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "df.toml", DRAGONFLY_UGAL);
    let mine = write(d, "notes.txt", "my notes\n");
    let config_text = std::fs::read(&cfg).unwrap();
    // expect_error adds `-q -o never.h5`.
    let base = ["run", s(&cfg), "-t", "1", "--progress-file"];
    for (target, expected) in [
        (s(&cfg), "it is the configuration"),
        ("never.h5", "it is the output file (-o)"),
        (s(&mine), "is not a progress file"),
        (".", "is not a regular file"),
    ] {
        let mut args = base.to_vec();
        args.push(target);
        expect_error(d, &args, &["--progress-file", expected]);
    }
    assert_eq!(std::fs::read(&cfg).unwrap(), config_text);
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "my notes\n");
    // An earlier progress file is replaced, and the run leaves one progress line.
    let progress = write(d, "run.progress", "0 1 10 100\n");
    let mut args = base.to_vec();
    args.extend([s(&progress), "-q", "--set", "simulation.cycles=600", "--set", "simulation.warmup=100"]);
    xnet_expect(d, &args, 0);
    let line = std::fs::read_to_string(&progress).unwrap();
    assert_eq!(line.split_whitespace().count(), 4, "{line:?}");
}

/// A file-size limit small enough to make MPI's start-up abort is named before it does.
#[test]
fn a_small_file_size_limit_is_named_before_mpi_starts() {
    let dir = TempDir::new().unwrap();
    let o = std::process::Command::new("sh")
        .args(["-c", &format!("ulimit -f 4000 && exec {XNET} list")])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    // 2.0 MiB in dash (512-byte blocks), 3.9 MiB in bash (KiB).
    assert!(stderr.starts_with("warning: the file-size limit (ulimit -f) is "), "{}", describe(&o));
    assert!(stderr.contains(" MiB: MPI's start-up"), "{}", describe(&o));
    assert!(stderr.contains("ulimit -f unlimited"), "{}", describe(&o));
}

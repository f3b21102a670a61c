//! Integration tests of the `xnet` binary: they run the real executable and read back the
//! HDF5 files it writes (layout: docs/output-format.md).
//!
//! Every run here is small (well under 2 s in release); configs are written into a
//! temporary directory, which is also the working directory of each run.

mod common;

use common::*;
use hdf5::H5Type;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Runs `xnet args...` in `dir` and returns its output.
fn xnet(dir: &Path, args: &[&str]) -> Output {
    Command::new(XNET)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {XNET}: {e}"))
}

fn xnet_expect(dir: &Path, args: &[&str], code: i32) -> Output {
    let out = xnet(dir, args);
    assert_eq!(out.status.code(), Some(code), "xnet {}: {}", args.join(" "), describe(&out));
    out
}

/// Starts `program args...` in `dir` with `env` set and its output captured, without
/// waiting for it.
fn start(program: impl AsRef<std::ffi::OsStr>, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    let program = program.as_ref();
    Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {program:?} (scripts/bootstrap.sh installs MPICH and h5py): {e}")
        })
}

/// Makes the quick HyperX run for hours: long enough to be interrupted.
const FOREVER: [&str; 2] = ["--set", "simulation.cycles=100000000"];

/// Starts a long `xnet run` of the quick HyperX in `dir` (`args` added, e.g. `-t 1 -o F`)
/// and checks 1.5 s later that it is still running.
fn start_long_run(dir: &Path, args: &[&str]) -> Child {
    let quick = workspace().join("configs/quick.toml");
    let mut all = vec!["run", s(&quick), "-q"];
    all.extend(FOREVER);
    all.extend(args);
    let mut child = start(XNET, dir, &all, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    if let Some(status) = child.try_wait().unwrap() {
        panic!("the long run ended by itself ({status}): {}", describe(&child.wait_with_output().unwrap()));
    }
    child
}

/// Waits up to `limit` for `child` to end; kills it and panics past that.
fn wait_within(mut child: Child, limit: Duration, what: &str) -> (Output, Duration) {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} did not end within {limit:?}: {}", describe(&child.wait_with_output().unwrap()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let waited = start.elapsed();
    (child.wait_with_output().unwrap(), waited)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write config");
    path
}

const DRAGONFLY: &str = r#"
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

const RANDOM_REGULAR: &str = r#"
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
const DEADLOCKING_RING: &str = r#"
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

// ---------------------------------------------------------------------------------------
// Reading result files
// ---------------------------------------------------------------------------------------

#[derive(H5Type, Clone, Copy, Debug)]
#[repr(C)]
struct TimeRow {
    time: u64,
    generated_packets: u64,
    delivered_packets: u64,
    in_flight: u64,
    accepted_load: f64,
}

/// A subset of the columns of `/summary`.
#[derive(H5Type, Clone, Copy, Debug)]
#[repr(C)]
struct SummaryRow {
    point: u32,
    completed: u8,
    load: f64,
    offered_load: f64,
    accepted_load: f64,
    measured_delivered: u64,
}

/// A subset of the columns of `/points/NNN/blocked_channels`.
#[derive(H5Type, Clone, Copy, Debug)]
#[repr(C)]
struct BlockedRow {
    switch: u32,
    packets: u32,
}

// ---------------------------------------------------------------------------------------
// Determinism
// ---------------------------------------------------------------------------------------

fn check_determinism(config: &str) {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "net.toml", config);
    let mut dumps = Vec::new();
    for threads in ["1", "2", "4"] {
        let out = dir.path().join(format!("t{threads}.h5"));
        xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", threads, "-o", s(&out)], 0);
        dumps.push((threads, dump(&out)));
    }
    let (_, first) = &dumps[0];
    // The comparison is not vacuous: the file has its tables, traffic went through, and
    // the environment attributes were read (they differ between thread counts).
    for path in ["/summary", "/points/000/timeseries", "/points/000/links", "/points/000/endpoints"] {
        let (_, bytes) = first.datasets.get(path).unwrap_or_else(|| panic!("{path} missing"));
        assert!(!bytes.is_empty(), "{path} is empty");
    }
    for path in ["/points/000/latency_histogram", "/points/000/vc_phits", "/points/000/blocked_channels"] {
        assert!(first.datasets.contains_key(path), "{path} missing");
    }
    assert!(first.attrs.contains_key("/@status"), "root attributes not read: {:?}", first.attrs.keys());
    for (threads, d) in &dumps {
        assert_eq!(d.attrs["/@threads"], format!("uint32 shape [] = [{threads}]"));
    }
    let file = open(&dir.path().join("t1.h5"));
    assert_eq!(attr_str(&file, "status"), "completed");
    assert!(attr_u64(&file.group("points/000").unwrap(), "delivered_total") > 1000);
    for (threads, d) in &dumps[1..] {
        let diffs = differences(first, d);
        assert!(diffs.is_empty(), "-t 1 and -t {threads} differ:\n{}", diffs.join("\n"));
    }
    // ... and it would notice a different run: another seed changes the data.
    let other = dir.path().join("seed.h5");
    xnet_expect(
        dir.path(),
        &["run", s(&cfg), "-q", "-t", "1", "--set", "simulation.seed=99", "-o", s(&other)],
        0,
    );
    let diffs = differences(first, &dump(&other));
    assert!(diffs.iter().any(|d| d.starts_with("/points/000/timeseries")), "seed change not seen: {diffs:?}");
}

#[test]
fn dragonfly_ugal_results_are_identical_for_1_2_and_4_threads() {
    check_determinism(DRAGONFLY);
}

#[test]
fn random_regular_minimal_results_are_identical_for_1_2_and_4_threads() {
    check_determinism(RANDOM_REGULAR);
}

// ---------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------

#[test]
fn run_without_config_uses_the_built_in_quick_hyperx() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("tmp").join("x.h5");
    std::fs::create_dir(out.parent().unwrap()).unwrap();
    let args =
        ["run", "-q", "-o", s(&out), "--set", "simulation.cycles=2000", "--set", "simulation.warmup=500"];
    let o = xnet_expect(dir.path(), &args, 0);
    assert!(o.stdout.is_empty(), "-q still printed: {}", describe(&o));
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "completed");
    assert_eq!(attr_str(&f, "format"), "xnet-results-1");
    assert!(attr_str(&f, "topology").starts_with("hyperx"), "{}", attr_str(&f, "topology"));
    assert_eq!(attr_u64(&f, "switches"), 64);
    assert_eq!(attr_u64(&f, "endpoints"), 512);
    let (cycles, period) = (attr_u64(&f, "cycles"), attr_u64(&f, "sample_period"));
    assert_eq!((cycles, period, attr_u64(&f, "warmup")), (2000, 500, 500));
    let g = f.group("points/000").unwrap();
    assert_eq!(attr_str(&g, "status"), "completed");
    assert_eq!(attr_f64(&g, "load"), 0.4);
    assert_eq!(attr_u64(&g, "time_reached"), 2000);
    let ts: Vec<TimeRow> = rows(&f, "points/000/timeseries");
    assert_eq!(ts.len() as u64, cycles / period, "{ts:?}");
    assert_eq!(ts.iter().map(|r| r.time).collect::<Vec<_>>(), [500, 1000, 1500, 2000]);
    assert!(ts.iter().all(|r| r.delivered_packets > 0 && r.accepted_load > 0.3), "{ts:?}");
    let summary: Vec<SummaryRow> = rows(&f, "summary");
    assert_eq!(summary.len(), 1);
    let r = summary[0];
    assert_eq!((r.point, r.completed, r.load), (0, 1, 0.4));
    assert!((r.offered_load - 0.4).abs() < 0.02, "{r:?}");
    assert!((r.accepted_load - r.offered_load).abs() < 0.02, "{r:?}");
    assert_eq!(attr_f64(&g, "accepted_load"), r.accepted_load);
    // Timings, work and memory are recorded.
    assert!(attr_f64(&g, "wall_seconds") > 0.0 && attr_f64(&f, "wall_seconds") > 0.0);
    let hops = attr_u64(&g, "packet_hops");
    assert!(hops > ts.iter().map(|r| r.delivered_packets).sum::<u64>(), "{hops}");
    assert!(attr_f64(&g, "packet_hops_per_second") > 0.0);
    assert!(attr_u64(&f, "peak_rss_bytes") > 1 << 20);
    assert_eq!((attr_u64(&f, "ranks"), attr_u64(&g, "ranks")), (1, 1));
}

#[test]
fn readme_sample_output_is_what_the_default_run_prints() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let sample =
        readme.lines().skip_while(|l| !l.starts_with("   load   offered")).nth(1).expect("README sample row");
    let dir = TempDir::new().unwrap();
    let o = xnet_expect(dir.path(), &["run", "-t", "1"], 0);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let row = stdout.lines().skip_while(|l| !l.starts_with("   load   offered")).nth(1).expect("summary row");
    // Everything up to the status column is deterministic; wall time and speed are not.
    let figures = |line: &str| line.split_whitespace().take(9).map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        figures(sample),
        figures(row),
        "README.md's sample output is stale; the run printed:\n{stdout}"
    );
    assert!(readme.contains("results: xnet-default.h5") && stdout.contains("results: xnet-default.h5"));
}

#[test]
fn sweep_writes_one_point_per_load_and_a_summary_row_each() {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "rrg.toml", RANDOM_REGULAR);
    let out = dir.path().join("sweep.h5");
    xnet_expect(dir.path(), &["sweep", s(&cfg), "--loads", "0.1,0.3", "-q", "-t", "2", "-o", s(&out)], 0);
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "completed");
    let points = f.group("points").unwrap().member_names().unwrap();
    assert_eq!(points, ["000", "001"]);
    for (name, load) in [("000", 0.1), ("001", 0.3)] {
        let g = f.group(&format!("points/{name}")).unwrap();
        assert_eq!(attr_f64(&g, "load"), load, "point {name}");
        assert_eq!(attr_str(&g, "status"), "completed", "point {name}");
        let ts: Vec<TimeRow> = rows(&f, &format!("points/{name}/timeseries"));
        assert_eq!(ts.len(), 30, "point {name}");
    }
    let summary: Vec<SummaryRow> = rows(&f, "summary");
    assert_eq!(summary.len(), 2, "{summary:?}");
    assert_eq!(summary.iter().map(|r| (r.point, r.load)).collect::<Vec<_>>(), [(0, 0.1), (1, 0.3)]);
    assert!(summary.iter().all(|r| r.completed == 1 && r.measured_delivered > 0), "{summary:?}");
    assert!(summary[1].accepted_load > summary[0].accepted_load + 0.1, "{summary:?}");
    for r in &summary {
        assert!((r.accepted_load - r.load).abs() < 0.03, "{r:?}");
    }
}

#[test]
fn deadlock_exits_3_and_keeps_the_data() {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "ring.toml", DEADLOCKING_RING);
    let out = dir.path().join("ring.h5");
    let o = xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", "2", "-o", s(&out)], 3);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("deadlock") && !stderr.contains("panicked"), "{}", describe(&o));
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "deadlock");
    let g = f.group("points/000").unwrap();
    assert_eq!(attr_str(&g, "status"), "deadlock");
    let reached = attr_u64(&g, "time_reached");
    assert!(reached < 50_000 && reached.is_multiple_of(100), "time_reached {reached}");
    let blocked: Vec<BlockedRow> = rows(&f, "points/000/blocked_channels");
    assert!(!blocked.is_empty(), "no blocked channels recorded");
    assert!(blocked.iter().all(|b| b.switch < 8 && b.packets > 0), "{blocked:?}");
    let ts: Vec<TimeRow> = rows(&f, "points/000/timeseries");
    assert_eq!(ts.len() as u64, reached / 100);
    assert!(ts.last().unwrap().in_flight > 0, "{ts:?}");
    let summary: Vec<SummaryRow> = rows(&f, "summary");
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0].completed, 0);
}

#[test]
fn sigint_exits_130_and_keeps_the_time_series() {
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("long.h5");
    let child = start_long_run(dir.path(), &["-t", "2", "-o", s(&out)]);
    let pid = child.id().to_string();
    let kill = Command::new("kill").args(["-INT", &pid]).status().expect("run kill");
    assert!(kill.success(), "kill -INT {pid} failed");
    let (o, _) = wait_within(child, Duration::from_secs(30), "xnet after SIGINT");
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"), "{}", describe(&o));
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "interrupted");
    let g = f.group("points/000").unwrap();
    assert_eq!(attr_str(&g, "status"), "interrupted");
    let reached = attr_u64(&g, "time_reached");
    assert!(reached > 0 && reached < 100_000_000, "time_reached {reached}");
    let ts: Vec<TimeRow> = rows(&f, "points/000/timeseries");
    assert!(!ts.is_empty(), "no time-series rows");
    assert_eq!(ts.last().unwrap().time, reached);
    assert_eq!(ts.len() as u64, reached / 500);
    assert_eq!(rows::<SummaryRow>(&f, "summary").len(), 1);
}

#[test]
fn an_output_file_another_run_holds_is_refused_and_left_intact() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // Both runs use the default name, xnet-quick.h5 in the working directory.
    let held = dir.path().join("xnet-quick.h5");
    let first = start_long_run(dir.path(), &["-t", "1"]);
    let size_before = std::fs::metadata(&held).expect("the first run's file").len();
    for args in [
        vec!["run", s(&quick), "-q"],
        vec!["run", s(&quick), "-q", "-o", s(&held)],
        vec!["routes", s(&quick), "-o", s(&held)],
    ] {
        let o = xnet(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let what = format!("xnet {}: {}", args.join(" "), describe(&o));
        assert_eq!(o.status.code(), Some(1), "{what}");
        assert!(stderr.contains("xnet-quick.h5") && stderr.contains("in use by another process"), "{what}");
        assert!(std::fs::metadata(&held).unwrap().len() >= size_before, "the held file shrank; {what}");
    }
    let kill = Command::new("kill").args(["-INT", &first.id().to_string()]).status().expect("run kill");
    assert!(kill.success());
    let o = first.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    // The first run's file is whole: its point and summary read back.
    let f = open(&held);
    assert_eq!(attr_str(&f, "status"), "interrupted");
    assert_eq!(rows::<SummaryRow>(&f, "summary").len(), 1);
    assert!(!rows::<TimeRow>(&f, "points/000/timeseries").is_empty());
    drop(f);
    // A reader holding the file open with HDF5's locking keeps it too. The reader is a
    // child process, so that its lock ends with it (see common::open).
    if let Some(python) = common::python_with("h5py") {
        let hold = "import sys, time, h5py; f = h5py.File(sys.argv[1], 'r'); print('open', flush=True); time.sleep(30)";
        let mut reader = start(&python, dir.path(), &["-c", hold, s(&held)], &[]);
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(reader.stdout.take().unwrap()), &mut line)
            .unwrap();
        assert_eq!(line.trim(), "open");
        let o = xnet(dir.path(), &["run", s(&quick), "-q"]);
        let _ = reader.kill();
        let _ = reader.wait();
        assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("in use by another process"), "{}", describe(&o));
    }
    // Once nobody holds it, the file is free to be replaced.
    xnet_expect(dir.path(), &["run", s(&quick), "-q"], 0);
    assert_eq!(attr_str(&open(&held), "status"), "completed");
}

#[test]
fn an_output_naming_the_config_or_a_file_that_is_not_hdf5_is_refused() {
    let dir = TempDir::new().unwrap();
    let config = write(
        dir.path(),
        "net.toml",
        &std::fs::read_to_string(workspace().join("configs/quick.toml")).unwrap(),
    );
    let notes = write(dir.path(), "notes.txt", "my notes\n");
    let config_text = std::fs::read_to_string(&config).unwrap();
    for (args, expected) in [
        (vec!["run", s(&config), "-q", "-o", s(&config)], "is the input configuration"),
        (vec!["run", s(&config), "-q", "-o", "./net.toml"], "is the input configuration"),
        (vec!["sweep", s(&config), "-q", "--loads", "0.1", "-o", s(&config)], "is the input configuration"),
        (vec!["routes", s(&config), "-o", s(&config)], "is the input configuration"),
        (vec!["run", s(&config), "-q", "-o", s(&notes)], "is not an HDF5 file"),
    ] {
        let o = xnet(dir.path(), &args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        let what = format!("xnet {}: {}", args.join(" "), describe(&o));
        assert_eq!(o.status.code(), Some(1), "{what}");
        assert!(stderr.starts_with("error: ") && stderr.contains(expected), "{what}");
    }
    assert_eq!(std::fs::read_to_string(&config).unwrap(), config_text);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "my notes\n");
    // A result file of an earlier run is replaced.
    let out = dir.path().join("r.h5");
    for _ in 0..2 {
        xnet_expect(dir.path(), &["run", s(&config), "-q", "-o", s(&out)], 0);
    }
    assert_eq!(attr_str(&open(&out), "status"), "completed");
    // A run that fails while building (after claiming its file) leaves an earlier file as
    // it was and makes no new one.
    let torus = workspace().join("configs/mesh-8x8.toml");
    let failing = ["run", s(&torus), "-q", "--set", "topology.kind=torus", "--set", "routing.algorithm=lash"];
    let fresh = dir.path().join("fresh.h5");
    for target in [&out, &fresh] {
        let mut args = failing.to_vec();
        args.extend(["--set", "router.vcs=1", "-o", s(target)]);
        let o = xnet(dir.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
        assert!(String::from_utf8_lossy(&o.stderr).contains("lash needs"), "{}", describe(&o));
    }
    assert_eq!(attr_str(&open(&out), "status"), "completed");
    assert!(!fresh.exists(), "a failed run left {}", fresh.display());
}

#[test]
fn sigint_during_a_long_routing_build_stops_within_seconds_and_leaves_no_file() {
    // LASH on the DAVC paper's RRG takes about two minutes to lay out its layers.
    let dir = TempDir::new().unwrap();
    let rrg = workspace().join("configs/rrg-876-23-17.toml");
    let lash = ["--set", "routing.algorithm=lash", "--set", "router.vcs=16"];
    for (command, out) in [("run", "run.h5"), ("routes", "routes.h5")] {
        let mut args = vec![command, s(&rrg), "-t", "1", "-o", out];
        args.extend(lash);
        let child = start(XNET, dir.path(), &args, &[]);
        std::thread::sleep(Duration::from_millis(2000));
        let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
        assert!(kill.success(), "xnet {} ended before the signal", args.join(" "));
        let (o, waited) = wait_within(child, Duration::from_secs(30), "a LASH build after SIGINT");
        assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
        assert!(waited < Duration::from_secs(5), "took {waited:?} to stop");
        assert!(String::from_utf8_lossy(&o.stderr).contains("interrupted while"), "{}", describe(&o));
        assert!(!dir.path().join(out).exists(), "xnet {command} left {out}");
    }
}

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Runs a command that must fail with exit code 1, a one-line `error:` naming each of
/// `expected`, no panic, and no output file.
fn expect_error(dir: &Path, args: &[&str], expected: &[&str]) {
    let out = dir.join("never.h5");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["-q", "-o", s(&out)]);
    let o = xnet(dir, &all);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let what = format!("xnet {}: {}", all.join(" "), describe(&o));
    assert_eq!(o.status.code(), Some(1), "{what}");
    assert!(!stderr.contains("panicked"), "{what}");
    assert!(stderr.starts_with("error: "), "{what}");
    for e in expected {
        assert!(stderr.contains(e), "stderr lacks {e:?}; {what}");
    }
    assert!(!out.exists(), "an output file was created; {what}");
}

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

// ---------------------------------------------------------------------------------------
// topo and list
// ---------------------------------------------------------------------------------------

/// The value column of the line of `text` whose first word is `key`.
fn field<'a>(text: &'a str, key: &str) -> &'a str {
    let line = text.lines().find(|l| l.split_whitespace().next() == Some(key));
    let line = line.unwrap_or_else(|| panic!("no `{key}` line in:\n{text}"));
    line.split_whitespace().nth(1).unwrap_or("")
}

#[test]
fn topo_describes_the_quick_hyperx() {
    let quick = workspace().join("configs/quick.toml");
    let o = xnet_expect(&workspace(), &["topo", s(&quick)], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(field(&out, "switches"), "64", "{out}");
    assert_eq!(field(&out, "endpoints"), "512", "{out}");
    assert_eq!(field(&out, "diameter"), "2", "{out}");
    assert_eq!(field(&out, "connected"), "true", "{out}");
}

#[test]
fn a_network_too_large_for_memory_is_refused_before_it_is_built() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // A million switches of 2,006 ports: about 640 GiB, far more than any test machine.
    let huge = ["--set", "topology.sides=[1000, 1000]"];
    let started = Instant::now();
    let mut run = vec!["run", s(&quick)];
    run.extend(huge);
    expect_error(
        dir.path(),
        &run,
        &["needs about", "GiB per rank (routers ", "is available there", "--no-memory-check"],
    );
    // `topo` prints the estimate, then refuses to build the 45 GiB network description.
    let mut topo = vec!["topo", s(&quick)];
    topo.extend(huge);
    let o = xnet_expect(dir.path(), &topo, 1);
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(out.starts_with("memory          ") && out.contains("GiB, network "), "{}", describe(&o));
    assert!(out.contains("past saturation: +"), "{}", describe(&o));
    assert!(err.contains("GiB to build the network"), "{}", describe(&o));
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
}

#[test]
fn the_memory_check_follows_the_memory_available_and_can_be_overridden() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("small.h5");
    let args = ["run", s(&quick), "-q", "-t", "1", "-o", s(&out)];
    // 20 MB is less than the program itself.
    let little = [("XNET_TEST_AVAILABLE_MEMORY", "20000000")];
    let (o, _) =
        wait_within(start(XNET, dir.path(), &args, &little), Duration::from_secs(30), "a refused run");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("only 19.1 MiB is available there (XNET_TEST_AVAILABLE_MEMORY)"), "{err}");
    assert!(!out.exists());
    let mut anyway = args.to_vec();
    anyway.push("--no-memory-check");
    let (o, _) =
        wait_within(start(XNET, dir.path(), &anyway, &little), Duration::from_secs(30), "a forced run");
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    assert_eq!(attr_str(&open(&out), "status"), "completed");
}

#[test]
fn the_memory_estimate_is_close_to_the_measured_peak() {
    let dir = TempDir::new().unwrap();
    let short = [
        "simulation.cycles=300",
        "simulation.warmup=100",
        "simulation.sample_period=100",
        "traffic.load=0.1",
    ];
    let cases: [(&str, &[&str]); 2] = [
        ("quick.toml", &["topology.sides=[16,16,16]", "topology.endpoints_per_switch=16", "router.vcs=4"]),
        ("rrg-876-23-17.toml", &["topology.switches=4096"]),
    ];
    for (config, sets) in cases {
        let config = workspace().join("configs").join(config);
        let out = dir.path().join("peak.h5");
        let mut args = vec!["run", s(&config), "-q", "-t", "2", "-o", s(&out)];
        for set in short.iter().chain(sets) {
            args.extend(["--set", set]);
        }
        xnet_expect(dir.path(), &args, 0);
        let f = open(&out);
        let (estimate, peak) = (attr_u64(&f, "memory_estimate_bytes"), attr_u64(&f, "peak_rss_bytes"));
        let ratio = estimate as f64 / peak as f64;
        assert!((0.75..=1.35).contains(&ratio), "{args:?}: estimate {estimate}, peak {peak}");
    }
}

#[test]
fn a_file_that_cannot_grow_ends_the_run_and_stays_readable() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // A file-size limit of 1.5 MiB stands in for a full disk (both are checked the same
    // way). UCX's shared-memory transport would hit the limit too: TCP instead.
    let script = format!(
        "trap '' XFSZ; ulimit -f 1500; exec {XNET} run {} -q -t 1 --set simulation.cycles=200000 \
         --set simulation.sample_period=2 -o full.h5",
        s(&quick)
    );
    let child = start("bash", dir.path(), &["-c", &script], &[("UCX_TLS", "self,tcp")]);
    let (o, _) = wait_within(child, Duration::from_secs(60), "a run whose file cannot grow");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("error: writing full.h5: writing the time series: the file cannot grow: ")
            && stderr.contains("(room under the file-size limit (ulimit -f))"),
        "{}",
        describe(&o)
    );
    let f = open(&dir.path().join("full.h5"));
    assert_eq!(attr_str(&f, "status"), "failed");
    assert!(attr_str(&f, "status_message").contains("the file cannot grow"));
    let rows = f.dataset("points/000/timeseries").unwrap().shape()[0];
    assert!(rows > 1000, "{rows} rows kept");
}

#[test]
fn list_names_topologies_routings_and_patterns() {
    let o = xnet_expect(&workspace(), &["list"], 0);
    let out = String::from_utf8_lossy(&o.stdout);
    let firsts: Vec<&str> = out.lines().filter_map(|l| l.split_whitespace().next()).collect();
    for name in
        ["topologies:", "routings:", "dragonfly", "hyperx", "dor", "minimal", "dragonfly_ugal", "uniform"]
    {
        assert!(firsts.contains(&name), "`{name}` not listed:\n{out}");
    }
}

// ---------------------------------------------------------------------------------------
// scripts/read_results.py
// ---------------------------------------------------------------------------------------

#[test]
fn output_format_doc_matches_real_files() {
    let Some(python) = common::python_with("h5py") else {
        eprintln!(
            "\n*** SKIPPED: h5py not installed (tried $XNET_PYTHON, .venv/bin/python3, python3); \
             docs/output-format.md was NOT checked against a file ***\n"
        );
        return;
    };
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "df.toml", DRAGONFLY);
    let sweep = d.join("sweep.h5");
    xnet_expect(d, &["sweep", s(&cfg), "--loads", "0.1,0.3", "-q", "-t", "1", "-o", s(&sweep)], 0);
    let ring = write(d, "ring.toml", DEADLOCKING_RING);
    let deadlock = d.join("ring.h5");
    xnet_expect(d, &["run", s(&ring), "-q", "-t", "1", "-o", s(&deadlock)], 3);
    let script = workspace().join("scripts/check_output_format.py");
    let check = |doc: &Path| {
        Command::new(&python).arg(&script).arg(doc).arg(&sweep).arg(&deadlock).output().expect("run python")
    };
    let o = check(&workspace().join("docs/output-format.md"));
    assert_eq!(o.status.code(), Some(0), "the document and the files differ: {}", describe(&o));
    // The check does see a drift: a column documented with another type.
    let doc = std::fs::read_to_string(workspace().join("docs/output-format.md")).unwrap();
    let drifted = write(d, "drifted.md", &doc.replacen("| `completed` | u32 |", "| `completed` | u8 |", 1));
    let o = check(&drifted);
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("column `completed` is u32, documented u8"),
        "{}",
        describe(&o)
    );
}

#[test]
fn a_running_file_can_be_watched_with_h5py() {
    let Some(python) = common::python_with("h5py") else {
        eprintln!("\n*** SKIPPED: h5py not installed; reading a running file was NOT tested ***\n");
        return;
    };
    let dir = TempDir::new().unwrap();
    let out = dir.path().join("live.h5");
    let mut run = start_long_run(dir.path(), &["-t", "1", "-o", s(&out)]);
    // As docs/output-format.md says: the default open meets the run's lock; without
    // locking the rows so far read back, and a later open sees more.
    let watch = r#"
import sys, time, h5py
try:
    h5py.File(sys.argv[1], "r")
    print("default open: allowed")
except OSError as e:
    print("default open: refused (%s)" % ("lock" in str(e)))
counts = []
for _ in range(2):
    with h5py.File(sys.argv[1], "r", locking=False) as f:
        counts.append(len(f["points/000/timeseries"]))
        status = f.attrs["status"]
    time.sleep(1.0)
print(status, counts[0], counts[1])
"#;
    let o = Command::new(&python).args(["-c", watch, s(&out)]).output().expect("run python");
    let read =
        Command::new(&python).arg(workspace().join("scripts/read_results.py")).arg(&out).output().unwrap();
    let _ = Command::new("kill").args(["-INT", &run.id().to_string()]).status();
    let _ = run.wait();
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("default open: refused (True)"), "{}", describe(&o));
    let last = text.lines().last().unwrap_or("");
    let fields: Vec<&str> = last.split_whitespace().collect();
    assert_eq!(fields.first(), Some(&"running"), "{}", describe(&o));
    let (first, second): (u64, u64) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    assert!(first > 0 && second > first, "rows {first} then {second}: {}", describe(&o));
    assert_eq!(read.status.code(), Some(0), "{}", describe(&read));
    assert!(String::from_utf8_lossy(&read.stdout).contains("running"), "{}", describe(&read));
}

#[test]
fn read_results_script_prints_a_result_file() {
    let Some(python) = common::python_with("h5py") else {
        eprintln!(
            "\n*** SKIPPED: h5py not installed (tried $XNET_PYTHON, .venv/bin/python3, python3); \
             scripts/read_results.py was NOT tested ***\n"
        );
        return;
    };
    let script = workspace().join("scripts/read_results.py");
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "df.toml", DRAGONFLY);
    let out = dir.path().join("df.h5");
    xnet_expect(dir.path(), &["sweep", s(&cfg), "--loads", "0.1,0.3", "-q", "-t", "1", "-o", s(&out)], 0);
    let py = |file: &Path| Command::new(&python).arg(&script).arg(file).output().expect("run python");
    let o = py(&out);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", describe(&o));
    let f = open(&out);
    for expected in [
        "completed".to_string(),
        attr_str(&f, "topology"),
        attr_str(&f, "routing"),
        "accepted_load".into(),
        "point 000".into(),
        "point 001".into(),
        "time=3000".into(),
    ] {
        assert!(text.contains(&expected), "output lacks {expected:?}:\n{text}");
    }
    // Unreadable input: not HDF5 at all, and missing.
    let junk = write(dir.path(), "junk.h5", "not an HDF5 file");
    for file in [junk, dir.path().join("missing.h5")] {
        let o = py(&file);
        assert_ne!(o.status.code(), Some(0), "{}: {}", file.display(), describe(&o));
        assert!(!String::from_utf8_lossy(&o.stderr).contains("Traceback"), "{}", describe(&o));
    }
}

const HYPERX: &str = r#"
[simulation]
cycles = 3000
warmup = 500
seed = 5
sample_period = 250
[topology]
kind = "hyperx"
sides = [4, 4]
endpoints_per_switch = 4
link_latency = 2
[router]
vcs = 2
packet_size = 8
input_buffer = 32
output_buffer = 16
[routing]
algorithm = "minimal"
[traffic]
pattern = "uniform"
load = 0.5
"#;

/// Runs `xnet args` under `mpiexec -n ranks` (MPICH's hydra, oversubscribing as needed).
fn mpiexec(dir: &Path, ranks: &str, args: &[&str]) -> Output {
    let mut full = vec!["-n", ranks, XNET];
    full.extend_from_slice(args);
    let out =
        Command::new("mpiexec").args(&full).current_dir(dir).stdin(Stdio::null()).output().unwrap_or_else(
            |e| panic!("cannot start mpiexec ({e}): run scripts/bootstrap.sh, which installs MPICH"),
        );
    assert_eq!(out.status.code(), Some(0), "mpiexec {}: {}", full.join(" "), describe(&out));
    out
}

#[test]
fn capped_and_oversubscribed_threads_are_reported() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    // The quick HyperX has 64 switches: -t 1000 runs 64 threads, more than this machine's cores.
    let o = xnet_expect(
        dir.path(),
        &[
            "run",
            s(&quick),
            "-q",
            "-t",
            "1000",
            "--set",
            "simulation.cycles=300",
            "--set",
            "simulation.warmup=100",
            "-o",
            "a.h5",
        ],
        0,
    );
    assert!(stderr(&o).contains("warning: -t 1000 capped at 64 thread(s) per rank"), "{}", describe(&o));
    assert!(stderr(&o).contains("runs 64 simulation threads (1 rank(s)) on"), "{}", describe(&o));
    let o = xnet_expect(dir.path(), &["run", s(&quick), "-q", "-t", "1", "-o", "b.h5"], 0);
    assert!(!stderr(&o).contains("warning"), "{}", describe(&o));
    // Two ranks with as many threads each as there are cores.
    let cores = std::thread::available_parallelism().unwrap().get().to_string();
    let o = mpiexec(
        dir.path(),
        "2",
        &[
            "run",
            s(&quick),
            "-q",
            "-t",
            &cores,
            "--set",
            "simulation.cycles=300",
            "--set",
            "simulation.warmup=100",
            "-o",
            "c.h5",
        ],
    );
    let expected = format!(
        "runs {} simulation threads (2 rank(s)) on {cores} core(s)",
        2 * cores.parse::<u32>().unwrap()
    );
    assert!(stderr(&o).contains(&expected), "{}", describe(&o));
}

#[test]
fn a_rank_that_fails_alone_ends_the_job_and_is_named() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // Rank 1 cannot read its configuration; rank 0 can and goes on into the run.
    let script = format!(
        "r=${{PMI_RANK:-$OMPI_COMM_WORLD_RANK}}; if [ \"$r\" = 1 ]; then c=missing.toml; else c={}; fi; \
         exec {XNET} run \"$c\" -q -t 1 --set simulation.cycles=100000000 -o out.h5",
        s(&quick)
    );
    let child = start("mpiexec", dir.path(), &["-n", "2", "sh", "-c", &script], &[]);
    let (o, _) = wait_within(child, Duration::from_secs(30), "a job with a failed rank");
    assert_ne!(o.status.code(), Some(0), "{}", describe(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("error: rank 1 of 2: cannot read config missing.toml"), "{}", describe(&o));
    // An error every rank meets is told once, by rank 0.
    let o = Command::new("mpiexec")
        .args(["-n", "2", XNET, "run", "-q", "--set", "router.vcs=0", "-o", "bad.h5"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("router.vcs: must be in 1..=64").count(), 1, "{}", describe(&o));
    assert!(stderr.contains("error: rank 0 of 2:"), "{}", describe(&o));
}

#[test]
fn the_memory_of_all_ranks_on_a_host_is_checked_together() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    // One rank of the quick HyperX needs about 25 MiB: 40 MB fits one, not two.
    let args = ["-n", "2", XNET, "run", s(&quick), "-q", "-t", "1", "-o", "two.h5"];
    let child = start("mpiexec", dir.path(), &args, &[("XNET_TEST_AVAILABLE_MEMORY", "40000000")]);
    let (o, waited) = wait_within(child, Duration::from_secs(30), "a refused two-rank run");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("error: rank 0 of 2: the configuration needs about"), "{}", describe(&o));
    assert!(stderr.contains(": 2 rank(s) x "), "{}", describe(&o));
    assert!(waited < Duration::from_secs(10), "took {waited:?}");
    assert!(!dir.path().join("two.h5").exists());
}

/// `mpiexec` arguments of a long two-rank run of `quick` writing `out`.
fn two_rank_long_run<'a>(quick: &'a Path, out: &'a Path) -> Vec<&'a str> {
    let mut args = vec!["-n", "2", XNET, "run", s(quick), "-q", "-t", "1", "-o", s(out)];
    args.extend(FOREVER);
    args
}

#[test]
fn a_rank_failing_mid_run_ends_the_job_and_leaves_a_failed_readable_file() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("failed.h5");
    // Switch 63 of the quick HyperX is in the second rank's partition.
    let args = two_rank_long_run(&quick, &out);
    let child = start("mpiexec", dir.path(), &args, &[("XNET_TEST_FAIL_AT", "63:2000")]);
    let (o, waited) = wait_within(child, Duration::from_secs(30), "a job whose rank 1 failed");
    assert_eq!(o.status.code(), Some(1), "{}", describe(&o));
    assert!(waited < Duration::from_secs(10), "took {waited:?}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("rank 1, partition 1 failed: failure injected"), "{}", describe(&o));
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "failed");
    assert!(attr_str(&f, "status_message").contains("rank 1"), "{}", attr_str(&f, "status_message"));
    let ts: Vec<TimeRow> = rows(&f, "points/000/timeseries");
    assert!(!ts.is_empty() && ts.last().unwrap().time <= 2000, "{ts:?}");
}

#[test]
fn sigterm_to_a_non_zero_rank_stops_the_whole_job() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("long.h5");
    let args = two_rank_long_run(&quick, &out);
    let child = start("mpiexec", dir.path(), &args, &[]);
    std::thread::sleep(Duration::from_millis(3000));
    // Rank 1 is the process whose environment says so (MPICH: PMI_RANK, Open MPI: OMPI_COMM_WORLD_RANK).
    let rank1 = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let is_ours = String::from_utf8_lossy(&cmdline).contains(s(&out));
            is_ours && env.split(|&b| b == 0).any(|v| v == b"PMI_RANK=1" || v == b"OMPI_COMM_WORLD_RANK=1")
        })
        .expect("rank 1's process");
    let kill = Command::new("kill").args(["-TERM", &rank1.to_string()]).status().expect("run kill");
    assert!(kill.success());
    let (o, waited) = wait_within(child, Duration::from_secs(30), "the job after SIGTERM to rank 1");
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    assert!(waited < Duration::from_secs(10), "the job took {waited:?} to stop");
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "interrupted");
    assert_eq!(rows::<SummaryRow>(&f, "summary").len(), 1);
}

/// Identical results for 1 rank x 1 thread, 1 x 2, 2 x 1, 2 x 2 and 4 x 1 (oversubscribed).
fn check_ranks(config: &str) {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "net.toml", config);
    let reference = dir.path().join("1x1.h5");
    xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", "1", "-o", s(&reference)], 0);
    let first = dump(&reference);
    assert!(attr_u64(&open(&reference).group("points/000").unwrap(), "delivered_total") > 1000);
    let one_by_two = dir.path().join("1x2.h5");
    xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", "2", "-o", s(&one_by_two)], 0);
    let mut runs = vec![("1x2", one_by_two)];
    for (ranks, threads) in [("2", "1"), ("2", "2"), ("4", "1")] {
        let out = dir.path().join(format!("{ranks}x{threads}.h5"));
        mpiexec(dir.path(), ranks, &["run", s(&cfg), "-q", "-t", threads, "-o", s(&out)]);
        let file = open(&out);
        assert_eq!(attr_u64(&file, "ranks").to_string(), ranks, "the run did not use {ranks} MPI ranks");
        runs.push((
            if ranks == "2" && threads == "1" {
                "2x1"
            } else if ranks == "2" {
                "2x2"
            } else {
                "4x1"
            },
            out,
        ));
    }
    for (layout, path) in &runs {
        let diffs = differences(&first, &dump(path));
        assert!(diffs.is_empty(), "1x1 and {layout} differ:\n{}", diffs.join("\n"));
    }
    // Per-rank figures are recorded for every rank.
    let four = open(&dir.path().join("4x1.h5"));
    let sent =
        four.group("points/000").unwrap().attr("rank_messages_sent").unwrap().read_raw::<u64>().unwrap();
    assert_eq!(sent.len(), 4);
    assert!(sent.iter().all(|&m| m > 0), "every rank exchanges messages: {sent:?}");
}

#[test]
fn mpi_dragonfly_is_identical_for_every_rank_and_thread_layout() {
    check_ranks(DRAGONFLY);
}

#[test]
fn mpi_hyperx_is_identical_for_every_rank_and_thread_layout() {
    check_ranks(HYPERX);
}

#[test]
fn mpi_random_regular_is_identical_for_every_rank_and_thread_layout() {
    check_ranks(RANDOM_REGULAR);
}

/// The million-endpoint configurations, shrunk (same routing, VC policy, latencies and
/// traffic; smaller sizes), give the same results on 1 and 2 MPI ranks.
#[test]
fn million_endpoint_configs_shrunk_are_identical_on_1_and_2_ranks() {
    let shrunk: [(&str, &str, &[&str]); 3] = [
        ("dragonfly-23-46-23", "dragonfly_ugal", &["topology.p=3", "topology.a=6", "topology.h=3"]),
        (
            "rrg-65536-48-32",
            "minimal",
            &["topology.switches=512", "topology.degree=8", "topology.endpoints_per_switch=4"],
        ),
        ("hyperx-3d-32", "minimal", &["topology.sides=[4, 4, 4]", "topology.endpoints_per_switch=4"]),
    ];
    for (name, routing, sizes) in shrunk {
        let dir = TempDir::new().unwrap();
        let cfg = workspace().join("configs").join(format!("{name}.toml"));
        let mut args = vec!["run", s(&cfg), "-q", "-t", "1"];
        for o in ["simulation.cycles=3000", "simulation.warmup=1000", "simulation.sample_period=500"]
            .iter()
            .chain(sizes)
        {
            args.extend(["--set", o]);
        }
        let (one, two) = (dir.path().join("1.h5"), dir.path().join("2.h5"));
        xnet_expect(dir.path(), &[&args[..], &["-o", s(&one)]].concat(), 0);
        mpiexec(dir.path(), "2", &[&args[..], &["-o", s(&two)]].concat());
        let (a, b) = (open(&one), open(&two));
        assert_eq!(attr_u64(&b, "ranks"), 2, "{name}: the run did not use 2 MPI ranks");
        assert_eq!(attr_str(&a, "routing"), routing, "{name}");
        assert!(attr_u64(&a.group("points/000").unwrap(), "delivered_total") > 1000, "{name}");
        let diffs = differences(&dump(&one), &dump(&two));
        assert!(diffs.is_empty(), "{name}: 1 and 2 ranks differ:\n{}", diffs.join("\n"));
    }
}

#[test]
fn routes_compares_routings_side_by_side_and_flags_cyclic_ones() {
    let dir = TempDir::new().unwrap();
    let mesh = write(
        dir.path(),
        "mesh.toml",
        r#"
[simulation]
cycles = 100
[topology]
kind = "mesh"
sides = [4, 4]
endpoints_per_switch = 1
[router]
vcs = 4
packet_size = 4
input_buffer = 8
output_buffer = 8
[routing]
algorithm = "dor"
[traffic]
pattern = "uniform"
load = 0.1
"#,
    );
    let out = dir.path().join("cmp.h5");
    let o = xnet_expect(dir.path(), &["routes", s(&mesh), "--compare", "dor,up_down,lash", "-o", s(&out)], 0);
    let text = String::from_utf8_lossy(&o.stdout);
    for name in ["dor", "up_down", "lash", "average routing distance", "VCs used"] {
        assert!(text.contains(name), "{name} missing from:\n{text}");
    }
    let f = open(&out);
    assert_eq!(attr_str(&f, "routings"), "dor,up_down,lash");
    for (i, routing) in ["dor", "up_down", "lash"].iter().enumerate() {
        let g = f.group(&format!("routings/{i:03}")).unwrap();
        assert_eq!(&attr_str(&g, "routing"), routing);
        // Every routing here is minimal on a mesh: the survey's ARD for 4x4 is 3.5.
        assert_eq!(attr_f64(&g, "average_routing_distance"), 3.5);
    }
    // DOR on a torus ring with one VC and no datelines is cyclic: exit code 4.
    let ring = write(
        dir.path(),
        "ring.toml",
        &std::fs::read_to_string(&mesh)
            .unwrap()
            .replace("kind = \"mesh\"", "kind = \"torus\"")
            .replace("[4, 4]", "[6]"),
    );
    let bad = dir.path().join("ring.h5");
    let args = ["routes", s(&ring), "--set", "router.vcs=1", "--compare", "dor:any", "-o", s(&bad)];
    let o = xnet_expect(dir.path(), &args, 4);
    assert!(String::from_utf8_lossy(&o.stdout).contains("NO"), "{}", describe(&o));
}

#[test]
fn routes_checks_an_escape_subnetwork_on_a_sample_of_destinations() {
    let dir = TempDir::new().unwrap();
    let torus = write(
        dir.path(),
        "torus.toml",
        r#"
[simulation]
cycles = 100
[topology]
kind = "torus"
sides = [5, 4]
endpoints_per_switch = 1
failed_links = 2
[router]
vcs = 2
packet_size = 4
input_buffer = 8
output_buffer = 8
[routing]
algorithm = "minimal"
vc_policy = "any"
escape_vcs = 1
[traffic]
pattern = "uniform"
load = 0.1
"#,
    );
    let out = dir.path().join("esc.h5");
    let args = ["routes", s(&torus), "--destinations", "5", "-t", "1", "-o", s(&out)];
    let o = xnet_expect(dir.path(), &args, 0);
    let text = String::from_utf8_lossy(&o.stdout);
    for line in [
        "escape CDG acyclic (Duato)   yes",
        "whole CDG acyclic            no",
        "destinations checked",
        "routing tables built in",
    ] {
        assert!(text.contains(line), "{line} missing from:\n{text}");
    }
    let f = open(&out);
    assert_eq!(attr_u64(&f, "destinations_checked"), 5);
    assert_eq!(attr_u64(&f, "switches"), 20);
    // Without the escape the same routes are cyclic: exit status 4.
    let bad = dir.path().join("bad.h5");
    let args = ["routes", s(&torus), "--set", "routing.escape_vcs=0", "--destinations", "5", "-o", s(&bad)];
    xnet_expect(dir.path(), &args, 4);
    // A sample of zero destinations is refused.
    xnet_expect(dir.path(), &["routes", s(&torus), "--destinations", "0", "-o", s(&bad)], 1);
}

//! `xnet run` and `xnet sweep` end to end: the file a run writes, the README's sample output,
//! deadlock and interrupt exits, and output files that are held, not HDF5 or the config.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.

mod common;

use common::*;
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

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
fn a_result_file_about_to_be_replaced_is_named() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(
        d,
        "df.toml",
        &DRAGONFLY_UGAL.replace("cycles = 3000", "cycles = 600").replace("warmup = 500", "warmup = 100"),
    );
    let note = "note: xnet-df.h5 holds an earlier run's results; they stay until this run has \
                results of its own, which then replace them";
    // The default file: new the first time, replaced (and said so) the second; -q says nothing.
    let first = xnet_expect(d, &["run", s(&cfg), "-t", "1"], 0);
    assert!(!String::from_utf8_lossy(&first.stderr).contains("earlier run"), "{}", describe(&first));
    let second = xnet_expect(d, &["run", s(&cfg), "-t", "1"], 0);
    assert!(String::from_utf8_lossy(&second.stderr).contains(note), "{}", describe(&second));
    let quiet = xnet_expect(d, &["run", s(&cfg), "-q", "-t", "1"], 0);
    assert!(quiet.stderr.is_empty(), "{}", describe(&quiet));
    // What sits at FILE.new is written through or taken over only when an interrupted run
    // left it there (an HDF5 file); a link, or a file of the user's, is refused.
    let staged = d.join("xnet-df.h5.new");
    std::os::unix::fs::symlink(&cfg, &staged).unwrap();
    let config_text = std::fs::read(&cfg).unwrap();
    let o = xnet_expect(d, &["run", s(&cfg), "-q", "-t", "1"], 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("xnet-df.h5.new is a symbolic link"),
        "{}",
        describe(&o)
    );
    assert_eq!(std::fs::read(&cfg).unwrap(), config_text, "the run wrote through the link");
    std::fs::remove_file(&staged).unwrap();
    std::fs::write(&staged, "notes of mine\n").unwrap();
    let o = xnet_expect(d, &["run", s(&cfg), "-q", "-t", "1"], 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not an HDF5 file"), "{}", describe(&o));
    assert_eq!(std::fs::read_to_string(&staged).unwrap(), "notes of mine\n");
    std::fs::copy(d.join("xnet-df.h5"), &staged).unwrap();
    xnet_expect(d, &["run", s(&cfg), "-q", "-t", "1"], 0);
    assert!(!staged.exists(), "the left-over new file was not consumed");
    assert_eq!(attr_str(&open(&d.join("xnet-df.h5")), "status"), "completed");
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
    let figures = |line: &str| line.split_whitespace().take(10).map(str::to_string).collect::<Vec<_>>();
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
fn a_sweep_marks_saturated_points_and_can_stop_at_the_first() {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "rrg.toml", RANDOM_REGULAR);
    let out = dir.path().join("sweep.h5");
    let args = ["sweep", s(&cfg), "--loads", "0.1,1.0,0.2", "--stop-at-saturation", "-t", "2", "-o", s(&out)];
    let o = xnet_expect(dir.path(), &args, 0);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("load 1: saturated") && stderr.contains("skips loads [0.2]"), "{}", describe(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let saturated: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("completed"))
        .filter_map(|l| l.split_whitespace().nth(8))
        .collect();
    assert_eq!(saturated, ["no", "yes"], "{stdout}");
    let f = open(&out);
    assert_eq!(f.group("points").unwrap().member_names().unwrap(), ["000", "001"]);
    let summary: Vec<SummaryRow> = rows(&f, "summary");
    assert_eq!(summary.iter().map(|r| r.saturated).collect::<Vec<_>>(), [0, 1], "{summary:?}");
    assert!(summary[0].backlog_growth.abs() < 0.01 && summary[1].backlog_growth > 0.1, "{summary:?}");
    let point = f.group("points/001").unwrap();
    assert_eq!(attr_u64(&point, "saturated"), 1);
    assert_eq!(attr_f64(&point, "backlog_growth"), summary[1].backlog_growth);
    // What the grid says of the saturation load, on stdout and in the file.
    assert!(stdout.contains("saturation load 0.5500 (between 0.1000, not saturated, and 1.0000, saturated; from the loads run"), "{stdout}");
    assert_eq!(attr_str(&f, "saturation_search"), "grid");
    assert_eq!((attr_f64(&f, "saturation_low"), attr_f64(&f, "saturation_high")), (0.1, 1.0));
    assert!(attr_f64(&f, "saturation_tolerance").is_nan());
}

#[test]
fn a_sweep_that_never_saturates_says_so() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("low.h5");
    let args = ["sweep", s(&quick), "--loads", "0.2,0.1", "--stop-at-saturation", "-t", "1", "-o", s(&out)];
    let o = xnet_expect(dir.path(), &args, 0);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("no point saturated: the saturation load is above 0.2000, the highest load run"),
        "{stdout}"
    );
    let f = open(&out);
    assert_eq!(attr_f64(&f, "saturation_low"), 0.2);
    assert!(attr_f64(&f, "saturation_high").is_nan() && attr_f64(&f, "saturation_load").is_nan());
}

#[test]
fn find_saturation_brackets_the_channel_bound_of_a_small_hyperx() {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "hx.toml", HYPERX_2X2);
    let out = dir.path().join("sat.h5");
    let args = ["sweep", s(&cfg), "--find-saturation", "--tolerance", "0.01", "-t", "1", "-o", s(&out)];
    let o = xnet_expect(dir.path(), &args, 0);
    let stdout = String::from_utf8_lossy(&o.stdout);
    let f = open(&out);
    assert_eq!(attr_str(&f, "saturation_search"), "bisection");
    assert_eq!(attr_f64(&f, "saturation_tolerance"), 0.01);
    let (low, high, load) =
        (attr_f64(&f, "saturation_low"), attr_f64(&f, "saturation_high"), attr_f64(&f, "saturation_load"));
    assert!(low < high && high - low <= 0.01 && load == (low + high) / 2.0, "{low} {high} {load}");
    // The channel bound caps what the network sustains: the highest load found steady is
    // at most the bound (up to half the tolerance: just past it the backlog grows too
    // slowly to tell in 4,000 cycles), and the saturation load comes within 5 % of it
    // (measured: bracket 0.46875 to 0.475, the bound 0.46875).
    assert!(low <= HYPERX_2X2_BOUND + 0.005, "{low} vs {HYPERX_2X2_BOUND}");
    assert!(load >= 0.95 * HYPERX_2X2_BOUND, "{load} vs {HYPERX_2X2_BOUND}");
    // Every point run is in the file, in the order run: the grid up to its first
    // saturated load, then the bisection; the bracket's ends are points that say so.
    let summary: Vec<SummaryRow> = rows(&f, "summary");
    let points = f.group("points").unwrap().member_names().unwrap();
    assert_eq!(points.len(), summary.len());
    let loads: Vec<f64> = summary.iter().map(|r| r.load).collect();
    assert_eq!(loads[..3], [0.1, 0.3, 0.5], "{summary:?}");
    assert!(summary.len() <= 3 + 1 + 5, "{summary:?}");
    let at =
        |load: f64| summary.iter().find(|r| r.load == load).unwrap_or_else(|| panic!("no point at {load}"));
    assert_eq!((at(low).saturated, at(high).saturated), (0, 1), "{summary:?}");
    assert!(summary.iter().filter(|r| r.load < low).all(|r| r.saturated == 0), "{summary:?}");
    // One row per point on stdout, then the bracket.
    assert_eq!(stdout.lines().filter(|l| l.contains("completed")).count(), summary.len(), "{stdout}");
    let said = format!(
        "saturation load {load:.4} (between {low:.4}, not saturated, and {high:.4}, saturated; bisected to within 0.01)"
    );
    assert!(stdout.contains(&said), "{stdout}");
    // The same seed gives the same points, on any number of threads.
    let again = dir.path().join("again.h5");
    let args =
        ["sweep", s(&cfg), "--find-saturation", "--tolerance", "0.01", "-q", "-t", "2", "-o", s(&again)];
    xnet_expect(dir.path(), &args, 0);
    assert_eq!(differences(&dump(&out), &dump(&again)), Vec::<String>::new());
}

#[test]
fn a_sweep_prints_each_row_when_its_point_ends() {
    // 64 points of 2,000 cycles: the first row must come while the others still run, so
    // that SIGINT after it stops the sweep with points left.
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("rows.h5");
    let loads = vec!["0.1"; 64].join(",");
    let args = [
        "sweep",
        s(&quick),
        "--loads",
        &loads,
        "-t",
        "1",
        "-o",
        s(&out),
        "--set",
        "simulation.cycles=2000",
        "--set",
        "simulation.warmup=500",
    ];
    let mut child = start(XNET, dir.path(), &args, &[]);
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("completed") {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
    }
    let pid = child.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().expect("run kill");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let (o, _) = wait_within(child, Duration::from_secs(60), "the sweep after SIGINT");
    assert!(seen.contains("   load   offered") && seen.contains("completed"), "{seen}");
    assert_eq!(o.status.code(), Some(130), "the sweep ended before its first row came: {seen}{rest}");
    let points = open(&out).group("points").unwrap().member_names().unwrap();
    assert!(points.len() < 64, "{} points", points.len());
    // The bracket speaks of the points that ended only.
    assert!(
        rest.contains("interrupted before the sweep ended; its points so far: no point saturated"),
        "{rest}"
    );
    // Each row once: the first is not printed again at the end.
    assert_eq!((seen + &rest).lines().filter(|l| l.contains("completed")).count(), points.len() - 1);
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
    // One row per sample period, and the last where the run stopped (within a window).
    assert_eq!(ts.len() as u64, reached.div_ceil(500));
    assert_eq!(rows::<SummaryRow>(&f, "summary").len(), 1);
}

#[test]
fn a_signal_stops_the_run_within_seconds_whatever_the_sample_period() {
    let dir = TempDir::new().unwrap();
    // Samples every 10^8 cycles: hours away. One thread (no cut link) and two.
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("t{threads}.h5"));
        let args = ["-t", threads, "-o", s(&out), "--set", "simulation.sample_period=100000000"];
        let child = start_long_run(dir.path(), &args);
        let kill = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("run kill");
        assert!(kill.success());
        let (o, waited) = wait_within(child, Duration::from_secs(30), "xnet after SIGTERM");
        assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
        assert!(waited < Duration::from_secs(10), "-t {threads}: took {waited:?} to stop");
        let f = open(&out);
        assert_eq!(attr_str(&f, "status"), "interrupted");
        let reached = attr_u64(&f.group("points/000").unwrap(), "time_reached");
        let ts: Vec<TimeRow> = rows(&f, "points/000/timeseries");
        assert_eq!(ts.len(), 1, "-t {threads}: {ts:?}");
        assert!(reached > 0 && ts[0].time == reached, "-t {threads}: reached {reached}, {ts:?}");
        assert_eq!(rows::<SummaryRow>(&f, "summary").len(), 1);
    }
}

#[test]
fn threads_asked_beyond_the_switches_are_never_started() {
    let dir = TempDir::new().unwrap();
    // The quick HyperX has 64 switches: -t 1000 runs 64 partitions, and its table
    // computations as many threads; the thread pool used to start 1,000 first.
    let child = start_long_run(dir.path(), &["-t", "1000", "-o", "many.h5"]);
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let threads: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("a Threads line");
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
    assert!(kill.success());
    let (o, _) = wait_within(child, Duration::from_secs(30), "xnet -t 1000 after SIGINT");
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    // 64 partitions + 64 pool threads + a few of the runtime's (signals, MPI).
    assert!(threads <= 64 + 64 + 16, "{threads} threads: {}", describe(&o));
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
    // LASH-TOR lays its paths out for over a minute there too.
    let lash = ["--set", "routing.algorithm=lash", "--set", "router.vcs=16"];
    let lash_tor = ["--set", "routing.algorithm=lash_tor", "--set", "router.vcs=4"];
    for (command, out, routing) in
        [("run", "run.h5", lash), ("routes", "routes.h5", lash), ("run", "tor.h5", lash_tor)]
    {
        let mut args = vec![command, s(&rrg), "-t", "1", "-o", out];
        args.extend(routing);
        let child = start(XNET, dir.path(), &args, &[]);
        std::thread::sleep(Duration::from_millis(2000));
        let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
        assert!(kill.success(), "xnet {} ended before the signal", args.join(" "));
        let (o, waited) = wait_within(child, Duration::from_secs(30), "a LASH build after SIGINT");
        assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
        assert!(waited < Duration::from_secs(5), "took {waited:?} to stop");
        // Named under `routing`: the build, not the topology, was stopped.
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("error: routing: interrupted while"),
            "{}",
            describe(&o)
        );
        assert!(!dir.path().join(out).exists(), "xnet {command} left {out}");
    }
}

/// A signal before the run's preparation (here while the configuration's fabric file, a
/// pipe nobody writes, is being opened) ends the process at once, saying so, with 130.
#[test]
fn a_signal_while_reading_the_configuration_is_reported() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let fifo = d.join("fabric.net");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let cfg = write(
        d,
        "f.toml",
        "[topology]\nkind = \"file\"\npath = \"fabric.net\"\n[routing]\nalgorithm = \"updown\"\n",
    );
    for signal in ["-INT", "-TERM"] {
        let child = start(XNET, d, &["run", s(&cfg), "-q", "-o", "never.h5"], &[]);
        std::thread::sleep(Duration::from_millis(1500));
        assert!(Command::new("kill").args([signal, &child.id().to_string()]).status().unwrap().success());
        let (o, waited) = wait_within(child, Duration::from_secs(30), "a run reading a pipe");
        assert_eq!(o.status.code(), Some(130), "{signal}: {}", describe(&o));
        assert!(waited < Duration::from_secs(3), "{signal}: took {waited:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr)
                .contains("interrupted by a signal before anything was written"),
            "{signal}: {}",
            describe(&o)
        );
        assert!(!d.join("never.h5").exists());
    }
}

/// The files a configuration names are read by the command into the configuration the
/// result file records (`config`), so that it reruns without them: here a job's rank
/// mapping file, recorded as `mapping_contents`. The rerun from the recorded text alone,
/// the file gone, gives the same file.
#[test]
fn a_run_records_the_rank_mapping_it_read_and_reruns_without_the_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let mapping = "# endpoint per rank\n90\n3\n50\n1\n";
    write(d, "ranks.map", mapping);
    let jobs = "\n[workload]\n[[workload.jobs]]\nkind = \"butterfly\"\nranks = 4\nmessage_bytes = 64\n\
                mapping = \"file\"\nmapping_file = \"ranks.map\"\n";
    let cfg = write(d, "w.toml", &format!("{RANDOM_REGULAR}{jobs}"));
    xnet_expect(d, &["run", s(&cfg), "-q", "-o", "w.h5"], 0);
    let recorded = attr_str(&open(&d.join("w.h5")), "config");
    let config: toml::Table = toml::from_str(&recorded).unwrap();
    assert_eq!(config["workload"]["jobs"][0]["mapping_contents"].as_str(), Some(mapping), "{recorded}");
    std::fs::remove_file(d.join("ranks.map")).unwrap();
    let again = write(d, "recorded.toml", &recorded);
    xnet_expect(d, &["run", s(&again), "-q", "-o", "again.h5"], 0);
    let diffs = differences(&dump(&d.join("w.h5")), &dump(&d.join("again.h5")));
    assert!(diffs.is_empty(), "the rerun differs:\n{}", diffs.join("\n"));
    // Without the file and without its text, the run is refused naming the key and file.
    let o = xnet_expect(d, &["run", s(&cfg), "-q", "-o", "gone.h5"], 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("workload.jobs[0].mapping_file: cannot read the rank mapping ranks.map"), "{err}");
}

/// A trace is held by the process, and the result file records only its schedule's hash
/// (`contents = "held: sha256 ..."`), never its text. The recorded configuration reruns
/// from the file, to the same results; once the file has changed, it is refused, naming
/// the file and both hashes. The hash is that of the schedule exported as GOAL.
#[test]
fn a_run_records_a_trace_by_its_hash_and_refuses_a_changed_file() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let goal = |bytes: u32| {
        format!("num_ranks 2\nrank 0 {{\nl1: send {bytes}b to 1\nl2: calc 500\nl2 requires l1\n}}\nrank 1 {{\nl1: recv {bytes}b from 0\n}}\n")
    };
    write(d, "app.goal", &goal(4096));
    let jobs = "\n[workload]\n[[workload.jobs]]\nkind = \"goal\"\nfile = \"app.goal\"\n";
    let cfg = write(d, "w.toml", &format!("{RANDOM_REGULAR}{jobs}"));
    xnet_expect(d, &["run", s(&cfg), "-q", "-o", "w.h5"], 0);
    let recorded = attr_str(&open(&d.join("w.h5")), "config");
    let config: toml::Table = toml::from_str(&recorded).unwrap();
    let record = config["workload"]["jobs"][0]["contents"].as_str().unwrap().to_string();
    assert!(record.starts_with("held: sha256 ") && record.ends_with("3 ops on 2 ranks"), "{record}");
    assert!(!recorded.contains("send 4096b"), "{recorded}");
    // The record names the hash of the schedule as xnet exports it.
    xnet_expect(d, &["workload", "export", s(&cfg), "-o", "exported.goal"], 0);
    let exported = std::fs::read(d.join("exported.goal")).unwrap();
    let sha = std::process::Command::new("sha256sum").arg(d.join("exported.goal")).output().unwrap();
    let hex = String::from_utf8_lossy(&sha.stdout).split(' ').next().unwrap().to_string();
    assert!(!exported.is_empty() && record.contains(&hex), "{record} vs {hex}");
    let again = write(d, "recorded.toml", &recorded);
    xnet_expect(d, &["run", s(&again), "-q", "-o", "again.h5"], 0);
    let diffs = differences(&dump(&d.join("w.h5")), &dump(&d.join("again.h5")));
    assert!(diffs.is_empty(), "the rerun differs:\n{}", diffs.join("\n"));
    write(d, "app.goal", &goal(8192));
    let o = xnet_expect(d, &["run", s(&again), "-q", "-o", "changed.h5"], 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("workload.jobs[0].file: the GOAL schedule app.goal is not what the recorded run read"),
        "{err}"
    );
    assert!(err.contains(&record) && err.contains("remove workload.jobs[0].contents"), "{err}");
}

/// A SIGINT never costs the results of an earlier run at the same `-o`: SMART's build (an
/// RRG of 128 switches takes minutes) stops within seconds, and a run interrupted before
/// its first load point finished leaves the earlier file byte for byte as it was (the new
/// file, written beside it, is removed). Without an earlier file, the interrupted run's
/// file is kept as before (`sigint_exits_130_and_keeps_the_time_series`).
#[test]
fn sigint_before_a_first_point_finishes_keeps_the_earlier_file_untouched() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let out = d.join("kept.h5");
    let quick = workspace().join("configs/quick.toml");
    xnet_expect(d, &["run", s(&quick), "-q", "-t", "1", "-o", s(&out)], 0);
    let earlier = std::fs::read(&out).unwrap();
    let smart = write(
        d,
        "smart.toml",
        "[simulation]\ncycles = 2000\n[topology]\nkind = \"random_regular\"\nswitches = 128\ndegree = 8\n\
         endpoints_per_switch = 2\n[router]\nvcs = 1\n[routing]\nalgorithm = \"smart\"\n\
         [traffic]\npattern = \"uniform\"\nload = 0.1\n",
    );
    let interrupt = |args: &[&str], what: &str| {
        let child = start(XNET, d, args, &[]);
        std::thread::sleep(Duration::from_millis(2500));
        let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("run kill");
        assert!(kill.success(), "{what} ended before the signal");
        let (o, waited) = wait_within(child, Duration::from_secs(60), what);
        assert_eq!(o.status.code(), Some(130), "{what}: {}", describe(&o));
        assert!(!String::from_utf8_lossy(&o.stderr).contains("panicked"), "{}", describe(&o));
        (o, waited)
    };
    let (o, waited) = interrupt(&["run", s(&smart), "-q", "-t", "1", "-o", s(&out)], "a SMART build");
    assert!(waited < Duration::from_secs(10), "SMART took {waited:?} to stop: {}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("routing: interrupted while cutting the SMART"),
        "{}",
        describe(&o)
    );
    assert!(std::fs::read(&out).unwrap() == earlier, "the SMART run changed the earlier file");
    // Interrupted while simulating its first point: the earlier file is still whole.
    let mut args = vec!["run", s(&quick), "-q", "-t", "1", "-o", s(&out)];
    args.extend(FOREVER);
    let (o, _) = interrupt(&args, "a long first point");
    assert!(String::from_utf8_lossy(&o.stderr).contains("is kept as it was"), "{}", describe(&o));
    assert!(std::fs::read(&out).unwrap() == earlier, "the interrupted run changed the earlier file");
    assert!(!d.join("kept.h5.new").exists(), "the interrupted run left its new file");
    assert_eq!(attr_str(&open(&out), "status"), "completed");
    // A run that finishes a point replaces it.
    xnet_expect(d, &["run", s(&quick), "-q", "-t", "1", "-o", s(&out), "--set", "traffic.load=0.2"], 0);
    assert!(std::fs::read(&out).unwrap() != earlier);
    assert!(!d.join("kept.h5.new").exists());
}

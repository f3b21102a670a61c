//! `xnet` under `mpiexec`: thread capping, failing and interrupted ranks, the memory check
//! over all ranks of a host, and identical files for every rank and thread layout.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use tempfile::TempDir;

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

/// Runs `mpiexec -n 1 xnet RANK0 : -n 1 xnet RANK1` (MPMD: each rank its own arguments),
/// which must be refused within 30 s, before any file exists, with a message naming what
/// differs (`expected`, each on the one line that says how the ranks differ).
fn refused_mpmd(rank0: &[&str], rank1: &[&str], expected: &[&str]) {
    let dir = TempDir::new().unwrap();
    let mut args = vec!["-n", "1", XNET];
    args.extend(rank0);
    args.extend([":", "-n", "1", XNET]);
    args.extend(rank1);
    let child = start("mpiexec", dir.path(), &args, &[]);
    let (o, _) = wait_within(child, Duration::from_secs(30), "ranks given different arguments");
    let what = format!("mpiexec {}: {}", args.join(" "), describe(&o));
    assert_ne!(o.status.code(), Some(0), "{what}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "{what}");
    assert!(stderr.contains("error: rank 0 of 2: the ranks were started with different arguments"), "{what}");
    for e in expected {
        assert!(stderr.lines().any(|l| l.trim_start().starts_with(e)), "no line starting {e:?}: {what}");
    }
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(files.is_empty(), "files written: {files:?}: {what}");
}

#[test]
fn ranks_given_different_arguments_are_refused_before_writing() {
    let quick = workspace().join("configs/quick.toml");
    let run = ["run", s(&quick), "-q", "-t", "1", "-o", "out.h5"];
    let with =
        |extra: &'static [&'static str]| run.iter().copied().chain(extra.iter().copied()).collect::<Vec<_>>();
    // A different length: the ranks would wait for each other forever.
    // The key that differs is named with its values (it was a hash of the whole text).
    refused_mpmd(
        &run,
        &with(&["--set", "simulation.cycles=5000"]),
        &["configuration key simulation.cycles: 10000 on rank 0; 5000 on rank 1"],
    );
    // A different load on rank 1 only: the results would contradict the stored config.
    refused_mpmd(&run, &with(&["--set", "traffic.load=0.9"]), &["configuration key traffic.load:"]);
    // `run` beside `sweep`: a hang that one Ctrl-C did not end.
    let sweep = ["sweep", s(&quick), "-q", "-t", "1", "-o", "out.h5", "--loads", "0.1"];
    refused_mpmd(&run, &sweep, &["command: `run` on rank 0; `sweep --loads [0.1]"]);
    // Different threads: a panic in the engine, the file left `running`.
    let two: Vec<&str> = ["run", s(&quick), "-q", "-t", "2", "-o", "out.h5"].to_vec();
    refused_mpmd(&run, &two, &["threads (-t): 1 on rank 0; 2 on rank 1"]);
    // A different seed is named as such.
    refused_mpmd(&run, &with(&["--set", "simulation.seed=99"]), &["configuration key simulation.seed:"]);
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

/// The process of rank `rank` of the run writing `out`: the one whose command line names
/// `out` and whose environment gives its rank (MPICH: PMI_RANK, Open MPI:
/// OMPI_COMM_WORLD_RANK).
fn rank_pid(out: &Path, rank: u32) -> u32 {
    let (mpich, ompi) = (format!("PMI_RANK={rank}"), format!("OMPI_COMM_WORLD_RANK={rank}"));
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else { return false };
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let is_ours = String::from_utf8_lossy(&cmdline).contains(s(out));
            is_ours && env.split(|&b| b == 0).any(|v| v == mpich.as_bytes() || v == ompi.as_bytes())
        })
        .unwrap_or_else(|| panic!("rank {rank}'s process"))
}

/// CPU seconds (user + system) process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

#[test]
fn a_rank_waiting_for_a_stopped_rank_leaves_its_core_alone() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("waiting.h5");
    let child = start("mpiexec", dir.path(), &two_rank_long_run(&quick, &out), &[]);
    std::thread::sleep(Duration::from_millis(3000));
    let (rank0, rank1) = (rank_pid(&out, 0), rank_pid(&out, 1));
    // Rank 1 stops (as a rank does whose core another program holds): rank 0 waits for it
    // at the next window. Spinning there, it used its core all along; now it sleeps.
    assert!(Command::new("kill").args(["-STOP", &rank1.to_string()]).status().unwrap().success());
    std::thread::sleep(Duration::from_millis(500));
    let before = cpu_seconds(rank0);
    std::thread::sleep(Duration::from_millis(3000));
    let used = cpu_seconds(rank0) - before;
    assert!(Command::new("kill").args(["-CONT", &rank1.to_string()]).status().unwrap().success());
    assert!(Command::new("kill").args(["-TERM", &rank0.to_string()]).status().unwrap().success());
    let (o, _) = wait_within(child, Duration::from_secs(30), "the job after SIGTERM to rank 0");
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    assert!(used < 0.3, "rank 0 used {used:.2} CPU seconds in 3 s waiting for rank 1");
}

#[test]
fn sigterm_to_a_non_zero_rank_stops_the_whole_job() {
    let dir = TempDir::new().unwrap();
    let quick = workspace().join("configs/quick.toml");
    let out = dir.path().join("long.h5");
    // Samples hours apart: the ranks agree on the stop at the next window, not sample.
    let mut args = two_rank_long_run(&quick, &out);
    args.extend(["--set", "simulation.sample_period=100000000"]);
    let child = start("mpiexec", dir.path(), &args, &[]);
    std::thread::sleep(Duration::from_millis(3000));
    let rank1 = rank_pid(&out, 1);
    let kill = Command::new("kill").args(["-TERM", &rank1.to_string()]).status().expect("run kill");
    assert!(kill.success());
    let (o, waited) = wait_within(child, Duration::from_secs(30), "the job after SIGTERM to rank 1");
    assert_eq!(o.status.code(), Some(130), "{}", describe(&o));
    assert!(waited < Duration::from_secs(10), "the job took {waited:?} to stop");
    let f = open(&out);
    assert_eq!(attr_str(&f, "status"), "interrupted");
    assert_eq!(rows::<SummaryRow>(&f, "summary").len(), 1);
    let ts: Vec<TimeRow> = rows(&f, "points/000/timeseries");
    assert_eq!(ts.len(), 1, "{ts:?}");
}

/// Identical results for 1 rank x 1 thread, 1 x 2, 2 x 1, 2 x 2 and 4 x 1 (oversubscribed).
/// Runs `config` on 1x1, 1x2, 2x1, 2x2 and 4x1 ranks x threads and checks that the files
/// are identical; returns the 1x1 file (and the folder that holds it).
fn check_ranks(config: &str) -> (TempDir, std::path::PathBuf) {
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
    (dir, reference)
}

#[test]
fn mpi_dragonfly_is_identical_for_every_rank_and_thread_layout() {
    check_ranks(DRAGONFLY_UGAL);
}

#[test]
fn mpi_hyperx_is_identical_for_every_rank_and_thread_layout() {
    check_ranks(HYPERX);
}

#[test]
fn mpi_random_regular_is_identical_for_every_rank_and_thread_layout() {
    check_ranks(RANDOM_REGULAR);
}

/// Links of three speeds (the endpoints' at 1, the groups' at 4, the global ones at 1/2),
/// past the global links' saturation.
#[test]
fn mpi_link_speeds_are_identical_for_every_rank_and_thread_layout() {
    let config = DRAGONFLY_UGAL.replace(
        "global_latency = 10\n",
        "global_latency = 10\nlink_speeds = { local = 4, global = \"1/2\" }\n",
    );
    assert!(config.contains("link_speeds"));
    check_ranks(&config);
}

/// GPU nodes (4 GPUs on an NVSwitch, NICs of two planes) on rail-optimized 4-ary 2-trees,
/// NVLink at 4 phits a cycle, ECMP across the planes and the spines, past saturation.
#[test]
fn mpi_gpu_nodes_are_identical_for_every_rank_and_thread_layout() {
    check_ranks(
        "[simulation]\ncycles = 3000\nwarmup = 500\nseed = 5\nsample_period = 100\n\
         [topology]\nkind = \"fat_tree\"\nk = 4\nn = 2\nlink_latency = 4\nlink_speeds = { nvlink = 4 }\n\
         [topology.nodes]\ngpus = 4\nplanes = 2\n\
         [router]\nvcs = 2\n[routing]\nalgorithm = \"minimal\"\nselection = \"ecmp\"\n\
         [traffic]\npattern = \"uniform\"\nload = 0.9\n",
    );
}

/// PFC, then lossy links, with bit errors replayed on every link, past saturation: pauses,
/// drops and replays cross ranks and threads alike.
#[test]
fn mpi_flow_control_and_link_errors_are_identical_for_every_rank_and_thread_layout() {
    for (flow, counted) in [("pfc", "pause_frames"), ("none", "dropped_total")] {
        let config = DRAGONFLY_UGAL
            .replace("[router]\n", &format!("[router]\nflow_control = \"{flow}\"\ninput_buffer = 128\n"))
            .replace("[routing]\n", "[router.link_errors]\nbit_error_rate = 1e-4\n\n[routing]\n")
            .replace("load = 0.4", "load = 0.9");
        assert!(config.contains("link_errors") && config.contains("load = 0.9"));
        let (_dir, reference) = check_ranks(&config);
        let point = open(&reference).group("points/000").unwrap();
        for figure in [counted, "link_retries"] {
            assert!(attr_u64(&point, figure) > 0, "{flow}: no {figure} to compare");
        }
    }
}

/// Every router option that changes how packets move (the `caminos` preset: per-VC
/// crossbar, random arbitration, re-selection, injection and ejection on any VC, a capped
/// source queue; then an output-first allocator in 3 iterations; then the output-queued
/// crossbar), past saturation so that queues fill and refuse.
#[test]
fn mpi_router_options_are_identical_for_every_rank_and_thread_layout() {
    let config = RANDOM_REGULAR
        .replace("[router]\n", "[router]\npreset = \"caminos\"\n")
        .replace("load = 0.4", "load = 0.9");
    assert!(config.contains("preset = \"caminos\""));
    check_ranks(&config);
    // The per-port crossbar's allocator options, with random arbitration.
    let allocator =
        "[router]\nallocator = \"output_first\"\nallocator_iterations = 3\narbitration = \"random\"\n";
    let config = RANDOM_REGULAR.replace("[router]\n", allocator).replace("load = 0.4", "load = 0.9");
    assert!(config.contains("output_first"));
    check_ranks(&config);
    // The output-queued crossbar.
    let config = RANDOM_REGULAR
        .replace("[router]\n", "[router]\ncrossbar = \"output_queued\"\n")
        .replace("load = 0.4", "load = 0.9");
    assert!(config.contains("output_queued"));
    check_ranks(&config);
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

/// Application jobs (a ring all-reduce placed from a mapping file, a stencil on random
/// endpoints among the rest, a GOAL schedule with wildcards and rendezvous messages, NCCL
/// collectives on two channels with their posted buffers) with
/// background traffic from the endpoints left free: identical files for every rank and
/// thread layout, and every rank where the mapping put it.
#[test]
fn mpi_workload_is_identical_for_every_rank_and_thread_layout() {
    let files = TempDir::new().unwrap();
    // The ring's 16 ranks on endpoints 95, 94, ..., 80, one per line, with a comment.
    let mapping: String = (80..96).rev().map(|e| format!("{e}\n")).collect();
    let mapping_path = write(files.path(), "ring.map", &format!("# endpoint per rank\n{mapping}"));
    let goal = workspace().join("models/tests/data/wildcard_ring.goal");
    let jobs = format!(
        "\n[workload]\neager_limit = 512\n\
         [[workload.jobs]]\nkind = \"allreduce\"\nranks = 16\nbytes = 2048\nmapping = \"file\"\nmapping_file = \"{}\"\n\
         [[workload.jobs]]\nkind = \"stencil2d\"\ngrid = [8, 8]\nhalo_bytes = 100\niterations = 10\ncompute = 20\nmapping = \"random\"\n\
         [[workload.jobs]]\nkind = \"goal\"\nfile = \"{}\"\n\
         [[workload.jobs]]\nkind = \"collectives\"\nranks = 4\noperations = [\
         {{collective = \"allreduce\", bytes = 100000, library = \"nccl\", hop_ns = 100}}, \
         {{collective = \"reduce_scatter\", bytes = 3000, library = \"nccl\", protocol = \"ll128\", channels = 3}}]\n",
        mapping_path.display(),
        goal.display()
    );
    let config = RANDOM_REGULAR.replace("cycles = 3000", "cycles = 400000") + &jobs;
    let (_dir, out) = check_ranks(&config);
    let f = open(&out);
    let ranks = f.dataset("points/000/workload/job_000/ranks").unwrap().read_raw::<RankRow>().unwrap();
    let placed: Vec<u32> = ranks.iter().map(|r| r.endpoint).collect();
    assert_eq!(placed, (80..96).rev().collect::<Vec<u32>>());
    assert!(ranks.iter().all(|r| r.finish > 0));
    assert_eq!(
        attr_str(&f.group("points/000/workload").unwrap(), "job_kinds"),
        "allreduce,stencil2d,goal,collectives"
    );
    let goal = f.dataset("points/000/workload/job_002/ranks").unwrap().read_raw::<RankRow>().unwrap();
    assert!(goal.len() == 8 && goal.iter().all(|r| r.finish > 0));
    let nccl = f.dataset("points/000/workload/job_003/ranks").unwrap().read_raw::<RankRow>().unwrap();
    assert!(nccl.len() == 4 && nccl.iter().all(|r| r.finish > 0));
}

/// Applications on RoCE's reliable connection over lossy links beside background traffic,
/// with bit errors dropped end to end: drops, NAKs, timeouts and retransmissions cross
/// ranks and threads alike.
#[test]
fn mpi_reliable_connections_over_lossy_links_are_identical_for_every_rank_and_thread_layout() {
    let jobs = "\n[workload]\neager_limit = 512\n\
         [[workload.jobs]]\nkind = \"allreduce\"\nranks = 16\nbytes = 20000\n\
         [[workload.jobs]]\nkind = \"collectives\"\nranks = 8\noperations = [{collective = \"alltoall\", bytes = 4096}]\n\
         [transport]\nkind = \"rc\"\n[transport.rc]\ntimeout = 3000\n";
    let config = RANDOM_REGULAR
        .replace("cycles = 3000", "cycles = 400000")
        .replace("[router]\n", "[router]\nflow_control = \"none\"\n")
        .replace(
            "[routing]\n",
            "[router.link_errors]\nbit_error_rate = 1e-5\nrecovery = \"end_to_end\"\n\n[routing]\n",
        )
        + jobs;
    assert!(config.contains("end_to_end") && config.contains("flow_control = \"none\""));
    let (_dir, reference) = check_ranks(&config);
    let point = open(&reference).group("points/000").unwrap();
    for figure in ["dropped_total", "retransmitted_packets", "naks", "discarded_packets"] {
        assert!(attr_u64(&point, figure) > 0, "no {figure} to compare");
    }
}

/// AI jobs, a generated training step and a Chakra trace expanded by NCCL's algorithms,
/// on random endpoints beside background traffic: identical files for every rank and
/// thread layout, their steps and timed collectives included.
#[test]
fn mpi_training_and_chakra_are_identical_for_every_rank_and_thread_layout() {
    let trace = workspace().join("models/schedule/tests/data/chakra/microbenchmarks/all_reduce.0.et");
    let jobs = format!(
        "\n[workload]\n\
         [[workload.jobs]]\nkind = \"training\"\nlayers = 2\nhidden = 64\nheads = 2\nsequence = 64\nvocabulary = 500\n\
         global_batch = 4\ntensor = 2\npipeline = 2\ndata = 2\ngpu_tflops = 100\nmapping = \"random\"\n\
         [[workload.jobs]]\nkind = \"chakra\"\ntrace = \"{}\"\nmapping = \"random\"\n",
        trace.display()
    );
    // Light background traffic: the jobs run for about 260,000 cycles.
    let config =
        RANDOM_REGULAR.replace("cycles = 3000", "cycles = 2000000").replace("load = 0.4", "load = 0.05")
            + &jobs;
    let (_dir, out) = check_ranks(&config);
    let f = open(&out);
    for job in ["job_000", "job_001"] {
        let g = f.group(&format!("points/000/workload/{job}")).unwrap();
        assert!(
            g.dataset("steps").unwrap().size() == 1 && g.dataset("collectives").unwrap().size() > 0,
            "{job}"
        );
    }
}

/// A rank whose switches have nothing to do (no traffic, no application rank there) must
/// not let the others skip past their events: with MPICH 4.0.2 the ranks' minimum of the
/// next event time was taken as if signed, so an idle rank's "nothing pending" (2^64 - 1)
/// won, and every rank ran a whole sample period without exchanging messages (events
/// arrived in their receivers' past).
/// 16 ranks on this 2-core machine, one switch each (the scaling model's smallest
/// point), oversubscribed eight to a core: the same file as 1 rank. (64 ranks of
/// `configs/quick.toml`, one switch each, are recorded in docs/scaling.md.)
#[test]
fn sixteen_oversubscribed_ranks_give_the_one_rank_results() {
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "net.toml", &HYPERX.replace("load = 0.3", "load = 0.5"));
    let (one, sixteen) = (dir.path().join("one.h5"), dir.path().join("sixteen.h5"));
    xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", "1", "-o", s(&one)], 0);
    mpiexec(dir.path(), "16", &["run", s(&cfg), "-q", "-t", "1", "-o", s(&sixteen)]);
    let file = open(&sixteen);
    assert_eq!(attr_u64(&file, "ranks"), 16);
    let diffs = differences(&dump(&one), &dump(&sixteen));
    assert!(diffs.is_empty(), "1 and 16 ranks differ:\n{}", diffs.join("\n"));
    let sent =
        file.group("points/000").unwrap().attr("rank_messages_sent").unwrap().read_raw::<u64>().unwrap();
    assert!(sent.len() == 16 && sent.iter().all(|&m| m > 0), "every rank exchanges messages: {sent:?}");
}

#[test]
fn an_idle_rank_keeps_the_others_in_step() {
    let config =
        RANDOM_REGULAR.replace("cycles = 3000", "cycles = 400000").replace("load = 0.4", "load = 0.0")
            + "\n[workload]\n[[workload.jobs]]\nkind = \"allreduce\"\nranks = 8\nbytes = 8000\n";
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "idle.toml", &config);
    let (one, four) = (dir.path().join("1.h5"), dir.path().join("4.h5"));
    xnet_expect(dir.path(), &["run", s(&cfg), "-q", "-t", "1", "-o", s(&one)], 0);
    mpiexec(dir.path(), "4", &["run", s(&cfg), "-q", "-t", "1", "-o", s(&four)]);
    assert_eq!(attr_u64(&open(&four), "ranks"), 4);
    assert_eq!(attr_str(&open(&four).group("points/000").unwrap(), "status"), "completed");
    assert_eq!(differences(&dump(&one), &dump(&four)), Vec::<String>::new());
}

#[test]
fn find_saturation_takes_the_same_steps_on_1_and_2_ranks() {
    // Every rank chooses the next load from the flags rank 0 broadcasts, so the ranks
    // run the same points and the file is that of one rank.
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "hx.toml", HYPERX_2X2);
    let args = ["sweep", s(&cfg), "--find-saturation", "--tolerance", "0.05", "-q", "-t", "1"];
    let (one, two) = (dir.path().join("1.h5"), dir.path().join("2.h5"));
    xnet_expect(dir.path(), &[&args[..], &["-o", s(&one)]].concat(), 0);
    mpiexec(dir.path(), "2", &[&args[..], &["-o", s(&two)]].concat());
    let b = open(&two);
    assert_eq!(attr_u64(&b, "ranks"), 2);
    assert!(b.group("points").unwrap().member_names().unwrap().len() > 3, "no bisection step ran");
    assert_eq!(differences(&dump(&one), &dump(&two)), Vec::<String>::new());
}

/// The replay's zero-load checks (models/tests/replay.rs) on 2 MPI ranks of 1 and 2 threads:
/// the times the link latencies, packet counts and protocol predict, as on one process.
#[test]
fn zero_load_replay_times_hold_on_two_ranks() {
    // One hop between any two switches: 2 terminal links of 3 + a link of 5 + 2 router
    // delays of 2 for a message's first phit (L), and then its other phits (a 4-phit
    // packet's tail: 3).
    const L: u64 = 15;
    const ONE_HOP: u64 = L + 3;
    const PACKET: u64 = 4;
    let network = |topology: &str| {
        format!(
            "[simulation]\ncycles = 100000\nwarmup = 0\nsample_period = 100\n\
             [topology]\n{topology}\nendpoints_per_switch = 1\nterminal_latency = 3\nlink_latency = 5\n\
             [router]\nvcs = 2\npacket_size = 4\ninput_buffer = 16\noutput_buffer = 16\nrouter_delay = 2\n\
             [routing]\nalgorithm = \"dor\"\n[workload]\n"
        )
    };
    let tree = workspace().join("models/schedule/tests/data/binary_tree_32.goal");
    let ping_pong =
        "num_ranks 2\nrank 0 {\nl1: send 300b to 1 tag 0\nl2: recv 300b from 1 tag 0\nl2 requires l1\n}\n\
                     rank 1 {\nl1: recv 300b from 0 tag 0\nl2: send 300b to 0 tag 0\nl2 requires l1\n}\n";
    let cases = [
        // LogGOPSim's binomial broadcast of 1 byte (one phit) on a clique of 32: 5 hops.
        (
            network("kind = \"hyperx\"\nsides = [32]")
                + &format!("[[workload.jobs]]\nkind = \"goal\"\nfile = \"{}\"\n", tree.display()),
            5 * L,
        ),
        // A rendezvous ping-pong of 300 bytes (5 packets, the last of 3 phits): request and
        // clear-to-send (a phit each), data, twice.
        (
            network("kind = \"hyperx\"\nsides = [2]")
                .replace("[workload]\n", "[workload]\neager_limit = 64\n")
                + &format!("[[workload.jobs]]\nkind = \"goal\"\ncontents = '''\n{ping_pong}'''\n"),
            2 * (3 * L + 19 - 1),
        ),
        // MPICH's ring allreduce of 8 x 320 bytes on a ring of 8 switches: 14 rounds.
        (
            network("kind = \"torus\"\nsides = [8]")
                + "[[workload.jobs]]\nkind = \"collectives\"\nranks = 8\n\
                   operations = [{collective = \"allreduce\", bytes = 2560, algorithm = \"ring\"}]\n",
            14 * (ONE_HOP + 4 * PACKET),
        ),
        // The same with the ring's links at half speed (8 cycles a packet, models/tests/
        // link_speeds.rs): a packet waits 4 cycles for its tail before the faster terminal
        // link, and the message streams at the ring's pace.
        (
            network("kind = \"torus\"\nsides = [8]\nlink_speeds = { network = \"1/2\" }")
                + "[[workload.jobs]]\nkind = \"collectives\"\nranks = 8\n\
                   operations = [{collective = \"allreduce\", bytes = 2560, algorithm = \"ring\"}]\n",
            14 * (L + 4 + 3 + 4 * 2 * PACKET),
        ),
    ];
    let dir = TempDir::new().unwrap();
    for (i, (config, expected)) in cases.iter().enumerate() {
        let cfg = write(dir.path(), &format!("case{i}.toml"), config);
        for threads in ["1", "2"] {
            let out = dir.path().join(format!("case{i}-{threads}.h5"));
            mpiexec(dir.path(), "2", &["run", s(&cfg), "-q", "-t", threads, "-o", s(&out)]);
            let f = open(&out);
            assert_eq!(attr_u64(&f, "ranks"), 2);
            let jobs = f.dataset("points/000/workload/jobs").unwrap();
            let completion: Vec<u64> =
                jobs.read_raw::<JobTime>().unwrap().iter().map(|j| j.completion_time).collect();
            assert_eq!(completion, vec![*expected], "case {i}, 2 ranks x {threads} threads");
        }
    }
}

/// The job number and completion time of a `workload/jobs` row.
#[derive(hdf5::H5Type, Clone, Copy, Debug)]
#[repr(C)]
struct JobTime {
    job: u32,
    completion_time: u64,
}

/// MPI traces replay the same on 1 and 2 MPI ranks of 1 and 2 threads, side by side: DUMPI
/// traces written by sst-dumpi (7 BlueGene/P ranks: non-blocking messages,
/// sub-communicators, all-to-alls; LULESH on 8 ranks) and OTF2 archives (Score-P's record
/// of a broadcast; one written by the OTF2 library with every kind of record replayed;
/// LULESH on 8 ranks).
#[test]
fn mpi_trace_replay_is_identical_for_every_rank_and_thread_layout() {
    let data = workspace().join("models");
    let mut config = RANDOM_REGULAR.replace("cycles = 3000", "cycles = 2000000") + "\n[workload]\n";
    for (kind, key, file) in [
        ("dumpi", "meta", "schedule/tests/data/dumpi/testbgp.meta"),
        ("dumpi", "meta", "schedule/tests/data/dumpi/lulesh8.meta"),
        ("otf2", "archive", "otf2/tests/data/sst_bcast/traces.otf2"),
        ("otf2", "archive", "otf2/tests/data/mixed/traces.otf2"),
        ("otf2", "archive", "otf2/tests/data/lulesh8/traces.otf2"),
    ] {
        config += &format!(
            "[[workload.jobs]]\nkind = \"{kind}\"\n{key} = \"{}\"\ncompute_scale = 0.001\nmapping = \"random\"\n",
            data.join(file).display()
        );
    }
    check_ranks(&config);
}

/// A study launched by `mpiexec -n 1` (as an sbatch script might) starts every run as a
/// job of its own (they inherited the launcher's connection, and all but the first died
/// of SIGPIPE); on several ranks it is refused, naming what to do instead.
#[test]
fn a_study_under_mpiexec_runs_every_run_or_is_refused() {
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    write(d, "base.toml", HYPERX);
    write(
        d,
        "st.toml",
        "[study]\nbase = \"base.toml\"\nloads = [0.1]\nthreads = 1\n[set]\n\"simulation.cycles\" = 800\n\
         \"simulation.warmup\" = 200\n[grid]\n\"simulation.seed\" = [1, 2, 3]\n",
    );
    mpiexec(d, "1", &["study", "st.toml", "-q", "--no-report"]);
    for run in ["000-1", "001-2", "002-3"] {
        let result = d.join(format!("xnet-study-st/runs/{run}.h5"));
        assert_eq!(attr_str(&open(&result), "status"), "completed", "{run}");
    }
    let o = Command::new("mpiexec")
        .args(["-n", "2", XNET, "study", "st.toml", "--dir", "other"])
        .current_dir(d)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "{}", describe(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("xnet study was started on 2 MPI ranks"),
        "{}",
        describe(&o)
    );
    assert!(!d.join("other").exists());
}

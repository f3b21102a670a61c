//! The Slurm path: `srun --mpi=pmi2` and `sbatch jobs/run.sbatch` give a real 2-rank MPI
//! run whose file is identical (environment attributes aside) to a plain 1-rank run, and
//! `scripts/bench/scaling.py` reads the result files.
//!
//! Needs a running Slurm: `bash scripts/slurm-local.sh install` then
//! `eval "$(bash scripts/slurm-local.sh start)"` (a single-node cluster on this machine;
//! `.ci/run` does this). Without `SLURM_CONF` or an answering `sinfo` when the tests are
//! built (cli/build.rs), the tests are ignored, with the reason; under
//! `XNET_REQUIRE_SLURM=1` (set by `.ci/run`) a missing Slurm is a failure instead.

mod common;

use common::*;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Instant;
use tempfile::TempDir;

fn run_ok(dir: &Path, program: &str, args: &[&str]) -> Output {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    assert_eq!(out.status.code(), Some(0), "{program} {}: {}", args.join(" "), describe(&out));
    out
}

const HYPERX: &str = r#"
[simulation]
cycles = 2000
warmup = 500
seed = 11
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

// ---------------------------------------------------------------------------------------
// Slurm
// ---------------------------------------------------------------------------------------

/// Whether a Slurm is there to use: `sinfo` answers and `SLURM_CONF` is set. Otherwise
/// the reason.
fn slurm_missing() -> Option<String> {
    if std::env::var_os("SLURM_CONF").is_none() {
        return Some("SLURM_CONF is not set".into());
    }
    match Command::new("sinfo").args(["-h", "-o", "%T"]).stdin(Stdio::null()).output() {
        Err(e) => Some(format!("cannot run sinfo ({e})")),
        Ok(o) if !o.status.success() => Some(format!("sinfo failed: {}", describe(&o))),
        Ok(_) => None,
    }
}

/// Fails, saying why, when the build found a Slurm (cli/build.rs) that is gone now.
fn assert_slurm_still_here() {
    if let Some(why) = slurm_missing() {
        panic!("Slurm was there when the tests were built, and is not now: {why}");
    }
}

/// Under `XNET_REQUIRE_SLURM=1` (`.ci/run`), the Slurm tests must not be ignored.
#[test]
fn slurm_is_found_when_xnet_require_slurm_is_set() {
    let required = std::env::var("XNET_REQUIRE_SLURM").is_ok_and(|v| !v.is_empty() && v != "0");
    if required && !cfg!(has_slurm) {
        panic!(
            "XNET_REQUIRE_SLURM is set but cli/build.rs found no Slurm (SLURM_CONF set and sinfo \
             answering) when the tests were built: run `bash scripts/slurm-local.sh install && \
             eval \"$(bash scripts/slurm-local.sh start)\"`, then the tests again"
        );
    }
}

#[test]
#[cfg_attr(
    not(has_slurm),
    ignore = "needs a running Slurm (SLURM_CONF, sinfo): scripts/slurm-local.sh start"
)]
fn srun_and_sbatch_give_a_two_rank_run_identical_to_one_rank() {
    assert_slurm_still_here();
    let t0 = Instant::now();
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = d.join("hx.toml");
    std::fs::write(&cfg, HYPERX).unwrap();

    // Plain: one rank, one thread.
    let plain = d.join("R1-T1.h5");
    run_ok(d, XNET, &["run", s(&cfg), "-q", "-t", "1", "-o", s(&plain)]);

    // srun: two tasks that must form one 2-rank MPI run (PMI-2, as MPICH needs).
    let srun = d.join("R2-T1.h5");
    run_ok(
        d,
        "srun",
        &["-n", "2", "--overcommit", "--mpi=pmi2", XNET, "run", s(&cfg), "-q", "-t", "1", "-o", s(&srun)],
    );

    // sbatch with the job script users adapt, its #SBATCH settings overridden on the
    // command line and its variables through --export; --wait returns the job's status.
    let batch = d.join("sbatch.h5");
    let job_out = d.join("job.out");
    let export = format!("--export=ALL,XNET={XNET},CONFIG={},OUT={}", s(&cfg), s(&batch));
    let script = workspace().join("jobs/run.sbatch");
    let out = Command::new("sbatch")
        .args([
            "--wait",
            "--nodes=1",
            "--ntasks-per-node=2",
            "--cpus-per-task=1",
            "--overcommit",
            "--time=00:05:00",
            &format!("--output={}", s(&job_out)),
            &export,
            s(&script),
        ])
        .current_dir(d)
        .stdin(Stdio::null())
        .output()
        .expect("cannot start sbatch");
    let log = std::fs::read_to_string(&job_out).unwrap_or_default();
    assert_eq!(
        out.status.code(),
        Some(0),
        "sbatch --wait jobs/run.sbatch: {}\n--- job output ---\n{log}",
        describe(&out)
    );

    // Identical results; the Slurm runs were one 2-rank MPI run each (two independent
    // 1-rank runs would write ranks = 1, twice).
    let first = dump(&plain);
    assert_eq!(attr_str(&open(&plain), "status"), "completed");
    assert!(attr_u64(&open(&plain).group("points/000").unwrap(), "delivered_total") > 1000);
    for (name, path) in [("srun", &srun), ("sbatch", &batch)] {
        let file = open(path);
        assert_eq!(attr_u64(&file, "ranks"), 2, "{name}: not a 2-rank MPI run");
        assert_eq!(attr_str(&file, "status"), "completed", "{name}");
        let sent =
            file.group("points/000").unwrap().attr("rank_messages_sent").unwrap().read_raw::<u64>().unwrap();
        assert_eq!(sent.len(), 2, "{name}: per-rank figures for 2 ranks");
        let diffs = differences(&first, &dump(path));
        assert!(diffs.is_empty(), "plain 1-rank run and {name} differ:\n{}", diffs.join("\n"));
    }
    eprintln!("slurm: xnet, srun and sbatch runs took {:.1} s", t0.elapsed().as_secs_f64());

    // scripts/bench/scaling.py: a table with one row per file, and the plot.
    let Some(python) = common::python_with("h5py, matplotlib") else {
        eprintln!(
            "\n*** SKIPPED: no Python with h5py and matplotlib; scripts/bench/scaling.py was NOT tested ***\n"
        );
        return;
    };
    let png = d.join("scaling.png");
    let o = Command::new(&python)
        .arg(workspace().join("scripts/bench/scaling.py"))
        .args(["--plot", s(&png), s(&srun), s(&plain)])
        .current_dir(d)
        .output()
        .expect("run python");
    assert_eq!(o.status.code(), Some(0), "scripts/bench/scaling.py: {}", describe(&o));
    let text = String::from_utf8_lossy(&o.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(".h5")).collect();
    assert_eq!(rows.len(), 2, "scaling table should have 2 rows:\n{text}");
    let layout = |row: &str| row.split_whitespace().take(2).collect::<Vec<_>>().join("x");
    assert_eq!((layout(rows[0]), layout(rows[1])), ("1x1".into(), "2x1".into()), "sorted by cores:\n{text}");
    let png_len = std::fs::metadata(&png).map(|m| m.len()).unwrap_or(0);
    assert!(png_len > 1000, "no plot at {} ({png_len} bytes)", png.display());

    // ... and refuses files of different configurations.
    let other = d.join("other.h5");
    run_ok(d, XNET, &["run", s(&cfg), "-q", "-t", "1", "--set", "traffic.load=0.2", "-o", s(&other)]);
    let o = Command::new(&python)
        .arg(workspace().join("scripts/bench/scaling.py"))
        .args(["--no-plot", s(&plain), s(&other)])
        .output()
        .expect("run python");
    assert_eq!(o.status.code(), Some(1), "mixed configs: {}", describe(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("same configuration"), "{}", describe(&o));
    eprintln!("slurm: whole test {:.1} s", t0.elapsed().as_secs_f64());
}

/// The README's ready study (configs/studies/quick-routings.toml) as a Slurm job array:
/// one task per run, each through `srun --mpi=pmi2`; every file is that of the same study
/// run locally.
#[test]
#[cfg_attr(
    not(has_slurm),
    ignore = "needs a running Slurm (SLURM_CONF, sinfo): scripts/slurm-local.sh start"
)]
fn the_ready_study_as_a_job_array_gives_the_files_of_the_local_study() {
    assert_slurm_still_here();
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let study = workspace().join("configs/studies/quick-routings.toml");
    run_ok(d, XNET, &["study", s(&study), "--dir", "local", "--no-report", "-q"]);
    let out = run_ok(d, XNET, &["study", s(&study), "--dir", "array", "--slurm", "--wait"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("all 6 runs done"), "{}", describe(&out));
    let runs = ["000-dor-uniform", "001-dor-tornado", "002-minimal-uniform", "003-minimal-tornado"];
    for (task, run) in runs.iter().chain(&["004-valiant-uniform", "005-valiant-tornado"]).enumerate() {
        let a = d.join(format!("local/runs/{run}.h5"));
        let b = d.join(format!("array/runs/{run}.h5"));
        let diff = differences(&dump(&a), &dump(&b));
        assert!(diff.is_empty(), "{run}: {diff:?}");
        let log = std::fs::read_to_string(d.join(format!("array/runs/slurm-{task}.out"))).unwrap_or_default();
        assert!(log.contains(&format!("run {run}:")), "{run}: task log: {log}");
    }
}

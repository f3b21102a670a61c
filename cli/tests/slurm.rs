//! The Slurm path: `srun --mpi=pmi2` and `sbatch jobs/run.sbatch` give a real 2-rank MPI
//! run whose file is identical (environment attributes aside) to a plain 1-rank run, and
//! `scripts/scaling.py` reads the result files.
//!
//! Needs a running Slurm: `bash scripts/slurm-local.sh install` then
//! `eval "$(bash scripts/slurm-local.sh start)"` (a single-node cluster on this machine;
//! `.ci/run` does this). Without `sinfo` on the PATH or without `SLURM_CONF` the test is
//! skipped loudly, unless `XNET_REQUIRE_SLURM=1` (set by `.ci/run`), which makes a
//! missing Slurm a failure.

use hdf5::types::{TypeDescriptor, VarLenAscii, VarLenUnicode};
use hdf5::{Attribute, Dataset, Datatype, File, Group, Location};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;
use tempfile::TempDir;

const XNET: &str = env!("CARGO_BIN_EXE_xnet");

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("cli/ has a parent").to_path_buf()
}

fn describe(out: &Output) -> String {
    format!(
        "exit status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `program args...` in `dir` and asserts it exited 0.
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

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// HyperX 4x4, 4 endpoints per switch, 2000 cycles: well under a second.
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
// Comparing result files (as in cli/tests/cli.rs)
// ---------------------------------------------------------------------------------------

fn open(path: &Path) -> File {
    File::open(path).unwrap_or_else(|e| panic!("cannot open {}: {e}", path.display()))
}

fn attr_str(loc: &Location, name: &str) -> String {
    let a = loc.attr(name).unwrap_or_else(|e| panic!("attribute {name} missing on {}: {e}", loc.name()));
    a.read_scalar::<VarLenUnicode>().unwrap_or_else(|e| panic!("attribute {name}: {e}")).as_str().to_string()
}

fn attr_u64(loc: &Location, name: &str) -> u64 {
    loc.attr(name)
        .and_then(|a| a.read_scalar::<u64>())
        .unwrap_or_else(|e| panic!("attribute {name} on {}: {e}", loc.name()))
}

// hdf5-metno reads only into compile-time types, so whole datasets of any type are read
// through `H5Dread` into a packed copy of their own type (see cli/tests/cli.rs).
extern "C" {
    fn H5Dread(
        dset_id: i64,
        mem_type_id: i64,
        mem_space_id: i64,
        file_space_id: i64,
        plist_id: i64,
        buf: *mut std::ffi::c_void,
    ) -> std::ffi::c_int;
}

fn has_varlen(t: &TypeDescriptor) -> bool {
    match t {
        TypeDescriptor::VarLenArray(_) | TypeDescriptor::VarLenAscii | TypeDescriptor::VarLenUnicode => true,
        TypeDescriptor::Compound(c) => c.fields.iter().any(|f| has_varlen(&f.ty)),
        TypeDescriptor::FixedArray(t, _) => has_varlen(t),
        _ => false,
    }
}

fn dataset_bytes(ds: &Dataset) -> (String, Vec<u8>) {
    let name = ds.name();
    let desc = ds.dtype().and_then(|t| t.to_descriptor()).unwrap_or_else(|e| panic!("type of {name}: {e}"));
    assert!(!has_varlen(&desc), "{name}: variable-length data cannot be compared as bytes");
    let packed = desc.to_packed_repr();
    let mem = Datatype::from_descriptor(&packed).unwrap_or_else(|e| panic!("{name}: {e}"));
    let n = ds.size();
    let mut buf = vec![0u8; n * mem.size()];
    if n > 0 {
        let rc = hdf5::sync::sync(|| unsafe { H5Dread(ds.id(), mem.id(), 0, 0, 0, buf.as_mut_ptr().cast()) });
        assert!(rc >= 0, "H5Dread of {name} failed ({rc})");
    }
    (format!("{packed:?} shape {:?}", ds.shape()), buf)
}

fn attr_text(a: &Attribute) -> String {
    let desc = a.dtype().and_then(|t| t.to_descriptor()).expect("attribute type");
    let values = match &desc {
        TypeDescriptor::VarLenUnicode => {
            format!(
                "{:?}",
                a.read_raw::<VarLenUnicode>().unwrap().iter().map(|v| v.as_str()).collect::<Vec<_>>()
            )
        }
        TypeDescriptor::VarLenAscii => {
            format!(
                "{:?}",
                a.read_raw::<VarLenAscii>().unwrap().iter().map(|v| v.as_str()).collect::<Vec<_>>()
            )
        }
        TypeDescriptor::Float(_) => {
            let v = a.read_raw::<f64>().unwrap();
            format!("{v:?} bits {:x?}", v.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
        }
        TypeDescriptor::Unsigned(_) => format!("{:?}", a.read_raw::<u64>().unwrap()),
        TypeDescriptor::Integer(_) => format!("{:?}", a.read_raw::<i64>().unwrap()),
        TypeDescriptor::Boolean => format!("{:?}", a.read_raw::<bool>().unwrap()),
        other => panic!("attribute {}: unexpected type {other}", a.name()),
    };
    format!("{desc} shape {:?} = {values}", a.shape())
}

#[derive(Default)]
struct Dump {
    datasets: BTreeMap<String, (String, Vec<u8>)>,
    attrs: BTreeMap<String, String>,
}

fn dump_attrs(loc: &Location, dump: &mut Dump) {
    for name in loc.attr_names().expect("attribute names") {
        let a = loc.attr(&name).expect("attribute");
        dump.attrs.insert(format!("{}@{name}", loc.name()), attr_text(&a));
    }
}

fn dump_group(g: &Group, dump: &mut Dump) {
    dump_attrs(g, dump);
    for ds in g.datasets().expect("datasets") {
        dump_attrs(&ds, dump);
        dump.datasets.insert(ds.name(), dataset_bytes(&ds));
    }
    for sub in g.groups().expect("groups") {
        dump_group(&sub, dump);
    }
}

fn dump(path: &Path) -> Dump {
    let mut d = Dump::default();
    dump_group(&open(path), &mut d);
    d
}

/// Attributes that record the environment, wall-clock time or the rank/thread layout
/// (docs/output-format.md), allowed to differ between layouts.
fn environment_attr(key: &str) -> bool {
    let name = key.rsplit('@').next().unwrap();
    matches!(
        name,
        "threads"
            | "partitions"
            | "lookahead"
            | "wall_seconds"
            | "windows"
            | "command"
            | "routing_build_seconds"
            | "peak_rss_bytes"
            | "packet_hops_per_second"
            | "ranks"
    ) || name.starts_with("partition_")
        || name.starts_with("rank_")
}

fn differences(a: &Dump, b: &Dump) -> Vec<String> {
    let mut diffs = Vec::new();
    let keys = |m: &BTreeMap<String, (String, Vec<u8>)>| m.keys().cloned().collect::<Vec<_>>();
    if keys(&a.datasets) != keys(&b.datasets) {
        diffs.push(format!("dataset sets differ: {:?} vs {:?}", keys(&a.datasets), keys(&b.datasets)));
    }
    for (path, (ta, ba)) in &a.datasets {
        let Some((tb, bb)) = b.datasets.get(path) else { continue };
        if ta != tb {
            diffs.push(format!("{path}: type/shape {ta} vs {tb}"));
        } else if ba != bb {
            let at = ba.iter().zip(bb).position(|(x, y)| x != y).unwrap_or(ba.len().min(bb.len()));
            diffs.push(format!("{path}: bytes differ from offset {at} ({} bytes)", ba.len()));
        }
    }
    let names = a.attrs.keys().chain(b.attrs.keys()).filter(|k| !environment_attr(k));
    for key in names.collect::<std::collections::BTreeSet<_>>() {
        let (va, vb) = (a.attrs.get(key), b.attrs.get(key));
        if va != vb {
            diffs.push(format!("attribute {key}: {va:?} vs {vb:?}"));
        }
    }
    diffs
}

// ---------------------------------------------------------------------------------------
// Slurm
// ---------------------------------------------------------------------------------------

/// Whether a Slurm is there to use: `sinfo` answers and `SLURM_CONF` is set. Otherwise
/// the reason, which is a skip, or a failure under `XNET_REQUIRE_SLURM=1`.
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

fn python_with_h5py() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("XNET_PYTHON").map(PathBuf::from).into_iter().collect();
    candidates.push(workspace().join(".venv/bin/python3"));
    candidates.push(PathBuf::from("python3"));
    candidates.into_iter().find(|py| {
        Command::new(py)
            .args(["-c", "import h5py, matplotlib"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

#[test]
fn srun_and_sbatch_give_a_two_rank_run_identical_to_one_rank() {
    if let Some(why) = slurm_missing() {
        if std::env::var("XNET_REQUIRE_SLURM").is_ok_and(|v| !v.is_empty() && v != "0") {
            panic!(
                "XNET_REQUIRE_SLURM is set but there is no Slurm: {why}. \
                 Run `bash scripts/slurm-local.sh install && eval \"$(bash scripts/slurm-local.sh start)\"`"
            );
        }
        eprintln!(
            "\n*** SKIPPED: no Slurm (run scripts/slurm-local.sh start) ***\n\
             ({why}; srun, sbatch and jobs/run.sbatch were NOT tested)\n"
        );
        return;
    }
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

    // scripts/scaling.py: a table with one row per file, and the plot.
    let Some(python) = python_with_h5py() else {
        eprintln!(
            "\n*** SKIPPED: no Python with h5py and matplotlib; scripts/scaling.py was NOT tested ***\n"
        );
        return;
    };
    let png = d.join("scaling.png");
    let o = Command::new(&python)
        .arg(workspace().join("scripts/scaling.py"))
        .args(["--plot", s(&png), s(&srun), s(&plain)])
        .current_dir(d)
        .output()
        .expect("run python");
    assert_eq!(o.status.code(), Some(0), "scripts/scaling.py: {}", describe(&o));
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
        .arg(workspace().join("scripts/scaling.py"))
        .args(["--no-plot", s(&plain), s(&other)])
        .output()
        .expect("run python");
    assert_eq!(o.status.code(), Some(1), "mixed configs: {}", describe(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("same configuration"), "{}", describe(&o));
    eprintln!("slurm: whole test {:.1} s", t0.elapsed().as_secs_f64());
}

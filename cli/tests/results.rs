//! The result files as scripts read them: docs/output-format.md against real files, a
//! running file watched with h5py, and `python -m xnet_study show`.
//!
//! They run the real `xnet` executable and read back the HDF5 files it writes (layout:
//! docs/output-format.md); every run is small, in a temporary directory that is also its
//! working directory. Helpers and configurations shared by the test files: `common/`.
//! The tests that need a Python with h5py (and pandas, matplotlib) are ignored, with the
//! reason, when cli/build.rs found none as they were built.

mod common;

use common::*;
use std::path::Path;
use std::process::Command;
use tempfile::TempDir;

/// The Python with `modules` that cli/build.rs found when the tests were built (tests
/// that need one are ignored without it); a failure if it has gone since.
fn python_found_at_build(modules: &str) -> std::path::PathBuf {
    common::python_with(modules).unwrap_or_else(|| {
        panic!(
            "a Python with {modules} was there when the tests were built, and none is now \
             (tried $XNET_PYTHON, .venv/bin/python3, python3)"
        )
    })
}

#[test]
#[cfg_attr(not(has_python_h5py), ignore = "needs a Python with h5py: scripts/bootstrap.sh makes .venv")]
fn output_format_doc_matches_real_files() {
    let python = python_found_at_build("h5py");
    let dir = TempDir::new().unwrap();
    let d = dir.path();
    let cfg = write(d, "df.toml", DRAGONFLY_UGAL);
    let sweep = d.join("sweep.h5");
    xnet_expect(d, &["sweep", s(&cfg), "--loads", "0.1,0.3", "-q", "-t", "1", "-o", s(&sweep)], 0);
    let ring = write(d, "ring.toml", DEADLOCKING_RING);
    let deadlock = d.join("ring.h5");
    xnet_expect(d, &["run", s(&ring), "-q", "-t", "1", "-o", s(&deadlock)], 3);
    // Application jobs with background traffic: the `workload` group.
    let jobs = workspace().join("configs/workload-stencil.toml");
    let work = d.join("work.h5");
    let record = "workload.record_sends=true";
    xnet_expect(d, &["run", s(&jobs), "-q", "-t", "1", "-o", s(&work), "--set", record], 0);
    // A completion-time run (its point adds attributes) and a workload end before `cycles`,
    // `completed` as the status table says.
    let quick = workspace().join("configs/quick.toml");
    let bulk = d.join("bulk.h5");
    let args = ["run", s(&quick), "-q", "-t", "1", "-o", s(&bulk), "--set", "traffic.phits_per_endpoint=160"];
    xnet_expect(d, &args, 0);
    for file in [&bulk, &work] {
        let f = open(file);
        let reached = attr_u64(&f.group("points/000").unwrap(), "time_reached");
        assert!(reached < attr_u64(&f, "cycles"), "{}: ran to the end", file.display());
        assert_eq!(attr_str(&f, "status"), "completed", "{}", file.display());
    }
    let doc = std::fs::read_to_string(workspace().join("docs/output-format.md")).unwrap();
    let completed = doc.lines().find(|l| l.starts_with("| `completed` | every load point")).unwrap();
    assert!(
        completed.contains("completion-time run") && completed.contains("every job finished"),
        "{completed}"
    );
    // A run killed during its first point: /summary exists (created with the file, for
    // readers of a running file) and has no rows yet, which the document states.
    let killed = d.join("killed.h5");
    let mut child = start_long_run(d, &["-t", "1", "-o", s(&killed)]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(open(&killed).dataset("summary").unwrap().shape(), vec![0]);
    let script = workspace().join("scripts/dev/check_output_format.py");
    let check = |doc: &Path| {
        Command::new(&python)
            .arg(&script)
            .arg(doc)
            .args([&sweep, &deadlock, &work, &bulk, &killed])
            .output()
            .expect("run python")
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
    // ... also in the workload's groups.
    let drifted = write(d, "drifted.md", &doc.replacen("| `mean_end` | f64 |", "| `mean_end` | u64 |", 1));
    let o = check(&drifted);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("iterations: column `mean_end` is f64, documented u64"),
        "{}",
        describe(&o)
    );
}

#[test]
#[cfg_attr(
    not(has_python_study),
    ignore = "needs a Python with h5py, pandas, matplotlib: scripts/bootstrap.sh"
)]
fn a_running_file_can_be_watched_with_h5py() {
    let python = python_found_at_build(XNET_STUDY_NEEDS);
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
    let read = xnet_study(&python, &["show", s(&out)]).output().unwrap();
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
#[cfg_attr(
    not(has_python_study),
    ignore = "needs a Python with h5py, pandas, matplotlib: scripts/bootstrap.sh"
)]
fn xnet_study_show_prints_a_result_file() {
    let python = python_found_at_build(XNET_STUDY_NEEDS);
    let dir = TempDir::new().unwrap();
    let cfg = write(dir.path(), "df.toml", DRAGONFLY_UGAL);
    let out = dir.path().join("df.h5");
    xnet_expect(dir.path(), &["sweep", s(&cfg), "--loads", "0.1,0.3", "-q", "-t", "1", "-o", s(&out)], 0);
    let py = |file: &Path| xnet_study(&python, &["show", s(file)]).output().expect("run python");
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

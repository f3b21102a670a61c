//! Finds the tools some integration tests need, so that a test whose tool is missing is
//! reported as ignored, with the reason, instead of passing without testing anything:
//!
//! - `has_slurm`: a running Slurm (`SLURM_CONF` set and `sinfo` answering; tests/slurm.rs);
//! - `has_opensm`: OpenSM (`/usr/sbin/opensm`) and ibsim (`ibsim`, `ibsim-run` on the
//!   PATH; tests/opensm.rs);
//! - `has_python_h5py`, `has_python_study`: a Python with h5py, and with h5py, pandas and
//!   matplotlib (`$XNET_PYTHON`, the workspace's `.venv/bin/python3`, or `python3`;
//!   tests/results.rs).
//!
//! The probes run when this script does: Cargo reruns it when `PATH`, `SLURM_CONF` or
//! `XNET_PYTHON` change, when `/usr/sbin` changes (OpenSM installed) and when the
//! workspace's `.venv` changes; a tool installed elsewhere on an unchanged PATH, or a venv
//! created where there was none, is seen after `touch cli/build.rs`. `XNET_REQUIRE_SLURM` and `XNET_REQUIRE_OPENSM` (set by `.ci/run`)
//! are read by the tests at run time: a test that always runs fails when they are set and
//! the tool was not found here.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Whether `program args` runs and succeeds, its output discarded.
fn succeeds(program: &Path, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `name` found in a directory of the PATH.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(name).is_file()))
}

/// Whether one of the Pythons the tests try (tests/common: `python_with`) imports `modules`.
fn python_with(workspace: &Path, modules: &str) -> bool {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("XNET_PYTHON").map(PathBuf::from).into_iter().collect();
    candidates.push(workspace.join(".venv/bin/python3"));
    candidates.push(PathBuf::from("python3"));
    // -B: no bytecode written into the venv, which would make Cargo run this script again.
    candidates.iter().any(|py| succeeds(py, &["-B", "-c", &format!("import {modules}")]))
}

fn main() {
    let manifest =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("Cargo sets CARGO_MANIFEST_DIR"));
    let workspace = manifest.parent().expect("cli/ is in the workspace").to_path_buf();
    println!("cargo::rerun-if-changed=build.rs");
    for var in ["PATH", "SLURM_CONF", "XNET_PYTHON"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    // Only paths that exist: Cargo reruns a script whose watched path is missing every time.
    let venv = workspace.join(".venv");
    for dir in [Path::new("/usr/sbin"), venv.as_path()] {
        if dir.is_dir() {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
    let slurm = std::env::var_os("SLURM_CONF").is_some() && succeeds(Path::new("sinfo"), &["-h", "-o", "%T"]);
    let opensm = Path::new("/usr/sbin/opensm").is_file() && on_path("ibsim") && on_path("ibsim-run");
    let probes = [
        ("has_slurm", slurm),
        ("has_opensm", opensm),
        ("has_python_h5py", python_with(&workspace, "h5py")),
        ("has_python_study", python_with(&workspace, "h5py, pandas, matplotlib")),
    ];
    for (cfg, found) in probes {
        println!("cargo::rustc-check-cfg=cfg({cfg})");
        if found {
            println!("cargo::rustc-cfg={cfg}");
        }
    }
}

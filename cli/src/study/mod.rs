//! `xnet study`: a base configuration and a grid of overrides, expanded into named runs in
//! a study folder, each run a load sweep (`xnet sweep`) writing one HDF5 file.
//!
//! The study file (TOML; see docs/studies.md):
//!
//! ```toml
//! [study]
//! base = "../quick.toml"      # the configuration every run starts from (relative to this file)
//! loads = [0.1, 0.3, 0.5]     # the inner sweep (default: the base's traffic.loads)
//! threads = 1                 # per run
//! [set]                       # overrides for every run
//! "simulation.cycles" = 2000
//! [grid]                      # every combination; the first key varies slowest
//! "routing.algorithm" = ["minimal", "dor"]
//! ```
//!
//! The folder holds `study.toml` (the study as given), `base.toml` (the base as it was
//! when the study was created), `manifest.toml` (every run: its name, file and overrides,
//! which the Python package reads) and `runs/NAME.h5`, `runs/NAME.log`. Each run is a child
//! process (`xnet sweep`), so runs are isolated and the same command serves a laptop and a
//! Slurm array task. A run writes `NAME.partial.h5` and renames it when it ends with a
//! result (completed, deadlock, unfinished), so a file without `.partial` is a finished
//! run: running the study again skips those and redoes the rest.
//!
//! This file holds what a study is (the sections of a study file, [`Study`], [`Run`]); the
//! others, by what a reader looks for: `file.rs` reads a study file and its base and
//! expands the grid into runs; `folder.rs` is the study folder as a whole (creating or
//! checking it, its manifest, a study read back from it); `run.rs` is one run in the
//! folder (its files, where it stands, the `xnet sweep` that makes it, keeping its result);
//! `local.rs` runs the runs on this machine; `slurm.rs` writes and submits the Slurm array,
//! and runs one of its tasks; `status.rs` says where the runs stand (`--status`, the
//! progress display); `report.rs` calls the Python package for the HTML report.

mod file;
mod folder;
mod local;
mod report;
mod run;
mod slurm;
mod status;

pub use local::run_local;
pub use slurm::{run_task, write_slurm, Submit};
pub use status::status;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use toml::Value;

/// The `[study]` section.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudySection {
    base: PathBuf,
    #[serde(default)]
    loads: Vec<f64>,
    #[serde(default = "one")]
    threads: u32,
    /// Runs at once on this machine (default: cores / threads).
    jobs: Option<u32>,
    #[serde(default)]
    stop_at_saturation: bool,
    /// Each run finds its saturation load (`xnet sweep --find-saturation`).
    #[serde(default)]
    find_saturation: bool,
    /// The bracket's width for `find_saturation` (`--tolerance`; default 0.01).
    saturation_tolerance: Option<f64>,
}

fn one() -> u32 {
    1
}

/// The `[slurm]` section: how `--slurm` asks for each array task.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SlurmSection {
    /// `--time` of each task.
    time: Option<String>,
    /// `--partition`.
    partition: Option<String>,
    /// MPI ranks per run (`srun --ntasks`).
    #[serde(default = "one")]
    ranks: u32,
    /// More `#SBATCH` options, e.g. `["--account=proj"]`.
    #[serde(default)]
    options: Vec<String>,
}

impl Default for SlurmSection {
    fn default() -> Self {
        SlurmSection { time: None, partition: None, ranks: 1, options: Vec::new() }
    }
}

/// A study file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StudyFile {
    study: StudySection,
    #[serde(default)]
    set: BTreeMap<String, Value>,
    /// Kept in file order: the first key varies slowest.
    #[serde(default)]
    grid: toml::Table,
    #[serde(default)]
    slurm: Option<SlurmSection>,
}

/// One run of a study: a point of the grid.
#[derive(Clone, Debug)]
pub struct Run {
    /// `NNN-value-value`, unique in the study.
    pub name: String,
    /// The grid's overrides, in grid key order.
    pub overrides: Vec<(String, Value)>,
}

/// A study, expanded and checked.
pub struct Study {
    name: String,
    /// The base configuration the runs use: the base with the text of the files it names.
    base_text: String,
    /// The base as read, which a folder made by an xnet that did not put the files in
    /// holds instead.
    base_as_given: String,
    study_text: String,
    section: StudySection,
    slurm: SlurmSection,
    set: Vec<(String, Value)>,
    keys: Vec<String>,
    runs: Vec<Run>,
    loads: Vec<f64>,
}

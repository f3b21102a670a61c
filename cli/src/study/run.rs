//! One run in the study folder: its files under `runs/`, where it stands (what resuming
//! reads), the `xnet sweep` that makes it, and keeping its result when that ends.

use super::{Run, Study};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};

impl Study {
    /// The arguments of the `xnet sweep` that makes run `run` in `dir`.
    pub(super) fn sweep_args(&self, dir: &Path, run: &Run) -> Vec<String> {
        let loads: Vec<String> = self.loads.iter().map(|l| l.to_string()).collect();
        let mut args = vec![
            "sweep".to_string(),
            dir.join("base.toml").display().to_string(),
            "--loads".into(),
            loads.join(","),
            "-t".into(),
            self.section.threads.to_string(),
            "-q".into(),
            "-o".into(),
            partial_path(dir, run).display().to_string(),
            "--progress-file".into(),
            progress_path(dir, run).display().to_string(),
        ];
        if self.section.stop_at_saturation {
            args.push("--stop-at-saturation".into());
        }
        if self.section.find_saturation {
            args.push("--find-saturation".into());
            if let Some(t) = self.section.saturation_tolerance {
                args.extend(["--tolerance".into(), t.to_string()]);
            }
        }
        for o in Self::overrides_of(&self.set, run) {
            args.push("--set".into());
            args.push(o);
        }
        args
    }
}

fn result_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(format!("{}.h5", run.name))
}

pub(super) fn partial_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(format!("{}.partial.h5", run.name))
}

pub(super) fn progress_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(format!("{}.progress", run.name))
}

pub(super) fn log_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(format!("{}.log", run.name))
}

/// Where a run stands, from the files in the study folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunState {
    /// Its result file exists.
    Done,
    /// It started and did not end with a result (interrupted, failed, or running now).
    Started,
    /// Not started.
    Pending,
}

impl RunState {
    pub(super) fn of(dir: &Path, run: &Run) -> RunState {
        if result_path(dir, run).exists() {
            RunState::Done
        } else if partial_path(dir, run).exists() || log_path(dir, run).exists() {
            RunState::Started
        } else {
            RunState::Pending
        }
    }
}

/// Keeps a run's result when its `xnet sweep` ended with one (exit `code` 0, 3 or 4): the
/// partial file becomes the result file. Returns whether it did.
pub(super) fn keep_result(dir: &Path, run: &Run, code: Option<i32>) -> Result<bool> {
    if !has_result(code) {
        return Ok(false);
    }
    std::fs::rename(partial_path(dir, run), result_path(dir, run))
        .with_context(|| format!("run {}: cannot rename its result file", run.name))?;
    Ok(true)
}

/// Exit codes of `xnet sweep` that leave a result: completed, deadlock, unfinished.
fn has_result(code: Option<i32>) -> bool {
    matches!(code, Some(0 | 3 | 4))
}

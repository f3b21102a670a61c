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

/// Whether a process holds run `run`'s partial file now: a running xnet holds an exclusive
/// lock on its file (docs/output-format.md), which the kernel drops when it dies.
pub(super) fn is_running(dir: &Path, run: &Run) -> bool {
    std::fs::File::open(partial_path(dir, run))
        .is_ok_and(|f| matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock)))
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

/// What a run's partial file turned out to be, checked before the run is started again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Leftover {
    /// No partial file, or one without a result (interrupted, failed, unreadable): the run
    /// is redone.
    Nothing,
    /// A partial file holding a result, now renamed to the result file: its run ended after
    /// its study stopped watching it (the study was killed while it ran).
    Kept,
    /// Another process holds the partial file (a run still writing it): left alone.
    InUse,
}

/// Looks at run `run`'s partial file before the run is started again: keeps it as the
/// result when its run ended with one (status completed, deadlock or unfinished) but was
/// never renamed, and says whether another process still writes it.
pub(super) fn recover_result(dir: &Path, run: &Run) -> Result<Leftover> {
    let partial = partial_path(dir, run);
    if result_path(dir, run).exists() {
        return Ok(Leftover::Nothing);
    }
    let Ok(file) = std::fs::File::open(&partial) else {
        return Ok(Leftover::Nothing);
    };
    // A running xnet holds an exclusive lock on its file (docs/output-format.md).
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Leftover::InUse),
        Err(std::fs::TryLockError::Error(_)) => return Ok(Leftover::Nothing),
    }
    let status = hdf5::File::with_options()
        .with_fapl(|p| p.file_locking(false))
        .open(&partial)
        .and_then(|f| f.attr("status")?.read_scalar::<hdf5::types::VarLenUnicode>())
        .map(|s| s.as_str().to_string());
    if !matches!(status.as_deref(), Ok("completed" | "deadlock" | "unfinished")) {
        return Ok(Leftover::Nothing);
    }
    // Renamed under the lock, so that no run can take the file meanwhile.
    std::fs::rename(&partial, result_path(dir, run))
        .with_context(|| format!("run {}: cannot rename its result file", run.name))?;
    Ok(Leftover::Kept)
}

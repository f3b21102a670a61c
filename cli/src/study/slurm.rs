//! A study on Slurm: the array script (one task per run) written into the folder and
//! submitted, and what each array task runs (`xnet study --task K DIR`).

use super::run::{keep_result, partial_path, recover_result, Leftover, RunState};
use super::Study;
use anyhow::{bail, Context, Result};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs one run of a prepared study folder, as a Slurm array task does: under Slurm through
/// `srun --mpi=pmi2` with the study's ranks and threads, else directly. Skips a run that
/// is done.
pub fn run_task(dir: &Path, index: usize) -> Result<i32> {
    let study =
        Study::from_folder(dir).with_context(|| format!("{} is not a study folder", dir.display()))?;
    let Some(run) = study.runs.get(index) else {
        bail!("--task {index}: the study has runs 0 to {}", study.runs.len().saturating_sub(1));
    };
    if recover_result(dir, run)? == Leftover::InUse {
        bail!(
            "run {}: its file {} is being written by another process: left alone",
            run.name,
            partial_path(dir, run).display()
        );
    }
    if RunState::of(dir, run) == RunState::Done {
        println!("run {} is done already", run.name);
        return Ok(0);
    }
    let exe = std::env::current_exe().context("cannot find the xnet executable")?;
    let mut command = if std::env::var_os("SLURM_JOB_ID").is_some() {
        let mut c = Command::new("srun");
        c.arg("--mpi=pmi2")
            .arg(format!("--ntasks={}", study.slurm.ranks))
            .arg(format!("--cpus-per-task={}", study.section.threads))
            .arg(&exe);
        c
    } else {
        Command::new(&exe)
    };
    println!("run {}: {}", run.name, study.sweep_args(dir, run).join(" "));
    let status = command.args(study.sweep_args(dir, run)).status().context("cannot start the run")?;
    if keep_result(dir, run, status.code())? {
        return Ok(0);
    }
    Ok(status.code().unwrap_or(1))
}

/// Whether `--slurm` submits the array it writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submit {
    /// Write the script only.
    No,
    /// Submit it and return.
    Yes,
    /// Submit it and wait for every task (`sbatch --wait`).
    AndWait,
}

/// Writes the Slurm array script of the study into its folder and submits it as `submit`
/// says. Returns the exit code: 0, or after waiting, 1 if some run has no result.
pub fn write_slurm(study: &Study, dir: &Path, submit: Submit) -> Result<i32> {
    study.prepare(dir)?;
    let dir = dir.canonicalize().with_context(|| format!("cannot resolve {}", dir.display()))?;
    let exe = std::env::current_exe().context("cannot find the xnet executable")?;
    let n = study.runs.len();
    let s = sbatch_script(study, &dir, &exe);
    let script = dir.join("slurm.sbatch");
    std::fs::write(&script, s).with_context(|| format!("cannot write {}", script.display()))?;
    println!("slurm script: {} ({n} array tasks)", script.display());
    if submit != Submit::No {
        sbatch(&script, submit)?;
    }
    if submit == Submit::AndWait {
        let missing: Vec<&str> = study
            .runs
            .iter()
            .filter(|r| RunState::of(&dir, r) != RunState::Done)
            .map(|r| r.name.as_str())
            .collect();
        if !missing.is_empty() {
            eprintln!(
                "runs without a result: {} (see {}/runs/slurm-*.out)",
                missing.join(", "),
                dir.display()
            );
            return Ok(1);
        }
        println!("all {n} runs done: {}", dir.display());
    }
    Ok(0)
}

/// The array script: one task per run of the study in `dir`, each running `exe study
/// --task K DIR` with the `[slurm]` section's requests.
fn sbatch_script(study: &Study, dir: &Path, exe: &Path) -> String {
    let n = study.runs.len();
    let mut s = String::new();
    let _ = writeln!(s, "#!/usr/bin/env bash");
    let _ = writeln!(s, "# Written by `xnet study --slurm`: one array task per run of study {}.", study.name);
    let _ = writeln!(
        s,
        "# Each task runs `xnet study --task $SLURM_ARRAY_TASK_ID DIR`, which starts the run with"
    );
    let _ =
        writeln!(s, "# `srun --mpi=pmi2` and skips it if it is done. Resubmit to redo what did not finish.");
    let _ = writeln!(s, "#SBATCH --job-name=xnet-study-{}", study.name);
    let _ = writeln!(s, "#SBATCH --array=0-{}", n - 1);
    let _ = writeln!(s, "#SBATCH --ntasks={}", study.slurm.ranks);
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", study.section.threads);
    if let Some(t) = &study.slurm.time {
        let _ = writeln!(s, "#SBATCH --time={t}");
    }
    if let Some(p) = &study.slurm.partition {
        let _ = writeln!(s, "#SBATCH --partition={p}");
    }
    let _ = writeln!(s, "#SBATCH --signal=TERM@60");
    let _ = writeln!(s, "#SBATCH --output={}", shell_quote(&format!("{}/runs/slurm-%a.out", dir.display())));
    for o in &study.slurm.options {
        let _ = writeln!(s, "#SBATCH {o}");
    }
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(
        s,
        "exec {} study --task \"$SLURM_ARRAY_TASK_ID\" {}",
        shell_quote(&exe.display().to_string()),
        shell_quote(&dir.display().to_string())
    );
    s
}

/// Submits `script` with sbatch (`--wait` for [`Submit::AndWait`]) and prints what sbatch
/// says.
fn sbatch(script: &Path, submit: Submit) -> Result<()> {
    let mut sbatch = Command::new("sbatch");
    if submit == Submit::AndWait {
        sbatch.arg("--wait");
    }
    let out = sbatch
        .arg(script)
        .stdin(Stdio::null())
        .output()
        .context("cannot run sbatch (is Slurm installed? the script is written; submit it by hand)")?;
    // With --wait, sbatch also fails when a task failed: the caller's check names the runs.
    if !out.status.success() && (submit != Submit::AndWait || out.stdout.is_empty()) {
        bail!("sbatch {} failed: {}", script.display(), String::from_utf8_lossy(&out.stderr).trim());
    }
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}

/// `text` as one shell word (single quotes, a quote inside as `'\''`).
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

//! Where a study's runs stand: `xnet study --status`, and the progress display of a local
//! run, both from the progress file each running run rewrites.

use super::file::set_arg;
use super::run::{is_running, log_path, progress_path, RunState};
use super::{Run, Study};
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::time::Instant;

/// What a run's `--progress-file` says: `load_index loads cycle cycles`.
fn read_progress(path: &Path) -> Option<(u64, u64, u64, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: Vec<u64> = text.split_whitespace().filter_map(|w| w.parse().ok()).collect();
    (v.len() == 4).then(|| (v[0], v[1], v[2], v[3]))
}

/// The fraction of a run done, from its progress file (`None`: no progress file).
fn run_fraction(dir: &Path, run: &Run) -> Option<f64> {
    let (i, n, c, total) = read_progress(&progress_path(dir, run))?;
    Some(if n > 0 && total > 0 { (i as f64 + c as f64 / total as f64) / n as f64 } else { 0.0 })
}

/// The progress bar of a local run: runs done of `total`, `already` done before it began
/// (hidden when `quiet`).
pub(super) fn progress_bar(quiet: bool, total: usize, already: usize) -> ProgressBar {
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(total as u64) };
    bar.set_style(
        // wide_msg: the message cut to the terminal's width, so that it never wraps (a
        // wrapped line is left behind when the bar redraws).
        ProgressStyle::with_template("runs {pos}/{len} [{bar:30}] {wide_msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_position(already as u64);
    bar
}

/// The progress bar's message: the time left at the pace so far, then each running run's
/// progress. `not_ended` counts the runs still to run or running, `finished` those ended
/// with a result since `started`.
pub(super) fn progress_message(
    dir: &Path,
    running: &[&Run],
    not_ended: usize,
    finished: usize,
    started: Instant,
) -> String {
    let fractions: Vec<(&str, f64)> =
        running.iter().map(|run| (run.name.as_str(), run_fraction(dir, run).unwrap_or(0.0))).collect();
    let running: Vec<String> =
        fractions.iter().map(|(name, f)| format!("{name} {:.0}%", 100.0 * f)).collect();
    let in_flight: f64 = fractions.iter().map(|(_, f)| f).sum();
    let left = not_ended as f64 - in_flight;
    let done_equiv = finished as f64 + in_flight;
    let eta = if done_equiv > 0.0 {
        // Wall time per run at the pace so far (runs in parallel included).
        let per_run = started.elapsed().as_secs_f64() / done_equiv;
        format!("eta {}", human_seconds(left.max(0.0) * per_run))
    } else {
        "eta -".into()
    };
    format!("{eta} | {}", running.join(", "))
}

/// `xnet study --status DIR`: one line per run, then the counts.
pub fn status(dir: &Path) -> Result<()> {
    let study =
        Study::from_folder(dir).with_context(|| format!("{} is not a study folder", dir.display()))?;
    let mut counts = [0usize; 3];
    for run in &study.runs {
        let state = RunState::of(dir, run);
        let detail = match state {
            RunState::Done => {
                counts[0] += 1;
                "done".to_string()
            }
            RunState::Started => {
                counts[1] += 1;
                // A progress file outlives a killed run: only a held result file is running.
                match (is_running(dir, run), run_fraction(dir, run)) {
                    (true, Some(f)) => format!("running {:.0}%", 100.0 * f),
                    (true, None) => "running".to_string(),
                    (false, Some(f)) => format!("stopped at {:.0}% (rerun to redo)", 100.0 * f),
                    (false, None) => format!("started, not finished (see {})", log_path(dir, run).display()),
                }
            }
            RunState::Pending => {
                counts[2] += 1;
                "pending".to_string()
            }
        };
        let overrides: Vec<String> = run.overrides.iter().map(|(k, v)| set_arg(k, v)).collect();
        println!("{:<40} {:<28} {}", run.name, detail, overrides.join(" "));
    }
    println!(
        "study {}: {} runs: {} done, {} started, {} pending",
        study.name,
        study.runs.len(),
        counts[0],
        counts[1],
        counts[2]
    );
    Ok(())
}

/// Seconds as `1h02m`, `3m20s` or `42s`.
pub(super) fn human_seconds(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        _ if s >= 3600 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ if s >= 60 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{s}s"),
    }
}

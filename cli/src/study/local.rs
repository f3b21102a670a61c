//! Running a study's runs on this machine: one child `xnet sweep` per run, several at
//! once, with a progress display; what is done is skipped, so a second call resumes.

use super::report::python_report;
use super::run::{keep_result, log_path, progress_path, RunState};
use super::status::{human_seconds, run_fraction};
use super::Study;
use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running child.
struct Active {
    run: usize,
    child: Child,
    started: Instant,
}

/// The running children: any still running when the study returns early (an error) are
/// stopped, so that no run goes on unsupervised, its file never renamed.
struct Running(Vec<Active>);

impl std::ops::Deref for Running {
    type Target = Vec<Active>;
    fn deref(&self) -> &Vec<Active> {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Vec<Active> {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        for a in &mut self.0 {
            let _ = a.child.kill();
            let _ = a.child.wait();
        }
    }
}

/// Runs the study's runs that are not done, `jobs` at once, with a progress display.
/// Returns the exit code: 0 when every run has its result, 1 when some failed, 130 when
/// interrupted.
pub fn run_local(study: &Study, dir: &Path, jobs: Option<u32>, quiet: bool, report: bool) -> Result<i32> {
    study.prepare(dir)?;
    let exe = std::env::current_exe().context("cannot find the xnet executable")?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let jobs = jobs.or(study.section.jobs).unwrap_or((cores / study.section.threads).max(1)).max(1) as usize;
    let todo: Vec<usize> =
        (0..study.runs.len()).filter(|&i| RunState::of(dir, &study.runs[i]) != RunState::Done).collect();
    let total = study.runs.len();
    let already = total - todo.len();
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(total as u64) };
    bar.set_style(
        ProgressStyle::with_template("runs {pos}/{len} [{bar:30}] {msg}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_position(already as u64);
    if !quiet {
        eprintln!(
            "study {}: {total} runs x {} loads in {} ({already} done, {} to run, {jobs} at once, {} thread(s) each)",
            study.name,
            study.loads.len(),
            dir.display(),
            todo.len(),
            study.section.threads
        );
    }
    let started = Instant::now();
    let mut queue = todo.into_iter();
    let mut active = Running(Vec::new());
    let (mut finished, mut failed) = (0usize, Vec::new());
    let mut seconds_done = 0.0;
    let mut stopping = false;
    loop {
        if models::cancel::requested() && !stopping {
            stopping = true;
            // A signal to this process alone (kill, Slurm) reaches the runs too: each stops
            // at its next sample and keeps what it simulated (a terminal's Ctrl-C reaches
            // them anyway, as one process group).
            for a in active.iter() {
                // SAFETY: kill only sends a signal to our own child, which we have not reaped.
                unsafe {
                    libc::kill(a.child.id() as libc::pid_t, libc::SIGINT);
                }
            }
        }
        while !stopping && active.len() < jobs {
            let Some(i) = queue.next() else { break };
            let run = &study.runs[i];
            let _ = std::fs::remove_file(progress_path(dir, run));
            let log = std::fs::File::create(log_path(dir, run))
                .with_context(|| format!("cannot write {}", log_path(dir, run).display()))?;
            let child = Command::new(&exe)
                .args(study.sweep_args(dir, run))
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .with_context(|| format!("cannot start {} for run {}", exe.display(), run.name))?;
            active.push(Active { run: i, child, started: Instant::now() });
        }
        if active.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
        let mut k = 0;
        while k < active.len() {
            let Some(status) = active[k].child.try_wait()? else {
                k += 1;
                continue;
            };
            let a = active.swap_remove(k);
            let run = &study.runs[a.run];
            let _ = std::fs::remove_file(progress_path(dir, run));
            if keep_result(dir, run, status.code())? {
                finished += 1;
                seconds_done += a.started.elapsed().as_secs_f64();
                bar.inc(1);
            } else if status.code() == Some(130) || models::cancel::requested() {
                stopping = true;
            } else {
                bar.println(format!(
                    "run {} failed ({status}); see {}",
                    run.name,
                    log_path(dir, run).display()
                ));
                failed.push(run.name.clone());
            }
        }
        // Runs done, the running ones' progress, and the time left at the pace so far.
        let fractions: Vec<(&str, f64)> = active
            .iter()
            .map(|a| {
                let run = &study.runs[a.run];
                (run.name.as_str(), run_fraction(dir, run).unwrap_or(0.0))
            })
            .collect();
        let running: Vec<String> =
            fractions.iter().map(|(name, f)| format!("{name} {:.0}%", 100.0 * f)).collect();
        let in_flight: f64 = fractions.iter().map(|(_, f)| f).sum();
        let left = (total - already - finished - failed.len()) as f64 - in_flight;
        let done_equiv = finished as f64 + in_flight;
        let eta = if done_equiv > 0.0 {
            // Wall time per run at the pace so far (runs in parallel included).
            let per_run = started.elapsed().as_secs_f64() / done_equiv;
            format!("eta {}", human_seconds(left.max(0.0) * per_run))
        } else {
            "eta -".into()
        };
        bar.set_message(format!("{eta} | {}", running.join(", ")));
    }
    bar.finish_and_clear();
    let interrupted = stopping && models::cancel::requested();
    if !quiet {
        eprintln!(
            "study {}: {} of {total} runs done ({finished} this time, {:.1} s of run time, {} wall){}",
            study.name,
            already + finished,
            seconds_done,
            human_seconds(started.elapsed().as_secs_f64()),
            if failed.is_empty() { String::new() } else { format!("; failed: {}", failed.join(", ")) }
        );
        println!("results: {}", dir.display());
    }
    if report && already + finished > 0 {
        match python_report(dir) {
            Ok(page) => println!("report: {}", page.display()),
            Err(why) => eprintln!("no HTML report: {why}"),
        }
    }
    Ok(if interrupted {
        130
    } else if failed.is_empty() {
        0
    } else {
        1
    })
}

//! Running a study's runs on this machine: one child `xnet sweep` per run, several at
//! once, with a progress display; what is done is skipped, so a second call resumes.

use super::report::python_report;
use super::run::{keep_result, log_path, progress_path, RunState};
use super::status::{human_seconds, progress_bar, progress_message};
use super::{Run, Study};
use anyhow::{Context, Result};
use indicatif::ProgressBar;
use std::path::{Path, PathBuf};
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
    let bar = progress_bar(quiet, total, already);
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
    let mut local = Local {
        study,
        dir,
        exe,
        jobs,
        queue: todo.into_iter(),
        active: Running(Vec::new()),
        already,
        finished: 0,
        failed: Vec::new(),
        seconds_done: 0.0,
        started: Instant::now(),
        stopping: false,
    };
    local.supervise(&bar)?;
    bar.finish_and_clear();
    let interrupted = local.stopping && models::cancel::requested();
    if !quiet {
        local.print_summary();
    }
    if report && already + local.finished > 0 {
        match python_report(dir) {
            Ok(page) => println!("report: {}", page.display()),
            Err(why) => eprintln!("no HTML report: {why}"),
        }
    }
    Ok(if interrupted {
        130
    } else if local.failed.is_empty() {
        0
    } else {
        1
    })
}

/// The runs of one local call: those still to start, those running, and what became of
/// those that ended.
struct Local<'a> {
    study: &'a Study,
    dir: &'a Path,
    /// This xnet, which each run runs as `xnet sweep`.
    exe: PathBuf,
    /// Runs at once.
    jobs: usize,
    /// The runs not yet started (indices into `study.runs`).
    queue: std::vec::IntoIter<usize>,
    active: Running,
    /// Runs done before this call.
    already: usize,
    /// Runs that ended with a result in this call.
    finished: usize,
    /// Names of the runs that failed.
    failed: Vec<String>,
    /// The run time of the finished runs, summed.
    seconds_done: f64,
    started: Instant,
    /// A signal came, or a run was interrupted: no more runs start.
    stopping: bool,
}

impl Local<'_> {
    /// Keeps `jobs` runs going until every run has ended or, after a signal, until the
    /// running ones have stopped; the progress display follows every 200 ms.
    fn supervise(&mut self, bar: &ProgressBar) -> Result<()> {
        loop {
            if models::cancel::requested() && !self.stopping {
                self.stopping = true;
                self.interrupt_running();
            }
            if !self.stopping {
                self.start_runs()?;
            }
            if self.active.is_empty() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(200));
            self.collect_ended(bar)?;
            let running: Vec<&Run> = self.active.iter().map(|a| &self.study.runs[a.run]).collect();
            let not_ended = self.study.runs.len() - self.already - self.finished - self.failed.len();
            bar.set_message(progress_message(self.dir, &running, not_ended, self.finished, self.started));
        }
    }

    /// A signal to this process alone (kill, Slurm) reaches the runs too: each stops within a
    /// window and keeps what it simulated (a terminal's Ctrl-C reaches them anyway, as
    /// one process group).
    fn interrupt_running(&self) {
        for a in self.active.iter() {
            // SAFETY: kill only sends a signal to our own child, which we have not reaped.
            unsafe {
                libc::kill(a.child.id() as libc::pid_t, libc::SIGINT);
            }
        }
    }

    /// Starts runs from the queue until `jobs` are running or none is left: each a child
    /// `xnet sweep` writing its output into its log.
    fn start_runs(&mut self) -> Result<()> {
        while self.active.len() < self.jobs {
            let Some(i) = self.queue.next() else { break };
            let (dir, exe) = (self.dir, &self.exe);
            let run = &self.study.runs[i];
            let _ = std::fs::remove_file(progress_path(dir, run));
            let log = std::fs::File::create(log_path(dir, run))
                .with_context(|| format!("cannot write {}", log_path(dir, run).display()))?;
            let child = Command::new(exe)
                .args(self.study.sweep_args(dir, run))
                .stdin(Stdio::null())
                .stdout(log.try_clone()?)
                .stderr(log)
                .spawn()
                .with_context(|| format!("cannot start {} for run {}", exe.display(), run.name))?;
            self.active.push(Active { run: i, child, started: Instant::now() });
        }
        Ok(())
    }

    /// Takes the runs that have ended: a run with a result is kept and counted; one
    /// interrupted (or ended after a signal) stops the study; any other failed.
    fn collect_ended(&mut self, bar: &ProgressBar) -> Result<()> {
        let mut k = 0;
        while k < self.active.len() {
            let Some(status) = self.active[k].child.try_wait()? else {
                k += 1;
                continue;
            };
            let a = self.active.swap_remove(k);
            let run = &self.study.runs[a.run];
            let _ = std::fs::remove_file(progress_path(self.dir, run));
            if keep_result(self.dir, run, status.code())? {
                self.finished += 1;
                self.seconds_done += a.started.elapsed().as_secs_f64();
                bar.inc(1);
            } else if status.code() == Some(130) || models::cancel::requested() {
                self.stopping = true;
            } else {
                bar.println(format!(
                    "run {} failed ({status}); see {}",
                    run.name,
                    log_path(self.dir, run).display()
                ));
                self.failed.push(run.name.clone());
            }
        }
        Ok(())
    }

    /// The closing lines: the runs done, their run time and the wall time, the runs that
    /// failed, and where the results are.
    fn print_summary(&self) {
        let total = self.study.runs.len();
        eprintln!(
            "study {}: {} of {total} runs done ({} this time, {:.1} s of run time, {} wall){}",
            self.study.name,
            self.already + self.finished,
            self.finished,
            self.seconds_done,
            human_seconds(self.started.elapsed().as_secs_f64()),
            if self.failed.is_empty() {
                String::new()
            } else {
                format!("; failed: {}", self.failed.join(", "))
            }
        );
        println!("results: {}", self.dir.display());
    }
}

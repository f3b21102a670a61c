//! Running a study's runs on this machine: one child `xnet sweep` per run, several at
//! once, with a progress display; what is done is skipped, so a second call resumes.

use super::report::python_report;
use super::run::{keep_result, log_path, partial_path, progress_path, recover_result, Leftover, RunState};
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
    let _lock = lock_folder(dir)?;
    study.prepare(dir)?;
    let exe = std::env::current_exe().context("cannot find the xnet executable")?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    let jobs = jobs.or(study.section.jobs).unwrap_or((cores / study.section.threads).max(1)).max(1) as usize;
    let mut busy = Vec::new();
    for run in &study.runs {
        match recover_result(dir, run)? {
            Leftover::Kept => eprintln!(
                "run {}: its file holds a finished result (its run ended after the study stopped): kept",
                run.name
            ),
            Leftover::InUse => {
                eprintln!(
                    "run {}: its file {} is being written by another process (a run of an earlier \
                     study that is still going?): left alone",
                    run.name,
                    partial_path(dir, run).display()
                );
                busy.push(run.name.clone());
            }
            Leftover::Nothing => {}
        }
    }
    let todo: Vec<usize> = (0..study.runs.len())
        .filter(|&i| {
            RunState::of(dir, &study.runs[i]) != RunState::Done && !busy.contains(&study.runs[i].name)
        })
        .collect();
    let total = study.runs.len();
    let already = total - todo.len();
    if !quiet {
        // Before the bar exists: printed after its first draw, it would share the bar's
        // line and leave it behind.
        eprintln!(
            "study {}: {total} runs x {} loads in {} ({already} done, {} to run, {jobs} at once, {} thread(s) each)",
            study.name,
            study.loads.len(),
            dir.display(),
            todo.len(),
            study.section.threads
        );
    }
    let bar = progress_bar(quiet, total, already);
    let mut local = Local {
        study,
        dir,
        exe,
        jobs,
        queue: todo.into_iter(),
        active: Running(Vec::new()),
        already,
        finished: 0,
        failed: busy,
        seconds_done: 0.0,
        started: Instant::now(),
        stopping: false,
        base_changed: None,
    };
    local.supervise(&bar)?;
    bar.finish_and_clear();
    let interrupted = local.stopping && models::cancel::requested();
    if !quiet {
        local.print_summary();
    } else if !local.failed.is_empty() {
        // Quiet, but a run that failed is never silent: the exit code alone does not say which.
        eprintln!(
            "study {}: failed: {} (see their logs in {})",
            study.name,
            local.failed.join(", "),
            dir.join("runs").display()
        );
    }
    if let Some(why) = local.base_changed {
        anyhow::bail!(why);
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
    /// The folder's `base.toml` changed while the study ran (why, as an error): no more
    /// runs start, the running ones finish.
    base_changed: Option<String>,
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
            if !self.stopping && self.base_changed.is_none() {
                self.base_changed = self.study.base_changed(self.dir);
                if self.base_changed.is_some() {
                    self.stopping = true;
                }
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
            let mut command = Command::new(exe);
            end_with_this_process(&mut command);
            start_outside_the_launcher(&mut command);
            let child = command
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
                // Printed above the bar, and also when it is hidden (`-q`).
                bar.suspend(|| {
                    eprintln!("run {} failed ({status}); see {}", run.name, log_path(self.dir, run).display())
                });
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

/// Holds the study folder for this process: an exclusive `flock` on `DIR/.lock`, so that a
/// second `xnet study` on the same folder is refused at once instead of running the same
/// runs twice. The kernel releases it when the process ends, however it ends.
fn lock_folder(dir: &Path) -> Result<std::fs::File> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = dir.join(".lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
            "study folder {} is in use by another `xnet study` (it holds {}): wait for it to \
             end (`xnet study --status {}` shows where it stands), or give another --dir",
            dir.display(),
            path.display(),
            dir.display()
        ),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(e).with_context(|| format!("cannot lock {}", path.display()))
        }
    }
}

/// The variables through which an MPI launcher (MPICH's Hydra, PMIx, Open MPI, srun's
/// PMI) tells a process its place in a job. A study started under `mpiexec -n 1` hands
/// them to its runs, which then all try to join the launcher's one-process job over its
/// one connection (the second run died of SIGPIPE); without them each run is a job of its
/// own.
const LAUNCHER_VARIABLES: &[&str] = &[
    "PMI_",
    "PMIX_",
    "PMI2_",
    "HYDRA_",
    "MPI_LOCALNRANKS",
    "MPI_LOCALRANKID",
    "OMPI_COMM_WORLD_",
    "OMPI_UNIVERSE_",
];

/// Removes the launcher's variables ([`LAUNCHER_VARIABLES`]) from a run's environment.
fn start_outside_the_launcher(command: &mut Command) {
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if LAUNCHER_VARIABLES.iter().any(|prefix| text.starts_with(prefix)) {
            command.env_remove(&name);
        }
    }
}

/// Makes the child stop when this process dies, however it dies (`kill -9` included): on
/// Linux the kernel sends it SIGTERM (`PR_SET_PDEATHSIG`), on which `xnet sweep` stops at
/// its next sample and keeps what it simulated, so that no run goes on unwatched, its
/// result never renamed. Elsewhere a run outlives a killed study; the next study finds its
/// file (see `recover_result`).
fn end_with_this_process(command: &mut Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        let parent = std::process::id();
        // SAFETY: between fork and exec the closure calls only async-signal-safe functions
        // (prctl, getppid) and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before the request: then end now.
                if libc::getppid() as u32 != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

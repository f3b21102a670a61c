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

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use models::files::{named_files, NamedFile, Scope, Step};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
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

/// The keys of the `[grid]` section of `text` in the order they are written
/// (`toml::Table` sorts its keys).
fn grid_key_order(text: &str) -> Vec<String> {
    let doc = text.parse::<toml_edit::DocumentMut>().ok();
    let grid = doc.as_ref().and_then(|d| d.get("grid")).and_then(|g| g.as_table_like());
    grid.map(|g| g.iter().map(|(key, _)| key.to_string()).collect()).unwrap_or_default()
}

/// The base configuration with the text of each file it names (a fabric, OpenSM dumps,
/// rank mappings) put in beside its path (`topology.contents`, ...), so that the study's
/// copy holds them and every run uses them as they were when the study was created, like
/// the base itself. The files are those the registries declare (`models::files`), found
/// whatever the base's routing (a grid may select another: [`Scope::Any`]), unless the base
/// holds the text already or `[set]` or `[grid]` name another file (`overridden`: then
/// each run reads the file it names when it starts). Paths are read relative to the
/// working directory, as `xnet run` reads them. The text comes back unchanged when nothing
/// is put in, or when it does not parse (the runs' checks report it).
fn with_named_contents(base_text: &str, overridden: &dyn Fn(&NamedFile) -> bool) -> Result<String> {
    let (Ok(table), Ok(mut doc)) =
        (toml::from_str::<toml::Table>(base_text), base_text.parse::<toml_edit::DocumentMut>())
    else {
        return Ok(base_text.to_string());
    };
    let mut put = false;
    for file in named_files(&table, Scope::Any) {
        if file.has_contents || overridden(&file) {
            continue;
        }
        let text = file.read(&crate::load::read_file)?;
        let mut item = Some(doc.as_item_mut());
        for step in &file.table {
            item = match step {
                Step::Key(key) => item.and_then(|i| i.get_mut(key)),
                Step::Index(index) => item.and_then(|i| i.get_mut(index)),
            };
        }
        if let Some(table) = item.and_then(|t| t.as_table_like_mut()) {
            table.insert(file.key.contents, toml_edit::value(text));
            put = true;
        }
    }
    Ok(if put { doc.to_string() } else { base_text.to_string() })
}

/// `key=value` as `--set` takes it (the value as TOML).
fn set_arg(key: &str, value: &Value) -> String {
    format!("{key}={value}")
}

/// A value as it reads in a run name: strings bare, anything else as TOML, reduced to
/// characters that are safe in file names.
fn slug(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        // [16, 16] -> 16x16
        Value::Array(items) => items.iter().map(slug).collect::<Vec<_>>().join("x"),
        other => other.to_string(),
    };
    let mut out: String =
        text.chars().map(|c| if c.is_ascii_alphanumeric() || "._".contains(c) { c } else { '_' }).collect();
    out.truncate(40);
    out
}

impl Study {
    /// Reads and checks the study file at `path`: its sections, the base configuration,
    /// and every run's configuration, so that a bad key or value is reported (naming the
    /// run) before anything runs.
    pub fn load(path: &Path) -> Result<Study> {
        let study_text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read study {}", path.display()))?;
        let file: StudyFile = toml::from_str(&study_text)
            .map_err(|e| anyhow::anyhow!("study {}: {}", path.display(), e.to_string().trim()))?;
        let base_path = path.parent().unwrap_or(Path::new(".")).join(&file.study.base);
        let base_text = std::fs::read_to_string(&base_path).with_context(|| {
            format!("study.base: cannot read the base configuration {}", base_path.display())
        })?;
        let overridden = |f: &NamedFile| file.set.keys().chain(file.grid.keys()).any(|k| f.overridden_by(k));
        let kept = with_named_contents(&base_text, &overridden)?;
        let name = path.file_stem().map_or("study".into(), |s| s.to_string_lossy().into_owned());
        let mut study = Self::expand(name, kept, study_text, file)?;
        study.base_as_given = base_text;
        Ok(study)
    }

    fn expand(name: String, base_text: String, study_text: String, file: StudyFile) -> Result<Study> {
        Self::expand_checked(name, base_text, study_text, file, true)
    }

    /// [`Study::expand`]; `check` parses every run's configuration (a folder's study was
    /// checked when it was created, and its fabric files may live elsewhere).
    fn expand_checked(
        name: String,
        base_text: String,
        study_text: String,
        file: StudyFile,
        check: bool,
    ) -> Result<Study> {
        if file.study.threads == 0 {
            bail!("study.threads must be at least 1");
        }
        if file.study.jobs == Some(0) {
            bail!("study.jobs must be at least 1");
        }
        let mut keys = Vec::new();
        let mut axes: Vec<Vec<Value>> = Vec::new();
        // `toml::Table` sorts its keys; the grid varies the first key written slowest.
        let mut grid: Vec<(&String, &Value)> = file.grid.iter().collect();
        let order = grid_key_order(&study_text);
        grid.sort_by_key(|(key, _)| order.iter().position(|k| k == *key).unwrap_or(usize::MAX));
        for (key, values) in grid {
            let Value::Array(values) = values else {
                bail!("grid.\"{key}\": must be a list of values, e.g. [\"a\", \"b\"]");
            };
            if values.is_empty() {
                bail!("grid.\"{key}\": the list is empty");
            }
            if key.split('.').count() < 2 {
                bail!("grid.\"{key}\": keys are section.key, quoted, e.g. \"routing.algorithm\" = [...]");
            }
            if key == "traffic.load" || key == "traffic.loads" {
                bail!("grid.\"{key}\": every run sweeps study.loads; give the loads there");
            }
            keys.push(key.clone());
            axes.push(values.clone());
        }
        // Every combination, the last key varying fastest.
        let total: usize = axes.iter().map(Vec::len).product();
        let mut runs = Vec::with_capacity(total);
        for index in 0..total {
            let mut rest = index;
            let mut picked = vec![Value::Boolean(false); axes.len()];
            for (k, axis) in axes.iter().enumerate().rev() {
                picked[k] = axis[rest % axis.len()].clone();
                rest /= axis.len();
            }
            let mut name = format!("{index:03}");
            for v in &picked {
                name.push('-');
                name.push_str(&slug(v));
            }
            runs.push(Run { name, overrides: keys.iter().cloned().zip(picked).collect() });
        }
        if let Some(key) = file.set.keys().find(|k| *k == "traffic.load" || *k == "traffic.loads") {
            bail!("set.\"{key}\": every run sweeps study.loads; give the loads there");
        }
        let set: Vec<(String, Value)> = file.set.into_iter().collect();
        let mut loads = file.study.loads.clone();
        // Unchecked (a folder), a run is parsed only for loads the folder does not list:
        // parsing reads the files `[set]` and `[grid]` name, which may live elsewhere.
        let parsed = if check { usize::MAX } else { usize::from(loads.is_empty()) };
        for run in runs.iter().take(parsed) {
            let cfg = crate::load::parse_config(&base_text, &Self::overrides_of(&set, run))
                .map_err(|e| anyhow::anyhow!("run {}: {e:#}", run.name))?;
            if loads.is_empty() {
                loads = cfg.traffic.loads.clone();
            }
        }
        if loads.is_empty() {
            bail!("study.loads: no loads (give study.loads or traffic.loads in the base configuration)");
        }
        if let Some(bad) = loads.iter().find(|l| !(0.0..=1.0).contains(*l)) {
            bail!("study.loads: {bad} is outside [0, 1] phits/cycle/endpoint");
        }
        let slurm = file.slurm.unwrap_or_default();
        if slurm.ranks == 0 {
            bail!("slurm.ranks must be at least 1");
        }
        let base_as_given = base_text.clone();
        Ok(Study {
            name,
            base_text,
            base_as_given,
            study_text,
            section: file.study,
            slurm,
            set,
            keys,
            runs,
            loads,
        })
    }

    fn overrides_of(set: &[(String, Value)], run: &Run) -> Vec<String> {
        set.iter().chain(&run.overrides).map(|(k, v)| set_arg(k, v)).collect()
    }

    /// The study's folder: creates it (with the study, base and manifest files) or checks
    /// that an existing one holds this same study.
    pub fn prepare(&self, dir: &Path) -> Result<()> {
        let study_file = dir.join("study.toml");
        if study_file.exists() {
            let there = std::fs::read_to_string(&study_file)
                .with_context(|| format!("cannot read {}", study_file.display()))?;
            let base = std::fs::read_to_string(dir.join("base.toml")).unwrap_or_default();
            // An older xnet kept the base as given, files out: its runs go on with it.
            if there == self.study_text && base == self.base_as_given && base != self.base_text {
                std::fs::create_dir_all(dir.join("runs"))?;
                return Ok(());
            }
            if there != self.study_text || base != self.base_text {
                bail!(
                    "{} holds another study (its study.toml or base.toml differ from these, or \
                     a file the base names, such as its fabric, has changed since); give \
                     another --dir, or remove the folder to start again",
                    dir.display()
                );
            }
        }
        std::fs::create_dir_all(dir.join("runs"))
            .with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&study_file, &self.study_text)?;
        std::fs::write(dir.join("base.toml"), &self.base_text)?;
        std::fs::write(dir.join("manifest.toml"), self.manifest())
            .with_context(|| format!("cannot write {}", dir.join("manifest.toml").display()))?;
        Ok(())
    }

    /// `manifest.toml`: what the Python package needs to read the study.
    fn manifest(&self) -> String {
        let mut t = toml::Table::new();
        t.insert("study".into(), Value::String(self.name.clone()));
        t.insert("keys".into(), Value::Array(self.keys.iter().cloned().map(Value::String).collect()));
        t.insert("loads".into(), Value::Array(self.loads.iter().map(|&l| Value::Float(l)).collect()));
        let set: toml::Table = self.set.iter().cloned().collect();
        t.insert("set".into(), Value::Table(set));
        let runs = self
            .runs
            .iter()
            .map(|r| {
                let mut row = toml::Table::new();
                row.insert("name".into(), Value::String(r.name.clone()));
                row.insert("file".into(), Value::String(format!("runs/{}.h5", r.name)));
                row.insert("overrides".into(), Value::Table(r.overrides.iter().cloned().collect()));
                Value::Table(row)
            })
            .collect();
        t.insert("runs".into(), Value::Array(runs));
        format!(
            "# Written by `xnet study`; read by the Python package (python/xnet_study).\n{}",
            toml::to_string(&t).expect("a manifest serialises")
        )
    }

    /// The arguments of the `xnet sweep` that makes run `run` in `dir`.
    fn sweep_args(&self, dir: &Path, run: &Run) -> Vec<String> {
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

fn partial_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(format!("{}.partial.h5", run.name))
}

fn progress_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(format!("{}.progress", run.name))
}

fn log_path(dir: &Path, run: &Run) -> PathBuf {
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
    fn of(dir: &Path, run: &Run) -> RunState {
        if result_path(dir, run).exists() {
            RunState::Done
        } else if partial_path(dir, run).exists() || log_path(dir, run).exists() {
            RunState::Started
        } else {
            RunState::Pending
        }
    }
}

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

/// Keeps a run's result when its `xnet sweep` ended with one (exit `code` 0, 3 or 4): the
/// partial file becomes the result file. Returns whether it did.
fn keep_result(dir: &Path, run: &Run, code: Option<i32>) -> Result<bool> {
    if !has_result(code) {
        return Ok(false);
    }
    std::fs::rename(partial_path(dir, run), result_path(dir, run))
        .with_context(|| format!("run {}: cannot rename its result file", run.name))?;
    Ok(true)
}

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

/// Exit codes of `xnet sweep` that leave a result: completed, deadlock, unfinished.
fn has_result(code: Option<i32>) -> bool {
    matches!(code, Some(0 | 3 | 4))
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

/// Writes the study's HTML report with the Python package (`python/xnet_study`): the
/// interpreter named by `XNET_PYTHON`, else the `.venv` of the current directory or of the
/// checkout the executable was built in (`scripts/bootstrap.sh` installs the package
/// there), else `python3`. Returns the page's path, or why there is none.
pub fn python_report(dir: &Path) -> std::result::Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("XNET_PYTHON") {
        candidates.push(p.into());
    }
    candidates.push(PathBuf::from(".venv/bin/python3"));
    if let Ok(exe) = std::env::current_exe() {
        // target/release/xnet -> the checkout's .venv
        if let Some(root) = exe.parent().and_then(Path::parent).and_then(Path::parent) {
            candidates.push(root.join(".venv/bin/python3"));
        }
    }
    candidates.push(PathBuf::from("python3"));
    let mut tried = Vec::new();
    for python in candidates {
        let out =
            Command::new(&python).args(["-m", "xnet_study", "report"]).arg(dir).stdin(Stdio::null()).output();
        match out {
            Ok(o) if o.status.success() => {
                let page = String::from_utf8_lossy(&o.stdout).trim().to_string();
                return Ok(PathBuf::from(page));
            }
            Ok(o) => {
                let err = String::from_utf8_lossy(&o.stderr);
                let last = err.trim().lines().last().unwrap_or("failed").to_string();
                if !err.contains("No module named") {
                    // The package is there and failed: that is the answer.
                    return Err(format!("{} -m xnet_study report failed: {last}", python.display()));
                }
                tried.push(format!("{}: {last}", python.display()));
            }
            Err(e) => tried.push(format!("{}: {e}", python.display())),
        }
    }
    Err(format!(
        "the Python package xnet_study was not found (bash scripts/bootstrap.sh installs it into .venv; \
         or set XNET_PYTHON): {}",
        tried.join("; ")
    ))
}

/// Runs one run of a prepared study folder, as a Slurm array task does: under Slurm through
/// `srun --mpi=pmi2` with the study's ranks and threads, else directly. Skips a run that
/// is done.
pub fn run_task(dir: &Path, index: usize) -> Result<i32> {
    let study =
        Study::from_folder(dir).with_context(|| format!("{} is not a study folder", dir.display()))?;
    let Some(run) = study.runs.get(index) else {
        bail!("--task {index}: the study has runs 0 to {}", study.runs.len().saturating_sub(1));
    };
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

impl Study {
    /// A study from its folder's copies (`study.toml` names its base relative to where it
    /// was; the folder's `base.toml` stands in for it).
    fn from_folder(dir: &Path) -> Result<Study> {
        let study_text = std::fs::read_to_string(dir.join("study.toml"))?;
        let base_text = std::fs::read_to_string(dir.join("base.toml"))?;
        let mut file: StudyFile = toml::from_str(&study_text)?;
        if file.study.loads.is_empty() {
            file.study.loads = read_manifest_loads(dir).unwrap_or_default();
        }
        let name = read_manifest_name(dir).unwrap_or_else(|| "study".into());
        Self::expand_checked(name, base_text, study_text, file, false)
    }
}

/// The loads every run of the folder's study sweeps, as its manifest lists them.
fn read_manifest_loads(dir: &Path) -> Option<Vec<f64>> {
    let text = std::fs::read_to_string(dir.join("manifest.toml")).ok()?;
    let t: toml::Table = toml::from_str(&text).ok()?;
    t.get("loads")?.as_array()?.iter().map(|v| v.as_float()).collect()
}

fn read_manifest_name(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("manifest.toml")).ok()?;
    let t: toml::Table = toml::from_str(&text).ok()?;
    t.get("study")?.as_str().map(str::to_string)
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
    let script = dir.join("slurm.sbatch");
    std::fs::write(&script, s).with_context(|| format!("cannot write {}", script.display()))?;
    println!("slurm script: {} ({n} array tasks)", script.display());
    if submit != Submit::No {
        let mut sbatch = Command::new("sbatch");
        if submit == Submit::AndWait {
            sbatch.arg("--wait");
        }
        let out =
            sbatch.arg(&script).stdin(Stdio::null()).output().context(
                "cannot run sbatch (is Slurm installed? the script is written; submit it by hand)",
            )?;
        // With --wait, sbatch also fails when a task failed: the check below names the runs.
        if !out.status.success() && (submit != Submit::AndWait || out.stdout.is_empty()) {
            bail!("sbatch {} failed: {}", script.display(), String::from_utf8_lossy(&out.stderr).trim());
        }
        print!("{}", String::from_utf8_lossy(&out.stdout));
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
                match run_fraction(dir, run) {
                    Some(f) => format!("running {:.0}%", 100.0 * f),
                    None => format!("started, not finished (see {})", log_path(dir, run).display()),
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

/// `text` as one shell word (single quotes, a quote inside as `'\''`).
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// Seconds as `1h02m`, `3m20s` or `42s`.
fn human_seconds(s: f64) -> String {
    let s = s.round() as u64;
    match s {
        _ if s >= 3600 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ if s >= 60 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{s}s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = include_str!("../../configs/quick.toml");

    fn study(text: &str) -> Result<Study> {
        let file: StudyFile = toml::from_str(text)?;
        Study::expand("t".into(), BASE.into(), text.into(), file)
    }

    #[test]
    fn the_grid_expands_to_every_combination_first_key_slowest() {
        let s = study(
            r#"
            [study]
            base = "x.toml"
            loads = [0.1]
            [grid]
            "routing.algorithm" = ["minimal", "dor"]
            "simulation.seed" = [1, 2, 3]
            "#,
        )
        .unwrap();
        let names: Vec<&str> = s.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(
            names,
            ["000-minimal-1", "001-minimal-2", "002-minimal-3", "003-dor-1", "004-dor-2", "005-dor-3"]
        );
        assert_eq!(s.runs[4].overrides[1], ("simulation.seed".to_string(), Value::Integer(2)));
    }

    /// The first key written varies slowest whatever the keys' names, and text elsewhere
    /// (a comment naming a key) does not count.
    #[test]
    fn the_grid_keys_keep_the_order_they_are_written_in() {
        let s = study(
            r#"
            [study]
            base = "x.toml"
            loads = [0.1]
            [grid]
            # "routing.algorithm" varies fastest
            "simulation.seed"=[1, 2]
            "routing.algorithm" = ["minimal", "dor"]
            "#,
        )
        .unwrap();
        let names: Vec<&str> = s.runs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["000-1-minimal", "001-1-dor", "002-2-minimal", "003-2-dor"]);
    }

    #[test]
    fn bad_studies_are_refused_naming_the_key_or_run() {
        let err = |text: &str| study(text).err().map(|e| format!("{e:#}")).unwrap_or_default();
        assert!(err("[study]\nbase = \"x\"\nloads = [0.1]\n[grid]\n\"routing.algorithm\" = \"dor\"\n")
            .contains("grid.\"routing.algorithm\": must be a list"));
        assert!(err("[study]\nbase = \"x\"\nloads = [0.1]\n[grid]\n\"routing.algorithm\" = [\"nope\"]\n")
            .contains("run 000-nope"));
        assert!(err("[study]\nbase = \"x\"\nloads = [1.5]\n").contains("study.loads: 1.5"));
        assert!(err("[study]\nbase = \"x\"\nthreds = 2\n").contains("threds"));
    }

    #[test]
    fn the_first_grid_key_written_varies_slowest_whatever_its_name() {
        let s = study(
            "[study]\nbase = \"x.toml\"\nloads = [0.1]\n[grid]\n\"traffic.pattern\" = [\"uniform\", \"tornado\"]\n\
             \"routing.algorithm\" = [\"minimal\", \"dor\"]\n",
        )
        .unwrap();
        assert_eq!(s.keys, ["traffic.pattern", "routing.algorithm"]);
        assert_eq!(s.runs[1].name, "001-uniform-dor");
        let loads = study("[study]\nbase = \"x\"\n[grid]\n\"traffic.loads\" = [[0.1], [0.2]]\n");
        assert!(format!("{:#}", loads.err().unwrap()).contains("study.loads"));
    }

    #[test]
    fn slugs_are_safe_file_names() {
        assert_eq!(slug(&Value::String("a b/c".into())), "a_b_c");
        assert_eq!(slug(&Value::Float(0.5)), "0.5");
        assert_eq!(slug(&Value::Array(vec![Value::Integer(16), Value::Integer(8)])), "16x8");
    }
}

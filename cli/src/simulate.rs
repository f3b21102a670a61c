//! `xnet run` and `xnet sweep`: one simulation per load on every rank, with the memory
//! check, the result file (written by rank 0) and the progress and summary lines.

use crate::cluster::Cluster;
use crate::cluster::{check_threads, use_threads};
use crate::output::{print_workloads, OutputClaim, ResultFile, RunMeta};
use crate::placement::peak_rss_bytes;
use crate::placement::{self, Placement};
use crate::search::{Mode, Search};
use crate::signals::stop_cleanly_on_signals;
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use models::config::Config;
use models::memory;
use models::sim::{partition, RankModel, RunResult, Status};
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(clap::Args, Clone)]
/// The options `run` and `sweep` share.
pub(crate) struct Common {
    /// Override a config key, e.g. `--set traffic.load=0.3` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub(crate) set: Vec<String>,
    /// Threads (partitions of the network) to run on. Default: all cores.
    #[arg(long, short = 't')]
    pub(crate) threads: Option<u32>,
    /// Output HDF5 file. Default: `xnet-<config name>.h5` in the current directory.
    #[arg(long, short = 'o')]
    pub(crate) output: Option<PathBuf>,
    /// No progress bar or summary.
    #[arg(long, short = 'q')]
    pub(crate) quiet: bool,
    /// Run even when the memory estimate exceeds the memory available.
    #[arg(long)]
    pub(crate) no_memory_check: bool,
    /// Keep `LOAD_INDEX LOADS CYCLE CYCLES` up to date in this file while running (for
    /// `xnet study`'s progress display).
    #[arg(long, value_name = "FILE")]
    pub(crate) progress_file: Option<PathBuf>,
    /// How the network is split over the ranks and threads, as `xnet partition --method`
    /// shows it. Results do not depend on it; speed does (docs/scaling.md).
    #[arg(long, value_enum, default_value_t = crate::census::MethodArg::Auto, value_name = "METHOD")]
    pub(crate) partition_method: crate::census::MethodArg,
    /// Also count the run as if it were split into each of these numbers of partitions
    /// (comma-separated, e.g. `16,64,256,1024,4096`): events and messages per partition and
    /// window, into each point's `census` group (docs/scaling.md). On one rank; slower.
    #[arg(long, value_delimiter = ',', value_name = "PARTITIONS")]
    pub(crate) census: Vec<u32>,
    /// The partitioning methods the census counts, comma-separated (with `--census`).
    /// Default: linear, multilevel and, where the network has enough natural blocks
    /// (Dragonfly groups, fat-tree pods), blocks.
    #[arg(long, value_delimiter = ',', value_enum, value_name = "METHODS")]
    pub(crate) census_method: Vec<crate::census::MethodArg>,
}

/// Rank 0 tells the others whether it could prepare (e.g. create the output file), so
/// that no rank enters the simulation's collectives alone.
fn agree(cluster: &mut Cluster, ok: bool) -> bool {
    cluster.comm.broadcast(vec![u8::from(ok)]).first() == Some(&1)
}

/// How hard the hot spot of a `hot_spot` pattern presses on its link at each of `loads`
/// (docs/congestion.md, "Hot spots"), or `None` for other patterns.
fn hot_spot_line(sim: &models::sim::RankModel, loads: &[f64]) -> Option<String> {
    let (hot, fraction) = sim.config.traffic.pattern.hot_spot()?;
    let n = sim.info.endpoints as u64;
    let strengths: Vec<String> = loads
        .iter()
        .map(|&l| format!("{:.2}x its rate at load {l}", models::traffic::hot_spot_strength(fraction, l, n)))
        .collect();
    Some(format!(
        "hot spot: endpoint {hot}'s link is offered {} (load x (fraction {fraction} x {} other endpoints + {} \
         uniform)); above 1x a congestion tree grows behind it",
        strengths.join(", "),
        n.saturating_sub(1),
        1.0 - fraction
    ))
}

/// Writes a run's progress for `xnet study` (replacing the file whole, so that a reader
/// never sees half a line). Progress is a courtesy: a failure to write it is ignored.
fn write_progress(path: &Path, load_index: usize, loads: usize, cycle: u64, cycles: u64) {
    let tmp = crate::output::beside(path);
    if std::fs::write(&tmp, format!("{load_index} {loads} {cycle} {cycles}\n")).is_ok() {
        let _ = std::fs::rename(&tmp, path);
    }
}

/// Refuses a `--progress-file` that would replace something other than a progress file:
/// the configuration, the output file, a folder, a link, or a file that holds anything but
/// one progress line. An empty or absent file is fine.
fn check_progress_file(progress: &Path, output: &Path, inputs: &[&Path]) -> Result<()> {
    let refuse = |what: String| {
        anyhow::anyhow!(
            "--progress-file {}: {what}; the progress file is rewritten every 250 ms, so it must \
             name a new file or an earlier progress file",
            progress.display()
        )
    };
    let absolute = |p: &Path| std::path::absolute(p).ok();
    if absolute(progress) == absolute(output) || crate::load::same_file(progress, output) {
        return Err(refuse("it is the output file (-o)".into()));
    }
    if let Some(input) = inputs.iter().find(|i| crate::load::same_file(progress, i)) {
        return Err(refuse(format!("it is the configuration {}", input.display())));
    }
    let Ok(meta) = std::fs::symlink_metadata(progress) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() || !meta.is_file() {
        return Err(refuse("it exists and is not a regular file".into()));
    }
    // A progress line is four numbers: anything longer is someone's file.
    let text = (meta.len() <= 200).then(|| std::fs::read_to_string(progress).ok()).flatten();
    let is_progress = text.is_some_and(|t| {
        let words: Vec<&str> = t.split_whitespace().collect();
        words.is_empty() || (words.len() == 4 && words.iter().all(|w| w.parse::<u64>().is_ok()))
    });
    if !is_progress {
        return Err(refuse("it exists and is not a progress file (four numbers on a line)".into()));
    }
    Ok(())
}

/// Runs `cfg` on every rank at each load the sweep chooses: `loads` in the order given for
/// `xnet run` (`mode` `None`) and a plain sweep, or as the [`Mode`] says (see
/// [`crate::search`]): prepares the run (threads, the output file, the memory check, the
/// build), simulates the points one after the other, printing each point's row as it
/// ends, and records how it ended and, for a sweep, what it found of the saturation load.
/// Returns the exit code (0, or the status's code: 3 deadlock, 4 unfinished, 130
/// interrupted).
pub(crate) fn simulate(
    cfg: Config,
    name: &str,
    config_path: Option<&Path>,
    loads: &[f64],
    mode: Option<Mode>,
    common: &Common,
    cluster: &mut Cluster,
) -> Result<i32> {
    let mut run = match prepare(cfg, name, config_path, common, cluster)? {
        Ok(run) => run,
        Err(code) => return Ok(code),
    };
    if !run.quiet {
        if let Some(line) = hot_spot_line(&run.sim, loads) {
            eprintln!("{line}");
        }
    }
    let started = Instant::now();
    let mut results: Vec<RunResult> = Vec::new();
    let mut exit = 0;
    let mut search = Search::new(loads, mode.unwrap_or(Mode::All));
    let of = PointOf { total: search.most_points(), at_most: matches!(mode, Some(Mode::Find { .. })) };
    while let Some(load) = search.current() {
        let i = search.done();
        let (code, saturated) = run.point(i, load, &of, common, cluster, &mut results)?;
        exit = exit.max(code as i32);
        if let (Some(r), false) = (results.last().filter(|_| results.len() == i + 1), run.quiet) {
            print_row(r, i == 0);
        }
        if code == 130 {
            // An interrupted point says nothing about saturation: the bracket stays that of
            // the points before it.
            break;
        }
        search.record(saturated);
        if let (Some(mode), Some(f)) = (mode, &run.file) {
            let b = search.bracket();
            let (how, tolerance) = match mode {
                Mode::Find { tolerance } => ("bisection", tolerance),
                _ => ("grid", f64::NAN),
            };
            f.set_saturation(how, b.low, b.high.unwrap_or(f64::NAN), tolerance).map_err(|e| f.fail(e))?;
        }
        if mode == Some(Mode::StopAtSaturation) && saturated && !search.skipped().is_empty() && run.rank0 {
            eprintln!(
                "load {load}: saturated (backlog still growing); --stop-at-saturation skips loads {:?}",
                search.skipped()
            );
        }
    }
    let verdict = mode.map(|m| match search.bracket().describe(m) {
        so_far if exit == 130 => format!("interrupted before the sweep ended; its points so far: {so_far}"),
        all => all,
    });
    run.finish(exit, started, &results, verdict.as_deref(), cluster)?;
    Ok(exit)
}

/// How many points a sweep has, for the progress bar and the progress file.
struct PointOf {
    /// Points in all (at most this many when `at_most`: a search may need fewer).
    total: usize,
    at_most: bool,
}

/// A run ready to simulate on this rank: its share of the model and, on rank 0, the
/// result file.
struct PreparedRun {
    sim: RankModel,
    file: Option<ResultFile>,
    path: PathBuf,
    rank0: bool,
    quiet: bool,
}

/// Sets up a run on every rank: threads, the output file (claimed by rank 0 before the
/// long build, so that a file another run holds is refused at once and left as it is), the
/// memory check over every rank's host, then the build of this rank's share. `Ok(Err(code))`
/// when the ranks agreed not to go on (rank 0 reports why).
fn prepare(
    cfg: Config,
    name: &str,
    config_path: Option<&Path>,
    common: &Common,
    cluster: &mut Cluster,
) -> Result<std::result::Result<PreparedRun, i32>> {
    let ranks = cluster.size() as u32;
    let rank0 = cluster.rank() == 0;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    // One rank: all cores. Several ranks (which may share a node): one thread each unless told.
    let threads = common.threads.unwrap_or(if ranks == 1 { cores } else { 1 });
    check_threads(threads)?;
    if !common.census.is_empty() && ranks > 1 {
        bail!(
            "--census counts on one rank ({ranks} ranks here): the counts do not depend on how the \
             run is split, so run it without mpiexec (-t sets its threads)"
        );
    }
    if common.census.is_empty() && !common.census_method.is_empty() {
        bail!("--census-method chooses the methods of a census: give the partition counts with --census");
    }
    // Sizes and memory are checked before anything large is built or any thread started.
    let switches = cfg.network_size()?.switches as u32;
    if ranks > switches {
        bail!("{ranks} ranks for {switches} switches: use at most one rank per switch");
    }
    // Partitions are numbered rank by rank: partition p runs on rank p / threads.
    let per_rank = threads.min(switches / ranks).max(1);
    // Table computations (rayon) use as many threads as the simulation, capped as it is.
    use_threads(per_rank)?;
    stop_cleanly_on_signals();
    let quiet = common.quiet || !rank0;
    let path = common.output.clone().unwrap_or_else(|| PathBuf::from(format!("xnet-{name}.h5")));
    let claim = rank0
        .then(|| {
            if let Some(progress) = &common.progress_file {
                check_progress_file(progress, &path, config_path.as_slice())?;
            }
            OutputClaim::take(&path, config_path.as_slice())
        })
        .transpose();
    let estimate = memory::estimate(&cfg, ranks, per_rank)?;
    let refusal = check_placement(cluster, per_rank, &estimate, common.no_memory_check);
    // Rank 0 says whether every rank may go on; if not, it reports why and the others stop.
    if !agree(cluster, claim.is_ok() && refusal.is_none()) {
        return match (claim, refusal) {
            (Err(e), _) => Err(e),
            (_, Some(why)) => Err(anyhow::anyhow!(why)),
            _ => Ok(Err(1)),
        };
    }
    let claim = claim?;
    if let Some(c) = claim.as_ref().filter(|c| c.holds_earlier_file() && !quiet) {
        eprintln!(
            "note: {} holds an earlier run's results; they stay until this run has results of \
             its own, which then replace them",
            c.path().display()
        );
    }
    // Every rank builds the whole network and partitions it (deterministically, so they
    // agree), keeps its own share and lets the rest go.
    let net = cfg.build_network()?;
    let parts = ranks * per_rank;
    let plan = partition::plan(&cfg, &net, parts, common.partition_method.into())
        .map_err(|e| anyhow::anyhow!("--partition-method: {parts} partitions: {e}"))?;
    let partition_rank: Vec<u32> = (0..plan.parts).map(|p| p / per_rank).collect();
    let rank = cluster.rank() as u32;
    let census = crate::census::specs(&cfg, &net, &common.census, &common.census_method, quiet)?;
    let mut sim = RankModel::build(cfg, net, plan.assignment.clone(), partition_rank, rank)?;
    sim.census = census;
    let command: Vec<String> = std::env::args().collect();
    let prepared = match claim {
        Some(claim) => ResultFile::create(
            claim,
            &sim,
            &RunMeta {
                command: &command.join(" "),
                threads: per_rank,
                ranks,
                memory_estimate: estimate.per_rank(),
            },
        )
        .and_then(|f| f.write_partition(&plan).map(|_| f))
        .with_context(|| format!("writing {}", path.display())),
        None => Err(anyhow::anyhow!("not rank 0")),
    };
    if !agree(cluster, !rank0 || prepared.is_ok()) {
        return match prepared {
            Err(e) if rank0 => Err(e),
            _ => Ok(Err(1)),
        };
    }
    if rank0 && per_rank < threads && common.threads.is_some() {
        eprintln!(
            "warning: -t {threads} capped at {per_rank} thread(s) per rank: every thread runs a \
             partition of at least one switch ({switches} switches over {ranks} rank(s))"
        );
    }
    if !quiet {
        eprintln!(
            "{}: {} switches, {} endpoints, routing {}, {} rank(s) x {} thread(s), lookahead {}, \
             memory estimate {}",
            sim.info.name,
            sim.info.switches,
            sim.info.endpoints,
            sim.routes().name,
            ranks,
            per_rank,
            plan.lookahead.map_or("-".into(), |l| l.to_string()),
            memory::human(estimate.per_rank())
        );
    }
    // What the configuration and the jobs' ideal runs already tell: warnings even when
    // quiet, notes otherwise.
    let mut told = sim.config.congestion.unused_tables();
    told.extend(sim.workload().map_or(Vec::new(), |w| w.forecast(sim.config.simulation.cycles)));
    for line in told {
        if rank0 && (!quiet || line.starts_with("warning")) {
            eprintln!("{line}");
        }
    }
    Ok(Ok(PreparedRun { sim, file: prepared.ok(), path, rank0, quiet }))
}

/// Gathers every rank's host, CPU mask and memory at rank 0, warns about oversubscription
/// and, unless told not to, returns why the ranks on some host would not fit in its memory.
fn check_placement(
    cluster: &mut Cluster,
    per_rank: u32,
    estimate: &memory::MemoryEstimate,
    no_memory_check: bool,
) -> Option<String> {
    let gathered = cluster.comm.gather(engine::comm::encode(&Placement::here(per_rank)))?;
    let all: Vec<Placement> = gathered.iter().filter_map(|b| engine::comm::decode(b).ok()).collect();
    // Warnings go out even with --quiet: they explain a run that is slower than it should be.
    for warning in placement::oversubscription_warnings(&all) {
        eprintln!("warning: {warning}");
    }
    if no_memory_check {
        return None;
    }
    placement::memory_shortfall(&all, estimate.per_rank(), &estimate.describe_with_hint())
}

impl PreparedRun {
    /// Simulates load point `index` at `load` on every rank; rank 0 records it and decides
    /// how to go on. Returns the point's exit code (as [`simulate`]'s) and whether it
    /// saturated, the same on every rank.
    fn point(
        &mut self,
        index: usize,
        load: f64,
        of: &PointOf,
        common: &Common,
        cluster: &mut Cluster,
        results: &mut Vec<RunResult>,
    ) -> Result<(u8, bool)> {
        let sim = &self.sim;
        let mut point = match self.file.as_ref() {
            Some(f) => Some(f.point(index, load).map_err(|e| f.fail(e))?),
            None => None,
        };
        let cycles = sim.config.simulation.cycles;
        let bar = if self.quiet { ProgressBar::hidden() } else { ProgressBar::new(cycles) };
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} cycles {per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        let at_most = if of.at_most { "at most " } else { "" };
        bar.set_prefix(format!("point {} of {at_most}{}, load {load:.4}", index + 1, of.total));
        let mut write_error = None;
        let progress = common.progress_file.as_deref().filter(|_| self.rank0);
        let mut last_progress = Instant::now() - std::time::Duration::from_secs(1);
        let outcome = sim.run(
            load,
            cluster.comm.as_mut(),
            &mut |s| {
                bar.set_position(s.time);
                if let Some(path) = progress {
                    if last_progress.elapsed().as_millis() >= 250 {
                        last_progress = Instant::now();
                        write_progress(path, index, of.total, s.time, cycles);
                    }
                }
                if let (Some(p), None) = (point.as_mut(), &write_error) {
                    write_error = p.append(s).err();
                    if write_error.is_some() {
                        // Nothing more could be kept: stop every rank at the next sample.
                        models::cancel::request_after_failure();
                    }
                }
            },
            Some(models::cancel::flag()),
        );
        bar.finish_and_clear();
        let result = match outcome {
            Ok(r) => r,
            Err(e) => {
                let message = format!("{e}");
                if let Some(f) = &self.file {
                    f.set_status("failed", &message).map_err(|e| f.fail(e))?;
                    if f.keeps_earlier_file() {
                        bail!(
                            "run failed at load {load}: {message} (no load point finished: the \
                             earlier file {} is kept as it was)",
                            self.path.display()
                        );
                    }
                    bail!(
                        "run failed at load {load}: {message} (partial results kept in {})",
                        self.path.display()
                    );
                }
                bail!("run failed at load {load}: {message}");
            }
        };
        // Rank 0 decides how to go on and tells the others (a sweep stops when interrupted).
        let mut code = 0u8;
        let mut saturated = false;
        if let (Some(r), Some(f), Some(p)) = (result, self.file.as_mut(), point.as_ref()) {
            if let Some(e) = write_error.take() {
                return Err(f.fail(e.context("writing the time series")));
            }
            p.finish(sim, &r).and_then(|_| f.add_summary(index, &r)).map_err(|e| f.fail(e))?;
            if r.status != Status::Interrupted {
                // A finished point: the new file now replaces an earlier one.
                f.publish().map_err(|e| f.fail(e))?;
            }
            code = match r.status {
                Status::Completed => 0,
                Status::Deadlock => 3,
                Status::Interrupted => 130,
                Status::Unfinished => 4,
            };
            if let Some(why) = r.workload.as_ref().and_then(|w| w.diagnosis(r.summary.in_flight_end)) {
                eprintln!("load {load}: the workload did not finish by cycle {}:\n{why}", r.time);
            }
            if r.status == Status::Deadlock {
                eprintln!(
                    "load {load}: deadlock detected (no packet moved for {} cycles); see blocked_channels",
                    sim.config.simulation.watchdog
                );
            }
            saturated = r.summary.saturated;
            results.push(r);
        }
        let decision = cluster.comm.broadcast(vec![code, u8::from(saturated)]);
        Ok((decision.first().copied().unwrap_or(1), decision.get(1) == Some(&1)))
    }

    /// Records how the run ended (`exit`), its wall time and every rank's peak memory, and
    /// prints the summary.
    fn finish(
        &self,
        exit: i32,
        started: Instant,
        results: &[RunResult],
        verdict: Option<&str>,
        cluster: &mut Cluster,
    ) -> Result<()> {
        let final_status = match exit {
            0 => "completed",
            3 => "deadlock",
            4 => "unfinished",
            _ => "interrupted",
        };
        let peak = peak_rss_bytes().unwrap_or(0);
        let peaks: Option<Vec<u64>> = cluster
            .comm
            .gather(peak.to_le_bytes().to_vec())
            .map(|all| all.iter().map(|b| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]))).collect());
        if let (Some(f), Some(peaks)) = (&self.file, &peaks) {
            f.set_resources(started.elapsed().as_secs_f64(), peaks)
                .and_then(|_| f.set_status(final_status, ""))
                .map_err(|e| f.fail(e))?;
        }
        if self.file.as_ref().is_some_and(|f| f.keeps_earlier_file()) {
            // Interrupted before a point finished: nothing replaces the earlier results.
            eprintln!("no load point finished: the earlier file {} is kept as it was", self.path.display());
        }
        if !self.quiet {
            print_workloads(results);
        }
        // The verdict is what a search runs for: printed even when quiet.
        if let (Some(v), true) = (verdict, self.rank0) {
            println!("{v}");
        }
        if !self.quiet {
            if let Some(peaks) = peaks {
                let most = peaks.iter().copied().max().unwrap_or(0);
                println!(
                    "peak memory {:.1} MiB per rank at most ({:.1} KiB per endpoint over {} rank(s))",
                    most as f64 / (1 << 20) as f64,
                    peaks.iter().sum::<u64>() as f64 / 1024.0 / self.sim.info.endpoints as f64,
                    peaks.len()
                );
            }
            if !self.file.as_ref().is_some_and(|f| f.keeps_earlier_file()) {
                println!("results: {}", self.path.display());
            }
        }
        Ok(())
    }
}

/// Prints a point's row of the summary table (after the table's head when `head`), as
/// soon as the point ends.
fn print_row(r: &RunResult, head: bool) {
    if head {
        println!(
            "{:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>9} {:>11} {:>8} {:>10}",
            "load",
            "offered",
            "accepted",
            "lat.mean",
            "lat.p99",
            "net.mean",
            "hops",
            "jain",
            "saturated",
            "status",
            "wall s",
            "Mhops/s"
        );
    }
    let s = &r.summary;
    println!(
        "{:>7.4} {:>9.4} {:>9.4} {:>9.1} {:>9.0} {:>8.1} {:>8.3} {:>6.3} {:>9} {:>11} {:>8.2} {:>10.2}",
        s.load,
        s.offered_load,
        s.accepted_load,
        s.latency_mean,
        s.latency_p99,
        s.network_latency_mean,
        s.hops_mean,
        s.jain_accepted,
        if s.saturated { "yes" } else { "no" },
        r.status.as_str(),
        r.wall_seconds,
        r.packet_hops as f64 / r.wall_seconds.max(1e-9) / 1e6
    );
    // A pipe (`xnet sweep | tee`) shows the row now, not when the sweep ends.
    use std::io::Write;
    let _ = std::io::stdout().flush();
}

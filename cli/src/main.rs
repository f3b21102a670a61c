//! `xnet`: command-line front end of the xnet interconnection-network simulator.
//!
//! This is the only crate that reads files, parses arguments and writes output; the
//! libraries below it (engine, models, partitioner) do neither.

mod census;
mod cluster;
mod hugepages;
mod inspect;
mod load;
mod output;
mod placement;
mod routes;
mod search;
mod signals;
mod simulate;
mod study;

use anyhow::{bail, Result};
use census::MethodArg;
use clap::{Parser, Subcommand};
use cluster::use_threads;
use cluster::{Cluster, StartArgs};
use load::{input_files, parse_config, read, refuse_output_over_inputs};
use models::memory;
use output::OutputClaim;
use placement::fits_here;
use search::Mode;
use signals::{stop_cleanly_on_signals, stop_on_signals};
use simulate::{simulate, Common};
use std::path::{Path, PathBuf};

/// Large arrays on transparent huge pages (see `hugepages.rs`).
#[global_allocator]
static ALLOCATOR: hugepages::HugePageAlloc = hugepages::HugePageAlloc;

/// The configuration used when `xnet run` gets no file: a quick HyperX run.
const DEFAULT_CONFIG: &str = include_str!("../../configs/quick.toml");

#[derive(Parser)]
#[command(name = "xnet", version, about = "Parallel, deterministic simulator of interconnection networks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate one configuration at its `traffic.load`.
    Run {
        /// TOML configuration; without it, a built-in quick HyperX example runs.
        config: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Simulate a configuration at several loads, one group per load in one file.
    Sweep {
        /// TOML configuration.
        config: PathBuf,
        /// Comma-separated loads (phits/cycle/endpoint); default: `traffic.loads`.
        #[arg(long, value_delimiter = ',', allow_negative_numbers = true)]
        loads: Vec<f64>,
        /// Stop after the first saturated point (backlog still growing; see the
        /// `saturated` column): the loads after it are not run.
        #[arg(long, conflicts_with = "find_saturation")]
        stop_at_saturation: bool,
        /// Find the saturation load: run the loads in increasing order up to the first
        /// saturated one (then 1.0 if none saturates), then bisect between the highest load
        /// that did not saturate and the lowest that did until they are `--tolerance` apart.
        /// Every point is kept in the file; the bracket is printed and recorded
        /// (`saturation_*` attributes).
        #[arg(long)]
        find_saturation: bool,
        /// The widest bracket `--find-saturation` accepts, in phits/cycle/endpoint.
        #[arg(
            long,
            value_name = "LOAD",
            default_value_t = 0.01,
            requires = "find_saturation",
            allow_negative_numbers = true
        )]
        tolerance: f64,
        #[command(flatten)]
        common: Common,
    },
    /// Describe a configuration's topology: sizes, radix, diameter, average distance.
    Topo {
        /// TOML configuration.
        config: PathBuf,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Build the network even when the memory estimate exceeds the memory available.
        #[arg(long)]
        no_memory_check: bool,
        /// Also write the network as a fabric file: InfiniBand `.net` (ibsim, ibnetdiscover;
        /// a name ending in `.net`) or an edge list (any other name), which
        /// `topology.kind = "file"` reads back and OpenSM can route (on ibsim).
        #[arg(long, value_name = "FILE")]
        export: Option<PathBuf>,
    },
    /// Application workloads: `xnet workload export` writes a configuration's jobs as GOAL
    /// schedules.
    Workload {
        #[command(subcommand)]
        action: WorkloadCommand,
    },
    /// Show how a configuration would be split over ranks and threads: balance, cut
    /// links, lookahead and the messages expected per synchronisation window.
    Partition {
        /// TOML configuration.
        config: PathBuf,
        /// MPI ranks.
        #[arg(long, default_value_t = 1)]
        ranks: u32,
        /// Threads per rank.
        #[arg(long, short = 't', default_value_t = 1)]
        threads: u32,
        /// Partitioning method.
        #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
        method: MethodArg,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Also write one CSV row per rank (switches, endpoints, weight, links to other
        /// ranks, neighbour ranks): the inputs of the scaling model (docs/scaling.md).
        #[arg(long, value_name = "FILE")]
        csv: Option<PathBuf>,
        /// Build the network even when the memory estimate exceeds the memory available.
        #[arg(long)]
        no_memory_check: bool,
    },
    /// Verify and analyse a configuration's routes without simulating: deadlock freedom
    /// (channel dependency graph), reachability, routing distance, link weights.
    Routes {
        #[command(flatten)]
        args: RoutesArgs,
    },
    /// Run a study: a base configuration and a grid of overrides (STUDY.toml, see
    /// docs/studies.md), one load sweep and one HDF5 file per grid point, in a study folder.
    /// Finished runs are skipped, so running it again resumes.
    Study {
        #[command(flatten)]
        args: StudyArgs,
    },
    /// List the known topologies, routings, VC policies, selections and traffic patterns,
    /// with their settings (generated from the registries).
    List {
        /// Only this family: `topologies`, `routings`, `patterns`, `vc_policies`, ... (or
        /// its key, e.g. `routing.algorithm`).
        what: Option<String>,
        /// Only the entries whose name, description or settings contain this text (any
        /// case), e.g. `--filter dragonfly`.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        /// Print the Markdown tables of docs/configuration.md instead.
        #[arg(long, conflicts_with_all = ["what", "filter"])]
        markdown: bool,
    },
}

/// What `xnet workload` does.
#[derive(Subcommand)]
enum WorkloadCommand {
    /// Write jobs of a configuration's `[workload]` (generated or read) as GOAL schedules,
    /// the text format of LogGOPSim and ATLAHS, with computations in nanoseconds
    /// (`workload.ns_per_cycle`). A job of kind `goal` with the file as `file` runs the
    /// same as the job it came from. With `--format chakra`, a training job as Chakra
    /// execution traces for ASTRA-sim (or a `chakra` job), its collectives whole.
    Export {
        /// TOML configuration with a `[workload]`.
        config: PathBuf,
        /// Override a config key (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Only the job of this name or index (default: every job).
        #[arg(long)]
        job: Option<String>,
        /// The GOAL file (one job), or a directory that receives `NAME.goal` per job (with
        /// `--format chakra`: always a directory, receiving `NAME.R.et` per rank and
        /// `NAME.groups.json`).
        #[arg(long, short = 'o')]
        output: PathBuf,
        /// `goal` (any job), or `chakra` (training jobs).
        #[arg(long, default_value = "goal", value_parser = ["goal", "chakra"])]
        format: String,
    },
}

/// The arguments of `xnet routes`.
#[derive(clap::Args)]
struct RoutesArgs {
    /// TOML configuration.
    config: PathBuf,
    /// Override a config key (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Output HDF5 file. Default: `xnet-routes-<config name>.h5`.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// Compare routings side by side: comma-separated `algorithm` or
    /// `algorithm:vc_policy` entries, each applied over the configuration.
    #[arg(long, value_delimiter = ',')]
    compare: Vec<String>,
    /// Threads for the table computations and the verification. Default: all cores.
    #[arg(long, short = 't')]
    threads: Option<u32>,
    /// Check only this many evenly spaced destination switches (all sources): for
    /// networks too large to verify whole. A cycle found is real; "acyclic" then covers
    /// only the routes checked.
    #[arg(long)]
    destinations: Option<usize>,
    /// Build even when the memory estimate exceeds the memory available.
    #[arg(long)]
    no_memory_check: bool,
    /// Also write the routes as InfiniBand tables into DIR: `opensm-lfts.dump` (OpenSM's
    /// forwarding-table dump) and `xnet-sls.dump` (the SL of every route), which
    /// `routing.algorithm = "tables"` reads back (docs/routes.md).
    #[arg(long, value_name = "DIR")]
    dump_tables: Option<PathBuf>,
}

/// The arguments of `xnet study`.
#[derive(clap::Args)]
struct StudyArgs {
    /// The study file; with --status or --task, the study folder.
    path: PathBuf,
    /// The study folder. Default: `xnet-study-<study name>` in the current directory.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Runs at once. Default: `study.jobs`, else cores / `study.threads`.
    #[arg(long, short = 'j')]
    jobs: Option<u32>,
    /// Write a Slurm job array (one task per run) into the folder and submit it with
    /// sbatch, instead of running here.
    #[arg(long)]
    slurm: bool,
    /// With --slurm: write the script, do not submit it.
    #[arg(long, requires = "slurm")]
    no_submit: bool,
    /// With --slurm: wait until every array task has ended (`sbatch --wait`); the exit
    /// code is then 0 only if every run has its result.
    #[arg(long, requires = "slurm", conflicts_with = "no_submit")]
    wait: bool,
    /// Show where each run of the study folder PATH stands, and nothing else.
    #[arg(long, conflicts_with_all = ["slurm", "task"])]
    status: bool,
    /// Run the run with this index of the study folder PATH (what a Slurm array task does).
    #[arg(long, conflicts_with = "slurm")]
    task: Option<usize>,
    /// No progress display.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Do not write the HTML report (FOLDER/report.html, by the Python package) at the end.
    #[arg(long)]
    no_report: bool,
}

fn main() {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`xnet routes ... | head`)
    // would panic; the default action ends the process quietly, as for other tools.
    // SAFETY: called first thing, before any thread exists; SIG_DFL is always valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        // A write past the file-size limit (`ulimit -f`) then fails with an error that
        // names the file instead of killing the process without a word.
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = Cli::parse();
    warn_of_a_small_file_size_limit();
    let mut cluster = Cluster::join();
    stop_on_signals();
    let code = match run_cli(cli, &mut cluster) {
        Ok(code) => code,
        Err(e) if cluster.size() > 1 => {
            // The other ranks may be waiting for this one in a collective: end them all.
            // Ranks other than 0 give rank 0 a few seconds first, so that an error every rank
            // meets (a configuration error) is reported once, by rank 0, whose abort ends
            // the others before they print.
            let (rank, size) = (cluster.rank(), cluster.size());
            if rank != 0 {
                std::thread::sleep(std::time::Duration::from_secs(3));
            }
            eprintln!("error: rank {rank} of {size}: {e:#}");
            // The launcher forwards our stderr through a pipe; the abort tears its proxies
            // down, so give it a moment to pass the message on first.
            std::thread::sleep(std::time::Duration::from_secs(1));
            cluster.comm.abort(if models::cancel::interrupted() { 130 } else { 1 })
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            // A build or check stopped by a signal ends as an interrupted run does.
            if models::cancel::interrupted() {
                130
            } else {
                1
            }
        }
    };
    drop(cluster); // finalises MPI before exiting
    std::process::exit(code);
}

/// Below this file-size limit (`ulimit -f`), MPI's start-up may fail: it writes
/// shared-memory segments of a few MiB (UCX's fail at 4,000 KiB).
const SMALL_FILE_SIZE_LIMIT: u64 = 64 << 20;

/// Says so before MPI starts when the file-size limit is small enough to make MPI's
/// start-up fail with an abort that does not name it.
fn warn_of_a_small_file_size_limit() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct it is given.
    let known = unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0;
    if known && limit.rlim_cur != libc::RLIM_INFINITY && limit.rlim_cur < SMALL_FILE_SIZE_LIMIT {
        eprintln!(
            "warning: the file-size limit (ulimit -f) is {}: MPI's start-up writes shared-memory segments of \
             a few MiB and fails below about 4 MiB, and result files cannot grow past it; raise it with \
             `ulimit -f unlimited`",
            models::memory::human(limit.rlim_cur)
        );
    }
}

/// Runs the command on this rank and returns the exit code.
fn run_cli(cli: Cli, cluster: &mut Cluster) -> Result<i32> {
    let rank0 = cluster.rank() == 0;
    match cli.command {
        Command::Run { config, common } => {
            let (text, name) = match &config {
                Some(path) => (read(path)?, stem(path)),
                None => (DEFAULT_CONFIG.to_string(), "default".to_string()),
            };
            let cfg = parse_config(&text, &common.set)?;
            cluster.agree_on_start(&StartArgs::new("run", Some(&cfg), Some(common.threads.unwrap_or(1))))?;
            let load = cfg.traffic.load;
            simulate(cfg, &name, config.as_deref(), &[load], None, &common, cluster)
        }
        Command::Sweep { config, loads, stop_at_saturation, find_saturation, tolerance, common } => {
            search::check_tolerance("--tolerance", tolerance)?;
            let cfg = parse_config(&read(&config)?, &common.set)?;
            let command = format!(
                "sweep --loads {loads:?} --stop-at-saturation {stop_at_saturation} --find-saturation {find_saturation} --tolerance {tolerance}"
            );
            cluster.agree_on_start(&StartArgs::new(
                command,
                Some(&cfg),
                Some(common.threads.unwrap_or(1)),
            ))?;
            let loads = if loads.is_empty() { cfg.traffic.loads.clone() } else { loads };
            if loads.is_empty() {
                bail!("no loads: give --loads 0.1,0.2,... or traffic.loads in the config");
            }
            if let Some(bad) = loads.iter().find(|l| !(0.0..=1.0).contains(*l)) {
                bail!("--loads: {bad} is outside [0, 1] phits/cycle/endpoint");
            }
            if cfg.workload.is_some() && !cfg.traffic.given && loads.iter().any(|&l| l > 0.0) {
                bail!(
                    "{}: a sweep varies the load of the background traffic beside the jobs, and this \
                     configuration has no [traffic] section: give one (pattern = \"uniform\", say), sweep \
                     load 0 only (the jobs alone), or run them with `xnet run`",
                    config.display()
                );
            }
            let mode = if find_saturation {
                Mode::Find { tolerance }
            } else if stop_at_saturation {
                Mode::StopAtSaturation
            } else {
                Mode::All
            };
            simulate(cfg, &stem(&config), Some(&config), &loads, Some(mode), &common, cluster)
        }
        Command::Topo { config, set, no_memory_check, export } => {
            let text = read(&config)?;
            let inputs = input_files(&config, &text, &set);
            if let Some(path) = &export {
                refuse_output_over_inputs(path, "--export", &inputs)?;
            }
            let cfg = parse_config(&text, &set)?;
            cluster.agree_on_start(&StartArgs::new("topo", Some(&cfg), None))?;
            if rank0 {
                inspect::topo(&cfg, no_memory_check, export.as_deref(), &inputs)?;
            }
            Ok(0)
        }
        Command::Workload { action: WorkloadCommand::Export { config, set, job, output, format } } => {
            let text = read(&config)?;
            let inputs = input_files(&config, &text, &set);
            refuse_output_over_inputs(&output, "-o", &inputs)?;
            let cfg = parse_config(&text, &set)?;
            cluster.agree_on_start(&StartArgs::new("workload export", Some(&cfg), None))?;
            if rank0 {
                if format == "chakra" {
                    inspect::export_chakra(&cfg, job.as_deref(), &output, &inputs)?;
                } else {
                    inspect::export_workload(&cfg, job.as_deref(), &output, &inputs)?;
                }
            }
            Ok(0)
        }
        Command::Partition { config, ranks, threads, method, set, csv, no_memory_check } => {
            let text = read(&config)?;
            let inputs = input_files(&config, &text, &set);
            if let Some(path) = &csv {
                refuse_output_over_inputs(path, "--csv", &inputs)?;
            }
            let cfg = parse_config(&text, &set)?;
            let command = format!("partition --ranks {ranks} --method {method:?}");
            cluster.agree_on_start(&StartArgs::new(command, Some(&cfg), Some(threads)))?;
            if rank0 {
                inspect::describe_partition(
                    cfg,
                    ranks,
                    threads,
                    method.into(),
                    csv.as_deref(),
                    no_memory_check,
                    &inputs,
                )?;
            }
            Ok(0)
        }
        Command::Routes { args } => routes_command(args, cluster),
        Command::Study { args } => {
            cluster.agree_on_start(&StartArgs::new("study", None, None))?;
            if cluster.size() > 1 && !args.status {
                bail!(
                    "xnet study was started on {} MPI ranks: it starts each run as a process of its own, \
                     so launch it without mpiexec or srun (`xnet study FILE`); for runs of several ranks \
                     each, set [slurm] ranks and use --slurm",
                    cluster.size()
                );
            }
            study_command(args, rank0)
        }
        Command::List { what, filter, markdown } => {
            let command = format!("list {what:?} --filter {filter:?} --markdown {markdown}");
            cluster.agree_on_start(&StartArgs::new(command, None, None))?;
            if rank0 {
                list_command(what.as_deref(), filter.as_deref(), markdown)?;
            }
            Ok(0)
        }
    }
}

/// `xnet routes`: verifies and analyses the routes (of one routing, or several side by
/// side with `--compare`) on rank 0. Exit code 4 when some routing is not deadlock-free,
/// leaves pairs unreachable or (compared) cannot be built on this configuration.
fn routes_command(args: RoutesArgs, cluster: &mut Cluster) -> Result<i32> {
    let RoutesArgs { config, set, output, compare, threads, destinations, no_memory_check, dump_tables } =
        args;
    // Before anything asks rayon for its threads, which would start the pool.
    if let Some(t) = threads {
        use_threads(t)?;
    }
    let text = read(&config)?;
    let cfg = parse_config(&text, &set)?;
    let command = format!("routes --compare {compare:?} --destinations {destinations:?}");
    cluster.agree_on_start(&StartArgs::new(command, Some(&cfg), threads))?;
    let rank0 = cluster.rank() == 0;
    let threads_used = threads.unwrap_or(rayon::current_num_threads() as u32);
    let estimate = memory::estimate(&cfg, 1, threads_used)?;
    fits_here(&estimate, &["program", "network", "routing"], "to build the routes", no_memory_check)?;
    let output = output.unwrap_or_else(|| format!("xnet-routes-{}.h5", stem(&config)).into());
    if !rank0 {
        return Ok(0);
    }
    stop_cleanly_on_signals();
    let mut output = OutputClaim::take(&output, &[&config])?;
    if output.holds_earlier_file() {
        eprintln!("note: replacing {} (an earlier run's routes)", output.path().display());
    }
    if destinations == Some(0) {
        bail!("--destinations must be at least 1");
    }
    if dump_tables.is_some() && !compare.is_empty() {
        bail!("--dump-tables writes one routing's tables; leave out --compare");
    }
    let reports = if compare.is_empty() {
        let inputs = input_files(&config, &text, &set);
        vec![Ok(routes::routes(cfg, &mut output, destinations, dump_tables.as_deref(), &inputs)?)]
    } else {
        routes::compare(&text, &set, &compare, &mut output)?
    };
    let sound = reports.iter().all(|r| r.as_ref().is_ok_and(|r| r.acyclic && r.unreachable_pairs == 0));
    Ok(if sound { 0 } else { 4 })
}

/// `xnet list`: the registries (one family with `what`, the entries matching `filter`),
/// wrapped to the terminal's width (100 columns when stdout is not a terminal), or the
/// Markdown tables of docs/configuration.md.
fn list_command(what: Option<&str>, filter: Option<&str>, markdown: bool) -> Result<()> {
    use models::registry::{families, filter as matching, listing, select};
    if markdown {
        print!("{}", models::registry::all_docs_blocks());
        return Ok(());
    }
    let mut chosen = families();
    if let Some(what) = what {
        chosen = select(chosen, what).map_err(|e| {
            anyhow::anyhow!("xnet list {what}: {e}; to search every family, use `xnet list --filter {what}`")
        })?;
    }
    if let Some(text) = filter {
        chosen = matching(chosen, text);
        if chosen.is_empty() {
            bail!("xnet list --filter {text}: no entry's name, description or settings contain `{text}`");
        }
    }
    print!("{}", listing(&chosen, inspect::terminal_width().unwrap_or(100)));
    if what.is_none() && filter.is_none() {
        println!(
            "which routing and VC policy to start with, per topology, traffic and faults: docs/choosing.md"
        );
    }
    Ok(())
}

/// `xnet study`: where a folder's runs stand (`--status`), one run as an array task does
/// (`--task`), or the study written as a Slurm array (`--slurm`) or run here; on rank 0.
fn study_command(args: StudyArgs, rank0: bool) -> Result<i32> {
    let StudyArgs { path, dir, jobs, slurm, no_submit, wait, status, task, quiet, no_report } = args;
    if !rank0 {
        return Ok(0);
    }
    if status {
        study::status(&path)?;
        return Ok(0);
    }
    if let Some(index) = task {
        stop_cleanly_on_signals();
        return study::run_task(&path, index);
    }
    let plan = study::Study::load(&path)?;
    let dir = dir.unwrap_or_else(|| format!("xnet-study-{}", stem(&path)).into());
    if slurm {
        let submit = match (no_submit, wait) {
            (true, _) => study::Submit::No,
            (false, false) => study::Submit::Yes,
            (false, true) => study::Submit::AndWait,
        };
        return study::write_slurm(&plan, &dir, submit);
    }
    stop_cleanly_on_signals();
    study::run_local(&plan, &dir, jobs, quiet, !no_report)
}

fn stem(path: &Path) -> String {
    path.file_stem().map_or("run".into(), |s| s.to_string_lossy().into_owned())
}

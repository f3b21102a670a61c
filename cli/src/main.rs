//! `xnet`: command-line front end of the xnet interconnection-network simulator.
//!
//! This is the only crate that reads files, parses arguments and writes output; the
//! libraries below it (engine, models, partitioner) do neither.

mod cluster;
mod hugepages;
mod output;
mod placement;
mod routes;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use cluster::Cluster;
use indicatif::{ProgressBar, ProgressStyle};
use models::config::Config;
use models::memory;
use models::sim::{partition, RankModel, RunResult, Status};
use models::topology::metrics::summarize;
use output::{OutputClaim, ResultFile, RunMeta};
use placement::Placement;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

#[derive(clap::Args, Clone)]
struct Common {
    /// Override a config key, e.g. `--set traffic.load=0.3` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Threads (partitions of the network) to run on. Default: all cores.
    #[arg(long, short = 't')]
    threads: Option<u32>,
    /// Output HDF5 file. Default: `xnet-<config name>.h5` in the current directory.
    #[arg(long, short = 'o')]
    output: Option<PathBuf>,
    /// No progress bar or summary.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Run even when the memory estimate exceeds the memory available.
    #[arg(long)]
    no_memory_check: bool,
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
        #[arg(long, value_delimiter = ',')]
        loads: Vec<f64>,
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
    },
    /// List the known topologies, routings, VC policies, selections and traffic patterns,
    /// with their settings (generated from the registries).
    List {
        /// Print the Markdown tables of docs/configuration.md instead.
        #[arg(long)]
        markdown: bool,
    },
}

/// Partitioning methods (see the partitioner crate).
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum MethodArg {
    /// Dragonfly groups when there are enough, else the better of linear and multilevel.
    Auto,
    /// Contiguous ranges of switch ids (slabs of HyperX and tori).
    Linear,
    /// Whole natural blocks (Dragonfly groups).
    Blocks,
    /// Multilevel graph partitioning (METIS-style), cutting the longest links first.
    Multilevel,
}

impl From<MethodArg> for partitioner::Method {
    fn from(m: MethodArg) -> Self {
        match m {
            MethodArg::Auto => partitioner::Method::Auto,
            MethodArg::Linear => partitioner::Method::Linear,
            MethodArg::Blocks => partitioner::Method::Blocks,
            MethodArg::Multilevel => partitioner::Method::Multilevel,
        }
    }
}

fn main() {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`xnet routes ... | head`)
    // would panic; the default action ends the process quietly, as for other tools.
    // SAFETY: called first thing, before any thread exists; SIG_DFL is always valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let mut cluster = Cluster::join();
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

fn run_cli(cli: Cli, cluster: &mut Cluster) -> Result<i32> {
    let rank0 = cluster.rank() == 0;
    match cli.command {
        Command::Run { config, common } => {
            let (text, name) = match &config {
                Some(path) => (read(path)?, stem(path)),
                None => (DEFAULT_CONFIG.to_string(), "default".to_string()),
            };
            let cfg = Config::parse(&text, &common.set)?;
            let load = cfg.traffic.load;
            simulate(cfg, &name, config.as_deref(), &[load], &common, cluster)
        }
        Command::Sweep { config, loads, common } => {
            let cfg = Config::parse(&read(&config)?, &common.set)?;
            let loads = if loads.is_empty() { cfg.traffic.loads.clone() } else { loads };
            if loads.is_empty() {
                bail!("no loads: give --loads 0.1,0.2,... or traffic.loads in the config");
            }
            if let Some(bad) = loads.iter().find(|l| !(0.0..=1.0).contains(*l)) {
                bail!("--loads: {bad} is outside [0, 1] phits/cycle/endpoint");
            }
            simulate(cfg, &stem(&config), Some(&config), &loads, &common, cluster)
        }
        Command::Topo { config, set, no_memory_check } => {
            let cfg = Config::parse(&read(&config)?, &set)?;
            if rank0 {
                topo(&cfg, no_memory_check)?;
            }
            Ok(0)
        }
        Command::Partition { config, ranks, threads, method, set, csv, no_memory_check } => {
            let cfg = Config::parse(&read(&config)?, &set)?;
            if rank0 {
                describe_partition(cfg, ranks, threads, method.into(), csv.as_deref(), no_memory_check)?;
            }
            Ok(0)
        }
        Command::Routes { config, set, output, compare, threads, destinations, no_memory_check } => {
            let text = read(&config)?;
            let cfg = Config::parse(&text, &set)?;
            let threads_used = threads.unwrap_or(rayon::current_num_threads() as u32);
            let estimate = memory::estimate(&cfg, 1, threads_used)?;
            fits_here(&estimate, &["program", "network", "routing"], "to build the routes", no_memory_check)?;
            let output = output.unwrap_or_else(|| format!("xnet-routes-{}.h5", stem(&config)).into());
            if !rank0 {
                return Ok(0);
            }
            let mut output = OutputClaim::take(&output, &[&config])?;
            stop_on_signals();
            if let Some(t) = threads {
                use_threads(t)?;
            }
            if destinations == Some(0) {
                bail!("--destinations must be at least 1");
            }
            let reports = if compare.is_empty() {
                vec![routes::routes(cfg, &mut output, destinations)?]
            } else {
                routes::compare(&text, &set, &compare, &mut output)?
            };
            let sound = reports.iter().all(|r| r.acyclic && r.unreachable_pairs == 0);
            Ok(if sound { 0 } else { 4 })
        }
        Command::List { markdown } => {
            if !rank0 {
                return Ok(0);
            }
            if markdown {
                print!("{}", models::registry::all_docs_blocks());
            } else {
                print!("{}", models::registry::listing());
            }
            Ok(0)
        }
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read config {}", path.display()))
}

fn stem(path: &Path) -> String {
    path.file_stem().map_or("run".into(), |s| s.to_string_lossy().into_owned())
}

fn describe_partition(
    cfg: Config,
    ranks: u32,
    threads: u32,
    method: partitioner::Method,
    csv: Option<&Path>,
    no_memory_check: bool,
) -> Result<()> {
    if ranks == 0 || threads == 0 {
        bail!("--ranks and --threads must be at least 1");
    }
    let estimate = memory::estimate(&cfg, ranks, threads)?;
    println!("memory           {} (estimate)", estimate.describe());
    println!("                 {}", estimate.describe_saturation());
    fits_here(&estimate, &["program", "network", "partitioning"], "to partition it", no_memory_check)?;
    let net = cfg.build_network()?;
    let t0 = Instant::now();
    let plan = partition::plan(&cfg, &net, ranks * threads, method)?;
    let seconds = t0.elapsed().as_secs_f64();
    let graph = partition::partition_graph(&net);
    let rank_of = |v: u32| plan.assignment[v as usize] / threads;
    let rank_cut: Vec<u64> =
        graph.edges.iter().filter(|&&(a, b, _)| rank_of(a) != rank_of(b)).map(|&(_, _, l)| l).collect();
    let weights = &plan.part_weights;
    println!(
        "network          {} ({} switches, {} endpoints)",
        net.name,
        net.num_switches(),
        net.num_endpoints()
    );
    println!(
        "partitions       {} = {ranks} rank(s) x {threads} thread(s), method {:?} ({seconds:.3} s)",
        plan.parts, plan.method
    );
    println!(
        "balance          imbalance {:.3} (weights {}..{}, weight = ports + endpoints per switch)",
        plan.imbalance,
        weights.iter().min().unwrap_or(&0),
        weights.iter().max().unwrap_or(&0)
    );
    println!(
        "cut links        {} directed links cross partitions, {} cross ranks",
        plan.cut_edges,
        rank_cut.len()
    );
    println!(
        "lookahead        {} cycles between partitions, {} between ranks",
        plan.lookahead.map_or("none".into(), |l| l.to_string()),
        rank_cut.iter().min().map_or("none".into(), |l| l.to_string())
    );
    println!(
        "messages/window  {:.1} expected across partitions (links carrying the configured load {})",
        plan.expected_messages_per_window, cfg.traffic.load
    );
    if let Some(path) = csv {
        write_rank_csv(path, &net, &graph, &plan.assignment, threads, ranks)?;
        println!("per rank         {}", path.display());
    }
    Ok(())
}

/// One row per rank: what the scaling model needs to know of the partition.
fn write_rank_csv(
    path: &Path,
    net: &models::topology::Network,
    graph: &partitioner::PartGraph,
    assignment: &[u32],
    threads: u32,
    ranks: u32,
) -> Result<()> {
    use std::fmt::Write as _;
    let r = ranks as usize;
    let rank_of = |v: u32| (assignment[v as usize] / threads) as usize;
    let (mut switches, mut endpoints, mut weight) = (vec![0u64; r], vec![0u64; r], vec![0u64; r]);
    for v in 0..net.num_switches() as u32 {
        let k = rank_of(v);
        switches[k] += 1;
        endpoints[k] += net.terminals[v as usize] as u64;
        weight[k] += graph.vertex_weight[v as usize];
    }
    let mut cut_out = vec![0u64; r];
    let mut min_latency = vec![u64::MAX; r];
    let mut neighbours: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); r];
    for &(a, b, latency) in &graph.edges {
        let (ra, rb) = (rank_of(a), rank_of(b));
        if ra != rb {
            cut_out[ra] += 1;
            min_latency[ra] = min_latency[ra].min(latency);
            neighbours[ra].insert(rb);
        }
    }
    let mut text =
        String::from("rank,switches,endpoints,weight,cut_links_out,neighbour_ranks,min_cut_latency\n");
    for k in 0..r {
        let latency = if min_latency[k] == u64::MAX { 0 } else { min_latency[k] };
        let _ = writeln!(
            text,
            "{k},{},{},{},{},{},{latency}",
            switches[k],
            endpoints[k],
            weight[k],
            cut_out[k],
            neighbours[k].len()
        );
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

fn topo(cfg: &Config, no_memory_check: bool) -> Result<()> {
    let cores = rayon::current_num_threads() as u32;
    let estimate = memory::estimate(cfg, 1, cores)?;
    println!("memory          {} to run on 1 rank (estimate)", estimate.describe());
    println!("                {}", estimate.describe_saturation());
    fits_here(&estimate, &["program", "network"], "to build the network", no_memory_check)?;
    let t0 = Instant::now();
    let net = cfg.build_network()?;
    let built = t0.elapsed().as_secs_f64();
    let s = summarize(&net);
    println!("topology        {}", net.name);
    println!("switches        {}", s.switches);
    println!("endpoints       {}", s.endpoints);
    println!("links           {} (bidirectional, switch to switch)", s.network_links);
    if s.unconnected_ports > 0 {
        println!("unused ports    {}", s.unconnected_ports);
    }
    println!("radix           {}..{}", s.min_radix, s.max_radix);
    println!("connected       {}", s.connected);
    println!("diameter        {} switch hops", s.diameter);
    println!("avg distance    {:.4} switch hops (between distinct switches)", s.average_distance);
    println!("avg endpoint    {:.4} switch hops (between distinct endpoints)", s.endpoint_average_distance);
    let classes: Vec<String> = net.link_classes.iter().map(|c| format!("{}={}", c.name, c.latency)).collect();
    println!("link latencies  {}", classes.join(", "));
    println!(
        "computed in     {:.3} s build + {:.3} s distances ({} threads)",
        built,
        t0.elapsed().as_secs_f64() - built,
        rayon::current_num_threads()
    );
    Ok(())
}

/// Refuses, unless `skip`, when the `parts` of `estimate` that a command needs to go
/// `doing` exceed the memory this process may use.
fn fits_here(estimate: &memory::MemoryEstimate, parts: &[&str], doing: &str, skip: bool) -> Result<()> {
    let needed = estimate.bytes_of(parts);
    let what = format!("{} {doing}", memory::human(needed));
    match placement::memory_shortfall(&[Placement::here(1)], needed, &what) {
        Some(why) if !skip => bail!("{why}"),
        _ => Ok(()),
    }
}

/// Sets the number of threads of rayon's global pool (tables, verification); `--threads`
/// must be at least 1.
fn use_threads(threads: u32) -> Result<()> {
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads as usize).build_global();
    Ok(())
}

/// Catches SIGINT, SIGTERM and SIGHUP into [`models::cancel`]: a simulation stops at its
/// next sample, routing builds and the verifier between units of work (they then fail with
/// "interrupted while ...", and the process exits with 130).
fn stop_on_signals() {
    let _ = ctrlc::set_handler(models::cancel::request);
}

/// Rank 0 tells the others whether it could prepare (e.g. create the output file), so
/// that no rank enters the simulation's collectives alone.
fn agree(cluster: &mut Cluster, ok: bool) -> bool {
    cluster.comm.broadcast(vec![u8::from(ok)]).first() == Some(&1)
}

fn simulate(
    cfg: Config,
    name: &str,
    config_path: Option<&Path>,
    loads: &[f64],
    common: &Common,
    cluster: &mut Cluster,
) -> Result<i32> {
    let ranks = cluster.size() as u32;
    let rank0 = cluster.rank() == 0;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    // One rank: all cores. Several ranks (which may share a node): one thread each unless told.
    let threads = common.threads.unwrap_or(if ranks == 1 { cores } else { 1 });
    // Table computations (rayon) use the same number of threads.
    use_threads(threads)?;
    stop_on_signals();
    let quiet = common.quiet || !rank0;
    // Rank 0 claims the output file before the long build, so that a file another run
    // holds is refused at once and left as it is.
    let path = common.output.clone().unwrap_or_else(|| PathBuf::from(format!("xnet-{name}.h5")));
    let claim = rank0.then(|| OutputClaim::take(&path, config_path.as_slice())).transpose();
    // Sizes and memory are checked before anything large is built.
    let switches = cfg.network_size()?.switches as u32;
    if ranks > switches {
        bail!("{ranks} ranks for {switches} switches: use at most one rank per switch");
    }
    // Partitions are numbered rank by rank: partition p runs on rank p / threads.
    let per_rank = threads.min(switches / ranks).max(1);
    let estimate = memory::estimate(&cfg, ranks, per_rank)?;
    let mut refusal = None;
    if let Some(gathered) = cluster.comm.gather(engine::comm::encode(&Placement::here(per_rank))) {
        let all: Vec<Placement> = gathered.iter().filter_map(|b| engine::comm::decode(b).ok()).collect();
        // Warnings go out even with --quiet: they explain a run that is slower than it should be.
        for warning in placement::oversubscription_warnings(&all) {
            eprintln!("warning: {warning}");
        }
        if !common.no_memory_check {
            refusal = placement::memory_shortfall(&all, estimate.per_rank(), &estimate.describe());
        }
    }
    // Rank 0 says whether every rank may go on; if not, it reports why and the others stop.
    if !agree(cluster, claim.is_ok() && refusal.is_none()) {
        return match (claim, refusal) {
            (Err(e), _) => Err(e),
            (_, Some(why)) => Err(anyhow::anyhow!(why)),
            _ => Ok(1),
        };
    }
    let claim = claim?;
    // Every rank builds the whole network and partitions it (deterministically, so they
    // agree), keeps its own share and lets the rest go.
    let net = cfg.build_network()?;
    let plan = partition::plan(&cfg, &net, ranks * per_rank, partitioner::Method::Auto)?;
    let partition_rank: Vec<u32> = (0..plan.parts).map(|p| p / per_rank).collect();
    let rank = cluster.rank() as u32;
    let sim = RankModel::build(cfg, net, plan.assignment.clone(), partition_rank, rank)?;
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
    let go = agree(cluster, !rank0 || prepared.is_ok());
    if !go {
        return match prepared {
            Err(e) if rank0 => Err(e),
            _ => Ok(1),
        };
    }
    let mut file = prepared.ok();
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
    let started = Instant::now();
    let mut results: Vec<RunResult> = Vec::new();
    let mut exit = 0;
    for (i, &load) in loads.iter().enumerate() {
        let mut point = match file.as_ref() {
            Some(f) => Some(f.point(i, load).map_err(|e| f.fail(e))?),
            None => None,
        };
        let cycles = sim.config.simulation.cycles;
        let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(cycles) };
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} cycles {per_sec} eta {eta}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.set_prefix(format!("load {load:.3}"));
        let mut write_error = None;
        let outcome = sim.run(
            load,
            cluster.comm.as_mut(),
            &mut |s| {
                bar.set_position(s.time);
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
                if let Some(f) = &file {
                    f.set_status("failed", &message).map_err(|e| f.fail(e))?;
                    bail!(
                        "run failed at load {load}: {message} (partial results kept in {})",
                        path.display()
                    );
                }
                bail!("run failed at load {load}: {message}");
            }
        };
        // Rank 0 decides how to go on and tells the others (a sweep stops when interrupted).
        let mut code = 0u8;
        if let (Some(r), Some(f), Some(p)) = (result, file.as_mut(), point.as_ref()) {
            if let Some(e) = write_error.take() {
                return Err(f.fail(e.context("writing the time series")));
            }
            p.finish(&sim, &r).and_then(|_| f.add_summary(i, &r)).map_err(|e| f.fail(e))?;
            code = match r.status {
                Status::Completed => 0,
                Status::Deadlock => 3,
                Status::Interrupted => 130,
            };
            if r.status == Status::Deadlock {
                eprintln!(
                    "load {load}: deadlock detected (no packet moved for {} cycles); see blocked_channels",
                    sim.config.simulation.watchdog
                );
            }
            results.push(r);
        }
        code = cluster.comm.broadcast(vec![code]).first().copied().unwrap_or(1);
        exit = exit.max(code as i32);
        if code == 130 {
            break;
        }
    }
    let final_status = match exit {
        0 => "completed",
        3 => "deadlock",
        _ => "interrupted",
    };
    // Peak memory of every rank.
    let peak = peak_rss_bytes().unwrap_or(0);
    let peaks: Option<Vec<u64>> = cluster
        .comm
        .gather(peak.to_le_bytes().to_vec())
        .map(|all| all.iter().map(|b| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]))).collect());
    if let (Some(f), Some(peaks)) = (&file, &peaks) {
        f.set_resources(started.elapsed().as_secs_f64(), peaks)
            .and_then(|_| f.set_status(final_status, ""))
            .map_err(|e| f.fail(e))?;
    }
    if !quiet {
        print_summary(&results);
        if let Some(peaks) = peaks {
            let most = peaks.iter().copied().max().unwrap_or(0);
            println!(
                "peak memory {:.1} MiB per rank at most ({:.1} KiB per endpoint over {} rank(s))",
                most as f64 / (1 << 20) as f64,
                peaks.iter().sum::<u64>() as f64 / 1024.0 / sim.info.endpoints as f64,
                peaks.len()
            );
        }
        println!("results: {}", path.display());
    }
    Ok(exit)
}

/// Peak resident set size of this process (Linux `VmHWM`), if known.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn print_summary(results: &[RunResult]) {
    println!(
        "{:>7} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>6} {:>11} {:>8} {:>10}",
        "load",
        "offered",
        "accepted",
        "lat.mean",
        "lat.p99",
        "net.mean",
        "hops",
        "jain",
        "status",
        "wall s",
        "Mhops/s"
    );
    for r in results {
        let s = &r.summary;
        println!(
            "{:>7.3} {:>9.4} {:>9.4} {:>9.1} {:>9.0} {:>8.1} {:>8.3} {:>6.3} {:>11} {:>8.2} {:>10.2}",
            r.load,
            s.offered_load,
            s.accepted_load,
            s.latency_mean,
            s.latency_p99,
            s.network_latency_mean,
            s.hops_mean,
            s.jain_accepted,
            r.status.as_str(),
            r.wall_seconds,
            r.packet_hops as f64 / r.wall_seconds.max(1e-9) / 1e6
        );
    }
}

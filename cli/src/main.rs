//! `xnet`: command-line front end of the xnet interconnection-network simulator.
//!
//! This is the only crate that reads files, parses arguments and writes output; the
//! libraries below it (engine, models, partitioner) do neither.

mod output;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use models::config::{Config, PATTERNS, ROUTINGS, TOPOLOGIES};
use models::sim::{RunResult, Simulation, Status};
use models::topology::metrics::summarize;
use output::{ResultFile, RunMeta};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

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
    },
    /// List the known topologies, routings and traffic patterns.
    List,
}

fn main() {
    let cli = Cli::parse();
    match run_cli(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(1);
        }
    }
}

fn run_cli(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run { config, common } => {
            let (text, name) = match &config {
                Some(path) => (read(path)?, stem(path)),
                None => (DEFAULT_CONFIG.to_string(), "default".to_string()),
            };
            let cfg = Config::parse(&text, &common.set)?;
            let load = cfg.traffic.load;
            simulate(cfg, &name, &[load], &common)
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
            simulate(cfg, &stem(&config), &loads, &common)
        }
        Command::Topo { config, set } => {
            let cfg = Config::parse(&read(&config)?, &set)?;
            topo(&cfg)?;
            Ok(0)
        }
        Command::List => {
            for (title, list) in
                [("topologies", TOPOLOGIES), ("routings", ROUTINGS), ("traffic patterns", PATTERNS)]
            {
                println!("{title}:");
                for (name, doc) in list {
                    println!("  {name:<20} {doc}");
                }
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

fn topo(cfg: &Config) -> Result<()> {
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

fn simulate(cfg: Config, name: &str, loads: &[f64], common: &Common) -> Result<i32> {
    let threads =
        common.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    if threads == 0 {
        bail!("--threads must be at least 1");
    }
    // Table computations (rayon) use the same number of threads.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads as usize).build_global();
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let flag = interrupted.clone();
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    }
    let quiet = common.quiet;
    let sim = Simulation::build(cfg)?;
    let plan = sim.plan(threads.min(sim.net.num_switches() as u32))?;
    let path = common.output.clone().unwrap_or_else(|| PathBuf::from(format!("xnet-{name}.h5")));
    let command: Vec<String> = std::env::args().collect();
    let mut file =
        ResultFile::create(&path, &sim, &RunMeta { command: &command.join(" "), threads: plan.parts })?;
    file.write_partition(&plan)?;
    if !quiet {
        eprintln!(
            "{}: {} switches, {} endpoints, routing {}, {} partition(s), lookahead {}",
            sim.net.name,
            sim.net.num_switches(),
            sim.net.num_endpoints(),
            sim.routing().name(),
            plan.parts,
            plan.lookahead.map_or("-".into(), |l| l.to_string())
        );
    }
    let started = Instant::now();
    let mut results: Vec<RunResult> = Vec::new();
    let mut exit = 0;
    for (i, &load) in loads.iter().enumerate() {
        let mut point = file.point(i, load)?;
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
            &plan.assignment,
            &mut |s| {
                bar.set_position(s.time);
                if write_error.is_none() {
                    write_error = point.append(s).err();
                }
            },
            Some(&interrupted),
        );
        bar.finish_and_clear();
        if let Some(e) = write_error {
            file.set_status("failed", &format!("writing the time series: {e:#}"))?;
            return Err(e);
        }
        let r = match outcome {
            Ok(r) => r,
            Err(e) => {
                let message = format!("{e}");
                file.set_status("failed", &message)?;
                bail!("run failed at load {load}: {message} (partial results kept in {})", path.display());
            }
        };
        point.finish(&sim, &r)?;
        file.add_summary(i, &r)?;
        let status = r.status;
        results.push(r);
        match status {
            Status::Completed => {}
            Status::Deadlock => {
                eprintln!(
                    "load {load}: deadlock detected (no packet moved for {} cycles); see blocked_channels",
                    sim.config.simulation.watchdog
                );
                exit = 3;
            }
            Status::Interrupted => {
                exit = 130;
                break;
            }
        }
    }
    let final_status = match exit {
        0 => "completed",
        3 => "deadlock",
        _ => "interrupted",
    };
    let peak = peak_rss_bytes();
    file.set_resources(started.elapsed().as_secs_f64(), peak)?;
    file.set_status(final_status, "")?;
    if !quiet {
        print_summary(&results);
        if let Some(bytes) = peak {
            println!(
                "peak memory {:.1} MiB ({:.1} KiB per endpoint)",
                bytes as f64 / (1 << 20) as f64,
                bytes as f64 / 1024.0 / sim.net.num_endpoints() as f64
            );
        }
        println!("results: {}", path.display());
    }
    Ok(exit)
}

/// Peak resident set size of this process (Linux `VmHWM`), if known.
fn peak_rss_bytes() -> Option<u64> {
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

//! `xnet topo`, `xnet partition` and `xnet workload export`: what a configuration's network
//! is (sizes, radix, distances; `--export` writes it as a fabric file), how it would be
//! split over ranks and threads (balance, cut links, lookahead; `--csv` writes one row per
//! rank) and its jobs as GOAL schedules, without simulating; and the terminal's width,
//! which `xnet list` wraps its lines to.

use crate::load::Input;
use crate::output::write_whole;
use crate::placement::fits_here;
use anyhow::{bail, Context, Result};
use models::config::Config;
use models::memory;
use models::schedule::write_goal;
use models::sim::partition;
use models::topology::metrics::summarize;
use models::workload::{job_chakra, job_ops, AsGoal};
use std::path::Path;
use std::time::Instant;

pub(crate) fn topo(
    cfg: &Config,
    no_memory_check: bool,
    export: Option<&Path>,
    inputs: &[Input],
) -> Result<()> {
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
    if s.parallel_links > 0 {
        println!("parallel links  {} (beside another between the same two switches)", s.parallel_links);
    }
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
    if !net.uniform_speed() {
        let speeds: Vec<String> =
            net.link_classes.iter().map(|c| format!("{}={}", c.name, c.speed)).collect();
        println!("link speeds     {} (phits a cycle)", speeds.join(", "));
    }
    println!(
        "computed in     {:.3} s build + {:.3} s distances ({} threads)",
        built,
        t0.elapsed().as_secs_f64() - built,
        rayon::current_num_threads()
    );
    if let Some(path) = export {
        let ibnet = path.extension().is_some_and(|e| e == "net");
        let text = fabric_text(&net, ibnet)?;
        write_text(path, "--export", inputs, &text)?;
        println!(
            "written to      {} ({})",
            path.display(),
            if ibnet { "InfiniBand .net" } else { "edge list" }
        );
    }
    Ok(())
}

/// The network as a fabric file (see `Command::Topo`'s `--export`): `.net` as
/// [`models::topology::ib::IbView`] names it, or an edge list of switch ids.
fn fabric_text(net: &models::topology::Network, ibnet: bool) -> Result<String> {
    use models::topology::PortTarget;
    use std::fmt::Write as _;
    if ibnet {
        return Ok(models::topology::ib::IbView::of(net).net_text(net));
    }
    if net.terminals.iter().any(|&t| t != net.terminals[0]) {
        bail!(
            "--export: an edge list gives every switch the same endpoints, and this network's differ; \
             write a .net file"
        );
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {}: one link per line (switch ids); {} endpoints per switch",
        net.name, net.terminals[0]
    );
    for s in 0..net.num_switches() as u32 {
        for (p, port) in net.ports(s).iter().enumerate() {
            if let PortTarget::Switch { switch, port: back } = port.target {
                // Each link once: from its lower end (by switch, then port).
                if (s, p as u16) < (switch, back) {
                    let _ = writeln!(out, "{s} {switch}");
                }
            }
        }
    }
    Ok(out)
}

pub(crate) fn describe_partition(
    cfg: Config,
    ranks: u32,
    threads: u32,
    method: partitioner::Method,
    csv: Option<&Path>,
    no_memory_check: bool,
    inputs: &[Input],
) -> Result<()> {
    if ranks == 0 {
        bail!("--ranks {ranks}: must be at least 1");
    }
    crate::cluster::check_threads(threads)?;
    let switches = cfg.network_size()?.switches;
    if u64::from(ranks) > switches {
        bail!("--ranks {ranks} for {switches} switches: use at most one rank per switch");
    }
    let parts = u64::from(ranks) * u64::from(threads);
    if parts > switches {
        bail!(
            "--ranks {ranks} x --threads {threads} = {parts} partitions for {switches} switches: \
             every partition needs at least one switch"
        );
    }
    let parts = parts as u32;
    let estimate = memory::estimate(&cfg, ranks, threads)?;
    println!("memory           {} (estimate)", estimate.describe());
    println!("                 {}", estimate.describe_saturation());
    fits_here(&estimate, &["program", "network", "partitioning"], "to partition it", no_memory_check)?;
    let net = cfg.build_network()?;
    let t0 = Instant::now();
    let plan = partition::plan(&cfg, &net, parts, method)?;
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
        write_rank_csv(path, inputs, &net, &graph, &plan.assignment, threads, ranks)?;
        println!("per rank         {}", path.display());
    }
    Ok(())
}

/// One row per rank: what the scaling model needs to know of the partition.
#[allow(clippy::too_many_arguments)]
fn write_rank_csv(
    path: &Path,
    inputs: &[Input],
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
    write_text(path, "--csv", inputs, &text)
}

/// Writes `text` to `path` whole ([`write_whole`]), saying when it replaced a file.
fn write_text(path: &Path, option: &str, inputs: &[Input], text: &str) -> Result<()> {
    if write_whole(path, option, inputs, |out| out.write_all(text.as_bytes()))? {
        eprintln!("note: replaced the earlier {}", path.display());
    }
    Ok(())
}

/// The width of the terminal on stdout (at least 60 columns), if stdout is one.
pub fn terminal_width() -> Option<usize> {
    // SAFETY: winsize is plain integers, valid when zeroed; TIOCGWINSZ only fills the
    // struct it is given, and fails on a non-terminal.
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) } == 0;
    (ok && size.ws_col > 0).then(|| (size.ws_col as usize).max(60))
}

/// The jobs `--job` names among `names` (by name or index), or all of them.
fn chosen_jobs(names: &[&str], job: Option<&str>) -> Result<Vec<usize>> {
    Ok(match job {
        None => (0..names.len()).collect(),
        Some(want) => match names.iter().position(|n| *n == want).or_else(|| want.parse().ok()) {
            Some(j) if j < names.len() => vec![j],
            _ => bail!("--job {want}: no such job; the jobs are {}", names.join(", ")),
        },
    })
}

/// `xnet workload export --format chakra`: the training jobs of `cfg` (or only `job`) as
/// Chakra traces in the directory `output`: `NAME.R.et` per rank and `NAME.groups.json`,
/// ASTRA-sim's communicator-group file.
pub(crate) fn export_chakra(cfg: &Config, job: Option<&str>, output: &Path, inputs: &[Input]) -> Result<()> {
    let Some(section) = &cfg.workload else { bail!("the configuration has no [workload] to export") };
    let names: Vec<&str> = section.jobs.iter().map(|j| j.name.as_str()).collect();
    let chosen = chosen_jobs(&names, job)?;
    std::fs::create_dir_all(output)
        .with_context(|| format!("cannot create the directory {}", output.display()))?;
    for j in chosen {
        let Some(traces) = job_chakra(section, j, cfg.simulation.seed)? else {
            bail!(
                "job `{}` ({}): only training jobs are exported as Chakra traces (their collectives \
                 whole); export it as GOAL, `--format goal`",
                names[j],
                section.jobs[j].kind.entry().name
            );
        };
        for (r, bytes) in traces.ranks.iter().enumerate() {
            let path = output.join(format!("{}.{r}.et", names[j]));
            write_whole(&path, "-o", inputs, |out| out.write_all(bytes))?;
        }
        let groups = output.join(format!("{}.groups.json", names[j]));
        write_whole(&groups, "-o", inputs, |out| out.write_all(traces.groups_json().as_bytes()))?;
        let bytes: usize = traces.ranks.iter().map(Vec::len).sum();
        println!(
            "{}: {} ranks, {} process groups, {bytes} bytes -> {}/{}.R.et, {}",
            names[j],
            traces.ranks.len(),
            traces.groups.len(),
            output.display(),
            names[j],
            groups.display()
        );
    }
    Ok(())
}

/// `xnet workload export`: the jobs of `cfg` (or only `job`, by name or index) as GOAL, to
/// the file `output` (one job) or as `NAME.goal` in the directory `output` (several).
pub(crate) fn export_workload(
    cfg: &Config,
    job: Option<&str>,
    output: &Path,
    inputs: &[Input],
) -> Result<()> {
    let Some(section) = &cfg.workload else { bail!("the configuration has no [workload] to export") };
    let names: Vec<&str> = section.jobs.iter().map(|j| j.name.as_str()).collect();
    let chosen = chosen_jobs(&names, job)?;
    let one = chosen.len() == 1;
    if !one {
        std::fs::create_dir_all(output)
            .with_context(|| format!("cannot create the directory {}", output.display()))?;
    }
    for j in chosen {
        let ops = job_ops(section, j, cfg.simulation.seed)?;
        let goal = AsGoal::new(&ops, section.ps_per_cycle);
        let path = if one { output.to_path_buf() } else { output.join(format!("{}.goal", names[j])) };
        if write_whole(&path, "-o", inputs, |out| write_goal(&goal, out))? {
            eprintln!("note: replaced the earlier {}", path.display());
        }
        let ranks = ops.graph.num_ranks();
        let count: u64 = (0..ranks).map(|r| u64::from(ops.graph.ops_in_rank(r))).sum();
        println!("{}: {ranks} ranks, {count} ops -> {}", names[j], path.display());
        let inexact = goal.inexact();
        if inexact > 0 {
            eprintln!(
                "warning: {inexact} computations of job `{}` are not a whole number of nanoseconds at \
                 workload.ns_per_cycle = {} ns: written rounded down, they last one cycle less when read back",
                names[j],
                section.ps_per_cycle as f64 / 1000.0
            );
        }
    }
    Ok(())
}

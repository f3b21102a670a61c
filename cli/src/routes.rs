//! `xnet routes CONFIG`: verify and analyse a configuration's routes without simulating
//! (see docs/routes.md): prints a table and writes an HDF5 file.

use crate::load::Input;
use crate::output::{attr, attr_str, table, write_whole, OutputClaim};
use anyhow::{bail, Context, Result};
use hdf5::{Group, H5Type};
use models::analysis::{path_tables, try_analyse, Options, RoutesReport};
use models::config::Config;
use models::router::FlowControl;
use models::routing::tables::{write_lfts, write_sls};
use models::sim::Simulation;
use models::topology::ib::IbView;
use std::path::Path;

/// Writes the routes of `sim` as InfiniBand tables into `dir` (see `--dump-tables`).
fn write_tables(sim: &Simulation, dir: &Path, inputs: &[Input]) -> Result<()> {
    let cfg = &sim.config;
    let tables = path_tables(&sim.net, &sim.routes(), cfg.router.vcs, cfg.simulation.seed)
        .context("--dump-tables: these routes cannot be written as forwarding tables")?;
    if tables.max_sl() > 15 {
        anyhow::bail!(
            "--dump-tables: these routes use {} VCs and InfiniBand has 16 SLs; lower router.vcs to at most 16 \
             (layered routings spread their layers over every VC)",
            tables.max_sl() as u32 + 1
        );
    }
    let view = IbView::of(&sim.net);
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, text) in [
        ("opensm-lfts.dump", write_lfts(&sim.net, &view, &tables)),
        ("xnet-sls.dump", write_sls(&sim.net, &view, &tables)),
    ] {
        let path = dir.join(name);
        if write_whole(&path, "--dump-tables", inputs, |out| out.write_all(text.as_bytes()))? {
            eprintln!("note: replaced the earlier {}", path.display());
        }
    }
    println!(
        "tables written to {} (opensm-lfts.dump, xnet-sls.dump: {} columns, SLs 0 to {})",
        dir.display(),
        tables.columns(),
        tables.max_sl()
    );
    Ok(())
}

/// A link weight as printed: a whole number of paths as an integer, a share of paths among
/// a switch's endpoints (tables per endpoint) to two decimals.
fn weight(w: f64) -> String {
    if w.fract() == 0.0 {
        format!("{w:.0}")
    } else {
        format!("{w:.2}")
    }
}

/// One row of `/link_weights`.
#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct LinkWeightRow {
    switch: u32,
    port: u32,
    weight: f64,
}

/// One row of `/cycle`.
#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct ChannelRow {
    switch: u32,
    port: u32,
    vc: u32,
    escape: u32,
}

/// Analysis options: the destinations checked, and the memory the CDG may take (what the
/// machine has available, if known).
fn options(destinations: Option<usize>) -> Options {
    Options { destinations, memory_limit: available_memory(), exhaustive: false }
}

/// `MemAvailable` of `/proc/meminfo` in bytes.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The report's "VCs the routing needs" beside "VCs used": the fewest VCs the routing's
/// own assignment needs, and why the routes may use more.
fn needs(required: u8, r: &RoutesReport) -> String {
    if u32::from(required) >= r.vcs_used {
        return required.to_string();
    }
    if r.vc_policy == models::routing::VcPolicy::Routing {
        format!(
            "{required} at least (router.vcs may go as low; given {}, it spreads its routes over {})",
            r.vcs, r.vcs_used
        )
    } else {
        format!(
            "{required} at least for its own VCs (the VC policy `{}` sets the VCs used)",
            r.vc_policy.name()
        )
    }
}

/// Analyses `cfg` (only `destinations` evenly spaced destinations if given), prints the
/// report with the routing build time and peak memory, and writes it to `output`.
pub(crate) fn routes(
    cfg: Config,
    output: &mut OutputClaim,
    destinations: Option<usize>,
    dump_tables: Option<&Path>,
    inputs: &[Input],
) -> Result<RoutesReport> {
    let sim = Simulation::build(cfg)?;
    if let Some(dir) = dump_tables {
        write_tables(&sim, dir, inputs)?;
    }
    let r = try_analyse(&sim, options(destinations))?;
    print_report(&r, sim.config.router.flow_control);
    let peak = crate::placement::peak_rss_bytes();
    println!("  {:<28} {}", "VCs the routing needs", needs(sim.routing().vcs_required(), &r));
    let summary = sim.routing().build_summary();
    if let Some(text) = &summary {
        println!("  {:<28} {text}", "routing build");
    }
    println!("  {:<28} {:.3} s", "routing tables built in", sim.routing_build_seconds);
    println!("  {:<28} {}", "threads", rayon::current_num_threads());
    if let Some(p) = peak {
        println!("  {:<28} {:.1} MiB", "peak memory (process)", p as f64 / (1 << 20) as f64);
    }
    let file = output.create()?;
    let output = output.path();
    write(&r, &file).with_context(|| format!("writing {}", output.display()))?;
    attr(&file, "routing_build_seconds", sim.routing_build_seconds)?;
    attr(&file, "vcs_required", sim.routing().vcs_required() as u32)?;
    attr_str(&file, "routing_build", summary.as_deref().unwrap_or(""))?;
    attr(&file, "threads", rayon::current_num_threads() as u32)?;
    attr(&file, "peak_rss_bytes", peak.unwrap_or(0))?;
    file.flush()?;
    println!("written to {}", output.display());
    Ok(r)
}

/// One entry of `--compare`: its report, or why this configuration cannot have it (the
/// routing does not fit the VCs, or not the topology).
pub(crate) type Compared = std::result::Result<RoutesReport, String>;

/// `algorithm` and `vc_policy` of a `--compare` entry (`algorithm` or
/// `algorithm:vc_policy`); an unknown name is an error before anything is built.
fn compare_entry(entry: &str) -> Result<(&str, Option<&str>)> {
    let (algorithm, policy) = match entry.split_once(':') {
        Some((a, p)) => (a, Some(p)),
        None => (entry, None),
    };
    let routings = models::routing::ROUTINGS.iter().map(|r| r.name);
    if !models::routing::ROUTINGS.iter().any(|r| r.name == algorithm) {
        bail!("--compare {entry}: {}", models::registry::unknown("routing.algorithm", algorithm, routings));
    }
    if let Some(p) = policy {
        let policies = models::routing::VC_POLICIES;
        if !policies.iter().any(|c| c.name == p) {
            bail!(
                "--compare {entry}: {}",
                models::registry::unknown("routing.vc_policy", p, policies.iter().map(|c| c.name))
            );
        }
    }
    Ok((algorithm, policy))
}

/// Analyses the configuration once per entry of `routings` (`algorithm` or
/// `algorithm:vc_policy`, applied over `text` and `overrides`), prints them side by side
/// and writes one group per routing (`/routings/NNN`) to `output`. An entry this
/// configuration cannot build (too few VCs, another topology) gets its row with the reason,
/// and the others go on; an interrupted build stops them all.
pub(crate) fn compare(
    text: &str,
    overrides: &[String],
    routings: &[String],
    output: &mut OutputClaim,
) -> Result<Vec<Compared>> {
    let entries = routings.iter().map(|e| compare_entry(e)).collect::<Result<Vec<_>>>()?;
    let mut reports = Vec::new();
    for (entry, (algorithm, policy)) in routings.iter().zip(entries) {
        let mut set = overrides.to_vec();
        set.push(format!("routing.algorithm={algorithm}"));
        if let Some(p) = policy {
            set.push(format!("routing.vc_policy={p}"));
        }
        let report = crate::load::parse_config(text, &set)
            .and_then(|cfg| Ok(Simulation::build(cfg)?))
            .and_then(|sim| Ok(try_analyse(&sim, options(None))?));
        match report {
            Ok(r) => reports.push(Ok(r)),
            Err(e) if models::cancel::interrupted() => return Err(e),
            Err(e) => reports.push(Err(format!("{e:#}"))),
        }
        if models::cancel::interrupted() {
            bail!("--compare {entry}: interrupted");
        }
    }
    if reports.iter().all(|r| r.is_err()) {
        let why: Vec<String> = routings
            .iter()
            .zip(&reports)
            .map(|(n, r)| format!("{n}: {}", r.as_ref().err().unwrap()))
            .collect();
        bail!("--compare: no routing could be built on this configuration:\n  {}", why.join("\n  "));
    }
    print_side_by_side(routings, &reports);
    let file = output.create()?;
    let output = output.path();
    attr_str(&file, "routings", &routings.join(","))?;
    let group = file.create_group("routings")?;
    for (i, (name, r)) in routings.iter().zip(&reports).enumerate() {
        let g = group.create_group(&format!("{i:03}"))?;
        match r {
            Ok(r) => write(r, &g).with_context(|| format!("writing {}", output.display()))?,
            Err(why) => {
                attr_str(&g, "routing", name)?;
                attr_str(&g, "error", why)?;
            }
        }
    }
    file.flush()?;
    println!("written to {}", output.display());
    Ok(reports)
}

type Column = dyn Fn(&RoutesReport) -> String;

/// The side-by-side table; an entry without a report shows `-` in every row, and its
/// reason below the table.
fn print_side_by_side(names: &[String], reports: &[Compared]) {
    let width = names.iter().map(String::len).max().unwrap_or(8).max(10) + 2;
    print!("{:<28}", "");
    for n in names {
        print!("{n:>width$}");
    }
    println!();
    let rows: [(&str, &Column); 10] = [
        ("acyclic (deadlock-free)", &|r| if r.acyclic { "yes".into() } else { "NO".into() }),
        ("unreachable pairs", &|r| r.unreachable_pairs.to_string()),
        ("average routing distance", &|r| format!("{:.4}", r.average_routing_distance)),
        ("link weight avg", &|r| format!("{:.2}", r.link_weight_avg)),
        ("link weight std", &|r| format!("{:.2}", r.link_weight_std)),
        ("link weight max", &|r| weight(r.link_weight_max)),
        ("spread link weight std", &|r| format!("{:.2}", r.spread_link_weight_std)),
        ("sigma(4, R)", &|r| format!("{:.3}", r.sigma)),
        ("longest path (hops)", &|r| r.longest_path.to_string()),
        ("VCs used", &|r| r.vcs_used.to_string()),
    ];
    print!("  {:<26}", "built");
    for r in reports {
        print!("{:>width$}", if r.is_ok() { "yes" } else { "NO" });
    }
    println!();
    for (label, f) in rows {
        print!("  {label:<26}");
        for r in reports {
            print!("{:>width$}", r.as_ref().map_or("-".to_string(), f));
        }
        println!();
    }
    for (name, r) in names.iter().zip(reports) {
        if let Err(why) = r {
            println!("  {name} not built: {why}");
        }
    }
}

/// The deadlock line's label under `flow`: a cycle of buffer dependencies deadlocks
/// credits and PFC alike (PFC's pauses close it); without flow control packets are dropped
/// instead.
fn deadlock_label(flow: FlowControl) -> &'static str {
    match flow {
        FlowControl::Credits => "acyclic (deadlock-free)",
        FlowControl::Pfc => "acyclic (no PFC deadlock)",
        FlowControl::None => "acyclic (lossy: drops, no deadlock)",
    }
}

fn print_report(r: &RoutesReport, flow: FlowControl) {
    let row = |k: &str, v: String| println!("  {k:<28} {v}");
    println!("routes of {} with {} (VC policy {:?}, {} VCs)", r.network, r.routing, r.vc_policy, r.vcs);
    row("switches (sources/dests)", r.switches.to_string());
    if r.destinations_checked < r.switches {
        row(
            "destinations checked",
            format!("{} (sampled: acyclic covers these only)", r.destinations_checked),
        );
    }
    row("directed links", r.links.to_string());
    row("routing states explored", r.states.to_string());
    row("CDG channels / dependencies", format!("{} / {}", r.channels, r.dependencies));
    if r.escape_vcs > 0 {
        row("escape VCs (SurePath)", format!("{} of {}", r.escape_vcs, r.vcs));
        row("whole CDG acyclic", if r.full_cdg_acyclic { "yes".into() } else { "no (allowed)".into() });
        row("escape CDG acyclic (Duato)", if r.cycle.is_empty() { "yes".into() } else { "NO".into() });
        row("dependencies out of escape", r.escape_back_dependencies.to_string());
    }
    row(deadlock_label(flow), if r.acyclic { "yes".into() } else { "NO".into() });
    if !r.cycle.is_empty() {
        let cycle: Vec<String> =
            r.cycle.iter().map(|c| format!("(s{} p{} vc{})", c.switch, c.port, c.vc)).collect();
        row("witness cycle", format!("{} channels: {}", r.cycle.len(), cycle.join(" -> ")));
    }
    row("unreachable pairs", r.unreachable_pairs.to_string());
    for u in r.unreachable.iter().take(10) {
        println!("    {} -> {}: at switch {}: {}", u.src, u.dst, u.at, u.reason);
    }
    row("average routing distance", format!("{:.4}", r.average_routing_distance));
    row(
        "link weight avg / std / max",
        format!("{:.2} / {:.2} / {}", r.link_weight_avg, r.link_weight_std, weight(r.link_weight_max)),
    );
    let spread = format!(
        "{:.2} / {:.2} / {:.2}",
        r.spread_link_weight_avg, r.spread_link_weight_std, r.spread_link_weight_max
    );
    let partial = r.spread_destinations < r.destinations_checked;
    row(
        "  all candidates, spread",
        if partial {
            format!("{spread} ({} destinations without failing routes)", r.spread_destinations)
        } else {
            spread
        },
    );
    row("sigma(4, R) (gamma_perfect)", format!("{:.3} ({:.2})", r.sigma, r.perfect_channel_load));
    row("longest path (first path)", format!("{} ({}) hops", r.longest_path, r.longest_first_path));
    row("VCs used", format!("{} of {}", r.vcs_used, r.vcs));
    row("time", format!("{:.3} s", r.seconds));
}

/// Writes a report's attributes and tables into `file` (the file's root or a group).
fn write(r: &RoutesReport, file: &Group) -> Result<()> {
    attr_str(file, "network", &r.network)?;
    attr_str(file, "routing", &r.routing)?;
    attr_str(file, "vc_policy", &format!("{:?}", r.vc_policy))?;
    attr(file, "vcs", r.vcs as u32)?;
    attr(file, "switches", r.switches as u64)?;
    attr(file, "destinations_checked", r.destinations_checked as u64)?;
    attr(file, "links", r.links as u64)?;
    attr(file, "acyclic", r.acyclic as u8)?;
    attr(file, "escape_vcs", r.escape_vcs as u32)?;
    attr(file, "full_cdg_acyclic", r.full_cdg_acyclic as u8)?;
    attr(file, "escape_back_dependencies", r.escape_back_dependencies)?;
    attr(file, "channels", r.channels as u64)?;
    attr(file, "dependencies", r.dependencies as u64)?;
    attr(file, "states", r.states)?;
    attr(file, "unreachable_pairs", r.unreachable_pairs)?;
    attr(file, "average_routing_distance", r.average_routing_distance)?;
    attr(file, "link_weight_avg", r.link_weight_avg)?;
    attr(file, "link_weight_std", r.link_weight_std)?;
    attr(file, "link_weight_max", r.link_weight_max)?;
    attr(file, "spread_link_weight_avg", r.spread_link_weight_avg)?;
    attr(file, "spread_link_weight_std", r.spread_link_weight_std)?;
    attr(file, "spread_link_weight_max", r.spread_link_weight_max)?;
    attr(file, "spread_destinations", r.spread_destinations as u64)?;
    attr(file, "sigma", r.sigma)?;
    attr(file, "sigma_k", models::analysis::SIGMA_K)?;
    attr(file, "perfect_channel_load", r.perfect_channel_load)?;
    attr(file, "longest_path", r.longest_path)?;
    attr(file, "longest_first_path", r.longest_first_path)?;
    attr(file, "vcs_used", r.vcs_used)?;
    attr(file, "seconds", r.seconds)?;
    let root: &Group = file;
    let weights: Vec<LinkWeightRow> = r
        .link_weights
        .iter()
        .map(|l| LinkWeightRow { switch: l.switch, port: l.port as u32, weight: l.weight })
        .collect();
    table(root, "link_weights", &weights)?;
    let cycle: Vec<ChannelRow> = r
        .cycle
        .iter()
        .map(|c| ChannelRow {
            switch: c.switch,
            port: c.port as u32,
            vc: c.vc as u32,
            escape: c.escape as u32,
        })
        .collect();
    table(root, "cycle", &cycle)?;
    let lines: Vec<String> = r
        .unreachable
        .iter()
        .map(|u| format!("{} -> {}: at switch {}: {}", u.src, u.dst, u.at, u.reason))
        .collect();
    attr_str(file, "unreachable", &lines.join("\n"))?;
    Ok(())
}

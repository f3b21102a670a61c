//! The tables of the application jobs that `xnet run` and `xnet sweep` print: each job's
//! completion against the ideal network, a training step's time against its computation,
//! and each collective's time and bandwidths.

use models::sim::RunResult;

/// Prints the jobs' table of every point that ran a workload, under one head: each job's
/// completion time beside its time on an ideal network and the slowdown between them.
pub(crate) fn print_workloads(results: &[RunResult]) {
    let mut head = true;
    for r in results {
        let Some(w) = &r.workload else { continue };
        if std::mem::take(&mut head) {
            println!(
                "{:>7} {:>20} {:>18} {:>7} {:>11} {:>11} {:>9} {:>10} {:>9} {:>9}",
                "load",
                "job",
                "kind",
                "ranks",
                "completion",
                "ideal",
                "slowdown",
                "messages",
                "msg.mean",
                "msg.p99"
            );
        }
        for j in &w.jobs {
            let slowdown = j.slowdown();
            println!(
                "{:>7.3} {:>20} {:>18} {:>7} {:>11} {:>11} {:>9} {:>10} {:>9.1} {:>9.0}",
                r.summary.load,
                j.name,
                j.kind,
                j.ranks,
                j.completion_time.map_or("unfinished".to_string(), |t| t.to_string()),
                j.ideal_time.map_or("never".to_string(), |t| format!("{t:.0}")),
                if slowdown.is_nan() { "-".to_string() } else { format!("{slowdown:.4}") },
                j.messages,
                j.message_latency.mean(),
                j.message_latency.quantile(0.99)
            );
        }
    }
    print_steps(results);
    print_collectives(results);
}

/// Prints, for every job that times its collectives, each collective's mean over the
/// iterations and over the communicators that run it (one row per name and size): its
/// time, and nccl-tests' algorithm and bus bandwidths.
fn print_collectives(results: &[RunResult]) {
    let mut head = true;
    for r in results {
        let Some(w) = &r.workload else { continue };
        let ns_per_cycle = w.ps_per_cycle as f64 / 1000.0;
        for j in w.jobs.iter().filter(|j| !j.collectives.is_empty()) {
            if std::mem::take(&mut head) {
                println!(
                    "{:>7} {:>20} {:>22} {:>13} {:>7} {:>11} {:>11} {:>11}",
                    "load", "job", "collective", "bytes", "count", "time.us", "algbw.GB/s", "busbw.GB/s"
                );
            }
            // (name, bytes) -> (runs, cycles), in order of first appearance.
            let mut rows: Vec<(&str, u64, f64, u64, u64)> = Vec::new();
            for c in j.collectives.iter().filter(|c| c.end > 0) {
                let key = (c.phase.name.as_str(), c.phase.bytes);
                let row = match rows.iter().position(|r| (r.0, r.1) == key) {
                    Some(i) => &mut rows[i],
                    None => {
                        rows.push((key.0, key.1, c.phase.bus_factor, 0, 0));
                        rows.last_mut().expect("just pushed")
                    }
                };
                row.3 += 1;
                row.4 += c.cycles();
            }
            for (name, bytes, bus_factor, count, cycles) in rows {
                let ns = cycles as f64 / count as f64 * ns_per_cycle;
                let algbw = bytes as f64 / ns;
                println!(
                    "{:>7.3} {:>20} {:>22} {:>13} {:>7} {:>11.2} {:>11.2} {:>11.2}",
                    r.summary.load,
                    j.name,
                    name,
                    bytes,
                    count,
                    ns / 1000.0,
                    algbw,
                    algbw * bus_factor
                );
            }
        }
    }
}

/// Prints, for every job whose computation is known (a training step), its iterations'
/// mean time, the ranks' computation in it, and the part of it no computation covers.
fn print_steps(results: &[RunResult]) {
    let mut head = true;
    for r in results {
        let Some(w) = &r.workload else { continue };
        let ms_per_cycle = w.ps_per_cycle as f64 / 1e9;
        for j in &w.jobs {
            let steps = j.steps();
            if steps.is_empty() {
                continue;
            }
            if std::mem::take(&mut head) {
                println!(
                    "{:>7} {:>20} {:>6} {:>11} {:>11} {:>11} {:>9} {:>11} {:>11}",
                    "load",
                    "job",
                    "steps",
                    "step.ms",
                    "ideal.ms",
                    "compute.ms",
                    "compute%",
                    "busiest.ms",
                    "exposed.ms"
                );
            }
            let n = steps.len() as f64;
            let mean = |f: &dyn Fn(&models::sim::StepTime) -> f64| steps.iter().map(f).sum::<f64>() / n;
            let time = mean(&|s| s.time as f64);
            let ideal = j.ideal_time.map_or(f64::NAN, |t| t / f64::from(j.iterations.max(1)));
            println!(
                "{:>7.3} {:>20} {:>6} {:>11.3} {:>11.3} {:>11.3} {:>9.1} {:>11.3} {:>11.3}",
                r.summary.load,
                j.name,
                steps.len(),
                time * ms_per_cycle,
                ideal * ms_per_cycle,
                mean(&|s| s.compute_mean) * ms_per_cycle,
                100.0 * mean(&|s| s.compute_mean) / time,
                mean(&|s| s.compute_max as f64) * ms_per_cycle,
                mean(&|s| s.exposed as f64) * ms_per_cycle
            );
        }
    }
}

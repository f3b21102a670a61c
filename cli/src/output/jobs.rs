//! The tables of the application jobs that `xnet run` and `xnet sweep` print: each job's
//! completion against the ideal network, and each collective's time and bandwidths.

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
    print_collectives(results);
}

/// Prints, for every job that times its collectives, each collective's mean over the
/// iterations: its time, and nccl-tests' algorithm and bus bandwidths.
fn print_collectives(results: &[RunResult]) {
    let mut head = true;
    for r in results {
        let Some(w) = &r.workload else { continue };
        let ns_per_cycle = w.ps_per_cycle as f64 / 1000.0;
        for j in w.jobs.iter().filter(|j| !j.collectives.is_empty()) {
            if std::mem::take(&mut head) {
                println!(
                    "{:>7} {:>20} {:>4} {:>15} {:>13} {:>11} {:>11} {:>11}",
                    "load", "job", "op", "collective", "bytes", "time.us", "algbw.GB/s", "busbw.GB/s"
                );
            }
            let ops = j.collectives.iter().map(|c| c.index).max().unwrap_or(0) + 1;
            for op in 0..ops {
                let done: Vec<_> = j.collectives.iter().filter(|c| c.index == op && c.end > 0).collect();
                let Some(first) = done.first() else { continue };
                let count = done.len() as f64;
                let ns = done.iter().map(|c| c.cycles() as f64).sum::<f64>() / count * ns_per_cycle;
                let algbw = first.phase.bytes as f64 / ns;
                println!(
                    "{:>7.3} {:>20} {:>4} {:>15} {:>13} {:>11.2} {:>11.2} {:>11.2}",
                    r.summary.load,
                    j.name,
                    op,
                    first.phase.name,
                    first.phase.bytes,
                    ns / 1000.0,
                    algbw,
                    algbw * first.phase.bus_factor
                );
            }
        }
    }
}

//! Where a run's threads land: a warning when a host is asked for more threads than it
//! has cores. Partitions meet at a barrier every window, so one thread waiting for a core
//! holds up all the others; oversubscribed runs are several times slower, not a little.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One rank's view of its host: the host name, the cores this process may run on (its
/// affinity mask, which follows `taskset`, cgroups and the launcher's binding) and the
/// simulation threads it will run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Placement {
    /// Host name.
    pub host: String,
    /// Indices of the CPUs this process may use.
    pub cpus: Vec<u32>,
    /// Simulation threads of this rank.
    pub threads: u32,
}

impl Placement {
    /// This process, running `threads` simulation threads.
    pub fn here(threads: u32) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "this host".to_string());
        Self { host, cpus: allowed_cpus(), threads }
    }
}

/// The CPUs this process may run on; every CPU the system reports if the mask cannot be read.
fn allowed_cpus() -> Vec<u32> {
    // SAFETY: `set` is a plain bit set that sched_getaffinity fills in; CPU_ISSET reads it
    // within its fixed size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            return (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .map(|c| c as u32)
                .collect();
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n as u32).collect()
}

/// One warning per host whose ranks run more threads than the cores they may use
/// together (`ranks`: every rank's placement, in rank order).
pub fn oversubscription_warnings(ranks: &[Placement]) -> Vec<String> {
    let mut hosts: BTreeMap<&str, (Vec<u32>, u32, u32)> = BTreeMap::new();
    for p in ranks {
        let (cpus, rank_count, threads) = hosts.entry(&p.host).or_default();
        cpus.extend(&p.cpus);
        *rank_count += 1;
        *threads += p.threads;
    }
    hosts
        .into_iter()
        .filter_map(|(host, (mut cpus, rank_count, threads))| {
            cpus.sort_unstable();
            cpus.dedup();
            let cores = cpus.len().max(1) as u32;
            (threads > cores).then(|| {
                format!(
                    "{host} runs {threads} simulation threads ({rank_count} rank(s)) on {cores} core(s): \
                     threads that wait for a core hold up every window's barrier, so expect a run \
                     several times slower; use at most {cores} (fewer ranks, or -t)"
                )
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(host: &str, cpus: &[u32], threads: u32) -> Placement {
        Placement { host: host.into(), cpus: cpus.to_vec(), threads }
    }

    #[test]
    fn threads_beyond_the_cores_of_a_host_are_reported_per_host() {
        // Two ranks bound to one core each, one thread each: fine.
        assert!(oversubscription_warnings(&[at("a", &[0], 1), at("a", &[1], 1)]).is_empty());
        // Three unbound ranks on a 2-core host, and a fine second host.
        let w = oversubscription_warnings(&[
            at("a", &[0, 1], 1),
            at("a", &[0, 1], 1),
            at("a", &[0, 1], 1),
            at("b", &[0, 1, 2, 3], 4),
        ]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("a runs 3 simulation threads (3 rank(s)) on 2 core(s)"), "{w:?}");
        // One rank with more threads than cores.
        let w = oversubscription_warnings(&[at("a", &[0, 1], 8)]);
        assert!(w[0].contains("8 simulation threads (1 rank(s)) on 2 core(s)"), "{w:?}");
    }

    #[test]
    fn this_process_may_use_at_least_one_cpu() {
        let here = Placement::here(1);
        assert!(!here.cpus.is_empty());
        assert!(!here.host.is_empty());
    }
}

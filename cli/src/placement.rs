//! Where a run's threads land, and whether its memory fits: a warning when a host is asked
//! for more threads than it has cores (partitions meet at a barrier every window, so one
//! thread waiting for a core holds up all the others; oversubscribed runs are several times
//! slower, not a little), and a refusal when the memory estimate of the ranks on a host
//! exceeds what the host can give them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One rank's view of its host: the host name, the cores this process may run on (its
/// affinity mask, which follows `taskset`, cgroups and the launcher's binding), the
/// simulation threads it will run and the memory it may use.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Placement {
    /// Host name.
    pub host: String,
    /// Indices of the CPUs this process may use.
    pub cpus: Vec<u32>,
    /// Simulation threads of this rank.
    pub threads: u32,
    /// Memory this process may still allocate, and what limits it; `None` if unknown.
    pub memory: Option<Available>,
}

impl Placement {
    /// This process, running `threads` simulation threads.
    pub fn here(threads: u32) -> Self {
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "this host".to_string());
        Self { host, cpus: allowed_cpus(), threads, memory: available_memory() }
    }
}

/// Memory a process may still allocate, and the limit that decides it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Available {
    /// Bytes.
    pub bytes: u64,
    /// What limits it, e.g. `MemAvailable in /proc/meminfo`.
    pub source: String,
}

/// The least of what the kernel says is available (`MemAvailable`), the room left under
/// this process's cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`) and its
/// address-space limit (`ulimit -v`); `None` if none can be read. Tests set it with
/// `XNET_TEST_AVAILABLE_MEMORY` (bytes).
pub fn available_memory() -> Option<Available> {
    if let Some(bytes) = std::env::var("XNET_TEST_AVAILABLE_MEMORY").ok().and_then(|v| v.parse().ok()) {
        return Some(Available { bytes, source: "XNET_TEST_AVAILABLE_MEMORY".into() });
    }
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let number = |text: Option<String>| text.and_then(|t| t.trim().parse::<u64>().ok());
    let mut limits: Vec<Available> = Vec::new();
    if let Some(meminfo) = read("/proc/meminfo") {
        let kib = meminfo
            .lines()
            .find(|l| l.starts_with("MemAvailable:"))
            .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok());
        if let Some(kib) = kib {
            limits.push(Available { bytes: kib * 1024, source: "MemAvailable in /proc/meminfo".into() });
        }
    }
    // The cgroup of this process: `0::/path` (v2) or `N:memory:/path` (v1).
    if let Some(groups) = read("/proc/self/cgroup") {
        for line in groups.lines() {
            let mut fields = line.splitn(3, ':');
            let (_, controllers, path) =
                (fields.next(), fields.next().unwrap_or(""), fields.next().unwrap_or(""));
            let (limit, usage) = if controllers.is_empty() {
                (format!("/sys/fs/cgroup{path}/memory.max"), format!("/sys/fs/cgroup{path}/memory.current"))
            } else if controllers.split(',').any(|c| c == "memory") {
                (
                    format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"),
                    format!("/sys/fs/cgroup/memory{path}/memory.usage_in_bytes"),
                )
            } else {
                continue;
            };
            // `max` (v2) or a huge number (v1) means no limit.
            if let Some(limit) = number(read(&limit)).filter(|&l| l < 1 << 60) {
                let used = number(read(&usage)).unwrap_or(0);
                limits.push(Available {
                    bytes: limit.saturating_sub(used),
                    source: format!("the cgroup memory limit ({limit} bytes)"),
                });
            }
        }
    }
    let mut rlimit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rlimit) } == 0 && rlimit.rlim_cur != libc::RLIM_INFINITY
    {
        limits.push(Available {
            bytes: rlimit.rlim_cur,
            source: format!("the address-space limit (ulimit -v {} KiB)", rlimit.rlim_cur / 1024),
        });
    }
    limits.into_iter().min_by_key(|a| a.bytes)
}

/// Why the ranks cannot run, if on some host the ranks' estimate (`per_rank` bytes each)
/// exceeds the memory the least-provided of them may use; `estimate` describes the need.
pub fn memory_shortfall(ranks: &[Placement], per_rank: u64, estimate: &str) -> Option<String> {
    let mut hosts: BTreeMap<&str, (u64, Option<&Available>)> = BTreeMap::new();
    for p in ranks {
        let (count, least) = hosts.entry(&p.host).or_default();
        *count += 1;
        if let Some(m) = &p.memory {
            if least.is_none_or(|l| m.bytes < l.bytes) {
                *least = Some(m);
            }
        }
    }
    hosts.into_iter().find_map(|(host, (count, least))| {
        let least = least?;
        let needed = per_rank * count;
        (needed > least.bytes).then(|| {
            format!(
                "the configuration needs about {} on {host}: {count} rank(s) x {estimate}; only {} \
                 is available there ({}). Use a smaller network or more hosts, or run anyway with \
                 --no-memory-check",
                models::memory::human(needed),
                models::memory::human(least.bytes),
                least.source
            )
        })
    })
}

/// Refuses, unless `skip`, when the `parts` of `estimate` that a command needs to go
/// `doing` exceed the memory this process may use.
pub(crate) fn fits_here(
    estimate: &models::memory::MemoryEstimate,
    parts: &[&str],
    doing: &str,
    skip: bool,
) -> anyhow::Result<()> {
    let needed = estimate.bytes_of(parts);
    let what = format!("{} {doing}", models::memory::human(needed));
    match memory_shortfall(&[Placement::here(1)], needed, &what) {
        Some(why) if !skip => anyhow::bail!("{why}"),
        _ => Ok(()),
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

/// Peak resident set size of this process (Linux `VmHWM`), if known.
pub(crate) fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(host: &str, cpus: &[u32], threads: u32) -> Placement {
        Placement { host: host.into(), cpus: cpus.to_vec(), threads, memory: None }
    }

    #[test]
    fn memory_is_checked_per_host_against_its_least_provided_rank() {
        let with = |host: &str, gib: u64| Placement {
            memory: Some(Available { bytes: gib << 30, source: "test".into() }),
            ..at(host, &[0], 1)
        };
        // Two ranks of 3 GiB on a host where one rank may use 8 GiB and the other 7 GiB: fits.
        assert_eq!(memory_shortfall(&[with("a", 8), with("a", 7), with("b", 4)], 3 << 30, "x"), None);
        // Three ranks of 3 GiB there: 9 GiB is more than 5 GiB.
        let why = memory_shortfall(&[with("a", 8), with("a", 5), with("a", 9)], 3 << 30, "3 GiB per rank")
            .expect("too much for host a");
        assert!(
            why.starts_with("the configuration needs about 9.0 GiB on a: 3 rank(s) x 3 GiB per rank; only 5.0 GiB is available there (test)"),
            "{why}"
        );
        // Unknown memory is not refused.
        assert_eq!(memory_shortfall(&[at("a", &[0], 1)], u64::MAX / 4, "x"), None);
    }

    #[test]
    fn this_process_knows_its_available_memory() {
        let m = available_memory().expect("readable on Linux");
        assert!(m.bytes > 1 << 20 && !m.source.is_empty(), "{m:?}");
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

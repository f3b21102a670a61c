//! The ranks of this run: MPI when the binary is built with it (the default), else one.
//!
//! Started without a launcher, MPI runs as a single rank (MPI singleton start), so the
//! same binary serves `xnet run` and `mpiexec -n 4 xnet run`.

use engine::{RankComm, SingleRank};
use models::config::Config;
use serde::{Deserialize, Serialize};

/// This process's place in the run and its communicator.
pub struct Cluster {
    /// Communicator used by the engine.
    pub comm: Box<dyn RankComm>,
    #[cfg(feature = "mpi")]
    _universe: Option<mpi::environment::Universe>,
}

impl Cluster {
    /// Joins the run (initialises MPI if built with it).
    pub fn join() -> Self {
        #[cfg(feature = "mpi")]
        {
            // Only the calling thread talks to MPI: "funneled" suffices.
            if let Some((universe, _level)) = mpi::initialize_with_threading(mpi::Threading::Funneled) {
                let world = universe.world();
                let comm = Box::new(mpi_comm::MpiComm::new(world));
                return Cluster { comm, _universe: Some(universe) };
            }
            Cluster { comm: Box::new(SingleRank), _universe: None }
        }
        #[cfg(not(feature = "mpi"))]
        {
            Cluster { comm: Box::new(SingleRank) }
        }
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.comm.size()
    }
}

/// What every rank of a run must agree on before any of them creates or writes a file:
/// ranks started with different arguments (mpiexec's `:` syntax, a stale configuration on
/// one node) would otherwise wait for each other forever, fail deep in the engine or write
/// results that contradict the configuration stored with them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StartArgs {
    /// The subcommand and the options every rank acts on (`sweep --loads [0.1, 0.2]`).
    pub(crate) command: String,
    /// A hash of the final configuration text (after `--set`, with the files it names).
    pub(crate) config: Option<u64>,
    /// Each key of that configuration with its value (a hash for a long one: a file's
    /// text), so that a difference is named by its key.
    pub(crate) keys: Vec<(String, String)>,
    /// `simulation.seed`.
    pub(crate) seed: Option<u64>,
    /// Threads per rank as asked for (`-t`; 1 by default with several ranks).
    pub(crate) threads: Option<u32>,
}

impl StartArgs {
    /// The start-up arguments of `command` with `config` and `threads`.
    pub(crate) fn new(command: impl Into<String>, config: Option<&Config>, threads: Option<u32>) -> Self {
        StartArgs {
            command: command.into(),
            config: config.map(|c| fnv1a(c.text.as_bytes())),
            keys: config.map_or_else(Vec::new, |c| config_keys(&c.text)),
            seed: config.map(|c| c.simulation.seed),
            threads,
        }
    }
}

/// The longest value sent as it is; longer ones are sent as a hash and a length.
const SHORT_VALUE: usize = 60;

/// Every leaf key of the configuration `text` (`routing.algorithm`,
/// `workload.jobs[0].kind`) with its value, in order.
fn config_keys(text: &str) -> Vec<(String, String)> {
    fn walk(prefix: &str, value: &toml::Value, out: &mut Vec<(String, String)>) {
        match value {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(&key, v, out);
                }
            }
            toml::Value::Array(a) if a.iter().all(toml::Value::is_table) && !a.is_empty() => {
                for (i, v) in a.iter().enumerate() {
                    walk(&format!("{prefix}[{i}]"), v, out);
                }
            }
            v => {
                let text = v.to_string();
                let shown = if text.len() <= SHORT_VALUE {
                    text
                } else {
                    format!("{} bytes, hash {:016x}", text.len(), fnv1a(text.as_bytes()))
                };
                out.push((prefix.to_string(), shown));
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(table) = toml::from_str::<toml::Table>(text) {
        walk("", &toml::Value::Table(table), &mut out);
    }
    out
}

/// FNV-1a, 64 bits: a hash that is the same in every build (std's is not promised to be).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// "rank 3" or "ranks 0, 2".
fn rank_list(ranks: &[usize]) -> String {
    let list: Vec<String> = ranks.iter().map(|r| r.to_string()).collect();
    format!("{} {}", if ranks.len() == 1 { "rank" } else { "ranks" }, list.join(", "))
}

/// Where the ranks' values of one field differ: `what: A on ranks 0, 2; B on rank 1`.
fn differing(what: &str, values: &[String]) -> Option<String> {
    let mut groups: Vec<(&String, Vec<usize>)> = Vec::new();
    for (rank, v) in values.iter().enumerate() {
        match groups.iter_mut().find(|(g, _)| *g == v) {
            Some((_, ranks)) => ranks.push(rank),
            None => groups.push((v, vec![rank])),
        }
    }
    (groups.len() > 1).then(|| {
        let parts: Vec<String> = groups.iter().map(|(v, r)| format!("{v} on {}", rank_list(r))).collect();
        format!("{what}: {}", parts.join("; "))
    })
}

/// Compares every rank's start-up arguments (as encoded by [`StartArgs`]); the
/// description of what differs, or `None` when all agree.
fn start_differences(blobs: &[Vec<u8>]) -> Option<String> {
    let mut args: Vec<StartArgs> = Vec::with_capacity(blobs.len());
    let mut unreadable = Vec::new();
    for (rank, b) in blobs.iter().enumerate() {
        match engine::comm::decode::<StartArgs>(b) {
            Ok(a) => args.push(a),
            Err(_) => unreadable.push(rank),
        }
    }
    if !unreadable.is_empty() {
        return Some(format!(
            "{} sent start-up data rank 0 cannot read: every rank must run the same xnet build",
            rank_list(&unreadable)
        ));
    }
    let field = |f: &dyn Fn(&StartArgs) -> String| args.iter().map(f).collect::<Vec<_>>();
    let opt = |v: Option<String>| v.unwrap_or_else(|| "none".into());
    // The configuration's keys that differ, by name (the first few).
    let mut names: Vec<&String> = Vec::new();
    for a in &args {
        for (k, _) in &a.keys {
            if !names.contains(&k) {
                names.push(k);
            }
        }
    }
    let keys: Vec<String> = names
        .iter()
        .filter_map(|name| {
            let values = field(&|a| {
                a.keys
                    .iter()
                    .find(|(k, _)| k == *name)
                    .map_or_else(|| "not set".to_string(), |(_, v)| v.clone())
            });
            differing(&format!("configuration key {name}"), &values)
        })
        .collect();
    let shown = keys.len().min(5);
    let mut found: Vec<String> = keys[..shown].to_vec();
    if keys.len() > shown {
        found.push(format!("and {} more configuration keys", keys.len() - shown));
    }
    let config = if keys.is_empty() {
        differing(
            "configuration (file and --set)",
            &field(&|a| opt(a.config.map(|h| format!("text hash {h:016x}")))),
        )
    } else {
        None
    };
    found.extend(
        [
            differing("command", &field(&|a| format!("`{}`", a.command))),
            config,
            differing("threads (-t)", &field(&|a| opt(a.threads.map(|t| t.to_string())))),
        ]
        .into_iter()
        .flatten(),
    );
    if !found.iter().any(|f| f.starts_with("configuration key simulation.seed")) {
        found.extend(differing("simulation.seed", &field(&|a| opt(a.seed.map(|s| s.to_string())))));
    }
    (!found.is_empty()).then(|| found.join("\n  "))
}

impl Cluster {
    /// Checks, before anything is written, that every rank was started with the same
    /// command, configuration, seed and threads: rank 0 compares them all and every rank
    /// gets its verdict, so that all stop together (an error naming the ranks and what
    /// differs) or all go on. Free with one rank.
    pub(crate) fn agree_on_start(&mut self, mine: &StartArgs) -> anyhow::Result<()> {
        if self.size() == 1 {
            return Ok(());
        }
        let verdict = match self.comm.gather(engine::comm::encode(mine)) {
            Some(blobs) => start_differences(&blobs).unwrap_or_default(),
            None => String::new(),
        };
        let verdict = self.comm.broadcast(verdict.into_bytes());
        if verdict.is_empty() {
            return Ok(());
        }
        anyhow::bail!(
            "the ranks were started with different arguments; every rank must get the same \
             command, configuration, seed and threads:\n  {}",
            String::from_utf8_lossy(&verdict)
        )
    }
}

#[cfg(feature = "mpi")]
mod mpi_comm {
    use engine::RankComm;
    use mpi::collective::SystemOperation;
    use mpi::datatype::PartitionMut;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::*;
    use mpi::Count;

    /// Tag of the per-window messages between neighbouring ranks.
    const WINDOW_TAG: i32 = 17;

    pub(crate) struct MpiComm {
        world: SimpleCommunicator,
        rank: usize,
        size: usize,
    }

    impl MpiComm {
        pub(crate) fn new(world: SimpleCommunicator) -> Self {
            let (rank, size) = (world.rank() as usize, world.size() as usize);
            Self { world, rank, size }
        }
    }

    fn displacements(counts: &[Count]) -> Vec<Count> {
        counts
            .iter()
            .scan(0, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect()
    }

    fn split(buf: Vec<u8>, counts: &[Count]) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(counts.len());
        let mut at = 0usize;
        for &c in counts {
            out.push(buf[at..at + c as usize].to_vec());
            at += c as usize;
        }
        out
    }

    /// `v` as an `i64` in the same order among all `u64`s (the top bit flipped).
    ///
    /// Minima over the ranks travel as `i64`: MPICH 4.0.2 (Debian 12's) reduces
    /// `MPI_UINT64_T` with `MPI_MIN` as if it were signed, so the minimum of 3 and
    /// 2^64 - 1 came back as 2^64 - 1, and a rank with nothing pending (its next event
    /// time `u64::MAX`) sent every rank past the others' events: a run with an idle rank
    /// lost causality. Signed minima are right in every MPI.
    fn ordered(v: u64) -> i64 {
        (v ^ (1 << 63)) as i64
    }

    /// The `u64` that [`ordered`] mapped to `v`.
    fn unordered(v: i64) -> u64 {
        (v as u64) ^ (1 << 63)
    }

    impl RankComm for MpiComm {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }

        fn senders(&mut self, receivers: &[usize]) -> Vec<usize> {
            let mut flags = vec![0u8; self.size];
            for &r in receivers {
                flags[r] = 1;
            }
            let mut got = vec![0u8; self.size];
            self.world.all_to_all_into(&flags[..], &mut got[..]);
            (0..self.size).filter(|&r| got[r] == 1).collect()
        }

        fn exchange(&mut self, send: Vec<(usize, Vec<u8>)>, from: &[usize], min: &mut [u64]) -> Vec<Vec<u8>> {
            let world = &self.world;
            let mut received: Vec<Option<Vec<u8>>> = vec![None; from.len()];
            let local: Vec<i64> = min.iter().map(|&v| ordered(v)).collect();
            let mut reduced = vec![0i64; min.len()];
            mpi::request::scope(|scope| {
                // Point to point with the neighbours only; the reduction runs while the
                // messages travel. Every operation is nonblocking and tested with back-off
                // (engine::comm::Backoff): MPI's blocking calls poll the network without
                // pause, which holds the core a late rank sharing it would need.
                let mut sends: Vec<_> = send
                    .iter()
                    .map(|(rank, bytes)| {
                        Some(world.process_at_rank(*rank as i32).immediate_send_with_tag(
                            scope,
                            &bytes[..],
                            WINDOW_TAG,
                        ))
                    })
                    .collect();
                let mut reduce = Some(world.immediate_all_reduce_into(
                    scope,
                    &local[..],
                    &mut reduced[..],
                    SystemOperation::min(),
                ));
                let mut backoff = engine::comm::Backoff::new();
                loop {
                    if let Some(r) = reduce.take() {
                        reduce = r.test().err();
                    }
                    for (slot, &rank) in received.iter_mut().zip(from).filter(|(slot, _)| slot.is_none()) {
                        let source = world.process_at_rank(rank as i32);
                        if let Some(probed) = source.immediate_matched_probe_with_tag(WINDOW_TAG) {
                            *slot = Some(probed.matched_receive_vec::<u8>().0);
                        }
                    }
                    for request in sends.iter_mut() {
                        if let Some(r) = request.take() {
                            *request = r.test().err();
                        }
                    }
                    let done = reduce.is_none()
                        && received.iter().all(Option::is_some)
                        && sends.iter().all(Option::is_none);
                    if done {
                        break;
                    }
                    backoff.snooze();
                }
            });
            for (m, &r) in min.iter_mut().zip(&reduced) {
                *m = unordered(r);
            }
            received.into_iter().map(Option::unwrap_or_default).collect()
        }

        fn min_all(&mut self, values: &mut [u64]) {
            let local: Vec<i64> = values.iter().map(|&v| ordered(v)).collect();
            let mut reduced = vec![0i64; values.len()];
            self.world.all_reduce_into(&local[..], &mut reduced[..], SystemOperation::min());
            for (v, &r) in values.iter_mut().zip(&reduced) {
                *v = unordered(r);
            }
        }

        fn gather(&mut self, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
            let root = self.world.process_at_rank(0);
            let n = data.len() as Count;
            if self.rank == 0 {
                let mut counts = vec![0 as Count; self.size];
                root.gather_into_root(&n, &mut counts[..]);
                let displs = displacements(&counts);
                let mut buf = vec![0u8; counts.iter().map(|&c| c as usize).sum()];
                {
                    let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
                    root.gather_varcount_into_root(&data[..], &mut part);
                }
                Some(split(buf, &counts))
            } else {
                root.gather_into(&n);
                root.gather_varcount_into(&data[..]);
                None
            }
        }

        fn broadcast(&mut self, data: Vec<u8>) -> Vec<u8> {
            let root = self.world.process_at_rank(0);
            let mut n = data.len() as u64;
            root.broadcast_into(&mut n);
            let mut buf = if self.rank == 0 { data } else { vec![0u8; n as usize] };
            root.broadcast_into(&mut buf[..]);
            buf
        }
        fn abort(&self, code: i32) -> ! {
            self.world.abort(code)
        }
    }
}

/// The most threads one rank may run (`--threads`): far more than any node has cores,
/// and few enough that a mistyped value is refused before any thread is created.
pub(crate) const MAX_THREADS: u32 = 4096;

/// Checks a `--threads` value (1 to [`MAX_THREADS`]) before anything creates threads.
pub(crate) fn check_threads(threads: u32) -> anyhow::Result<()> {
    if threads == 0 || threads > MAX_THREADS {
        anyhow::bail!("--threads {threads}: allowed values are 1 to {MAX_THREADS} threads per rank");
    }
    Ok(())
}

/// Sets the number of threads of rayon's global pool (tables, verification); `--threads`
/// must be 1 to [`MAX_THREADS`].
pub(crate) fn use_threads(threads: u32) -> anyhow::Result<()> {
    check_threads(threads)?;
    // The pool can be set once; a second call is fine only if it asks for the same size.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(threads as usize).build_global();
    let running = rayon::current_num_threads();
    if running != threads as usize {
        anyhow::bail!("--threads {threads}: the thread pool had already started with {running} threads");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blobs(args: &[StartArgs]) -> Vec<Vec<u8>> {
        args.iter().map(engine::comm::encode).collect()
    }

    #[test]
    fn differences_name_the_ranks_and_the_field() {
        let a = StartArgs {
            command: "run".into(),
            config: Some(1),
            keys: Vec::new(),
            seed: Some(5),
            threads: Some(1),
        };
        assert_eq!(start_differences(&blobs(&[a.clone(), a.clone(), a.clone()])), None);
        let b = StartArgs { threads: Some(2), ..a.clone() };
        let c = StartArgs { command: "sweep".into(), seed: Some(6), ..a.clone() };
        let text = start_differences(&blobs(&[a.clone(), b, a, c])).expect("they differ");
        assert!(text.contains("command: `run` on ranks 0, 1, 2; `sweep` on rank 3"), "{text}");
        assert!(text.contains("simulation.seed: 5 on ranks 0, 1, 2; 6 on rank 3"), "{text}");
        assert!(text.contains("threads (-t): 1 on ranks 0, 2, 3; 2 on rank 1"), "{text}");
        assert!(!text.contains("configuration"), "{text}");
    }

    #[test]
    fn differing_configurations_are_named_by_their_keys() {
        let args = |text: &str| StartArgs {
            command: "run".into(),
            config: Some(fnv1a(text.as_bytes())),
            keys: config_keys(text),
            seed: Some(1),
            threads: None,
        };
        let long = "x".repeat(100);
        let a = args(&format!(
            "[routing]\nalgorithm = \"dor\"\n[[workload.jobs]]\nkind = \"goal\"\ncontents = \"{long}\"\n"
        ));
        let b = args(&format!("[routing]\nalgorithm = \"minimal\"\n[[workload.jobs]]\nkind = \"goal\"\ncontents = \"{long}y\"\n"));
        let text = start_differences(&blobs(&[a.clone(), b])).expect("they differ");
        assert!(
            text.contains("configuration key routing.algorithm: \"dor\" on rank 0; \"minimal\" on rank 1"),
            "{text}"
        );
        assert!(text.contains("configuration key workload.jobs[0].contents: 102 bytes, hash "), "{text}");
        assert!(!text.contains("text hash"), "{text}");
        assert_eq!(start_differences(&blobs(&[a.clone(), a])), None);
    }

    #[test]
    fn unreadable_start_data_names_the_rank() {
        let a =
            StartArgs { command: "run".into(), config: None, keys: Vec::new(), seed: None, threads: None };
        let mut all = blobs(&[a.clone(), a]);
        all.push(vec![0xff; 3]);
        let text = start_differences(&all).expect("refused");
        assert!(text.starts_with("rank 2 sent start-up data"), "{text}");
    }

    #[test]
    fn the_config_hash_is_fixed() {
        // FNV-1a's published test value: the hash must not change between builds.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}

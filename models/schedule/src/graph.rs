//! The operation graph: per rank its operations and the dependencies between them, stored
//! flat for scale.
//!
//! Memory: every operation is one 24-byte record plus three `u32` (its number of unmet
//! dependencies and the ends of its two lists of dependents), 36 bytes; every dependency
//! is one `u32`; every rank three `u64` offsets. Nothing is allocated per operation, so a
//! million ranks of thousands of operations take 36 bytes per operation and 4 per
//! dependency.

/// An operation's number within its rank: `0..ops_in_rank(rank)`, in the order the
/// operations were added (the GOAL writer labels operation `i` as `l<i>`).
pub type OpId = u32;

/// Whom a receive accepts a message from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    /// Only from this rank.
    Rank(u32),
    /// From any rank (MPI's `MPI_ANY_SOURCE`; `-1` in GOAL).
    Any,
}

/// Which tags a receive accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TagMatch {
    /// Only this tag.
    Tag(u32),
    /// Any tag (MPI's `MPI_ANY_TAG`; `-1` in GOAL).
    Any,
}

/// One operation of a rank.
///
/// Sizes are bytes. A [`Op::Calc`]'s `time` is in GOAL's time unit, nanoseconds: LogGOPSim
/// adds it to the host's clock (`OP_LOCOP` in `src/LogGOPSim/LogGOPSim.cpp`: the CPU is
/// busy until `time + size`), the clock its `L`, `o`, `g` parameters are in (defaults
/// 2500, 1500, 1000) and that it reports in nanoseconds (its `doc/README`: "22000ns for
/// our example"; `LogGOPSim.cpp` prints the maximum finishing time divided by 1e9 as
/// seconds). It is not converted here; the workload configuration turns it into cycles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Send `bytes` to rank `to` with `tag` on communicator `comm`.
    Send {
        /// The receiving rank.
        to: u32,
        /// The message's size in bytes.
        bytes: u64,
        /// The message's tag.
        tag: u32,
        /// The communicator (0: GOAL's only one, where communicators are folded into tags).
        comm: u32,
    },
    /// Receive `bytes` from `from` with a tag matching `tag` on communicator `comm`.
    Recv {
        /// The sender, or any.
        from: Source,
        /// The size in bytes the receive expects.
        bytes: u64,
        /// The tag, or any.
        tag: TagMatch,
        /// The communicator.
        comm: u32,
    },
    /// Compute for `time` nanoseconds (GOAL's unit; see the type's documentation).
    Calc {
        /// The duration in GOAL's unit, nanoseconds.
        time: u64,
    },
}

const SEND: u8 = 0;
const RECV: u8 = 1;
const CALC: u8 = 2;
const ANY_SOURCE: u8 = 1;
const ANY_TAG: u8 = 2;

/// The stored form of an operation: 24 bytes, no heap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    /// Bytes of a send or receive, time of a calc.
    value: u64,
    peer: u32,
    tag: u32,
    comm: u32,
    kind: u8,
    /// `ANY_SOURCE` and `ANY_TAG` bits of a receive.
    wild: u8,
    cpu: u8,
    nic: u8,
}

impl Record {
    fn new(op: Op) -> Record {
        let base = Record { value: 0, peer: 0, tag: 0, comm: 0, kind: CALC, wild: 0, cpu: 0, nic: 0 };
        match op {
            Op::Send { to, bytes, tag, comm } => {
                Record { value: bytes, peer: to, tag, comm, kind: SEND, ..base }
            }
            Op::Recv { from, bytes, tag, comm } => {
                let (peer, any_source) = match from {
                    Source::Rank(r) => (r, 0),
                    Source::Any => (0, ANY_SOURCE),
                };
                let (tag, any_tag) = match tag {
                    TagMatch::Tag(t) => (t, 0),
                    TagMatch::Any => (0, ANY_TAG),
                };
                Record { value: bytes, peer, tag, comm, kind: RECV, wild: any_source | any_tag, ..base }
            }
            Op::Calc { time } => Record { value: time, ..base },
        }
    }

    fn op(&self) -> Op {
        match self.kind {
            SEND => Op::Send { to: self.peer, bytes: self.value, tag: self.tag, comm: self.comm },
            RECV => Op::Recv {
                from: if self.wild & ANY_SOURCE != 0 { Source::Any } else { Source::Rank(self.peer) },
                bytes: self.value,
                tag: if self.wild & ANY_TAG != 0 { TagMatch::Any } else { TagMatch::Tag(self.tag) },
                comm: self.comm,
            },
            _ => Op::Calc { time: self.value },
        }
    }
}

/// The operations of every rank and their dependencies (build one with
/// [`ScheduleBuilder`] or read one with [`crate::read_goal`]).
///
/// Dependencies stay within a rank: op `b` *requires* op `a` when `b` may start only
/// after `a` ends, and *irequires* `a` when `b` may start once `a` has started (GOAL's
/// `requires` and `irequires`). Two equal schedules have the same ops in the same order
/// and the same dependencies in the same order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Schedule {
    /// `op_base[r]..op_base[r + 1]`: rank `r`'s ops in `ops` (len: ranks + 1).
    op_base: Vec<u64>,
    ops: Vec<Record>,
    /// Per op: its dependencies (requires and irequires), what is unmet at the start.
    unmet: Vec<u32>,
    /// Per op: the end of its list of start-dependents within its rank's slice of
    /// `start_edges` (the list starts where the previous op's ends, or at 0).
    start_end: Vec<u32>,
    /// Per op: the same for `end_edges`.
    end_end: Vec<u32>,
    /// `start_base[r]..start_base[r + 1]`: rank `r`'s slice of `start_edges`.
    start_base: Vec<u64>,
    end_base: Vec<u64>,
    /// The ops that irequire each op, op after op.
    start_edges: Vec<OpId>,
    /// The ops that require each op, op after op.
    end_edges: Vec<OpId>,
    /// The names a GOAL file gave its ops, where they are not `l` and the op's number.
    labels: Labels,
}

/// Ops' labels from a GOAL file: `(global op, label)`, in op order. Names for messages
/// only: two schedules that run the same are equal whatever their labels.
#[derive(Clone, Debug, Default)]
struct Labels(Vec<(u64, Box<str>)>);

impl PartialEq for Labels {
    fn eq(&self, _: &Labels) -> bool {
        true
    }
}

impl Eq for Labels {}

impl Schedule {
    /// The number of ranks.
    pub fn num_ranks(&self) -> u32 {
        (self.op_base.len().saturating_sub(1)) as u32
    }

    /// The number of operations of all ranks.
    pub fn num_ops(&self) -> u64 {
        self.ops.len() as u64
    }

    /// The number of operations of `rank`.
    ///
    /// # Panics
    /// If `rank >= num_ranks()`, as do all accessors taking a rank.
    pub fn ops_in_rank(&self, rank: u32) -> u32 {
        let r = rank as usize;
        (self.op_base[r + 1] - self.op_base[r]) as u32
    }

    /// The label a GOAL file gave op `op` of `rank`, unless it is `l` and the op's number.
    pub fn label(&self, rank: u32, op: OpId) -> Option<&str> {
        let g = self.global(rank, op) as u64;
        let labels = &self.labels.0;
        labels.binary_search_by_key(&g, |l| l.0).ok().map(|i| &*labels[i].1)
    }

    fn global(&self, rank: u32, op: OpId) -> usize {
        assert!(op < self.ops_in_rank(rank), "rank {rank} has no op {op}");
        (self.op_base[rank as usize] + u64::from(op)) as usize
    }

    /// Operation `op` of `rank`.
    pub fn op(&self, rank: u32, op: OpId) -> Op {
        self.ops[self.global(rank, op)].op()
    }

    /// The operations of `rank`, in order.
    pub fn ops(&self, rank: u32) -> impl ExactSizeIterator<Item = Op> + '_ {
        let r = rank as usize;
        self.ops[self.op_base[r] as usize..self.op_base[r + 1] as usize].iter().map(Record::op)
    }

    /// The CPU GOAL assigned to `op` (`cpu N`; 0 when not given). The executor may ignore it.
    pub fn cpu(&self, rank: u32, op: OpId) -> u8 {
        self.ops[self.global(rank, op)].cpu
    }

    /// The NIC GOAL assigned to `op` (`nic N`; 0 when not given). The executor may ignore it.
    pub fn nic(&self, rank: u32, op: OpId) -> u8 {
        self.ops[self.global(rank, op)].nic
    }

    /// The ops of `rank` that may start once `op` has started (they irequire it).
    pub fn after_start(&self, rank: u32, op: OpId) -> &[OpId] {
        let g = self.global(rank, op);
        dependents(&self.start_edges, &self.start_end, self.start_base[rank as usize], g, op)
    }

    /// The ops of `rank` that may start only after `op` has ended (they require it).
    pub fn after_end(&self, rank: u32, op: OpId) -> &[OpId] {
        let g = self.global(rank, op);
        dependents(&self.end_edges, &self.end_end, self.end_base[rank as usize], g, op)
    }

    /// The number of dependencies (`requires` and `irequires`) of `op`: what the executor
    /// counts down before it starts the op.
    pub fn unmet(&self, rank: u32, op: OpId) -> u32 {
        self.unmet[self.global(rank, op)]
    }

    /// The ops of `rank` with no dependency, in order: those that start at once.
    pub fn ready(&self, rank: u32) -> impl Iterator<Item = OpId> + '_ {
        let r = rank as usize;
        let unmet = &self.unmet[self.op_base[r] as usize..self.op_base[r + 1] as usize];
        unmet.iter().enumerate().filter(|(_, &n)| n == 0).map(|(i, _)| i as OpId)
    }

    /// The number of `requires` dependencies of `rank`.
    pub fn requires_in_rank(&self, rank: u32) -> u64 {
        self.end_base[rank as usize + 1] - self.end_base[rank as usize]
    }

    /// The number of `irequires` dependencies of `rank`.
    pub fn irequires_in_rank(&self, rank: u32) -> u64 {
        self.start_base[rank as usize + 1] - self.start_base[rank as usize]
    }

    /// The same schedule with every `calc`'s time `f(time)` (a faster processor).
    pub fn map_calc(mut self, f: impl Fn(u64) -> u64) -> Schedule {
        for r in self.ops.iter_mut().filter(|r| r.kind == CALC) {
            r.value = f(r.value);
        }
        self
    }

    /// The bytes the schedule's vectors hold (their lengths, not capacities).
    pub fn memory_bytes(&self) -> u64 {
        let ops = self.ops.len() * (std::mem::size_of::<Record>() + 3 * 4);
        let edges = (self.start_edges.len() + self.end_edges.len()) * 4;
        let ranks = (self.op_base.len() + self.start_base.len() + self.end_base.len()) * 8;
        let labels: usize = self.labels.0.iter().map(|l| 24 + l.1.len()).sum();
        (ops + edges + ranks + labels) as u64
    }
}

/// Read access to an operation graph, what runs walk: a [`Schedule`], or one iteration's
/// graph repeated ([`crate::Repeated`]) without storing every iteration.
///
/// Ops are numbered per rank `0..ops_in_rank`; the dependents of an op are handed to a
/// callback (a repeated graph computes them). A graph may be cut into iterations of
/// `ops_per_iteration` ops per rank, iteration `i` holding ops `i * n .. (i + 1) * n`: then
/// no op of an iteration can start before the last op of the previous one has ended, and
/// that last op ends only after every op of its iteration (so a run needs state for one
/// iteration's ops at a time).
pub trait Graph: Send + Sync {
    /// The number of ranks.
    fn num_ranks(&self) -> u32;
    /// The number of ops of `rank`, all iterations.
    fn ops_in_rank(&self, rank: u32) -> u32;
    /// Op `op` of `rank`.
    fn op(&self, rank: u32, op: OpId) -> Op;
    /// The number of dependencies of `op` (what a run counts down before starting it).
    fn unmet(&self, rank: u32, op: OpId) -> u32;
    /// Calls `each` with every op of `rank` that irequires `op`, in order.
    fn each_after_start(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId));
    /// Calls `each` with every op of `rank` that requires `op`, in order.
    fn each_after_end(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId));
    /// The number of iterations (1: the graph is not cut).
    fn iterations(&self) -> u32 {
        1
    }
    /// The ops of `rank` per iteration (all of them when the graph is not cut).
    fn ops_per_iteration(&self, rank: u32) -> u32 {
        self.ops_in_rank(rank)
    }
    /// The CPU GOAL assigned to `op` (0 when none).
    fn cpu(&self, _rank: u32, _op: OpId) -> u8 {
        0
    }
    /// The NIC GOAL assigned to `op` (0 when none).
    fn nic(&self, _rank: u32, _op: OpId) -> u8 {
        0
    }
    /// The name of `op` in messages: its label in a GOAL file, else `l` and its number (as
    /// GOAL files written by xnet label it).
    fn op_name(&self, _rank: u32, op: OpId) -> String {
        format!("l{op}")
    }
}

impl Graph for Schedule {
    fn num_ranks(&self) -> u32 {
        Schedule::num_ranks(self)
    }
    fn ops_in_rank(&self, rank: u32) -> u32 {
        Schedule::ops_in_rank(self, rank)
    }
    fn op(&self, rank: u32, op: OpId) -> Op {
        Schedule::op(self, rank, op)
    }
    fn unmet(&self, rank: u32, op: OpId) -> u32 {
        Schedule::unmet(self, rank, op)
    }
    fn each_after_start(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        self.after_start(rank, op).iter().for_each(|&d| each(d));
    }
    fn each_after_end(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        self.after_end(rank, op).iter().for_each(|&d| each(d));
    }
    fn cpu(&self, rank: u32, op: OpId) -> u8 {
        Schedule::cpu(self, rank, op)
    }
    fn nic(&self, rank: u32, op: OpId) -> u8 {
        Schedule::nic(self, rank, op)
    }
    fn op_name(&self, rank: u32, op: OpId) -> String {
        self.label(rank, op).map_or_else(|| format!("l{op}"), str::to_string)
    }
}

/// The slice of `edges` holding the dependents of global op `g` (local number `op`).
fn dependents<'a>(edges: &'a [OpId], ends: &[u32], rank_base: u64, g: usize, op: OpId) -> &'a [OpId] {
    let lo = if op == 0 { 0 } else { ends[g - 1] };
    let hi = ends[g];
    &edges[(rank_base + u64::from(lo)) as usize..(rank_base + u64::from(hi)) as usize]
}

/// Builds a [`Schedule`] rank after rank: [`add_rank`](Self::add_rank), then that rank's
/// operations and dependencies, then the next rank.
///
/// Misuse (an op before the first rank, a dependency naming an op the current rank does not
/// have) is a programming error and panics; readers of untrusted input check first.
#[derive(Debug, Default)]
pub struct ScheduleBuilder {
    s: Schedule,
    /// The current rank's dependencies `(from, to)` not yet in CSR form.
    pending_start: Vec<(OpId, OpId)>,
    pending_end: Vec<(OpId, OpId)>,
    /// Scratch: per op of the current rank, a count, then a position.
    scratch: Vec<u32>,
}

impl ScheduleBuilder {
    /// An empty schedule of no ranks.
    pub fn new() -> ScheduleBuilder {
        let mut b = ScheduleBuilder::default();
        b.s.op_base.push(0);
        b.s.start_base.push(0);
        b.s.end_base.push(0);
        b
    }

    /// Ends the current rank (if any) and starts the next; returns its number.
    pub fn add_rank(&mut self) -> u32 {
        if self.s.op_base.len() > 1 {
            self.finish_rank();
        }
        self.s.op_base.push(self.s.ops.len() as u64);
        self.s.start_base.push(self.s.start_edges.len() as u64);
        self.s.end_base.push(self.s.end_edges.len() as u64);
        self.s.num_ranks() - 1
    }

    /// The number of ranks added so far (the current one included).
    pub fn num_ranks(&self) -> u32 {
        self.s.num_ranks()
    }

    /// The number of ops of the current rank so far.
    pub fn ops_in_rank(&self) -> u32 {
        match self.s.op_base.len() {
            0 | 1 => 0,
            n => (self.s.op_base[n - 1] - self.s.op_base[n - 2]) as u32,
        }
    }

    /// Adds `op` to the current rank; returns its number.
    ///
    /// # Panics
    /// Before the first [`add_rank`](Self::add_rank), or past `u32::MAX` ops in a rank.
    pub fn op(&mut self, op: Op) -> OpId {
        assert!(self.s.op_base.len() > 1, "add_rank before the first op");
        let id = self.ops_in_rank();
        assert!(id < u32::MAX, "a rank holds fewer than 2^32 - 1 ops");
        self.s.ops.push(Record::new(op));
        self.s.unmet.push(0);
        self.s.start_end.push(0);
        self.s.end_end.push(0);
        *self.s.op_base.last_mut().expect("a rank is open") += 1;
        id
    }

    /// Adds a send of `bytes` to rank `to` with `tag` on communicator `comm`.
    pub fn send(&mut self, to: u32, bytes: u64, tag: u32, comm: u32) -> OpId {
        self.op(Op::Send { to, bytes, tag, comm })
    }

    /// Adds a receive of `bytes` from `from` with a tag matching `tag` on communicator `comm`.
    pub fn recv(&mut self, from: Source, bytes: u64, tag: TagMatch, comm: u32) -> OpId {
        self.op(Op::Recv { from, bytes, tag, comm })
    }

    /// Adds a computation of `time` nanoseconds (GOAL's unit).
    pub fn calc(&mut self, time: u64) -> OpId {
        self.op(Op::Calc { time })
    }

    /// Sets the CPU and NIC of op `op` of the current rank (GOAL's `cpu N`, `nic N`).
    pub fn place(&mut self, op: OpId, cpu: u8, nic: u8) {
        let g = self.current(op);
        self.s.ops[g].cpu = cpu;
        self.s.ops[g].nic = nic;
    }

    /// Names op `op` of the current rank `label` (a GOAL file's label), for messages; a
    /// label that is `l` and the op's number is the default and is not stored.
    pub fn label(&mut self, op: OpId, label: &str) {
        let g = self.current(op) as u64;
        if label.strip_prefix('l').and_then(|n| n.parse::<OpId>().ok()) != Some(op) {
            self.s.labels.0.push((g, label.into()));
        }
    }

    /// Op `b` starts only after op `a` ends (GOAL: `b requires a`).
    pub fn requires(&mut self, b: OpId, a: OpId) {
        self.current(a);
        let g = self.current(b);
        self.s.unmet[g] += 1;
        self.pending_end.push((a, b));
    }

    /// Op `b` starts only after op `a` starts (GOAL: `b irequires a`).
    pub fn irequires(&mut self, b: OpId, a: OpId) {
        self.current(a);
        let g = self.current(b);
        self.s.unmet[g] += 1;
        self.pending_start.push((a, b));
    }

    /// Ends the last rank and returns the schedule.
    pub fn build(mut self) -> Schedule {
        if self.s.op_base.len() > 1 {
            self.finish_rank();
        }
        self.s
    }

    /// The global index of op `op` of the current rank.
    fn current(&self, op: OpId) -> usize {
        assert!(op < self.ops_in_rank(), "the current rank has no op {op}");
        let base = self.s.op_base[self.s.op_base.len() - 2];
        (base + u64::from(op)) as usize
    }

    /// Puts the current rank's pending dependencies into CSR form (stable: each op's
    /// dependents in the order they were added).
    fn finish_rank(&mut self) {
        let n = self.ops_in_rank() as usize;
        let first = self.s.op_base[self.s.op_base.len() - 2] as usize;
        let start = std::mem::take(&mut self.pending_start);
        let end = std::mem::take(&mut self.pending_end);
        self.csr(&start, first, n, true);
        self.csr(&end, first, n, false);
        *self.s.start_base.last_mut().expect("a rank is open") = self.s.start_edges.len() as u64;
        *self.s.end_base.last_mut().expect("a rank is open") = self.s.end_edges.len() as u64;
        self.pending_start = start;
        self.pending_start.clear();
        self.pending_end = end;
        self.pending_end.clear();
    }

    /// Counting sort of `pairs` by their first op into the start or end edge arrays.
    fn csr(&mut self, pairs: &[(OpId, OpId)], first: usize, n: usize, start: bool) {
        self.scratch.clear();
        self.scratch.resize(n + 1, 0);
        for &(a, _) in pairs {
            self.scratch[a as usize + 1] += 1;
        }
        for i in 0..n {
            self.scratch[i + 1] += self.scratch[i];
        }
        let (edges, ends) = if start {
            (&mut self.s.start_edges, &mut self.s.start_end)
        } else {
            (&mut self.s.end_edges, &mut self.s.end_end)
        };
        ends[first..first + n].copy_from_slice(&self.scratch[1..]);
        let base = edges.len();
        edges.resize(base + pairs.len(), 0);
        for &(a, b) in pairs {
            let at = &mut self.scratch[a as usize];
            edges[base + *at as usize] = b;
            *at += 1;
        }
    }
}

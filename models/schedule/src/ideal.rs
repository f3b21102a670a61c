//! A schedule run on an ideal network (zero latency, infinite bandwidth): the baseline an
//! application's slowdown on a real network is quoted against.
//!
//! Semantics: an op starts when its dependencies are met (`requires`: the other op has
//! ended; `irequires`: it has started). A calc ends `time` nanoseconds after it starts; a
//! send ends as it starts (eager, infinite bandwidth) and its message arrives at once; a
//! receive ends when it has been posted (started) and a message has matched it
//! ([`Matcher`]: MPI's order).
//!
//! Events: a global time-ordered heap holds those of later times (calc ends), popped in
//! `(time, rank, op)` order; the events an event makes at its own time (an op released, a
//! receive matched) go to a FIFO run before the heap's next event. At the start the ready
//! ops enter the FIFO in rank order. So the order of events is a function of the schedule
//! alone and a run is deterministic, wildcards included, and a zero-time cascade costs no
//! heap operation. Memory: 9 bytes per op (unmet count, round, phase) beside the
//! schedule, 36 bytes per rank, the heap, the FIFO and the matcher's queues; no allocation
//! per op.
//!
//! A schedule that cannot complete (a receive no message matches, a dependency cycle, an
//! op waiting on such) ends with a [`Stuck`] diagnosis naming, per rank, what waits for
//! what, so the caller can tell a schedule that can never complete from a network that
//! deadlocked.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::fmt;

use crate::graph::{Graph, Op, OpId, Source, TagMatch};
use crate::matching::{Envelope, Matcher, Pattern};

/// The outcome of a complete run on the ideal network.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ideal {
    /// Per rank, when its last op ended (ns; 0 for a rank of no ops).
    pub end: Vec<u64>,
    /// Per rank, the time at least one of its calcs ran (ns; overlapping calcs count once).
    pub computing: Vec<u64>,
    /// The schedule's completion time: the latest end of any rank (ns).
    pub time: u64,
    /// The number of messages on the longest chain in which each message is sent after
    /// the previous one was received, following dependencies (a binary-tree broadcast to
    /// 32 ranks: 5).
    pub rounds: u32,
    /// Messages sent that no receive took (they do not keep the schedule from completing).
    pub unreceived: u64,
}

impl Ideal {
    /// The time rank `rank` spent not computing before its end (ns): waiting for messages
    /// or doing zero-time sends and receives.
    pub fn waiting(&self, rank: u32) -> u64 {
        self.end[rank as usize] - self.computing[rank as usize]
    }
}

/// What one op of a stuck rank waits for. Ops are named `l<op>` as the GOAL writer labels
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wait {
    /// The receive `op` has been posted, and no message matches it.
    Message {
        /// The receive.
        op: OpId,
        /// The sender it accepts.
        from: Source,
        /// The tag it accepts.
        tag: TagMatch,
        /// Its communicator.
        comm: u32,
    },
    /// `op` has not started: it requires op `on`, which has not ended.
    End {
        /// The waiting op.
        op: OpId,
        /// The lowest-numbered of its unmet `requires`.
        on: OpId,
    },
    /// `op` has not started: it irequires op `on`, which has not started.
    Start {
        /// The waiting op.
        op: OpId,
        /// The lowest-numbered of its unmet `irequires`.
        on: OpId,
    },
}

impl Wait {
    /// As [`fmt::Display`] writes it, each op named by `name` (a GOAL file's label).
    pub fn describe(&self, name: &dyn Fn(OpId) -> String) -> String {
        match *self {
            Wait::Message { op, from, tag, comm } => {
                let from = match from {
                    Source::Rank(r) => format!("rank {r}"),
                    Source::Any => "any rank".to_string(),
                };
                let tag = match tag {
                    TagMatch::Tag(t) => format!("tag {t}"),
                    TagMatch::Any => "any tag".to_string(),
                };
                format!("{} waits for a message from {from}, {tag}, comm {comm}", name(op))
            }
            Wait::End { op, on } => format!("{} waits for the end of {}", name(op), name(on)),
            Wait::Start { op, on } => format!("{} waits for the start of {}", name(op), name(on)),
        }
    }
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe(&|op| format!("l{op}")))
    }
}

/// A rank that did not finish: what each of its unfinished ops waits for, by op number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StuckRank {
    /// The rank.
    pub rank: u32,
    /// One entry per unfinished op: posted receives unmatched, ops not started.
    pub waits: Vec<Wait>,
    /// The labels a GOAL file gave the ops the waits name (where not `l` and the number).
    pub labels: Vec<(OpId, String)>,
}

impl StuckRank {
    /// Wait `w` of this rank, its ops named by their labels.
    pub fn describe(&self, w: &Wait) -> String {
        w.describe(&|op| match self.labels.iter().find(|l| l.0 == op) {
            Some((_, label)) => label.clone(),
            None => format!("l{op}"),
        })
    }
}

/// Why a schedule cannot complete on the ideal network: every rank with an unfinished op.
/// As the network is ideal, nothing here is the network's doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stuck {
    /// When the last op that could end ended (ns).
    pub time: u64,
    /// The stuck ranks, in rank order.
    pub ranks: Vec<StuckRank>,
}

impl fmt::Display for Stuck {
    /// One line per rank (the first 20 ranks, 8 waits each; the rest counted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the schedule cannot complete: {} ranks stuck at {} ns", self.ranks.len(), self.time)?;
        for r in self.ranks.iter().take(20) {
            let waits: Vec<String> = r.waits.iter().take(8).map(|w| r.describe(w)).collect();
            write!(f, "\n  rank {}: {}", r.rank, waits.join("; "))?;
            if r.waits.len() > 8 {
                write!(f, "; and {} more", r.waits.len() - 8)?;
            }
        }
        if self.ranks.len() > 20 {
            write!(f, "\n  and {} more ranks", self.ranks.len() - 20)?;
        }
        Ok(())
    }
}

impl std::error::Error for Stuck {}

const WAITING: u8 = 0;
const STARTED: u8 = 1;
const ENDED: u8 = 2;

/// An event: `(time, rank, op, phase)`, phase `STARTED` or `ENDED`; the heap pops the
/// least, so ties break by rank, then op.
type Event = Reverse<(u64, u32, OpId, u8)>;

/// The state of a run.
struct Run<'a> {
    s: &'a dyn Graph,
    /// Dependents of the op at hand.
    scratch: Vec<OpId>,
    /// `base[r]`: the global index of rank `r`'s op 0.
    base: Vec<u64>,
    unmet: Vec<u32>,
    /// Per op, the messages on the longest chain before it (its round).
    level: Vec<u32>,
    phase: Vec<u8>,
    /// Events of later times.
    heap: BinaryHeap<Event>,
    /// Events of the current time, in the order they were made: `(rank, op, phase)`.
    now: VecDeque<(u32, OpId, u8)>,
    /// Posted receives carry their op; messages their round.
    matcher: Matcher<OpId, u32>,
    end: Vec<u64>,
    computing: Vec<u64>,
    busy_since: Vec<u64>,
    calcs_running: Vec<u32>,
    rounds: u32,
    ended: u64,
}

/// Runs `schedule` on the ideal network: its [`Ideal`] times, or the [`Stuck`] diagnosis
/// when some op can never end.
///
/// # Panics
/// If a send names a rank the schedule does not have ([`crate::Schedule::validate`] reports it).
pub fn run_ideal(schedule: &dyn Graph) -> Result<Ideal, Stuck> {
    run_ideal_until(schedule, &|| false).expect("never asked to stop")
}

/// How often (in events) [`run_ideal_until`] asks whether to stop.
const STOP_CHECK_EVERY: u64 = 1 << 16;

/// [`run_ideal`], giving up (`None`) once `stop` says so: it is asked every 65,536 events,
/// so that a signal ends the pass over a large schedule within moments.
///
/// # Panics
/// As [`run_ideal`].
pub fn run_ideal_until(schedule: &dyn Graph, stop: &dyn Fn() -> bool) -> Option<Result<Ideal, Stuck>> {
    let mut run = Run::new(schedule);
    let mut t = 0;
    let mut events = 0u64;
    loop {
        events += 1;
        if events.is_multiple_of(STOP_CHECK_EVERY) && stop() {
            return None;
        }
        let (rank, op, phase) = match run.now.pop_front() {
            Some(e) => e,
            None => match run.heap.pop() {
                Some(Reverse((time, rank, op, phase))) => {
                    t = time;
                    (rank, op, phase)
                }
                None => break,
            },
        };
        if phase == STARTED {
            run.start(t, rank, op);
        } else {
            run.finish(t, rank, op);
        }
    }
    if run.ended == run.base[run.base.len() - 1] {
        let time = run.end.iter().copied().max().unwrap_or(0);
        let unreceived = run.matcher.unexpected() as u64;
        Some(Ok(Ideal { end: run.end, computing: run.computing, time, rounds: run.rounds, unreceived }))
    } else {
        Some(Err(run.diagnose(t)))
    }
}

impl<'a> Run<'a> {
    fn new(s: &'a dyn Graph) -> Run<'a> {
        let n = s.num_ranks() as usize;
        let mut base = Vec::with_capacity(n + 1);
        base.push(0u64);
        let mut unmet = Vec::new();
        for r in 0..s.num_ranks() {
            base.push(base[r as usize] + u64::from(s.ops_in_rank(r)));
            unmet.extend((0..s.ops_in_rank(r)).map(|o| s.unmet(r, o)));
        }
        let mut now = VecDeque::new();
        for r in 0..s.num_ranks() {
            let first = base[r as usize] as usize;
            let ready = (0..s.ops_in_rank(r)).filter(|&o| unmet[first + o as usize] == 0);
            now.extend(ready.map(|o| (r, o, STARTED)));
        }
        let ops = unmet.len();
        Run {
            s,
            scratch: Vec::new(),
            base,
            unmet,
            level: vec![0; ops],
            phase: vec![WAITING; ops],
            heap: BinaryHeap::new(),
            now,
            matcher: Matcher::new(s.num_ranks()),
            end: vec![0; n],
            computing: vec![0; n],
            busy_since: vec![0; n],
            calcs_running: vec![0; n],
            rounds: 0,
            ended: 0,
        }
    }

    fn global(&self, rank: u32, op: OpId) -> usize {
        (self.base[rank as usize] + u64::from(op)) as usize
    }

    /// Op `op` of `rank` starts at `t`.
    fn start(&mut self, t: u64, rank: u32, op: OpId) {
        let g = self.global(rank, op);
        self.phase[g] = STARTED;
        let level = self.level[g];
        self.release_dependents(rank, op, level, false);
        match self.s.op(rank, op) {
            Op::Calc { time } => {
                let r = rank as usize;
                if self.calcs_running[r] == 0 {
                    self.busy_since[r] = t;
                }
                self.calcs_running[r] += 1;
                self.push(t, time, rank, op, ENDED);
            }
            Op::Send { to, tag, comm, .. } => {
                let round = level + 1;
                self.rounds = self.rounds.max(round);
                let env = Envelope { comm, src: rank, tag };
                if let Some((_, recv)) = self.matcher.arrive(to, env, round) {
                    let rg = self.global(to, recv);
                    self.level[rg] = self.level[rg].max(round);
                    self.now.push_back((to, recv, ENDED));
                }
                self.finish(t, rank, op);
            }
            Op::Recv { from, tag, comm, .. } => {
                if let Some((_, round)) = self.matcher.post(rank, Pattern { comm, src: from, tag }, op) {
                    self.level[g] = self.level[g].max(round);
                    self.now.push_back((rank, op, ENDED));
                }
            }
        }
    }

    /// Op `op` of `rank` ends at `t`.
    fn finish(&mut self, t: u64, rank: u32, op: OpId) {
        let g = self.global(rank, op);
        self.phase[g] = ENDED;
        self.ended += 1;
        let r = rank as usize;
        self.end[r] = self.end[r].max(t);
        if let Op::Calc { .. } = self.s.op(rank, op) {
            self.calcs_running[r] -= 1;
            if self.calcs_running[r] == 0 {
                self.computing[r] += t - self.busy_since[r];
            }
        }
        let level = self.level[g];
        self.release_dependents(rank, op, level, true);
    }

    /// Releases the ops that irequire (`end`: require) op `op` of `rank`.
    fn release_dependents(&mut self, rank: u32, op: OpId, level: u32, end: bool) {
        let mut dependents = std::mem::take(&mut self.scratch);
        dependents.clear();
        if end {
            self.s.each_after_end(rank, op, &mut |d| dependents.push(d));
        } else {
            self.s.each_after_start(rank, op, &mut |d| dependents.push(d));
        }
        for &d in &dependents {
            self.release(rank, d, level);
        }
        self.scratch = dependents;
    }

    /// Queues an event `delay` after `t`: on the FIFO if `delay` is 0, else on the heap.
    fn push(&mut self, t: u64, delay: u64, rank: u32, op: OpId, phase: u8) {
        if delay == 0 {
            self.now.push_back((rank, op, phase));
        } else {
            self.heap.push(Reverse((t + delay, rank, op, phase)));
        }
    }

    /// One dependency of op `d` of `rank` is met (now) by an op of round `level`.
    fn release(&mut self, rank: u32, d: OpId, level: u32) {
        let gd = self.global(rank, d);
        self.level[gd] = self.level[gd].max(level);
        self.unmet[gd] -= 1;
        if self.unmet[gd] == 0 {
            self.now.push_back((rank, d, STARTED));
        }
    }

    /// Every rank with an unfinished op, and what each such op waits for.
    fn diagnose(&self, time: u64) -> Stuck {
        let mut ranks = Vec::new();
        let mut blockers: Vec<(OpId, OpId, bool)> = Vec::new();
        for rank in 0..self.s.num_ranks() {
            let first = self.global(rank, 0);
            let n = self.s.ops_in_rank(rank);
            let phase = &self.phase[first..first + n as usize];
            if phase.iter().all(|&p| p == ENDED) {
                continue;
            }
            blockers.clear();
            for a in 0..n {
                let pa = phase[a as usize];
                self.s.each_after_end(rank, a, &mut |b| {
                    if pa != ENDED && phase[b as usize] == WAITING {
                        blockers.push((b, a, true));
                    }
                });
                self.s.each_after_start(rank, a, &mut |b| {
                    if pa == WAITING && phase[b as usize] == WAITING {
                        blockers.push((b, a, false));
                    }
                });
            }
            for o in 0..n {
                if phase[o as usize] == STARTED && matches!(self.s.op(rank, o), Op::Recv { .. }) {
                    blockers.push((o, o, false));
                }
            }
            blockers.sort_unstable();
            blockers.dedup_by_key(|x| x.0);
            let waits = blockers.iter().map(|&(op, on, end)| self.wait(rank, op, on, end)).collect();
            let mut labels: Vec<(OpId, String)> = blockers
                .iter()
                .flat_map(|&(op, on, _)| [op, on])
                .map(|op| (op, self.s.op_name(rank, op)))
                .filter(|(op, name)| *name != format!("l{op}"))
                .collect();
            labels.sort_unstable();
            labels.dedup();
            ranks.push(StuckRank { rank, waits, labels });
        }
        Stuck { time, ranks }
    }

    /// What op `op` of `rank` waits for: its message if it is a started receive, else the
    /// end (`end`) or start of `on`.
    fn wait(&self, rank: u32, op: OpId, on: OpId, end: bool) -> Wait {
        match self.s.op(rank, op) {
            Op::Recv { from, tag, comm, .. } if self.phase[self.global(rank, op)] == STARTED => {
                Wait::Message { op, from, tag, comm }
            }
            _ if end => Wait::End { op, on },
            _ => Wait::Start { op, on },
        }
    }
}

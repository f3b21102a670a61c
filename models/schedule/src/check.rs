//! Checks of a whole [`Schedule`]: its structure ([`Schedule::validate`]: dependency
//! cycles, peers out of range, messages to oneself) and its messages
//! ([`Schedule::unmatched`]: sends and receives that cannot pair up), so that the executor
//! can tell a schedule that can never complete from a network that deadlocked.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::graph::{Op, OpId, Schedule, Source, TagMatch};

/// A structural fault of a schedule. Ops are named by the labels the GOAL writer gives
/// them, `l<op number>`: the op's position in its rank from 0 (for a schedule read from
/// GOAL, its position among the rank's ops in the file, whatever its label there).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The dependencies of `rank` form a cycle: each op of `ops` waits for the one before
    /// it, and the first for the last; none of them can ever start.
    Cycle {
        /// The rank.
        rank: u32,
        /// The ops on the cycle, each a dependent of the one before.
        ops: Vec<OpId>,
    },
    /// A send to, or a receive from, a rank that does not exist.
    PeerOutOfRange {
        /// The rank of the op.
        rank: u32,
        /// The op.
        op: OpId,
        /// The peer it names.
        peer: u32,
        /// The schedule's number of ranks.
        num_ranks: u32,
    },
    /// A send to, or a receive from, the op's own rank.
    SelfMessage {
        /// The rank of the op.
        rank: u32,
        /// The op.
        op: OpId,
    },
}

impl Problem {
    /// As [`fmt::Display`] writes it, the ops named as `schedule` names them (a GOAL file's
    /// labels).
    pub fn describe(&self, schedule: &Schedule) -> String {
        self.text(&|rank, op| crate::Graph::op_name(schedule, rank, op))
    }

    fn text(&self, name: &dyn Fn(u32, OpId) -> String) -> String {
        match self {
            Problem::Cycle { rank, ops } => {
                let labels: Vec<String> = ops.iter().chain(ops.first()).map(|&o| name(*rank, o)).collect();
                format!(
                    "rank {rank}: dependency cycle {} (each waits for the one before)",
                    labels.join(" -> ")
                )
            }
            Problem::PeerOutOfRange { rank, op, peer, num_ranks } => {
                format!(
                    "rank {rank}: {} names rank {peer}, but the schedule has {num_ranks} ranks",
                    name(*rank, *op)
                )
            }
            Problem::SelfMessage { rank, op } => {
                format!("rank {rank}: {} sends to or receives from itself", name(*rank, *op))
            }
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text(&|_, op| format!("l{op}")))
    }
}

/// Messages that cannot pair up, found by [`Schedule::unmatched`].
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Unmatched {
    /// The counts left over, sorted by communicator, receiver, sender and tag.
    pub mismatches: Vec<Mismatch>,
    /// Whether receives with a wildcard took part: then the check is conservative (see
    /// [`Schedule::unmatched`]).
    pub conservative: bool,
}

impl Unmatched {
    /// Whether every send and receive found a partner.
    pub fn is_empty(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// Sends or receives of one kind of message left without a partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Mismatch {
    /// The communicator.
    pub comm: u32,
    /// The receiving rank.
    pub to: u32,
    /// The sender (`Any` only for receives with a wildcard).
    pub from: Source,
    /// The tag (`Any` only for receives with a wildcard).
    pub tag: TagMatch,
    /// Sends that no receive takes.
    pub sends: u64,
    /// Receives that no send satisfies: the receiving rank waits for ever.
    pub recvs: u64,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let from = match self.from {
            Source::Rank(r) => format!("rank {r}"),
            Source::Any => "any rank".to_string(),
        };
        let tag = match self.tag {
            TagMatch::Tag(t) => format!("tag {t}"),
            TagMatch::Any => "any tag".to_string(),
        };
        if self.recvs > 0 {
            write!(
                f,
                "rank {} waits for {} message(s) from {from} with {tag} on comm {} that are never sent",
                self.to, self.recvs, self.comm
            )?;
        }
        if self.sends > 0 {
            if self.recvs > 0 {
                write!(f, "; ")?;
            }
            write!(
                f,
                "{from} sends {} message(s) to rank {} with {tag} on comm {} that no receive takes",
                self.sends, self.to, self.comm
            )?;
        }
        Ok(())
    }
}

/// Sends not paired exactly, by (comm, receiver): (sender, tag, count).
type Leftover = BTreeMap<(u32, u32), Vec<(u32, u32, u64)>>;

impl Schedule {
    /// Structural faults: per rank, one dependency cycle if there is one (found by a
    /// depth-first search over both kinds of dependency), then every op naming a rank out of
    /// range or its own rank. Empty when the schedule is sound.
    pub fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut colour = Vec::new();
        let mut stack = Vec::new();
        for rank in 0..self.num_ranks() {
            if let Some(ops) = self.cycle(rank, &mut colour, &mut stack) {
                problems.push(Problem::Cycle { rank, ops });
            }
            for (op, o) in self.ops(rank).enumerate() {
                let peer = match o {
                    Op::Send { to, .. } => to,
                    Op::Recv { from: Source::Rank(from), .. } => from,
                    _ => continue,
                };
                let op = op as OpId;
                if peer >= self.num_ranks() {
                    problems.push(Problem::PeerOutOfRange { rank, op, peer, num_ranks: self.num_ranks() });
                } else if peer == rank {
                    problems.push(Problem::SelfMessage { rank, op });
                }
            }
        }
        problems
    }

    /// The `i`th dependent of `op`: its start-dependents first, then its end-dependents.
    fn successor(&self, rank: u32, op: OpId, i: usize) -> Option<OpId> {
        let start = self.after_start(rank, op);
        match i.checked_sub(start.len()) {
            None => Some(start[i]),
            Some(j) => self.after_end(rank, op).get(j).copied(),
        }
    }

    /// A dependency cycle of `rank`, if any (iterative depth-first search; `colour` and
    /// `stack` are scratch space reused over the ranks).
    fn cycle(&self, rank: u32, colour: &mut Vec<u8>, stack: &mut Vec<(OpId, usize)>) -> Option<Vec<OpId>> {
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        colour.clear();
        colour.resize(self.ops_in_rank(rank) as usize, NEW);
        for root in 0..self.ops_in_rank(rank) {
            if colour[root as usize] != NEW {
                continue;
            }
            stack.clear();
            stack.push((root, 0));
            colour[root as usize] = OPEN;
            while let Some(&mut (op, ref mut next)) = stack.last_mut() {
                match self.successor(rank, op, *next) {
                    Some(b) => {
                        *next += 1;
                        match colour[b as usize] {
                            NEW => {
                                colour[b as usize] = OPEN;
                                stack.push((b, 0));
                            }
                            OPEN => {
                                let at = stack
                                    .iter()
                                    .position(|&(o, _)| o == b)
                                    .expect("an open op is on the stack");
                                return Some(stack[at..].iter().map(|&(o, _)| o).collect());
                            }
                            _ => {}
                        }
                    }
                    None => {
                        colour[op as usize] = DONE;
                        stack.pop();
                    }
                }
            }
        }
        None
    }

    /// The sends and receives that cannot pair up, ignoring timing.
    ///
    /// Without wildcards this is exact: per `(comm, sender, receiver, tag)`, MPI's
    /// non-overtaking order pairs the k-th send with the k-th receive, so the counts must be
    /// equal; what is left over is reported. With wildcards the check is conservative
    /// ([`Unmatched::conservative`] is set): receives naming sender and tag are paired
    /// first, then those with any tag, any sender, then both, each taking leftover sends
    /// greedily. Which send a wildcard receive takes depends on timing, so a schedule that
    /// passes may still strand a receive in some run, and in rare overlaps of wildcard
    /// kinds the greedy pairing may report a count that another pairing would satisfy.
    /// Sizes are not compared.
    pub fn unmatched(&self) -> Unmatched {
        type Key = (u32, u32, u32, u32); // comm, to, from, tag
        let mut sends: HashMap<Key, u64> = HashMap::new();
        let mut recvs: HashMap<Key, u64> = HashMap::new();
        let mut wild: BTreeMap<(u32, u32, Source, TagMatch), u64> = BTreeMap::new();
        for rank in 0..self.num_ranks() {
            for o in self.ops(rank) {
                match o {
                    Op::Send { to, tag, comm, .. } => *sends.entry((comm, to, rank, tag)).or_default() += 1,
                    Op::Recv { from: Source::Rank(from), tag: TagMatch::Tag(tag), comm, .. } => {
                        *recvs.entry((comm, rank, from, tag)).or_default() += 1
                    }
                    Op::Recv { from, tag, comm, .. } => {
                        *wild.entry((comm, rank, from, tag)).or_default() += 1
                    }
                    Op::Calc { .. } => {}
                }
            }
        }
        let mut mismatches = Vec::new();
        // Exact pairs; the sends left over, by (comm, receiver).
        let mut left: Leftover = BTreeMap::new();
        for (&(comm, to, from, tag), &n) in &sends {
            let r = recvs.remove(&(comm, to, from, tag)).unwrap_or(0);
            if n > r {
                left.entry((comm, to)).or_default().push((from, tag, n - r));
            } else if r > n {
                recvs.insert((comm, to, from, tag), r - n);
            }
        }
        for ((comm, to, from, tag), r) in recvs {
            let (from, tag) = (Source::Rank(from), TagMatch::Tag(tag));
            mismatches.push(Mismatch { comm, to, from, tag, sends: 0, recvs: r });
        }
        // Sorted, so that the greedy pairing below does not depend on hashing order.
        left.values_mut().for_each(|v| v.sort_unstable());
        let conservative = !wild.is_empty();
        // Wildcards, most specific kind first.
        let mut kinds: Vec<_> = wild.into_iter().collect();
        kinds.sort_by_key(|&((_, _, from, tag), _)| (from == Source::Any, tag == TagMatch::Any));
        for ((comm, to, from, tag), mut r) in kinds {
            for (f, t, n) in left.get_mut(&(comm, to)).into_iter().flatten() {
                let fits = from == Source::Any || from == Source::Rank(*f);
                if fits && (tag == TagMatch::Any || tag == TagMatch::Tag(*t)) {
                    let take = r.min(*n);
                    r -= take;
                    *n -= take;
                }
            }
            if r > 0 {
                mismatches.push(Mismatch { comm, to, from, tag, sends: 0, recvs: r });
            }
        }
        for ((comm, to), list) in left {
            for (f, t, n) in list.into_iter().filter(|&(_, _, n)| n > 0) {
                mismatches.push(Mismatch {
                    comm,
                    to,
                    from: Source::Rank(f),
                    tag: TagMatch::Tag(t),
                    sends: n,
                    recvs: 0,
                });
            }
        }
        mismatches.sort();
        Unmatched { mismatches, conservative }
    }
}

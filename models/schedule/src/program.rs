//! A traced MPI program written as a schedule, one rank at a time and one MPI call at a
//! time: the part the trace readers (DUMPI in [`schedule_of_trace`](crate::schedule_of_trace), OTF2 in the `xnet-otf2`
//! crate) share once they know each call's peers, sizes in bytes and communicators.
//!
//! - **Program order.** A rank's calls follow one another. Inside a call, the blocking
//!   sends and receives it makes (`MPI_Send`, `MPI_Recv`, both halves of `MPI_Sendrecv`)
//!   and the requests it completes (a wait, a successful test) all end before the next
//!   call starts; a non-blocking send or receive starts in order but holds nothing up until
//!   a later call completes its request.
//! - **Computation.** The time between one call's return and the next call's entry is a
//!   `calc` of that many nanoseconds times the compute scale.
//! - **Collectives** expand into messages by MPICH 4's default algorithms ([`select`],
//!   [`emit`]); their messages carry their communicator's number with bit 31 set and the
//!   collective's position on it as tag, so they never match the program's own messages.
//!   Irregular collectives ([`RankWriter::linear`], [`RankWriter::rooted`]) send every
//!   message at once (MPICH's linear algorithms).

use std::collections::{HashMap, VecDeque};

use crate::collectives::{emit, select, Collective, Comm, Kind};
use crate::graph::{OpId, Schedule, ScheduleBuilder, Source, TagMatch};

/// A communicator of the program: its index in the list [`ProgramBuilder::new`] takes.
pub type CommIndex = usize;

/// Writes a traced program's ranks, in rank order, into a schedule.
pub struct ProgramBuilder {
    b: ScheduleBuilder,
    members: Vec<Vec<u32>>,
    compute_scale: f64,
}

impl ProgramBuilder {
    /// A program whose communicators have `members` (each a list of ranks of the whole
    /// program, in communicator rank order), its computations scaled by `compute_scale`.
    pub fn new(members: Vec<Vec<u32>>, compute_scale: f64) -> ProgramBuilder {
        ProgramBuilder { b: ScheduleBuilder::new(), members, compute_scale }
    }

    /// The next rank's writer (rank 0 first).
    pub fn rank(&mut self) -> RankWriter<'_> {
        let rank = self.b.add_rank();
        RankWriter {
            b: &mut self.b,
            members: &self.members,
            compute_scale: self.compute_scale,
            rank,
            pp: None,
            last_end: None,
            requests: HashMap::new(),
            collectives: HashMap::new(),
            blocking: Vec::new(),
            completed: Vec::new(),
        }
    }

    /// The schedule.
    pub fn build(self) -> Schedule {
        self.b.build()
    }
}

/// Writes one rank's calls. Ranks given to its methods are ranks in the call's
/// communicator; a negative rank is `MPI_PROC_NULL` (the operation is skipped), except a
/// receive's source -1, any source. Errors are messages for the caller to place (file,
/// rank, offset).
pub struct RankWriter<'a> {
    b: &'a mut ScheduleBuilder,
    members: &'a [Vec<u32>],
    compute_scale: f64,
    rank: u32,
    /// The op the next call waits for (the program's position).
    pp: Option<OpId>,
    /// When the previous call returned (ns on the rank's clock).
    last_end: Option<u64>,
    /// Non-blocking operations by request id, oldest first: an MPI library may hand out
    /// one handle to several requests that completed at once (MPICH does for small
    /// sends), and tracers record that handle for each.
    requests: HashMap<i64, VecDeque<OpId>>,
    /// Per communicator, the collectives run on it so far.
    collectives: HashMap<CommIndex, u32>,
    /// The current call's blocking sends and receives.
    blocking: Vec<OpId>,
    /// The requests the current call completed.
    completed: Vec<OpId>,
}

impl RankWriter<'_> {
    /// The rank being written.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// A call entered at `start` (ns): the time since the previous call returned is
    /// computation.
    pub fn begin_call(&mut self, start: u64) {
        if let Some(end) = self.last_end {
            let gap = start.saturating_sub(end);
            let ns = (gap as f64 * self.compute_scale).round() as u64;
            if ns > 0 {
                let c = self.b.calc(ns);
                self.after(c);
                self.pp = Some(c);
            }
        }
    }

    /// The call returned at `end` (ns): its blocking operations and the requests it
    /// completed end before the next call starts.
    pub fn end_call(&mut self, end: u64) {
        self.last_end = Some(end);
        let blocking = std::mem::take(&mut self.blocking);
        let completed = std::mem::take(&mut self.completed);
        match (blocking.as_slice(), completed.is_empty()) {
            ([one], true) => self.pp = Some(*one),
            _ => {
                let ops: Vec<OpId> = blocking.into_iter().chain(completed).collect();
                self.join(&ops);
            }
        }
    }

    /// `op` starts after the program's position.
    fn after(&mut self, op: OpId) {
        if let Some(p) = self.pp {
            self.b.requires(op, p);
        }
    }

    /// A zero-time op after the program's position and `ops`: the new position.
    fn join(&mut self, ops: &[OpId]) {
        if ops.is_empty() {
            return;
        }
        let j = self.b.calc(0);
        self.after(j);
        for &o in ops {
            self.b.requires(j, o);
        }
        self.pp = Some(j);
    }

    /// The members of `comm`.
    pub fn members(&self, comm: CommIndex) -> Result<&[u32], String> {
        self.members.get(comm).map(Vec::as_slice).ok_or_else(|| format!("communicator {comm} is not defined"))
    }

    /// Communicator rank `r` of `comm` in the program, `None` for `MPI_PROC_NULL`.
    fn peer(&self, comm: CommIndex, r: i32) -> Result<Option<u32>, String> {
        let members = self.members(comm)?;
        match r {
            r if r < 0 => Ok(None),
            r => members
                .get(r as usize)
                .copied()
                .map(Some)
                .ok_or_else(|| format!("rank {r} of a communicator of {} ranks", members.len())),
        }
    }

    /// Records a non-blocking operation's request, or a blocking one in the call.
    fn track(&mut self, op: OpId, request: Option<i64>) {
        match request {
            Some(r) => self.requests.entry(r).or_default().push_back(op),
            None => self.blocking.push(op),
        }
    }

    /// A send of `bytes` to `dest` with `tag` on `comm`: blocking, or non-blocking with
    /// `request`.
    pub fn send(
        &mut self,
        comm: CommIndex,
        dest: i32,
        bytes: u64,
        tag: i32,
        request: Option<i64>,
    ) -> Result<(), String> {
        let Some(to) = self.peer(comm, dest)? else { return Ok(()) };
        let op = self.b.send(to, bytes, tag as u32, comm as u32);
        self.after(op);
        self.track(op, request);
        Ok(())
    }

    /// A receive of `bytes` from `source` (-1: any source) with `tag` (-1: any tag) on
    /// `comm`: blocking, or non-blocking with `request`.
    pub fn recv(
        &mut self,
        comm: CommIndex,
        source: i32,
        bytes: u64,
        tag: i32,
        request: Option<i64>,
    ) -> Result<(), String> {
        let from = if source == -1 {
            Source::Any
        } else {
            match self.peer(comm, source)? {
                Some(r) => Source::Rank(r),
                None => return Ok(()),
            }
        };
        let tag = if tag == -1 { TagMatch::Any } else { TagMatch::Tag(tag as u32) };
        let op = self.b.recv(from, bytes, tag, comm as u32);
        self.after(op);
        self.track(op, request);
        Ok(())
    }

    /// The current call completed `request` (a wait, a successful test): its oldest
    /// operation. Unknown requests (null ones, those of skipped operations) are ignored.
    pub fn complete(&mut self, request: i64) {
        if let Some(op) = self.take(request) {
            self.completed.push(op);
        }
    }

    /// `request` was freed or cancelled: nothing waits for its oldest operation.
    pub fn forget(&mut self, request: i64) {
        self.take(request);
    }

    fn take(&mut self, request: i64) -> Option<OpId> {
        let ops = self.requests.get_mut(&request)?;
        let op = ops.pop_front();
        if ops.is_empty() {
            self.requests.remove(&request);
        }
        op
    }

    /// This rank's rank in `comm`.
    fn me(&self, comm: CommIndex) -> Result<usize, String> {
        self.members(comm)?
            .iter()
            .position(|&r| r == self.rank)
            .ok_or_else(|| "a collective on a communicator the rank is not in".to_string())
    }

    /// The next collective's tag on `comm` and the communicator as its messages name it.
    fn next_collective(&mut self, comm: CommIndex) -> (u32, Comm) {
        let n = self.collectives.entry(comm).or_insert(0);
        *n += 1;
        (*n - 1, Comm { id: (comm as u32) | 1 << 31, ranks: self.members[comm].clone() })
    }

    /// A regular collective (`bytes` as [`Collective::new`] takes them for `kind`) by
    /// MPICH's default algorithm; `root` is a rank in `comm` (ignored by unrooted kinds).
    pub fn collective(&mut self, comm: CommIndex, kind: Kind, bytes: u64, root: i32) -> Result<(), String> {
        let me = self.me(comm)?;
        let (tag, c) = self.next_collective(comm);
        if root < 0 || root as usize >= c.size() {
            return Err(format!("root {root} of a communicator of {} ranks", c.size()));
        }
        let algo = select(kind, bytes, c.size());
        let collective =
            Collective::new(kind, bytes, root as usize, algo).expect("MPICH's choice is one of the kind's");
        self.pp = emit(self.b, &collective, &c, me, tag, self.pp).or(self.pp);
        Ok(())
    }

    /// An irregular collective done linearly: to every other member `send[j]` bytes, from
    /// every other member `recv[j]` (all posted at once, then a join).
    pub fn linear(&mut self, comm: CommIndex, send: &[u64], recv: &[u64]) -> Result<(), String> {
        let me = self.me(comm)?;
        let (tag, c) = self.next_collective(comm);
        let at = |v: &[u64], j: usize| v.get(j).copied().unwrap_or(0);
        let mut ops = Vec::new();
        for j in (0..c.size()).filter(|&j| j != me) {
            let r = self.b.recv(Source::Rank(c.ranks[j]), at(recv, j), TagMatch::Tag(tag), c.id);
            let s = self.b.send(c.ranks[j], at(send, j), tag, c.id);
            for op in [r, s] {
                self.after(op);
                ops.push(op);
            }
        }
        self.join(&ops);
        Ok(())
    }

    /// A rooted irregular collective done linearly: the root receives (`gather`) or sends
    /// `at_root[j]` bytes from or to every other member at once; every other member sends
    /// or receives its `own` bytes.
    pub fn rooted(
        &mut self,
        comm: CommIndex,
        root: i32,
        gather: bool,
        at_root: &[u64],
        own: u64,
    ) -> Result<(), String> {
        let me = self.me(comm)?;
        let (tag, c) = self.next_collective(comm);
        if root < 0 || root as usize >= c.size() {
            return Err(format!("root {root} of a communicator of {} ranks", c.size()));
        }
        let root = root as usize;
        let mut ops = Vec::new();
        let peers: Vec<usize> =
            if me == root { (0..c.size()).filter(|&j| j != root).collect() } else { vec![root] };
        for j in peers {
            let bytes = if me == root { at_root.get(j).copied().unwrap_or(0) } else { own };
            let receives = (me == root) == gather;
            let op = if receives {
                self.b.recv(Source::Rank(c.ranks[j]), bytes, TagMatch::Tag(tag), c.id)
            } else {
                self.b.send(c.ranks[j], bytes, tag, c.id)
            };
            self.after(op);
            ops.push(op);
        }
        self.join(&ops);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_handle_given_to_several_sends_completes_each_in_turn() {
        // MPICH returns one handle for small sends that completed at once; a tracer records
        // it for each, and a waitall lists it once per send.
        let mut p = ProgramBuilder::new(vec![vec![0, 1]], 1.0);
        let mut w = p.rank();
        for _ in 0..2 {
            w.begin_call(0);
            w.send(0, 1, 8, 0, Some(9)).unwrap();
            w.end_call(0);
        }
        w.begin_call(0);
        w.complete(9);
        w.complete(9);
        w.end_call(0);
        // Unknown requests (null ones) are ignored.
        w.complete(1);
        let s = p.build();
        // The join (op 2) waits for both sends.
        assert_eq!(s.after_end(0, 0), [2]);
        assert_eq!(s.after_end(0, 1), [2]);
    }
}

//! A traced MPI program as a schedule: every rank's calls (read from DUMPI,
//! [`crate::dumpi`]) become operations, in the order the rank made them.
//!
//! - **Program order.** A rank's blocking calls follow one another: each starts after the
//!   previous one ended. A non-blocking send or receive starts in order too but does not
//!   hold the rank up; the wait or successful test that completes it (`MPI_Wait`, `Waitall`,
//!   `Waitany`, `Waitsome`, `Test`, `Testall` that returned true) ends once it has.
//! - **Computation.** The time between one call's return and the next call's entry is
//!   computation, a `calc` of that many nanoseconds times `compute_scale` (0.5: a processor
//!   twice as fast).
//! - **Communicators.** `MPI_COMM_WORLD` is every rank; `MPI_Comm_split`, `MPI_Comm_dup` and
//!   `MPI_Comm_create` (with the groups of `MPI_Comm_group` and `MPI_Group_incl`) make new
//!   ones as MPI defines: the k-th such call on a communicator is the same call on all its
//!   members, a split's members are ordered by key, then by rank. Point-to-point ranks are
//!   translated to ranks of the whole job through their communicator.
//! - **Collectives** expand into messages by MPICH 4's default algorithms ([`select`],
//!   [`emit`]); their messages carry their own communicator number (the communicator's, with
//!   bit 31 set) and the collective's position on it as tag, so they never match the
//!   program's own messages. The irregular ones (`Alltoallv`, `Allgatherv`, `Gatherv`,
//!   `Scatterv`) send each rank's own counts, all at once (MPICH's linear algorithms); a
//!   `Reduce_scatter` with unequal counts moves the mean count per rank.
//! - **Sizes** are counts times the trace's own datatype sizes.
//!
//! Not replayed: `MPI_Ssend`'s wait for its receive (a synchronous send ends as a standard
//! one), persistent requests (`MPI_Send_init`, `MPI_Start`), `MPI_PROC_NULL` peers (skipped),
//! probes (read past).

use std::collections::HashMap;
use std::fmt;

use crate::collectives::{emit, select, Collective, Comm, Kind};
use crate::dumpi::{CallKind, RankTrace};
use crate::graph::{OpId, Schedule, ScheduleBuilder, Source, TagMatch};

/// Why a trace cannot become a schedule: the rank, the call (its record's byte offset in the
/// rank's file) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    /// The rank.
    pub rank: u32,
    /// The byte offset of the call's record in the rank's file.
    pub offset: u64,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rank {}: byte {}: {}", self.rank, self.offset, self.message)
    }
}

impl std::error::Error for TraceError {}

/// DUMPI's handles of the predefined communicators.
const COMM_NULL: u16 = 1;
const COMM_WORLD: u16 = 2;
const COMM_SELF: u16 = 3;

/// How a communicator came about; its members follow from it.
#[derive(Clone, Debug)]
enum Origin {
    World,
    SelfOf(u32),
    Dup(usize),
    /// Split of the parent with one color: (key, world rank) of each member.
    Split(usize, Vec<(i32, u32)>),
    Create(Group),
}

/// A group of ranks, as the trace builds it.
#[derive(Clone, Debug)]
enum Group {
    /// The members of a communicator.
    Of(usize),
    /// Some members of a group, by their rank in it.
    Incl(Box<Group>, Vec<i32>),
}

/// The communicators of a trace, and every rank's view of them.
struct Comms {
    origins: Vec<Origin>,
    /// (parent, its k-th creation, color or kind) to the communicator made.
    made: HashMap<(usize, u32, i64), usize>,
    members: Vec<Vec<u32>>,
}

impl Comms {
    fn new(ranks: u32) -> Comms {
        let mut origins = vec![Origin::World];
        origins.extend((0..ranks).map(Origin::SelfOf));
        Comms { origins, made: HashMap::new(), members: Vec::new() }
    }

    /// The communicator made by the `seq`-th creation on `parent` with `color` (a split's
    /// color; `i64::MIN` and `i64::MIN + 1` for a dup and a create).
    fn made(&mut self, parent: usize, seq: u32, color: i64, origin: impl FnOnce() -> Origin) -> usize {
        let n = self.origins.len();
        let id = *self.made.entry((parent, seq, color)).or_insert(n);
        if id == n {
            self.origins.push(origin());
        }
        id
    }

    /// Every communicator's members, in rank order (parents come before their children).
    fn resolve(&mut self, ranks: u32) {
        let mut members: Vec<Vec<u32>> = Vec::with_capacity(self.origins.len());
        for origin in &self.origins {
            let m = match origin {
                Origin::World => (0..ranks).collect(),
                Origin::SelfOf(r) => vec![*r],
                Origin::Dup(p) => members[*p].clone(),
                Origin::Split(p, entries) => {
                    let parent = &members[*p];
                    let mut e: Vec<(i32, usize, u32)> = entries
                        .iter()
                        .map(|&(key, w)| (key, parent.iter().position(|&x| x == w).unwrap_or(usize::MAX), w))
                        .collect();
                    e.sort_unstable();
                    e.into_iter().map(|x| x.2).collect()
                }
                Origin::Create(g) => group(g, &members),
            };
            members.push(m);
        }
        self.members = members;
    }
}

fn group(g: &Group, members: &[Vec<u32>]) -> Vec<u32> {
    match g {
        Group::Of(c) => members[*c].clone(),
        Group::Incl(inner, ranks) => {
            let of = group(inner, members);
            ranks.iter().filter_map(|&r| of.get(r as usize).copied()).collect()
        }
    }
}

/// The schedule of the traced program whose ranks' traces are `ranks` (rank `r` the
/// `r`-th), its computations scaled by `compute_scale`.
pub fn schedule_of_trace(ranks: &[RankTrace], compute_scale: f64) -> Result<Schedule, TraceError> {
    let n = ranks.len() as u32;
    let mut comms = Comms::new(n);
    // Pass 1: every rank's communicator handles, call by call.
    let mut call_comm: Vec<Vec<Option<usize>>> = Vec::with_capacity(ranks.len());
    for (r, t) in ranks.iter().enumerate() {
        call_comm.push(handles(&mut comms, r as u32, t)?);
    }
    comms.resolve(n);
    // Pass 2: the operations.
    let mut b = ScheduleBuilder::new();
    for (r, t) in ranks.iter().enumerate() {
        b.add_rank();
        Rank {
            b: &mut b,
            comms: &comms,
            rank: r as u32,
            trace: t,
            pp: None,
            requests: HashMap::new(),
            collectives: HashMap::new(),
        }
        .emit_all(&call_comm[r], compute_scale)?;
    }
    Ok(b.build())
}

/// Rank `rank`'s communicator at each call (for the calls that name one), following its
/// creations and frees.
fn handles(comms: &mut Comms, rank: u32, t: &RankTrace) -> Result<Vec<Option<usize>>, TraceError> {
    let mut handle: HashMap<u16, usize> = HashMap::from([(COMM_WORLD, 0), (COMM_SELF, 1 + rank as usize)]);
    let mut groups: HashMap<u16, Group> = HashMap::new();
    let mut seq: HashMap<usize, u32> = HashMap::new();
    let mut out = Vec::with_capacity(t.calls.len());
    for call in &t.calls {
        let err = |message: String| TraceError { rank, offset: call.offset, message };
        let comm_of = |h: u16| {
            handle.get(&h).copied().ok_or_else(|| err(format!("communicator {h} was never created")))
        };
        let mut next = |parent: usize| {
            let s = seq.entry(parent).or_insert(0);
            *s += 1;
            *s - 1
        };
        let used = match &call.kind {
            CallKind::CommSplit { comm, color, key, new } => {
                let parent = comm_of(*comm)?;
                let s = next(parent);
                if *new != COMM_NULL {
                    let id = comms.made(parent, s, i64::from(*color), || Origin::Split(parent, Vec::new()));
                    if let Origin::Split(_, entries) = &mut comms.origins[id] {
                        entries.push((*key, rank));
                    }
                    handle.insert(*new, id);
                }
                Some(parent)
            }
            CallKind::CommDup { comm, new } => {
                let parent = comm_of(*comm)?;
                let s = next(parent);
                let id = comms.made(parent, s, i64::MIN, || Origin::Dup(parent));
                handle.insert(*new, id);
                Some(parent)
            }
            CallKind::CommCreate { comm, group, new } => {
                let parent = comm_of(*comm)?;
                let s = next(parent);
                let g = groups
                    .get(group)
                    .cloned()
                    .ok_or_else(|| err(format!("group {group} was never created")))?;
                let id = comms.made(parent, s, i64::MIN + 1, || Origin::Create(g));
                if *new != COMM_NULL {
                    handle.insert(*new, id);
                }
                Some(parent)
            }
            CallKind::CommGroup { comm, group } => {
                groups.insert(*group, Group::Of(comm_of(*comm)?));
                None
            }
            CallKind::GroupIncl { group, ranks, new } => {
                let g = groups
                    .get(group)
                    .cloned()
                    .ok_or_else(|| err(format!("group {group} was never created")))?;
                groups.insert(*new, Group::Incl(Box::new(g), ranks.clone()));
                None
            }
            CallKind::CommFree { comm } => {
                handle.remove(comm);
                None
            }
            other => match comm_handle(other) {
                Some(h) => Some(comm_of(h)?),
                None => None,
            },
        };
        out.push(used);
    }
    Ok(out)
}

/// The communicator a communication call names.
fn comm_handle(k: &CallKind) -> Option<u16> {
    use CallKind as K;
    Some(match k {
        K::Send { comm, .. }
        | K::Recv { comm, .. }
        | K::Isend { comm, .. }
        | K::Irecv { comm, .. }
        | K::Sendrecv { comm, .. }
        | K::Barrier { comm }
        | K::Bcast { comm, .. }
        | K::Reduce { comm, .. }
        | K::Allreduce { comm, .. }
        | K::ReduceScatter { comm, .. }
        | K::Allgather { comm, .. }
        | K::Allgatherv { comm, .. }
        | K::Alltoall { comm, .. }
        | K::Alltoallv { comm, .. }
        | K::Gather { comm, .. }
        | K::Scatter { comm, .. }
        | K::Gatherv { comm, .. }
        | K::Scatterv { comm, .. } => *comm,
        _ => return None,
    })
}

/// One rank's operations being written.
struct Rank<'a> {
    b: &'a mut ScheduleBuilder,
    comms: &'a Comms,
    rank: u32,
    trace: &'a RankTrace,
    /// The op the next blocking call waits for (the program's position).
    pp: Option<OpId>,
    /// Non-blocking operations by request.
    requests: HashMap<i32, OpId>,
    /// Per communicator, the collectives run on it so far.
    collectives: HashMap<usize, u32>,
}

impl Rank<'_> {
    fn emit_all(mut self, comms: &[Option<usize>], compute_scale: f64) -> Result<(), TraceError> {
        let mut last_end = None;
        for (call, comm) in self.trace.calls.iter().zip(comms) {
            if let Some(end) = last_end {
                let gap = call.start.saturating_sub(end);
                let ns = (gap as f64 * compute_scale).round() as u64;
                if ns > 0 {
                    let c = self.b.calc(ns);
                    self.after(c);
                    self.pp = Some(c);
                }
            }
            last_end = Some(call.end);
            self.call(&call.kind, *comm).map_err(|message| TraceError {
                rank: self.rank,
                offset: call.offset,
                message,
            })?;
        }
        Ok(())
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

    fn members(&self, comm: Option<usize>) -> &[u32] {
        &self.comms.members[comm.expect("a communication call has its communicator")]
    }

    /// Communicator rank `r` of `comm` in the job, `None` for `MPI_PROC_NULL` (negative).
    fn peer(&self, comm: Option<usize>, r: i32) -> Result<Option<u32>, String> {
        let members = self.members(comm);
        match r {
            r if r < 0 => Ok(None),
            r => members
                .get(r as usize)
                .copied()
                .map(Some)
                .ok_or_else(|| format!("rank {r} of a communicator of {} ranks", members.len())),
        }
    }

    fn send_op(
        &mut self,
        comm: Option<usize>,
        dest: i32,
        count: i32,
        datatype: u16,
        tag: i32,
    ) -> Result<Option<OpId>, String> {
        let Some(to) = self.peer(comm, dest)? else { return Ok(None) };
        let op = self.b.send(to, self.trace.bytes(count, datatype), tag as u32, comm.unwrap_or(0) as u32);
        self.after(op);
        Ok(Some(op))
    }

    fn recv_op(
        &mut self,
        comm: Option<usize>,
        source: i32,
        count: i32,
        datatype: u16,
        tag: i32,
    ) -> Result<Option<OpId>, String> {
        let from = if source == -1 {
            Source::Any
        } else {
            match self.peer(comm, source)? {
                Some(r) => Source::Rank(r),
                None => return Ok(None),
            }
        };
        let tag = if tag == -1 { TagMatch::Any } else { TagMatch::Tag(tag as u32) };
        let op = self.b.recv(from, self.trace.bytes(count, datatype), tag, comm.unwrap_or(0) as u32);
        self.after(op);
        Ok(Some(op))
    }

    /// The ops of the requests a wait or test completed.
    fn complete(&mut self, requests: impl IntoIterator<Item = i32>) {
        let ops: Vec<OpId> = requests.into_iter().filter_map(|r| self.requests.remove(&r)).collect();
        self.join(&ops);
    }

    fn call(&mut self, k: &CallKind, comm: Option<usize>) -> Result<(), String> {
        use CallKind as K;
        match k {
            K::Send { count, datatype, dest, tag, .. } => {
                if let Some(op) = self.send_op(comm, *dest, *count, *datatype, *tag)? {
                    self.pp = Some(op);
                }
            }
            K::Recv { count, datatype, source, tag, .. } => {
                if let Some(op) = self.recv_op(comm, *source, *count, *datatype, *tag)? {
                    self.pp = Some(op);
                }
            }
            K::Isend { count, datatype, dest, tag, request, .. } => {
                if let Some(op) = self.send_op(comm, *dest, *count, *datatype, *tag)? {
                    self.requests.insert(*request, op);
                }
            }
            K::Irecv { count, datatype, source, tag, request, .. } => {
                if let Some(op) = self.recv_op(comm, *source, *count, *datatype, *tag)? {
                    self.requests.insert(*request, op);
                }
            }
            K::Wait { request } => self.complete([*request]),
            K::Test { request, done: true } => self.complete([*request]),
            K::Waitall { requests, done: true } => self.complete(requests.clone()),
            K::Waitany { requests, index } if *index >= 0 => {
                self.complete(requests.get(*index as usize).copied());
            }
            K::Waitsome { requests, indices } => {
                let done: Vec<i32> =
                    indices.iter().filter_map(|&i| requests.get(i as usize).copied()).collect();
                self.complete(done);
            }
            K::RequestFree { request } => {
                self.requests.remove(request);
            }
            K::Sendrecv {
                sendcount, sendtype, dest, sendtag, recvcount, recvtype, source, recvtag, ..
            } => {
                let s = self.send_op(comm, *dest, *sendcount, *sendtype, *sendtag)?;
                let r = self.recv_op(comm, *source, *recvcount, *recvtype, *recvtag)?;
                let ops: Vec<OpId> = s.into_iter().chain(r).collect();
                self.join(&ops);
            }
            K::Barrier { .. } => self.collective(comm, Kind::Barrier, 0, 0)?,
            K::Bcast { count, datatype, root, .. } => {
                let bytes = self.trace.bytes(*count, *datatype);
                self.collective(comm, Kind::Bcast, bytes, *root)?
            }
            K::Reduce { count, datatype, root, .. } => {
                let bytes = self.trace.bytes(*count, *datatype);
                self.collective(comm, Kind::Reduce, bytes, *root)?
            }
            K::Allreduce { count, datatype, .. } => {
                let bytes = self.trace.bytes(*count, *datatype);
                self.collective(comm, Kind::Allreduce, bytes, 0)?
            }
            K::ReduceScatter { recvcounts, datatype, .. } => {
                let total: i64 = recvcounts.iter().map(|&c| i64::from(c.max(0))).sum();
                let mean = (total as u64).div_ceil(recvcounts.len().max(1) as u64);
                let bytes = self.trace.bytes(mean.min(i32::MAX as u64) as i32, *datatype);
                self.collective(comm, Kind::ReduceScatter, bytes, 0)?
            }
            K::Allgather { sendcount, sendtype, .. } => {
                let bytes = self.trace.bytes(*sendcount, *sendtype);
                self.collective(comm, Kind::Allgather, bytes, 0)?
            }
            K::Alltoall { sendcount, sendtype, .. } => {
                let bytes = self.trace.bytes(*sendcount, *sendtype);
                self.collective(comm, Kind::Alltoall, bytes, 0)?
            }
            K::Gather { sendcount, sendtype, root, .. } => {
                let bytes = self.trace.bytes(*sendcount, *sendtype);
                self.collective(comm, Kind::Gather, bytes, *root)?
            }
            K::Scatter { recvcount, recvtype, root, .. } => {
                let bytes = self.trace.bytes(*recvcount, *recvtype);
                self.collective(comm, Kind::Scatter, bytes, *root)?
            }
            K::Alltoallv { sendcounts, sendtype, recvcounts, recvtype, .. } => {
                let n = self.members(comm).len();
                let send: Vec<u64> = (0..n).map(|j| self.trace.bytes(at(sendcounts, j), *sendtype)).collect();
                let recv: Vec<u64> = (0..n).map(|j| self.trace.bytes(at(recvcounts, j), *recvtype)).collect();
                self.linear(comm, &send, &recv)?
            }
            K::Allgatherv { sendcount, sendtype, recvcounts, recvtype, .. } => {
                let n = self.members(comm).len();
                let send = vec![self.trace.bytes(*sendcount, *sendtype); n];
                let recv: Vec<u64> = (0..n).map(|j| self.trace.bytes(at(recvcounts, j), *recvtype)).collect();
                self.linear(comm, &send, &recv)?
            }
            K::Gatherv { sendcount, sendtype, root, recvcounts, recvtype, .. } => {
                let n = self.members(comm).len();
                let at_root: Vec<u64> =
                    (0..n).map(|j| self.trace.bytes(at(recvcounts, j), *recvtype)).collect();
                let own = self.trace.bytes(*sendcount, *sendtype);
                self.rooted(comm, *root, true, &at_root, own)?
            }
            K::Scatterv { recvcount, recvtype, root, sendcounts, sendtype, .. } => {
                let n = self.members(comm).len();
                let at_root: Vec<u64> =
                    (0..n).map(|j| self.trace.bytes(at(sendcounts, j), *sendtype)).collect();
                let own = self.trace.bytes(*recvcount, *recvtype);
                self.rooted(comm, *root, false, &at_root, own)?
            }
            _ => {}
        }
        Ok(())
    }

    /// This rank's rank in `comm`.
    fn me(&self, comm: Option<usize>) -> Result<usize, String> {
        self.members(comm)
            .iter()
            .position(|&r| r == self.rank)
            .ok_or_else(|| "a collective on a communicator the rank is not in".to_string())
    }

    /// The next collective's tag on `comm` and the communicator as its messages name it.
    fn next_collective(&mut self, comm: Option<usize>) -> (u32, Comm) {
        let c = comm.expect("a collective has its communicator");
        let n = self.collectives.entry(c).or_insert(0);
        *n += 1;
        (*n - 1, Comm { id: (c as u32) | 1 << 31, ranks: self.comms.members[c].clone() })
    }

    fn collective(&mut self, comm: Option<usize>, kind: Kind, bytes: u64, root: i32) -> Result<(), String> {
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
    fn linear(&mut self, comm: Option<usize>, send: &[u64], recv: &[u64]) -> Result<(), String> {
        let me = self.me(comm)?;
        let (tag, c) = self.next_collective(comm);
        let mut ops = Vec::new();
        for j in (0..c.size()).filter(|&j| j != me) {
            let r = self.b.recv(Source::Rank(c.ranks[j]), recv[j], TagMatch::Tag(tag), c.id);
            let s = self.b.send(c.ranks[j], send[j], tag, c.id);
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
    fn rooted(
        &mut self,
        comm: Option<usize>,
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
            let bytes = if me == root { at_root[j] } else { own };
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

/// `counts[j]`, 0 past its end.
fn at(counts: &[i32], j: usize) -> i32 {
    counts.get(j).copied().unwrap_or(0)
}

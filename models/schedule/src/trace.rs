//! A traced MPI program as a schedule: every rank's calls (read from DUMPI,
//! [`crate::dumpi`]) become operations, in the order the rank made them.
//!
//! Calls become operations as [`crate::program`] writes them (program order, traced gaps as
//! computation times `compute_scale`, collectives by MPICH's choice); what is DUMPI's own:
//!
//! - **Communicators.** `MPI_COMM_WORLD` is every rank; `MPI_Comm_split`, `MPI_Comm_dup` and
//!   `MPI_Comm_create` (with the groups of `MPI_Comm_group` and `MPI_Group_incl`) make new
//!   ones as MPI defines: the k-th such call on a communicator is the same call on all its
//!   members, a split's members are ordered by key, then by rank. Point-to-point ranks are
//!   translated to ranks of the whole job through their communicator.
//! - **Irregular collectives** (`Alltoallv`, `Allgatherv`, `Gatherv`, `Scatterv`) send each
//!   rank's own counts, all at once (MPICH's linear algorithms); a `Reduce_scatter` with
//!   unequal counts moves the mean count per rank.
//! - **Sizes** are counts times the trace's own datatype sizes.
//!
//! Not replayed: `MPI_Ssend`'s wait for its receive (a synchronous send ends as a standard
//! one), persistent requests (`MPI_Send_init`, `MPI_Start`), `MPI_PROC_NULL` peers (skipped),
//! probes (read past).

use std::collections::HashMap;
use std::fmt;

use crate::collectives::Kind;
use crate::dumpi::{CallKind, RankTrace};
use crate::graph::Schedule;
use crate::program::{ProgramBuilder, RankWriter};

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
    // Pass 2: the operations, call by call.
    let mut program = ProgramBuilder::new(std::mem::take(&mut comms.members), compute_scale);
    for (r, t) in ranks.iter().enumerate() {
        let mut w = program.rank();
        for (call, comm) in t.calls.iter().zip(&call_comm[r]) {
            w.begin_call(call.start);
            write_call(&mut w, t, &call.kind, *comm).map_err(|message| TraceError {
                rank: r as u32,
                offset: call.offset,
                message,
            })?;
            w.end_call(call.end);
        }
    }
    Ok(program.build())
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

/// Writes `call` of `trace` (its communicator resolved to `comm`) with `w`.
fn write_call(
    w: &mut RankWriter<'_>,
    trace: &RankTrace,
    k: &CallKind,
    comm: Option<usize>,
) -> Result<(), String> {
    use CallKind as K;
    let bytes = |count: i32, datatype: u16| trace.bytes(count, datatype);
    // Every call that names a communicator has it resolved by `handles`.
    let c = || comm.ok_or_else(|| "a communication call without its communicator".to_string());
    match k {
        K::Send { count, datatype, dest, tag, .. } => {
            w.send(c()?, *dest, bytes(*count, *datatype), *tag, None)?
        }
        K::Recv { count, datatype, source, tag, .. } => {
            w.recv(c()?, *source, bytes(*count, *datatype), *tag, None)?
        }
        K::Isend { count, datatype, dest, tag, request, .. } => {
            w.send(c()?, *dest, bytes(*count, *datatype), *tag, Some(i64::from(*request)))?
        }
        K::Irecv { count, datatype, source, tag, request, .. } => {
            w.recv(c()?, *source, bytes(*count, *datatype), *tag, Some(i64::from(*request)))?
        }
        K::Wait { request } | K::Test { request, done: true } => w.complete(i64::from(*request)),
        K::Waitall { requests, done: true } => requests.iter().for_each(|&r| w.complete(i64::from(r))),
        K::Waitany { requests, index } if *index >= 0 => {
            if let Some(&r) = requests.get(*index as usize) {
                w.complete(i64::from(r));
            }
        }
        K::Waitsome { requests, indices } => {
            for &i in indices {
                if let Some(&r) = requests.get(i as usize) {
                    w.complete(i64::from(r));
                }
            }
        }
        K::RequestFree { request } => w.forget(i64::from(*request)),
        K::Sendrecv { sendcount, sendtype, dest, sendtag, recvcount, recvtype, source, recvtag, .. } => {
            w.send(c()?, *dest, bytes(*sendcount, *sendtype), *sendtag, None)?;
            w.recv(c()?, *source, bytes(*recvcount, *recvtype), *recvtag, None)?;
        }
        K::Barrier { .. } => w.collective(c()?, Kind::Barrier, 0, 0)?,
        K::Bcast { count, datatype, root, .. } => {
            w.collective(c()?, Kind::Bcast, bytes(*count, *datatype), *root)?
        }
        K::Reduce { count, datatype, root, .. } => {
            w.collective(c()?, Kind::Reduce, bytes(*count, *datatype), *root)?
        }
        K::Allreduce { count, datatype, .. } => {
            w.collective(c()?, Kind::Allreduce, bytes(*count, *datatype), 0)?
        }
        K::ReduceScatter { recvcounts, datatype, .. } => {
            let total: i64 = recvcounts.iter().map(|&c| i64::from(c.max(0))).sum();
            let mean = (total as u64).div_ceil(recvcounts.len().max(1) as u64);
            w.collective(c()?, Kind::ReduceScatter, bytes(mean.min(i32::MAX as u64) as i32, *datatype), 0)?
        }
        K::Allgather { sendcount, sendtype, .. } => {
            w.collective(c()?, Kind::Allgather, bytes(*sendcount, *sendtype), 0)?
        }
        K::Alltoall { sendcount, sendtype, .. } => {
            w.collective(c()?, Kind::Alltoall, bytes(*sendcount, *sendtype), 0)?
        }
        K::Gather { sendcount, sendtype, root, .. } => {
            w.collective(c()?, Kind::Gather, bytes(*sendcount, *sendtype), *root)?
        }
        K::Scatter { recvcount, recvtype, root, .. } => {
            w.collective(c()?, Kind::Scatter, bytes(*recvcount, *recvtype), *root)?
        }
        K::Alltoallv { sendcounts, sendtype, recvcounts, recvtype, .. } => {
            let n = w.members(c()?)?.len();
            let send: Vec<u64> = (0..n).map(|j| bytes(at(sendcounts, j), *sendtype)).collect();
            let recv: Vec<u64> = (0..n).map(|j| bytes(at(recvcounts, j), *recvtype)).collect();
            w.linear(c()?, &send, &recv)?
        }
        K::Allgatherv { sendcount, sendtype, recvcounts, recvtype, .. } => {
            let n = w.members(c()?)?.len();
            let send = vec![bytes(*sendcount, *sendtype); n];
            let recv: Vec<u64> = (0..n).map(|j| bytes(at(recvcounts, j), *recvtype)).collect();
            w.linear(c()?, &send, &recv)?
        }
        K::Gatherv { sendcount, sendtype, root, recvcounts, recvtype, .. } => {
            let n = w.members(c()?)?.len();
            let at_root: Vec<u64> = (0..n).map(|j| bytes(at(recvcounts, j), *recvtype)).collect();
            w.rooted(c()?, *root, true, &at_root, bytes(*sendcount, *sendtype))?
        }
        K::Scatterv { recvcount, recvtype, root, sendcounts, sendtype, .. } => {
            let n = w.members(c()?)?.len();
            let at_root: Vec<u64> = (0..n).map(|j| bytes(at(sendcounts, j), *sendtype)).collect();
            w.rooted(c()?, *root, false, &at_root, bytes(*recvcount, *recvtype))?
        }
        _ => {}
    }
    Ok(())
}

/// `counts[j]`, 0 past its end.
fn at(counts: &[i32], j: usize) -> i32 {
    counts.get(j).copied().unwrap_or(0)
}

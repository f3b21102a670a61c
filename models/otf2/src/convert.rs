//! An archive's definitions and events as a schedule: ranks, communicators, calls.

use std::collections::{HashMap, HashSet};

use schedule::collectives::Kind;
use schedule::{CommIndex, ProgramBuilder, RankWriter, Schedule};

use crate::error::Otf2Error;
use crate::ffi::*;
use crate::reader::{Archive, Definitions, Event, What};

/// How a communicator of the archive maps to the program's.
#[derive(Clone, Debug)]
enum CommOf {
    /// The program's communicator, and whether its events name world ranks
    /// (`GLOBAL_MEMBERS`) rather than ranks in it.
    Fixed { index: CommIndex, world_ranks: bool },
    /// `MPI_COMM_SELF` and friends: each rank's own.
    SelfComm,
}

/// The MPI ranks and communicators of an archive.
struct Layout {
    /// The location of each MPI rank.
    locations: Vec<OTF2_LocationRef>,
    /// Every communicator's members (world ranks), as the program takes them: world first,
    /// then each rank's self, then the archive's.
    members: Vec<Vec<u32>>,
    comms: Comms,
}

/// The communicator references of an archive's events, as the program's.
type Comms = HashMap<OTF2_CommRef, CommOf>;

fn layout(defs: &Definitions) -> Result<Layout, String> {
    let is_mpi = |g: &crate::reader::Group| g.paradigm == OTF2_PARADIGM_MPI as OTF2_Paradigm;
    let locations: Vec<OTF2_LocationRef> = defs
        .groups
        .values()
        .find(|g| g.kind == OTF2_GROUP_TYPE_COMM_LOCATIONS as OTF2_GroupType && is_mpi(g))
        .map(|g| g.members.clone())
        .ok_or("no MPI ranks: the archive has no MPI locations group (was MPI recorded?)")?;
    if locations.is_empty() {
        return Err("no MPI ranks: the archive's MPI locations group is empty".into());
    }
    let n = locations.len() as u32;
    let mut members: Vec<Vec<u32>> = vec![(0..n).collect()];
    members.extend((0..n).map(|r| vec![r]));
    let mut comms = HashMap::new();
    // In reference order, so communicator numbers do not depend on the map's order.
    let mut refs: Vec<&OTF2_CommRef> = defs.comms.keys().collect();
    refs.sort_unstable();
    for id in refs {
        let comm = &defs.comms[id];
        let Some(group) = defs.groups.get(&comm.group) else { continue };
        if !is_mpi(group) {
            continue;
        }
        let of = match group.kind {
            k if k == OTF2_GROUP_TYPE_COMM_SELF as OTF2_GroupType => CommOf::SelfComm,
            k if k == OTF2_GROUP_TYPE_COMM_GROUP as OTF2_GroupType => {
                let ranks: Vec<u32> = group
                    .members
                    .iter()
                    .map(|&m| {
                        u32::try_from(m).ok().filter(|&r| r < n).ok_or_else(|| {
                            format!(
                                "communicator {:?} has member {m}, not one of the {n} MPI ranks",
                                defs.string(comm.name)
                            )
                        })
                    })
                    .collect::<Result<_, _>>()?;
                let world_ranks = group.flags & OTF2_GROUP_FLAG_GLOBAL_MEMBERS as OTF2_GroupFlag != 0;
                // A copy of MPI_COMM_WORLD (a dup) is a communicator of its own: its
                // messages match only its receives.
                members.push(ranks);
                let index = members.len() - 1;
                CommOf::Fixed { index, world_ranks }
            }
            _ => continue,
        };
        comms.insert(*id, of);
    }
    Ok(Layout { locations, members, comms })
}

/// The schedule of the MPI program recorded in the OTF2 archive whose anchor file
/// (`traces.otf2`) is `path`, its computations scaled by `compute_scale`.
pub fn schedule_of_archive(path: &str, compute_scale: f64) -> Result<Schedule, Otf2Error> {
    schedule_of_archive_until(path, compute_scale, &|| false)
}

/// [`schedule_of_archive`], giving up (an error saying "interrupted") once `stop` says so:
/// it is asked every few thousand events, so that a signal stops the read of a large
/// archive within moments.
pub fn schedule_of_archive_until(
    path: &str,
    compute_scale: f64,
    stop: &dyn Fn() -> bool,
) -> Result<Schedule, Otf2Error> {
    let fail = |rank: Option<u32>, event: Option<u64>, message: String| Otf2Error {
        file: path.to_string(),
        rank,
        event,
        message,
    };
    let mut archive = Archive::open(path).map_err(|m| fail(None, None, m))?;
    let layout = layout(&archive.defs).map_err(|m| fail(None, None, m))?;
    if archive.defs.timer_resolution == 0 {
        return Err(fail(None, None, "the clock properties give no timer resolution".into()));
    }
    let mpi_regions: HashSet<OTF2_RegionRef> = archive
        .defs
        .regions
        .iter()
        .filter(|(_, r)| r.paradigm == OTF2_PARADIGM_MPI as OTF2_Paradigm)
        .map(|(&id, _)| id)
        .collect();
    let clock = Clock { resolution: archive.defs.timer_resolution, offset: archive.defs.global_offset };
    let Layout { locations, members, comms } = layout;
    let mut program = ProgramBuilder::new(members, compute_scale);
    for (rank, &location) in locations.iter().enumerate() {
        let rank = rank as u32;
        let events = archive.events(location, stop).map_err(|m| {
            // Where the library keeps the location's events: beside the anchor, in the
            // folder of its name.
            let stem = path.strip_suffix(".otf2").unwrap_or(path);
            fail(Some(rank), None, format!("{m} ({stem}/{location}.evt)"))
        })?;
        let mut w = program.rank();
        write_rank(&mut w, &comms, &mpi_regions, clock, &events)
            .map_err(|(event, m)| fail(Some(rank), Some(event), m))?;
    }
    Ok(program.build())
}

/// Timestamps to nanoseconds.
#[derive(Clone, Copy)]
struct Clock {
    resolution: u64,
    offset: u64,
}

impl Clock {
    fn ns(self, ticks: u64) -> u64 {
        let ns = u128::from(ticks.saturating_sub(self.offset)) * 1_000_000_000 / u128::from(self.resolution);
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

/// Writes one rank's events; an error gives the event's position.
fn write_rank(
    w: &mut RankWriter<'_>,
    comms: &Comms,
    mpi_regions: &HashSet<OTF2_RegionRef>,
    clock: Clock,
    events: &[Event],
) -> Result<(), (u64, String)> {
    // Depth in MPI regions: a call is the outermost one (MPI calls inside MPI calls, as
    // some libraries make, are part of it).
    let mut depth = 0u32;
    for e in events {
        let at = clock.ns(e.at);
        match &e.what {
            What::Enter(region) if mpi_regions.contains(region) => {
                if depth == 0 {
                    w.begin_call(at);
                }
                depth += 1;
            }
            What::Leave(region) if mpi_regions.contains(region) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    w.end_call(at);
                }
            }
            What::Enter(_) | What::Leave(_) => {}
            what => {
                // An MPI event outside any MPI region (a trace without them) is a call
                // of its own.
                let alone = depth == 0;
                if alone {
                    w.begin_call(at);
                }
                write_event(w, comms, what).map_err(|m| (e.position, m))?;
                if alone {
                    w.end_call(at);
                }
            }
        }
    }
    Ok(())
}

/// A communicator reference of `rank`'s events as the program's, and whether its events
/// name world ranks.
fn comm_of(comms: &Comms, rank: u32, comm: OTF2_CommRef) -> Result<(CommIndex, bool), String> {
    match comms.get(&comm) {
        Some(CommOf::Fixed { index, world_ranks }) => Ok((*index, *world_ranks)),
        Some(CommOf::SelfComm) => Ok((1 + rank as usize, false)),
        None => Err(format!("communicator {comm} is not an MPI communicator of the definitions")),
    }
}

/// A rank as the event gives it, as a rank in the communicator.
fn in_comm(w: &RankWriter<'_>, (index, world_ranks): (CommIndex, bool), r: u32) -> Result<i32, String> {
    if !world_ranks {
        return i32::try_from(r).map_err(|_| format!("rank {r} out of range"));
    }
    w.members(index)?
        .iter()
        .position(|&m| m == r)
        .map(|p| p as i32)
        .ok_or_else(|| format!("world rank {r} is not in the communicator"))
}

fn write_event(w: &mut RankWriter<'_>, comms: &Comms, what: &What) -> Result<(), String> {
    let rank = w.rank();
    match *what {
        What::Send { peer, comm, tag, bytes, request } => {
            let c = comm_of(comms, rank, comm)?;
            let dest = in_comm(w, c, peer)?;
            w.send(c.0, dest, bytes, tag_of(tag)?, request.map(|r| r as i64))?;
        }
        What::Recv { peer: Some(peer), comm, tag, bytes, request } => {
            let c = comm_of(comms, rank, comm)?;
            let source = in_comm(w, c, peer)?;
            w.recv(c.0, source, bytes, tag_of(tag)?, request.map(|r| r as i64))?;
        }
        // Posted but never completed (cancelled, or the trace ends first): nothing to match.
        What::Recv { peer: None, .. } => {}
        What::Complete(request) => w.complete(request as i64),
        What::Cancelled(request) => w.forget(request as i64),
        What::Collective { op, comm, root, sent, received } => {
            let c = comm_of(comms, rank, comm)?;
            collective(w, c, op, root, sent, received)?;
        }
        What::Enter(_) | What::Leave(_) => {}
    }
    Ok(())
}

/// MPI tags are non-negative `int`s.
fn tag_of(tag: u32) -> Result<i32, String> {
    i32::try_from(tag).map_err(|_| format!("tag {tag} is not an MPI tag"))
}

/// The per-rank size in a total of `n` blocks, or `n - 1` (`MPI_IN_PLACE`) where `n` does
/// not divide it.
fn block(total: u64, n: u64) -> u64 {
    if n <= 1 || total.is_multiple_of(n) {
        total / n.max(1)
    } else if total.is_multiple_of(n - 1) {
        total / (n - 1)
    } else {
        total.div_ceil(n)
    }
}

fn collective(
    w: &mut RankWriter<'_>,
    c: (CommIndex, bool),
    op: OTF2_CollectiveOp,
    root: u32,
    sent: u64,
    received: u64,
) -> Result<(), String> {
    let comm = c.0;
    let members = w.members(comm)?;
    let n = members.len() as u64;
    let me = members.iter().position(|&m| m == w.rank()).map(|p| p as i32);
    let root = if root == OTF2_COLLECTIVE_ROOT_NONE { 0 } else { in_comm(w, c, root)? };
    let at_root = me == Some(root);
    let op = op as u32;
    match op {
        OTF2_COLLECTIVE_OP_BARRIER => w.collective(comm, Kind::Barrier, 0, 0),
        // Every rank receives the block (the root too, unless in place: then its sends).
        OTF2_COLLECTIVE_OP_BCAST => {
            let bytes = if received > 0 || !at_root { received } else { block(sent, n) };
            w.collective(comm, Kind::Bcast, bytes, root)
        }
        // Every rank sends its block (the root too, unless in place).
        OTF2_COLLECTIVE_OP_REDUCE | OTF2_COLLECTIVE_OP_GATHER => {
            let bytes = if sent > 0 || !at_root { sent } else { block(received, n) };
            let kind = if op == OTF2_COLLECTIVE_OP_REDUCE { Kind::Reduce } else { Kind::Gather };
            w.collective(comm, kind, bytes, root)
        }
        OTF2_COLLECTIVE_OP_SCATTER => {
            let bytes = if received > 0 || !at_root { received } else { block(sent, n) };
            w.collective(comm, Kind::Scatter, bytes, root)
        }
        OTF2_COLLECTIVE_OP_ALLREDUCE => w.collective(comm, Kind::Allreduce, block(received, n), 0),
        OTF2_COLLECTIVE_OP_ALLGATHER => w.collective(comm, Kind::Allgather, block(received, n), 0),
        OTF2_COLLECTIVE_OP_ALLTOALL => w.collective(comm, Kind::Alltoall, block(received, n), 0),
        OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK => {
            w.collective(comm, Kind::ReduceScatter, block(received, n), 0)
        }
        OTF2_COLLECTIVE_OP_REDUCE_SCATTER => w.collective(comm, Kind::ReduceScatter, block(sent, n), 0),
        OTF2_COLLECTIVE_OP_ALLGATHERV | OTF2_COLLECTIVE_OP_ALLTOALLV | OTF2_COLLECTIVE_OP_ALLTOALLW => {
            let send = vec![block(sent, n); n as usize];
            let recv = vec![block(received, n); n as usize];
            w.linear(comm, &send, &recv)
        }
        OTF2_COLLECTIVE_OP_GATHERV => {
            let at = vec![block(received, n); n as usize];
            w.rooted(comm, root, true, &at, sent)
        }
        OTF2_COLLECTIVE_OP_SCATTERV => {
            let at = vec![block(sent, n); n as usize];
            w.rooted(comm, root, false, &at, received)
        }
        // Scans, and the handle and memory operations OTF2 also records as collectives
        // (communicator creation, windows): no messages replayed.
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::block;

    #[test]
    fn blocks_are_found_in_totals_of_n_or_n_minus_one() {
        assert_eq!(block(16384, 4), 4096);
        // MPI_IN_PLACE: N - 1 blocks (where N does not divide the total too: 3 x 8 reads
        // as 4 x 6).
        assert_eq!(block(3 * 6, 4), 6);
        assert_eq!(block(3 * 8, 4), 6);
        assert_eq!(block(7, 4), 2);
        assert_eq!(block(5, 1), 5);
        assert_eq!(block(0, 8), 0);
    }
}

//! A training step as ops: each rank's pieces (`step.rs`) with NCCL's collectives on its
//! groups.

use super::step::{Coll, Group, Work};
use super::Shape;
use crate::workload::{collectives, ns_to_cycles, JobContext, Phase, PhaseBook, Phases};
use schedule::nccl::emit_nccl_chosen;
use schedule::nccl::p2p::{emit_nccl_group, P2p, P2pSettings};
use schedule::{Comm, OpId, Schedule, ScheduleBuilder};

/// One step of every rank as ops, with its collectives to time and each rank's cycles of
/// computation.
pub(super) struct Step {
    pub(super) schedule: Schedule,
    pub(super) phases: Phases,
    pub(super) compute: Vec<u64>,
}

/// One step of every rank, as ops.
pub(super) fn emit_step(shape: &Shape, job: &JobContext, channels: u32) -> Step {
    let mut b = ScheduleBuilder::new();
    let mut timed = PhaseBook::new(shape.ranks() as usize);
    let compute = (0..shape.ranks())
        .map(|r| {
            b.add_rank();
            emit_rank(&mut b, shape, job, channels, r, Some(&mut timed))
        })
        .collect();
    Step { schedule: b.build(), phases: timed.phases, compute }
}

/// The step's collectives as they are emitted: each (communicator, tag) one timed
/// collective.
pub(super) type Timed = PhaseBook<(u32, u32)>;

/// `coll` of `bytes` (as [`Work::Collective`] counts them) on `group`'s `n` ranks, as
/// nccl-tests reports it, named by its group (`tensor allreduce`).
fn phase(group: Group, coll: Coll, bytes: u64, n: usize) -> Phase {
    let mut phase = collectives::phase(coll.kind(), bytes, n as u32);
    phase.name = format!("{} {}", group.name(), phase.name);
    phase
}

/// Rank `r`'s communicators: tensor, data, expert, expert-data, pipeline (each group
/// numbered once over the job).
pub(super) fn groups(shape: &Shape, r: u32) -> [Comm; 5] {
    let (tp, dp, pp, ep) = (shape.tp, shape.dp, shape.pp, shape.ep);
    let (t, d, p) = shape.coords(r);
    let base = p * tp * dp;
    let at = |data: u32| base + data * tp + t;
    let mut id = 1;
    let mut next = |count: u32, index: u32| {
        let this = id + index;
        id += count;
        this
    };
    let tensor = Comm { id: next(pp * dp, p * dp + d), ranks: (0..tp).map(|k| base + d * tp + k).collect() };
    let data = Comm { id: next(pp * tp, p * tp + t), ranks: (0..dp).map(at).collect() };
    let (block, slot) = (d / ep, d % ep);
    let expert = Comm {
        id: next(pp * tp * (dp / ep), (p * tp + t) * (dp / ep) + block),
        ranks: (0..ep).map(|k| at(block * ep + k)).collect(),
    };
    let expert_data = Comm {
        id: next(pp * tp * ep, (p * tp + t) * ep + slot),
        ranks: (0..dp / ep).map(|k| at(k * ep + slot)).collect(),
    };
    let pipe =
        Comm { id: next(tp * dp, d * tp + t), ranks: (0..pp).map(|k| k * tp * dp + d * tp + t).collect() };
    [tensor, data, expert, expert_data, pipe]
}

/// Rank `r`'s step, into the builder's current rank, its collectives marked in `timed`;
/// returns the cycles it computes (the layers', not NCCL's latencies).
pub(super) fn emit_rank(
    b: &mut ScheduleBuilder,
    shape: &Shape,
    job: &JobContext,
    channels: u32,
    r: u32,
    mut timed: Option<&mut Timed>,
) -> u64 {
    let mut compute = 0;
    let comms = groups(shape, r);
    let p = shape.coords(r).2;
    // Each group's collectives in order: the same tag on every member.
    let mut tags = [0u32; 4];
    let tasks = shape.tasks(r);
    let mut ends: Vec<Option<OpId>> = Vec::with_capacity(tasks.len());
    for task in &tasks {
        let deps: Vec<OpId> = task.after.iter().filter_map(|&i| ends[i]).collect();
        let after = match deps[..] {
            [] => None,
            [one] => Some(one),
            _ => {
                let join = b.calc(0);
                for &d in &deps {
                    b.requires(join, d);
                }
                Some(join)
            }
        };
        let end = match &task.work {
            Work::Compute(ns) => {
                compute += ns_to_cycles(*ns, job.ps_per_cycle);
                let op = b.calc(*ns);
                if let Some(a) = after {
                    b.requires(op, a);
                }
                Some(op)
            }
            Work::Collective(group, coll, bytes) => {
                let g = group.index();
                let comm = &comms[g];
                let tag = tags[g] & 0xff_ffff;
                tags[g] += 1;
                let me = comm.ranks.iter().position(|&x| x == r).expect("a member");
                let first = b.ops_in_rank();
                let end = emit_nccl_chosen(
                    b,
                    coll.kind(),
                    *bytes,
                    0,
                    job.link_gbs(),
                    channels,
                    job.node_gpus,
                    comm,
                    me,
                    tag,
                    after,
                )
                .expect("NCCL runs every collective of a step");
                if let (Some(timed), Some(end)) = (timed.as_deref_mut(), end) {
                    let phase = || phase(*group, *coll, *bytes, comm.size());
                    timed.mark((comm.id, tag), phase, r as usize, first, end);
                }
                end.or(after)
            }
            Work::P2p(ops) => {
                let ops: Vec<P2p> = ops
                    .iter()
                    .map(|&(stage, bytes, send)| P2p { peer: stage as usize, bytes, send })
                    .collect();
                // NCCL matches a pair's messages in order, untagged: one tag for all.
                emit_nccl_group(b, &ops, &P2pSettings::new(channels), &comms[4], p as usize, 0, after)
                    .or(after)
            }
        };
        ends.push(end);
    }
    let last = b.calc(job.compute * job.ps_per_cycle / 1000); // cycles as ns
    for e in ends.iter().flatten() {
        b.requires(last, *e);
    }
    compute
}

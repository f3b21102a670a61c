//! A job's ops as a GOAL schedule sees them: computations in nanoseconds. The built-in
//! programs compute in cycles (`compute`); written as GOAL, a computation of `c` cycles is
//! the whole number of nanoseconds that lasts `c` cycles again when read back, when there
//! is one (always when a cycle lasts at least a nanosecond).

use super::{CalcUnit, JobOps};
use schedule::{Graph, Op, OpId};

/// A job's graph with its computations in nanoseconds, ready for [`schedule::write_goal`].
pub struct AsGoal<'a> {
    ops: &'a JobOps,
    ps_per_cycle: u64,
}

impl<'a> AsGoal<'a> {
    /// `ops` for a network whose cycle lasts `ps_per_cycle` picoseconds.
    pub fn new(ops: &'a JobOps, ps_per_cycle: u64) -> AsGoal<'a> {
        AsGoal { ops, ps_per_cycle }
    }

    /// The computations whose nanoseconds do not last their cycles again (none when the
    /// job's unit is nanoseconds).
    pub fn inexact(&self) -> u64 {
        if self.ops.unit == CalcUnit::Nanoseconds {
            return 0;
        }
        let g = &*self.ops.graph;
        let mut n = 0;
        for rank in 0..g.num_ranks() {
            // The templates repeat: one iteration's ops are all the kinds there are.
            let first = g.ops_per_iteration(rank);
            n += (0..first)
                .filter(|&op| matches!(g.op(rank, op), Op::Calc { time } if nanoseconds(time, self.ps_per_cycle).1))
                .count() as u64
                * u64::from(g.iterations());
        }
        n
    }
}

/// The whole nanoseconds that last `cycles` cycles of `ps` picoseconds when rounded up to
/// cycles, and whether they fall short (no whole number does: then the nearest below).
fn nanoseconds(cycles: u64, ps: u64) -> (u64, bool) {
    let ns = (u128::from(cycles) * u128::from(ps) / 1000) as u64;
    let back = (u128::from(ns) * 1000).div_ceil(u128::from(ps)) as u64;
    (ns, back != cycles)
}

impl Graph for AsGoal<'_> {
    fn num_ranks(&self) -> u32 {
        self.ops.graph.num_ranks()
    }
    fn ops_in_rank(&self, rank: u32) -> u32 {
        self.ops.graph.ops_in_rank(rank)
    }
    fn op(&self, rank: u32, op: OpId) -> Op {
        match self.ops.graph.op(rank, op) {
            Op::Calc { time } if self.ops.unit == CalcUnit::Cycles => {
                Op::Calc { time: nanoseconds(time, self.ps_per_cycle).0 }
            }
            other => other,
        }
    }
    fn unmet(&self, rank: u32, op: OpId) -> u32 {
        self.ops.graph.unmet(rank, op)
    }
    fn each_after_start(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        self.ops.graph.each_after_start(rank, op, each)
    }
    fn each_after_end(&self, rank: u32, op: OpId, each: &mut dyn FnMut(OpId)) {
        self.ops.graph.each_after_end(rank, op, each)
    }
    fn cpu(&self, rank: u32, op: OpId) -> u8 {
        self.ops.graph.cpu(rank, op)
    }
    fn nic(&self, rank: u32, op: OpId) -> u8 {
        self.ops.graph.nic(rank, op)
    }
}

#[cfg(test)]
mod tests {
    use super::nanoseconds;

    #[test]
    fn cycles_become_nanoseconds_that_last_them_again() {
        // 1.5 ns cycles: 3 cycles are 4.5 ns; 4 ns last ceil(4 / 1.5) = 3 cycles.
        assert_eq!(nanoseconds(3, 1500), (4, false));
        // 0.64 ns cycles: 1000 cycles are 640 ns exactly.
        assert_eq!(nanoseconds(1000, 640), (640, false));
        // 1 cycle of 0.64 ns: 0 ns last 0 cycles, 1 ns lasts 2: no whole number lasts 1.
        assert_eq!(nanoseconds(1, 640), (0, true));
        assert_eq!(nanoseconds(0, 640), (0, false));
    }
}

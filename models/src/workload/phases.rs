//! The collectives of a job that a run times: which op of each rank starts and ends each
//! one ([`Phases`]), described as nccl-tests reports them ([`Phase`]), and the book the
//! kinds keep while they emit their ops ([`PhaseBook`]).

use rustc_hash::FxHashMap;
use schedule::OpId;

/// The collectives of a job's iteration, timed in the run: each from the first member's
/// start to the last member's end.
#[derive(Clone, Debug, Default)]
pub struct Phases {
    /// Per collective of an iteration, in order.
    pub list: Vec<Phase>,
    /// Per rank of the job (before replicas: rank `r` of a copy is `r % ranks`): the ops,
    /// numbered within the iteration, whose start starts a collective ([`PHASE_START`])
    /// or whose end ends it ([`PHASE_END`]), or both.
    pub marks: Vec<PhaseMarks>,
}

/// One rank's marks: op within the iteration -> (collective, [`PHASE_START`] |
/// [`PHASE_END`]).
pub type PhaseMarks = FxHashMap<OpId, (u32, u8)>;

/// A mark of [`Phases::marks`]: the op's start starts its collective.
pub const PHASE_START: u8 = 1;
/// A mark of [`Phases::marks`]: the op's end ends its collective.
pub const PHASE_END: u8 = 2;

/// One timed collective.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// What it is (`allreduce`).
    pub name: String,
    /// nccl-tests' size: the buffer (all-reduce, broadcast, reduce), or each rank's part
    /// times the communicator's ranks (all-gather, reduce-scatter, all-to-all, gather,
    /// scatter).
    pub bytes: u64,
    /// nccl-tests' factor from algorithm to bus bandwidth: `2 (n - 1) / n` for
    /// all-reduce, `(n - 1) / n` for all-gather, reduce-scatter and all-to-all, 1 for
    /// broadcast and reduce.
    pub bus_factor: f64,
}

/// A job's timed collectives as its ops are emitted: each collective (by `key`: its
/// communicator and number, or its index) numbered as the first member emits its part,
/// and each rank's marks.
pub(crate) struct PhaseBook<K> {
    index: FxHashMap<K, u32>,
    /// The collectives and marks so far.
    pub(crate) phases: Phases,
}

impl<K: std::hash::Hash + Eq> PhaseBook<K> {
    /// For a job of `ranks` ranks.
    pub(crate) fn new(ranks: usize) -> PhaseBook<K> {
        let phases = Phases { list: Vec::new(), marks: vec![PhaseMarks::default(); ranks] };
        PhaseBook { index: FxHashMap::default(), phases }
    }

    /// Numbers collective `key` now, whether or not any member marks a part of it.
    pub(crate) fn declare(&mut self, key: K, phase: Phase) {
        let list = &mut self.phases.list;
        self.index.entry(key).or_insert_with(|| {
            list.push(phase);
            list.len() as u32 - 1
        });
    }

    /// Marks `rank`'s part of collective `key`, its ops `first` to `end`; `phase` describes
    /// the collective, the first time.
    pub(crate) fn mark(
        &mut self,
        key: K,
        phase: impl FnOnce() -> Phase,
        rank: usize,
        first: OpId,
        end: OpId,
    ) {
        let list = &mut self.phases.list;
        let i = *self.index.entry(key).or_insert_with(|| {
            list.push(phase());
            list.len() as u32 - 1
        });
        let mine = &mut self.phases.marks[rank];
        mine.insert(first, (i, PHASE_START));
        // A part of one op both starts and ends its collective.
        mine.entry(end).or_insert((i, 0)).1 |= PHASE_END;
    }
}

impl Phases {
    /// The collective op `op` (numbered within its iteration) of `rank` starts or ends,
    /// and how ([`PHASE_START`], [`PHASE_END`]).
    #[inline]
    pub fn mark(&self, rank: u32, op: OpId) -> Option<(u32, u8)> {
        let marks = &self.marks[rank as usize % self.marks.len().max(1)];
        marks.get(&op).copied()
    }
}

//! The GOAL writer: any [`Graph`] (a [`Schedule`], a repeated one written out) as text that [`crate::read_goal`] reads back into an
//! equal schedule, and that LogGOPSim's `txt2bin` accepts when no op has a communicator
//! other than 0 and no `calc` a NIC other than 0 (the two extensions).

use std::io::{self, BufWriter, Write};
use std::path::Path;

#[cfg(doc)]
use crate::graph::Schedule;
use crate::graph::{Graph, Op, Source, TagMatch};

/// Writes `schedule` as GOAL (a [`Schedule`] reads back equal; a graph of iterations reads
/// back as the same ops and dependencies, written out): `num_ranks`, then every rank's block (empty ones too), its
/// ops labelled `l<op number>`, then its dependencies, op after op, `requires` before
/// `irequires`. A send's or receive's tag is always written; `comm`, `cpu` and `nic` only
/// when not 0.
///
/// # Errors
/// When writing to `out` fails.
pub fn write_goal<W: Write>(schedule: &dyn Graph, mut out: W) -> io::Result<()> {
    writeln!(out, "num_ranks {}", schedule.num_ranks())?;
    for rank in 0..schedule.num_ranks() {
        writeln!(out, "\nrank {rank} {{")?;
        for i in 0..schedule.ops_in_rank(rank) {
            write!(out, "l{i}: ")?;
            let comm = match schedule.op(rank, i) {
                Op::Send { to, bytes, tag, comm } => {
                    write!(out, "send {bytes}b to {to} tag {tag}")?;
                    comm
                }
                Op::Recv { from, bytes, tag, comm } => {
                    match from {
                        Source::Rank(r) => write!(out, "recv {bytes}b from {r}")?,
                        Source::Any => write!(out, "recv {bytes}b from -1")?,
                    }
                    match tag {
                        TagMatch::Tag(t) => write!(out, " tag {t}")?,
                        TagMatch::Any => write!(out, " tag -1")?,
                    }
                    comm
                }
                Op::Calc { time } => {
                    write!(out, "calc {time}")?;
                    0
                }
            };
            if comm != 0 {
                write!(out, " comm {comm}")?;
            }
            let (cpu, nic) = (schedule.cpu(rank, i), schedule.nic(rank, i));
            if cpu != 0 {
                write!(out, " cpu {cpu}")?;
            }
            if nic != 0 {
                write!(out, " nic {nic}")?;
            }
            writeln!(out)?;
        }
        let mut dependents = Vec::new();
        for a in 0..schedule.ops_in_rank(rank) {
            for (end, word) in [(true, "requires"), (false, "irequires")] {
                dependents.clear();
                if end {
                    schedule.each_after_end(rank, a, &mut |b| dependents.push(b));
                } else {
                    schedule.each_after_start(rank, a, &mut |b| dependents.push(b));
                }
                for b in &dependents {
                    writeln!(out, "l{b} {word} l{a}")?;
                }
            }
        }
        writeln!(out, "}}")?;
    }
    out.flush()
}

/// Writes `schedule` as GOAL to the file at `path` (see [`write_goal`]).
///
/// # Errors
/// When the file cannot be created or written.
pub fn write_goal_file(schedule: &dyn Graph, path: &Path) -> io::Result<()> {
    write_goal(schedule, BufWriter::new(std::fs::File::create(path)?))
}

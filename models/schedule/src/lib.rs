//! # xnet-schedule: what an application replay replays
//!
//! Each MPI rank of an application is a graph of operations: sends and receives (blocking
//! or not, as the dependencies say), and computations of a given duration. An op may
//! depend on the end of another op of its rank (`requires`) or on its start (`irequires`);
//! receives match sends by communicator, source and tag in MPI's non-overtaking order, with
//! wildcards for any source and any tag. This crate holds that model ([`Schedule`], built
//! with [`ScheduleBuilder`], stored flat: 36 bytes per op, 4 per dependency), its checks
//! ([`Schedule::validate`], [`Schedule::unmatched`]) and the GOAL text format
//! ([`read_goal`], [`write_goal`]), the reader of DUMPI traces ([`dumpi`]), and the writer
//! of traced MPI programs that the DUMPI and OTF2 readers share ([`program`]).
//!
//! GOAL ("Group Operation Assembly Language") is the schedule format of LogGOPSim
//! (T. Hoefler, T. Schneider, A. Lumsdaine, "LogGOPSim – Simulating Large-Scale
//! Applications in the LogGOPS Model", ACM HPDC 2010) and of ATLAHS
//! (S. Shen, T. Bonato, Z. Hu, P. Jordan, T. Chen, T. Hoefler, "ATLAHS: An
//! Application-centric Network Simulator Toolchain for AI, HPC, and Distributed Storage",
//! SC 2025, arXiv:2505.08936), which generate it from traces of applications. Durations of `calc` ops are GOAL's
//! nanoseconds, kept as they are: converting them to cycles is the workload's business.
//!
//! It depends on no other crate of the workspace: the executor (in `xnet-models`) and the
//! collective algorithms that expand into these graphs build on it.
#![warn(missing_docs, unreachable_pub)]

mod byte_error;
pub mod chakra;
mod check;
pub mod collectives;
pub mod dumpi;
pub mod goal;
mod graph;
mod ideal;
mod matching;
pub mod nccl;
pub mod program;
mod repeat;
mod replicas;
mod trace;
mod volume;

pub use byte_error::ByteError;
pub use check::{Mismatch, Problem, Unmatched};
pub use collectives::{emit, select, Collective, Comm};
pub use goal::{read_goal, read_goal_file, write_goal, write_goal_file, GoalError};
pub use graph::{Graph, Op, OpId, Schedule, ScheduleBuilder, Source, TagMatch};
pub use ideal::{run_ideal, run_ideal_until, Ideal, Stuck, StuckRank, Wait};
pub use matching::{Envelope, Matcher, Pattern};
pub use program::{CommIndex, ProgramBuilder, RankWriter};
pub use repeat::Repeated;
pub use replicas::Replicas;
pub use trace::{schedule_of_trace, TraceError};
pub use volume::{send_volume, SendOp, SendVolume};

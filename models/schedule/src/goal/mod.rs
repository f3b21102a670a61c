//! The GOAL text format of LogGOPSim and ATLAHS: reading ([`read_goal`], streamed line by
//! line) and writing ([`write_goal`]); and reading the binary form LogGOPSim's `txt2bin`
//! writes ([`read_goal_binary`]).
//!
//! ```text
//! num_ranks 2
//! rank 0 {
//! l1: send 8b to 1 tag 0
//! l2: calc 100
//! l2 requires l1
//! }
//! rank 1 {
//! l1: recv 8b from 0 tag 0 cpu 0 nic 0
//! }
//! ```
//!
//! The grammar is LogGOPSim's (`src/LogGOPSim/txt2bin.re`): `num_ranks N`, then blocks
//! `rank N { ... }`; in a block one statement a line: `[label:] send Sb to R [tag T] [cpu
//! C] [nic N]`, `[label:] recv Sb from R [tag T] [cpu C] [nic N]` (`-1` for any source or
//! any tag), `[label:] calc T [cpu C]`, `a requires b`, `a irequires b`; `//` and `/* */`
//! comments. Sizes end in `b` (bytes); `calc` times are nanoseconds; a missing tag, cpu or
//! nic is 0; labels are `[a-zA-Z][a-zA-Z0-9_]*`, one namespace per rank.
//!
//! Where this reader differs: a dependency may name a label defined later in its rank
//! (LogGOPSim needs it defined before; both reject a label never defined); a label defined
//! twice is an error (LogGOPSim keeps the first); ranks come in increasing order, each at
//! most once, and ranks without a block are empty; a send's tag cannot be `-1`; numbers
//! must fit (ranks and tags 32 bits, `cpu` and `nic` 8 bits, sizes and times 64 bits);
//! comments may follow a statement on its line. Two extensions, written only when not
//! zero, so that every [`crate::Schedule`] round-trips: `comm C` after the tag of a send or
//! receive (GOAL has one communicator; Schedgen folds communicators into tags) and `nic N`
//! on a `calc`.
//!
//! Checked by hand against LogGOPSim's own `txt2bin` (built from commit 76451de): it
//! converts the writer's output (wildcards, `cpu`, `nic`, `irequires`, empty ranks), and
//! refuses, as documented above, a `calc` with `nic` and a dependency before its labels.

mod binary;
mod error;
mod read;
mod write;

pub use binary::{is_binary_goal, read_goal_binary, BinaryGoalError, MAGIC_COOKIE};
pub use error::GoalError;
pub use read::{read_goal, read_goal_file, MAX_RANKS};
pub use write::{write_goal, write_goal_file};

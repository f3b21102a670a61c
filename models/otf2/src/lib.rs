//! # xnet-otf2: MPI traces in OTF2 as operation graphs
//!
//! OTF2 (the Open Trace Format 2, D. Eschweiler, M. Wagner, M. Geimer, A. Knüpfer,
//! W. E. Nagel, F. Wolf, "Open Trace Format 2: The Next Generation of Scalable Trace
//! Formats and Support Libraries", ParCo 2011) is the trace format of Score-P, which
//! records MPI applications (`scorep mpicc ...`); SST's Ember and Vampir read it. An archive
//! is an anchor file (`traces.otf2`), global definitions (`traces.def`) and per location
//! (thread) its event file (`traces/N.evt`) and local definitions (`traces/N.def`).
//!
//! [`schedule_of_archive`] reads an archive through the OTF2 library (its reader API, bound
//! at build time from the installed headers) and writes each MPI rank's events as
//! [`schedule::ProgramBuilder`] does for every traced program: calls in program order, the
//! time between an MPI call's return and the next call's entry as computation, collectives
//! by MPICH's choice of algorithm. What is OTF2's own:
//!
//! - **Ranks.** The MPI ranks are the members of the MPI `COMM_LOCATIONS` group (member `r`
//!   is the location of rank `r` in `MPI_COMM_WORLD`); other locations (threads, devices)
//!   are not replayed.
//! - **Communicators** are given by the definitions: a `Comm` names a group of world ranks
//!   (`COMM_GROUP`), or the rank itself (`COMM_SELF`). Ranks in events are ranks in their
//!   communicator, or world ranks where the group has the `GLOBAL_MEMBERS` flag.
//! - **Calls** are the regions of paradigm MPI (`Enter`/`Leave`); the message events inside
//!   one call are that call's work. `MpiSend`/`MpiRecv` are blocking; `MpiIsend` and
//!   `MpiIrecvRequest` start non-blocking operations that the call with their
//!   `MpiIsendComplete`/`MpiIrecv` completes. A non-blocking receive's source, tag and size
//!   are recorded only at its completion: the reader fills them in where it was posted.
//! - **Collectives**: OTF2 records one `MpiCollectiveEnd` per rank with the bytes that rank
//!   sent and received in total (Score-P counts them as `N` blocks of the per-rank size for
//!   all-to-all kinds, `N - 1` with `MPI_IN_PLACE`). The per-rank size is the total over
//!   `N` where it divides, else over `N - 1`; irregular collectives (`...v`, `Alltoallw`)
//!   move that mean size to every peer, all at once. Scans are not replayed.
//! - **Time**: timestamps are ticks of the archive's timer (`ClockProperties`), converted
//!   to nanoseconds.
//!
//! Errors name the archive, the rank and the event's position in its location's events
//! (OTF2's event files are read by the library, which reports no byte offsets).
#![warn(missing_docs, unreachable_pub)]

mod convert;
mod error;
mod ffi;
mod reader;

pub use convert::{schedule_of_archive, schedule_of_archive_until};
pub use error::Otf2Error;

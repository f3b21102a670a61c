//! The HDF5 result file: one per run, written by this process alone.
//!
//! Layout (see docs/output-format.md): root attributes describe the run; `/summary` has a
//! row per load point; `/points/NNN` holds one load point: a time series appended while
//! the run goes, histograms, per-endpoint and per-link tables, and attributes. The file is
//! flushed after every time-series row, so a run that dies leaves what it had, with the
//! `status` attribute still saying "running". The file is claimed ([`OutputClaim`]) before
//! it is touched, so that no other run can truncate it while this one writes. An earlier
//! result file at the path stays as it is until the run has something to keep: the new
//! file is written beside it and renamed over it when the first load point finishes
//! ([`OutputClaim::create_staged`], [`ResultFile::publish`]).
//!
//! A full disk must not cost the results already written: HDF5 cannot recover from a
//! write that fails half-way (the file is then unreadable), so every write first checks
//! that the file system and the file-size limit leave room for it (a point's tables as
//! stored, compressed, when their raw size would not fit) and for a reserve
//! ([`Room`](claim::Room)); when they do not, the write is refused with a sentence naming the file, and
//! the reserve is enough to record `status = "failed"` and close the file cleanly.
//!
//! The files: `claim.rs` holds `OutputClaim`, the lock a run takes on its file, and
//! `Room`, the check before every write; `file.rs` the result file as a whole
//! ([`ResultFile`]: the run's attributes, `/summary`, its status); `point.rs` a load
//! point's group (`PointWriter`: its time series, figures and tables), `workload.rs` the
//! point's `workload` group and `census.rs` its `census` group (`--census`); `records.rs`
//! the rows whose columns the result schema declares; `h5.rs` the small writers of
//! attributes and tables; `text.rs` the text files other commands write ([`write_whole`]).

mod census;
mod claim;
mod file;
mod h5;
mod jobs;
mod point;
mod records;
mod text;
mod workload;

pub use claim::OutputClaim;
pub use file::{ResultFile, RunMeta};
pub(crate) use h5::{attr, attr_str, table};
pub(crate) use jobs::print_workloads;
pub(crate) use text::{beside, write_whole};

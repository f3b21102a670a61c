//! The kinds read from files: `goal`, a GOAL schedule, and the MPI traces `dumpi` (SST's
//! DUMPI) and `otf2` (Score-P's OTF2), made a schedule when the configuration is read
//! (`crate::files`) and held once by the process: `contents` records only the schedule's
//! hash. All run once, their computations in nanoseconds.

use super::{parse_as, CalcUnit, JobContext, JobOps, KindError, KindParams, WorkloadEntry};
use base::settings::{read_text, FileError, FileForm, FileKey, Held, Setting, HELD_PREFIX};
use schedule::goal::{is_binary_goal, read_goal_binary};
use schedule::{dumpi, read_goal, schedule_of_trace, write_goal, Graph, Problem, Schedule};
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// `goal` in the workload registry.
pub(super) const GOAL: WorkloadEntry = WorkloadEntry {
    name: "goal",
    doc: "a schedule in GOAL, the text format of LogGOPSim and ATLAHS: per rank its sends, receives and computations (ns) with their dependencies; ATLAHS converts MPI and NCCL traces to it",
    settings: &[
        Setting { key: "file", default: "required", doc: "the GOAL file (`num_ranks N`, then `rank r { ... }` blocks), or its binary form as LogGOPSim's txt2bin writes it (ATLAHS's traces); relative to the working directory, read by the xnet command, which holds it once as a schedule" },
        Setting { key: "contents", default: "from file", doc: "the schedule's text, given instead of file to inline a schedule; when file is given, the xnet command records here the hash of the schedule it read (`held: sha256 ...`), and a recorded configuration reads the file again and refuses it if it changed" },
    ],
    files: &[FileKey { path: "file", contents: "contents", what: "the GOAL schedule", form: FileForm::Held(goal_held) }],
    parse: parse_as::<Goal>,
};

/// The settings of `goal`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Goal {
    /// The file, for messages (its text is in `contents`).
    file: Option<String>,
    /// The schedule's text.
    contents: Option<String>,
}

impl KindParams for Goal {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        schedule_ops("file", self.file.as_deref(), self.contents.as_deref(), 1.0, job)
    }

    fn ops_estimate(&self, _job: &JobContext) -> u64 {
        goal_ops_estimate(self.contents.as_deref())
    }

    fn text_bytes(&self) -> u64 {
        inline_bytes(self.contents.as_deref())
    }
}

/// `dumpi` in the workload registry.
pub(super) const DUMPI: WorkloadEntry = WorkloadEntry {
    name: "dumpi",
    doc: "an MPI trace of SST's DUMPI library (what CODES and sst-macro replay): every rank's calls in order, the time between calls as computation, collectives expanded by MPICH's choice of algorithm",
    settings: &[
        Setting { key: "meta", default: "required", doc: "the trace's .meta file; the rank files (PREFIX-RRRR.bin) are read from its folder; relative to the working directory. The xnet command converts the trace to a schedule it holds once" },
        Setting { key: "contents", default: "from meta", doc: "the record of the trace's schedule (`held: sha256 ...`), filled in by the xnet command: a recorded configuration reads the trace again and refuses it if it changed" },
        Setting { key: "compute_scale", default: "1.0", doc: "factor on the traced computation times (0.5: a processor twice as fast)" },
    ],
    files: &[FileKey { path: "meta", contents: "contents", what: "the DUMPI trace", form: FileForm::Held(dumpi_held) }],
    parse: parse_as::<Dumpi>,
};

/// The settings of `dumpi`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Dumpi {
    /// The `.meta` file, for messages.
    meta: Option<String>,
    /// The trace as GOAL.
    contents: Option<String>,
    /// Factor on the computations.
    #[serde(default = "one")]
    compute_scale: f64,
}

/// `otf2` in the workload registry.
pub(super) const OTF2: WorkloadEntry = WorkloadEntry {
    name: "otf2",
    doc: "an MPI trace in OTF2, Score-P's format (what SST's Ember and Vampir read): every rank's MPI calls in order, the time between calls as computation, collectives expanded by MPICH's choice of algorithm",
    settings: &[
        Setting { key: "archive", default: "required", doc: "the archive's anchor file (traces.otf2, beside its traces/ folder and traces.def); relative to the working directory. The xnet command converts the trace to a schedule it holds once" },
        Setting { key: "contents", default: "from archive", doc: "the record of the trace's schedule (`held: sha256 ...`), filled in by the xnet command: a recorded configuration reads the trace again and refuses it if it changed" },
        Setting { key: "compute_scale", default: "1.0", doc: "factor on the traced computation times (0.5: a processor twice as fast)" },
    ],
    files: &[FileKey { path: "archive", contents: "contents", what: "the OTF2 archive", form: FileForm::Held(otf2_held) }],
    parse: parse_as::<Otf2>,
};

/// The settings of `otf2`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Otf2 {
    /// The anchor file, for messages.
    archive: Option<String>,
    /// The trace as GOAL.
    contents: Option<String>,
    /// Factor on the computations.
    #[serde(default = "one")]
    compute_scale: f64,
}

impl KindParams for Otf2 {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        check_scale(self.compute_scale)?;
        schedule_ops("archive", self.archive.as_deref(), self.contents.as_deref(), self.compute_scale, job)
    }

    fn ops_estimate(&self, _job: &JobContext) -> u64 {
        goal_ops_estimate(self.contents.as_deref())
    }

    fn text_bytes(&self) -> u64 {
        inline_bytes(self.contents.as_deref())
    }
}

/// About how many ops `contents` holds: a held schedule's ops, or the GOAL text's lines
/// that are not dependencies (`requires`), rank headers or closing braces.
pub(super) fn goal_ops_estimate(contents: Option<&str>) -> u64 {
    let Some(text) = contents else { return 0 };
    if let Some(schedule) = held_schedule(text) {
        return ops_in(&schedule);
    }
    text.lines()
        .filter(|l| {
            let l = l.trim_start();
            !(l.is_empty()
                || l.starts_with('}')
                || l.starts_with("rank")
                || l.starts_with("num_ranks")
                || l.contains("requires"))
        })
        .count() as u64
}

/// The ops of every rank of `schedule`.
pub(super) fn ops_in(schedule: &Schedule) -> u64 {
    (0..schedule.num_ranks()).map(|r| u64::from(schedule.ops_in_rank(r))).sum()
}

/// Bytes of schedule text `contents` holds: none for a held schedule's record.
pub(super) fn inline_bytes(contents: Option<&str>) -> u64 {
    contents.filter(|c| !c.starts_with(HELD_PREFIX)).map_or(0, |c| c.len() as u64)
}

/// The schedule the process holds under the record `contents`, if it is one it holds.
fn held_schedule(contents: &str) -> Option<Arc<Schedule>> {
    if !contents.starts_with(HELD_PREFIX) {
        return None;
    }
    base::settings::held::<Schedule>(contents)
}

/// `schedule`, to be held by the process, with its record ([`schedule_record`]).
pub(super) fn hold_schedule(schedule: Schedule) -> Held {
    Held { record: schedule_record(&schedule), value: Arc::new(schedule) }
}

/// What records `schedule` in a job's `contents`: the SHA-256 of the schedule as GOAL text
/// (what `xnet workload export` writes of it), and its size.
pub(super) fn schedule_record(schedule: &Schedule) -> String {
    let mut hash = Sha256::new();
    write_goal(schedule, &mut hash).expect("hashing cannot fail");
    let hex: String = hash.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{HELD_PREFIX}sha256 {hex} of the schedule as GOAL text, {} ops on {} ranks",
        ops_in(schedule),
        schedule.num_ranks()
    )
}

/// A factor on computation times: finite and not negative.
pub(super) fn check_scale(scale: f64) -> Result<(), KindError> {
    if scale >= 0.0 && scale.is_finite() {
        Ok(())
    } else {
        Err(KindError::new("compute_scale", format!("must be a factor >= 0, got {scale}")))
    }
}

pub(super) fn one() -> f64 {
    1.0
}

impl KindParams for Dumpi {
    fn ops(&self, job: &JobContext) -> Result<JobOps, KindError> {
        check_scale(self.compute_scale)?;
        schedule_ops("meta", self.meta.as_deref(), self.contents.as_deref(), self.compute_scale, job)
    }

    fn ops_estimate(&self, _job: &JobContext) -> u64 {
        goal_ops_estimate(self.contents.as_deref())
    }

    fn text_bytes(&self) -> u64 {
        inline_bytes(self.contents.as_deref())
    }
}

/// A schedule's text as the GOAL reader reads it, which fails ("interrupted") once a stop
/// is asked for ([`base::cancel`]): a large schedule takes seconds to read.
struct UntilStopped<'a> {
    text: &'a [u8],
}

impl std::io::Read for UntilStopped<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = std::io::BufRead::fill_buf(self)?.len().min(out.len());
        out[..n].copy_from_slice(&self.text[..n]);
        self.text = &self.text[n..];
        Ok(n)
    }
}

impl std::io::BufRead for UntilStopped<'_> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if base::cancel::requested() {
            // Not ErrorKind::Interrupted, which readers retry.
            return Err(std::io::Error::other("interrupted"));
        }
        Ok(&self.text[..self.text.len().min(1 << 16)])
    }

    fn consume(&mut self, n: usize) {
        self.text = &self.text[n..];
    }
}

/// The ops of a schedule given as GOAL `contents` (read from the file `file`, named by the
/// job's key `key`), its computations times `scale`: it runs once.
pub(super) fn schedule_ops(
    key: &'static str,
    file: Option<&str>,
    contents: Option<&str>,
    scale: f64,
    job: &JobContext,
) -> Result<JobOps, KindError> {
    runs_once(job)?;
    let Some(text) = contents else {
        return Err(KindError::new(key, "missing: give the file (or its text as contents)"));
    };
    let name = file.unwrap_or("contents");
    let schedule = match held_schedule(text) {
        Some(held) => held,
        None if text.starts_with(HELD_PREFIX) => {
            return Err(KindError::new(
                "contents",
                format!(
                    "`{text}` records a schedule this process does not hold: name the file in {key} \
                     (the xnet command reads it), or give the schedule's text"
                ),
            ))
        }
        None => Arc::new(
            read_goal(UntilStopped { text: text.as_bytes() }, name)
                .map_err(|e| KindError::new(key, e.to_string()))?,
        ),
    };
    ops_of_schedule(key, name, schedule, scale)
}

/// A schedule or trace runs once, with the computations it has.
pub(super) fn runs_once(job: &JobContext) -> Result<(), KindError> {
    if job.iterations != 1 {
        return Err(KindError::new("iterations", "a schedule or trace runs once: leave iterations at 1"));
    }
    if job.compute != 0 {
        return Err(KindError::new(
            "compute",
            "a schedule or trace has its computations in it: leave compute at 0",
        ));
    }
    Ok(())
}

/// The ops of `schedule` (from `name`, named by the job's key `key`), its computations
/// times `scale`.
pub(super) fn ops_of_schedule(
    key: &'static str,
    name: &str,
    schedule: Arc<Schedule>,
    scale: f64,
) -> Result<JobOps, KindError> {
    // A peer that does not exist cannot be run; cycles and messages nobody sends can, and
    // end in a diagnosis of the ranks that wait.
    if let Some(p) = schedule.validate().into_iter().find(|p| matches!(p, Problem::PeerOutOfRange { .. })) {
        return Err(KindError::new(key, format!("{name}: {}", p.describe(&schedule))));
    }
    // Scaled, the job has its own copy; otherwise it shares the one the process holds.
    let graph: Arc<dyn Graph> = if scale != 1.0 {
        Arc::new(Schedule::clone(&schedule).map_calc(|t| (t as f64 * scale).round() as u64))
    } else {
        schedule
    };
    Ok(JobOps { graph, steps_per_iteration: 1, unit: CalcUnit::Nanoseconds, phases: None, compute: None })
}

/// The GOAL schedule at `path`, held: a text file, or a binary one (LogGOPSim's
/// `txt2bin`, ATLAHS's published traces).
fn goal_held(
    path: &str,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    _setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Held, FileError> {
    let bytes = read(path).map_err(|error| FileError::Unreadable { path: path.to_string(), error })?;
    let schedule = if is_binary_goal(&bytes) {
        read_goal_binary(&bytes, path).map_err(|e| FileError::Invalid(e.to_string()))?
    } else {
        if let Err(e) = std::str::from_utf8(&bytes) {
            return Err(FileError::Unreadable {
                path: path.to_string(),
                error: format!("not UTF-8 text (byte {}) nor binary GOAL", e.valid_up_to()),
            });
        }
        read_goal(UntilStopped { text: &bytes }, path).map_err(|e| FileError::Invalid(e.to_string()))?
    };
    Ok(hold_schedule(schedule))
}

/// The DUMPI trace whose `.meta` file is `path` (the rank files beside it, named by the
/// `.meta` file) as a schedule, held.
fn dumpi_held(
    path: &str,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    _setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Held, FileError> {
    let meta =
        dumpi::parse_meta(&read_text(read, path)?, path).map_err(|e| FileError::Invalid(e.to_string()))?;
    // The rank files are named relative to the .meta file's folder.
    let folder = path.rfind('/').map_or("", |i| &path[..=i]);
    let ranks = (0..meta.ranks)
        .map(|r| {
            let rank_path = format!("{folder}{}", meta.rank_file(r));
            // Named from the .meta file: say so, for a wrong numprocs or prefix.
            let bytes = read(&rank_path).map_err(|e| FileError::Unreadable {
                error: format!(
                    "{e} (the rank file of rank {r}: {path} gives numprocs = {} and fileprefix = {}, \
                     read from its folder)",
                    meta.ranks, meta.prefix
                ),
                path: rank_path.clone(),
            })?;
            dumpi::parse_rank(&bytes, &rank_path, r).map_err(|e| FileError::Invalid(e.to_string()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let schedule = schedule_of_trace(&ranks, 1.0).map_err(|e| FileError::Invalid(format!("{path}: {e}")))?;
    Ok(hold_schedule(schedule))
}

/// The OTF2 archive whose anchor file is `path` as a schedule, held. The anchor is read
/// with `read` for the same error as any file's when it is missing; the OTF2 library then
/// reads the archive itself.
fn otf2_held(
    path: &str,
    read: &dyn Fn(&str) -> Result<Vec<u8>, String>,
    _setting: &dyn Fn(&str) -> Option<String>,
) -> Result<Held, FileError> {
    read(path).map_err(|error| FileError::Unreadable { path: path.to_string(), error })?;
    Ok(hold_schedule(otf2_schedule(path).map_err(FileError::Invalid)?))
}

/// The schedule of the OTF2 archive whose anchor is `path`.
#[cfg(feature = "otf2")]
fn otf2_schedule(path: &str) -> Result<Schedule, String> {
    otf2::schedule_of_archive_until(path, 1.0, &base::cancel::requested).map_err(|e| e.to_string())
}

#[cfg(not(feature = "otf2"))]
fn otf2_schedule(path: &str) -> Result<Schedule, String> {
    Err(format!(
        "{path}: this xnet was built without OTF2 support: install the OTF2 library \
         (scripts/bootstrap.sh) and build with the default features"
    ))
}

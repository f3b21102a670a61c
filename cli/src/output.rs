//! The HDF5 result file: one per run, written by this process alone.
//!
//! Layout (see docs/output-format.md): root attributes describe the run; `/summary` has a
//! row per load point; `/points/NNN` holds one load point: a time series appended while
//! the run goes, histograms, per-endpoint and per-link tables, and attributes. The file is
//! flushed after every time-series row, so a run that dies leaves what it had, with the
//! `status` attribute still saying "running". The file is claimed ([`OutputClaim`]) before
//! it is touched, so that no other run can truncate it while this one writes.
//!
//! A full disk must not cost the results already written: HDF5 cannot recover from a
//! write that fails half-way (the file is then unreadable), so every write first checks
//! that the file system and the file-size limit leave room for it and for a reserve
//! ([`Room`]); when they do not, the write is refused with a sentence naming the file, and
//! the reserve is enough to record `status = "failed"` and close the file cleanly.

use anyhow::{Context, Result};
use hdf5::types::{CompoundField, CompoundType, FloatSize, IntSize, TypeDescriptor, VarLenUnicode};
use hdf5::{Dataset, Extent, File, Group, H5Type, Location};
use models::sim::schema::{self, Kind, RowLayout, Value};
use models::sim::{RankModel, RunResult, Sample, Summary, WorkloadResult};
use std::fs::{File as OsFile, OpenOptions, TryLockError};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The first bytes of an HDF5 file (without a user block, as xnet and h5py write them).
const HDF5_SIGNATURE: &[u8; 8] = b"\x89HDF\r\n\x1a\n";

/// What every write leaves free: room for the final status and the metadata HDF5 writes
/// when the file is flushed and closed.
const RESERVE: u64 = 1 << 20;

/// The room left to grow one output file.
#[derive(Clone)]
pub struct Room {
    path: PathBuf,
}

impl Room {
    /// The room of the file at `path`.
    pub fn new(path: &Path) -> Self {
        Self { path: path.to_path_buf() }
    }

    /// Bytes the file may still grow by, and what limits it: the free space of its file
    /// system (for this user), or the file-size limit (`ulimit -f`) less its size.
    fn left(&self) -> Option<(u64, &'static str)> {
        let mut limits: Vec<(u64, &'static str)> = Vec::new();
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) {
            // SAFETY: `c` is a valid C string and statvfs only fills `st`.
            let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
            if unsafe { libc::statvfs(c.as_ptr(), &mut st) } == 0 {
                limits.push((st.f_bavail as u64 * st.f_frsize as u64, "free space on its file system"));
            }
        }
        let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes into the struct it is given.
        if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } == 0
            && limit.rlim_cur != libc::RLIM_INFINITY
        {
            let size = std::fs::metadata(&self.path).map_or(0, |m| m.len());
            limits.push((limit.rlim_cur.saturating_sub(size), "room under the file-size limit (ulimit -f)"));
        }
        limits.into_iter().min_by_key(|l| l.0)
    }

    /// Fails, saying why, unless `bytes` more can be written and the reserve still kept.
    pub fn check(&self, bytes: u64) -> Result<()> {
        match self.left() {
            Some((left, what)) if left < bytes + RESERVE => anyhow::bail!(
                "the file cannot grow: {} left ({what}), and this write needs {} besides the {} \
                 kept free to close the file cleanly; the results written so far are kept",
                models::memory::human(left),
                models::memory::human(bytes),
                models::memory::human(RESERVE)
            ),
            _ => Ok(()),
        }
    }
}

/// An output file held for this process: an exclusive lock on the file itself, taken
/// before anything truncates it and kept until the claim is dropped. A second run (or a
/// program reading the file with HDF5's own locking) cannot then truncate or replace it.
///
/// The lock is `flock`, which HDF5 also uses: files are therefore created with HDF5's
/// own locking off, the claim standing in for it. On NFS the kernel maps `flock` to
/// POSIX locks, so the claim holds across nodes too.
pub struct OutputClaim {
    path: PathBuf,
    lock: OsFile,
    /// The claim made the file, and nothing has been written to it yet: dropping the
    /// claim removes it, so that a run that fails before writing leaves no empty file.
    unused_new_file: bool,
}

impl OutputClaim {
    /// Claims `path` for writing. Refuses, naming the file and the reason, when `path`
    /// is one of `inputs` (e.g. `-o` naming the configuration), when it exists and is not
    /// an HDF5 file (xnet replaces only files of its own kind), or when another process
    /// holds it. Nothing is truncated here.
    pub fn take(path: &Path, inputs: &[&Path]) -> Result<Self> {
        let existing = std::fs::metadata(path).ok();
        if let Some(out) = &existing {
            for input in inputs {
                if std::fs::metadata(input).is_ok_and(|i| i.dev() == out.dev() && i.ino() == out.ino()) {
                    anyhow::bail!(
                        "output file {} is the input configuration {}: choose another -o",
                        path.display(),
                        input.display()
                    );
                }
            }
        }
        let mut lock = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .with_context(|| format!("cannot open output file {}", path.display()))?;
        let mut head = Vec::with_capacity(8);
        (&mut lock)
            .take(8)
            .read_to_end(&mut head)
            .with_context(|| format!("cannot read output file {}", path.display()))?;
        if !head.is_empty() && head != HDF5_SIGNATURE {
            anyhow::bail!(
                "output file {} exists and is not an HDF5 file: xnet replaces only HDF5 files; \
                 remove it or choose another -o",
                path.display()
            );
        }
        match lock.try_lock() {
            Ok(()) => Ok(Self { path: path.to_path_buf(), lock, unused_new_file: existing.is_none() }),
            Err(TryLockError::WouldBlock) => anyhow::bail!(
                "output file {} is in use by another process (another xnet run writing it, or a \
                 program reading it): it was left as it is; wait for that run or choose another -o",
                path.display()
            ),
            Err(TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock output file {}", path.display()))
            }
        }
    }

    /// The claimed path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Creates the HDF5 file (replacing what was there), under the claim.
    pub fn create(&mut self) -> Result<File> {
        self.unused_new_file = false;
        File::with_options()
            .with_fapl(|p| p.file_locking(false))
            .create(&self.path)
            .with_context(|| format!("cannot create output file {}", self.path.display()))
    }
}

impl Drop for OutputClaim {
    fn drop(&mut self) {
        if self.unused_new_file {
            // Still under the lock, so no other run can have taken the file meanwhile.
            let _ = std::fs::remove_file(&self.path);
        }
        let _ = self.lock.unlock();
    }
}

/// A row of a table whose columns the result schema declares (`/summary`,
/// `/points/NNN/timeseries`: `models::sim::schema`), as the schema's bytes; its HDF5 type
/// is built from the schema's layout, so nothing here lists the columns.
macro_rules! schema_record {
    ($(#[doc = $doc:literal])* $name:ident, $bytes:expr, $layout:expr) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy)]
        #[repr(transparent)]
        struct $name([u8; $bytes]);

        // Safety: the descriptor lists the fields at the offsets the schema writes them to,
        // within the record's size.
        unsafe impl H5Type for $name {
            fn type_descriptor() -> TypeDescriptor {
                compound(&$layout)
            }
        }

        impl $name {
            fn new(bytes: Vec<u8>) -> Self {
                Self(bytes.try_into().expect("the schema's row size"))
            }
        }
    };
}

schema_record!(
    /// One row of `/summary`.
    SummaryRecord,
    schema::SUMMARY_ROW_BYTES,
    RowLayout::of(&schema::summary_columns())
);
schema_record!(
    /// One row of `/points/NNN/timeseries`.
    SeriesRecord,
    schema::SERIES_ROW_BYTES,
    RowLayout::of(schema::SERIES.iter().map(|c| &c.field))
);

/// The HDF5 compound type of a schema row.
fn compound(layout: &RowLayout) -> TypeDescriptor {
    let fields = layout
        .columns
        .iter()
        .enumerate()
        .map(|(index, &(name, kind, offset))| CompoundField {
            name: name.to_string(),
            ty: match kind {
                Kind::Count => TypeDescriptor::Unsigned(IntSize::U8),
                Kind::Index | Kind::Flag => TypeDescriptor::Unsigned(IntSize::U4),
                Kind::Real => TypeDescriptor::Float(FloatSize::U8),
            },
            offset,
            index,
        })
        .collect();
    TypeDescriptor::Compound(CompoundType { fields, size: layout.size })
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct HistRow {
    low: u64,
    count: u64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct EndpointRow {
    endpoint: u32,
    switch: u32,
    generated_phits: u64,
    accepted_phits: u64,
    offered_load: f64,
    accepted_load: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct CompletionRow {
    endpoint: u32,
    switch: u32,
    send_finish: u64,
    receive_finish: u64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct JobRow {
    job: u32,
    ranks: u32,
    iterations: u32,
    steps_per_iteration: u32,
    finished: u64,
    completion_time: u64,
    messages: u64,
    packets_sent: u64,
    packets_received: u64,
    message_latency_mean: f64,
    message_latency_p50: f64,
    message_latency_p99: f64,
    message_latency_max: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct IterationRow {
    iteration: u64,
    end: u64,
    mean_end: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct RankRow {
    rank: u64,
    endpoint: u32,
    switch: u32,
    finish: u64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct StalledRow {
    job: u32,
    rank: u32,
    step: u32,
    received: u32,
    expected: u32,
    unsent: u32,
    computing: u32,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct LinkRow {
    switch: u32,
    port: u32,
    class: u32,
    peer_switch: u32,
    phits: u64,
    utilisation: f64,
}

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
struct BlockedRow {
    switch: u32,
    port: u32,
    vc: u32,
    packets: u32,
    wants_port: u32,
    wants_vc: u32,
}

pub(crate) fn attr_str(loc: &Location, name: &str, value: &str) -> Result<()> {
    let v: VarLenUnicode = value.parse().map_err(|e| anyhow::anyhow!("attribute {name}: {e:?}"))?;
    if loc.attr(name).is_ok() {
        loc.delete_attr(name)?;
    }
    loc.new_attr::<VarLenUnicode>().create(name)?.write_scalar(&v)?;
    Ok(())
}

pub(crate) fn attr<T: H5Type>(loc: &Location, name: &str, value: T) -> Result<()> {
    if loc.attr(name).is_ok() {
        loc.delete_attr(name)?;
    }
    loc.new_attr::<T>().create(name)?.write_scalar(&value)?;
    Ok(())
}

pub(crate) fn attr_vec<T: H5Type>(loc: &Location, name: &str, values: &[T]) -> Result<()> {
    if loc.attr(name).is_ok() {
        loc.delete_attr(name)?;
    }
    loc.new_attr::<T>().shape(values.len()).create(name)?.write(values)?;
    Ok(())
}

pub(crate) fn table<T: H5Type>(group: &Group, name: &str, rows: &[T]) -> Result<Dataset> {
    let chunk = rows.len().clamp(1, 65536);
    let ds = group
        .new_dataset::<T>()
        .chunk(chunk)
        .deflate(4)
        .shape(rows.len())
        .create(name)
        .with_context(|| format!("creating dataset {name}"))?;
    if !rows.is_empty() {
        ds.write(rows)?;
    }
    Ok(ds)
}

/// Run-level facts stored as root attributes.
pub struct RunMeta<'a> {
    /// The command line.
    pub command: &'a str,
    /// Threads per rank.
    pub threads: u32,
    /// MPI ranks.
    pub ranks: u32,
    /// The memory estimate per rank, in bytes.
    pub memory_estimate: u64,
}

/// The result file of one run or sweep.
pub struct ResultFile {
    file: File,
    room: Room,
    summary_rows: Vec<SummaryRecord>,
    /// Held until the file is closed (declared after `file`, so dropped after it).
    _claim: OutputClaim,
}

impl ResultFile {
    /// Creates the claimed file (replacing it) and writes the run's description.
    pub fn create(mut claim: OutputClaim, sim: &RankModel, meta: &RunMeta<'_>) -> Result<Self> {
        let room = Room::new(claim.path());
        room.check(64 << 10)?;
        let file = claim.create()?;
        let cfg = &sim.config;
        let net = &sim.info;
        attr_str(&file, "xnet_version", env!("CARGO_PKG_VERSION"))?;
        attr_str(&file, "format", "xnet-results-1")?;
        attr_str(&file, "status", "running")?;
        attr_str(&file, "config", &cfg.text)?;
        attr_str(&file, "command", meta.command)?;
        attr(&file, "seed", cfg.simulation.seed)?;
        attr(&file, "threads", meta.threads)?;
        attr(&file, "ranks", meta.ranks)?;
        attr(&file, "memory_estimate_bytes", meta.memory_estimate)?;
        attr_str(&file, "topology", &net.name)?;
        attr(&file, "switches", net.switches as u64)?;
        attr(&file, "endpoints", net.endpoints as u64)?;
        attr_str(&file, "routing", sim.routes().name)?;
        attr(&file, "cycles", cfg.simulation.cycles)?;
        attr(&file, "warmup", cfg.simulation.warmup)?;
        attr(&file, "sample_period", cfg.sample_period())?;
        attr(&file, "packet_size", cfg.router.packet_size as u64)?;
        attr(&file, "routing_build_seconds", sim.routing_build_seconds)?;
        file.create_group("points")?;
        file.flush()?;
        Ok(Self { file, room, summary_rows: Vec::new(), _claim: claim })
    }

    /// Records the partition used.
    pub fn write_partition(&self, plan: &partitioner::Plan) -> Result<()> {
        attr_str(&self.file, "partition_method", &format!("{:?}", plan.method).to_lowercase())?;
        attr(&self.file, "partitions", plan.parts)?;
        attr(&self.file, "partition_imbalance", plan.imbalance)?;
        attr(&self.file, "partition_cut_links", plan.cut_edges)?;
        attr(&self.file, "lookahead", plan.lookahead.unwrap_or(0))?;
        attr(&self.file, "partition_expected_messages_per_window", plan.expected_messages_per_window)?;
        attr_vec(&self.file, "partition_weights", &plan.part_weights)?;
        Ok(())
    }

    /// Starts load point `index`.
    pub fn point(&self, index: usize, load: f64) -> Result<PointWriter> {
        self.room.check(64 << 10)?;
        let group = self.file.group("points")?.create_group(&format!("{index:03}"))?;
        attr(&group, "load", load)?;
        attr_str(&group, "status", "running")?;
        let timeseries = group
            .new_dataset::<SeriesRecord>()
            .chunk(256)
            .shape(Extent::resizable(0))
            .create("timeseries")?;
        Ok(PointWriter { file: self.file.clone(), room: self.room.clone(), group, timeseries, rows: 0 })
    }

    /// Adds the point's row to `/summary` (rewritten each time, so it is always complete).
    pub fn add_summary(&mut self, index: usize, r: &RunResult) -> Result<()> {
        let completed = r.status == models::sim::Status::Completed;
        self.summary_rows.push(SummaryRecord::new(schema::summary_row(index, completed, &r.summary)));
        self.room.check((self.summary_rows.len() * std::mem::size_of::<SummaryRecord>()) as u64)?;
        if self.file.link_exists("summary") {
            self.file.unlink("summary")?;
        }
        table(&self.file, "summary", &self.summary_rows)?;
        self.file.flush()?;
        Ok(())
    }

    /// Sets the run's final status ("completed", "deadlock", "interrupted", "failed").
    pub fn set_status(&self, status: &str, message: &str) -> Result<()> {
        attr_str(&self.file, "status", status)?;
        attr_str(&self.file, "status_message", message)?;
        self.file.flush()?;
        Ok(())
    }

    /// Records a write that failed: `status = "failed"` with the cause (best effort: the
    /// room check keeps a reserve for it), and returns the error naming the file.
    pub fn fail(&self, e: anyhow::Error) -> anyhow::Error {
        let _ = self.set_status("failed", &format!("{e:#}"));
        e.context(format!("writing {}", self.room.path.display()))
    }

    /// Records total wall-clock time and the peak resident memory of every rank.
    pub fn set_resources(&self, seconds: f64, rank_peak_rss_bytes: &[u64]) -> Result<()> {
        attr(&self.file, "wall_seconds", seconds)?;
        attr(&self.file, "peak_rss_bytes", rank_peak_rss_bytes.iter().copied().max().unwrap_or(0))?;
        attr_vec(&self.file, "rank_peak_rss_bytes", rank_peak_rss_bytes)?;
        Ok(())
    }
}

/// Writes one load point.
pub struct PointWriter {
    file: File,
    room: Room,
    group: Group,
    timeseries: Dataset,
    rows: usize,
}

impl PointWriter {
    /// Appends a time-series row and flushes the file.
    pub fn append(&mut self, s: &Sample) -> Result<()> {
        let row = SeriesRecord::new(schema::series_row(s));
        // A new chunk of rows at most.
        self.room.check(256 * std::mem::size_of::<SeriesRecord>() as u64)?;
        self.timeseries.resize(self.rows + 1)?;
        self.timeseries.write_slice(&[row], self.rows..self.rows + 1)?;
        self.rows += 1;
        self.file.flush()?;
        Ok(())
    }

    /// Writes the point's final tables and attributes.
    pub fn finish(&self, sim: &RankModel, r: &RunResult) -> Result<()> {
        let g = &self.group;
        let net = &sim.info;
        let tables = net.endpoints * std::mem::size_of::<EndpointRow>()
            + r.links.len() * std::mem::size_of::<LinkRow>()
            + r.blocked.len() * std::mem::size_of::<BlockedRow>()
            + r.vc_phits.len() * 8;
        self.room.check(tables as u64 + (64 << 10))?;
        attr_str(g, "status", r.status.as_str())?;
        attr(g, "time_reached", r.time)?;
        for (field, value) in Summary::FIELDS.iter().zip(r.summary.values()) {
            match value {
                Value::Count(v) => attr(g, field.name, v)?,
                Value::Real(v) => attr(g, field.name, v)?,
                Value::Flag(v) => attr(g, field.name, u64::from(v))?,
            }
        }
        // Wall-clock and engine figures: the only attributes that differ between thread
        // counts of the same run.
        attr(g, "wall_seconds", r.wall_seconds)?;
        attr(g, "packet_hops", r.packet_hops)?;
        attr(g, "packet_hops_per_second", r.packet_hops as f64 / r.wall_seconds.max(1e-9))?;
        let ranks = &r.engine;
        let flat =
            |f: &dyn Fn(&engine::RunStats) -> Vec<f64>| -> Vec<f64> { ranks.iter().flat_map(f).collect() };
        attr(g, "windows", ranks.first().map_or(0, |e| e.windows))?;
        attr(g, "lookahead", ranks.first().and_then(|e| e.lookahead).unwrap_or(0))?;
        attr(g, "ranks", ranks.len() as u64)?;
        let ids: Vec<u64> = ranks.iter().flat_map(|e| e.partitions.iter().map(|&p| p as u64)).collect();
        attr_vec(g, "partition_ids", &ids)?;
        let events: Vec<u64> = ranks.iter().flat_map(|e| e.events.clone()).collect();
        attr_vec(g, "partition_events", &events)?;
        attr_vec(g, "partition_compute_seconds", &flat(&|e| e.compute_seconds.clone()))?;
        attr_vec(g, "partition_sync_seconds", &flat(&|e| e.sync_seconds.clone()))?;
        let boundary: Vec<u64> = ranks.iter().flat_map(|e| e.boundary_messages.clone()).collect();
        attr_vec(g, "partition_boundary_messages", &boundary)?;
        attr_vec(g, "rank_exchange_seconds", &flat(&|e| vec![e.exchange_seconds]))?;
        let sent: Vec<u64> = ranks.iter().map(|e| e.rank_messages_sent).collect();
        attr_vec(g, "rank_messages_sent", &sent)?;
        let bytes: Vec<u64> = ranks.iter().map(|e| e.rank_bytes_sent).collect();
        attr_vec(g, "rank_bytes_sent", &bytes)?;

        let hist = |h: &models::stats::Histogram| -> Vec<HistRow> {
            h.buckets().map(|(low, count)| HistRow { low, count }).collect()
        };
        table(g, "latency_histogram", &hist(&r.latency))?;
        table(g, "network_latency_histogram", &hist(&r.network_latency))?;
        table(g, "hops_histogram", &hist(&r.hops))?;
        let cycles = (r.time.min(sim.config.simulation.cycles).saturating_sub(sim.config.simulation.warmup))
            .max(1) as f64;
        let endpoints: Vec<EndpointRow> = (0..net.endpoints)
            .map(|e| EndpointRow {
                endpoint: e as u32,
                switch: sim.endpoints.locate(e as u32).0,
                generated_phits: r.endpoint_generated[e],
                accepted_phits: r.endpoint_accepted[e],
                offered_load: r.endpoint_generated[e] as f64 / cycles,
                accepted_load: r.endpoint_accepted[e] as f64 / cycles,
            })
            .collect();
        table(g, "endpoints", &endpoints)?;
        let links: Vec<LinkRow> = r
            .links
            .iter()
            .map(|l| LinkRow {
                switch: l.switch,
                port: l.port as u32,
                class: l.class as u32,
                peer_switch: l.peer,
                phits: l.phits,
                utilisation: l.phits as f64 / cycles,
            })
            .collect();
        table(g, "links", &links)?;
        let classes: Vec<String> = net.link_classes.iter().map(|c| c.name.clone()).collect();
        attr_str(g, "link_class_names", &classes.join(","))?;
        table(g, "vc_phits", &r.vc_phits)?;
        let blocked: Vec<BlockedRow> = r
            .blocked
            .iter()
            .map(|b| BlockedRow {
                switch: b.switch,
                port: b.port as u32,
                vc: b.vc as u32,
                packets: b.packets,
                wants_port: b.wants_port as u32,
                wants_vc: b.wants_vc as u32,
            })
            .collect();
        table(g, "blocked_channels", &blocked)?;
        if let Some(c) = &r.completion {
            attr(g, "phits_per_endpoint", c.phits_per_endpoint)?;
            attr(g, "all_delivered", u64::from(c.all_delivered))?;
            attr(g, "completion_time", c.time)?;
            let stragglers: Vec<u64> = c.stragglers(STRAGGLERS).iter().map(|&(e, _)| e as u64).collect();
            attr_vec(g, "stragglers", &stragglers)?;
            let rows: Vec<CompletionRow> = (0..net.endpoints)
                .map(|e| CompletionRow {
                    endpoint: e as u32,
                    switch: sim.endpoints.locate(e as u32).0,
                    send_finish: c.source_finish[e],
                    receive_finish: c.receive_finish[e],
                })
                .collect();
            table(g, "completion", &rows)?;
        }
        if let Some(w) = &r.workload {
            write_workload(g, sim, w, r.summary.in_flight_end, &hist)?;
        }
        self.file.flush()?;
        Ok(())
    }
}

/// A point's `workload` group: one row per job in `jobs`, and per job `job_NNN` with its
/// iterations, its ranks' finish times and its message latency histogram.
fn write_workload(
    g: &Group,
    sim: &RankModel,
    w: &WorkloadResult,
    in_flight: u64,
    hist: &dyn Fn(&models::stats::Histogram) -> Vec<HistRow>,
) -> Result<()> {
    let wg = g.create_group("workload")?;
    let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
    let kinds: Vec<&str> = w.jobs.iter().map(|j| j.kind).collect();
    attr_str(&wg, "job_names", &names.join(","))?;
    attr_str(&wg, "job_kinds", &kinds.join(","))?;
    attr(&wg, "finished", u64::from(w.finished()))?;
    attr_str(&wg, "diagnosis", &w.diagnosis(in_flight).unwrap_or_default())?;
    let rows: Vec<JobRow> = w
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| JobRow {
            job: i as u32,
            ranks: j.ranks,
            iterations: j.iterations,
            steps_per_iteration: j.steps_per_iteration,
            finished: u64::from(j.completion_time.is_some()),
            completion_time: j.completion_time.unwrap_or(0),
            messages: j.messages,
            packets_sent: j.packets_sent,
            packets_received: j.packets_received,
            message_latency_mean: j.message_latency.mean(),
            message_latency_p50: j.message_latency.quantile(0.5),
            message_latency_p99: j.message_latency.quantile(0.99),
            message_latency_max: j.message_latency.max() as f64,
        })
        .collect();
    table(&wg, "jobs", &rows)?;
    let workload = sim.workload().expect("a workload result comes from a workload");
    for (i, (j, built)) in w.jobs.iter().zip(&workload.jobs).enumerate() {
        let jg = wg.create_group(&format!("job_{i:03}"))?;
        attr_str(&jg, "name", &j.name)?;
        attr_str(&jg, "kind", j.kind)?;
        let iterations: Vec<IterationRow> = (0..j.iterations as usize)
            .map(|k| IterationRow {
                iteration: k as u64,
                end: j.iteration_end[k],
                mean_end: j.iteration_mean_end[k],
            })
            .collect();
        table(&jg, "iterations", &iterations)?;
        let ranks: Vec<RankRow> = j
            .rank_finish
            .iter()
            .enumerate()
            .map(|(r, &finish)| {
                let endpoint = built.endpoints[r];
                RankRow { rank: r as u64, endpoint, switch: sim.endpoints.locate(endpoint).0, finish }
            })
            .collect();
        table(&jg, "ranks", &ranks)?;
        table(&jg, "message_latency_histogram", &hist(&j.message_latency))?;
    }
    let stalled: Vec<StalledRow> = w
        .stalled
        .iter()
        .map(|s| StalledRow {
            job: s.job,
            rank: s.rank,
            step: s.step,
            received: s.received,
            expected: s.expected,
            unsent: s.unsent,
            computing: u32::from(s.computing),
        })
        .collect();
    table(&wg, "stalled_ranks", &stalled)?;
    Ok(())
}

/// Endpoints listed as stragglers in a completion-time point (`stragglers` attribute).
const STRAGGLERS: usize = 16;

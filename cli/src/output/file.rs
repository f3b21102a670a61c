//! The result file of a run or sweep as a whole: the run's description in the root
//! attributes, the partition, the `/summary` table, the final status and resources.

use super::claim::{OutputClaim, Room};
use super::h5::{attr, attr_str, attr_vec, table};
use super::point::PointWriter;
use super::records::SummaryRecord;
use anyhow::Result;
use hdf5::File;
use models::sim::schema;
use models::sim::{RankModel, RunResult};

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
    claim: OutputClaim,
}

impl ResultFile {
    /// Creates the claimed file and writes the run's description.
    /// An earlier file at the claimed path is left as it is until [`ResultFile::publish`]
    /// (the new file is written beside it until then: [`OutputClaim::create_staged`]).
    pub fn create(mut claim: OutputClaim, sim: &RankModel, meta: &RunMeta<'_>) -> Result<Self> {
        let room = Room::new(&claim.write_path());
        room.check(64 << 10)?;
        let file = claim.create_staged()?;
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
        // Empty until a point finishes, so that a reader of the running file finds it.
        table(&file, "summary", &[] as &[SummaryRecord])?;
        file.flush()?;
        Ok(Self { file, room, summary_rows: Vec::new(), claim })
    }

    /// The run has something to keep (a finished load point, or how it ended): the new
    /// file replaces the earlier one at the claimed path, if it was written beside it.
    pub fn publish(&mut self) -> Result<()> {
        if self.claim.is_staged() {
            self.claim.publish()?;
            self.room = Room::new(self.claim.path());
        }
        Ok(())
    }

    /// Whether an earlier file is still at the claimed path, the new one beside it (not
    /// yet published).
    pub fn keeps_earlier_file(&self) -> bool {
        self.claim.is_staged()
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
        PointWriter::start(&self.file, &self.room, index, load)
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
        if self.claim.is_staged() {
            return e.context(format!(
                "writing {} (removed: no load point finished, so the earlier file {} is kept as it was)",
                self.room.path.display(),
                self.claim.path().display()
            ));
        }
        e.context(format!("writing {}", self.room.path.display()))
    }

    /// Records what a sweep's points say about its saturation load, after each point:
    /// `search` (`grid` or `bisection`), the highest load that did not saturate below the
    /// first that did (`low`), that saturated load (`high`, NaN when none did), their
    /// middle and the tolerance a bisection was asked for (NaN for a grid).
    pub fn set_saturation(&self, search: &str, low: f64, high: f64, tolerance: f64) -> Result<()> {
        attr_str(&self.file, "saturation_search", search)?;
        attr(&self.file, "saturation_low", low)?;
        attr(&self.file, "saturation_high", high)?;
        attr(&self.file, "saturation_load", (low + high) / 2.0)?;
        attr(&self.file, "saturation_tolerance", tolerance)?;
        self.file.flush()?;
        Ok(())
    }

    /// Records total wall-clock time and the peak resident memory of every rank.
    pub fn set_resources(&self, seconds: f64, rank_peak_rss_bytes: &[u64]) -> Result<()> {
        attr(&self.file, "wall_seconds", seconds)?;
        attr(&self.file, "peak_rss_bytes", rank_peak_rss_bytes.iter().copied().max().unwrap_or(0))?;
        attr_vec(&self.file, "rank_peak_rss_bytes", rank_peak_rss_bytes)?;
        Ok(())
    }
}

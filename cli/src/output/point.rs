//! One load point's group, `/points/NNN`: its time series, appended while the run goes,
//! and when it ends its figures, histograms and per-endpoint and per-link tables.

use super::claim::Room;
use super::h5::{attr, attr_str, attr_vec, histogram_rows, table};
use super::records::SeriesRecord;
use super::workload::write_workload;
use anyhow::Result;
use hdf5::{Dataset, Extent, File, Group, H5Type};
use models::sim::schema::{self, Value};
use models::sim::{Completion, RankModel, RunResult, Sample, Summary};

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
struct LinkRow {
    switch: u32,
    port: u32,
    class: u32,
    peer_switch: u32,
    phits: u64,
    utilisation: f64,
    stall_cycles: u64,
    pauses: u64,
    dropped: u64,
    retries: u64,
    longest_pause: u64,
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
    pauses_upstream: u8,
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
    /// Starts load point `index` of `file`: its group, with the load and a running status,
    /// and an empty time series.
    pub(super) fn start(file: &File, room: &Room, index: usize, load: f64) -> Result<PointWriter> {
        room.check(64 << 10)?;
        let group = file.group("points")?.create_group(&format!("{index:03}"))?;
        attr(&group, "load", load)?;
        attr_str(&group, "status", "running")?;
        let timeseries = group
            .new_dataset::<SeriesRecord>()
            .chunk(256)
            .shape(Extent::resizable(0))
            .create("timeseries")?;
        Ok(PointWriter { file: file.clone(), room: room.clone(), group, timeseries, rows: 0 })
    }

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
            + r.vc_phits.len() * 8
            + super::census::raw_size(r);
        // The tables are compressed: when their raw size does not fit, what they take once
        // compressed (written to a file in memory first) is what must fit.
        if self.room.check(tables as u64 + (64 << 10)).is_err() {
            let compressed = in_memory_size(|g| write_point_tables(g, sim, r))?;
            self.room.check(compressed + (64 << 10))?;
        }
        write_figures(g, r)?;
        write_engine_figures(g, r)?;
        write_point_tables(g, sim, r)?;
        self.file.flush()?;
        Ok(())
    }
}

/// The point's tables: histograms, per-endpoint and per-link, completion and workload.
fn write_point_tables(g: &Group, sim: &RankModel, r: &RunResult) -> Result<()> {
    write_tables(g, sim, r)?;
    super::census::write_census(g, sim, r)?;
    if let Some(c) = &r.completion {
        write_completion(g, sim, c)?;
    }
    if let Some(w) = &r.workload {
        write_workload(g, sim, w, r.summary.in_flight_end)?;
    }
    Ok(())
}

/// The bytes `write` takes in an HDF5 file, compression included: it writes into a file
/// held in memory (HDF5's core driver, nothing on disk), whose size is then read.
fn in_memory_size(write: impl FnOnce(&Group) -> Result<()>) -> Result<u64> {
    let name = format!("xnet-size-estimate-{}.h5", std::process::id());
    let file = File::with_options().with_fapl(|p| p.core_options(4096, false)).create(&name)?;
    write(&file)?;
    file.flush()?;
    Ok(file.size())
}

/// The point's status, the time it reached and its headline figures (the schema's
/// `Summary`), as attributes.
fn write_figures(g: &Group, r: &RunResult) -> Result<()> {
    attr_str(g, "status", r.status.as_str())?;
    attr(g, "time_reached", r.time)?;
    for (field, value) in Summary::FIELDS.iter().zip(r.summary.values()) {
        match value {
            Value::Count(v) => attr(g, field.name, v)?,
            Value::Real(v) => attr(g, field.name, v)?,
            Value::Flag(v) => attr(g, field.name, u64::from(v))?,
        }
    }
    Ok(())
}

/// Wall-clock and engine figures: the only attributes that differ between thread counts
/// of the same run. Per partition and per rank, in rank order.
fn write_engine_figures(g: &Group, r: &RunResult) -> Result<()> {
    attr(g, "wall_seconds", r.wall_seconds)?;
    attr(g, "packet_hops", r.packet_hops)?;
    attr(g, "packet_hops_per_second", r.packet_hops as f64 / r.wall_seconds.max(1e-9))?;
    let ranks = &r.engine;
    let flat = |f: &dyn Fn(&engine::RunStats) -> Vec<f64>| -> Vec<f64> { ranks.iter().flat_map(f).collect() };
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
    Ok(())
}

/// The histograms, and the per-endpoint, per-link, per-VC and blocked-channel tables;
/// loads are per cycle of the measured window.
fn write_tables(g: &Group, sim: &RankModel, r: &RunResult) -> Result<()> {
    let net = &sim.info;
    table(g, "latency_histogram", &histogram_rows(&r.latency))?;
    table(g, "network_latency_histogram", &histogram_rows(&r.network_latency))?;
    table(g, "hops_histogram", &histogram_rows(&r.hops))?;
    let cycles =
        (r.time.min(sim.config.simulation.cycles).saturating_sub(sim.config.simulation.warmup)).max(1) as f64;
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
            utilisation: l.phits as f64
                / (cycles * net.link_classes[l.class as usize].speed.phits_per_cycle()),
            stall_cycles: l.stall_cycles,
            pauses: l.pauses,
            dropped: l.dropped,
            retries: l.retries,
            longest_pause: l.longest_pause,
        })
        .collect();
    table(g, "links", &links)?;
    let classes: Vec<String> = net.link_classes.iter().map(|c| c.name.clone()).collect();
    attr_str(g, "link_class_names", &classes.join(","))?;
    let speeds: Vec<f64> = net.link_classes.iter().map(|c| c.speed.phits_per_cycle()).collect();
    attr_vec(g, "link_class_speeds", &speeds)?;
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
            pauses_upstream: b.pauses_upstream as u8,
        })
        .collect();
    table(g, "blocked_channels", &blocked)?;
    Ok(())
}

/// A completion-time point's figures: the completion time, the stragglers and each
/// endpoint's finish times.
fn write_completion(g: &Group, sim: &RankModel, c: &Completion) -> Result<()> {
    attr(g, "phits_per_endpoint", c.phits_per_endpoint)?;
    attr(g, "all_delivered", u64::from(c.all_delivered))?;
    attr(g, "completion_time", c.time)?;
    let stragglers: Vec<u64> = c.stragglers(STRAGGLERS).iter().map(|&(e, _)| e as u64).collect();
    attr_vec(g, "stragglers", &stragglers)?;
    let rows: Vec<CompletionRow> = (0..sim.info.endpoints)
        .map(|e| CompletionRow {
            endpoint: e as u32,
            switch: sim.endpoints.locate(e as u32).0,
            send_finish: c.source_finish[e],
            receive_finish: c.receive_finish[e],
        })
        .collect();
    table(g, "completion", &rows)?;
    Ok(())
}

/// Endpoints listed as stragglers in a completion-time point (`stragglers` attribute).
const STRAGGLERS: usize = 16;

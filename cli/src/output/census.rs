//! A point's `census` group: the run counted for other partitionings (`--census`), a
//! subgroup per partitioning, named `<method>-<partitions>` (docs/scaling.md reads them).

use super::h5::{attr, attr_str, attr_vec};
use anyhow::{Context, Result};
use hdf5::{Group, H5Type};
use models::sim::partition::method_name;
use models::sim::{RankModel, RunResult};

/// Bytes the census's tables take before compression.
pub(super) fn raw_size(r: &RunResult) -> usize {
    r.engine
        .iter()
        .flat_map(|e| &e.census)
        .map(|c| c.events.len() * 16 + c.pairs.len() * 24 + c.parts as usize * 32)
        .sum()
}

/// Writes the census of `r`, if the run took one.
pub(super) fn write_census(g: &Group, sim: &RankModel, r: &RunResult) -> Result<()> {
    let Some(counts) = r.engine.first().map(|e| &e.census).filter(|c| !c.is_empty()) else {
        return Ok(());
    };
    let census = g.create_group("census")?;
    for (spec, c) in sim.census.iter().zip(counts) {
        let name = spec.name();
        let s = census.create_group(&name).with_context(|| format!("creating census/{name}"))?;
        attr_str(&s, "method", method_name(spec.method))?;
        attr(&s, "partitions", c.parts)?;
        attr(&s, "window", c.window)?;
        attr(&s, "weight_imbalance", spec.imbalance)?;
        let parts = c.parts as usize;
        let rows = c.windows.len();
        matrix(&s, "events", &c.events, rows, parts)?;
        matrix(&s, "messages", &c.messages, rows, parts)?;
        matrix(&s, "bytes", &c.bytes, rows, parts)?;
        matrix(&s, "windows", &c.windows, rows, 1)?;
        let column = |f: fn(&(u32, u32, u64, u64)) -> u64| -> Vec<u64> { c.pairs.iter().map(f).collect() };
        matrix(&s, "pair_sender", &column(|p| p.0 as u64), c.pairs.len(), 1)?;
        matrix(&s, "pair_receiver", &column(|p| p.1 as u64), c.pairs.len(), 1)?;
        matrix(&s, "pair_messages", &column(|p| p.2), c.pairs.len(), 1)?;
        matrix(&s, "pair_bytes", &column(|p| p.3), c.pairs.len(), 1)?;
        attr_vec(&s, "cut_links", &c.cut_links)?;
        attr_vec(&s, "neighbours", &c.neighbours)?;
        attr_vec(&s, "wait_events", &c.wait_events)?;
        attr_vec(&s, "neighbour_wait_events", &c.neighbour_wait_events)?;
    }
    Ok(())
}

/// A compressed dataset of `rows` x `cols` (a column when `cols` is 1).
fn matrix<T: H5Type>(g: &Group, name: &str, values: &[T], rows: usize, cols: usize) -> Result<()> {
    debug_assert_eq!(values.len(), rows * cols);
    let builder = g.new_dataset::<T>().deflate(4);
    let ds = if cols == 1 {
        builder.chunk(rows.clamp(1, 65536)).shape(rows).create(name)
    } else {
        builder.chunk((rows.clamp(1, (1 << 18) / cols.max(1)).max(1), cols)).shape((rows, cols)).create(name)
    }
    .with_context(|| format!("creating dataset {name}"))?;
    if !values.is_empty() {
        ds.write_raw(values)?;
    }
    Ok(())
}

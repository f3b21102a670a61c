//! The small writers every attribute and table goes through: an attribute replaces one of
//! the same name, a table is a compressed, chunked dataset; and the rows of a histogram
//! table.

use anyhow::{Context, Result};
use hdf5::types::VarLenUnicode;
use hdf5::{Dataset, Group, H5Type, Location};

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

#[derive(H5Type, Clone, Copy)]
#[repr(C)]
pub(super) struct HistRow {
    low: u64,
    count: u64,
}

/// A histogram's rows: each bucket's low end and count.
pub(super) fn histogram_rows(h: &models::stats::Histogram) -> Vec<HistRow> {
    h.buckets().map(|(low, count)| HistRow { low, count }).collect()
}

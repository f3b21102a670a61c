//! The rows of the tables whose columns the result schema declares (`/summary`, the time
//! series): the schema's bytes, with HDF5 types built from its layout.

use hdf5::types::{CompoundField, CompoundType, FloatSize, IntSize, TypeDescriptor};
use hdf5::H5Type;
use models::sim::schema::{self, Kind, RowLayout};

/// A row of a table whose columns the result schema declares (`/summary`,
/// `/points/NNN/timeseries`: `models::sim::schema`), as the schema's bytes; its HDF5 type
/// is built from the schema's layout, so nothing here lists the columns.
macro_rules! schema_record {
    ($(#[doc = $doc:literal])* $name:ident, $bytes:expr, $layout:expr) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy)]
        #[repr(transparent)]
        pub(super) struct $name([u8; $bytes]);

        // Safety: the descriptor lists the fields at the offsets the schema writes them to,
        // within the record's size.
        unsafe impl H5Type for $name {
            fn type_descriptor() -> TypeDescriptor {
                compound(&$layout)
            }
        }

        impl $name {
            pub(super) fn new(bytes: Vec<u8>) -> Self {
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

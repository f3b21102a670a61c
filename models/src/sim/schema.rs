//! The result schema: every figure a run reports, declared once with its name, kind, unit,
//! how the ranks' shares combine into it and its documentation. From these declarations
//! come the [`Summary`] struct, the rows of `/summary` and `/points/NNN/timeseries`, the
//! point attributes the result file writer stores, and the tables of
//! docs/output-format.md (`models/tests/output_format.rs` fails when the file drifts).
//!
//! Adding a headline figure is one line in the `summary_figures!` list below plus the code
//! that computes it (`result::summary`); adding a time-series column is one [`SERIES`] entry
//! (with a field of [`Counters`] if it counts something new).
//!
//! One file: it is the output format's single declaration, read as a whole when the format
//! changes, and most of its lines are the columns' documentation.

use crate::stats::Counters;
use serde::Serialize;

/// How a figure is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An unsigned count: `u64`.
    Count,
    /// A row index: `u32`.
    Index,
    /// A real number: `f64`.
    Real,
    /// Yes or no, stored as 1 or 0: `u32` in a table row, `u64` as an attribute.
    Flag,
}

impl Kind {
    /// Bytes in a table row (also its alignment: rows are laid out as a C struct).
    pub const fn row_bytes(self) -> usize {
        match self {
            Kind::Count | Kind::Real => 8,
            Kind::Index | Kind::Flag => 4,
        }
    }

    /// The type as docs/output-format.md names it, in a table row.
    pub const fn row_type(self) -> &'static str {
        match self {
            Kind::Count => "u64",
            Kind::Index | Kind::Flag => "u32",
            Kind::Real => "f64",
        }
    }
}

/// Where a headline figure appears.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// A column of `/summary` and an attribute of its `/points/NNN` group.
    Column,
    /// An attribute of `/points/NNN` only.
    Attribute,
}

/// One declared figure.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// Its name: the struct field, the table column and the attribute.
    pub name: &'static str,
    /// How it is stored.
    pub kind: Kind,
    /// Its unit, for the docs (empty: a plain number).
    pub unit: &'static str,
    /// Where it appears.
    pub placement: Placement,
    /// What it means (the doc comment of its declaration).
    pub doc: &'static str,
}

impl Field {
    /// What it means, on one line.
    pub fn meaning(&self) -> String {
        self.doc.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
    }
}

/// A figure's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// A count or index.
    Count(u64),
    /// A real number.
    Real(f64),
    /// Yes or no.
    Flag(bool),
}

impl From<u64> for Value {
    fn from(v: u64) -> Self {
        Value::Count(v)
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Flag(v)
    }
}

/// The [`Kind`] a Rust type is stored as.
pub trait Stored: PartialEq {
    /// Its kind.
    const KIND: Kind;
    /// Whether two values are the same figure (floats: NaN, no value, is the same as NaN).
    fn same(&self, other: &Self) -> bool {
        self == other
    }
}

impl Stored for u64 {
    const KIND: Kind = Kind::Count;
}

impl Stored for f64 {
    const KIND: Kind = Kind::Real;
    fn same(&self, other: &Self) -> bool {
        self == other || (self.is_nan() && other.is_nan())
    }
}

impl Stored for bool {
    const KIND: Kind = Kind::Flag;
}

/// Declares [`Summary`]: each figure's doc, name, type, unit and placement, in the order of
/// the `/summary` columns.
macro_rules! summary_figures {
    ($($(#[doc = $doc:literal])+ $name:ident: $ty:ident, $unit:literal, $placement:ident;)+) => {
        /// Headline figures of a load point over its measurement window. Two summaries are
        /// equal when every figure is, a figure without a value (NaN: a latency of no
        /// packets) equal to another without one.
        #[derive(Clone, Debug, Serialize)]
        pub struct Summary {
            $($(#[doc = $doc])+ pub $name: $ty,)+
        }

        impl PartialEq for Summary {
            fn eq(&self, other: &Self) -> bool {
                $(Stored::same(&self.$name, &other.$name))&&+
            }
        }

        impl Summary {
            /// Every figure, in declaration order (that of the `/summary` columns).
            pub const FIELDS: &'static [Field] = &[$(Field {
                name: stringify!($name),
                kind: <$ty as Stored>::KIND,
                unit: $unit,
                placement: Placement::$placement,
                doc: concat!($($doc, "\n"),+),
            },)+];

            /// The figures' values, in [`Summary::FIELDS`] order.
            pub fn values(&self) -> Vec<Value> {
                vec![$(Value::from(self.$name),)+]
            }
        }
    };
}

summary_figures! {
    /// 1 if the point is saturated, else 0: `backlog_growth` above 0.01 and `backlog_z`
    /// above 3 (`SATURATED_BACKLOG`, `SATURATED_Z`): packets still pile up, beyond chance,
    /// and the latencies describe the packets that got through, not a steady state.
    saturated: bool, "", Column;
    /// Offered load asked for (`traffic.load` or the sweep's load).
    load: f64, "phits/cycle/endpoint", Column;
    /// Phits generated in the window / C / endpoints, those refused by a full source queue
    /// included.
    offered_load: f64, "phits/cycle/endpoint", Column;
    /// Phits refused at generation because the source queue was full
    /// (`router.source_queue`) / C / endpoints; 0 with an unbounded queue.
    refused_load: f64, "phits/cycle/endpoint", Column;
    /// Phits that left their source endpoint in the window / C / endpoints.
    injected_load: f64, "phits/cycle/endpoint", Column;
    /// Phits delivered in the window / C / endpoints (the throughput).
    accepted_load: f64, "phits/cycle/endpoint", Column;
    /// Mean latency (creation to delivery) of the delivered measured packets.
    latency_mean: f64, "cycles", Column;
    /// Median latency.
    latency_p50: f64, "cycles", Column;
    /// 99th percentile latency.
    latency_p99: f64, "cycles", Column;
    /// Largest latency (exact).
    latency_max: f64, "cycles", Column;
    /// Mean network latency (injection to delivery).
    network_latency_mean: f64, "cycles", Column;
    /// Median network latency.
    network_latency_p50: f64, "cycles", Column;
    /// 99th percentile network latency.
    network_latency_p99: f64, "cycles", Column;
    /// Largest network latency (exact).
    network_latency_max: f64, "cycles", Column;
    /// Mean switch-to-switch hops of the delivered measured packets.
    hops_mean: f64, "hops", Column;
    /// Jain's fairness index `(Σx)² / (n Σx²)` of the phits generated per endpoint in the
    /// window (1 = perfectly even).
    jain_generated: f64, "", Column;
    /// Jain's index of the phits accepted per endpoint in the window.
    jain_accepted: f64, "", Column;
    /// Packets generated in the window.
    measured_packets: u64, "packets", Column;
    /// Of those, delivered before the run ended (the packets behind the latency and hop
    /// figures).
    measured_delivered: u64, "packets", Column;
    /// Packets generated over the whole run, warm-up included.
    generated_total: u64, "packets", Column;
    /// Packets delivered over the whole run.
    delivered_total: u64, "packets", Column;
    /// Packets generated but neither delivered nor dropped when the run ended
    /// (`generated_total - delivered_total - dropped_total`), source queues included.
    in_flight_end: u64, "packets", Column;
    /// Packets dropped over the whole run at a switch's input for want of room
    /// (`router.flow_control` = `pfc` with thresholds that leave too little headroom, or
    /// `none`); 0 under credits.
    dropped_total: u64, "packets", Column;
    /// Phits dropped in the window / C / endpoints.
    dropped_load: f64, "phits/cycle/endpoint", Column;
    /// PFC pauses that reached a sender in the window (`router.flow_control = "pfc"`).
    pause_frames: u64, "pauses", Column;
    /// The longest time any link's VC stayed paused by PFC in the window (a pause storm
    /// shows as one as long as the window); the links table has each link's.
    longest_pause: u64, "cycles", Column;
    /// Packets replayed by their link in the window because a bit went wrong
    /// (`[router.link_errors]`), each replay counted.
    link_retries: u64, "replays", Column;
    /// With `simulation.reordering`: of the packets delivered in the window, the share
    /// that arrived after a packet of their flow (source, destination) that left the
    /// source later (RFC 4737's reordered packets); NaN if none was delivered.
    reordered_share: f64, "", Column;
    /// Their mean late-time offset: how much earlier they left their source than the
    /// latest packet of their flow delivered before them (NaN if none was reordered).
    reorder_late_mean: f64, "cycles", Column;
    /// The largest late-time offset (0 if none was reordered).
    reorder_late_max: u64, "cycles", Column;
    /// Packets a transport sent again in the window (`transport.kind` = `rc`: going back
    /// after a NAK or a timeout; `uec`: a loss found by the out-of-order count or a
    /// timeout); 0 without a transport.
    retransmitted_packets: u64, "packets", Column;
    /// Timeouts of the transport's connections in the window (nothing acknowledged for the
    /// transport's `timeout` cycles).
    transport_timeouts: u64, "timeouts", Column;
    /// Data packets the transport's responders dropped on arrival in the window: out of
    /// sequence (after a lost packet, go-back-N) or duplicates. They count as delivered
    /// in `accepted_load`, which is what the network carried.
    discarded_packets: u64, "packets", Column;
    /// NAKs the transport's responders sent in the window (one per gap).
    naks: u64, "packets", Column;
    /// Connections that gave up after their `retries` timeouts in a row: their messages
    /// never complete (the run ends unfinished, naming them).
    failed_connections: u64, "connections", Column;
    /// Packets lost in the window on links that were down (`router.link_flaps`); they are
    /// among the drops.
    down_link_drops: u64, "packets", Column;
    /// Data packets the transport's responders took ahead of a gap and held in the window
    /// (`transport.kind = "uec"`: out of order, not dropped).
    out_of_order_packets: u64, "packets", Column;
    /// The most packets one connection's responder held out of order at once over the
    /// run (`transport.kind = "uec"`): the reorder buffer a NIC needs.
    reorder_held_max: u64, "packets", Column;
    /// Of the packets generated (or refused by a full source queue) in the second half of
    /// the window, the share not delivered in it: the growth of the packets in flight;
    /// about 0 below saturation, about 1 - accepted / offered above it.
    backlog_growth: f64, "", Column;
    /// The packets that piled up in the second half of the window over the standard error
    /// of that count: the deviation of the per-period excesses (generated + refused -
    /// delivered), at least `sqrt(2 x mean packets in flight)`; about 0 below saturation.
    backlog_z: f64, "", Column;
    /// The victims' offered load: `offered_load` less the aggressors' (all of it when the
    /// run has no `congestion.targets`).
    victim_offered_load: f64, "phits/cycle/endpoint", Column;
    /// The victims' accepted load: phits delivered to endpoints other than the congestion's
    /// targets / C / endpoints.
    victim_accepted_load: f64, "phits/cycle/endpoint", Column;
    /// Mean latency of the victims' delivered measured packets.
    victim_latency_mean: f64, "cycles", Column;
    /// The aggressors' offered load: phits generated (or refused) for the congestion's
    /// targets / C / endpoints.
    aggressor_offered_load: f64, "phits/cycle/endpoint", Column;
    /// The aggressors' accepted load: phits delivered to the congestion's targets / C /
    /// endpoints.
    aggressor_accepted_load: f64, "phits/cycle/endpoint", Column;
    /// Mean latency of the aggressors' delivered measured packets (NaN without targets).
    aggressor_latency_mean: f64, "cycles", Column;
    /// Of `in_flight_end`, the packets still waiting in their source queue (never
    /// injected).
    source_queued_end: u64, "packets", Attribute;
}

/// The `backlog_growth` above which a point counts as saturated: 1 % of the packets
/// generated in the second half of the measurement window still pile up. Below saturation
/// the packets in flight only fluctuate around their steady level (their chance swings are
/// `SATURATED_Z`'s business); above it they grow by the excess of offered over accepted
/// load.
pub const SATURATED_BACKLOG: f64 = 0.01;

/// The `backlog_z` above which the growth is not chance: three standard errors (a small
/// network's noise exceeds `SATURATED_BACKLOG`; at a million endpoints the error is tiny
/// and `SATURATED_BACKLOG` decides).
pub const SATURATED_Z: f64 = 3.0;

/// The columns of `/summary` that are not figures of the point: its index and whether it
/// completed.
pub const SUMMARY_KEYS: [Field; 2] = [
    Field {
        name: "point",
        kind: Kind::Index,
        unit: "",
        placement: Placement::Column,
        doc: "index of the point: row `i` describes `/points/{i:03}`",
    },
    Field {
        name: "completed",
        kind: Kind::Flag,
        unit: "",
        placement: Placement::Column,
        doc: "1 if the point's status is `completed` (it ran to `cycles`, or its completion-time traffic or its workload was done before), else 0",
    },
];

/// `sum / count`, NaN if `count` is 0.
pub fn ratio(sum: u64, count: u64) -> f64 {
    if count == 0 {
        f64::NAN
    } else {
        sum as f64 / count as f64
    }
}

/// One row of the time series: what happened during `(time - period, time]`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// End of the period (cycles).
    pub time: u64,
    /// Counters of the period.
    pub counters: Counters,
    /// Packets generated but not yet delivered at `time`.
    pub in_flight: u64,
    /// Phits delivered per cycle per endpoint in the period.
    pub accepted_load: f64,
}

impl Sample {
    /// `sum / delivered packets` of the period (NaN if none was delivered).
    fn per_delivered(&self, sum: u64) -> f64 {
        let n = self.counters.delivered_packets;
        if n == 0 {
            f64::NAN
        } else {
            sum as f64 / n as f64
        }
    }

    /// Mean latency of the packets delivered in the period (NaN if none).
    pub fn mean_latency(&self) -> f64 {
        self.per_delivered(self.counters.latency_sum)
    }
}

/// A column of `/points/NNN/timeseries`.
#[derive(Clone, Copy, Debug)]
pub struct SeriesColumn {
    /// Its declaration.
    pub field: Field,
    /// Its value in a sample.
    pub value: fn(&Sample) -> Value,
}

const fn series(
    name: &'static str,
    kind: Kind,
    unit: &'static str,
    doc: &'static str,
    value: fn(&Sample) -> Value,
) -> SeriesColumn {
    SeriesColumn { field: Field { name, kind, unit, placement: Placement::Column, doc }, value }
}

/// The columns of the time series, in order.
pub const SERIES: &[SeriesColumn] = &[
    series("time", Kind::Count, "cycle", "End of the period", |s| s.time.into()),
    series("generated_packets", Kind::Count, "packets", "Packets generated in the period", |s| {
        s.counters.generated_packets.into()
    }),
    series("generated_phits", Kind::Count, "phits", "Phits generated in the period", |s| {
        s.counters.generated_phits.into()
    }),
    series(
        "refused_packets",
        Kind::Count,
        "packets",
        "Packets refused at generation in the period (full source queue)",
        |s| s.counters.refused_packets.into(),
    ),
    series(
        "injected_packets",
        Kind::Count,
        "packets",
        "Packets whose head left the source endpoint in the period",
        |s| s.counters.injected_packets.into(),
    ),
    series("injected_phits", Kind::Count, "phits", "Phits of those packets", |s| {
        s.counters.injected_phits.into()
    }),
    series(
        "delivered_packets",
        Kind::Count,
        "packets",
        "Packets whose tail reached the destination endpoint in the period",
        |s| s.counters.delivered_packets.into(),
    ),
    series("delivered_phits", Kind::Count, "phits", "Phits of those packets", |s| {
        s.counters.delivered_phits.into()
    }),
    series(
        "in_flight",
        Kind::Count,
        "packets",
        "Packets generated but not delivered at `time` (source queues included; a level, not a count per period)",
        |s| s.in_flight.into(),
    ),
    series(
        "dropped_packets",
        Kind::Count,
        "packets",
        "Packets dropped at a switch's input for want of room in the period (`router.flow_control`)",
        |s| s.counters.dropped_packets.into(),
    ),
    series(
        "pause_frames",
        Kind::Count,
        "pauses",
        "PFC pauses that reached a sender in the period (`router.flow_control = \"pfc\"`)",
        |s| s.counters.pause_frames.into(),
    ),
    series(
        "link_retries",
        Kind::Count,
        "replays",
        "Packets replayed by their link in the period because a bit went wrong (`[router.link_errors]`)",
        |s| s.counters.link_retries.into(),
    ),
    series(
        "retransmitted_packets",
        Kind::Count,
        "packets",
        "Packets a transport sent again in the period (`transport.kind`)",
        |s| s.counters.retransmitted_packets.into(),
    ),
    series(
        "reordered_packets",
        Kind::Count,
        "packets",
        "Packets delivered in the period, in the measurement window, after a packet of their flow that left its source later (`simulation.reordering`)",
        |s| s.counters.reordered_packets.into(),
    ),
    series(
        "link_transmissions",
        Kind::Count,
        "packets",
        "Packets sent out of any switch port in the period, ejection to endpoints included (injection not). \
         Zero means nothing moved: what the deadlock watchdog looks at",
        |s| s.counters.link_transmissions.into(),
    ),
    series(
        "accepted_load",
        Kind::Real,
        "phits/cycle/endpoint",
        "`delivered_phits / period length / endpoints`",
        |s| s.accepted_load.into(),
    ),
    series(
        "mean_latency",
        Kind::Real,
        "cycles",
        "Mean latency of the packets delivered in the period (NaN if none)",
        |s| s.mean_latency().into(),
    ),
    series(
        "mean_network_latency",
        Kind::Real,
        "cycles",
        "Mean network latency of the packets delivered in the period (NaN if none)",
        |s| s.per_delivered(s.counters.network_latency_sum).into(),
    ),
    series(
        "aggressor_delivered_phits",
        Kind::Count,
        "phits",
        "Phits delivered to the congestion's targets (`congestion.targets`) in the period",
        |s| s.counters.aggressor_delivered_phits.into(),
    ),
    series(
        "aggressor_mean_latency",
        Kind::Real,
        "cycles",
        "Mean latency of the packets delivered to the congestion's targets in the period (NaN if none)",
        |s| ratio(s.counters.aggressor_latency_sum, s.counters.aggressor_latency_count).into(),
    ),
    series(
        "victim_mean_latency",
        Kind::Real,
        "cycles",
        "Mean latency of the other packets delivered in the period (NaN if none)",
        |s| {
            let c = &s.counters;
            ratio(c.latency_sum - c.aggressor_latency_sum, c.delivered_packets - c.aggressor_latency_count).into()
        },
    ),
    series(
        "marked_packets",
        Kind::Count,
        "packets",
        "Packets a switch marked congested (FECN) in the period (`congestion.control`)",
        |s| s.counters.marked_packets.into(),
    ),
    series(
        "notifications",
        Kind::Count,
        "packets",
        "Congestion notifications (CNPs) that reached the source they slow, in the period",
        |s| s.counters.notifications.into(),
    ),
    series(
        "mean_hops",
        Kind::Real,
        "hops",
        "Mean switch-to-switch hops of the packets delivered in the period (NaN if none)",
        |s| s.per_delivered(s.counters.hops_sum).into(),
    ),
];

/// The byte layout of a table row: each column at the next offset aligned to its size, as
/// a C struct would lay it out (so the rows match those of earlier versions, which were C
/// structs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowLayout {
    /// Each column's name, kind and offset, in order.
    pub columns: Vec<(&'static str, Kind, usize)>,
    /// Bytes per row, padded to the largest alignment.
    pub size: usize,
}

/// The size of a row of `kinds` laid out as a C struct (see [`RowLayout`]).
pub const fn row_size(kinds: &[Kind]) -> usize {
    let (mut offset, mut align, mut i) = (0usize, 1usize, 0);
    while i < kinds.len() {
        let size = kinds[i].row_bytes();
        offset = offset.div_ceil(size) * size + size;
        if size > align {
            align = size;
        }
        i += 1;
    }
    offset.div_ceil(align) * align
}

impl RowLayout {
    /// The layout of `fields`, in order.
    pub fn of<'a>(fields: impl IntoIterator<Item = &'a Field>) -> Self {
        let mut columns = Vec::new();
        let mut kinds = Vec::new();
        let mut offset = 0usize;
        for f in fields {
            let size = f.kind.row_bytes();
            offset = offset.div_ceil(size) * size;
            columns.push((f.name, f.kind, offset));
            kinds.push(f.kind);
            offset += size;
        }
        RowLayout { columns, size: row_size(&kinds) }
    }

    /// A row of `values` (in column order; their kinds must match the columns'), in native
    /// byte order, padding zeroed.
    pub fn encode(&self, values: &[Value]) -> Vec<u8> {
        assert_eq!(values.len(), self.columns.len(), "one value per column");
        let mut row = vec![0u8; self.size];
        for (&(name, kind, offset), value) in self.columns.iter().zip(values) {
            let bytes: Vec<u8> = match (kind, *value) {
                (Kind::Count, Value::Count(v)) => v.to_ne_bytes().to_vec(),
                (Kind::Index, Value::Count(v)) => {
                    u32::try_from(v).expect("a row index fits 32 bits").to_ne_bytes().to_vec()
                }
                (Kind::Real, Value::Real(v)) => v.to_ne_bytes().to_vec(),
                (Kind::Flag, Value::Flag(v)) => u32::from(v).to_ne_bytes().to_vec(),
                (kind, value) => panic!("column `{name}` is {kind:?}, given {value:?}"),
            };
            row[offset..offset + bytes.len()].copy_from_slice(&bytes);
        }
        row
    }
}

/// Every column of `/summary`, in order: the point's index, whether it completed, then the
/// figures placed in columns.
pub fn summary_columns() -> Vec<Field> {
    SUMMARY_KEYS
        .iter()
        .chain(Summary::FIELDS.iter().filter(|f| f.placement == Placement::Column))
        .copied()
        .collect()
}

const fn summary_kinds() -> [Kind; SUMMARY_COLUMN_COUNT] {
    let mut kinds = [Kind::Count; SUMMARY_COLUMN_COUNT];
    let (mut i, mut k) = (0, 0);
    while i < SUMMARY_KEYS.len() {
        kinds[k] = SUMMARY_KEYS[i].kind;
        i += 1;
        k += 1;
    }
    i = 0;
    while i < Summary::FIELDS.len() {
        if matches!(Summary::FIELDS[i].placement, Placement::Column) {
            kinds[k] = Summary::FIELDS[i].kind;
            k += 1;
        }
        i += 1;
    }
    kinds
}

const SUMMARY_COLUMN_COUNT: usize = {
    let (mut n, mut i) = (SUMMARY_KEYS.len(), 0);
    while i < Summary::FIELDS.len() {
        if matches!(Summary::FIELDS[i].placement, Placement::Column) {
            n += 1;
        }
        i += 1;
    }
    n
};

const fn series_kinds() -> [Kind; SERIES.len()] {
    let mut kinds = [Kind::Count; SERIES.len()];
    let mut i = 0;
    while i < SERIES.len() {
        kinds[i] = SERIES[i].field.kind;
        i += 1;
    }
    kinds
}

/// Bytes of a `/summary` row.
pub const SUMMARY_ROW_BYTES: usize = row_size(&summary_kinds());

/// Bytes of a time-series row.
pub const SERIES_ROW_BYTES: usize = row_size(&series_kinds());

/// The `/summary` row of point `index`.
pub fn summary_row(index: usize, completed: bool, summary: &Summary) -> Vec<u8> {
    let mut values = vec![Value::Count(index as u64), Value::Flag(completed)];
    let figures = summary.values();
    values.extend(
        Summary::FIELDS.iter().zip(figures).filter(|(f, _)| f.placement == Placement::Column).map(|(_, v)| v),
    );
    RowLayout::of(&summary_columns()).encode(&values)
}

/// The time-series row of `sample`.
pub fn series_row(sample: &Sample) -> Vec<u8> {
    let values: Vec<Value> = SERIES.iter().map(|c| (c.value)(sample)).collect();
    RowLayout::of(SERIES.iter().map(|c| &c.field)).encode(&values)
}

/// The Markdown table of `fields` for docs/output-format.md: name, type, unit, meaning.
pub fn markdown(heading: &str, fields: &[Field], attribute: bool) -> String {
    let mut out = format!("| {heading} | type | unit | meaning |\n|---|---|---|---|\n");
    for f in fields {
        let ty = match (f.kind, attribute) {
            (Kind::Flag, true) => "u64",
            (kind, _) => kind.row_type(),
        };
        out.push_str(&format!(
            "| `{}` | {ty} | {} | {} |\n",
            f.name,
            f.unit,
            f.meaning().replace('|', "\\|")
        ));
    }
    out
}

/// The generated blocks of docs/output-format.md, each between marker comments:
/// `summary` (the `/summary` columns), `point-figures` (the figures stored as attributes of
/// every point) and `timeseries`.
pub fn docs_blocks() -> Vec<(&'static str, String)> {
    let series: Vec<Field> = SERIES.iter().map(|c| c.field).collect();
    vec![
        ("summary", markdown("column", &summary_columns(), false)),
        ("point-figures", markdown("attribute", Summary::FIELDS, true)),
        ("timeseries", markdown("column", &series, false)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_laid_out_as_c_structs() {
        // point u32, completed u32, saturated u32, then an f64 at 16 after 4 bytes of padding.
        let layout = RowLayout::of(&summary_columns());
        let offsets: Vec<usize> = layout.columns.iter().map(|c| c.2).take(5).collect();
        assert_eq!(offsets, [0, 4, 8, 16, 24]);
        assert_eq!(layout.size, SUMMARY_ROW_BYTES);
        assert_eq!(layout.size % 8, 0);
        assert_eq!(SERIES_ROW_BYTES, 8 * SERIES.len());
        assert_eq!(RowLayout::of(SERIES.iter().map(|c| &c.field)).size, SERIES_ROW_BYTES);
    }

    #[test]
    fn a_row_holds_each_value_at_its_offset() {
        let sample = Sample {
            time: 7,
            counters: Counters { delivered_packets: 2, hops_sum: 5, ..Default::default() },
            in_flight: 3,
            accepted_load: 0.5,
        };
        let row = series_row(&sample);
        let at = |name: &str| {
            let layout = RowLayout::of(SERIES.iter().map(|c| &c.field));
            let &(_, _, offset) = layout.columns.iter().find(|c| c.0 == name).expect("a column");
            u64::from_ne_bytes(row[offset..offset + 8].try_into().expect("8 bytes"))
        };
        assert_eq!((at("time"), at("in_flight"), at("delivered_packets")), (7, 3, 2));
        assert_eq!(f64::from_bits(at("mean_hops")), 2.5);
        assert!(f64::from_bits(at("mean_latency")) == 0.0);
    }
}
